"""The whole page runs in Debian's Chromium under the app's Content-Security-Policy (:mod:`lawluo.ui.headers`),
and the policy is enforced.

With no language model configured, a visitor asks a question, the clarification tree renders (``gr.HTML``
templates and ``js_on_load``: ``'unsafe-eval'``), a mark button marks its element, the model-free answer
comes (Gradio's API calls and event streams: ``connect-src 'self'``), and every tab is opened; every
console message and page error is recorded: not one CSP violation, not one error. Then markup written
into the page as an XSS would write it — an ``onerror`` attribute, an inline ``<script>``, an image of
another host — is refused, each with its violation event. Without ``/usr/bin/chromium`` these tests are
skipped — unless ``REQUIRE_BROWSER_TESTS=1``, when they fail instead.
"""

from __future__ import annotations

import pytest

from .fakes.live_app import live_app, require_chromium

require_chromium()

sync_api = pytest.importorskip("playwright.sync_api")

pytestmark = [pytest.mark.browser, pytest.mark.filterwarnings("ignore::UserWarning")]

QUESTION = "我在公司干了两年一直没签劳动合同，现在老板把我辞退了，我能要求什么赔偿？"
BOT = "#ll-chat [data-testid='bot']"
#: Installed before any script of the page: every violation event, in order, for the test to read.
RECORD_VIOLATIONS = """
window.__cspViolations = [];
document.addEventListener('securitypolicyviolation', (e) => window.__cspViolations.push(
    [e.effectiveDirective, e.blockedURI, e.disposition].join(' ')), true);
"""


@pytest.fixture(scope="module")
def app():
    with live_app(model=False) as running:
        yield running


def is_csp(text: str) -> bool:
    return "Content Security Policy" in text or "Refused to" in text


def test_the_page_runs_a_whole_consultation_under_the_policy_without_a_violation(browser, app):
    context = browser.new_context(viewport={"width": 1366, "height": 900})
    context.add_init_script(RECORD_VIOLATIONS)
    page = context.new_page()
    console, errors = [], []
    page.on("console", lambda m: console.append(f"{m.type}: {m.text}"))
    page.on("pageerror", lambda e: errors.append(str(e)))
    response = page.goto(app.url)
    policy = response.headers["content-security-policy"]
    assert "'unsafe-inline'" not in policy.split("script-src")[1].split(";")[0]
    assert "'sha256-" in policy and "frame-ancestors" in policy

    page.wait_for_selector("#ll-question textarea")
    page.fill("#ll-question textarea", QUESTION)
    page.click("#ll-ask")
    page.wait_for_selector('#ll-tree [data-complete="true"]')
    page.wait_for_function("!window.__llSteps && !document.querySelector('#ll-ask').disabled")
    page.click('#ll-tree button[data-node="1"][data-mark="yes"]')
    page.wait_for_selector('#ll-tree .ll-node[data-node="1"][data-mark="yes"]')
    page.wait_for_function("!window.__llSteps && !document.querySelector('#ll-ask').disabled")
    page.click("#ll-submit")
    page.wait_for_selector(BOT)
    page.wait_for_function(
        "(bot) => document.querySelector(bot).innerText.includes('没有经过语言模型')", arg=BOT
    )
    for tab in page.get_by_role("tab").all():  # the statute search, annotation and About tabs render too
        tab.click()
        page.wait_for_timeout(300)
    page.wait_for_timeout(500)
    violations = page.evaluate("window.__cspViolations")
    context.close()

    assert violations == []
    assert [m for m in console if is_csp(m)] == []
    assert errors == []
    assert [m for m in console if m.startswith("error")] == []


def test_markup_an_attacker_gets_into_the_page_is_refused(browser, app):
    """The policy is enforced, not only sent: what would run or leak with no ``script-src`` (the policy
    before) is stopped, and each refusal is reported."""
    context = browser.new_context()
    context.add_init_script(RECORD_VIOLATIONS)
    page = context.new_page()
    page.goto(app.url)
    page.wait_for_selector("#ll-question textarea")
    page.evaluate(
        """() => {
        window.__ran = [];
        const box = document.createElement('div');
        box.innerHTML = '<img src="/no-such-image" onerror="window.__ran.push(\\'onerror\\')">'
            + '<img src="https://attacker.example/leak.png">';
        document.body.append(box);
        const script = document.createElement('script');
        script.textContent = "window.__ran.push('inline')";
        document.body.append(script);
    }"""
    )
    page.wait_for_function("window.__cspViolations.length >= 3")
    ran, violations = page.evaluate("window.__ran"), page.evaluate("window.__cspViolations")
    context.close()
    assert ran == []
    assert "script-src-attr inline enforce" in violations  # the onerror attribute
    assert "script-src-elem inline enforce" in violations  # the inline script
    assert "img-src https://attacker.example/leak.png enforce" in violations
