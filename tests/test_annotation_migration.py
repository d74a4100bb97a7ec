"""Migration 2 (eval_ui/store/schema.py ``_schema_2``): labels of the old tick-only form, migrated honestly.

The old form stored each cited statute as ``True`` (ticked: hallucinated) or ``False`` (not ticked),
and the statistics read ``False`` as "correct" although nobody may have judged it. After migration a
ticked statute is ``wrong``, an unticked one ``legacy_unticked`` (missing data), and every migrated
label (current or in the history) says ``legacy``.
"""

from __future__ import annotations

import json
import math
import sqlite3

import pytest

from eval_ui.items import Item
from eval_ui.store import MIGRATIONS, AnnotationStore, AnswerLabel, LabelInput, SchemaError

WRONG, UNTICKED = "《民法典》第1079条", "《民法典》第1087条"


def old_labels(a_statutes: dict, rel_a=None, b_statutes=None) -> str:
    """answer_labels exactly as the schema-1 code wrote them (store.save_label before issue 19)."""
    a = {"statutes": a_statutes, "rel": rel_a, "tlc": None}
    b = {"statutes": b_statutes or {}, "rel": None, "tlc": 7}
    return json.dumps({"a": a, "b": b}, ensure_ascii=False, sort_keys=True)


def schema_1_file(path) -> None:
    """A store file at schema version 1 holding labels and history of the old form, written with SQL."""
    with AnnotationStore(path, migrations=MIGRATIONS[:1]) as s:  # the shipped schema 1, nothing else
        assert s.schema_version() == 1
        s.import_items([Item("q1", "问题", "甲", "乙", "sysA", "sysB")])
    con = sqlite3.connect(path)
    with con:
        con.execute("INSERT INTO annotators VALUES ('张', 'annotator', 1.0)")
        con.execute("INSERT INTO assignments VALUES ('张', 'q1', 5, 1, 'done', 1.0, 3.0)")
        con.execute(
            "INSERT INTO labels VALUES ('张', 'q1', 'B', 'BA', ?, '旧评', 'v1', 2.0, 3.0, 40.0, 2, 'old-2')",
            (old_labels({WRONG: True, UNTICKED: False}, rel_a=6),),
        )
        con.execute(
            "INSERT INTO label_history VALUES ('张', 'q1', 'A', 'BA', ?, '', 'v1', 2.0, 2.0, 10.0, 1, 'old-1', 3.0)",
            (old_labels({WRONG: False}, b_statutes={UNTICKED: True}),),
        )
        con.execute("INSERT INTO submissions VALUES ('old-2', '张', 'q1', 2, 'h', 3.0)")
    con.close()


def test_old_ticks_become_wrong_and_unticked_becomes_missing_data_marked_legacy(tmp_path):
    path = tmp_path / "annotations.sqlite"
    schema_1_file(path)
    with AnnotationStore(path) as s:
        assert s.schema_version() == len(MIGRATIONS) == 4
        current = s.label("张", "q1")
        assert current["answer_labels"] == {
            "a": {
                "statutes": {WRONG: "wrong", UNTICKED: "legacy_unticked"},
                "rel": 6,
                "tlc": None,
                "none_wrong": False,
            },
            "b": {"statutes": {}, "rel": None, "tlc": 7, "none_wrong": False},
            "format": 2,
            "legacy": True,
        }
        # nothing else of the label changed
        assert (current["verdict"], current["comment"], current["version"], current["submission_id"]) == (
            "B",
            "旧评",
            2,
            "old-2",
        )
        [old] = s.history("张", "q1")
        assert old["answer_labels"]["a"]["statutes"] == {WRONG: "legacy_unticked"}
        assert old["answer_labels"]["b"]["statutes"] == {UNTICKED: "wrong"}
        assert old["answer_labels"]["legacy"] is True and old["replaced_at"] == 3.0

        frame = s.labels_frame()
        row = frame.iloc[0]
        assert bool(row["legacy"]) and row["n_labelled_a"] == 1 and row["n_unlabelled_a"] == 1
        assert row["nhsr_a"] == 0.0  # the one labelled statute is wrong; the unticked one is not "correct"
        assert math.isnan(row["nhsr_b"])
        statutes = s.statute_labels_frame(current_only=False)
        by = {(r.version, r.statute): r for r in statutes.itertuples()}
        assert by[2, UNTICKED].label == "legacy_unticked" and by[2, UNTICKED].hallucinated is None
        assert by[2, WRONG].hallucinated is True and by[1, UNTICKED].hallucinated is True
        assert statutes["legacy"].all()

        # an edit with the new form is a new, non-legacy version; the legacy one stays in the history
        s.save_label(
            "张",
            "q1",
            LabelInput("right", right=AnswerLabel({WRONG: "wrong_number", UNTICKED: "correct"})),
            "new-3",
        )
        assert "legacy" not in s.label("张", "q1")["answer_labels"]
        assert [h["answer_labels"].get("legacy") for h in s.history("张", "q1")] == [True, True]
        assert list(s.labels_frame(current_only=False)["legacy"]) == [True, True, False]

    with AnnotationStore(path) as s:  # reopening applies nothing again
        assert s.schema_version() == 4 and s.label("张", "q1")["version"] == 3


def test_a_file_from_newer_code_is_still_refused(tmp_path):
    path = tmp_path / "annotations.sqlite"
    schema_1_file(path)
    AnnotationStore(path).close()
    con = sqlite3.connect(path)
    con.execute(f"PRAGMA user_version = {len(MIGRATIONS) + 1}")
    con.close()
    with pytest.raises(SchemaError, match=f"schema version {len(MIGRATIONS) + 1} was written by a newer"):
        AnnotationStore(path)


def test_the_migration_is_all_or_nothing(tmp_path):
    path = tmp_path / "annotations.sqlite"
    schema_1_file(path)

    def broken(con: sqlite3.Connection) -> None:
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        AnnotationStore(path, migrations=(*MIGRATIONS, broken))
    con = sqlite3.connect(path)
    assert con.execute("PRAGMA user_version").fetchone()[0] == 1
    [(text,)] = con.execute("SELECT answer_labels FROM labels").fetchall()
    assert json.loads(text)["a"]["statutes"] == {WRONG: True, UNTICKED: False}  # untouched
    con.close()
