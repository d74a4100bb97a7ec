"""The 裁决 tab: the admin sees items where annotators disagree, side by side, and records
the resolved label, kept apart from the annotators' labels. Through the HTTP API (gradio_client) with
Gradio's login, and its rendering called directly.
"""

from __future__ import annotations

import html
import re
from types import SimpleNamespace

import pytest

from eval_ui import adjudicate_tab
from eval_ui.label_form import SLOTS
from eval_ui.service import STORE_FILE
from eval_ui.store import AnnotationStore

from .annotation_pages import citing_items
from .fakes.live_app import annotation_app

USERS = "root:rootpw:admin,alice:alicepw,bob:bobpw"
pytestmark = [pytest.mark.filterwarnings("ignore::UserWarning"), pytest.mark.slow]


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    folder = tmp_path_factory.mktemp("adjudication")
    with AnnotationStore(folder / STORE_FILE) as store:
        store.import_items(citing_items(2, "adj"))
    with annotation_app(folder, USERS) as running:
        yield running


def client(app, name: str):
    from gradio_client import Client

    return Client(
        app.url, auth=(name, f"{name}pw"), verbose=False, download_files=False, analytics_enabled=False
    )


def view(out) -> dict:
    return dict(zip(adjudicate_tab.API_OUTPUTS, out, strict=True))


def cards(v: dict, side: str) -> list[str]:
    found = [v[f"{side}_card_{n}"] for n in range(1, SLOTS + 1)]
    return [html.unescape(re.search(r"<b[^>]*>(.*?)</b>", c).group(1)) for c in found if c]


@pytest.fixture(scope="module")
def disagreement(app):
    """alice and bob label the same item differently (the verdict and answer A's first statute)."""
    from eval_ui.annotate_tab import API_OUTPUTS

    labelled = {}
    for name, shown, code in (("alice", "left", "wrong"), ("bob", "right", "correct")):
        c = client(app, name)
        opened = dict(zip(API_OUTPUTS, c.predict(api_name="/annotation_open"), strict=True))
        item_id = "adj-0" if "第0个问题" in opened["question"] else "adj-1"
        a = app.store.assignment(name, item_id)
        side_of_a = "right" if a.swapped else "left"  # answer A cites three statutes
        c.predict(
            5, None, None, None, f"{name} 的意见", **{f"{side_of_a}_1": code}, api_name=f"/label_{shown}"
        )
        labelled[name] = (item_id, a.unswap(shown))
    assert labelled["alice"][0] == labelled["bob"][0], "overlap first: both label the same item first"
    return labelled["alice"][0]


def test_the_admin_sees_the_disagreement_side_by_side(app, disagreement):
    root = client(app, "root")
    v = view(root.predict(api_name="/disagreements"))
    assert "1 item(s) disagree" in v["message"] and v["pick"]["value"] == disagreement
    comparison = v["comparison"]
    for text in (
        "alice",
        "bob",
        "sysA",
        "sysB",
        "alice 的意见",
        "第0个问题" if disagreement == "adj-0" else "第1个问题",
    ):
        assert text in comparison
    shown = {side: re.sub(r"<[^>]+>", "", v[side]) for side in ("a", "b")}
    assert "A · sysA" in shown["a"] and "B · sysB" in shown["b"]  # the item's orientation, systems named
    assert 'class="adj-differs"' in comparison  # the rows where they disagree are marked
    keys = cards(v, "a")
    assert len(keys) == 3 and len(cards(v, "b")) == 1
    assert v["a_mark_1"] is None  # wrong vs correct: no consensus to pre-fill
    assert v["verdict"] is None


def test_the_resolution_is_kept_apart_and_a_change_keeps_the_earlier_one(app, disagreement):
    root = client(app, "root")
    root.predict(api_name="/disagreements")
    before = {n: app.store.label(n, disagreement) for n in ("alice", "bob")}
    v = view(
        root.predict("A", "查无此条 not found", a_1="wrong_not_found", b_1="correct", api_name="/adjudicate")
    )
    assert "Resolution recorded" in v["message"] and "version 1" in v["message"]
    assert "2 statute(s) left unlabelled" in v["message"]
    saved = app.store.adjudication(disagreement)
    keys = cards(v, "a")
    assert saved["verdict"] == "A" and saved["admin"] == "root" and saved["note"] == "查无此条 not found"
    assert saved["answer_labels"]["a"]["statutes"] == {keys[0]: "wrong_not_found"}
    assert list(saved["answer_labels"]["b"]["statutes"].values()) == ["correct"]
    assert {n: app.store.label(n, disagreement) for n in ("alice", "bob")} == before  # untouched
    again = view(
        root.predict("A", "查无此条 not found", a_1="wrong_not_found", b_1="correct", api_name="/adjudicate")
    )
    assert "version 1" in again["message"]  # the same resolution writes nothing new
    changed = view(root.predict("tie", "", a_1="wrong", api_name="/adjudicate"))
    assert "version 2" in changed["message"] and app.store.adjudication(disagreement)["verdict"] == "tie"
    assert [h["verdict"] for h in app.store.adjudication_history(disagreement)] == ["A"]
    listed = view(root.predict(api_name="/disagreements"))
    assert "0 not adjudicated" in listed["message"] and listed["verdict"] == "tie"
    assert listed["a_mark_1"] == "wrong"  # the recorded resolution, shown again


