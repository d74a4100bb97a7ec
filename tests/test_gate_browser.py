"""A visitor refused by the queue gate reads why, in the page, in plain words (not a blank or a stack trace)."""

from __future__ import annotations

import pytest

from lawluo.i18n import text

from .fakes.live_app import live_app, require_chromium

require_chromium()
pytest.importorskip("playwright.sync_api")
pytestmark = pytest.mark.browser


def test_a_visitor_over_the_request_limit_is_told_to_wait_in_the_page(browser):
    with live_app(model=False, LAWLUO_REQUESTS_PER_MINUTE="6") as app:
        page = browser.new_page(viewport={"width": 1366, "height": 768})
        try:
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto(app.url)
            page.get_by_role("tab", name=text("tab.statutes")).first.click()
            page.locator("#ll-statute-query textarea").fill("借条 还款")
            # A click past the limit is refused (429) and the page says why at once; a later click that the
            # refilled bucket admits may replace the message, so look after each click, not after the last.
            told = ""
            for _ in range(12):
                page.get_by_role("button", name=text("statute.search_button")).first.click()
                page.wait_for_timeout(400)  # each search done before the next click (trigger_mode "once")
                toast = page.locator(".toast-body").filter(has_text="请求过于频繁")
                if toast.count():
                    told = toast.first.inner_text()
                    break
            # in the page's language (Chinese): the toast renders the refusal's HTML, the page shows its own
            assert "秒后再试" in told and "Too many requests" not in told and not errors
        finally:
            page.close()
