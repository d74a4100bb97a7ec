"""The statute lookup tab (法条检索), the About tab and the gate's refusals in one language, the visitor's:
Chinese by default, English when the browser asks for it, in a real browser (Debian's Chromium, headless).

The rule is ``tests/i18n_checks.py``'s: every visible text is in the language of its nearest ``lang``
ancestor (a law's name, an article's text or a question stay Chinese on the English page, declared so), no
text mixes both languages, no key shows untranslated — on the tab as it opens, after a search, a case
search and a citation check with its verdicts, on the About tab, and in the toast of a refused request.
"""

from __future__ import annotations

import pytest

from lawluo.i18n import EN, ZH, text

from .fakes.live_app import live_app, require_chromium
from .i18n_checks import page_texts, wrong_language

require_chromium()
pytest.importorskip("playwright.sync_api")
pytestmark = pytest.mark.browser

LOCALES = {"zh-CN": ZH, "en-US": EN}
#: An answer with a right citation and one of a repealed law: two verdicts, the real article folded.
ANSWER = (
    "根据《中华人民共和国民法典》第一千零七十九条规定：“夫妻一方要求离婚的，可以由有关组织进行调解或者直接向"
    "人民法院提起离婚诉讼。”另依据《合同法》第一百零七条：“当事人一方不履行合同义务或者履行合同义务不符合约定的，"
    "应当承担继续履行、采取补救措施或者赔偿损失等违约责任。”"
)


@pytest.fixture(scope="module")
def app():
    with live_app(model=False) as running:
        yield running


def statute_tab(browser, app, locale: str):
    """A page in ``locale`` on the statute lookup tab."""
    page = browser.new_page(locale=locale, viewport={"width": 1366, "height": 900})
    page.goto(app.url)
    lang = LOCALES[locale]
    page.get_by_role("tab", name=text("tab.statutes", lang)).first.click()
    page.locator("#ll-statute-query textarea").wait_for(timeout=30_000)
    page.wait_for_timeout(300)
    return page


def assert_one_language(page, where: str = "body") -> None:
    texts = page_texts(page, where)
    assert len(texts) > 3
    assert wrong_language(texts) == []


@pytest.mark.parametrize("locale", ["zh-CN", "en-US"])
def test_the_statute_tab_searches_and_checks_in_one_language(browser, app, locale):
    lang = LOCALES[locale]
    other = EN if lang == ZH else ZH
    page = statute_tab(browser, app, locale)
    try:
        assert_one_language(page)
        # the query boxes take Chinese: they say so, their Chinese examples too
        assert page.locator("#ll-statute-query textarea").get_attribute("lang") == "zh-CN"
        assert page.get_by_text(text("statute.check_button", lang)).count() >= 1
        assert page.get_by_text(text("statute.check_button", other)).count() == 0

        # a statute search: the cards, a law named by its article first
        page.locator("#ll-statute-query textarea").fill("劳动合同法第82条")
        page.get_by_role("button", name=text("statute.search_button", lang)).first.click()
        page.locator(".ll-card").first.wait_for(timeout=30_000)
        assert page.get_by_text(text("statute.exact_article", lang), exact=True).first.is_visible()
        assert_one_language(page)

        # a case search
        page.locator("#ll-case-query textarea").fill("醉酒驾驶机动车")
        page.get_by_role("button", name=text("statute.search_button", lang)).nth(1).click()
        page.get_by_text(text("statute.cites", lang), exact=True).first.wait_for(timeout=30_000)
        assert_one_language(page)

        # an example fills the answer; a citation check shows its verdicts
        example = page.locator("#ll-check-examples").get_by_text(
            "Repealed law" if lang == EN else "已废止（合同法", exact=False
        )
        example.first.click()
        page.wait_for_function(
            "() => document.querySelector('#ll-check-answer textarea').value.includes('合同法')",
            timeout=10_000,
        )
        page.locator("#ll-check-answer textarea").fill(ANSWER)
        page.get_by_role("button", name=text("statute.check_button", lang)).click()
        badge = page.locator('#ll-check-list [data-verdict="repealed"]').first
        badge.wait_for(timeout=30_000)
        assert badge.inner_text().strip() == text("statute.verdict.repealed", lang)
        verified = page.locator('#ll-check-list [data-verdict="verified"]').first.inner_text().strip()
        assert verified == text("statute.verdict.verified", lang)
        page.locator("#ll-check-list details summary").first.click()  # the real article, unfolded
        page.locator("details.ll-advanced summary").first.click()  # NHSR, for researchers
        page.wait_for_timeout(300)
        assert "NHSR 1/2 = 0.50" in page.locator(".ll-nhsr").first.inner_text()
        assert_one_language(page)
    finally:
        page.close()


