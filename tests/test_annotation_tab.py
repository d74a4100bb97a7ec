"""The annotation and statistics tabs through their HTTP API (gradio_client), signed in with Gradio's login.

The app runs on loopback with three users — an admin and two annotators — and the demo items; each
test reads the store directly to check what the page claimed. A verdict takes the four scores, the
comment and one label per statute card (``left_1`` …, ``right_1`` …); what comes back is named by
``annotate_tab.API_OUTPUTS``.
"""

from __future__ import annotations

import csv
import html
import io
import json
import re
from pathlib import Path

import gradio as gr
import pytest

from eval_ui import annotate_tab
from eval_ui.label_form import SLOTS
from eval_ui.service import AnnotationService
from eval_ui.store import AnnotationStore
from lawluo.i18n import text as catalogue_text

from .fakes.live_app import annotation_app

USERS = "root:rootpw:admin,alice:alicepw,bob:bobpw"
pytestmark = [pytest.mark.filterwarnings("ignore::UserWarning"), pytest.mark.slow]


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    with annotation_app(tmp_path_factory.mktemp("annotation"), USERS) as running:
        yield running


def client(app, name: str, password: str):
    from gradio_client import Client

    return Client(
        app.url, auth=(name, password), verbose=False, download_files=False, analytics_enabled=False
    )


def fields(out) -> dict:
    return dict(zip(annotate_tab.API_OUTPUTS, out, strict=True))


def cited(view: dict, side: str) -> list[str]:
    """The statutes the view's cards of ``side`` (left/right) show, in order."""
    cards = [view[f"{side}_card_{n}"] for n in range(1, SLOTS + 1)]
    return [html.unescape(re.search(r"<b[^>]*>(.*?)</b>", c).group(1)) for c in cards if c]


def open_item_with_statutes(app, c, name: str) -> dict:
    """Open items (skipping) until one whose left answer cites a statute is shown; its view."""
    view = fields(c.predict(api_name="/annotation_open"))
    for _ in range(30):
        if "statute" in (view["left_note"] or "") and "cites no" not in view["left_note"]:
            return view
        view = fields(c.predict(api_name="/annotation_skip"))
    raise AssertionError(f"no item of {name} cites a statute on the left")


def test_nobody_gets_in_without_a_password(app):
    from gradio_client import Client

    with pytest.raises(Exception):  # noqa: B017 - gradio_client raises a plain error on 401
        Client(app.url, verbose=False, download_files=False)
    with pytest.raises(Exception):  # noqa: B017
        Client(app.url, auth=("alice", "wrong"), verbose=False, download_files=False)


def test_an_annotator_labels_one_statute_and_the_rest_stay_unlabelled(app):
    alice = client(app, "alice", "alicepw")
    view = open_item_with_statutes(app, alice, "alice")
    assert '**<span lang="en">alice</span>**' in view["status"] and "/ 60" in view["status"]
    assert view["left_mark_1"] is None  # a new item: no statute labelled
    out = fields(alice.predict(8, 6, None, 3, "ok", left_1="wrong_number", api_name="/label_left"))
    assert "已保存" in out["message"] and "Saved" in out["message"] and "1 / 60" in out["status"]
    (item_id,) = app.store.done_items("alice")
    a = app.store.assignment("alice", item_id)
    label = app.store.label("alice", item_id)
    assert label["verdict"] == ("B" if a.swapped else "A")  # "left" un-swapped
    shown_left, shown_right = ("b", "a") if a.swapped else ("a", "b")
    left, right = cited(view, "left"), cited(view, "right")
    mine = label["answer_labels"][shown_left]
    assert mine["rel"] == 8 and mine["tlc"] == 6
    assert mine["statutes"] == {left[0]: "wrong_number"}  # only what was labelled
    other = label["answer_labels"][shown_right]
    assert other["statutes"] == {} and other["rel"] is None and other["tlc"] == 3
    unlabelled = len(left) + len(right) - 1
    if unlabelled:
        assert f"{unlabelled} cited statute" in out["message"] and "未标注" in out["message"]
    assert label["comment"] == "ok" and label["guideline_version"] == "1"


