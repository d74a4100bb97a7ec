"""Adjudication (eval_ui/store/adjudication.py; issue 19 item 4): an admin resolves the items
annotators disagree on.

The resolved label lives in its own table with its history, only admins write it, it never changes an
annotator's label, and the frames can use it in place of the annotators' labels (``source="adjudicated"``).
"""

from __future__ import annotations

import pytest

from eval_ui.items import Item
from eval_ui.store import ADJUDICATED, AnnotationStore, AnswerLabel, LabelInput, StoreError

S1, S2 = "《民法典》第1079条", "《民法典》第1087条"


@pytest.fixture
def store(tmp_path):
    s = AnnotationStore(tmp_path / "annotations.sqlite", cited=lambda item_id, side: [S1, S2])
    s.import_items([Item(f"q{i}", f"问题{i}", f"甲{i}", f"乙{i}", "律罗", "GPT") for i in range(5)])
    for name in ("张", "李"):
        s.add_annotator(name)
    s.add_annotator("管理员", role="admin")
    s.assign(overlap=2, seed=0)
    yield s
    s.close()


def label(store, name, item_id, verdict, a=None, b=None, sid=None):
    """Save ``name``'s label given in the item's orientation (A = 律罗), whatever order they saw."""
    shown = store.assignment(name, item_id)
    a, b = a or AnswerLabel(), b or AnswerLabel()
    left, right = (b, a) if shown.swapped else (a, b)
    store.save_label(
        name, item_id, LabelInput(shown.to_shown(verdict), left, right), sid or f"{name}-{item_id}"
    )


def test_disagreements_list_items_whose_verdicts_or_statute_flags_differ(store):
    label(store, "张", "q0", "A")  # verdicts differ
    label(store, "李", "q0", "tie")
    label(store, "张", "q1", "B", a=AnswerLabel({S1: "wrong_number"}))  # a statute: wrong vs correct
    label(store, "李", "q1", "B", a=AnswerLabel({S1: "correct"}))
    label(store, "张", "q2", "A", a=AnswerLabel({S1: "wrong"}))  # agree: wrong kinds may differ,
    label(
        store, "李", "q2", "A", a=AnswerLabel({S1: "wrong_content", S2: "correct"})
    )  # unlabelled ≠ disagree
    label(store, "张", "q3", "A")  # one label only
    found = {d["item_id"]: d for d in store.disagreements()}
    assert set(found) == {"q0", "q1"}
    assert found["q0"]["reasons"] == ["判断不同 verdicts differ: 张 A, 李 tie"]
    assert found["q1"]["reasons"] == [
        "回答 A answer A: 法条 《民法典》第1079条 真实/有误不一 labelled both correct and wrong"
    ]
    q1 = found["q1"]
    assert (q1["question"], q1["system_a"], q1["system_b"], q1["adjudication"]) == (
        "问题1",
        "律罗",
        "GPT",
        None,
    )
    assert [(x["annotator"], x["verdict"], x["answer_labels"]["a"]["statutes"]) for x in q1["labels"]] == [
        ("张", "B", {S1: "wrong_number"}),
        ("李", "B", {S1: "correct"}),
    ]


def test_only_admins_adjudicate_and_bad_input_is_refused_in_both_languages(store):
    label(store, "张", "q0", "A")
    label(store, "李", "q0", "B")
    with pytest.raises(StoreError, match="只有管理员可以裁定 only an admin may adjudicate; '张'"):
        store.adjudicate("张", "q0", "A", AnswerLabel(), AnswerLabel())
    with pytest.raises(StoreError, match="only an admin"):
        store.adjudicate("nobody", "q0", "A", AnswerLabel(), AnswerLabel())
    cases = [
        (("left", AnswerLabel(), AnswerLabel()), {}, "判断 verdict 'left' is not one of A, B, tie, both_bad"),
        (("A", AnswerLabel({S1: True}), AnswerLabel()), {}, "回答 A answer A: 法条 .*旧版"),
        (("A", AnswerLabel(), AnswerLabel(tlc=12)), {}, "回答 B answer B: T_LC 须为 0–10"),
        (("A", AnswerLabel(), AnswerLabel()), {"note": "长" * 2_001}, "说明 note: 最多 2,000 字"),
    ]
    for args, kwargs, message in cases:
        with pytest.raises(StoreError, match=message):
            store.adjudicate("管理员", "q0", *args, **kwargs)
    with pytest.raises(StoreError, match="no item 'nope'"):
        store.adjudicate("管理员", "nope", "A", AnswerLabel(), AnswerLabel())
    assert store.adjudication("q0") is None and store._one("SELECT COUNT(*) FROM adjudications")[0] == 0


