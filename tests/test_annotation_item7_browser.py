"""What an annotator and an admin see, in a real browser, on a 1366×768 desktop and a 390×844 phone
(Debian's Chromium, headless; issue 42, item 7):

- a reload (F5) in the middle of an item loses nothing: the statute labels, the scores and the comment
  come back, with a message saying so; once the label is saved the draft is gone;
- 这些都没问题 marks as correct only the statutes the checker found as cited: an article that does not
  exist (《民法典》第九千条) stays unlabelled, for the annotator to judge;
- on the phone the sticky verdict bar takes at most 120 px of the 844-px screen, a message included; on
  the desktop at most a fifth of the window;
- the statistics say why Rel and T_LC have no agreement (nobody gave scores), test by default two
  systems that were compared with each other, and show each chart under its table, already loaded
  while it is still below the fold (nothing waits to be scrolled into view).

Screenshots go to ``tests/artifacts/screenshots/item7/``.
"""

from __future__ import annotations

import pytest

from eval_ui.items import Item
from eval_ui.service import STORE_FILE
from eval_ui.store import AnnotationStore, AnswerLabel, LabelInput

from .annotation_pages import (
    DESKTOP,
    PHONE,
    SHOTS,
    card_keys,
    checked,
    citing_items,
    open_tab,
    page_url,
    shown_item,
    sign_in,
    wait_ready,
    wait_saved,
)
from .fakes.live_app import LOGIN_BUTTON, annotation_app, require_chromium

require_chromium()

sync_api = pytest.importorskip("playwright.sync_api")
pytestmark = [pytest.mark.browser, pytest.mark.filterwarnings("ignore::UserWarning")]

USERS = "root:rootpw:admin,alice:alicepw,bob:bobpw,carol:carolpw,dave:davepw"
VIEWPORTS = [pytest.param(DESKTOP, id="desktop"), pytest.param(PHONE, id="phone")]
#: Who annotates on which screen (each has items of their own).
ON = {"desktop": ("alice", "carol"), "phone": ("bob", "dave")}
#: The phone's bar may take this many pixels of its 844; the desktop's a fifth of its 768.
BAR_LIMIT = {"desktop": DESKTOP["height"] / 5, "phone": 120}


def screen(viewport: dict) -> str:
    return "phone" if viewport is PHONE else "desktop"


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    folder = tmp_path_factory.mktemp("item7")
    with AnnotationStore(folder / STORE_FILE) as store:
        store.import_items(citing_items(16, prefix="item7"))
    with annotation_app(folder, USERS) as running:
        yield running


def page_for(browser, app, name: str, viewport: dict):
    page = sign_in(browser, app, name, f"{name}pw", viewport, shots="item7")
    wait_ready(page)
    return page


def wait_for_draft(page, store, name: str, item_id: str, test) -> dict:
    """Wait (the page saves drafts as the annotator types) until ``name``'s draft passes ``test``."""
    for _ in range(200):
        draft = store.draft(name, item_id)
        if draft is not None and test(draft):
            return draft
        page.wait_for_timeout(100)
    raise AssertionError(f"no such draft of {name}: {store.draft(name, item_id)}")


def bar_height(page) -> float:
    return page.locator("#ann-bar").bounding_box()["height"]


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_a_reload_mid_item_loses_no_label_score_or_comment(browser, app, viewport):
    name = ON[screen(viewport)][0]
    page = page_for(browser, app, name, viewport)
    a = shown_item(app.store, name, page)
    first = card_keys(page, "left")[0]
    page.click("#ann-left-mark-1 label:has(input[value='wrong_number'])")
    page.fill("#ann-right-rel input", "6")
    page.fill("#ann-comment textarea", "第二条还要再查 check the second article again")
    shown_left = "b" if a.swapped else "a"
    wait_for_draft(
        page,
        app.store,
        name,
        a.item.id,
        lambda d: d["comment"].startswith("第二条") and d[shown_left]["statutes"],
    )
    page.wait_for_selector("#ann-draft:has-text('草稿已自动保存')")
    page.shot(f"{screen(viewport)}-draft-kept", full=False)

    page.reload()  # F5: the annotators' page again
    wait_ready(page)
    assert shown_item(app.store, name, page).item.id == a.item.id
    assert checked(page, "left", 1) == "wrong_number"
    assert page.input_value("#ann-right-rel input") == "6"
    assert page.input_value("#ann-comment textarea") == "第二条还要再查 check the second article again"
    assert "已恢复你未保存的草稿" in page.inner_text("#ann-message")
    assert bar_height(page) <= BAR_LIMIT[screen(viewport)]  # the bar with its message
    page.shot(f"{screen(viewport)}-draft-restored", full=False)

    before = page.inner_text("#ann-status")
    page.click("#ann-verdict-tie")
    wait_saved(page, before)
    label = app.store.label(name, a.item.id)
    assert label["comment"] == "第二条还要再查 check the second article again"
    assert label["answer_labels"][shown_left]["statutes"] == {first: "wrong_number"}
    assert app.store.draft(name, a.item.id) is None  # saved: no draft left
    assert bar_height(page) <= BAR_LIMIT[screen(viewport)]  # "Saved …" in the bar
    page.context.close()


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_none_of_these_is_wrong_never_marks_an_article_that_does_not_exist(browser, app, viewport):
    name = ON[screen(viewport)][1]
    page = page_for(browser, app, name, viewport)
    a = shown_item(app.store, name, page)
    many = "right" if a.swapped else "left"  # answer A cites three articles, the third one made up
    keys = card_keys(page, many)
    assert "第九千条" in keys[2]
    page.click(f"#ann-{many}-none-wrong")
    page.wait_for_function(f"() => document.querySelector('#ann-{many}-mark-2 input:checked') !== null")
    assert [checked(page, many, n) for n in (1, 2, 3)] == ["correct", "correct", None]
    page.shot(f"{screen(viewport)}-none-wrong", full=False)
    # the one-click labels are kept as the draft too
    draft = wait_for_draft(page, app.store, name, a.item.id, lambda d: d["a"]["statutes"])
    assert draft["a"]["statutes"] == {keys[0]: "correct", keys[1]: "correct"}
    page.context.close()


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_the_verdict_bar_is_compact(browser, app, viewport):
    page = page_for(browser, app, ON[screen(viewport)][1], viewport)
    assert bar_height(page) <= BAR_LIMIT[screen(viewport)]
    page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
    box = page.locator("#ann-verdict-both_bad").bounding_box()
    assert 0 <= box["y"] and box["y"] + box["height"] <= BAR_LIMIT[screen(viewport)]  # still at the top
    page.click("#ann-skip")  # a message in the bar
    page.wait_for_selector("#ann-message:has-text('已跳过')")
    wait_ready(page)
    assert bar_height(page) <= BAR_LIMIT[screen(viewport)]
    page.shot(f"{screen(viewport)}-bar-after-skip", full=False)
    page.context.close()


