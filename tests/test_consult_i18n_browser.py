"""The consultation tab in one language at a time: Chinese for a browser that asks for Chinese, English for
one that asks for English, and on each page no text in the other language (outside the elements marked with
their own ``lang``: a question, the tree's facts, a statute), no untranslated key, no mixed label.

The app runs with no model (``live_app(model=False)``); each language is checked on a phone (390×844) as the
page opens (the question box on the first screen), with a question asked and its clarification tree shown
(the folded panels opened), and once the lawyer's answer and its checked citations are in.
"""

from __future__ import annotations

import pytest

from .fakes.live_app import live_app, require_chromium
from .i18n_checks import page_texts, wrong_language

pytestmark = pytest.mark.browser  # every test here drives Chromium

require_chromium()

sync_api = pytest.importorskip("playwright.sync_api")

QUESTION = "我在公司干了两年一直没签劳动合同，现在老板把我辞退了，我能要求什么赔偿？"
PHONE = {"width": 390, "height": 844}
ROOT = "#ll-consult"
#: What each language's page shows: Ask, the tree's title, a mark button, the domain chosen by the receptionist.
WORDS = {
    "zh-CN": {
        "ask": "提问",
        "title": "法律要素澄清树",
        "yes": "是",
        "domain": "劳动纠纷",
        "html": "zh",
        "confirm": "开始新的咨询？",
    },
    "en-US": {
        "ask": "Ask",
        "title": "Tree of Legal Clarifications",
        "yes": "Yes",
        "domain": "Labour disputes",
        "html": "en",
        "confirm": "Start a new consultation?",
    },
}
FOLDS = ("#ll-intro-more", "#ll-use-tolc-accordion", "#ll-save-accordion", "#ll-trace-accordion")


@pytest.fixture(scope="module")
def plain_app():
    with live_app(model=False) as running:
        yield running


def one_language(page) -> None:
    assert wrong_language(page_texts(page, ROOT)) == []


@pytest.mark.parametrize("locale", list(WORDS))
def test_the_consultation_speaks_the_browsers_language_on_a_phone(browser, plain_app, locale):
    words = WORDS[locale]
    context = browser.new_context(locale=locale, viewport=PHONE)
    page = context.new_page()
    try:
        page.goto(plain_app.url)
        page.wait_for_selector("#ll-question textarea")
        page.wait_for_timeout(500)  # the intro's and the banner's late renders
        assert page.evaluate("document.documentElement.lang").startswith(words["html"])
        box = page.locator("#ll-question textarea").bounding_box()
        assert box["y"] + box["height"] <= PHONE["height"]  # the question box is on the first screen
        assert page.inner_text("#ll-ask").strip() == words["ask"]
        one_language(page)

        page.fill("#ll-question textarea", QUESTION)
        page.click("#ll-ask")
        page.wait_for_selector("#ll-tree button[data-mark]:not([disabled])", timeout=60_000)
        page.wait_for_function("() => !document.querySelector('#ll-ask').disabled", timeout=60_000)
        for fold in FOLDS:
            page.click(f"{fold} > button")
        page.wait_for_timeout(500)
        assert words["title"] in page.inner_text("#ll-tree-title")
        assert page.inner_text("#ll-tree button[data-mark='yes'] >> nth=0").strip() == words["yes"]
        assert words["domain"] in page.inner_text("#ll-routing")
        assert page.input_value("#ll-domain input") == words["domain"]  # the menu's choice, translated
        assert page.get_attribute("#ll-chat [data-testid='user']", "lang") == "zh-CN"  # the question itself
        one_language(page)
        dialogs = []
        page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
        page.click("#ll-new")  # asks first, in the page's language; a "No" keeps everything
        page.wait_for_timeout(300)
        assert len(dialogs) == 1 and dialogs[0].startswith(words["confirm"])
        assert page.locator("#ll-chat [data-testid='user']").count() == 1

        page.click("#ll-submit")
        page.wait_for_selector("#ll-chat [data-testid='bot']", timeout=60_000)
        page.wait_for_function("() => !document.querySelector('#ll-ask').disabled", timeout=60_000)
        page.click("#ll-retrieved-accordion > button")
        page.wait_for_timeout(500)
        assert page.locator("#ll-citations .ll-card").count() > 0  # the answer's checked citations
        one_language(page)
    finally:
        context.close()
