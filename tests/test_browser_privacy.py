"""What a consultation leaves in the browser, as the next user of a shared computer would find it (Debian's
Chromium): the tab keeps a copy in its sessionStorage, so a reload brings the consultation back; 新咨询 New
deletes the copy as it is clicked, before the server has answered; closing the tab deletes it; and nothing
of a consultation is in localStorage — no copy, and no run of Gradio's run history (``run_history=False``),
not even one that an earlier version of the app left there.

Every check searches the value of every key of both storages for a name the question holds
(:data:`WORD`). The app runs on loopback with no model (``live_app``): the question is answered with an
extract and the tree comes from the statutes. Skipped without ``/usr/bin/chromium`` unless
``REQUIRE_BROWSER_TESTS=1``.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from lawluo.ui import consult_tab as tab

from .fakes.live_app import live_app, require_chromium

pytestmark = pytest.mark.browser  # every test here drives Chromium

require_chromium()

sync_api = pytest.importorskip("playwright.sync_api")

WORD = "司马青禾"
QUESTION = f"我叫{WORD}，在公司干了两年一直没签劳动合同，现在老板把我辞退了，我能要求什么赔偿？"
USER = "#ll-chat [data-testid='user']"
MARKED = '#ll-tree .ll-node[data-node="1"][data-mark="yes"]'
#: Every key of the page's localStorage and sessionStorage, with its value.
STORAGE = """() => Object.fromEntries(['localStorage', 'sessionStorage'].map((name) => [name,
  Object.fromEntries(Object.keys(window[name]).map((key) => [key, window[name].getItem(key)]))]))"""
RUN_HISTORY = "gradio:run-history:"
#: How long a page that has nothing to restore is given to restore it anyway.
SETTLE_MS = 1500


@pytest.fixture(scope="module")
def app():
    with live_app(model=False) as running:
        yield running


def storage(page) -> dict[str, dict[str, str]]:
    return page.evaluate(STORAGE)


def holding(page, word: str = WORD) -> list[str]:
    """``storage:key`` of every item whose value holds ``word``."""
    return [
        f"{name}:{key}"
        for name, items in storage(page).items()
        for key, value in items.items()
        if word in value
    ]


def run_history_keys(page) -> list[str]:
    return [key for items in storage(page).values() for key in items if key.startswith(RUN_HISTORY)]


def open_page(context, url: str):
    """A page of ``context`` on ``url`` that accepts the confirmations (新咨询 asks first)."""
    page = context.new_page()
    page.on("dialog", lambda dialog: dialog.accept())
    page.goto(url)
    page.wait_for_selector("#ll-question textarea")
    return page


def idle(page) -> None:
    page.wait_for_function("!window.__llSteps && !document.querySelector('#ll-ask').disabled")


def copies(page) -> list[str]:
    """Where the browser holds a copy of the consultation (:data:`~lawluo.ui.consult_tab.STORAGE_KEY`)."""
    return [
        f"{name}:{key}" for name, items in storage(page).items() for key in items if key == tab.STORAGE_KEY
    ]


def settled_copy(page, after: str | None = None) -> str:
    """The browser's copy of the consultation, wherever it is kept, once it differs from ``after`` and has
    stopped changing."""
    read = "(key) => sessionStorage.getItem(key) || localStorage.getItem(key)"
    page.wait_for_function(
        f"([key, old]) => {{ const copy = ({read})(key); return copy && copy !== old; }}",
        arg=[tab.STORAGE_KEY, after],
    )
    copy = page.evaluate(read, tab.STORAGE_KEY)
    while True:
        page.wait_for_timeout(400)
        now = page.evaluate(read, tab.STORAGE_KEY)
        if now == copy:
            return copy
        copy = now


def ask_and_mark(page) -> None:
    """Ask :data:`QUESTION` and mark the tree's first fact 是; return once the browser's copy has the mark."""
    page.fill("#ll-question textarea", QUESTION)
    page.click("#ll-ask")
    page.wait_for_selector('#ll-tree [data-complete="true"]')
    idle(page)
    asked = settled_copy(page)
    page.click('#ll-tree button[data-node="1"][data-mark="yes"]')
    page.wait_for_selector(MARKED)
    idle(page)
    settled_copy(page, after=asked)


def reloaded(page) -> None:
    page.reload()
    page.wait_for_selector("#ll-question textarea")
    page.wait_for_timeout(SETTLE_MS)


def test_the_tab_keeps_its_copy_in_session_storage_and_nothing_in_local_storage(browser, app):
    context = browser.new_context()
    page = open_page(context, app.url)
    ask_and_mark(page)
    assert copies(page) == [f"sessionStorage:{tab.STORAGE_KEY}"]  # the tab's own, not the profile's
    copy = storage(page)["sessionStorage"][tab.STORAGE_KEY]
    assert json.loads(copy)["turns"][0]["text"] == QUESTION and '"mark":"yes"' in copy
    assert run_history_keys(page) == [] and holding(page) == [f"sessionStorage:{tab.STORAGE_KEY}"]
    assert "runs" not in page.inner_text("footer").lower()  # no "Runs" page in the footer…
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(f"{app.url}gradio_api/runs")  # …nor at its address
    assert refused.value.code == 404
    context.close()


def test_new_deletes_the_copy_as_it_is_clicked_and_a_reload_brings_nothing_back(browser, app):
    """The server is slow to start over (a busy queue, a model step that takes a while to stop): the
    copy is gone all the same, before the page reloads."""
    context = browser.new_context()
    page = open_page(context, app.url)
    ask_and_mark(page)
    held = []
    page.route("**/gradio_api/queue/join*", lambda route: held.append(route))  # no answer to 新咨询 yet
    with page.expect_request("**/gradio_api/queue/join*"):
        page.click("#ll-new")
    assert held and copies(page) == []
    page.unroute("**/gradio_api/queue/join*")
    reloaded(page)  # …and the page is reloaded (or closed) before it has
    assert page.locator(USER).count() == 0 and copies(page) == []
    reloaded(page)
    assert page.locator(USER).count() == 0 and copies(page) == []
    assert holding(page) == [] and run_history_keys(page) == []
    context.close()


def test_new_deletes_the_copy_for_good_once_the_server_has_started_over(browser, app):
    context = browser.new_context()
    page = open_page(context, app.url)
    ask_and_mark(page)
    page.click("#ll-new")
    page.wait_for_function(f'document.querySelectorAll("{USER}").length === 0')
    idle(page)
    page.wait_for_timeout(SETTLE_MS)  # what the server sends once it has started over is written by now
    assert copies(page) == [] and holding(page) == [] and run_history_keys(page) == []
    for _ in range(3):
        reloaded(page)
        assert page.locator(USER).count() == 0 and copies(page) == [] and holding(page) == []
    context.close()


def test_a_reload_without_new_brings_the_consultation_back_every_time(browser, app):
    context = browser.new_context()
    page = open_page(context, app.url)
    ask_and_mark(page)
    for _ in range(2):  # restoring it keeps the copy: the next reload brings it back too
        page.reload()
        page.wait_for_selector(MARKED)
        assert (
            "已恢复此浏览器中保存的咨询" in page.inner_text("#ll-message") and page.locator(USER).count() == 1
        )
        assert WORD in page.inner_text("#ll-chat")
    context.close()


def test_closing_the_tab_leaves_nothing_for_the_next_user(browser, app):
    context = browser.new_context()  # one browser profile: the tabs share its localStorage
    page = open_page(context, app.url)
    ask_and_mark(page)
    page.close()
    after = context.new_page()  # the next user opens a new tab: what does the profile hold?
    after.goto(f"{app.url}config")  # a page of the app's origin that runs none of its scripts
    assert holding(after) == [] and copies(after) == [] and run_history_keys(after) == []
    after.close()
    after = open_page(context, app.url)  # …and the app does not bring the consultation back
    after.wait_for_timeout(SETTLE_MS)
    assert after.locator(USER).count() == 0 and "已恢复" not in after.inner_text("#ll-message")
    assert copies(after) == [] and holding(after) == [] and run_history_keys(after) == []
    context.close()


def test_what_an_earlier_version_left_in_local_storage_is_deleted(browser, app):
    """Runs saved by an earlier server (another ``app_id``: ``run_history=False`` deletes only its own)
    and the copy an earlier page kept in localStorage (``gr.BrowserState``, encrypted)."""
    context = browser.new_context()
    page = open_page(context, app.url)
    run = json.dumps([{"id": "1", "api_name": "/ask", "inputs": [None, QUESTION]}], ensure_ascii=False)
    page.evaluate(
        """([run, key]) => {
          localStorage.setItem('gradio:run-history:v2:1234567890', run);
          localStorage.setItem('gradio:run-history:v2:1234567890:user:ann', run);
          sessionStorage.setItem('gradio:run-history:replay:v2:1234567890', run);
          localStorage.setItem(key, 'bm90IGEgcmVhbCBpdg==:U2FsdGVkX19ub3RhcmVhbGNvcHk=');
          localStorage.setItem('unrelated', 'kept');
        }""",
        [run, tab.STORAGE_KEY],
    )
    assert len(holding(page)) == 3 and copies(page) == [f"localStorage:{tab.STORAGE_KEY}"]
    reloaded(page)
    assert copies(page) == [] and holding(page) == [] and run_history_keys(page) == []
    assert storage(page)["localStorage"] == {"unrelated": "kept"}  # what is not the app's own stays
    assert page.locator(USER).count() == 0
    context.close()
