"""How fast the consultation tab of the web app starts and shows its first results, in a real browser.

    python benchmarks/app_latency.py [--starts 3] [--latencies 0.5 1.0] [--repeats 5] [--streams 5]
    python benchmarks/app_latency.py --starts 0 --latencies --streams 5      # the streamed answer only
    python benchmarks/app_latency.py --cold 3 --stages --starts 0 --latencies --streams 0   # start-up only

0. Cold start, as on a fresh clone (``--cold N``, default 1): the checkout's files as ``git clone`` gives
   them (tracked and untracked-but-not-ignored files: no ``assets/index/``, no ``__pycache__``) copied
   into an empty temporary folder (no ``../shared`` beside it), ``TMPDIR`` an empty folder (so jieba's
   dictionary cache and Gradio's files start empty too); then ``python app.py`` there, timed from just
   before the process starts until ``GET /`` answers 200; then, through ``gradio_client``, the first
   statute search (``/search_statutes``) and case search (``/search_cases``), each timed from its
   request; then, 5 s later, the app's peak and current resident memory (``VmHWM``, ``VmRSS`` of
   ``/proc/PID/status``). The same measures follow for a start in the checkout itself (warm: bytecode
   and jieba's cache exist). Targets: page ≤ 10 s, peak RSS ≤ 600 MB. ``--stages`` adds the CPU seconds
   and memory of each stage of what the app loads (in a fresh process, one stage after another).
1. Start-up with no language model: ``python app.py`` in a fresh process (no LAWLUO_* or OPENAI_*
   variables), timed from just before the process is started until (a) ``GET /`` answers 200 (polled
   with urllib) and, in a second fresh start, (b) the question box ``#ll-question textarea`` is
   visible in headless Chromium, which opens the page once ``GET /`` answers 200 (as a Space shows the
   app once it answers; retrying ``goto`` from the start slowed a 2-core machine's start). Target: ≤ 10 s.
2. Ask to first tree level: the app served by tests/fakes/live_app.py with every role on the fake
   OpenAI-compatible server, which waits L s per call. From the click on Ask until the routing
   (``#ll-routing .ll-domain``), the first level of the clarification tree
   (``#ll-tree button[data-mark="yes"]``) and the whole H=3 K=3 tree (``data-complete="true"``) are
   shown; one uncounted warm-up ask first. Target: first level ≤ L + 1 s.
3. A streamed answer, ``gradio_client`` against Chromium: the same question asked without the tree
   (``/ask`` with ToLC off), the fake server waiting 0.2 s a call and streaming the same 145-character
   answer at 40 tokens a second. Timed from the request (``predict``; the click on Ask) until the answer is
   complete: ``predict`` returns its last view; in the browser the last view is drawn and the page's
   controls are enabled again. Asked first in a new consultation, then after 6 earlier questions and
   answers (a longer chat to redraw). One uncounted warm-up each. Target: browser median ≤ 1.3 × client.
   Also printed: the bytes the page received while the answer streamed (median).
"""

from __future__ import annotations

import argparse
import functools
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from _common import QUESTIONS, ROOT, percentile
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import sync_playwright

from tests.fakes.firm_models import LAWYER_ANSWER
from tests.fakes.live_app import CHROMIUM, CHROMIUM_ARGS, free_port, live_app

START_TARGET = 10.0
RSS_TARGET_MB = 600
TIMEOUT = 60.0
STREAM_TARGET = 1.3
STREAM_LATENCY, STREAM_TOKENS_PER_SECOND = 0.2, 40


def poll_http(url: str, t0: float, proc: subprocess.Popen) -> float | None:
    """Seconds from ``t0`` until ``GET url`` answers 200."""
    while time.perf_counter() - t0 < TIMEOUT and proc.poll() is None:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return time.perf_counter() - t0
        except OSError:
            pass
        time.sleep(0.05)
    return None


