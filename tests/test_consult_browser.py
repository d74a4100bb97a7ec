"""The consultation tab in a real browser: Debian's Chromium, headless, driven by Playwright, against the
app on loopback with the fake OpenAI-compatible server behind every role.

Screenshots of each step go to ``tests/artifacts/screenshots/`` (not committed). Without
``/usr/bin/chromium`` these tests are skipped — unless ``REQUIRE_BROWSER_TESTS=1`` (set by ``.ci/run``),
when they fail instead.
"""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path

import pytest

from .fakes.firm_models import LAWYER_ANSWER
from .fakes.live_app import live_app, require_chromium

pytestmark = pytest.mark.browser  # every test here drives Chromium

SHOTS = Path(__file__).parent / "artifacts" / "screenshots"
QUESTION = "我在公司干了两年一直没签劳动合同，现在老板把我辞退了，我能要求什么赔偿？"
HOSTILE_QUESTION = (
    '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">公司拖欠我三个月工资怎么办？'
)
# Chinese enough to pass the answer check (lawluo/agents/answer_check.py), markup that must stay text
HOSTILE_ANSWER = '建议您保留工资条、考勤记录和聊天记录，向当地劳动人事争议仲裁委员会申请劳动仲裁。<script>window.__pwned=3</script><img src=x onerror="window.__pwned=4">'

require_chromium()

sync_api = pytest.importorskip("playwright.sync_api")


@pytest.fixture(scope="module")
def app():
    # ~40 tokens/s so the answer visibly streams; each call waits 0.2 s like a (fast) real server
    with live_app(latency=0.2, tokens_per_second=40) as running:
        yield running


@pytest.fixture
def page(browser, app, request):
    folder = SHOTS / request.node.name
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
    page = context.new_page()
    page.dialogs = []
    page.on("dialog", lambda d: (page.dialogs.append(d.message), d.dismiss()))
    page.goto(app.url)
    page.wait_for_selector("#ll-question textarea")
    page.shots = iter(range(1, 100))
    page.shot = lambda name: page.screenshot(
        path=str(folder / f"{next(page.shots):02d}-{name}.png"), full_page=True
    )
    yield page
    context.close()


def ask(page, question: str) -> None:
    page.fill("#ll-question textarea", question)
    page.click("#ll-ask")


def message(page) -> str:
    return page.inner_text("#ll-message")


def test_a_consultation_from_question_to_downloaded_report(page, app, tmp_path):
    page.shot("start")
    ask(page, QUESTION)
    page.wait_for_selector('#ll-routing .ll-domain[data-domain="labor"]')
    assert "劳动纠纷" in page.inner_text("#ll-routing")
    page.wait_for_selector('#ll-tree [data-complete="true"]')
    page.shot("domain-and-tree")

    page.click('#ll-tree button[data-node="1"][data-mark="yes"]')
    page.wait_for_selector('#ll-tree .ll-node[data-node="1"][data-mark="yes"]')
    assert page.is_visible('#ll-tree .ll-node[data-node="2.1"]')
    page.click('#ll-tree button[data-node="2"][data-mark="no"]')
    page.wait_for_selector('#ll-tree .ll-node[data-node="2"][data-mark="no"]')
    assert page.locator('#ll-tree .ll-node[data-node="2.1"]').count() == 0  # the No folded its subtree
    assert "已折叠 3 个下级要素" in page.inner_text("#ll-tree")
    page.click('#ll-tree .ll-node[data-node="1"] summary')  # a node's supporting cases, one click away
    assert page.is_visible('#ll-tree .ll-node[data-node="1"] details .ll-text')
    page.shot("marked")

    page.evaluate(
        """() => {
        window.__lengths = [];
        const chat = document.querySelector('#ll-chat');
        new MutationObserver(() => {
          const bots = chat.querySelectorAll('[data-testid="bot"]');
          if (bots.length) window.__lengths.push(bots[bots.length - 1].innerText.length);
        }).observe(chat, {subtree: true, childList: true, characterData: true});
      }"""
    )
    page.click("#ll-submit")
    page.wait_for_selector("#ll-citations .ll-badge.ok")
    page.shot("answered")
    lengths = sorted(set(page.evaluate("window.__lengths")))
    assert len([n for n in lengths if 0 < n < len(LAWYER_ANSWER)]) >= 3  # the answer grew piece by piece
    chat = page.inner_text("#ll-chat")
    assert "每月支付二倍的工资" in chat and "引用核查：条文存在·内容相符" in chat and "P(更好)" not in chat
    citations = page.inner_text("#ll-citations")
    assert "条文存在·内容相符" in citations and "查无此条" in citations
    page.click("#ll-citations details summary")  # the real article text, on demand
    assert "二倍的工资" in page.inner_text("#ll-citations details")
    lawyer_input = app.responder.lawyer_requests[-1][-1]["content"]
    assert "要素" in lawyer_input  # the confirmed fact reached the lawyer

    page.click("#ll-end")
    page.wait_for_selector("#ll-download-docx", state="visible")
    report = page.inner_text("#ll-report")
    assert (
        "法律分析" in report and "风险提示" in report and "引用法条及核查结果" in report and "声明" in report
    )
    page.shot("report")
    with page.expect_download() as download:
        page.click("#ll-download-docx")
    docx = tmp_path / "report.docx"
    download.value.save_as(docx)
    with zipfile.ZipFile(docx) as archive:
        assert "法律建议" in archive.read("word/document.xml").decode("utf-8")
    with page.expect_download() as download:
        page.click("#ll-download-md")
    md = tmp_path / "report.md"
    download.value.save_as(md)
    assert "## 法律建议" in md.read_text(encoding="utf-8")
    page.click("#ll-trace-accordion")  # a closed accordion's content is drawn when it opens
    page.wait_for_selector('#ll-trace tr[data-agent="secretary"]')
    assert page.locator('#ll-trace tr[data-agent="secretary"]').count() == 1
    page.shot("trace")


