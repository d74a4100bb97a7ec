"""The labelling form in a real browser (Debian's Chromium, headless): what an annotator sees and does.

- the verdict buttons are on screen when an item loads on a 1366×768 screen, and stay there while the
  annotator scrolls through the answers (a sticky bar); on a 390×844 phone as well;
- keys 1–4 work right after clicking a statute's label (the focus is on the radio button);
- a score of 11 or −1 is refused on that field alone, in Chinese and English, and the label is saved
  once it is fixed;
- the comment counts its characters; one over the limit is refused on the field and nothing is cut;
- 这些都没问题 marks the statutes not yet labelled, and found by the checker as cited, as correct, keeps a
  label already given, and leaves an article that does not exist unlabelled; a statute left unlabelled
  is saved as unlabelled and the message says how many;
- annotators see no admin tools and no adjudication tab; sign-out ends the session;
- without a way to sign in the tab says so once, in plain words, and shows no form.

Screenshots (desktop and phone) go to ``tests/artifacts/screenshots/annotation-form/``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from eval_ui.label_form import MAX_COMMENT_CHARS
from eval_ui.service import STORE_FILE
from eval_ui.store import AnnotationStore

from .annotation_pages import (
    DESKTOP,
    PHONE,
    SHOTS,
    card_keys,
    checked,
    citing_items,
    page_url,
    shown_item,
    sign_in,
    tab_names,
    wait_ready,
    wait_saved,
)
from .fakes.live_app import annotation_app, live_app, require_chromium

USERS = "root:rootpw:admin,alice:alicepw,bob:bobpw,carol:carolpw,dave:davepw,erin:erinpw"
VERDICTS = ("left", "right", "tie", "both_bad")

require_chromium()

sync_api = pytest.importorskip("playwright.sync_api")
pytestmark = [pytest.mark.browser, pytest.mark.filterwarnings("ignore::UserWarning")]


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    folder = tmp_path_factory.mktemp("annotation-form")
    with AnnotationStore(folder / STORE_FILE) as store:  # these items instead of the demo set
        store.import_items(citing_items(12))
    with annotation_app(folder, USERS) as running:
        yield running


def page_for(browser, app, name: str, viewport: dict | None = None):
    page = sign_in(browser, app, name, f"{name}pw", viewport, shots="annotation-form")
    wait_ready(page)
    return page


def in_viewport(page, selector: str, viewport: dict) -> bool:
    box = page.locator(selector).bounding_box()
    return (
        box is not None
        and box["y"] >= 0
        and box["y"] + box["height"] <= viewport["height"]
        and box["x"] >= 0
        and box["x"] + box["width"] <= viewport["width"]
    )


@pytest.mark.parametrize(("viewport", "label"), [(DESKTOP, "desktop"), (PHONE, "phone")])
def test_the_verdict_buttons_are_on_screen_when_an_item_loads_and_while_scrolling(
    browser, app, viewport, label
):
    page = page_for(browser, app, "alice", viewport)
    page.shot(f"{label}-loaded", full=False)
    for v in VERDICTS:
        assert in_viewport(page, f"#ann-verdict-{v}", viewport), f"{v} is off screen on the {label}"
    page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
    assert page.evaluate("window.scrollY") > 300  # the page did scroll
    for v in VERDICTS:
        assert in_viewport(page, f"#ann-verdict-{v}", viewport), f"{v} scrolled away on the {label}"
    page.shot(f"{label}-scrolled-to-the-end", full=False)
    page.shot(f"{label}-whole-page")
    page.context.close()


def test_keys_work_right_after_labelling_a_statute(browser, app):
    page = page_for(browser, app, "bob")
    a = shown_item(app.store, "bob", page)
    left = card_keys(page, "left")
    assert left, "every item of this test cites statutes"
    page.click("#ann-left-mark-1 label:has(input[value='wrong'])")
    assert page.evaluate("document.activeElement.type") == "radio"  # the focus stays on the label
    before = page.inner_text("#ann-status")
    page.keyboard.press("2")
    wait_saved(page, before)
    label = app.store.label("bob", a.item.id)
    assert label["verdict"] == a.unswap("right")
    shown_left = "b" if a.swapped else "a"
    assert label["answer_labels"][shown_left]["statutes"] == {left[0]: "wrong"}
    page.shot("saved-with-key-2")
    page.context.close()


def test_an_out_of_range_score_is_refused_on_its_field_alone(browser, app):
    page = page_for(browser, app, "carol")
    a = shown_item(app.store, "carol", page)
    fields = ("#ann-left-rel", "#ann-left-tlc", "#ann-right-rel", "#ann-right-tlc", "#ann-comment")
    for bad in ("11", "-1"):
        page.fill("#ann-left-rel input", bad)
        page.fill("#ann-right-tlc input", "5")
        page.click("#ann-verdict-tie")
        page.wait_for_function(  # this refusal's message, not the previous one's
            "(bad) => (document.querySelector('#ann-left-rel div.validation-error') || {}).innerText?.includes(bad)",
            arg=f"{bad} ∉ [0, 10]",
            timeout=15000,
        )
        error = page.locator("#ann-left-rel div.validation-error")
        assert error.inner_text().strip() == f"{bad} ∉ [0, 10]"  # numbers only: Gradio does not translate it
        for other in fields[1:]:
            assert page.locator(f"{other} .validation-error").count() == 0, other
        assert not page.is_disabled("#ann-verdict-tie")  # nothing is in flight: the buttons stay usable
        assert app.store.label("carol", a.item.id) is None
    page.shot("score-refused-on-its-field", full=False)
    page.fill("#ann-left-rel input", "7")
    before = page.inner_text("#ann-status")
    page.click("#ann-verdict-tie")
    wait_saved(page, before)
    assert page.locator(".validation-error:visible").count() == 0
    mine = app.store.label("carol", a.item.id)["answer_labels"]
    shown_left, shown_right = ("b", "a") if a.swapped else ("a", "b")
    assert mine[shown_left]["rel"] == 7 and mine[shown_right]["tlc"] == 5
    page.context.close()


def test_the_comment_counts_its_characters_and_one_over_the_limit_is_refused_not_cut(browser, app):
    page = page_for(browser, app, "dave")
    a = shown_item(app.store, "dave", page)
    long = "好" * (MAX_COMMENT_CHARS + 1)
    page.fill("#ann-comment textarea", long)
    counter = page.locator("#ann-comment-count")
    page.wait_for_function(
        "(text) => document.getElementById('ann-comment-count').textContent.startsWith(text)",
        arg=f"{MAX_COMMENT_CHARS + 1:,} / {MAX_COMMENT_CHARS:,}",
    )
    assert "超出 1" in counter.inner_text() and "over by" not in counter.inner_text()  # the page's language
    assert "over" in counter.get_attribute("class")
    page.click("#ann-verdict-right")
    error = page.locator("#ann-comment div.validation-error")
    error.wait_for(timeout=15000)
    assert error.inner_text().strip() == f"{MAX_COMMENT_CHARS + 1:,} > {MAX_COMMENT_CHARS:,}"  # numbers only
    assert page.input_value("#ann-comment textarea") == long  # every character is still there
    assert app.store.label("dave", a.item.id) is None
    page.shot("comment-over-the-limit", full=False)
    page.fill("#ann-comment textarea", "短评 short")
    page.wait_for_function(
        "() => document.getElementById('ann-comment-count').textContent.startsWith('8 / ')"
    )
    before = page.inner_text("#ann-status")
    page.click("#ann-verdict-right")
    wait_saved(page, before)
    assert app.store.label("dave", a.item.id)["comment"] == "短评 short"
    page.context.close()


def test_none_of_these_is_wrong_fills_the_unlabelled_and_the_rest_stay_unlabelled(browser, app):
    page = page_for(browser, app, "erin")
    a = shown_item(app.store, "erin", page)
    # the answer citing three statutes (answer A) is labelled, the one citing one is left alone
    many, few = ("right", "left") if a.swapped else ("left", "right")
    keys, other = card_keys(page, many), card_keys(page, few)
    assert len(keys) == 3 and len(other) == 1
    page.click(f"#ann-{many}-mark-1 label:has(input[value='wrong'])")
    page.click(f"#ann-{many}-none-wrong")
    page.wait_for_function(f"() => document.querySelector('#ann-{many}-mark-2 input:checked') !== null")
    assert checked(page, many, 1) == "wrong"  # a label already given is kept
    assert "第九千条" in keys[2]  # the Civil Code has no article 9000: never "correct" in one click
    assert [checked(page, many, n) for n in (2, 3)] == ["correct", None]
    assert checked(page, few, 1) is None
    page.shot("none-of-these-is-wrong", full=False)
    before = page.inner_text("#ann-status")
    page.keyboard.press("3")  # the focus is on the button just clicked: a key still gives the verdict
    wait_saved(page, before)
    message = page.inner_text("#ann-message")
    assert "其中 2 条法条未标注" in message and "left unlabelled" not in message  # the page's language only
    stored = app.store.label("erin", a.item.id)["answer_labels"]
    assert stored["a"]["statutes"] == {keys[0]: "wrong", keys[1]: "correct"}
    assert stored["b"]["statutes"] == {}  # unlabelled: missing, never "correct"
    page.context.close()


def test_annotators_see_no_admin_tools_and_the_admin_does(browser, app):
    alice = page_for(browser, app, "alice")
    assert not alice.locator("#ann-admin").is_visible()
    alice.goto(page_url(app, "/admin"))  # the admins' page: a clear message, no admin tab
    alice.wait_for_selector("#admin-notice:has-text('This page is for admins')", timeout=30_000)
    assert "/annotate" in alice.inner_text("#admin-notice")
    for tab in ("裁决", "统计"):
        assert not any(t.is_visible() for t in alice.get_by_role("tab", name=tab).all()), tab
    root = sign_in(browser, app, "root", "rootpw", shots="annotation-form")
    root.wait_for_selector("#ann-admin", state="visible")
    root.goto(page_url(app, "/admin"))
    root.wait_for_selector("#admin-notice", state="hidden", timeout=30_000)
    assert {"裁决", "统计"} <= set(tab_names(root))
    for page in (alice, root):
        page.context.close()


def test_sign_out_ends_the_session(browser, app):
    page = page_for(browser, app, "alice")
    page.click("#ann-signout")
    page.wait_for_selector('input[data-testid="password"]', timeout=15000)
    page.goto(app.url)  # still signed out: the login form again, no annotation tab
    page.wait_for_selector('input[data-testid="password"]', timeout=15000)
    assert page.locator("#ann-status").count() == 0
    page.shot("signed-out", full=False)
    page.context.close()


def test_without_sign_in_the_tab_says_so_once_and_shows_no_form(browser, tmp_path):
    with live_app(model=False, LAWLUO_ANNOTATION_DIR=str(tmp_path)) as app:
        page = browser.new_context(viewport=DESKTOP).new_page()
        page.goto(page_url(app, "/annotate"))
        page.wait_for_selector("#ann-not-configured")
        text = page.inner_text("body")  # Chinese, the browser's language: said once, in one language
        assert text.count("标注尚未开放") == 1 and "Annotation is not set up" not in text
        assert "`" not in page.inner_text("#ann-not-configured")
        for form_part in ("#ann-verdict-left", "#ann-status", "#ann-comment", "#ann-left-mark-1"):
            assert page.locator(form_part).count() == 0, form_part
        folder = SHOTS / "annotation-form"
        folder.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / "not-configured.png"))
        page.context.close()
