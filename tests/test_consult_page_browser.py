"""The consultation page as a visitor sees it (issue 42, items 1, 2, 4 and 5), in Debian's Chromium on a desktop
(1366×768) and a phone (390×844): what the visitor waits for is in view (the tree after 提问, the answer as it
streams after 提交), a slow step says what is running and for how long, the extract without a model shows no
off-topic statute and says so plainly when none fits, and nothing a visitor reads outside 高级 / Advanced is
a developer's word (H/K, ToLC, NHSR, verdict codes, environment variables, English error types).

Screenshots go to ``tests/artifacts/screenshots/<test>/`` (not committed).
"""

from __future__ import annotations

import re

import pytest

from lawluo.agents.lawyer import REPLY_NO_STATUTES

from .fakes.live_app import live_app, require_chromium
from .test_consult_visitor_browser import BOT, DESKTOP, PHONE, QUESTION, SHOTS, answered, idle, open_page

pytestmark = pytest.mark.browser  # every test here drives Chromium

require_chromium()
pytest.importorskip("playwright.sync_api")

VIEWPORTS = pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
LEAK = "楼上邻居家水管漏水，把我家天花板泡坏了，他不肯赔"
#: What a visitor must not read outside 高级 / Advanced (the statistics tab is not on this page).
JARGON = re.compile(
    r"\bH=|\bK=|ToLC|NHSR|BudgetExceeded|LAWLUO_|OPENAI_|\b(?:verified|wrong_number|no_content)\b"
)


@pytest.fixture(scope="module")
def app():
    with live_app(latency=0.05, tokens_per_second=60) as running:
        yield running


@pytest.fixture(scope="module")
def slow_app():
    with live_app(latency=3.0) as running:
        yield running


@pytest.fixture(scope="module")
def plain_app():
    with live_app(model=False) as running:
        yield running


def seen(page, name: str, label: str) -> None:
    """What the visitor sees: the viewport, not the whole page (a full-page screenshot scrolls the page)."""
    page.screenshot(path=str(SHOTS / name / f"{label}.png"))


def answered_without_marks(browser, app, viewport, label: str, question: str):
    """A fresh page on ``app`` that asked ``question``, submitted the tree unmarked and got the answer."""
    context, page = open_page(
        browser, app.url, f"{label}-{'phone' if viewport is PHONE else 'desktop'}", viewport
    )
    page.fill("#ll-question textarea", question)
    page.click("#ll-ask")
    page.wait_for_selector('#ll-tree [data-complete="true"]')
    idle(page)
    page.click("#ll-submit")
    answered(page, 1)
    return context, page


def in_view(page, selector: str) -> bool:
    """Whether the element's top is inside the viewport (its first line can be read without scrolling)."""
    return page.evaluate(
        "(s) => { const r = document.querySelector(s).getBoundingClientRect();"
        " return r.top >= -1 && r.top < window.innerHeight && r.bottom > 0; }",
        selector,
    )


def tree_shown(browser, app, name: str, viewport):
    """A fresh page on ``app`` that asked :data:`QUESTION` and shows its complete tree."""
    context, page = open_page(browser, app.url, name, viewport)
    page.fill("#ll-question textarea", QUESTION)
    page.click("#ll-ask")
    page.wait_for_selector('#ll-tree [data-complete="true"]')
    return context, page


def answer_followed(page, name: str) -> None:
    """Once 提交 was clicked: the chat, where the answer streams, is in view as it begins and once it is done."""
    page.wait_for_selector(BOT)  # streaming has begun
    assert in_view(page, "#ll-chat")
    page.wait_for_timeout(700)  # past 提问's delayed second scroll to the tree
    assert in_view(page, "#ll-chat")
    answered(page, 1)
    assert in_view(page, "#ll-chat")
    seen(page, name, "answered")


@VIEWPORTS
def test_after_ask_the_tree_is_in_view_and_after_submit_the_streaming_answer_is(browser, app, viewport):
    name = f"follow-{'phone' if viewport is PHONE else 'desktop'}"
    context, page = tree_shown(browser, app, name, viewport)
    idle(page)
    page.wait_for_timeout(400)
    # the page scrolls once the step is done, and again after late redraws
    assert in_view(page, "#ll-tree-title") and in_view(page, "#ll-tree button[data-mark]")
    seen(page, name, "tree-in-view")
    page.click("#ll-tree button[data-mark='yes']")
    idle(page)
    page.click("#ll-submit")
    answer_followed(page, name)
    context.close()


@VIEWPORTS
def test_a_submit_tapped_as_soon_as_the_tree_appears_still_ends_on_the_answer(browser, app, viewport):
    """提问's second, delayed scroll to the tree (after late redraws) must not undo a 提交 that started meanwhile."""
    name = f"fast-submit-{'phone' if viewport is PHONE else 'desktop'}"
    context, page = tree_shown(browser, app, name, viewport)
    page.wait_for_selector("#ll-submit:not([disabled])")
    # at once: a script's click, without Playwright's actionability checks and their scroll
    page.evaluate("document.querySelector('#ll-submit').click()")
    answer_followed(page, name)
    context.close()


@VIEWPORTS
def test_a_slow_step_says_what_runs_and_for_how_long(browser, slow_app, viewport):
    name = f"progress-{'phone' if viewport is PHONE else 'desktop'}"
    context, page = open_page(browser, slow_app.url, name, viewport)
    page.fill("#ll-question textarea", QUESTION)
    page.click("#ll-ask")
    page.wait_for_function("() => document.querySelector('#ll-message').innerText.includes('正在生成澄清树')")
    page.wait_for_function("() => /已用 [1-9]\\d* 秒/.test(document.querySelector('#ll-message').innerText)")
    page.shot("elapsed")
    page.wait_for_selector('#ll-tree [data-complete="true"]', timeout=120_000)
    idle(page)
    assert "已用" not in page.inner_text("#ll-message")  # the clock stops with the step
    context.close()


@VIEWPORTS
def test_the_extract_without_a_model_shows_no_off_topic_statute_and_no_developer_words(
    browser, plain_app, viewport
):
    context, page = answered_without_marks(browser, plain_app, viewport, "plain-words", LEAK)
    page.shot("answered")
    chat = page.inner_text("#ll-chat")
    assert REPLY_NO_STATUTES in chat and "刑事诉讼法" not in chat and "核实无误" not in chat
    visible = page.inner_text("#ll-main")
    assert not JARGON.search(visible), JARGON.search(visible)
    assert "《《" not in visible
    context.close()


@VIEWPORTS
def test_a_fitting_statute_is_shown_with_what_it_was_found_for_and_a_badge_that_says_what_was_checked(
    browser, plain_app, viewport
):
    context, page = answered_without_marks(browser, plain_app, viewport, "found-for", QUESTION)
    chat = page.inner_text("#ll-chat")
    assert "可能相关的法条（系统检索，未经律师判断）" in chat and "检索依据：" in chat
    citations = page.inner_text("#ll-citations")
    assert "条文存在·内容相符" in citations and "不说明该条适用于您的情况" in citations
    page.shot("found-for")
    context.close()
