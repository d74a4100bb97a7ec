"""The annotators' verdicts have one home (eval_ui/verdicts.py); every consumer covers every row, and the
statute labels name the checker's verdicts one to one (lawluo/law/verdicts.py)."""

from __future__ import annotations

import sqlite3

import pytest

from eval_ui import annotate_tab, stats, store, verdicts
from eval_ui.verdicts import VERDICT_TABLE
from lawluo.i18n import text
from lawluo.law import verdicts as checked

ROWS = pytest.mark.parametrize("row", VERDICT_TABLE, ids=[v.code for v in VERDICT_TABLE])


@ROWS
def test_the_store_keeps_each_verdict_and_turns_it_round_between_orientations(row, tmp_path):
    for swapped in (False, True):
        assert store.unswap_verdict(store.shown_verdict(row.code, swapped), swapped) == row.code
    con = sqlite3.connect(tmp_path / "check.sqlite")
    con.execute(f"CREATE TABLE t (verdict TEXT {verdicts.sql_check()})")
    con.execute("INSERT INTO t VALUES (?)", (row.code,))  # the schema's CHECK accepts it
    with pytest.raises(sqlite3.IntegrityError):
        con.execute("INSERT INTO t VALUES ('maybe')")


@ROWS
def test_the_statistics_flip_and_score_each_verdict(row):
    assert stats.FLIP[stats.FLIP[row.code]] == row.code and stats.SCORE[row.code] + stats.SCORE[
        stats.FLIP[row.code]
    ] == pytest.approx(1.0)
    assert stats.win_tie_loss([row.code], stats.Bootstrap(n_boot=10, seed=0))[row.code] == 1


@ROWS
def test_the_annotation_tab_has_a_button_a_name_and_a_key_for_each_verdict(row):
    buttons = dict(annotate_tab.VERDICT_BUTTONS)  # each a gr.I18n key: its text in either language
    assert text(buttons[row.shown].key, "zh") == f"{row.label} [{row.key}]"
    assert text(buttons[row.shown].key, "en").endswith(f" [{row.key}]")
    assert row.shown in annotate_tab.SHOWN_NAMES
    assert f'"{row.key}": "ann-verdict-{row.shown}"' in annotate_tab.KEYS_JS


@ROWS
def test_the_training_converters_accept_each_verdict(row, tmp_path):
    import json

    from training import data

    labels = tmp_path / "labels.jsonl"
    labels.write_text(json.dumps({"item_id": "q1:X:Y", "verdict": row.code}) + "\n", encoding="utf-8")
    assert data.read_annotation_labels(labels)[0]["verdict"] == row.code


def test_keys_and_shown_names_are_unique():
    assert len({v.key for v in VERDICT_TABLE}) == len({v.shown for v in VERDICT_TABLE}) == len(VERDICT_TABLE)


# -- the per-statute labels (STATUTE_LABEL_TABLE) ----------------------------------------------------

STATUTE_ROWS = pytest.mark.parametrize(
    "row", verdicts.STATUTE_LABEL_TABLE, ids=[v.code for v in verdicts.STATUTE_LABEL_TABLE]
)


@STATUTE_ROWS
def test_the_store_keeps_each_statute_label_and_the_frames_read_its_flag_and_kind(row, tmp_path):
    from eval_ui.items import Item

    key = "《民法典》第1079条"
    s = store.AnnotationStore(tmp_path / "a.sqlite")
    s.import_items([Item("q1", "问", "甲", "乙", "x", "y")])
    s.add_annotator("admin", role="admin")
    label = store.LabelInput("tie", left=store.AnswerLabel({key: row.code}))
    if row.code not in verdicts.STATUTE_LABELS:  # legacy_unticked: made by the migration only
        with pytest.raises(store.StoreError, match="不是 真实/有误 之一"):
            s.save_label("admin", "q1", label, "s1")
        return
    s.save_label("admin", "q1", label, "s1")
    [statute] = s.statute_labels_frame().itertuples()
    assert (statute.label, statute.hallucinated, statute.error_kind) == (
        row.code,
        row.hallucinated,
        row.error_kind,
    )
    frame = s.labels_frame().iloc[0]
    assert frame["n_hallucinated_a"] == int(row.hallucinated) and frame["nhsr_a"] == 1 - int(row.hallucinated)
    s.close()


