"""The app stops the model work of a visitor nobody waits for (issue 21, item 2).

A visitor whose page leaves, or who starts over with 新咨询 while an answer streams, must not keep the
model server generating: the server (the fake, which like llama.cpp stops on a closed connection and
counts the requests it ``finished`` and ``abandoned``) finishes no further request of that session, the
consultation stays consistent, and another visitor's step goes on. A second step that is refused does not
stop the first. First the handlers called directly (one thread iterating a handler, as Gradio does), then
over HTTP with ``gradio_client``.
"""

from __future__ import annotations

import threading
import time
from types import SimpleNamespace

import pytest

from lawluo.config import load_settings
from lawluo.firm import Firm
from lawluo.llm import LanguageModels
from lawluo.ui import consult_tab as tab
from lawluo.ui.visitors import Visit, VisitorLimits, Visitors

from .fakes.firm_models import LAWYER_ANSWER, FirmResponder
from .fakes.live_app import live_app, model_environ, require_chromium
from .fakes.openai_server import FakeOpenAIServer, Reply

pytestmark = pytest.mark.slow  # 32 s of the suite on 2 cores (4 s or more: left out of the inner loop)

QUESTION = "我在公司干了两年一直没签劳动合同，现在老板把我辞退了，我能要求什么赔偿？"
OTHER_QUESTION = "公司拖欠了我三个月工资，我该怎么办？"
LONG_ANSWER = LAWYER_ANSWER * 6  # ~900 tokens: at 40 tokens/s, over 20 s, never done within a test


def make_firm(firm_services, server) -> Firm:
    settings = load_settings(environ=model_environ(server))
    return Firm.from_settings(settings, models=LanguageModels(settings.models), **firm_services)


def until(condition, what: str, seconds: float = 30.0) -> None:
    """Wait for ``condition()`` (polled); fail naming ``what`` if it never holds."""
    end = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < end, f"never happened: {what}"
        time.sleep(0.01)


def asked(server: FakeOpenAIServer, question: str) -> list[dict]:
    """The requests whose last message carries ``question`` (one visitor's, when each asks another)."""
    return [r for r in server.requests if question in r["messages"][-1]["content"]]


def streaming(server: FakeOpenAIServer, n: int = 1) -> bool:
    """Whether ``n`` streamed answers have sent their first piece."""
    log = server.stream_log
    return len(log) >= n and all(entry["chunks"] > 0 for entry in log[:n])


class Page:
    """A handler iterated on its own thread, as Gradio does; ``views`` are what it sent."""

    def __init__(self, handler) -> None:
        self.views: list[tab.ConsultView] = []
        self.thread = threading.Thread(target=lambda: self.views.extend(v for v in handler), daemon=True)
        self.thread.start()

    def done(self, seconds: float = 30.0) -> list[tab.ConsultView]:
        self.thread.join(seconds)
        assert not self.thread.is_alive(), "the handler never ended"
        return self.views


# -- the handlers -----------------------------------------------------------------------------------


def test_a_visitor_who_leaves_stops_their_answer_and_another_visitors_answer_goes_on(firm_services):
    with FakeOpenAIServer(tokens_per_second=40) as server:
        server.responder = FirmResponder()
        server.script(Reply(LONG_ANSWER))  # the first request: the leaving visitor's answer
        firm = make_firm(firm_services, server)
        visitors = Visitors()
        gone, staying = Visit("s-gone", "10.0.0.1"), Visit("s-staying", "10.0.0.2")
        leaving = Page(tab.ask(firm, None, QUESTION, False, 3, 3, visitors, gone))
        until(lambda: streaming(server), "the first answer streams")
        other = Page(tab.ask(firm, None, OTHER_QUESTION, False, 3, 3, visitors, staying))
        until(lambda: streaming(server, 2), "the second answer streams")

        tab.leave_later(visitors, SimpleNamespace(session_hash="s-gone"))  # what demo.unload calls
        views = leaving.done()
        until(lambda: server.abandoned == 1, "the server saw the first answer's connection close")
        others = other.done()
        assert len(asked(server, QUESTION)) == 1  # nothing more was asked for the visitor who left
        assert server.wait_idle() and server.finished == len(server.requests) - 1  # the rest answered whole

    state = views[-1].state
    turn = state.turns[-1]
    assert turn.role == "lawyer" and state.status == "answered"
    assert turn.text and LONG_ANSWER.startswith(turn.text) and len(turn.text) < len(LONG_ANSWER) // 2
    assert tab.PAGE_LEFT in turn.note  # kept, and labelled as stopped
    assert "出错了" not in views[-1].message and not visitors.busy("s-gone")
    kept = others[-1].state.turns[-1]
    assert kept.text == LAWYER_ANSWER and not kept.note  # the other visitor got the whole answer


