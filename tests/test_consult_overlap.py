"""Overlapping actions of one visitor never interleave: the transcript keeps each answer under its own
question, in order, and the lawyer never answers before the visitor's facts are in.

Reproduces what the review did in the browser: Regenerate, then Ask while the new answer streams (the
answer landed under the next question); Submit while the tree was still growing (the lawyer answered
with no facts); double clicks. First through ``gradio_client`` (one client is one browser session),
then in Debian's Chromium, where the page disables its controls while a step runs and clicks fired in
the same instant are sorted out by the server. The fake lawyer tags each answer with the question it
answered (``[Q2]`` → ``[A2]``), so an answer under the wrong question shows.
"""

from __future__ import annotations

import re
import time

import pytest

from lawluo.ui import consult_tab as tab

from .fakes.firm_models import ROLE_WORDS, FirmResponder
from .fakes.live_app import live_app, require_chromium

pytestmark = pytest.mark.slow  # 36 s of the suite on 2 cores (4 s or more: left out of the inner loop)

QUESTION = "我在公司干了两年一直没签劳动合同，现在老板把我辞退了，我能要求什么赔偿？"


def q(n: int) -> str:
    return f"[Q{n}] {QUESTION}"


OTHER_ANSWERS = (
    "拖欠工资的，可以先向用人单位书面催告，再向劳动保障监察机构投诉，或者申请劳动仲裁，要求支付工资。",
    "解除劳动合同前请保留证据：劳动合同、工资流水、考勤记录和聊天记录，仲裁时效为一年。",
    "仲裁裁决不服的，可以在收到裁决书之日起十五日内向人民法院提起诉讼。",
)


class TaggingResponder(FirmResponder):
    """The firm's scripted models; the lawyer's answer starts with the tag of the question it answers."""

    def __call__(self, body: dict) -> str:
        text = super().__call__(body)
        system = body["messages"][0]["content"].splitlines()[0]
        if any(word in system for word, _ in ROLE_WORDS):
            return text
        asked = re.findall(r"\[Q(\d+)\]", body["messages"][-1]["content"])
        n = asked[-1] if asked else "?"
        # each question its own answer: the same answer twice would be held back as a repeat
        return f"[A{n}] {OTHER_ANSWERS[int(n) % len(OTHER_ANSWERS)] if n.isdigit() and int(n) > 1 else text}"


@pytest.fixture(scope="module")
def app():
    with live_app(responder=TaggingResponder()) as running:
        yield running


def client_for(app):
    from gradio_client import Client

    return Client(app.url, verbose=False, download_files=False, analytics_enabled=False)


def started(job) -> None:
    """Wait until ``job`` (a ``client.submit``) has sent its first view: its step is running."""
    deadline = time.monotonic() + 20
    while not job.outputs():
        assert time.monotonic() < deadline, "the step never started"
        time.sleep(0.01)


def tags(texts: list[str], letter: str) -> list[str]:
    return [m.group(1) if (m := re.search(rf"\[{letter}(\d+|\?)\]", t)) else "-" for t in texts]


def assert_in_order(turns: list[dict], asked: list[int]) -> None:
    """Question, answer, question, answer…: each answer tagged with the question just above it."""
    assert [t["role"] for t in turns] == ["client", "lawyer"] * len(asked)
    assert tags([t["text"] for t in turns[::2]], "Q") == [str(n) for n in asked]
    assert tags([t["text"] for t in turns[1::2]], "A") == [str(n) for n in asked]


def mark_buttons(tree_html: str) -> list[str]:
    return re.findall(r"<button[^>]*data-mark=[^>]*>", tree_html)


# -- through gradio_client ------------------------------------------------------------------------


def test_ask_while_a_regenerated_answer_streams_is_refused_and_the_answers_stay_in_order(app):
    # (新咨询 New is not refused: it stops the answer and starts over, tests/test_consult_cancel.py)
    client = client_for(app)
    client.predict(q(1), False, 3, 3, api_name="/ask")
    app.server.tokens_per_second = 80  # the regenerated answer streams for about two seconds
    try:
        regenerating = client.submit(api_name="/regenerate")
        started(regenerating)
        asked = client.predict(q(2), False, 3, 3, api_name="/ask")
        overlapped = not regenerating.done()
        regenerating.result()
    finally:
        app.server.tokens_per_second = None
    assert overlapped
    assert tab.BUSY_MESSAGE in asked[-1] and asked[0] == q(2)  # refused; the typed question stays
    assert_in_order(client.predict(api_name="/consultation")["turns"], [1])
    client.predict(q(2), False, 3, 3, api_name="/ask")  # once the answer is in, the next question goes
    assert_in_order(client.predict(api_name="/consultation")["turns"], [1, 2])


