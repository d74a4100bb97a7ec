"""Drafts, one-click "all correct", and the statistics' notes, called directly (issue 42, item 7).

- What an annotator marks and types for an item is kept as their draft of that item and shown again with
  it (after F5), and only to them, only on that item; saving the label deletes it, and a draft made
  before a label was saved again is never restored.
- A draft is validated when kept and again when read back, as an upload is: at most
  ``MAX_DRAFT_BYTES``, exactly the known keys, statute labels only from the form's choices, scores
  0–10, a comment within the limit. A bad one is refused with a message, or (read back) not restored.
- 这些都没问题 marks only the cards of statutes the checker found as cited (a non-existent article never).
- The statistics name the real cause of a missing Rel / T_LC agreement, default the paired test to two
  systems that were compared with each other, and put each chart in its section, inlined.

The browser side (F5, both viewports) is ``tests/test_annotation_item7_browser.py``.
"""

from __future__ import annotations

import json
from types import SimpleNamespace

import pandas as pd
import pytest

from eval_ui import annotate_tab, consistency, label_form, stats, stats_tab
from eval_ui.auth import parse_users
from eval_ui.items import Item
from eval_ui.label_form import SLOTS
from eval_ui.service import AnnotationService
from eval_ui.statutes import CitedStatute
from eval_ui.store import (
    MAX_COMMENT,
    STATUTE_COLUMNS,
    AnnotationStore,
    AnswerLabel,
    Draft,
    LabelInput,
    StoreError,
)

from .annotation_pages import CITING, CITING_ONE

NOT_AN_ARTICLE = "《中华人民共和国民法典》第九千条"


def as_user(name: str | None):
    return SimpleNamespace(username=name)


@pytest.fixture
def service(tmp_path, checker):
    store = AnnotationStore(tmp_path / "annotations.sqlite")
    service = AnnotationService(
        store, users=parse_users("root:rootpw:admin,alice:alicepw,bob:bobpw"), checker=checker
    )
    store.import_items([Item(f"q{n}:x:y", f"问题{n}", CITING, CITING_ONE, "x", "y") for n in range(3)])
    for name, role in (("root", "admin"), ("alice", "annotator"), ("bob", "annotator")):
        service.register(name, role, assign=False)
    service.assign()
    yield service
    store.close()


def form(view: annotate_tab.AnnotationView) -> dict:
    """What the form shows: scores, comment, each side's statute labels by slot."""
    slots = {side: getattr(view, f"{side}_slots")[2 * SLOTS : 3 * SLOTS] for side in ("left", "right")}
    return {
        "scores": (view.left_rel, view.left_tlc, view.right_rel, view.right_tlc),
        "comment": view.comment,
        "left": [m for m in slots["left"] if m is not None],
        "right": [m for m in slots["right"] if m is not None],
    }


def typed(service, name: str, item_id: str, *marks, comment="还要查一下", scores=(7, None, None, 3)):
    """``name`` marks and types on item ``item_id`` (the draft event of the page: its fields as JSON)."""
    state = {"item_id": item_id, "version": 0}
    marks = list(marks) + [None] * (2 * SLOTS - len(marks))
    form = json.dumps(
        {"scores": ["" if v is None else str(v) for v in scores], "comment": comment, "marks": marks}
    )
    return annotate_tab.keep_draft(service, as_user(name), None, state, form)


# --------------------------------------------------------------------------- drafts


def test_a_draft_comes_back_with_its_item_after_a_reload_and_goes_when_the_label_is_saved(service):
    view = annotate_tab.open_annotation(service, as_user("alice"))
    item_id = view.state["item_id"]
    note = typed(service, "alice", item_id, "wrong_content", comment="第二条存疑")
    assert "Draft kept" in note
    again = annotate_tab.open_annotation(service, as_user("alice"))  # F5: the page loads again
    assert again.state["item_id"] == item_id
    assert form(again) == {
        "scores": (7, None, None, 3),
        "comment": "第二条存疑",
        "left": ["wrong_content"],
        "right": [],
    }
    assert "Restored your unsaved draft" in again.message
    filled = annotate_tab.LabelForm.from_inputs(again.state, 7, None, None, 3, "第二条存疑", "wrong_content")
    out = annotate_tab.submit_label(service, "tie", filled, as_user("alice"))
    assert "Saved" in out.message and out.state["item_id"] != item_id
    assert service.store.draft("alice", item_id) is None  # deleted with the save
    back = annotate_tab.go_back(service, out.state, as_user("alice"))
    assert back.state["item_id"] == item_id and "Restored" not in back.message


