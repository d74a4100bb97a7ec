"""A human score is one row of ``eval_ui/human_scores.py``: a third row in a temporary table reaches every
consumer — the store (its labels, drafts and frame columns), the annotation form (its fields, the HTTP API's
parameters and outputs, the page's inputs and the draft's script), the adjudication page and the statistics
(an α between the annotators and a correlation with its automatic metric, by name in the page)."""

from __future__ import annotations

import inspect
import json
from types import SimpleNamespace

import gradio as gr
import pytest

from eval_ui import adjudicate_tab, annotate_tab, consistency, human_scores, stats, stats_tab
from eval_ui.annotate_tab import layout
from eval_ui.human_scores import HUMAN_SCORE_TABLE, HumanScore
from eval_ui.items import Item
from eval_ui.store import AnnotationStore, AnswerLabel, Draft, LabelInput, StoreError
from eval_ui.store.frames import frame_columns
from lawluo.i18n import catalogue, text
from lawluo.metrics import registry

CLARITY = HumanScore("clarity", "Clarity", "clarity", 0, 5)
SHIPPED = [s.key for s in HUMAN_SCORE_TABLE]


@pytest.fixture
def three(monkeypatch):
    """The shipped table with a third score (0–5), and its form label in the catalogue."""
    monkeypatch.setattr(human_scores, "HUMAN_SCORE_TABLE", (*HUMAN_SCORE_TABLE, CLARITY))
    monkeypatch.setitem(catalogue(), CLARITY.label_key, {"zh": "清晰度（0–5）", "en": "Clarity (0–5)"})
    return CLARITY


@pytest.fixture
def store(tmp_path):
    s = AnnotationStore(tmp_path / "a.sqlite")
    s.import_items([Item(f"q{n}:x:y", f"问题{n}", f"x的回答{n}", f"y的回答{n}", "x", "y") for n in range(4)])
    for name in ("u1", "u2"):
        s.add_annotator(name)
    s.assign(2, seed=1)
    yield s
    s.close()


def save(store, annotator, item_id, a_scores, b_scores):
    """A label (verdict A) whose answers a and b get ``a_scores`` / ``b_scores`` (by key), as the item has them."""
    a = store.assignment(annotator, item_id)
    x, y = AnswerLabel(scores=a_scores), AnswerLabel(scores=b_scores)
    left, right = (y, x) if a.swapped else (x, y)
    store.save_label(annotator, item_id, LabelInput(a.to_shown("A"), left, right), f"{annotator}-{item_id}")


def test_the_shipped_table_keeps_its_names():
    assert SHIPPED == ["rel", "tlc"] and [s.metric for s in HUMAN_SCORE_TABLE] == ["rel", "tlc"]
    assert frame_columns()[10:14] == ("rel_a", "tlc_a", "rel_b", "tlc_b")
    assert annotate_tab.SCORE_FIELDS == ("left_rel", "left_tlc", "right_rel", "right_tlc")
    keys = [s.key for s in consistency.STATISTICS]
    assert keys[keys.index("alpha_statutes") + 1 : keys.index("human_s1")] == ["alpha_rel", "alpha_tlc"]
    assert keys[keys.index("nhsr_lawyers") + 1 : keys.index("judge_s1")] == [
        "rel_correlation",
        "tlc_correlation",
    ]


@pytest.mark.parametrize("row", HUMAN_SCORE_TABLE, ids=SHIPPED)
def test_each_shipped_score_is_a_metric_of_lawluo_evaluate_with_a_label_in_both_languages(row):
    metric = registry.spec(row.metric)  # the automatic counterpart the statistics correlate with
    assert [(c.key, c.heading) for c in metric.columns] == [(row.metric, row.name)]
    assert {"zh", "en"} <= set(catalogue()[row.label_key]) and f"{row.low}–{row.high}" in text(row.label_key)


def test_the_store_keeps_a_third_score_in_labels_drafts_and_frames(three, store):
    save(store, "u1", "q0:x:y", {"rel": 7, "clarity": 4}, {"clarity": 2.5})
    label = store.label("u1", "q0:x:y")["answer_labels"]
    assert label["a"]["clarity"] == 4 and label["b"]["clarity"] == 2.5 and label["b"]["rel"] is None
    columns = frame_columns()
    assert columns[10:16] == ("rel_a", "tlc_a", "clarity_a", "rel_b", "tlc_b", "clarity_b")
    frame = store.labels_frame()
    assert list(frame.columns) == list(columns)
    assert (
        frame.loc[0, "clarity_a"] == 4.0 and frame.loc[0, "clarity_b"] == 2.5 and frame.loc[0, "rel_a"] == 7.0
    )
    with pytest.raises(StoreError, match="Clarity"):  # its own range: 0–5
        save(store, "u2", "q0:x:y", {"clarity": 6}, {})
    assert AnswerLabel({}, 1, 2, 3).clarity == 3
    assert store.save_draft("u2", "q1:x:y", Draft(AnswerLabel(clarity=1), AnswerLabel()), 0)
    draft = store.draft("u2", "q1:x:y")
    assert {draft["a"]["clarity"], draft["b"]["clarity"]} == {1, None}