def test_submit_and_marks_while_the_tree_grows_are_refused_and_the_lawyer_gets_the_facts(app):
    client = client_for(app)
    lawyer_calls = app.responder.calls.get("lawyer", 0)
    app.server.latency = 0.3  # each clarifier call: two levels take over half a second
    try:
        building = client.submit(q(1), True, 3, 2, api_name="/ask")
        started(building)
        answered = client.predict(api_name="/answer")
        marked = client.predict("1", "yes", api_name="/mark")
        overlapped = not building.done()
        grown = building.result()
    finally:
        app.server.latency = 0.0
    assert overlapped and tab.BUSY_MESSAGE in answered[-1] and tab.BUSY_MESSAGE in marked[-1]
    assert app.responder.calls.get("lawyer", 0) == lawyer_calls  # no answer without the facts
    buttons = mark_buttons(grown[4])
    assert buttons and not any("disabled" in b for b in buttons)  # the whole tree is out: mark it now
    tree = client.predict(api_name="/consultation")["tree"]
    assert {n["mark"] for n in tree["nodes"] if n["id"] != "0"} == {"unknown"}  # no mark half-applied

    client.predict("1", "yes", api_name="/mark")
    client.predict(api_name="/answer")
    fact = next(n["statement"] for n in tree["nodes"] if n["id"] == "1")
    assert fact in app.responder.lawyer_requests[-1][-1]["content"]  # the lawyer read the marked fact
    assert_in_order(client.predict(api_name="/consultation")["turns"], [1])


def test_a_double_submit_runs_the_lawyer_once(app):
    client = client_for(app)
    client.predict(q(1), True, 2, 2, api_name="/ask")
    lawyer_calls = app.responder.calls.get("lawyer", 0)
    app.server.tokens_per_second = 80
    try:
        jobs = [client.submit(api_name="/answer") for _ in range(2)]
        messages = [job.result()[-1] for job in jobs]
    finally:
        app.server.tokens_per_second = None
    assert app.responder.calls["lawyer"] - lawyer_calls == 1
    assert sum(tab.BUSY_MESSAGE in m for m in messages) == 1
    assert_in_order(client.predict(api_name="/consultation")["turns"], [1])


def test_marks_after_the_answer_or_the_end_are_refused_and_never_offered(app):
    client = client_for(app)
    client.predict(q(1), True, 2, 2, api_name="/ask")
    answered = client.predict(api_name="/answer")
    assert mark_buttons(answered[3]) and all("disabled" in b for b in mark_buttons(answered[3]))
    late = client.predict("1", "no", api_name="/mark")
    assert "无法标记" in late[-1] and "ask a new question" in late[-1]

    ended = client.predict(api_name="/end_consultation")
    assert all("disabled" in b for b in mark_buttons(ended[6]))
    closed = client.predict("1", "yes", api_name="/mark")
    assert tab.CLOSED_MESSAGE in closed[-1]
    regenerated = client.predict(api_name="/regenerate")
    assert tab.CLOSED_MESSAGE in regenerated[-1]
    consultation = client.predict(api_name="/consultation")
    assert consultation["status"] == "closed" and consultation["tree"]["nodes"][1]["mark"] == "unknown"
    assert_in_order(consultation["turns"], [1])


# -- in the browser -------------------------------------------------------------------------------


@pytest.fixture
def page(app, request):
    require_chromium()
    pytest.importorskip("playwright.sync_api")
    context = request.getfixturevalue("browser").new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.goto(app.url)
    page.wait_for_selector("#ll-question textarea")
    yield page
    context.close()


def transcript(page) -> list[tuple[str, str]]:
    """The chat as the visitor sees it: (``user`` or ``bot``, its text), top to bottom."""
    return page.evaluate(
        """() => [...document.querySelectorAll('#ll-chat [data-testid="user"], #ll-chat [data-testid="bot"]')]
                  .map((e) => [e.dataset.testid, e.innerText])"""
    )


def assert_chat_in_order(page, asked: list[int]) -> None:
    chat = transcript(page)
    assert [who for who, _ in chat] == ["user", "bot"] * len(asked)
    assert tags([text for _, text in chat[::2]], "Q") == [str(n) for n in asked]
    assert tags([text for _, text in chat[1::2]], "A") == [str(n) for n in asked]


def confirmed_facts(lawyer_request: list[dict]) -> str:
    """The facts the client confirmed, as the lawyer's prompt gives them (``（无）`` for none)."""
    return re.search(r"【客户在澄清中确认的事实】\n(.*?)\n\n", lawyer_request[-1]["content"], re.S).group(1)