def test_a_draft_is_never_shown_to_another_annotator_or_on_another_item(service):
    item_id = annotate_tab.open_annotation(service, as_user("alice")).state["item_id"]
    typed(service, "alice", item_id, "wrong", comment="alice 的草稿")
    bob = annotate_tab.open_annotation(service, as_user("bob"))
    assert bob.state["item_id"] == item_id  # overlap first: the same item
    assert form(bob)["comment"] == "" and form(bob)["left"] == [] and "Restored" not in bob.message
    assert service.store.draft("bob", item_id) is None
    other = annotate_tab.skip_item(service, {"item_id": item_id}, as_user("alice"))
    assert other.state["item_id"] != item_id and form(other)["comment"] == ""
    # someone who is not signed in as an annotator keeps no draft (and nothing raises)
    assert typed(service, "mallory", item_id, comment="别人的") == ""
    assert [tuple(r) for r in service.store._all("SELECT annotator, item_id FROM drafts")] == [
        ("alice", item_id)
    ]


@pytest.mark.parametrize(
    "form",
    [None, "not json", "[]", json.dumps({"scores": [], "comment": "", "marks": []}),
     json.dumps({"scores": [None] * 4, "comment": "", "marks": [None] * 60, "item_id": "q2:x:y"}),
     json.dumps({"scores": [None] * 4, "comment": "", "marks": [{"x": 1}] + [None] * 59}),
     json.dumps({"scores": [None] * 4, "comment": "长" * 50_000, "marks": [None] * 60})],
)  # fmt: skip
def test_a_form_that_is_not_the_pages_keeps_no_draft_and_says_so(service, form):
    item_id = service.store.next_item("alice").item.id
    note = annotate_tab.keep_draft(service, as_user("alice"), None, {"item_id": item_id, "version": 0}, form)
    assert "草稿没有保存" in note and "The draft was not kept" in note
    assert service.store.draft("alice", item_id) is None


def test_a_draft_older_than_the_label_saved_since_is_not_restored(service):
    store = service.store
    a = store.next_item("alice")
    store.save_label("alice", a.item.id, LabelInput("left", AnswerLabel(rel=5)), "s1")
    # a draft event that left the page before the label was saved arrives after it: based on version 0
    assert store.save_draft("alice", a.item.id, Draft(comment="晚到的草稿"), base_version=0) is False
    assert store.draft("alice", a.item.id) is None
    # one written on version 1, then the label is saved again (version 2): stale, never restored
    assert store.save_draft("alice", a.item.id, Draft(comment="改一下"), base_version=1) is True
    assert store.draft("alice", a.item.id)["comment"] == "改一下"
    store.save_label("alice", a.item.id, LabelInput("right", AnswerLabel(rel=6)), "s2")
    assert store.draft("alice", a.item.id) is None