def test_the_form_has_a_field_per_answer_for_a_third_score(three):
    fields = ["left_rel", "left_tlc", "left_clarity", "right_rel", "right_tlc", "right_clarity"]
    assert list(human_scores.form_fields()) == fields
    handler = annotate_tab.bind_form(
        annotate_tab.submit_label, annotate_tab.LabelForm.from_inputs, ("left", "right"), None, "left"
    )
    assert list(inspect.signature(handler).parameters)[2:10] == ["state", *fields, "comment"]
    outputs = annotate_tab.api_outputs()
    assert [o for o in outputs if o in fields] == fields and outputs.index("left_clarity") < outputs.index(
        "comment"
    )
    form = annotate_tab.LabelForm.from_inputs({"item_id": "q"}, 1, 2, 6, 3, 4, 5, "ok", "wrong")
    assert (
        form.side_scores(0) == [1, 2, 6]
        and form.side_scores(1) == [3, 4, 5]
        and form.side_marks(0)[0] == "wrong"
    )
    problems = annotate_tab.form_problems(form.scores, form.comment)
    assert problems[:6] == ["", "", "6 ∉ [0, 5]", "", "", ""]  # the row's range, on its own field
    assert (
        "'left-clarity'" in annotate_tab.draft_form_js() and "'right-clarity'" in annotate_tab.draft_form_js()
    )
    read = annotate_tab.read_draft_form(
        json.dumps({"scores": ["1"] * 6, "comment": "", "marks": [None] * 60})
    )
    assert read.scores == ["1"] * 6
    with gr.Blocks():
        ui = layout._build_answers()
    assert ui["right_clarity"].elem_id == "ann-right-clarity" and ui["right_clarity"].maximum == 5
    view = annotate_tab.AnnotationView(scores=dict(zip(fields, range(6), strict=True)))
    assert view.left_clarity == 2 and list(view.outputs(["scores"])) == list(range(6))


def test_the_adjudication_page_shows_a_third_score():
    item = {
        "item_id": "q1", "question": "问题", "system_a": "x", "system_b": "y", "reasons": ["verdict"],
        "labels": [
            {"annotator": "u1", "verdict": "A", "comment": "",
             "answer_labels": {"a": {"statutes": {}, "rel": 3, "tlc": None, "clarity": 4}, "b": {}}},
            {"annotator": "u2", "verdict": "B", "comment": "", "answer_labels": {"a": {}, "b": {"clarity": 1}}},
        ],
    }  # fmt: skip
    service = SimpleNamespace(statutes=lambda item_id, side: [])
    assert "<td>3 / —</td>" in adjudicate_tab.comparison_html(service, item)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(human_scores, "HUMAN_SCORE_TABLE", (*HUMAN_SCORE_TABLE, CLARITY))
        out = adjudicate_tab.comparison_html(service, item)
    assert "<td>3 / — / 4</td>" in out and "<td>— / — / 1</td>" in out
    assert "A 评分 Rel / T_LC / Clarity" in out and "A Rel / T_LC / Clarity" in out


def test_the_statistics_compute_and_name_a_third_score(three, store, tmp_path):
    plan = {"u1": [4, 3, 1, 5], "u2": [5, 3, 0, 4]}
    for annotator, scores in plan.items():
        for n, clarity in enumerate(scores):
            save(store, annotator, f"q{n}:x:y", {"clarity": clarity}, {})
    details = tmp_path / "details.jsonl"
    rows = [{"id": f"q{n}", "system": "x", "clarity": {"score": s}} for n, s in enumerate([5, 3, 1, 5])]
    details.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    auto = consistency.AutoMetrics.read([details])
    assert auto.clarity == {("q0", "x"): 5.0, ("q1", "x"): 3.0, ("q2", "x"): 1.0, ("q3", "x"): 5.0} and auto
    report = consistency.report_from_store(store, auto=auto, n_boot=50)
    assert report.statistics["alpha_clarity"].value is not None
    assert report.statistics["alpha_rel"].value is None and report.statistics["alpha_rel"].needs
    expected = stats.correlation([5, 3, 1, 5], [4.5, 3.0, 0.5, 4.5])  # each answer's mean human score
    assert report.statistics["clarity_correlation"].value == pytest.approx(expected["spearman"]) == 1.0
    inter = report.section("标注者一致性 Inter-annotator agreement")
    assert "alpha_clarity" in inter.statistics
    assert "Clarity: Krippendorff α (interval)" in set(inter.table["measure"])
    scores = report.section("Rel / T_LC / Clarity 与律师评分 Rel, T_LC and Clarity against the lawyers")
    assert "Clarity" in set(scores.table["measure"])
    assert "clarity_correlation" in report.to_json()["statistics"]
    page = stats_tab.report_html(report)
    assert "Clarity：Krippendorff α（区间）" in page and "Clarity: Krippendorff α (interval)" in page
    assert "Rel, T_LC and Clarity against the lawyers" in page and "Rel / T_LC / Clarity 与律师评分" in page
    assert (
        "需要一个由 2 位标注员打了 Rel 分的回答" in page
    )  # a shipped row's need, by the same catalogue text


def test_the_table_is_the_evaluators_metrics_that_lawyers_score_too():
    """A metric and its human counterpart are declared once: a registry row with ``human=HumanScale(…)``."""
    from lawluo.metrics.registry import REGISTRY

    rows = [spec for spec in REGISTRY if spec.human is not None]
    assert [(s.key, s.name, s.metric, s.range) for s in HUMAN_SCORE_TABLE] == [
        (spec.name, spec.human.name, spec.name, (spec.human.low, spec.human.high)) for spec in rows
    ]
    assert [spec.name for spec in rows] == ["rel", "tlc"]
