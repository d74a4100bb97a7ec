"""The app's three pages in a real browser (Debian's Chromium, headless), on a desktop and a phone:
``/`` is the visitors' (consultation, statute lookup, about; no annotation form), ``/annotate`` the
lawyers' (the annotation tab in view, not behind the tab bar's "•••"), ``/admin`` the admins' (a clear
message for anyone else); the navbar links each to each; ``/annotate?item=<id>`` opens that item when it
is the annotator's, and says so when it is not; ``/healthz`` answers without sign-in.

The app is the annotators' deployment (a users file: every page behind Gradio's login), with 6 items each
labelled by one annotator, so half of them are alice's and half bob's.
"""

from __future__ import annotations

import urllib.request

import pytest

from eval_ui.service import STORE_FILE
from eval_ui.store import AnnotationStore
from lawluo.i18n import EN, ZH, text
from lawluo.ui.i18n import LOCALES
from lawluo.ui.pages import ADMIN, ANNOTATE, HOME

from .annotation_pages import DESKTOP, PHONE, citing_items, page_url, shown_item, tab_names, wait_ready
from .fakes.live_app import LOGIN_BUTTON, live_app, require_chromium

require_chromium()

sync_api = pytest.importorskip("playwright.sync_api")
pytestmark = [pytest.mark.browser, pytest.mark.filterwarnings("ignore::UserWarning")]

VIEWPORTS = [pytest.param(DESKTOP, id="desktop"), pytest.param(PHONE, id="phone")]
#: The elem_ids of the components a page's config holds (what Gradio sent for that page, not the CSS).
ELEM_IDS = "() => window.gradio_config.components.map(c => c.props && c.props.elem_id).filter(Boolean)"


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    folder = tmp_path_factory.mktemp("pages")
    with AnnotationStore(folder / STORE_FILE) as store:
        store.import_items(citing_items(6, "pg"))
    with live_app(
        model=False,
        LAWLUO_ANNOTATION_USERS="root:rootpw:admin,alice:alicepw,bob:bobpw",
        LAWLUO_ANNOTATION_DIR=str(folder),
        LAWLUO_ANNOTATION_SEED="0",
        LAWLUO_ANNOTATION_OVERLAP="1",
    ) as running:
        running.store = AnnotationStore(folder / STORE_FILE)
        try:
            yield running
        finally:
            running.store.close()


def open_signed_in(browser, app, path: str, name: str, viewport: dict = DESKTOP, locale: str = "zh-CN"):
    """A new context: ``path`` of the app, signed in as ``name`` on the login form Gradio shows there."""
    page = browser.new_context(viewport=viewport, locale=locale).new_page()
    page.goto(page_url(app, path))
    page.fill('input[data-testid="textbox"]', name)
    page.fill('input[data-testid="password"]', f"{name}pw")
    page.click(LOGIN_BUTTON)
    return page


def items_of(store: AnnotationStore, annotator: str) -> list[str]:
    with store._read() as con:
        rows = con.execute(
            "SELECT item_id FROM assignments WHERE annotator = ? ORDER BY item_id", (annotator,)
        )
        return [r[0] for r in rows]


def more_tabs_visible(page) -> bool:
    return any(b.is_visible() for b in page.locator("button[aria-label='More tabs']").all())


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_home_is_the_visitors_page_without_the_annotation_form(browser, app, viewport):
    page = open_signed_in(browser, app, "/", "alice", viewport)
    page.get_by_role("tab", name="法律咨询").first.wait_for(timeout=30_000)
    assert {"法律咨询", "法条检索", "关于"} <= set(tab_names(page))
    assert page.locator("#ll-question textarea").is_visible()
    ids = page.evaluate(ELEM_IDS)
    assert "ll-question" in ids
    assert not [i for i in ids if i.startswith(("ann-", "adj-", "st-", "admin-"))], ids
    assert page.locator("#ann-status, #ann-verdict-left, #adj-comparison, #st-compute").count() == 0
    page.context.close()


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_annotate_is_the_lawyers_page_in_view_on_a_phone_too(browser, app, viewport):
    page = open_signed_in(browser, app, "/annotate", "alice", viewport)
    wait_ready(page)
    assert page.url.endswith("/annotate")  # the login brought the annotator back to the page they asked for
    assert page.locator("#ann-verdict-left").is_visible() and page.locator("#ann-question").is_visible()
    assert not more_tabs_visible(page)  # nothing of the page hides behind the tab bar's "•••"
    assert page.get_by_role("tab", name="标注").first.is_visible()
    assert page.locator("#ll-question").count() == 0  # no consultation on the lawyers' page
    page.context.close()


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_admin_is_the_admins_page_and_says_so_to_anyone_else(browser, app, viewport):
    alice = open_signed_in(browser, app, "/admin", "alice", viewport)
    alice.wait_for_selector("#admin-notice:has-text('This page is for admins')", timeout=30_000)
    assert "alice" in alice.inner_text("#admin-notice") and "/annotate" in alice.inner_text("#admin-notice")
    for tab in ("裁决", "统计"):
        assert not any(t.is_visible() for t in alice.get_by_role("tab", name=tab).all()), tab
    assert alice.locator("#adj-comparison").count() == 0 or not alice.locator("#adj-comparison").is_visible()
    alice.context.close()

    root = open_signed_in(browser, app, "/admin", "root", viewport)
    root.get_by_role("tab", name="裁决").first.wait_for(timeout=30_000)
    root.wait_for_selector("#admin-notice", state="hidden", timeout=30_000)
    assert {"裁决", "统计"} <= set(tab_names(root))
    assert not more_tabs_visible(root)
    root.get_by_role("tab", name="统计").first.click()
    root.wait_for_selector("#st-compute", state="visible")
    root.context.close()