def test_a_draft_is_validated_when_kept(service):
    store = service.store
    item_id = store.next_item("alice").item.id
    for bad, why in (
        (Draft(AnswerLabel({"《民法典》第1条": "yes"})), "not one of"),
        (Draft(AnswerLabel(rel=11)), "0 to 10"),
        (Draft(comment="字" * (MAX_COMMENT + 1)), "at most 5,000"),
        (Draft(AnswerLabel({"": "correct"})), "non-empty"),
    ):
        with pytest.raises(StoreError, match=why):
            store.save_draft("alice", item_id, bad, 0)
    assert store.draft("alice", item_id) is None
    with pytest.raises(StoreError, match="not assigned"):
        store.save_draft("mallory", item_id, Draft(comment="x"), 0)
    # through the page: the reason is said under the comment, in both languages, and nothing raises
    note = typed(service, "alice", item_id, comment="字" * (MAX_COMMENT + 1))
    assert "草稿没有保存" in note and "The draft was not kept" in note and "5,000" in note
    # an out-of-range score is left out of the draft (the verdict's validator reports it on its field)
    note = typed(service, "alice", item_id, "correct", scores=(11, 4, None, None))
    assert "1 score(s) outside 0–10 left out" in note
    kept = store.draft("alice", item_id)
    shown_left = "b" if store.assignment("alice", item_id).swapped else "a"
    assert (kept[shown_left]["rel"], kept[shown_left]["tlc"]) == (None, 4)


@pytest.mark.parametrize(
    "tampered",
    [
        {"a": {"statutes": {}, "rel": None, "tlc": None}, "b": {"statutes": {}, "rel": None, "tlc": None},
         "comment": "x", "item_id": "q1:x:y"},  # an unknown key
        {"a": {"statutes": {NOT_AN_ARTICLE: "<script>"}, "rel": None, "tlc": None},
         "b": {"statutes": {}, "rel": None, "tlc": None}, "comment": ""},  # a label not from the choices
        {"a": {"statutes": {}, "rel": "7", "tlc": None}, "b": {"statutes": {}, "rel": None, "tlc": None},
         "comment": ""},  # a score that is not a number
        {"a": {"statutes": {}, "rel": None, "tlc": None}, "b": {"statutes": {}, "rel": None, "tlc": None},
         "comment": "长" * 40_000},  # over the size bound
        ["not", "a", "draft"],
    ],
)  # fmt: skip
def test_a_stored_draft_is_validated_again_when_read_back(service, tampered):
    store = service.store
    item_id = store.next_item("alice").item.id
    store.save_draft("alice", item_id, Draft(comment="原来的"), 0)
    with store._write() as con:  # the file was edited behind the app's back
        con.execute("UPDATE drafts SET data = ? WHERE annotator = 'alice'", (json.dumps(tampered),))
    assert store.draft("alice", item_id) is None
    view = annotate_tab.open_annotation(service, as_user("alice"))
    assert view.state["item_id"] == item_id and form(view)["comment"] == "" and "Restored" not in view.message


def test_a_restored_statute_label_goes_only_onto_a_statute_the_answer_cites(service):
    store = service.store
    a = store.next_item("alice")
    cited_left = [s.key for s in service.statutes(a.item.id, "b" if a.swapped else "a")]
    labels = {cited_left[0]: "wrong_number", "《刑法》第一条": "correct"}  # the second is not cited here
    store.save_draft("alice", a.item.id, Draft(AnswerLabel(labels)), 0)
    view = annotate_tab.open_annotation(service, as_user("alice"))
    assert form(view)["left"] == ["wrong_number"]


# --------------------------------------------------------------------------- 这些都没问题


def test_only_a_statute_the_checker_found_is_one_click_correct():
    def card(verdict: str) -> str:
        return label_form.card_html(CitedStatute("《民法典》第1条", "民法典", "第1条", verdict, "…"), False)

    for verdict in ("verified", "amended_since", "no_content"):
        assert label_form.ONE_CLICK_CLASS in card(verdict), verdict
    for verdict in ("not_found", "wrong_number", "content_mismatch", "repealed", "outdated_version"):
        assert label_form.ONE_CLICK_CLASS not in card(verdict), verdict
    assert "verified" not in card("verified")  # the checker's verdict itself stays hidden


def test_the_items_non_existent_article_is_not_one_click(service):
    cards = {
        s.key: label_form.card_html(s, False) for s in service.statutes("q0:x:y", "a")
    }  # answer A: CITING
    assert [k for k, html in cards.items() if label_form.ONE_CLICK_CLASS not in html] == [NOT_AN_ARTICLE]


# --------------------------------------------------------------------------- statistics


