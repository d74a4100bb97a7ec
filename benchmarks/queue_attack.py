"""Issue 38's H2 attack against the running app, and what another visitor sees meanwhile.

    python benchmarks/queue_attack.py [--crowd 40] [--flood 70] [--searches 60]

``python app.py`` runs in its own process on loopback, every role on the fake OpenAI-compatible server of
``tests/fakes``, whose answers to the attackers' questions never come (a hung model). Then:

1. **Crowd**: ``--crowd`` visitors, each from its own address, ask a question (ToLC on): their model
   events take the model slots and wait there;
2. **Flood**: one address (``--flood-addresses`` N: N addresses in turn) sends ``--flood`` raw
   ``/queue/join`` requests for Ask (each a new session), as fast as it can;
3. **Bystander**: meanwhile another visitor (its own address) runs ``--searches`` statute searches one
   after another. Printed: how each attacker request was answered (HTTP status counts), and the
   bystander's search latency p50/p95/max and how many of its searches were refused.

Before the queue gate (issue 38), the flood filled Gradio's 64-place queue and the bystander's searches
were refused 102 times out of 102 ("Queue is full"). Target: p95 below 1 s, none refused.
Every request goes to 127.0.0.1; every loop is bounded in count and time.
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time
import uuid

import httpx
from _common import percentile
from load_consult import HANG_MARK, HangingResponder, client, start_app

from tests.fakes.live_app import free_port
from tests.fakes.openai_server import FakeOpenAIServer


def fn_index(url: str, api_name: str) -> int:
    config = httpx.get(f"{url}config", timeout=10).json()
    for dep in config["dependencies"]:
        if dep.get("api_name") == api_name:
            return dep["id"]
    raise SystemExit(f"no event named {api_name}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--crowd", type=int, default=40)
    parser.add_argument("--flood", type=int, default=70)
    parser.add_argument("--searches", type=int, default=60)
    parser.add_argument("--flood-addresses", type=int, default=1, help="addresses the flood comes from")
    args = parser.parse_args()
    release = threading.Event()
    port = free_port()
    with FakeOpenAIServer() as server:
        server.responder = HangingResponder(release)
        proc = start_app(server, port, budget=120.0)
        url = f"http://127.0.0.1:{port}/"
        try:
            ask = fn_index(url, "ask")
            crowd_jobs = []
            for i in range(args.crowd):
                c = client(url, f"198.51.100.{i + 1}")
                crowd_jobs.append(c.submit(f"{HANG_MARK}公司拖欠工资怎么办{i}", True, 3, 3, api_name="/ask"))
            time.sleep(3)  # their model steps start and hang
            flood: dict[int, int] = {}
            with httpx.Client(timeout=10) as attacker:
                for i in range(args.flood):
                    attacker.headers["X-Forwarded-For"] = f"203.0.113.{i % args.flood_addresses + 1}"
                    body = {
                        "data": [f"{HANG_MARK}劳动合同{i}", True, 3, 3],
                        "fn_index": ask,
                        "session_hash": uuid.uuid4().hex[:11],
                    }
                    status = attacker.post(f"{url}gradio_api/queue/join", json=body).status_code
                    flood[status] = flood.get(status, 0) + 1
            bystander = client(url, "192.0.2.7")
            times, refused = [], []
            for i in range(args.searches):
                start = time.perf_counter()
                try:
                    bystander.predict(
                        ["借条 还款", "试用期 解除", "离婚 财产"][i % 3], 5, api_name="/search_statutes"
                    )
                    times.append(time.perf_counter() - start)
                except Exception as exc:  # noqa: BLE001 — a refusal is what is being counted
                    refused.append(f"{type(exc).__name__}: {exc}"[:120])
            print(f"crowd: {args.crowd} visitors asked (each its own address), models hung")
            print(
                f"flood from {args.flood_addresses} address(es): {args.flood} joins → HTTP "
                + ", ".join(f"{k}: {v}" for k, v in sorted(flood.items()))
            )
            if times:
                print(
                    f"bystander statute search: n={len(times)} p50 {statistics.median(times):.3f} s, "
                    f"p95 {percentile(times, 95):.3f} s, max {max(times):.3f} s; refused {len(refused)}/{args.searches}"
                )
            else:
                print(f"bystander statute search: refused {len(refused)}/{args.searches}")
            for line in refused[:3]:
                print(f"  refused: {line}")
        finally:
            release.set()
            proc.terminate()
            proc.wait(30)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