def poll_browser(browser, url: str, t0: float, proc: subprocess.Popen) -> float | None:
    """Seconds from ``t0`` until the question box is visible: polled over HTTP until ``GET url`` answers
    200 (as a Space shows its page once the app answers), then one ``goto`` in a fresh browser context.
    Retrying ``goto`` from the start instead made Chromium load ~90 error pages while the app started,
    and on 2 cores that slowed the start itself by ~4 s."""
    if poll_http(url, t0, proc) is None:
        return None
    context = browser.new_context()  # a fresh cache for every start
    page = context.new_page()
    try:
        left = TIMEOUT - (time.perf_counter() - t0)
        page.goto(url, timeout=max(left, 1.0) * 1000)
        page.wait_for_selector("#ll-question textarea", timeout=max(left, 1.0) * 1000)
        return time.perf_counter() - t0
    except PlaywrightError:
        return None
    finally:
        context.close()


def one_start(poll, cwd: Path = ROOT, env_extra: dict | None = None, after=None):
    """Start ``python app.py`` afresh in ``cwd``; ``poll(url, t0, proc)`` says when it is up (seconds or
    None). With ``after``, returns ``(seconds, after(url, proc))`` (``after`` runs only when it came up)."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LAWLUO_", "OPENAI_"))}
    env.update(GRADIO_SERVER_PORT=str(port), GRADIO_ANALYTICS_ENABLED="False", **(env_extra or {}))
    extra = None
    with tempfile.TemporaryFile() as log:
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "app.py"],
            cwd=cwd,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            seconds = poll(url, t0, proc)
            if after is not None and seconds is not None:
                extra = after(url, proc)
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        if seconds is None:
            log.seek(0)
            print(f"    app did not come up; the end of its log:\n{log.read().decode()[-2000:]}")
    return seconds if after is None else (seconds, extra)


def fresh_copy(dest: Path) -> Path:
    """The checkout's files as a fresh clone of it has them (git's tracked and untracked-but-not-ignored
    files: no ``assets/index/``, no ``__pycache__``), copied into ``dest/lawluo``."""
    listing = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout
    target = dest / "lawluo"
    for name in filter(None, listing.decode().split("\0")):
        source = ROOT / name
        if source.is_file():  # (a tracked file deleted in the checkout is not copied)
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    return target


def _status_kb(pid: int, key: str) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return None


def _cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of a process so far (``/proc/PID/stat``): what its start cost whatever
    else the machine was doing (wall seconds grow with the load of a shared machine)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def first_searches(url: str, proc: subprocess.Popen) -> dict:
    """Seconds of the first statute and case search through ``gradio_client`` (each must find something),
    then, 5 s later, the app's peak and current resident memory in MB."""
    from gradio_client import Client

    out: dict = {"cpu": _cpu_seconds(proc.pid)}  # first: the app's CPU seconds when the page was served
    client = Client(url, verbose=False, download_files=False, analytics_enabled=False)
    try:
        for label, api, query in (
            ("statute search", "/search_statutes", "试用期 解除劳动合同"),
            ("case search", "/search_cases", "醉酒驾驶机动车 追逐竞驶"),
        ):
            t0 = time.perf_counter()
            html = client.predict(query, 5, api_name=api)
            seconds = time.perf_counter() - t0
            out[label] = (
                seconds if isinstance(html, str) and html.count("ll-hit") + html.count("第") > 0 else None
            )
    finally:
        client.close()
    time.sleep(5)
    for label, key in (("peak RSS", "VmHWM"), ("RSS", "VmRSS")):
        kb = _status_kb(proc.pid, key)
        out[label] = None if kb is None else kb / 1024
    return out