def test_going_back_shows_the_saved_labels_and_an_edit_keeps_the_old_version(app):
    bob = client(app, "bob", "bobpw")
    first = open_item_with_statutes(app, bob, "bob")
    bob.predict(5, 5, 5, 5, "", left_1="correct", api_name="/label_tie")
    (item_id,) = app.store.done_items("bob")
    back = fields(bob.predict(api_name="/annotation_back"))
    # the same question, now headed without its place in the queue (an edit)
    assert back["question"].split("ann-text")[1] == first["question"].split("ann-text")[1]
    assert "第 1 / 60 条 · 问题" in first["question"] and "Item 1 of 60 · Question" in first["question"]
    assert "第 1 / 60 条" not in back["question"] and ">Question<" in back["question"]
    assert (
        "Editing your label (version 1" in back["message"] and "正在修改你的标注（第 1 版" in back["message"]
    )
    assert back["left_rel"] == 5
    assert back["left_mark_1"] == "correct" and back["left_mark_2"] is None
    saved = fields(bob.predict(9, 5, 2, 5, "changed", left_1="wrong_content", api_name="/label_right"))
    assert "version 2" in saved["message"]
    label = app.store.label("bob", item_id)
    assert (
        label["comment"] == "changed"
        and "wrong_content"
        in label["answer_labels"]["b" if app.store.assignment("bob", item_id).swapped else "a"][
            "statutes"
        ].values()
    )
    assert [h["comment"] for h in app.store.history("bob", item_id)] == [""]
    assert app.store.progress("bob")[0] == 1  # an edit is not a new item


def test_bad_input_is_refused_on_its_field_and_nothing_is_saved(app):
    alice = client(app, "alice", "alicepw")
    alice.predict(api_name="/annotation_open")
    before = app.store.progress("alice")
    with pytest.raises(Exception) as refused:  # noqa: B017 - the validator's refusal, named by field
        alice.predict(11, None, None, -1, "", api_name="/label_left")
    text = str(refused.value)
    assert "left_rel" in text and "right_tlc" in text and "left_tlc" not in text
    assert (
        "11 ∉ [0, 10]" in text and "-1 ∉ [0, 10]" in text
    )  # numbers only: a field's message is not translated
    with pytest.raises(Exception) as too_long:  # noqa: B017
        alice.predict(None, None, None, None, "好" * 5001, api_name="/label_both_bad")
    assert "comment" in str(too_long.value) and "5,001" in str(too_long.value)
    assert "5,001 > 5,000" in str(too_long.value)
    with pytest.raises(Exception):  # noqa: B017 - a label that is not one of the choices: HTTP 400
        alice.predict(None, None, None, None, "", left_1="true", api_name="/label_left")
    assert app.store.progress("alice") == before
    out = fields(alice.predict(None, None, None, None, "好" * 5000, api_name="/label_left"))
    assert "Saved" in out["message"] and app.store.progress("alice")[0] == before[0] + 1


def test_hostile_html_in_an_imported_answer_is_shown_as_text(app, tmp_path):
    root = client(app, "root", "rootpw")
    from gradio_client import handle_file

    evil = '<script>window.__pwned=1</script><img src=x onerror="alert(1)">答案《民法典》第1079条'
    row = {"id": "evil-1", "question": "<b>问题</b>", "answer_a": evil, "answer_b": "普通回答",
           "system_a": "x", "system_b": "y"}  # fmt: skip
    path = tmp_path / "evil.jsonl"
    path.write_text(json.dumps(row, ensure_ascii=False) + "\n", encoding="utf-8")
    message, _ = root.predict(handle_file(str(path)), api_name="/import_items")
    assert "Imported 1 items" in message
    item = app.store.assignment("alice", "evil-1")
    shown = item.right if item.swapped else item.left  # the side answer A is drawn on (a secret draw)
    html = annotate_tab.text_block("左", shown)
    assert "<script>" not in html and "&lt;script&gt;" in html