def labels_frame(rows: list[tuple[str, str, str, str]], **scores) -> pd.DataFrame:
    """Labels (item, annotator, system_a, system_b; verdict A) with optional score columns."""
    frame = pd.DataFrame(rows, columns=["item_id", "annotator", "system_a", "system_b"]).assign(verdict="A")
    for column in ("rel_a", "rel_b", "tlc_a", "tlc_b"):
        frame[column] = scores.get(column, [None] * len(rows))
    return frame


def test_rel_and_tlc_say_that_nobody_gave_scores_when_nobody_did():
    raw = labels_frame([(f"q{n}", who, "x", "y") for n in range(9) for who in ("alice", "bob")])
    report = consistency.Report()
    report.statistics = {
        s.key: consistency.Statistic(s.key, s.title, needs=s.needs) for s in consistency.STATISTICS
    }
    section = consistency._inter_annotator(raw, pd.DataFrame(), report, stats.Bootstrap(n_boot=0, seed=0))
    notes = dict(zip(section.table["measure"], section.table["note"], strict=True))
    rows = dict(zip(section.table["measure"], section.table["n_items"], strict=True))
    assert rows[consistency.SPECS["alpha_verdict"].title] == 9  # nine items labelled by both
    for key, name in (("alpha_rel", "Rel"), ("alpha_tlc", "T_LC")):
        assert (
            notes[consistency.SPECS[key].title]
            == f"no annotator gave {name} scores (they are optional in the form)"
        )
        assert "labelled by two" not in report.statistics[key].needs
    assert "no annotator labelled a cited statute" in notes[consistency.SPECS["alpha_statutes"].title]


def test_rel_scored_by_one_annotator_only_says_so():
    raw = labels_frame([("q1", "alice", "x", "y"), ("q1", "bob", "x", "y")], rel_a=[6, None])
    report = consistency.Report()
    report.statistics = {
        s.key: consistency.Statistic(s.key, s.title, needs=s.needs) for s in consistency.STATISTICS
    }
    section = consistency._inter_annotator(raw, pd.DataFrame(), report, stats.Bootstrap(n_boot=0, seed=0))
    notes = dict(zip(section.table["measure"], section.table["note"], strict=True))
    assert notes[consistency.SPECS["alpha_rel"].title] == (
        "Rel scores were given on 1 answer, each by one annotator only: none is scored by two or more"
    )


def test_the_default_paired_test_is_over_two_systems_that_were_compared():
    # the two best systems (p and q) never met; r and s met on three items, p and r on one
    rows = [("i1", "u", "p", "z"), ("i2", "u", "q", "w"), ("i3", "u", "r", "s"), ("i4", "u", "s", "r"),
            ("i5", "u", "r", "s"), ("i6", "u", "p", "r")]  # fmt: skip
    labels = labels_frame(rows)
    rates = {"p": 1.0, "q": 1.0, "r": 0.6, "s": 0.3, "z": 0.0, "w": 0.0}
    assert consistency.default_pair(labels, rates) == ("r", "s")
    assert consistency.default_pair(labels.iloc[:0], rates) is None
    statutes = pd.DataFrame(columns=list(STATUTE_COLUMNS))
    report = consistency.human_consistency(labels.assign(seconds_spent=1.0), statutes, n_boot=50)
    paired = report.statistics["paired_test"]
    assert (paired.extra["first"], paired.extra["second"]) == ("r", "s")
    table = next(s for s in report.sections if s.title.startswith("配对")).table
    assert int(table["met"].iloc[0]) == 3


def test_each_chart_is_inlined_in_its_section(tmp_path):
    png = tmp_path / "human_win_rate.png"
    png.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 16)
    html = stats_tab.chart_html("pairs", 'Win "tie" <loss>', png)
    assert html.startswith(
        '<figure class="st-chart" id="st-chart-pairs"><img src="data:image/png;base64,iVBORw0KGgo'
    )
    assert 'loading="eager"' in html and 'alt="Win &quot;tie&quot; &lt;loss&gt;"' in html