def test_new_consultation_while_an_answer_streams_stops_it_and_the_next_question_works(firm_services):
    with FakeOpenAIServer(tokens_per_second=40) as server:
        server.responder = FirmResponder()
        server.script(Reply(LONG_ANSWER))
        firm = make_firm(firm_services, server)
        visitors, visit = Visitors(), Visit("s1", "10.0.0.1")
        page = Page(tab.ask(firm, None, QUESTION, False, 3, 3, visitors, visit))
        until(lambda: streaming(server) and len(page.views) > 2, "the answer streams on the page")
        shown = page.views[-1].state

        restarted = tab.new_consultation(firm, visitors, visit, shown)
        stopped_first = not visitors.busy("s1")  # New returned once the step had let go of the session
        views = page.done()
        until(lambda: server.abandoned == 1, "the server saw the connection close")
        assert server.finished == 0 and len(server.requests) == 1

        server.tokens_per_second = None
        again = list(tab.ask(firm, restarted.state, OTHER_QUESTION, False, 3, 3, visitors, visit))

    assert restarted.state is None and restarted.question == "" and restarted.chat == []
    assert stopped_first
    assert views[-1] == tab.ConsultView()  # the stopped step changed nothing after New: no state, no chat
    answer = again[-1].state.turns
    assert [t.role for t in answer] == ["client", "lawyer"] and answer[-1].text == LAWYER_ANSWER


def test_a_refused_second_step_does_not_stop_the_first(firm_services):
    with FakeOpenAIServer(tokens_per_second=40) as server:
        server.responder = FirmResponder()
        firm = make_firm(firm_services, server)
        visitors, visit = Visitors(), Visit("s1", "10.0.0.1")
        page = Page(tab.ask(firm, None, QUESTION, False, 3, 3, visitors, visit))
        until(lambda: streaming(server) and len(page.views) > 2, "the answer streams on the page")
        state = page.views[-1].state
        refused = [
            tab.end(firm, state, visitors, visit),
            list(tab.regenerate(firm, state, visitors, visit))[-1],
            list(tab.ask(firm, state, OTHER_QUESTION, True, 3, 3, visitors, visit))[-1],
        ]
        views = page.done()
    assert all(tab.BUSY_MESSAGE in v.message for v in refused)
    assert views[-1].state.turns[-1].text == LAWYER_ANSWER and server.abandoned == 0


def test_a_step_is_cancelled_once_its_time_budget_ran_out():
    visitors = Visitors(VisitorLimits(step_budget_s=0.1))
    with visitors.step(Visit("s1"), "answer") as step:
        assert step.token.wait(10)  # cancelled, a little after the budget (see BUDGET_GRACE_S)
    visitors.ended(Visit("s1"), step)
    assert "时间预算（0.1 秒）" in step.token.reason  # the Chinese text of consult.stop.budget


def test_a_visitor_who_leaves_while_the_tree_grows_stops_the_clarifier_calls(firm_services):
    """Waits for helper A's change (issue 21 item 2: structured calls stream, so a cancelled one closes
    its connection); until then the clarifier's JSON comes in one piece and cannot be stopped."""
    elements = ", ".join(
        f'{{"statement": "要素{i}：劳动者是否已经连续工作满一年？", "case_ids": []}}' for i in range(6)
    )
    with FakeOpenAIServer(tokens_per_second=10) as server:
        server.responder = FirmResponder(clarifier_reply=f'{{"elements": [{elements}]}}')  # ~15 s each
        firm = make_firm(firm_services, server)
        visitors, visit = Visitors(), Visit("s1", "10.0.0.1")
        page = Page(tab.ask(firm, None, QUESTION, True, 2, 3, visitors, visit))
        until(
            lambda: streaming(server) or not page.thread.is_alive(),
            "the clarifier streams, or the tree is done",
        )
        assert streaming(server), "the clarifier's JSON was not streamed, so its call could not be stopped"
        tab.leave_later(visitors, SimpleNamespace(session_hash="s1"))
        views = page.done()
        until(lambda: server.abandoned == 1, "the server saw the clarifier's connection close")
        assert server.finished == 0 and len(server.requests) == 1
    state = views[-1].state
    assert state.tree.complete and state.tree.elements  # from similar cases instead, and it says so
    assert state.status == "clarifying" and "出错了" not in views[-1].message


# -- over HTTP --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def app():
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GRADIO_HEARTBEAT_INTERVAL", "0.25")  # a departed client is noticed at once
        with live_app(tokens_per_second=40) as running:
            yield running


