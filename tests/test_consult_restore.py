"""A visitor loses nothing and reads a clear message: the copy of the consultation a browser keeps brings it
back after a reload (checked whole like an uploaded file, never trusted), a closed consultation takes no
marks or domain changes, a bad upload or an unexpected error is explained in Chinese and English without a
server path, and a streamed answer only ever adds text at the end of the chat. The handlers are called as
plain functions; ``test_consult_visitor_browser.py`` clicks through the same in Chromium."""

from __future__ import annotations

import json
from itertools import pairwise

import gradio as gr
import pytest
from gradio.utils import diff

from lawluo.config import load_settings
from lawluo.firm import Firm
from lawluo.llm import LanguageModels
from lawluo.ui import consult_tab as tab
from lawluo.ui.visitors import Visit

from .fakes.live_app import model_environ

QUESTION = "我在公司干了两年一直没签劳动合同，现在老板把我辞退了，我能要求什么赔偿？"
ALICE = Visit(session="s-alice", owner="alice")
BOB = Visit(session="s-bob", owner="bob")


def make_firm(firm_services, server=None) -> Firm:
    settings = load_settings(environ=model_environ(server) if server else {})
    return Firm.from_settings(settings, models=LanguageModels(settings.models), **firm_services)


@pytest.fixture(scope="module")
def firm(firm_services):
    return make_firm(firm_services)


def asked(firm: Firm, visit: Visit = ALICE):
    return list(tab.ask(firm, None, QUESTION, True, 2, 2, visit=visit))[-1].state


# -- the browser's copy (gr.BrowserState) ---------------------------------------------------------


def test_a_reloaded_page_gets_the_consultation_its_browser_kept(firm):
    state = asked(firm)
    tab.mark(firm, state, "1", "yes", ALICE)
    kept = tab.remembered(state, ALICE)
    assert json.loads(kept)["id"] == state.id and "owner" not in json.loads(kept)

    page = tab.restore_consultation(firm, None, kept, ALICE)  # a reload: a new session, the same browser
    assert page.state.to_dict() == state.to_dict() and page.state.owner == "alice"
    assert tab.RESTORED_MESSAGE in page.message and 'class="ll-node yes" data-node="1"' in page.tree
    assert page.stored is tab.KEEP  # the copy stays as it was


def test_the_copy_is_never_another_browsers_and_new_leaves_nothing(firm):
    state = asked(firm)
    assert tab.remembered(state, BOB) == tab.NOTHING_STORED  # a request without the owner's cookie
    assert tab.remembered(None, ALICE) == tab.NOTHING_STORED != ""  # Gradio would not write an empty value
    assert tab.new_consultation(firm, None, ALICE, state).state is None


def test_a_page_that_has_a_consultation_or_a_browser_that_kept_none_is_left_alone(firm):
    state = asked(firm)
    for current, kept in ((state, tab.remembered(state, ALICE)), (None, ""), (None, tab.NOTHING_STORED)):
        page = tab.restore_consultation(firm, current, kept, ALICE)
        assert all(value is tab.KEEP for value in vars(page).values())


def tampered(firm) -> dict[str, object]:
    data = json.loads(tab.remembered(asked(firm), ALICE))
    unknown_domain = {**data, "domain": "maritime_salvage"}
    extra_field = {**data, "script": "<img src=x onerror=alert(1)>"}
    return {
        "an unknown domain": (json.dumps(unknown_domain), "业务领域不在本站的领域表中"),
        "an unknown field": (json.dumps(extra_field), "文件内容不符合咨询记录的格式"),
        "not JSON": ("{not json", "不是有效的 JSON"),
        "binary": ("\x00\x01\x02", "这不是文本文件"),
        "too big": (" " * (tab.MAX_SAVED_BYTES + 1), "文件有 2,000,001 字节"),
        "not a string": ({"id": "x"}, "这不是文本文件"),
    }


