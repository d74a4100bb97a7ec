"""A visitor's consultation in Debian's Chromium: nothing typed or asked is lost, nothing a model writes is
fetched or run, the answer streams without redrawing the chat, bad input is explained, and a phone shows
the question box on its first screen and the citations right under the answer.

The app runs on loopback with every role on the fake OpenAI-compatible server (``live_app``), or with no
model at all. Screenshots of the whole no-model and model flows, on a desktop (1366×768) and a phone
(390×844), go to ``tests/artifacts/screenshots/<test>/`` (not committed). Without ``/usr/bin/chromium``
these tests are skipped — unless ``REQUIRE_BROWSER_TESTS=1``, when they fail instead.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from lawluo.ui import consult_tab as tab

from .fakes.firm_models import LAWYER_ANSWER
from .fakes.live_app import live_app, require_chromium
from .test_image_leak_browser import LeakServer

pytestmark = pytest.mark.browser  # every test here drives Chromium

require_chromium()

sync_api = pytest.importorskip("playwright.sync_api")

SHOTS = Path(__file__).parent / "artifacts" / "screenshots"
QUESTION = "我在公司干了两年一直没签劳动合同，现在老板把我辞退了，我能要求什么赔偿？"
DESKTOP, PHONE = {"width": 1366, "height": 768}, {"width": 390, "height": 844}
USER = "#ll-chat [data-testid='user']"
BOT = "#ll-chat [data-testid='bot']"


@pytest.fixture(scope="module")
def app():
    with live_app(latency=0.05, tokens_per_second=200) as running:
        yield running


@pytest.fixture(scope="module")
def plain_app():
    with live_app(model=False) as running:
        yield running


def open_page(browser, url: str, name: str, viewport: dict = DESKTOP, answer: bool | None = None):
    """A fresh browser context (its own localStorage and cookie) on ``url``. Dialogs (the confirmations)
    are recorded in ``page.dialogs`` and answered with ``page.answer`` (True: OK)."""
    folder = SHOTS / name
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    context = browser.new_context(viewport=viewport, accept_downloads=True)
    page = context.new_page()
    page.dialogs, page.answer = [], answer

    def on_dialog(dialog) -> None:
        page.dialogs.append(dialog.message)
        dialog.accept() if page.answer else dialog.dismiss()

    page.on("dialog", on_dialog)
    page.goto(url)
    page.wait_for_selector("#ll-question textarea")
    shots = iter(range(1, 100))
    page.shot = lambda label: page.screenshot(
        path=str(folder / f"{next(shots):02d}-{label}.png"), full_page=True
    )
    return context, page


def message(page) -> str:
    return page.inner_text("#ll-message")


def wait_message(page, text: str) -> None:
    page.wait_for_function("(t) => document.querySelector('#ll-message').innerText.includes(t)", arg=text)


def idle(page) -> None:
    """Wait until no step of the page runs (its controls are enabled again)."""
    page.wait_for_function("!window.__llSteps && !document.querySelector('#ll-ask').disabled")


def settled_copy(page, after: str | None = None, quiet_ms: int = 500) -> str:
    """The browser tab's copy of the consultation (its sessionStorage) once it differs from ``after`` and has
    stopped changing: a reload then brings back what the page showed."""
    read = "key => sessionStorage.getItem(key)"
    page.wait_for_function(
        "([key, old]) => sessionStorage.getItem(key) && sessionStorage.getItem(key) !== old",
        arg=[tab.STORAGE_KEY, after],
    )
    copy = page.evaluate(read, tab.STORAGE_KEY)
    while True:
        page.wait_for_timeout(quiet_ms)
        now = page.evaluate(read, tab.STORAGE_KEY)
        if now == copy:
            return copy
        copy = now


def ask_with_tree(page, question: str = QUESTION) -> None:
    page.fill("#ll-question textarea", question)
    page.click("#ll-ask")
    page.wait_for_selector('#ll-tree [data-complete="true"]')
    idle(page)


def answered(page, answers: int) -> None:
    """Wait until the chat holds ``answers`` answers and the step that wrote the last one is done."""
    page.wait_for_function(f'document.querySelectorAll("{BOT}").length >= {answers}')
    idle(page)


# -- 4. no lost work ------------------------------------------------------------------------------


def test_enter_sends_the_question_and_shift_enter_starts_a_new_line(browser, app):
    context, page = open_page(browser, app.url, "enter")
    box = "#ll-question textarea"
    page.click(box)
    page.keyboard.type("第一行")
    page.keyboard.press("Shift+Enter")
    page.keyboard.type(QUESTION)
    page.wait_for_timeout(300)  # a send, had Shift+Enter sent, would have taken the box's text by now
    assert page.input_value(box) == f"第一行\n{QUESTION}" and page.locator(USER).count() == 0
    page.keyboard.press("Enter")
    page.wait_for_selector('#ll-tree [data-complete="true"]')
    assert page.locator(USER).count() == 1 and "第一行" in page.inner_text(USER)
    assert page.input_value(box) == ""  # the question was taken
    context.close()


def test_new_and_the_trash_button_ask_first_and_a_no_keeps_everything(browser, app):
    context, page = open_page(browser, app.url, "confirm-clear", answer=False)
    page.click("#ll-new")  # nothing to lose yet: no question is asked
    ask_with_tree(page)
    assert page.dialogs == []
    page.click("#ll-new")
    page.click(tab.CLEAR_BUTTON)
    # the confirmation is in the page's language (Chinese here)
    assert len(page.dialogs) == 2 and all(
        "开始新的咨询" in d and "Start a new" not in d for d in page.dialogs
    )
    page.wait_for_timeout(500)
    assert page.locator(USER).count() == 1 and page.locator('#ll-tree .ll-node[data-node="1"]').count() == 1
    page.click('#ll-tree button[data-node="1"][data-mark="yes"]')  # the server kept it too: it takes marks
    page.wait_for_selector('#ll-tree .ll-node[data-node="1"][data-mark="yes"]')
    page.answer = True
    page.click(tab.CLEAR_BUTTON)
    page.wait_for_function(f'document.querySelectorAll("{USER}").length === 0')
    idle(page)
    assert "澄清树会在提问后出现" in page.inner_text("#ll-tree")
    page.reload()  # …and the copy the browser kept is gone with it
    page.wait_for_selector("#ll-question textarea")
    page.wait_for_timeout(1000)
    assert page.locator(USER).count() == 0
    context.close()


def test_a_reload_brings_the_consultation_back(browser, app):
    context, page = open_page(browser, app.url, "reload")
    ask_with_tree(page)
    idle(page)
    before = settled_copy(page)  # the browser's copy with the tree
    page.click('#ll-tree button[data-node="1"][data-mark="yes"]')
    page.wait_for_selector('#ll-tree .ll-node[data-node="1"][data-mark="yes"]')
    idle(page)
    settled_copy(page, after=before)  # written once the step is done: the one with the mark, however slow
    page.reload()
    page.wait_for_selector('#ll-tree .ll-node[data-node="1"][data-mark="yes"]')
    page.shot("reloaded")
    assert "已恢复此浏览器中保存的咨询" in message(page) and page.locator(USER).count() == 1
    assert "劳动纠纷" in page.inner_text("#ll-routing")
    before = settled_copy(page)
    page.click("#ll-submit")  # and it goes on where it stopped
    answered(page, 1)
    idle(page)
    settled_copy(page, after=before)  # the one with the answer
    page.reload()
    page.wait_for_selector(BOT)
    assert "二倍的工资" in page.inner_text("#ll-chat")
    context.close()


def test_a_closed_consultation_takes_no_marks_and_no_domain_change(browser, app):
    context, page = open_page(browser, app.url, "closed")
    ask_with_tree(page)
    page.click("#ll-end")
    page.wait_for_selector("#ll-download-md", state="visible")
    idle(page)
    page.shot("closed")
    assert page.locator("#ll-tree button[data-mark]:not([disabled])").count() == 0
    assert page.locator("#ll-domain input").is_disabled()
    page.reload()  # restored closed: still closed, its report shown again
    page.wait_for_selector("#ll-report h2")
    assert page.locator("#ll-tree button[data-mark]:not([disabled])").count() == 0
    assert page.locator("#ll-domain input").is_disabled() and "结束咨询" in message(page)
    context.close()


def test_choosing_a_domain_while_the_tree_awaits_marks_rebuilds_the_tree(browser, plain_app):
    context, page = open_page(browser, plain_app.url, "domain-rebuild")
    ask_with_tree(page)
    first = page.inner_text('#ll-tree [data-node="1"]')
    asked = settled_copy(page)  # the browser's copy with the tree
    page.click('#ll-tree button[data-node="1"][data-mark="yes"]')
    idle(page)
    before = settled_copy(page, after=asked)  # the copy with the mark, before the rebuild
    page.click("#ll-domain input")
    page.get_by_role("option", name="合同纠纷").click()
    wait_message(page, "已改派为「合同纠纷」")
    idle(page)
    page.shot("rebuilt")
    assert page.inner_text('#ll-tree [data-node="1"]') != first  # the contract domain's elements
    assert page.locator("#ll-tree button[data-mark]:not([disabled])").count() > 0  # ready to mark
    assert "由您选择" in page.inner_text("#ll-routing") and "保留了 0 / 1 个标记" in message(page)
    settled_copy(page, after=before)  # written once the step is done: the rebuilt tree, however slow
    page.reload()  # the rebuilt tree is what comes back
    page.wait_for_selector('#ll-tree [data-complete="true"]')
    assert page.inner_text('#ll-tree [data-node="1"]') != first
    context.close()


def test_choosing_an_issue_in_the_tree_rebuilds_it_from_that_issue_on_a_phone(browser, plain_app):
    context, page = open_page(browser, plain_app.url, "issue-rebuild", viewport=PHONE)
    ask_with_tree(page, "公司的大股东要把股份卖给外面的人，我作为老股东想买，他说外面的人出价更高。")
    menu = "#ll-tree select[data-issue]"
    assert page.locator(menu).is_enabled() and page.locator(menu).is_visible()
    asked = settled_copy(page)  # the browser's copy with the tree
    page.click('#ll-tree button[data-node="1"][data-mark="yes"]')
    idle(page)
    before = settled_copy(page, after=asked)  # the copy with the mark, before the rebuild
    page.select_option(menu, "statute:company:3")  # 股权转让、转股、卖股份
    wait_message(page, "已按问题类型「股权转让、转股、卖股份」重新生成澄清树")
    idle(page)
    page.shot("rebuilt")
    assert "公司是否是有限责任公司？" in page.inner_text('#ll-tree [data-node="1"]')
    assert page.eval_on_selector(menu, "e => e.value") == "statute:company:3"
    settled_copy(page, after=before)  # written once the step is done: the rebuilt tree, however slow
    page.reload()  # the rebuilt tree and its issue are what comes back
    page.wait_for_selector('#ll-tree [data-complete="true"]')
    assert "公司是否是有限责任公司？" in page.inner_text('#ll-tree [data-node="1"]')
    assert page.eval_on_selector(menu, "e => e.value") == "statute:company:3"
    context.close()


# -- 7. model output is inert ---------------------------------------------------------------------


def hostile_answer(leak: str) -> str:
    """An answer that tries every way Markdown or HTML has to make a browser fetch or run something."""
    return (
        f"{LAWYER_ANSWER}\n\n![图]({leak}/image) ![参考][r]\n\n[r]: {leak}/reference\n\n"
        f'<img src="{leak}/img-tag"> <script src="{leak}/script">window.__pwned = 1</script>\n'
        f'<div style="background-image: url({leak}/css)">x</div> <style>@import url({leak}/import);</style>\n'
        f'<link rel="stylesheet" href="{leak}/link-tag"> <iframe src="{leak}/iframe"></iframe>\n'
        f'<svg><image href="{leak}/svg"/></svg> <video poster="{leak}/poster"></video>\n'
        f"[点这里]({leak}/link) <{leak}/autolink> {leak}/bare www.example.com/www 联系 someone@example.com\n"
    )


def test_nothing_in_a_streamed_answer_is_fetched_run_or_linked(browser):
    leak = LeakServer()
    try:
        with live_app(latency=0.05, tokens_per_second=400) as running:
            running.responder.lawyer_answer = hostile_answer(leak.url)
            context, page = open_page(browser, running.url, "inert-output")
            page.click("#ll-use-tolc-accordion")
            page.uncheck("#ll-use-tolc input")
            page.fill("#ll-question textarea", f"{QUESTION} [我的链接]({leak.url}/question)")
            page.click("#ll-ask")
            answered(page, 1)
            page.click("#ll-end")
            page.wait_for_selector("#ll-download-md", state="visible")
            page.shot("inert")
            chat = page.inner_text("#ll-chat")
            anchors = page.locator("#ll-chat a[href], #ll-report a[href], #ll-citations a[href]").count()
            pwned = page.evaluate("window.__pwned")
            context.close()
    finally:
        leak.close()
    assert leak.requests == [] and pwned is None and anchors == 0
    for shown in ("/image", "<img src=", "<script src=", "url(", "[点这里](", "/bare", "www.example.com"):
        assert shown in chat  # the characters are there, as text
    assert "someone@example.com" in chat and f"[我的链接]({leak.url}/question)" in chat


# -- 8. fast in the browser -----------------------------------------------------------------------


def test_an_answer_streams_into_the_last_message_without_redrawing_the_chat(browser, app):
    context, page = open_page(browser, app.url, "append")
    page.click("#ll-use-tolc-accordion")
    page.uncheck("#ll-use-tolc input")
    page.fill("#ll-question textarea", QUESTION)
    page.click("#ll-ask")
    answered(page, 1)
    page.evaluate(
        """() => {
        window.__first = document.querySelector("#ll-chat [data-testid='user']");
        window.__lengths = [];
        new MutationObserver(() => {
          const bots = document.querySelectorAll("#ll-chat [data-testid='bot']");
          if (bots.length === 2) window.__lengths.push(bots[1].innerText.length);
        }).observe(document.querySelector('#ll-chat'), {subtree: true, childList: true, characterData: true});
      }"""
    )
    app.server.tokens_per_second = 60
    try:
        page.fill("#ll-question textarea", QUESTION)
        page.click("#ll-ask")
        answered(page, 2)
    finally:
        app.server.tokens_per_second = 200
    lengths = page.evaluate("window.__lengths")
    assert len({n for n in lengths if 0 < n < len(LAWYER_ANSWER)}) >= 3  # it streamed…
    assert page.evaluate("window.__first.isConnected")  # …and the earlier messages were never redrawn
    context.close()


def test_a_long_check_shows_fifty_cards_and_more_on_request(browser, plain_app):
    context, page = open_page(browser, plain_app.url, "check-pages")
    page.click("button[role=tab][data-tab-id=statutes]")
    text = "《中华人民共和国民法典》第一千零七十九条规定离婚。" * 400
    page.fill("textarea[placeholder^='根据《中华人民共和国民法典》']", text)
    page.click("button:text-is('核查引用')")
    page.wait_for_selector("#ll-check-list button[data-more]")
    assert page.locator("#ll-check-list .ll-card").count() == 50
    assert "已显示 50 / 400 条引用" in page.inner_text("#ll-check-list")
    page.click("#ll-check-list button[data-more]")
    page.wait_for_function("document.querySelectorAll('#ll-check-list .ll-card').length === 100")
    assert "已显示 100 / 400" in page.inner_text("#ll-check-list")
    context.close()


# -- 9. bad input ---------------------------------------------------------------------------------


def test_a_binary_or_foreign_upload_is_explained_and_shows_no_server_path(browser, app, tmp_path):
    context, page = open_page(browser, app.url, "bad-upload")
    ask_with_tree(page)
    page.click("#ll-save-accordion")
    binary = tmp_path / "photo.json"
    binary.write_bytes(bytes(range(256)) * 4)
    page.set_input_files('input[type=file][accept=".json"]', str(binary))
    wait_message(page, "无法恢复")
    assert tab.NOT_TEXT_MESSAGE in message(page)
    foreign = tmp_path / "other.json"
    foreign.write_text('{"version": 1, "id": "0123456789ab", "created": "x", "status": "new", "domain": "x"}')
    page.set_input_files('input[type=file][accept=".json"]', str(foreign))
    wait_message(page, "业务领域不在本站的领域表中")
    page.shot("refused")
    shown = page.inner_text("body")
    assert "/tmp" not in shown and str(tmp_path) not in shown and "codec" not in shown
    assert page.locator(USER).count() == 1  # the consultation is still there
    context.close()


#: Elements of the consultation's panels wider than their own box (text that does not wrap), except the
#: boxes made to scroll sideways.
OVERFLOWING = """() => [...document.querySelectorAll(
  '#ll-tree *, #ll-routing *, #ll-chat *, #ll-citations *, #ll-retrieved *, #ll-message *')]
  .filter((e) => e.clientWidth > 0 && e.scrollWidth > e.clientWidth + 2
    && !['auto', 'scroll'].includes(getComputedStyle(e).overflowX))
  .map((e) => `${e.tagName}.${e.className} ${e.scrollWidth} > ${e.clientWidth}`)"""


def test_a_long_link_in_a_question_wraps_on_a_phone(browser, plain_app):
    context, page = open_page(browser, plain_app.url, "long-link", viewport=PHONE)
    link = "https://shop.example.com/item?id=" + "a1" * 150  # one unbroken word, 2,000 px wide unwrapped
    ask_with_tree(page, f"我在网上买东西被骗了，商品链接是{link}，卖家不退款怎么办？")
    page.click("#ll-submit")
    answered(page, 1)
    page.shot("answered")
    assert page.evaluate(OVERFLOWING) == []
    assert link in page.inner_text("#ll-tree")  # wrapped, not cut
    context.close()


# -- 10. a phone, and the screenshots of both flows -----------------------------------------------


def flow(page, with_model: bool) -> None:
    """Ask, mark, submit, (with a model) end: a screenshot after each step."""
    page.shot("start")
    box = page.locator("#ll-question textarea").bounding_box()
    assert box["y"] + box["height"] <= page.viewport_size["height"]  # on the first screen
    ask_with_tree(page)
    page.shot("tree")
    page.click('#ll-tree button[data-node="1"][data-mark="yes"]')
    page.wait_for_selector('#ll-tree .ll-node[data-node="1"][data-mark="yes"]')
    idle(page)
    page.click("#ll-submit")
    answered(page, 1)
    page.shot("answer")
    if with_model:
        page.click("#ll-end")
        page.wait_for_selector("#ll-download-md", state="visible")
        idle(page)
        page.shot("report")


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
@pytest.mark.parametrize("with_model", [False, True], ids=["no-model", "model"])
def test_the_whole_flow_on_a_desktop_and_a_phone(browser, app, plain_app, viewport, with_model):
    url = (app if with_model else plain_app).url
    name = f"flow-{'model' if with_model else 'no-model'}-{'phone' if viewport is PHONE else 'desktop'}"
    context, page = open_page(browser, url, name, viewport)
    flow(page, with_model)
    chat, citations, tree = (page.locator(s).bounding_box() for s in (BOT, "#ll-citations", "#ll-tree"))
    if viewport is PHONE:  # one column: the citations come right after the answer, before the tree
        assert chat["y"] < citations["y"] < tree["y"]
        assert citations["y"] - (chat["y"] + chat["height"]) < 700  # the question box and buttons between
    else:  # two columns: the citations beside the chat
        assert citations["x"] > chat["x"] + chat["width"]
    context.close()