@pytest.mark.parametrize("locale", ["zh-CN", "en-US"])
def test_a_refused_query_and_a_bad_date_are_said_in_one_language(browser, app, locale):
    lang = LOCALES[locale]
    page = statute_tab(browser, app, locale)
    try:
        page.get_by_role("button", name=text("statute.search_button", lang)).first.click()  # nothing typed
        notice = page.locator(".ll-notice.warn:visible").first
        notice.wait_for(timeout=30_000)
        said = notice.inner_text()
        assert ("empty query" in said) == (lang == EN) and ("请输入问题或关键词" in said) == (lang == ZH)
        page.locator("#ll-check-answer textarea").fill(ANSWER)
        page.locator("#ll-check-as-of input, #ll-check-as-of textarea").first.fill("yesterday")
        page.get_by_role("button", name=text("statute.check_button", lang)).click()
        page.get_by_text("YYYY-MM-DD" if lang == EN else "日期请写成", exact=False).last.wait_for(
            timeout=30_000
        )
        assert_one_language(page)
    finally:
        page.close()


@pytest.mark.parametrize("locale", ["zh-CN", "en-US"])
def test_the_about_tab_is_in_one_language(browser, app, locale):
    lang = LOCALES[locale]
    page = browser.new_page(locale=locale, viewport={"width": 1366, "height": 900})
    try:
        page.goto(app.url)
        page.get_by_role("tab", name=text("tab.about", lang)).first.click()
        page.locator(".ll-models").first.wait_for(timeout=30_000)
        page.get_by_text(text("app.advanced", lang), exact=True).last.click()  # the operator's part
        page.wait_for_timeout(500)
        assert page.get_by_text(text("about.role_help.lawyer", lang)).first.is_visible()
        heading = "About LawLuo" if lang == EN else "关于 LawLuo 律罗"
        assert page.get_by_role("heading", name=heading).is_visible()
        assert_one_language(page)
    finally:
        page.close()


@pytest.mark.parametrize("locale", ["zh-CN", "en-US"])
def test_a_visitor_over_the_request_limit_reads_why_in_the_pages_language(browser, locale):
    lang = LOCALES[locale]
    told = (
        text("app.gate_too_fast", lang, seconds=0).split("0")[0].strip()
    )  # "请求过于频繁，请" / "Too many …"
    with live_app(model=False, LAWLUO_REQUESTS_PER_MINUTE="6") as limited:
        page = statute_tab(browser, limited, locale)
        try:
            page.locator("#ll-statute-query textarea").fill("借条 还款")
            toast = page.locator(".toast-body").filter(has_text=told)
            for _ in range(12):
                page.get_by_role("button", name=text("statute.search_button", lang)).first.click()
                page.wait_for_timeout(400)
                if toast.count():
                    break
            assert toast.count(), "no refusal toast"
            assert wrong_language(page_texts(page, ".toast-body")) == []
            other = text("app.gate_too_fast", EN if lang == ZH else ZH, seconds=0).split("0")[0].strip()
            assert other not in page.locator(".toast-body").first.inner_text()
        finally:
            page.close()


@pytest.mark.parametrize("locale", ["zh-CN", "en-US"])
def test_the_login_pages_notice_is_in_one_language(browser, tmp_path, locale):
    """``launch(auth_message=…)``: Gradio's login page shows it as HTML, with the page's CSS."""
    from .fakes.live_app import annotation_app

    lang = LOCALES[locale]
    with annotation_app(tmp_path, "alice:alicepw") as running:
        page = browser.new_page(locale=locale, viewport={"width": 1366, "height": 900})
        try:
            page.goto(running.url)
            page.locator('input[data-testid="password"]').wait_for(timeout=30_000)
            page.wait_for_timeout(300)
            body = page.inner_text("body")
            assert (
                text("app.sign_in", lang) in body
                and text("app.sign_in", EN if lang == ZH else ZH) not in body
            )
            assert wrong_language(page_texts(page)) == []
        finally:
            page.close()
