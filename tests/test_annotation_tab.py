"""The annotation and statistics tabs through their HTTP API (gradio_client), signed in with Gradio's login.

The app runs on loopback with three users — an admin and two annotators — and the demo items; each
test reads the store directly to check what the page claimed.
"""

from __future__ import annotations

import csv
import io
import json

import pytest

from eval_ui import annotate_tab

from .fakes.live_app import annotation_app

USERS = "root:rootpw:admin,alice:alicepw,bob:bobpw"
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


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
    names = [n for n in annotate_tab.VIEW_FIELDS if n not in ("state", "admin")]  # not API outputs
    return dict(zip(names, out, strict=True))


def test_nobody_gets_in_without_a_password(app):
    from gradio_client import Client

    with pytest.raises(Exception):  # noqa: B017 - gradio_client raises a plain error on 401
        Client(app.url, verbose=False, download_files=False)
    with pytest.raises(Exception):  # noqa: B017
        Client(app.url, auth=("alice", "wrong"), verbose=False, download_files=False)


def test_an_annotator_labels_an_item_and_the_store_has_it_unswapped(app):
    alice = client(app, "alice", "alicepw")
    view = fields(alice.predict(api_name="/annotation_open"))
    assert "**alice**" in view["status"] and "0 / 60" in view["status"]
    left_choices = [c[0] for c in view["left_hall"]["choices"]]
    item_id = None
    ticked = left_choices[:1]
    out = fields(alice.predict(ticked, [], 8, 6, None, 3, "ok", api_name="/label_left"))
    assert "已保存 Saved" in out["message"] and "1 / 60" in out["status"]
    (item_id,) = app.store.done_items("alice")
    a = app.store.assignment("alice", item_id)
    label = app.store.label("alice", item_id)
    assert label["verdict"] == ("B" if a.swapped else "A")  # "left" un-swapped
    shown_left = "b" if a.swapped else "a"
    mine = label["answer_labels"][shown_left]
    assert mine["rel"] == 8 and mine["tlc"] == 6
    assert [k for k, v in mine["statutes"].items() if v] == ticked
    assert set(mine["statutes"]) == set(left_choices)  # every cited statute labelled, the rest False
    other = label["answer_labels"]["a" if shown_left == "b" else "b"]
    assert other["rel"] is None and other["tlc"] == 3
    assert label["comment"] == "ok" and label["guideline_version"] == "1"


def test_going_back_edits_the_label_and_keeps_the_old_version(app):
    bob = client(app, "bob", "bobpw")
    first = fields(bob.predict(api_name="/annotation_open"))
    bob.predict([], [], 5, 5, 5, 5, "", api_name="/label_tie")
    (item_id,) = app.store.done_items("bob")
    back = fields(bob.predict(api_name="/annotation_back"))
    assert back["question"] == first["question"].replace("第 1 / 60 条 · ", "")
    assert "Editing your label (version 1" in back["message"] and back["left_rel"] == 5
    saved = fields(bob.predict([], [], 9, 5, 2, 5, "changed", api_name="/label_right"))
    assert "version 2" in saved["message"]
    assert app.store.label("bob", item_id)["comment"] == "changed"
    assert [h["comment"] for h in app.store.history("bob", item_id)] == [""]
    assert app.store.progress("bob") == (1, 60)  # an edit is not a new item


def test_bad_input_is_refused_with_a_message_and_nothing_is_saved(app):
    alice = client(app, "alice", "alicepw")
    alice.predict(api_name="/annotation_open")
    before = app.store.progress("alice")
    # a score outside 0–10: refused (by the component or the handler), the item stays open
    with pytest.raises(Exception):  # noqa: B017
        alice.predict([], [], 11, None, None, None, "", api_name="/label_left")
    out = fields(alice.predict([], [], None, None, None, None, "x" * 5000, api_name="/label_both_bad"))
    assert "Not saved" in out["message"] and "2000" in out["message"]
    with pytest.raises(Exception, match="not in the list of choices"):  # a statute this answer does not cite
        alice.predict(["《刑法》第999条"], [], None, None, None, None, "", api_name="/label_left")
    assert app.store.progress("alice") == before
    out = fields(alice.predict([], [], None, None, None, None, "", api_name="/label_left"))
    assert "Saved" in out["message"] and app.store.progress("alice")[0] == before[0] + 1


def test_hostile_html_in_an_imported_answer_is_shown_as_text(app, tmp_path):
    root = client(app, "root", "rootpw")
    from gradio_client import handle_file

    evil = '<script>window.__pwned=1</script><img src=x onerror="alert(1)">答案'
    row = {"id": "evil-1", "question": "<b>问题</b>", "answer_a": evil, "answer_b": "普通回答",
           "system_a": "x", "system_b": "y"}  # fmt: skip
    path = tmp_path / "evil.jsonl"
    path.write_text(json.dumps(row, ensure_ascii=False) + "\n", encoding="utf-8")
    message, _ = root.predict(handle_file(str(path)), api_name="/import_items")
    assert "Imported 1 items" in message
    item = app.store.assignment("alice", "evil-1")
    html = annotate_tab._text_block("左 Left", item.left)
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
    monkeypatch.setattr(annotate_tab, "MAX_IMPORT_BYTES", 50)
    message, _ = root.predict(handle_file(str(bad)), api_name="/import_items")
    assert "the limit is" in message
    assert app.store.item_count() == count


def test_only_admins_reach_import_export_and_statistics(app, tmp_path):
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
    message, file = bob.predict("csv", False, api_name="/export_labels")
    assert "Only an admin" in message and file is None
    html, charts, data = bob.predict(api_name="/statistics")
    assert "Only an admin" in html and not charts and not data
    message, table = bob.predict(api_name="/annotators")
    assert "Only an admin" in message and not table["data"]


def test_the_admin_export_matches_the_store(app):
    root = client(app, "root", "rootpw")
    message, file = root.predict("csv", False, api_name="/export_labels")
    assert "Exported" in message
    from pathlib import Path

    path = Path(file["path"] if isinstance(file, dict) else file)
    rows = list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8-sig"))))
    frame = app.store.labels_frame()
    assert len(rows) == len(frame) >= 2
    assert {(r["annotator"], r["item_id"], r["verdict"]) for r in rows} == set(
        zip(frame["annotator"], frame["item_id"], frame["verdict"], strict=True)
    )


def test_statistics_for_the_admin_name_what_they_could_not_compute(app):
    root = client(app, "root", "rootpw")
    html, charts, data = root.predict(api_name="/statistics")
    assert "Win / tie / loss" in html and "Inter-annotator agreement" in html
    assert "No automatic Rel / T_LC" in html and "nan" not in html.lower()
    assert len(charts) == 2
    assert data["n_labels"] == len(app.store.labels_frame())
    titles = [s["title"] for s in data["sections"]]
    assert any("Bradley" in t for t in titles) and any("NHSR" in t for t in titles)
