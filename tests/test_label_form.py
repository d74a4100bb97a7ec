"""The pieces of the label forms (eval_ui/label_form.py), called directly: statute slots, scores, limits."""

from __future__ import annotations

import doctest
import inspect

import gradio as gr
import pytest

from eval_ui import adjudicate_tab, annotate_tab, label_form, verdicts
from eval_ui.label_form import SLOTS
from eval_ui.statutes import CitedStatute
from tests.i18n_checks import language_of


def statute(n: int, text: str | None = "条文") -> CitedStatute:
    return CitedStatute(
        f"《民法典》第{n}条", "民法典", f"第{n}条", "verified", text, "" if text else "没有这条"
    )


@pytest.mark.parametrize(
    "module",
    [
        label_form,
        adjudicate_tab.render,
        adjudicate_tab.access,
        adjudicate_tab.forms,
        annotate_tab.render,
        annotate_tab.forms,
    ],
    ids=lambda m: m.__name__,
)
def test_the_worked_examples_hold(module):
    result = doctest.testmod(module)
    assert result.failed == 0 and result.attempted > 0


def test_every_form_label_is_a_choice_and_the_legacy_code_is_not():
    assert [code for _, code in label_form.LABEL_CHOICES] == list(verdicts.STATUTE_LABELS)
    assert verdicts.LEGACY_UNTICKED not in dict(label_form.LABEL_CHOICES).values()


def test_slots_read_back_only_what_was_labelled_and_refuse_anything_else():
    keys = [statute(n).key for n in (1, 2, 3)]
    values = ["wrong_number", None, "correct", "correct"]  # a fourth slot past the cited statutes: ignored
    assert label_form.labels_from_slots(keys, values) == {keys[0]: "wrong_number", keys[2]: "correct"}
    assert label_form.unlabelled_count(keys, {keys[0]: "wrong"}) == 2
    assert label_form.unlabelled_count(keys, {keys[0]: verdicts.LEGACY_UNTICKED}) == 3  # not a label
    for bad in (True, "legacy_unticked", "<b>"):
        with pytest.raises(ValueError, match="法条标签无效"):
            label_form.labels_from_slots(keys, [bad])


def test_filling_the_slots_shows_the_cited_statutes_and_hides_the_rest():
    cited = [statute(1), statute(2, None)]
    out = label_form.fill_slots(cited, {cited[1].key: "wrong_not_found", "other": "wrong"}, False)
    groups, cards, marks = out[:SLOTS], out[SLOTS : 2 * SLOTS], out[2 * SLOTS :]
    assert [g["visible"] for g in groups] == [True, True] + [False] * (SLOTS - 2)
    assert (
        cited[0].key in cards[0]
        and "条文" in cards[0]
        and "没有这条" in cards[1]
        and cards[2:] == [""] * (SLOTS - 2)
    )
    assert marks == [None, "wrong_not_found"] + [None] * (SLOTS - 2)
    legacy = label_form.fill_slots(cited, {cited[0].key: verdicts.LEGACY_UNTICKED}, False)
    assert legacy[2 * SLOTS] is None  # an old-form unticked statute is shown unlabelled
    assert label_form.blank_slots() == label_form.fill_slots([], {}, False)


def test_a_card_shows_hostile_text_as_text():
    evil = CitedStatute(
        "《法》<img src=x onerror=alert(1)>", "法", "第1条", "verified", "<script>x()</script>"
    )
    html = label_form.card_html(evil, show_checker=True)
    assert "<img" not in html and "<script" not in html and "&lt;script&gt;" in html


def test_the_note_says_what_the_form_cannot_list():
    cited = [statute(n) for n in range(1, SLOTS + 3)]
    note = label_form.slots_note(cited, {})
    assert f"Cites {SLOTS + 2} statute(s)" in note and "Unlabelled: 32" in note
    assert f"引用 {SLOTS + 2} 条法条" in note and "未标注 32 条" in note  # each language in its own element
    assert "the other 2 stay unlabelled" in note and cited[-1].key in note
    assert "cites no statute" in label_form.slots_note([])


def test_scores_and_texts_are_checked_as_the_page_checks_them():
    assert [label_form.score_problem(v) for v in (None, "", 0, 10, 5.5)] == [""] * 5
    for bad in (11, -1, 10.01, True, "x"):
        # a field's validation message is plain text Gradio does not translate: numbers only
        assert label_form.score_problem(bad) == f"{bad if bad not in (True, 'x') else '?'} ∉ [0, 10]"
        assert language_of(label_form.score_problem(bad)) is None
        words = label_form.score_message(bad)
        assert "须为 0–10 的数字" in words.text("zh")
        assert "must be a number from 0 to 10" in words.text("en")
    assert label_form.score_message(7) is None
    assert (
        label_form.text_problem("好" * 5000, 5000) == ""
        and label_form.text_message("好" * 5000, 5000) is None
    )
    assert label_form.text_problem("好" * 5001, 5000) == "5,001 > 5,000"
    assert "5,001" in label_form.text_message("好" * 5001, 5000).text("en")


def test_a_score_field_passes_an_out_of_range_value_on_to_the_validator():
    field = label_form.score_field("Rel", "x-rel")
    assert (field.minimum, field.maximum) == (0, 10)  # the page's input keeps min and max
    assert field.preprocess(11) == 11 and field.preprocess(None) is None
    with pytest.raises(gr.Error):  # a plain gr.Number would refuse before any validator runs
        gr.Number(minimum=0, maximum=10).preprocess(11)


def test_the_validator_marks_only_the_fields_at_fault():
    results = annotate_tab.validate_form({}, 11, 3, None, -1, "ok", *([None] * 2 * SLOTS))
    assert len(results) == 6 + 2 * SLOTS  # one per input
    assert [r["is_valid"] for r in results[:6]] == [True, False, True, True, False, True]
    assert all(r["is_valid"] for r in results[6:])


def test_the_api_names_every_slot_and_each_may_be_left_out():
    handler = annotate_tab.bind_form(
        annotate_tab.submit_label, annotate_tab.LabelForm.from_inputs, ("left", "right"), None, "left"
    )
    params = inspect.signature(handler).parameters
    assert list(params)[:8] == [
        "request",
        "profile",
        "state",
        "left_rel",
        "left_tlc",
        "right_rel",
        "right_tlc",
        "comment",
    ]
    assert [p for p in params if p.startswith(("left_", "right_")) and p[-1].isdigit()] == [
        f"{side}_{n}" for side in ("left", "right") for n in range(1, SLOTS + 1)
    ]
    assert all(params[f"right_{n}"].default is None for n in range(1, SLOTS + 1))
    assert len(annotate_tab.API_OUTPUTS) == 8 + 4 * SLOTS + 6  # … and the draft line