def test_a_resolution_without_a_verdict_or_with_a_long_note_is_refused_on_its_field(app, disagreement):
    root = client(app, "root")
    root.predict(api_name="/disagreements")
    before = app.store.adjudication(disagreement)
    with pytest.raises(Exception) as no_verdict:  # noqa: B017 - the validator's refusal
        root.predict(None, "", api_name="/adjudicate")
    assert "verdict" in str(no_verdict.value) and "A | B | tie | both_bad" in str(no_verdict.value)
    with pytest.raises(Exception) as long_note:  # noqa: B017
        root.predict("B", "好" * 2001, api_name="/adjudicate")
    assert "note" in str(long_note.value) and "2,001" in str(long_note.value)
    assert app.store.adjudication(disagreement) == before


def test_annotators_cannot_see_or_record_a_resolution(app, disagreement):
    bob = client(app, "bob")
    before = app.store.adjudication(disagreement)
    listed = view(bob.predict(api_name="/disagreements"))
    assert "Only an admin" in listed["message"]
    assert not isinstance(listed["comparison"], str)  # nothing shown (the component is left as it is)
    refused = view(bob.predict("B", "", a_1="correct", api_name="/adjudicate"))
    assert "Only an admin" in refused["message"]
    assert app.store.adjudication(disagreement) == before
    service = SimpleNamespace(identify=lambda name, oauth=None: app_identity(name))
    assert adjudicate_tab.tab_visibility(service, SimpleNamespace(username="bob")) == {
        "__type__": "update",
        "visible": False,
    }
    assert adjudicate_tab.tab_visibility(service, SimpleNamespace(username="root"))["visible"] is True


def app_identity(name: str):
    from eval_ui.service import Identity

    return Identity(name, "admin" if name == "root" else "annotator")


# -- rendering ------------------------------------------------------------------------------------

HOSTILE = '<script>window.__pwned=1</script><img src=x onerror="alert(1)">'


def test_the_comparison_shows_hostile_text_as_text():
    item = {
        "item_id": "x" + HOSTILE,
        "question": "问题" + HOSTILE,
        "system_a": "sysA" + HOSTILE,
        "system_b": "sysB",
        "reasons": ["verdict" + HOSTILE],
        "labels": [
            {"annotator": "a" + HOSTILE, "verdict": "A", "comment": HOSTILE,
             "answer_labels": {"a": {"statutes": {"《法》第1条" + HOSTILE: "wrong"}, "rel": 3, "tlc": None}, "b": {}}},
            {"annotator": "b", "verdict": "tie", "comment": "",
             "answer_labels": {"a": {"statutes": {"《法》第1条" + HOSTILE: "correct"}}, "b": {}}},
        ],
    }  # fmt: skip
    service = SimpleNamespace(statutes=lambda item_id, side: [])
    out = adjudicate_tab.comparison_html(service, item)
    assert "<script" not in out and "<img" not in out and "&lt;script&gt;" in out
    assert out.count('class="adj-differs"') == 3  # both verdict rows and the statute row


def test_the_consensus_prefills_only_what_every_labeller_agrees_on():
    item = {
        "labels": [
            {"answer_labels": {"a": {"statutes": {"x": "wrong", "y": "correct", "z": "wrong_number"}}}},
            {"answer_labels": {"a": {"statutes": {"x": "wrong", "y": "wrong_content"}}}},
            {"answer_labels": {"a": {"statutes": {"x": "wrong", "z": "legacy_unticked"}}}},
        ]
    }
    assert adjudicate_tab.consensus(item, "a") == {"x": "wrong", "z": "wrong_number"}
    assert adjudicate_tab.consensus(item, "b") == {}