@pytest.mark.parametrize(
    "case", ["an unknown domain", "an unknown field", "not JSON", "binary", "too big", "not a string"]
)
def test_a_tampered_copy_is_refused_deleted_and_explained(firm, case):
    kept, expected = tampered(firm)[case]
    page = tab.restore_consultation(firm, None, kept, ALICE)
    assert page.state is None and page.stored == tab.NOTHING_STORED  # the page starts empty, the copy goes
    assert tab.STORED_REFUSED in page.message and expected in page.message
    assert "<img" not in page.message  # what the copy held is shown escaped, if at all


# -- a closed consultation ------------------------------------------------------------------------


def test_a_closed_consultation_takes_no_mark_and_no_domain_and_says_so(firm):
    state = asked(firm)
    ended = tab.end(firm, state, visit=ALICE)
    assert state.status == "closed" and ended.domain["interactive"] is False
    assert ended.domain["elem_classes"] == ["ll-off"]  # UNLOCK_JS leaves it disabled
    assert " disabled " in ended.tree and 'data-mark="yes" aria-pressed' in ended.tree
    marked = tab.mark(firm, state, "1", "no", ALICE)
    moved = list(tab.set_domain(firm, state, "contract", ALICE))[-1]
    assert tab.CLOSED_MESSAGE in marked.message and tab.CLOSED_MESSAGE in moved.message
    assert state.domain == "labor" and state.tree.node("1").mark != "no"
    restored = tab.restore_consultation(firm, None, tab.remembered(state, ALICE), ALICE)
    assert restored.domain["interactive"] is False and "法律分析" in restored.report
    assert tab.RESTORED_CLOSED in restored.message
    assert tab.new_consultation(firm, None, ALICE, state).domain["interactive"] is True


# -- bad uploads and unexpected errors ------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (bytes(range(256)) * 8, tab.NOT_TEXT_MESSAGE),
        (b'{"version": 1, "id": "0123456789ab", "created": "x", "status": "new", "domain": "x"}', "业务领域"),
        (b" " * (tab.MAX_SAVED_BYTES + 1), "保存的咨询最多 2,000,000 字节"),
    ],
    ids=["binary", "unknown domain", "too big"],
)
def test_a_bad_upload_is_explained_in_both_languages_without_a_path(firm, tmp_path, content, expected):
    state = asked(firm)
    upload = tmp_path / "deep" / "folder" / "upload.json"
    upload.parent.mkdir(parents=True)
    upload.write_bytes(content)
    page = tab.resume_consultation(firm, state, str(upload), ALICE)
    assert page.state is state and expected in page.message and tab.RESUME_REFUSED in page.message
    assert str(tmp_path) not in page.message and "codec" not in page.message


def test_an_unexpected_error_shows_no_server_path(firm, tmp_path, caplog):
    secret = tmp_path / "private" / "sessions" / "abc.json"
    try:
        secret.read_text()
    except OSError as exc:
        page = tab.failed_view(firm, None, exc)
    # the visitor reads one plain sentence; the error, path and all, is for the operator's log
    assert tab.FAILED_MESSAGE in page.message and "FileNotFoundError" not in page.message
    assert str(tmp_path) not in page.message and "/private/sessions" not in page.message
    assert "FileNotFoundError" in caplog.text


# -- streaming ------------------------------------------------------------------------------------


def test_each_streamed_update_only_appends_to_the_last_message(firm_services, firm_server):
    """What Gradio sends the browser per update is its diff of the chat values: only ``append`` edits of
    the last message's text (no cursor mark that moves, no earlier message sent again)."""
    firm = make_firm(firm_services, firm_server)
    firm_server.tokens_per_second = 80
    try:
        views = list(tab.ask(firm, None, QUESTION, False, 3, 3))
    finally:
        firm_server.tokens_per_second = None
    chats = [v.chat for v in views if v.message is tab.KEEP]
    assert len(chats) >= 3
    chatbot = gr.Chatbot()
    values = [chatbot.postprocess(chat).model_dump() for chat in chats]
    edits = [edit for old, new in pairwise(values) for edit in diff(old, new)]
    assert edits and {edit[0] for edit in edits} == {"append"}
    assert all(edit[1][:1] == [len(chats[0]) - 1] for edit in edits)  # …of the last message only