def client_for(app):
    from gradio_client import Client

    return Client(app.url, verbose=False, download_files=False, analytics_enabled=False)


def test_over_http_a_client_that_leaves_stops_its_answer_and_another_goes_on(app):
    server = app.server
    abandoned, requests = server.abandoned, len(server.requests)
    logged = len(server.stream_log)
    server.script(Reply(LONG_ANSWER))
    leaving, staying = client_for(app), client_for(app)
    job = leaving.submit(QUESTION, False, 3, 3, api_name="/ask")
    until(
        lambda: len(server.stream_log) > logged and server.stream_log[logged]["chunks"], "the answer streams"
    )
    other = staying.submit(OTHER_QUESTION, False, 3, 3, api_name="/ask")
    until(lambda: len(server.stream_log) > logged + 1, "the other answer starts")
    leaving.close()  # its heartbeat stops: Gradio calls unload, as for a closed tab
    until(lambda: server.abandoned == abandoned + 1, "the server saw the connection close")
    other.result()
    job.result()  # the handler ended too (its last view, the note, went to nobody)
    mine = [r for r in server.requests[requests:] if QUESTION in r["messages"][-1]["content"]]
    assert len(mine) == 1 and server.abandoned == abandoned + 1
    turns = staying.predict(api_name="/consultation")["turns"]
    assert turns[-1]["role"] == "lawyer" and turns[-1]["text"] == LAWYER_ANSWER


def test_over_http_new_consultation_stops_the_streaming_answer_and_the_client_asks_again(app):
    server = app.server
    abandoned, finished, logged = server.abandoned, server.finished, len(server.stream_log)
    server.script(Reply(LONG_ANSWER))
    client = client_for(app)
    job = client.submit(QUESTION, False, 3, 3, api_name="/ask")
    until(
        lambda: len(server.stream_log) > logged and server.stream_log[logged]["chunks"], "the answer streams"
    )
    restarted = client.predict(api_name="/new_consultation")
    until(lambda: server.abandoned == abandoned + 1, "the server saw the connection close")
    job.result()
    assert server.finished == finished  # nothing more was generated for the stopped answer
    assert restarted[0] == "" and restarted[4] == [] and client.predict(api_name="/consultation") == {}
    client.predict(OTHER_QUESTION, False, 3, 3, api_name="/ask")
    turns = client.predict(api_name="/consultation")["turns"]
    assert [t["role"] for t in turns] == ["client", "lawyer"] and turns[1]["text"] == LAWYER_ANSWER
    client.close()


# -- in the browser ---------------------------------------------------------------------------------


@pytest.fixture
def page(app, request):
    require_chromium()
    pytest.importorskip("playwright.sync_api")
    context = request.getfixturevalue("browser").new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.on("dialog", lambda dialog: dialog.accept())  # 新咨询 asks before it clears
    page.goto(app.url)
    page.wait_for_selector("#ll-question textarea")
    yield page
    context.close()


def chat(page) -> list[str]:
    return page.evaluate(
        """() => [...document.querySelectorAll('#ll-chat [data-testid="user"], #ll-chat [data-testid="bot"]')]
                  .map((e) => e.innerText)"""
    )


@pytest.mark.browser
def test_in_the_browser_new_stops_a_streaming_answer_and_the_page_starts_over(page, app):
    server = app.server
    abandoned, logged = server.abandoned, len(server.stream_log)
    server.script(Reply(LONG_ANSWER))
    page.click("#ll-use-tolc-accordion")
    page.uncheck("#ll-use-tolc input")
    page.fill("#ll-question textarea", QUESTION)
    page.click("#ll-ask")
    until(
        lambda: len(server.stream_log) > logged and server.stream_log[logged]["chunks"], "the answer streams"
    )
    page.wait_for_function("document.querySelector('#ll-message').innerText.includes('律师正在回答')")
    assert page.is_disabled("#ll-ask") and not page.is_disabled("#ll-new")

    page.click("#ll-new")
    until(lambda: server.abandoned == abandoned + 1, "the server saw the connection close")
    page.wait_for_selector("#ll-ask:not([disabled])", timeout=20_000)
    page.wait_for_function("() => window.__llSteps === 0")
    assert chat(page) == [] and "律师正在回答" not in page.inner_text("#ll-message")

    page.fill("#ll-question textarea", OTHER_QUESTION)
    page.click("#ll-ask")
    page.wait_for_selector("#ll-citations .ll-badge.ok", timeout=30_000)
    page.wait_for_function("() => window.__llSteps === 0")
    shown = chat(page)
    assert len(shown) == 2 and OTHER_QUESTION in shown[0] and "二倍的工资" in shown[1]
