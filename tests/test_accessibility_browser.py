"""WCAG 2.1 AA on the consultation and annotation pages (issue 42 item 6), in Debian's Chromium on a desktop
(1366×768) and a phone (390×844): axe-core (4.12, bundled in the pinned ``axe-playwright-python`` wheel; run
with the WCAG 2.0/2.1 A and AA rules) finds no violation; every visible control is at least 44 × 44 px; a mark
keeps the keyboard's focus on its button; Enter in the question box leaves the focus on the tree it brought;
a button that cannot act is disabled; 新咨询 forgets the client's name.
"""

from __future__ import annotations

import pytest

from eval_ui.service import STORE_FILE
from eval_ui.store import AnnotationStore

from .annotation_pages import citing_items, sign_in, wait_ready
from .fakes.live_app import annotation_app, live_app, require_chromium
from .test_consult_visitor_browser import DESKTOP, PHONE, QUESTION, answered, idle, open_page

pytestmark = pytest.mark.browser  # every test here drives Chromium

require_chromium()
axe_sync = pytest.importorskip("axe_playwright_python.sync_playwright")

VIEWPORTS = pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
WCAG_AA = {
    "runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]},
    "resultTypes": ["violations"],
}
#: Visible controls smaller than 44 × 44 px (hidden copies of the tab bar, 1 px high, are not shown to anyone).
SMALL_TARGETS = """(scope) => [...document.querySelectorAll(`${scope} button, ${scope} [role=tab], ${scope} .label-wrap`)]
  .filter((el) => el.checkVisibility({visibilityProperty: true, opacityProperty: true}))
  .map((el) => [el.id || el.getAttribute('aria-label') || el.innerText.trim().slice(0, 12), el.getBoundingClientRect()])
  .filter(([, r]) => r.height > 1 && (r.width < 44 || r.height < 44))
  .map(([name, r]) => `${name} ${Math.round(r.width)}×${Math.round(r.height)}`)"""


@pytest.fixture(scope="module")
def plain_app():
    with live_app(model=False) as running:
        yield running


@pytest.fixture(scope="module")
def annotation(tmp_path_factory):
    folder = tmp_path_factory.mktemp("annotation-a11y")
    with AnnotationStore(folder / STORE_FILE) as store:
        store.import_items(citing_items(3))
    with annotation_app(folder, "root:rootpw:admin,alice:alicepw") as running:
        yield running


def violations(page) -> list[str]:
    # colours are measured as they settle: a button fading in after a step (Gradio's transition) is no finding
    page.add_style_tag(content="*, *::before, *::after { transition: none !important; }")
    found = axe_sync.Axe().run(page, options=WCAG_AA).response["violations"]
    return [
        f"{v['id']}: {v['nodes'][0]['target']} {v['nodes'][0].get('failureSummary', '')[:200]}" for v in found
    ]


@VIEWPORTS
def test_the_consultation_page_meets_wcag_aa_with_44_px_targets(browser, plain_app, viewport):
    name = f"a11y-consult-{'phone' if viewport is PHONE else 'desktop'}"
    context, page = open_page(browser, plain_app.url, name, viewport)
    assert violations(page) == []
    page.fill("#ll-question textarea", QUESTION)
    page.click("#ll-ask")
    page.wait_for_selector('#ll-tree [data-complete="true"]')
    idle(page)
    assert violations(page) == [] and page.evaluate(SMALL_TARGETS, "#ll-main") == []
    page.click("#ll-tree button[data-mark='yes']")
    idle(page)
    page.click("#ll-submit")
    answered(page, 1)
    page.shot("answered")
    assert violations(page) == [] and page.evaluate(SMALL_TARGETS, "body") == []
    context.close()


def test_focus_stays_where_the_visitor_is_and_buttons_that_cannot_act_are_disabled(browser, plain_app):
    context, page = open_page(browser, plain_app.url, "a11y-focus", DESKTOP)
    page.wait_for_timeout(600)  # the page's first check of what can act
    assert (
        page.is_disabled("#ll-submit") and page.is_disabled("#ll-regenerate") and page.is_disabled("#ll-end")
    )
    page.fill("#ll-client textarea, #ll-client input", "张三")
    page.click("#ll-question textarea")
    page.keyboard.type(QUESTION)
    page.keyboard.press("Enter")
    page.wait_for_selector('#ll-tree [data-complete="true"]')
    idle(page)
    # Enter brought the tree: the keyboard is on its first mark, not on the page's body
    assert page.evaluate("() => document.activeElement.matches('#ll-tree button[data-mark]')")
    page.wait_for_function("() => !document.querySelector('#ll-submit').disabled")
    assert page.is_disabled("#ll-regenerate") and not page.is_disabled("#ll-end")
    mark = '#ll-tree button[data-node="2"][data-mark="no"]'
    page.focus(mark)
    page.keyboard.press("Enter")
    page.wait_for_selector('#ll-tree .ll-node[data-node="2"][data-mark="no"]')
    idle(page)
    page.wait_for_function(
        "(s) => document.activeElement.matches(s)", arg=mark
    )  # redrawn, the focus came back
    page.click("#ll-submit")
    answered(page, 1)
    page.wait_for_function("() => !document.querySelector('#ll-regenerate').disabled")
    assert page.is_disabled("#ll-submit")
    page.answer = True
    page.click("#ll-new")
    idle(page)
    page.wait_for_function("() => document.querySelector('#ll-end').disabled")
    assert page.input_value("#ll-client textarea, #ll-client input") == ""  # 新咨询 forgets the name too
    context.close()


@VIEWPORTS
def test_the_annotation_page_meets_wcag_aa(browser, annotation, viewport):
    page = sign_in(browser, annotation, "alice", "alicepw", viewport, shots="a11y-annotation")
    wait_ready(page)
    page.shot("item")
    assert violations(page) == []
    page.context.close()