def bench_cold(starts: int) -> None:
    print(
        f"Cold start (a fresh copy: no assets/index, no ../shared, empty TMPDIR) and warm start, {starts} each:"
    )
    rows: dict[str, list] = {"cold": [], "warm": []}
    for i in range(starts):
        with tempfile.TemporaryDirectory(prefix="lawluo-cold-") as tmp:
            copy = fresh_copy(Path(tmp))
            (Path(tmp) / "tmp").mkdir()
            assert not (copy / "assets" / "index").exists() and not (copy.parent / "shared").exists()
            rows["cold"].append(
                one_start(poll_http, copy, {"TMPDIR": str(Path(tmp) / "tmp")}, after=first_searches)
            )
        rows["warm"].append(one_start(poll_http, ROOT, after=first_searches))
        load = os.getloadavg()[0]
        for kind in ("cold", "warm"):
            http, extra = rows[kind][-1]
            extra = extra or {}
            cpu = extra.get("cpu")
            print(
                f"  {kind} start {i + 1}: HTTP 200 {fmt(http)} (app CPU {'n/a' if cpu is None else f'{cpu:.2f} s'}, "
                f"load average {load:.1f}); first statute search {fmt(extra.get('statute search'))}, "
                f"first case search {fmt(extra.get('case search'))}; peak RSS {_mb(extra.get('peak RSS'))}, "
                f"RSS {_mb(extra.get('RSS'))}"
            )
    for kind, runs in rows.items():
        https = [h for h, _ in runs if h is not None]
        peaks = [e.get("peak RSS") for _, e in runs if e and e.get("peak RSS") is not None]
        if len(https) < len(runs) or not peaks:
            print(f"  {kind}: {len(runs) - len(https)} start(s) failed FAIL")
            continue
        ok = max(https) <= START_TARGET and max(peaks) <= RSS_TARGET_MB
        print(
            f"  {kind}: HTTP 200 median {statistics.median(https):.2f} s, max {max(https):.2f} s "
            f"(target <= {START_TARGET:g} s); peak RSS max {max(peaks):.0f} MB (target <= {RSS_TARGET_MB} MB) "
            + ("PASS" if ok else "FAIL")
        )


STAGES_SCRIPT = r"""
import sys, time
sys.path.insert(0, ".")
def mem():
    d = dict(l.split(":", 1) for l in open("/proc/self/status").read().splitlines())
    return int(d["VmRSS"].split()[0]) // 1024, int(d["VmHWM"].split()[0]) // 1024
t = time.process_time()
def lap(stage):
    global t
    rss, peak = mem()
    print(f"| {stage} | {time.process_time() - t:.2f} | {rss} | {peak} |")
    t = time.process_time()
print("| stage | CPU s | RSS MB | peak MB |\n|---|---|---|---|")
import gradio; lap("import gradio (+ pandas, fastapi, …)")
import app; lap("import app (the rest of lawluo, eval_ui)")
from lawluo.config import Settings, load_settings
from lawluo.law.database import StatuteDB
settings = load_settings()
db = StatuteDB(settings.statutes_path); lap("StatuteDB (64,496 articles)")
from lawluo.retrieval.statutes import StatuteSearcher
statutes = StatuteSearcher.from_settings(settings, db)
lap("statute searcher (documents, fingerprint, shipped index, priors, reranker)")
from lawluo.retrieval.cases import CaseSearcher
cases = CaseSearcher.from_settings(settings); lap("case searcher (case bank, shipped index)")
from lawluo.firm import Firm
from lawluo.law.checker import CitationChecker
from lawluo.llm import LanguageModels
Firm.from_settings(settings, models=LanguageModels(settings.models), statute_searcher=statutes,
                   case_searcher=cases, checker=CitationChecker(db))
lap("firm (receptionist, clarification material + shipped index)")
statutes.search("劳动合同 解除", 5); cases.search("劳动合同", 5)
lap("first searches (jieba dictionary, vote index)")
"""


