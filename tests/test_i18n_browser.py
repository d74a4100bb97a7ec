"""Each page in one language, the visitor's: Chinese by default, English when the browser asks for it or the
visitor switches (the navbar's "English" / "中文"), in a real browser (Debian's Chromium, headless).

The rule (``tests/i18n_checks.py``): every visible text is in the language of its nearest ``lang`` ancestor —
``<html lang>`` for the page's own texts — no text mixes both languages, and no key shows untranslated. The
area tests (``test_*_i18n_browser.py``) apply it after the pages' actions; this one to each whole page as it
opens, and to the language's choice and switch.
"""

from __future__ import annotations

import pytest

from lawluo.i18n import EN, ZH, text

from .fakes.live_app import live_app, require_chromium
from .i18n_checks import page_texts, wrong_language

require_chromium()
pytest.importorskip("playwright.sync_api")
pytestmark = pytest.mark.browser

PAGES = ["/", "/annotate", "/admin"]


@pytest.fixture(scope="module")
def app():
    with live_app(model=False) as running:
        yield running


def opened(browser, app, path: str, locale: str):
    page = browser.new_page(locale=locale, viewport={"width": 1366, "height": 900})
    page.goto(app.url.rstrip("/") + path)
    page.locator("#ll-navbar nav a").first.wait_for(timeout=30_000)
    page.wait_for_timeout(500)  # the page's load events have rendered
    return page


@pytest.mark.parametrize("path", PAGES)
@pytest.mark.parametrize("locale", ["zh-CN", "en-US"])
def test_each_page_opens_in_one_language(browser, app, path, locale):
    page = opened(browser, app, path, locale)
    try:
        assert page.evaluate("document.documentElement.lang") == ("en" if locale == "en-US" else "zh-CN")
        texts = page_texts(page)
        assert len(texts) > 5
        assert wrong_language(texts) == []
    finally:
        page.close()


@pytest.mark.parametrize(
    ("browser_languages", "shown"),
    [
        ("zh-CN", "zh-CN"),
        ("zh-TW", "zh-CN"),
        ("zh", "zh-CN"),
        ("en-GB", "en"),
        ("fr-FR", "zh-CN"),
        ("ja", "zh-CN"),
    ],
)
def test_the_first_chinese_or_english_language_of_the_browser_decides_and_chinese_is_the_default(
    browser, app, browser_languages, shown
):
    page = opened(browser, app, "/", browser_languages)
    try:
        assert page.evaluate("document.documentElement.lang") == shown
        lang = EN if shown == "en" else ZH
        nav = page.locator("#ll-navbar nav a").first.inner_text().strip()
        assert nav == text("nav.home", lang)
    finally:
        page.close()


def test_the_navbars_switch_reloads_the_page_in_the_other_language_and_the_choice_is_remembered(browser, app):
    context = browser.new_context(locale="zh-CN", viewport={"width": 1366, "height": 900})
    page = context.new_page()
    try:
        page.goto(app.url.rstrip("/") + "/?item=q1")  # the rest of the address survives the switch
        nav = page.locator("#ll-navbar nav")
        nav.locator("a").first.wait_for(timeout=30_000)
        assert nav.locator("a").first.inner_text().strip() == text("nav.home", ZH)
        nav.get_by_role("link", name="English").click()
        page.wait_for_function("document.documentElement.lang === 'en'", timeout=30_000)
        page.get_by_role("tab", name=text("tab.consult", EN)).wait_for(timeout=30_000)
        assert "item=q1" in page.url and "lang=en" in page.url
        assert page.locator("#ll-navbar nav a").first.inner_text().strip() == text("nav.home", EN)
        for key in ("tab.consult", "tab.statutes", "tab.about"):  # every tab, opened or not
            assert page.get_by_role("tab", name=text(key, EN)).count() == 1
        page.wait_for_timeout(500)
        assert wrong_language(page_texts(page)) == []
        page.goto(app.url)  # the next visit, in the same browser: still English
        page.wait_for_function("document.documentElement.lang === 'en'", timeout=30_000)
        page.locator("#ll-navbar nav").get_by_role("link", name="中文").click()
        page.wait_for_function("document.documentElement.lang === 'zh-CN'", timeout=30_000)
        page.get_by_role("tab", name=text("tab.statutes", ZH)).wait_for(timeout=30_000)
        assert page.locator("#ll-navbar nav a").first.inner_text().strip() == text("nav.home", ZH)
    finally:
        context.close()