def test_hostile_html_in_the_question_and_the_answer_renders_as_text(page, app):
    app.responder.lawyer_answer = HOSTILE_ANSWER
    try:
        page.click("#ll-use-tolc-accordion")
        page.uncheck("#ll-use-tolc input")
        ask(page, HOSTILE_QUESTION)
        page.wait_for_function(  # the answer cites no statute: the panel says so once it is checked
            "document.querySelector('#ll-citations').innerText.includes('没有引用具体法条')"
        )
    finally:
        app.responder.lawyer_answer = LAWYER_ANSWER
    page.shot("hostile")
    chat = page.inner_text("#ll-chat")
    assert "<script>window.__pwned=1</script>" in chat and 'onerror="window.__pwned=4"' in chat
    assert page.evaluate("window.__pwned") is None and page.dialogs == []
    assert page.locator("#ll-chat img[src=x], #ll-chat script").count() == 0


def test_empty_and_overlong_questions_get_a_clear_message_and_lose_nothing(page):
    page.click("#ll-ask")
    page.wait_for_selector("#ll-message .ll-notice.warn")
    assert "请输入您的问题" in message(page)
    long_question = "我" * 20_000
    page.fill("#ll-question textarea", long_question)
    page.click("#ll-ask")
    page.wait_for_function("document.querySelector('#ll-message').innerText.includes('问题过长')")
    page.shot("too-long")
    assert "20,000" in message(page) and "4,000" in message(page)
    assert page.input_value("#ll-question textarea") == long_question  # nothing typed is lost
    assert page.locator("#ll-chat [data-testid='user']").count() == 0


def test_a_double_submit_runs_the_pipeline_once(page, app):
    before = dict(app.responder.calls)
    page.fill("#ll-question textarea", QUESTION)
    page.dblclick("#ll-ask")
    page.press("#ll-question textarea", "Enter")
    page.wait_for_selector('#ll-tree [data-complete="true"]')
    page.wait_for_timeout(1000)  # let a second run, if one had started, show itself
    page.shot("double-submit")
    assert page.locator("#ll-chat [data-testid='user']").count() == 1
    page.click("#ll-trace-accordion")
    page.wait_for_selector('#ll-trace tr[data-agent="clarifier"]')
    assert page.locator('#ll-trace tr[data-agent="receptionist"]').count() == 1
    assert app.responder.calls.get("clarifier", 0) - before.get("clarifier", 0) == 4  # one H=3, K=3 tree


def test_a_consultation_is_saved_and_a_malformed_file_is_refused(page, tmp_path):
    ask(page, QUESTION)
    page.wait_for_selector('#ll-tree [data-complete="true"]')
    page.click("#ll-save-accordion")
    page.click("#ll-save")
    page.wait_for_selector("#ll-saved a, #ll-saved .file-preview", state="attached")
    bad = tmp_path / "broken.json"
    bad.write_text("{not json", encoding="utf-8")
    page.set_input_files('input[type=file][accept=".json"]', str(bad))  # the resume button's input
    page.wait_for_function("document.querySelector('#ll-message').innerText.includes('无法恢复')")
    page.shot("resume-refused")
    assert "invalid JSON" in message(page)
    assert page.locator("#ll-chat [data-testid='user']").count() == 1  # the consultation is still there
