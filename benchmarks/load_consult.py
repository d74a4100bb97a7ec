"""Many visitors at once against the consultation tab, with a scripted model that is slow or hangs.

    python benchmarks/load_consult.py [--visitors 20] [--consultations 3] [--latency 0.5] [--hang 8]

``python app.py`` runs in its own process on loopback, every role on the fake OpenAI-compatible server of
``tests/fakes`` (run here), which waits ``--latency`` seconds per call. Two phases, one app:

1. **Load**: ``--visitors`` clients (``gradio_client``, each its own browser session) run
   ``--consultations`` consultations each, one after another: ask (ToLC H=3, K=3) → mark two facts →
   answer → end (report) → new. Printed: consultations per minute, p50/p95 of each step, errors (an
   exception, or a message that says something went wrong), and degraded steps (a busy or time-budget
   message instead of the model's work).
2. **Hang**: ``--hang`` visitors ask questions whose model calls never return (the fake server holds
   them), while ``--probes`` other visitors repeat model-free steps: routing (from Ask to "question
   received"), marking a fact, changing the domain, searching statutes. Printed: p50/p95 of those
   steps while the models hang.

RSS of the app's process is read from ``/proc`` before the first visitor, after the load, and after
every visitor has left (clients closed; the app frees a departed session when its heartbeat stops).
Targets on the 2-core machine with L = 0.5 s: 0 errors in the load phase, a model-free step's p95 under
1 s while 8 models hang, RSS growth under 50 MB after the visitors leave.

Each visitor has its own client address (``X-Forwarded-For``, which the app believes from a loopback
peer, as from a reverse proxy). The app runs with ``LAWLUO_STEP_BUDGET_S`` = ``--budget`` (default 120 s, the setting's default; the hung
visitors are released when phase 2 ends), ``GRADIO_HEARTBEAT_INTERVAL=1`` and ``LAWLUO_SESSION_GRACE_S=2``
so that departures are noticed and freed within a few seconds (the defaults: 15 s and 120 s). Every
request goes to 127.0.0.1; every loop is bounded in count and time.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from collections import defaultdict

from _common import QUESTIONS, ROOT, percentile

from tests.fakes.firm_models import FirmResponder
from tests.fakes.live_app import free_port, model_environ
from tests.fakes.openai_server import FakeOpenAIServer

HANG_MARK = "（挂起）"
ERROR_WORDS = ("出错了", "Something went wrong")
DEGRADED_WORDS = ("仍在进行中", "time budget", "slots of the", "BudgetExceeded", "busy")
RUN_LIMIT_S = 600


class HangingResponder(FirmResponder):
    """The firm's scripted answers, except that a request mentioning HANG_MARK never gets one."""

    def __init__(self, release: threading.Event) -> None:
        super().__init__()
        self.release = release

    def __call__(self, body: dict) -> str:
        if any(HANG_MARK in str(m.get("content", "")) for m in body.get("messages", [])):
            self.release.wait(RUN_LIMIT_S)  # until the benchmark ends
        return super().__call__(body)


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def start_app(server: FakeOpenAIServer, port: int, budget: float) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LAWLUO_", "OPENAI_"))}
    env.update(model_environ(server))
    env.update(
        {
            "LAWLUO_DEFAULT_TIMEOUT": "600",
            "LAWLUO_STEP_BUDGET_S": str(budget),
            "LAWLUO_ANNOTATION_DIR": os.path.join(os.environ.get("TMPDIR", "/tmp"), f"lawluo-load-{port}"),
            "GRADIO_SERVER_PORT": str(port),
            "GRADIO_HEARTBEAT_INTERVAL": "1",
            "LAWLUO_SESSION_GRACE_S": "2",
        }
    )
    proc = subprocess.Popen(
        [sys.executable, "app.py"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2) as response:
                if response.status == 200:
                    return proc
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise SystemExit("the app did not start within 120 s")


def client(url: str, address: str = "10.0.0.1"):
    """A visitor: its own session and cookie, and its own client address (as a proxy on loopback says)."""
    from gradio_client import Client

    headers = {"X-Forwarded-For": address}
    return Client(url, verbose=False, download_files=False, analytics_enabled=False, headers=headers)


class Recorder:
    def __init__(self) -> None:
        self.times: dict[str, list[float]] = defaultdict(list)
        self.errors: list[str] = []
        self.degraded: list[str] = []
        self.lock = threading.Lock()

    def step(self, name: str, call):
        start = time.perf_counter()
        try:
            out = call()
        except Exception as exc:  # noqa: BLE001 — every failure is counted and named
            with self.lock:
                self.errors.append(f"{name}: {type(exc).__name__}: {exc}"[:300])
            return None
        elapsed = time.perf_counter() - start
        message = str(out[-1]) if isinstance(out, tuple | list) and out else ""
        with self.lock:
            self.times[name].append(elapsed)
            if any(word in message for word in ERROR_WORDS):
                self.errors.append(f"{name}: {message[:200]}")
            elif any(word in message for word in DEGRADED_WORDS):
                self.degraded.append(f"{name}: {message[:200]}")
        return out

    def routing(self, c, question: str) -> None:
        """Ask, timing the first update (routing done, "question received") and the whole ask."""
        start = time.perf_counter()
        job = c.submit(question, True, 3, 3, api_name="/ask")
        first = None
        while not job.done() and time.perf_counter() - start < RUN_LIMIT_S:
            if first is None and job.outputs():
                first = time.perf_counter() - start
            time.sleep(0.005)
        try:
            job.result()
        except Exception as exc:  # noqa: BLE001
            with self.lock:
                self.errors.append(f"ask: {type(exc).__name__}: {exc}"[:300])
            return
        with self.lock:
            self.times["route (first update of ask)"].append(first or (time.perf_counter() - start))
            self.times["ask (tree complete)"].append(time.perf_counter() - start)


def visitor(url: str, n: int, consultations: int, rec: Recorder, clients: list) -> None:
    c = client(url, f"10.1.{n // 250}.{n % 250 + 1}")
    clients.append(c)
    for i in range(consultations):
        question = QUESTIONS[(n + i) % len(QUESTIONS)]
        began = time.perf_counter()
        rec.routing(c, question)
        rec.step("mark", lambda: c.predict("1", "yes", api_name="/mark"))
        rec.step("mark", lambda: c.predict("2", "no", api_name="/mark"))
        rec.step("answer (streamed, checked, scored)", lambda: c.predict(api_name="/answer"))
        rec.step("end (report, scored)", lambda: c.predict(api_name="/end_consultation"))
        rec.step("new", lambda: c.predict(api_name="/new_consultation"))
        with rec.lock:  # ask to new, the visitor's whole consultation
            rec.times["whole consultation"].append(time.perf_counter() - began)


def hung_visitor(url: str, n: int, clients: list) -> None:
    c = client(url, f"10.2.{n // 250}.{n % 250 + 1}")
    clients.append(c)
    try:
        c.predict(QUESTIONS[n % len(QUESTIONS)] + HANG_MARK, True, 3, 3, api_name="/ask")
    except Exception:  # noqa: BLE001 — its outcome is not measured
        pass


def prober(url: str, n: int, until: float, rec: Recorder, clients: list) -> None:
    """Model-free steps, over and over: routing (a new visitor's Ask, until "question received"; the tree
    that follows waits for a model slot and is left to run), a mark, the domain, a search, the JSON."""
    address = f"10.3.{n // 250}.{n % 250 + 1}"
    question = QUESTIONS[n % len(QUESTIONS)]
    while time.monotonic() < until:
        c = client(url, address)
        clients.append(c)
        start = time.perf_counter()
        job = c.submit(question, True, 3, 3, api_name="/ask")
        while not job.outputs() and not job.done() and time.perf_counter() - start < RUN_LIMIT_S:
            time.sleep(0.005)
        with rec.lock:
            rec.times["probe: route (Ask → question received)"].append(time.perf_counter() - start)
        rec.step("probe: mark (no tree yet: a message)", lambda c=c: c.predict("1", "yes", api_name="/mark"))
        rec.step("probe: change domain", lambda c=c: c.predict("contract", api_name="/set_domain"))
        rec.step(
            "probe: search statutes",
            lambda c=c: c.predict("试用期 解除劳动合同", 5, api_name="/search_statutes"),
        )
        rec.step("probe: consultation JSON", lambda c=c: c.predict(api_name="/consultation"))


def summary(title: str, rec: Recorder, seconds: float | None = None, consultations: int = 0) -> None:
    print(f"\n{title}")
    if seconds and consultations:
        print(
            f"  {consultations} consultations in {seconds:.1f} s = {60 * consultations / seconds:.1f} per minute"
        )
    for name, values in rec.times.items():
        print(
            f"  {name:<40} n={len(values):>4}  p50={statistics.median(values):6.2f}s  "
            f"p95={percentile(values, 95):6.2f}s  max={max(values):6.2f}s"
        )
    print(f"  errors: {len(rec.errors)}" + "".join(f"\n    {e}" for e in rec.errors[:5]))
    print(
        f"  degraded (busy / over budget): {len(rec.degraded)}"
        + "".join(f"\n    {d}" for d in rec.degraded[:3])
    )


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--visitors", type=int, default=20)
    parser.add_argument("--consultations", type=int, default=3)
    parser.add_argument("--latency", type=float, default=0.5, help="seconds the fake model takes per call")
    parser.add_argument("--hang", type=int, default=8, help="visitors whose model calls hang (phase 2)")
    parser.add_argument("--probes", type=int, default=4, help="visitors timing model-free steps (phase 2)")
    parser.add_argument("--hang-seconds", type=float, default=15.0, help="how long phase 2 probes run")
    parser.add_argument("--budget", type=float, default=120.0, help="the app's step_budget_s (its default)")
    return parser.parse_args()


def warm_up(url: str) -> None:
    """One warm-up consultation: indexes and models loaded, caches filled."""
    warm = client(url)
    warm.predict(QUESTIONS[0], True, 3, 3, api_name="/ask")
    warm.predict(api_name="/answer")
    warm.close()
    time.sleep(3)


def load_phase(url: str, args: argparse.Namespace, clients: list) -> tuple[Recorder, float]:
    """Phase 1: every visitor runs its consultations, all at once; the steps' times and the seconds taken."""
    load = Recorder()
    start = time.perf_counter()
    threads = [
        threading.Thread(target=visitor, args=(url, n, args.consultations, load, clients))
        for n in range(args.visitors)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(RUN_LIMIT_S)
    return load, time.perf_counter() - start


def hang_phase(url: str, args: argparse.Namespace, server, release: threading.Event, clients: list) -> None:
    """Phase 2: ``--hang`` visitors' model calls are held while the probes time model-free steps; printed,
    then the hung visitors are released."""
    hang = Recorder()
    hung = [threading.Thread(target=hung_visitor, args=(url, n, clients)) for n in range(args.hang)]
    for t in hung:
        t.start()
    deadline = time.monotonic() + 60
    while (
        len([r for r in server.requests if HANG_MARK in str(r)]) < args.hang and time.monotonic() < deadline
    ):
        time.sleep(0.05)  # every hung visitor's first model call is being held
    until = time.monotonic() + args.hang_seconds
    probes = [
        threading.Thread(target=prober, args=(url, n, until, hang, clients)) for n in range(args.probes)
    ]
    for t in probes:
        t.start()
    for t in probes:
        t.join(RUN_LIMIT_S)
    held = len([r for r in server.requests if HANG_MARK in str(r)])
    summary(f"phase 2: {args.hang} visitors' models hang ({held} calls held)", hang)
    release.set()
    for t in hung:
        t.join(RUN_LIMIT_S)


def main() -> int:
    args = parse_args()
    release = threading.Event()
    with FakeOpenAIServer(latency=args.latency) as server:
        server.responder = HangingResponder(release)
        port = free_port()
        url = f"http://127.0.0.1:{port}/"
        proc = start_app(server, port, args.budget)
        clients: list = []
        try:
            warm_up(url)
            rss_before = rss_mb(proc.pid)
            print(
                f"load_consult: {args.visitors} visitors x {args.consultations} consultations, model latency "
                f"{args.latency} s, then {args.hang} hung visitors; app pid {proc.pid}, RSS {rss_before:.0f} MB"
            )
            load, load_seconds = load_phase(url, args, clients)
            rss_loaded = rss_mb(proc.pid)
            summary("phase 1: load", load, load_seconds, args.visitors * args.consultations)
            hang_phase(url, args, server, release, clients)

            for c in clients:
                c.close()
            time.sleep(8)  # heartbeats stop; after the grace period the app frees the departed sessions
            rss_after = rss_mb(proc.pid)
            time.sleep(22)  # steps of departed pages still running then are freed later
            rss_later = rss_mb(proc.pid)
            print(
                f"\nRSS of the app: {rss_before:.0f} MB before, {rss_loaded:.0f} MB after the load, "
                f"{rss_after:.0f} MB 8 s after every visitor left (growth {rss_after - rss_before:+.0f} MB), "
                f"{rss_later:.0f} MB 30 s after (growth {rss_later - rss_before:+.0f} MB)"
            )
        finally:
            release.set()
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
    return 0


if __name__ == "__main__":
    sys.exit(main())