@pytest.mark.parametrize("lang", [ZH, EN])
def test_the_navbar_names_each_page_in_the_pages_language_and_links_to_it(browser, app, lang):
    page = open_signed_in(browser, app, "/", "alice", locale=LOCALES[lang])
    page.locator("#ll-question textarea").wait_for(timeout=30_000)
    nav = page.locator("#ll-navbar nav")
    names = [text(p.name_key, lang) for p in (HOME, ANNOTATE, ADMIN)]
    pages = nav.locator("a:not(.ll-switch)")
    assert [t.strip() for t in pages.all_inner_texts()] == names  # one language, the page's
    assert nav.locator("a[aria-current=page]").inner_text().strip() == names[0]
    nav.get_by_text(names[1], exact=True).click()
    page.wait_for_url("**/annotate")
    wait_ready(page)
    page.locator("#ll-navbar nav").get_by_text(names[2], exact=True).click()
    page.wait_for_url("**/admin")
    page.wait_for_selector("#admin-notice", timeout=30_000)
    page.locator("#ll-navbar nav").get_by_text(names[0], exact=True).click()
    page.wait_for_url(page_url(app, "/"))
    page.locator("#ll-question textarea").wait_for(timeout=30_000)
    page.context.close()


def test_a_deep_link_opens_the_annotators_item_and_refuses_anyone_elses(browser, app):
    mine, theirs = items_of(app.store, "alice"), items_of(app.store, "bob")
    assert mine and theirs and not set(mine) & set(theirs)
    first = app.store.next_item("alice").item.id
    linked = next(i for i in reversed(mine) if i != first)  # not the item she would be served anyway

    page = open_signed_in(browser, app, f"/annotate?item={linked}", "alice")
    wait_ready(page)
    page.wait_for_selector("#ann-message:has-text('Opened the linked item')")
    assert shown_item(app.store, "alice", page).item.id == linked
    page.click("#ann-next")  # the link is read on page load only: Next serves her next item
    page.wait_for_function(
        "() => !document.querySelector('#ann-message').innerText.includes('Opened the linked item')",
        timeout=20_000,
    )
    wait_ready(page)
    assert shown_item(app.store, "alice", page).item.id == first

    for other in (theirs[0], "no-such-item", '<img src=x onerror="window.__pwned=1">'):
        page.goto(page_url(app, "/annotate?item=" + urllib.request.quote(other)))
        page.wait_for_selector("#ann-message:has-text('is not one of your items')", timeout=30_000)
        wait_ready(page)
        assert shown_item(app.store, "alice", page).item.id != other  # her own next item instead
        assert other in page.inner_text("#ann-message")  # named, as text
    assert page.evaluate("window.__pwned") is None
    page.context.close()


def test_healthz_and_every_page_answer_with_their_headers(app):
    with urllib.request.urlopen(page_url(app, "/healthz"), timeout=10) as response:  # no sign-in needed
        assert response.status == 200
    for path in ("/", "/annotate", "/admin"):
        with urllib.request.urlopen(page_url(app, path), timeout=10) as response:
            policy = response.headers["Content-Security-Policy"]
            assert response.status == 200 and "'sha256-" in policy, path  # its inline scripts allowed