# --------------------------------------------------------------------------- statistics


@pytest.fixture(scope="module")
def stats_app(tmp_path_factory):
    """Two annotators labelled (no Rel or T_LC scores) items of three pairs: p and q, the two best, never
    met; r and s met on four items, p and z on one."""
    folder = tmp_path_factory.mktemp("item7-stats")
    pairs = [("p", "z")] + [("q", "w")] + [("r", "s")] * 4
    items = [Item(f"i{n}", f"问题{n}", f"甲{n}", f"乙{n}", x, y) for n, (x, y) in enumerate(pairs)]
    with AnnotationStore(folder / STORE_FILE) as store:
        store.import_items(items)
    with annotation_app(folder, "root:rootpw:admin,alice:alicepw,bob:bobpw") as running:
        store = running.store
        for name in ("alice", "bob"):
            for n in range(len(items)):
                shown = store.next_item(name)
                verdict = shown.to_shown("A" if shown.item.id in ("i0", "i1") or n % 2 else "tie")
                store.save_label(
                    name, shown.item.id, LabelInput(verdict, AnswerLabel(), AnswerLabel()), f"{name}{n}"
                )
        yield running


#: Each chart (an image in the report) with its section's table before it, whether it is loaded, and
#: whether it lies below the window (so a lazy image would not have been loaded yet).
CHARTS = """() => [...document.querySelectorAll('#st-report [id^="st-chart-"]')].map(figure => {
  // the chart drawn in the page's language: the other language's is not displayed
  const img = [...figure.querySelectorAll('img')].find(i => i.getClientRects().length) || figure.querySelector('img');
  const section = figure.closest('.st-section');
  return {id: figure.id, loaded: img.complete && img.naturalWidth > 0,
          below: img.getBoundingClientRect().top > window.innerHeight,
          table_first: !!section && !!section.querySelector('table') &&
            (section.querySelector('table').compareDocumentPosition(figure) & Node.DOCUMENT_POSITION_FOLLOWING) > 0};
})"""


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_the_statistics_name_the_cause_compare_systems_that_met_and_show_charts_with_tables(
    browser, stats_app, viewport
):
    page = browser.new_context(viewport=viewport, locale="en-US").new_page()  # its notes, in English
    page.goto(page_url(stats_app, "/admin"))  # the admins' page
    page.fill('input[data-testid="textbox"]', "root")
    page.fill('input[data-testid="password"]', "rootpw")
    page.click(LOGIN_BUTTON)
    page.wait_for_selector("[role=tablist] button[role=tab]")
    page.wait_for_function("() => document.body.innerText.includes('Statistics')", timeout=30_000)
    open_tab(page, "Statistics")
    page.click("#st-compute")
    page.wait_for_selector("#st-report .st-section", timeout=60_000)
    report = page.inner_text("#st-report")
    assert "no annotator gave Rel scores" in report and "no annotator gave T_LC scores" in report
    assert "no item is labelled by two or more annotators" not in report
    paired = page.locator(".st-section:has(h3:has-text('Paired bootstrap test')) table")
    header = paired.locator("th").all_inner_texts()
    row = dict(zip(header, paired.locator("tbody tr").first.locator("td").all_inner_texts(), strict=True))
    assert {row["first"], row["second"]} == {"r", "s"} and int(row["met"]) == 4
    page.evaluate("window.scrollTo(0, 0)")
    charts = page.evaluate(CHARTS)
    assert {c["id"] for c in charts} >= {"st-chart-pairs", "st-chart-annotators"}
    assert all(c["loaded"] and c["table_first"] for c in charts), charts
    assert any(c["below"] for c in charts), "a chart below the window is already loaded"
    SHOTS.joinpath("item7").mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "item7" / f"{screen(viewport)}-statistics.png"), full_page=True)
    page.context.close()