def settled(page) -> None:
    """Wait until a step of the page has started and then every step has ended (the controls are back)."""
    page.wait_for_function("() => window.__llSteps > 0")
    page.wait_for_function("() => window.__llSteps === 0", timeout=20_000)


def click_together(page, *selectors: str) -> None:
    """Click the buttons in one task of the page, before its script can disable anything."""
    page.evaluate("(ids) => ids.forEach((id) => document.querySelector(id).click())", list(selectors))


CONTROLS = ("#ll-ask", "#ll-submit", "#ll-regenerate", "#ll-end", "#ll-question textarea")


@pytest.fixture
def slow_models(app):
    """Models at a pace a visitor can overlap: 0.3 s per call, answers streamed at 80 tokens/s."""
    app.server.latency, app.server.tokens_per_second = 0.3, 80
    yield
    app.server.latency, app.server.tokens_per_second = 0.0, None


@pytest.mark.browser
def test_in_the_browser_a_running_step_disables_every_control_until_it_is_done(page, app, slow_models):
    page.fill("#ll-question textarea", q(1))
    # What the controls are when the tree's first level is drawn (recorded in the page, so a loaded
    # machine that draws the whole tree before the test looks cannot hide it)
    page.evaluate(
        """(controls) => {
        const tree = document.querySelector('#ll-tree');
        const observer = new MutationObserver(() => {
          if (!tree.querySelector('.ll-node')) return;
          observer.disconnect();
          window.__llAtFirstLevel = {
            disabled: controls.map((c) => document.querySelector(c).disabled),
            marks: tree.querySelectorAll('button[data-mark]:not([disabled])').length,
          };
        });
        observer.observe(tree, {subtree: true, childList: true});
      }""",
        list(CONTROLS),
    )
    page.click("#ll-ask")
    page.wait_for_function("() => window.__llAtFirstLevel !== undefined")
    first_level = page.evaluate("window.__llAtFirstLevel")
    assert all(first_level["disabled"]) and first_level["marks"] == 0
    page.wait_for_selector('#ll-tree [data-complete="true"]')
    page.click('#ll-tree button[data-node="1"][data-mark="yes"]')  # waits until the tree takes marks
    page.wait_for_selector('#ll-tree .ll-node[data-node="1"][data-mark="yes"]')
    before = len(app.responder.lawyer_requests)
    page.click("#ll-submit")
    page.wait_for_selector("#ll-citations .ll-badge.ok")
    assert "要素" in confirmed_facts(app.responder.lawyer_requests[before])

    page.click("#ll-regenerate")
    page.wait_for_function("document.querySelector('#ll-message').innerText.includes('律师正在回答')")
    assert all(page.is_disabled(c) for c in CONTROLS)  # no Ask while the new answer streams
    assert not page.is_disabled("#ll-new")  # 新咨询 stays: it stops the answer (test_consult_cancel.py)
    page.wait_for_selector("#ll-ask:not([disabled])", timeout=20_000)
    assert "律师正在回答" not in page.inner_text("#ll-message")
    assert page.locator("#ll-tree button[data-mark]:not([disabled])").count() == 0  # answered: no marks

    page.fill("#ll-question textarea", q(2))
    page.click("#ll-ask")
    page.wait_for_selector('#ll-tree [data-complete="true"]')
    page.click("#ll-submit")
    page.wait_for_selector("#ll-ask:not([disabled])", timeout=20_000)
    page.wait_for_function("() => window.__llSteps === 0")
    assert_chat_in_order(page, [1, 2])


@pytest.mark.browser
def test_in_the_browser_clicks_fired_in_the_same_instant_never_interleave(page, app, slow_models):
    lawyer_calls = app.responder.calls.get("lawyer", 0)
    page.fill("#ll-question textarea", q(1))
    click_together(page, "#ll-ask", "#ll-submit")  # the lawyer must wait for the tree and the facts
    settled(page)
    assert app.responder.calls.get("lawyer", 0) == lawyer_calls
    assert page.locator('#ll-tree [data-complete="true"]').count() == 1
    page.click('#ll-tree button[data-node="1"][data-mark="yes"]')
    page.wait_for_selector('#ll-tree .ll-node[data-node="1"][data-mark="yes"]')
    page.click("#ll-submit")
    settled(page)
    assert "要素" in confirmed_facts(app.responder.lawyer_requests[-1])

    page.click("#ll-use-tolc-accordion")
    page.uncheck("#ll-use-tolc input")
    page.fill("#ll-question textarea", q(2))
    click_together(page, "#ll-regenerate", "#ll-ask")  # one of them runs, the other is refused
    settled(page)
    left = page.input_value("#ll-question textarea")
    assert left in (q(2), "")
    assert_chat_in_order(page, [1] if left else [1, 2])  # a refused question waits in its box
