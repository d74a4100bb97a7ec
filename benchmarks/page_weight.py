"""How many bytes a first visit to a page of the web app transfers, in a real browser with no cache.

    python benchmarks/page_weight.py                         # GET / of this checkout
    python benchmarks/page_weight.py --paths / /annotate /admin
    python benchmarks/page_weight.py --root /tmp/pw_head     # another checkout (e.g. `git archive HEAD`)

``python app.py`` of ``--root`` starts in a fresh process on a free loopback port with no ``LAWLUO_*`` or
``OPENAI_*`` variable (no language model, no annotators: what a fresh clone and a public Space serve).
Once ``GET /`` answers 200, each path is opened in a new headless Chromium context (Debian's, as the
tests run it: no cache, no cookies, the browser's cache also disabled through the DevTools protocol) at
1366×768, and the page is left until the network has been quiet for 2 s (Gradio's page-load events
done). Printed per path: the requests, the bytes transferred (``Network.loadingFinished``'s
``encodedDataLength``: headers and the body as sent, compressed where the server compressed it) and the
decoded body bytes, the largest responses by type, and the requests still open when measured (the
event stream and the heartbeat, whose few bytes are not counted).
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from _common import wait_for

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

QUIET_S = 2.0
START_TIMEOUT_S = 120.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_app(root: Path, port: int) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LAWLUO_", "OPENAI_"))}
    env.update(GRADIO_SERVER_NAME="127.0.0.1", GRADIO_SERVER_PORT=str(port), PYTHONUNBUFFERED="1")
    return subprocess.Popen(
        [sys.executable, "app.py"], cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )


def weigh(browser, url: str) -> dict:
    """Open ``url`` in a fresh context with the cache off; what the network carried until it was quiet."""
    context = browser.new_context(viewport={"width": 1366, "height": 768})
    page = context.new_page()
    cdp = context.new_cdp_session(page)
    cdp.send("Network.enable")
    cdp.send("Network.setCacheDisabled", {"cacheDisabled": True})
    started: dict[str, dict] = {}
    finished: dict[str, int] = {}
    decoded: Counter[str] = Counter()
    last = [time.perf_counter()]

    def on_response(event: dict) -> None:
        started.setdefault(event["requestId"], {})["type"] = event.get("type", "Other")
        started[event["requestId"]]["url"] = event["response"]["url"]
        last[0] = time.perf_counter()

    def on_data(event: dict) -> None:
        decoded[event["requestId"]] += event.get("dataLength", 0)
        last[0] = time.perf_counter()

    def on_finished(event: dict) -> None:
        finished[event["requestId"]] = int(event.get("encodedDataLength", 0))
        last[0] = time.perf_counter()

    cdp.on("Network.responseReceived", on_response)
    cdp.on("Network.dataReceived", on_data)
    cdp.on("Network.loadingFinished", on_finished)
    page.goto(url, wait_until="load")
    while time.perf_counter() - last[0] < QUIET_S:
        page.wait_for_timeout(250)
    by_type: Counter[str] = Counter()
    for request_id, size in finished.items():
        by_type[started.get(request_id, {}).get("type", "Other")] += size
    still_open = [started[r].get("url", "?") for r in started if r not in finished]
    context.close()
    return {
        "requests": len(started),
        "transferred": sum(finished.values()),
        "decoded": sum(decoded.values()),
        "by_type": by_type,
        "open": still_open,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout whose app.py to start")
    parser.add_argument("--paths", nargs="+", default=["/"], help="the pages to open (default /)")
    args = parser.parse_args()

    from playwright.sync_api import sync_playwright

    from tests.fakes.live_app import CHROMIUM, CHROMIUM_ARGS

    port = free_port()
    base = f"http://127.0.0.1:{port}"
    proc = start_app(args.root.resolve(), port)
    try:
        start = wait_for(base + "/", START_TIMEOUT_S, proc)
        print(f"{args.root}: GET / answered 200 after {start:.1f} s")
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            for path in args.paths:
                w = weigh(browser, base + path)
                kinds = ", ".join(f"{k} {v / 1000:,.0f} kB" for k, v in w["by_type"].most_common(4))
                print(
                    f"{path}: {w['requests']} requests, {w['transferred'] / 1000:,.0f} kB transferred "
                    f"({w['decoded'] / 1000:,.0f} kB decoded); {kinds}; still open: {len(w['open'])}"
                )
            browser.close()
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


if __name__ == "__main__":
    main()
