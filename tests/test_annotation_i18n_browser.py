"""The annotators' page (``/annotate``) in one language at a time, in a real browser: signed in, in Chinese
(the default) and in English (a browser asking for ``en-US``), the form as first shown, after a statute is
labelled (its draft kept), after a refused and a saved verdict, and for a deep link to an item that is not
the annotator's: every text a reader sees is in the page's language, or inside an element that says it is
another (the question, the answers and the statutes stay Chinese: ``lang="zh-CN"``), and no key is left
untranslated (:mod:`tests.i18n_checks`).

Skipped without ``/usr/bin/chromium`` unless ``REQUIRE_BROWSER_TESTS=1``.
"""

from __future__ import annotations

import pytest

from eval_ui.service import STORE_FILE
from eval_ui.store import AnnotationStore

from .annotation_pages import DESKTOP, citing_items, page_url, wait_ready
from .fakes.live_app import LOGIN_BUTTON, annotation_app, live_app, require_chromium
from .i18n_checks import page_texts, wrong_language

require_chromium()

sync_api = pytest.importorskip("playwright.sync_api")
pytestmark = [pytest.mark.browser, pytest.mark.filterwarnings("ignore::UserWarning")]

USERS = "root:rootpw:admin,alice:alicepw,bob:bobpw"
#: What the page shows, per language: the status line, a statute's label, the button after the cards.
WORDS = {
    "zh-CN": {"status": "进度", "label": "真实", "none_wrong": "这些都没问题", "draft": "草稿已自动保存"},
    "en-US": {
        "status": "Progress",
        "label": "Correct",
        "none_wrong": "None of these is wrong",
        "draft": "Draft kept",
    },
}
#: The parts of the page this suite checks: the verdict bar (status, buttons, message) and the form.
ROOTS = ("#ann-bar", "#ann-form")


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    folder = tmp_path_factory.mktemp("annotation-i18n")
    with AnnotationStore(folder / STORE_FILE) as store:
        store.import_items(citing_items(6, prefix="i18n"))
    with annotation_app(folder, USERS) as running:
        yield running


def signed_in(browser, app, locale: str, name: str, path: str = "/annotate"):
    context = browser.new_context(locale=locale, viewport=DESKTOP)
    page = context.new_page()
    page.goto(page_url(app, path))
    page.fill('input[data-testid="textbox"]', name)
    page.fill('input[data-testid="password"]', f"{name}pw")
    page.click(LOGIN_BUTTON)
    page.locator("#ann-status strong:visible").first.wait_for()
    return page


def offenders(page) -> list[str]:
    return [bad for root in ROOTS for bad in wrong_language(page_texts(page, root))]


def other(locale: str) -> str:
    return "en-US" if locale == "zh-CN" else "zh-CN"


@pytest.mark.parametrize("locale", ["zh-CN", "en-US"])
def test_the_annotation_page_speaks_one_language(browser, app, locale):
    words, others = WORDS[locale], WORDS[other(locale)]
    page = signed_in(browser, app, locale, "alice")
    wait_ready(page)
    assert page.evaluate("document.documentElement.lang").startswith(locale[:2])
    # the initial state: status, verdicts, the item (Chinese content in its own lang), the cards
    status = page.inner_text("#ann-status")
    assert words["status"] in status and others["status"] not in status
    assert words["none_wrong"] in page.inner_text("#ann-left-none-wrong")
    assert page.locator("#ann-left-mark-1 label").first.inner_text().strip() == words["label"]
    assert page.locator("#ann-question .ann-text[lang='zh-CN']").count() == 1
    assert offenders(page) == []

    # a statute labelled: the radio's choice is translated, the draft's line is in the page's language
    page.locator("#ann-left-mark-1 input[value='correct']").check()
    page.wait_for_selector(f"#ann-draft:has-text('{words['draft']}')", timeout=20_000)
    assert others["draft"] not in page.inner_text("#ann-draft")
    assert offenders(page) == []

    # a score out of range: refused on its field (numbers only), nothing saved
    page.fill("#ann-left-rel input", "11")
    page.click("#ann-verdict-tie")
    page.wait_for_selector("#ann-left-rel .validation-error", timeout=20_000)
    assert offenders(page) == []

    # fixed: the label is saved, the message and the next item in the page's language
    page.fill("#ann-left-rel input", "7")
    before = page.inner_text("#ann-status")
    page.wait_for_timeout(1200)  # the grace period after the item was shown
    page.click("#ann-verdict-tie")
    page.wait_for_function(
        "([s, b]) => document.querySelector(s).innerText !== b", arg=["#ann-status", before], timeout=20_000
    )
    page.wait_for_selector("#ann-message .ll-notice")
    message = page.inner_text("#ann-message")
    assert ("已保存" in message) == (locale == "zh-CN") and ("Saved" in message) == (locale == "en-US")
    wait_ready(page)
    assert offenders(page) == []
    page.context.close()


@pytest.mark.parametrize("locale", ["zh-CN", "en-US"])
def test_a_deep_link_to_someone_elses_item_is_refused_in_the_pages_language(browser, app, locale):
    page = signed_in(browser, app, locale, "bob", "/annotate?item=not-bobs-item")
    page.wait_for_selector("#ann-message .ll-notice.warn")
    message = page.inner_text("#ann-message")
    assert "not-bobs-item" in message
    assert ("不是分配给你的条目" in message) == (locale == "zh-CN")
    assert ("is not one of your items" in message) == (locale == "en-US")
    assert offenders(page) == []
    page.context.close()


@pytest.mark.parametrize("locale", ["zh-CN", "en-US"])
def test_the_page_without_sign_in_says_so_in_one_language(browser, tmp_path, locale):
    with live_app(model=False, LAWLUO_ANNOTATION_DIR=str(tmp_path)) as running:
        page = browser.new_context(locale=locale, viewport=DESKTOP).new_page()
        page.goto(page_url(running, "/annotate"))
        page.wait_for_selector("#ann-not-configured")
        text = page.inner_text("#ann-not-configured")
        assert ("标注尚未开放" in text) == (locale == "zh-CN")
        assert ("Annotation is not set up" in text) == (locale == "en-US")
        assert "LAWLUO_ANNOTATION_USERS" in text
        assert wrong_language(page_texts(page, "#ann-not-configured")) == []
        page.context.close()