def test_statute_codes_are_unique_and_only_the_migrations_code_has_no_flag():
    codes = [v.code for v in verdicts.STATUTE_LABEL_TABLE]
    assert len(set(codes)) == len(codes) and verdicts.STATUTE_LABELS == tuple(codes[:-1])
    assert [c for c, flag in verdicts.STATUTE_HALLUCINATED.items() if flag is None] == ["legacy_unticked"]
    assert verdicts.STATUTE_HALLUCINATED["correct"] is False


# -- statute labels ↔ the checker's verdicts (issue 40) ---------------------------------------------

CHECKER_ROWS = pytest.mark.parametrize(
    "verdict", checked.VERDICT_TABLE, ids=[v.code for v in checked.VERDICT_TABLE]
)


@CHECKER_ROWS
def test_every_checker_verdict_has_exactly_one_annotator_label_with_the_same_hallucinated_flag(verdict):
    labels = [v for v in verdicts.STATUTE_LABEL_TABLE if verdict.code in v.checker_verdicts]
    assert len(labels) == 1, f"checker verdict {verdict.code!r} needs one annotator label, has {labels}"
    assert labels[0].code == verdicts.CHECKER_LABEL[verdict.code]
    assert labels[0].hallucinated is verdict.hallucinated


@STATUTE_ROWS
def test_every_annotator_label_with_a_kind_names_checker_verdicts_and_a_kind_of_error_names_one(row):
    assert set(row.checker_verdicts) <= set(checked.VERDICTS), row.checker_verdicts
    if row.code == "wrong":  # hallucinated, kind not given: no verdict in particular
        assert row.hallucinated is True and row.error_kind is None and row.checker_verdicts == ()
    elif row.code == verdicts.LEGACY_UNTICKED:  # no judgement at all
        assert row.checker_verdicts == ()
    elif row.hallucinated:  # a kind of error is one verdict, and the other way round
        assert row.error_kind and len(row.checker_verdicts) == 1, f"label {row.code!r} needs its one verdict"
    else:  # 真实 Correct: every verdict that is not a hallucination
        assert set(row.checker_verdicts) == checked.NOT_HALLUCINATED


def test_error_kinds_are_unique_and_outdated_versions_have_their_label():
    kinds = [v.error_kind for v in verdicts.STATUTE_LABEL_TABLE if v.error_kind]
    assert len(kinds) == len(set(kinds))
    row = next(v for v in verdicts.STATUTE_LABEL_TABLE if v.code == "wrong_version")
    assert (row.label, row.error_kind, row.checker_verdicts) == (
        "旧版本",
        "version",
        ("outdated_version",),
    )
    assert "wrong_version" in verdicts.STATUTE_LABELS  # a form may give it


def test_a_store_made_before_wrong_version_opens_unchanged_and_takes_it(tmp_path):
    from tests.test_annotation_migration import UNTICKED, WRONG, schema_1_file

    path = tmp_path / "old.sqlite"
    schema_1_file(path)  # an old-form store: opening it runs every migration, none of them new
    with store.AnnotationStore(path) as s:
        before = s.statute_labels_frame()
        assert set(before["label"]) == {"wrong", "legacy_unticked"}
        s.add_annotator("admin", role="admin")
        label = store.LabelInput("tie", left=store.AnswerLabel({WRONG: "wrong_version", UNTICKED: "correct"}))
        s.save_label("admin", "q1", label, "admin-1")
        mine = s.statute_labels_frame().query("annotator == 'admin'").set_index("statute")
    assert (mine.loc[WRONG, "label"], mine.loc[WRONG, "hallucinated"], mine.loc[WRONG, "error_kind"]) == (
        "wrong_version", True, "version",
    )  # fmt: skip
    assert mine.loc[UNTICKED, "hallucinated"] is not None and not mine.loc[UNTICKED, "hallucinated"]