def test_an_oversized_or_malformed_import_is_refused_whole(app, tmp_path, monkeypatch):
    root = client(app, "root", "rootpw")
    from gradio_client import handle_file

    count = app.store.item_count()
    bad = tmp_path / "bad.jsonl"
    good = {"id": "ok-1", "question": "q", "answer_a": "a", "answer_b": "b", "system_a": "x", "system_b": "y"}
    bad.write_text(json.dumps(good) + "\n{not json\n", encoding="utf-8")
    message, _ = root.predict(handle_file(str(bad)), api_name="/import_items")
    assert "Nothing was imported" in message and "bad.jsonl:2" in message
    monkeypatch.setattr(annotate_tab.admin, "MAX_IMPORT_BYTES", 50)  # where import_items reads it
    message, _ = root.predict(handle_file(str(bad)), api_name="/import_items")
    assert "the limit is" in message
    assert app.store.item_count() == count


def test_only_admins_reach_import_export_adjudication_and_statistics(app, tmp_path):
    from gradio_client import handle_file

    bob = client(app, "bob", "bobpw")
    path = tmp_path / "items.jsonl"
    row = {
        "id": "sneaky",
        "question": "q",
        "answer_a": "a",
        "answer_b": "b",
        "system_a": "x",
        "system_b": "y",
    }
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    message, _ = bob.predict(handle_file(str(path)), api_name="/import_items")
    assert "Only an admin" in message and app.store.item("sneaky") is None
    message, file = bob.predict("csv", "raw", False, api_name="/export_labels")
    assert "Only an admin" in message and file is None
    message, files = bob.predict(api_name="/export_all")
    assert "Only an admin" in message and not files
    assert "Only an admin" in bob.predict(api_name="/disagreements")[0]
    assert "Only an admin" in bob.predict("A", "", api_name="/adjudicate")[0]
    html = bob.predict(api_name="/statistics")[0]
    assert "Only an admin" in html
    message, table = bob.predict(api_name="/annotators")
    assert "Only an admin" in message and not table["data"]


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
def test_the_admin_export_matches_the_store(app, fmt):
    root = client(app, "root", "rootpw")
    message, file = root.predict(fmt, "raw", False, api_name="/export_labels")
    assert "Exported" in message
    path = Path(file["path"] if isinstance(file, dict) else file)
    if fmt == "csv":
        rows = list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8-sig"))))
    elif fmt == "jsonl":
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    else:
        import pyarrow.parquet as pq

        rows = pq.read_table(path).to_pylist()
    frame = app.store.labels_frame()
    assert len(rows) == len(frame) >= 2
    assert {(r["annotator"], r["item_id"], r["verdict"]) for r in rows} == set(
        zip(frame["annotator"], frame["item_id"], frame["verdict"], strict=True)
    )


def test_export_every_file_at_once(app):
    root = client(app, "root", "rootpw")
    message, files = root.predict(api_name="/export_all")
    names = sorted(Path(f["path"] if isinstance(f, dict) else f).name for f in files)
    assert "Exported" in message
    assert {"labels.csv", "labels.jsonl", "labels.parquet", "adjudications.jsonl"} <= set(names)


def test_the_statistics_answer_the_admin(app):
    root = client(app, "root", "rootpw")
    html = root.predict(api_name="/statistics")[0]
    text = re.sub(r"data:image/png;base64,[^\"]*", "", html)  # the charts, inlined, are not text
    assert "Only an admin" not in html and "nan" not in text.lower()


# -- without sign-in, the tab says so once and shows no form ---------------------------------------


def test_without_sign_in_the_tab_says_so_once_in_plain_words_and_has_no_form(tmp_path):
    service = AnnotationService(AnnotationStore(tmp_path / "a.sqlite"))
    assert service.sign_in is None
    with gr.Blocks() as demo:
        annotate_tab.build_annotate_tab(service, demo)
    ids = [getattr(b, "elem_id", None) for b in demo.blocks.values()]
    # the Markdown's value is a gr.I18n key (translated in the browser): its texts in both languages
    keys = [str(b.value) for b in demo.blocks.values() if isinstance(b, gr.Markdown)]
    assert "ann-not-configured" in ids
    assert not {"ann-verdict-left", "ann-status", "ann-comment", "ann-admin"} & set(ids)
    assert sum('"annotate.not_configured"' in k for k in keys) == 1
    for lang, words in (("zh", "没有配置登录方式"), ("en", "no sign-in set up")):
        text = catalogue_text("annotate.not_configured", lang)
        assert "`" not in text and "LAWLUO_ANNOTATION_USERS" in text and words in text
    service.store.close()