def test_an_adjudication_is_kept_apart_with_its_history(store):
    label(store, "张", "q0", "A", a=AnswerLabel({S1: "wrong"}))
    label(store, "李", "q0", "B", a=AnswerLabel({S1: "correct"}))
    before = store.labels_frame()
    first = store.adjudicate(
        "管理员", "q0", "A", AnswerLabel(none_wrong=True), AnswerLabel(rel=4), note="依据原文"
    )
    assert first["version"] == 1 and first["admin"] == "管理员" and first["note"] == "依据原文"
    assert first["answer_labels"]["a"]["statutes"] == {
        S1: "correct",
        S2: "correct",
    }  # none wrong: the cited ones
    assert store.adjudication("q0") == first
    again = store.adjudicate(
        "管理员", "q0", "A", AnswerLabel(none_wrong=True), AnswerLabel(rel=4), note="依据原文"
    )
    assert again == first and store.adjudication_history("q0") == []  # identical: nothing written
    second = store.adjudicate("管理员", "q0", "tie", AnswerLabel({S1: "wrong_not_found"}), AnswerLabel())
    assert second["version"] == 2 and second["created_at"] == first["created_at"]
    [old] = store.adjudication_history("q0")
    assert old["verdict"] == "A" and old["version"] == 1 and old["replaced_at"] >= old["updated_at"]
    assert store.disagreements()[0]["adjudication"] == second
    # the annotators' labels are untouched, and the raw frame never mixes the adjudication in
    assert store.labels_frame().equals(before)
    assert store.label("张", "q0")["verdict"] == "A" and store.label("李", "q0")["verdict"] == "B"


def test_the_adjudicated_source_puts_the_resolution_in_place_of_the_annotators_labels(store):
    label(store, "张", "q0", "A", a=AnswerLabel({S1: "wrong"}))
    label(store, "李", "q0", "B", a=AnswerLabel({S1: "correct"}))
    label(store, "张", "q1", "tie")
    label(store, "李", "q1", "tie")
    store.adjudicate("管理员", "q0", "B", AnswerLabel({S1: "wrong_number"}), AnswerLabel(), note="首次")
    store.adjudicate("管理员", "q0", "A", AnswerLabel({S1: "correct"}), AnswerLabel(), note="复核")

    frame = store.labels_frame(source="adjudicated")
    assert sorted(zip(frame.item_id, frame.annotator, strict=True)) == [
        ("q0", ADJUDICATED),
        ("q1", "张"),
        ("q1", "李"),
    ]
    row = frame[frame.item_id == "q0"].iloc[0]
    assert (row["verdict"], row["winner"], row["comment"], row["version"], row["nhsr_a"]) == (
        "A",
        "律罗",
        "复核",
        2,
        1.0,
    )
    assert row["n_unlabelled_a"] == 1 and row["verdict_shown"] == "left" and row["current"]
    everything = store.labels_frame(current_only=False, source="adjudicated")
    assert list(everything[everything.item_id == "q0"]["version"]) == [1, 2]

    statutes = store.statute_labels_frame(source="adjudicated")
    q0 = statutes[statutes.item_id == "q0"]
    assert set(q0.annotator) == {ADJUDICATED}
    assert dict(zip(q0.statute[q0.side == "a"], q0.label[q0.side == "a"], strict=True)) == {
        S1: "correct",
        S2: None,
    }
    assert set(store.statute_labels_frame().annotator) == {"张", "李"}  # raw: no adjudication
    with pytest.raises(StoreError, match="source 'majority' is not one of raw, adjudicated"):
        store.labels_frame(source="majority")


def test_tables_reads_once_and_gives_the_same_frames_as_the_two_frame_methods(store):
    import pandas as pd

    label(store, "张", "q0", "A", a=AnswerLabel({S1: "wrong_number"}))
    label(store, "李", "q0", "tie", a=AnswerLabel({S1: "correct"}))
    label(store, "张", "q1", "B")
    store.adjudicate("管理员", "q0", "A", AnswerLabel({S1: "wrong"}), AnswerLabel(), note="依条文")
    tables = store.tables(sources=("raw", ADJUDICATED))
    assert set(tables) == {"raw", ADJUDICATED}
    for source, (labels, statutes) in tables.items():
        pd.testing.assert_frame_equal(labels, store.labels_frame(source=source))
        pd.testing.assert_frame_equal(statutes, store.statute_labels_frame(source=source))
    assert ADJUDICATED in set(tables[ADJUDICATED][0]["annotator"])
    assert ADJUDICATED not in set(tables["raw"][0]["annotator"])
    with pytest.raises(StoreError, match="source"):
        store.tables(sources=("cooked",))
    labels = tables["raw"][0]
    assert (
        store.labelled_systems()
        == sorted(set(labels["system_a"]) | set(labels["system_b"]))
        == ["GPT", "律罗"]
    )


def test_no_label_no_system_to_compare(store):
    assert store.labelled_systems() == []