def bench_stages() -> None:
    """CPU seconds and memory after each stage of what the app loads, in a fresh process."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LAWLUO_", "OPENAI_"))}
    print(f"\nStart-up stages, in-process (load average {os.getloadavg()[0]:.1f}):")
    subprocess.run([sys.executable, "-c", STAGES_SCRIPT], cwd=ROOT, env=env, check=True)


def _mb(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0f} MB"


def fmt(value: float | None) -> str:
    return "timed out" if value is None else f"{value:6.2f} s"


def bench_start(browser, starts: int) -> None:
    print(f"App start to first served page, no model (python app.py), {starts} starts:")
    https, visibles = [], []
    for i in range(starts):
        http = one_start(poll_http)
        visible = one_start(functools.partial(poll_browser, browser))
        print(f"  start {i + 1}: HTTP 200 {fmt(http)}; question box visible in browser {fmt(visible)}")
        https.append(http)
        visibles.append(visible)
    for label, values in (("HTTP 200", https), ("question box visible in browser", visibles)):
        done = [v for v in values if v is not None]
        if not done:
            print(f"  {label}: no start succeeded (target <= {START_TARGET:g} s) FAIL")
            continue
        ok = len(done) == len(values) and max(done) <= START_TARGET
        print(
            f"  {label}: median {statistics.median(done):.2f} s, max {max(done):.2f} s "
            f"(target <= {START_TARGET:g} s) {'PASS' if ok else 'FAIL'}"
        )


STAGES = {
    "routing shown": "#ll-routing .ll-domain",
    "first tree level": '#ll-tree button[data-mark="yes"]',
    "whole tree (H=3 K=3)": '#ll-tree [data-complete="true"]',
}


def one_ask(browser, url: str, question: str) -> dict[str, float | None]:
    page = browser.new_page()
    try:
        page.goto(url)
        page.wait_for_selector("#ll-question textarea", timeout=TIMEOUT * 1000)
        page.fill("#ll-question textarea", question)
        t0 = time.perf_counter()
        page.click("#ll-ask")
        times: dict[str, float | None] = {}
        for label, selector in STAGES.items():
            left = TIMEOUT - (time.perf_counter() - t0)
            try:
                page.wait_for_selector(selector, timeout=max(left, 0.001) * 1000)
                times[label] = time.perf_counter() - t0
            except PlaywrightError:
                times[label] = None
        return times
    finally:
        page.close()


def bench_ask(browser, latency: float, repeats: int) -> None:
    target = latency + 1.0
    print(
        f"\nClick on Ask to tree in the browser, fake server latency L = {latency:g} s a call, {repeats} asks:"
    )
    runs = []
    with live_app(latency=latency) as app:
        one_ask(browser, app.url, QUESTIONS[-1])  # warm-up, not counted
        for i in range(repeats):
            times = one_ask(browser, app.url, QUESTIONS[i % len(QUESTIONS)])
            print(f"  ask {i + 1}: " + ", ".join(f"{label} {fmt(t)}" for label, t in times.items()))
            runs.append(times)
    for label in STAGES:
        values = [run[label] for run in runs]
        done = [v for v in values if v is not None]
        line = f"  {label:<21}"
        if done:
            line += (
                f" median {statistics.median(done):.2f} s, p90 {percentile(done, 90):.2f} s, "
                f"max {max(done):.2f} s"
            )
        if len(done) < len(values):
            line += f" ({len(values) - len(done)} timed out)"
        if label == "first tree level":
            median_ok = bool(done) and statistics.median(done) <= target
            max_ok = len(done) == len(values) and max(done) <= target
            line += (
                f"  target <= L + 1 s = {target:g} s: median {'PASS' if median_ok else 'FAIL'}, "
                f"max {'PASS' if max_ok else 'FAIL'}"
            )
        print(line)


def client_answer(url: str, earlier: int, question: str, server) -> float:
    """Seconds for ``/ask`` (no tree) through gradio_client, after ``earlier`` fast questions and answers."""
    from gradio_client import Client

    client = Client(url, verbose=False, download_files=False, analytics_enabled=False)
    try:
        server.tokens_per_second = None
        for _ in range(earlier):
            client.predict(question, False, 3, 3, api_name="/ask")
        server.tokens_per_second = STREAM_TOKENS_PER_SECOND
        t0 = time.perf_counter()
        client.predict(question, False, 3, 3, api_name="/ask")
        return time.perf_counter() - t0
    finally:
        client.close()


ANSWERS_SHOWN = (
    "(n) => document.querySelectorAll(\"#ll-chat [data-testid='bot']\").length >= n"
    " && !window.__llSteps && !document.querySelector('#ll-ask').disabled"
)


def browser_answer(browser, url: str, earlier: int, question: str, server) -> tuple[float | None, int]:
    """Seconds from the click on Ask (ToLC off) until the answer's last view is drawn, in a new page, and
    the bytes the page received meanwhile (Chrome DevTools Protocol ``Network.dataReceived``)."""
    context = browser.new_context(viewport={"width": 1366, "height": 768})
    page = context.new_page()
    received = [0]
    cdp = context.new_cdp_session(page)
    cdp.send("Network.enable")
    cdp.on("Network.dataReceived", lambda event: received.__setitem__(0, received[0] + event["dataLength"]))
    try:
        page.goto(url)
        page.wait_for_selector("#ll-question textarea", timeout=TIMEOUT * 1000)
        page.click("#ll-use-tolc-accordion")
        page.uncheck("#ll-use-tolc input")
        server.tokens_per_second = None
        for n in range(1, earlier + 1):
            page.fill("#ll-question textarea", question)
            page.click("#ll-ask")
            page.wait_for_function(ANSWERS_SHOWN, arg=n, timeout=TIMEOUT * 1000)
        server.tokens_per_second = STREAM_TOKENS_PER_SECOND
        page.fill("#ll-question textarea", question)
        received[0] = 0
        t0 = time.perf_counter()
        page.click("#ll-ask")
        try:
            page.wait_for_function(ANSWERS_SHOWN, arg=earlier + 1, timeout=TIMEOUT * 1000)
        except PlaywrightError:
            return None, received[0]
        return time.perf_counter() - t0, received[0]
    finally:
        context.close()


def bench_stream(browser, repeats: int) -> None:
    print(
        f"\nStreamed answer (/ask, no tree; {len(LAWYER_ANSWER)} characters at {STREAM_TOKENS_PER_SECOND} tokens/s, "
        f"L = {STREAM_LATENCY:g} s a call), gradio_client vs Chromium, {repeats} runs each:"
    )
    question = QUESTIONS[0]
    with live_app(latency=STREAM_LATENCY, tokens_per_second=STREAM_TOKENS_PER_SECOND) as app:
        client_answer(app.url, 0, question, app.server)  # warm-ups, not counted
        browser_answer(browser, app.url, 0, question, app.server)
        for earlier in (0, 6):
            clients = [client_answer(app.url, earlier, question, app.server) for _ in range(repeats)]
            runs = [browser_answer(browser, app.url, earlier, question, app.server) for _ in range(repeats)]
            browsers = [seconds for seconds, _ in runs]
            done = [b for b in browsers if b is not None]
            kilobytes = statistics.median(n for _, n in runs) / 1000
            c_median = statistics.median(clients)
            line = (
                f"  after {earlier} earlier answers: gradio_client median {c_median:.2f} s "
                f"(min {min(clients):.2f}, max {max(clients):.2f}); "
            )
            if not done:
                print(line + "browser: every run timed out FAIL")
                continue
            b_median = statistics.median(done)
            ratio = b_median / c_median
            ok = len(done) == len(browsers) and ratio <= STREAM_TARGET
            print(
                line + f"browser median {b_median:.2f} s (min {min(done):.2f}, max {max(done):.2f}), "
                f"{kilobytes:.1f} kB received; ratio {ratio:.2f} (target <= {STREAM_TARGET:g}) "
                + ("PASS" if ok else "FAIL")
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--cold", type=int, default=1, help="cold starts from a fresh copy, each with a warm one"
    )
    parser.add_argument(
        "--stages", action="store_true", help="also: CPU seconds and memory of each start-up stage"
    )
    parser.add_argument("--starts", type=int, default=3)
    parser.add_argument("--latencies", type=float, nargs="*", default=[0.5, 1.0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument(
        "--streams", type=int, default=5, help="runs of the streamed-answer comparison (0: skip)"
    )
    args = parser.parse_args()
    if args.cold:
        bench_cold(args.cold)
    if args.stages:
        bench_stages()
    if not (args.starts or args.latencies or args.streams):
        return
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            if args.starts:
                bench_start(browser, args.starts)
            for latency in args.latencies:
                bench_ask(browser, latency, args.repeats)
            if args.streams:
                bench_stream(browser, args.streams)
        finally:
            browser.close()


if __name__ == "__main__":
    main()
