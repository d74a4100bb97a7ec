"""What the language-model layer costs on top of the raw ``openai`` client, measured against the fake
OpenAI-compatible server on loopback (tests/fakes/openai_server.py).

    python benchmarks/llm_overhead.py [--calls 300] [--latency 0.5]

1. Overhead per call: the server answers at once; the same short request is sent alternately through
   a raw ``openai.OpenAI`` client and through :class:`OpenAIBackend` (each with its own client, same
   settings, after warm-up), and the p50 of each is compared. Target: backend p50 − raw p50 ≤ 5 ms.
2. Parallel calls: the server sleeps ``latency`` s per request; 9 calls run through
   ``lawluo.llm.gather`` with the backend's concurrency limit at 9 (and, for contrast, at 3).
   Target: wall time ≤ 1.3 × latency at limit 9.
3. Streaming: the server streams 20 tokens/s; for each stream the time the first piece reaches the
   caller of ``backend.stream`` minus the time the server wrote it. Target: ≤ 50 ms (no buffering).
"""

from __future__ import annotations

import argparse
import statistics
import time

from _common import percentile  # also puts the repository root on sys.path (lawluo, tests.fakes)

from lawluo.llm import gather
from lawluo.llm.openai_backend import OpenAIBackend
from lawluo.llm.options import OpenAIOptions
from tests.fakes.openai_server import FakeOpenAIServer

MESSAGES = [{"role": "user", "content": "试用期可以不交社保吗？"}]
ANSWER = "不可以。用人单位应当自用工之日起三十日内为职工申请办理社会保险登记。"


def backend_for(server: FakeOpenAIServer, concurrency: int = 8) -> OpenAIBackend:
    options = OpenAIOptions(model="fake-model", base_url=server.url, max_retries=0, concurrency=concurrency)
    return OpenAIBackend(options, role="bench", api_key="bench")


def overhead(calls: int) -> tuple[float, float]:
    import openai

    with FakeOpenAIServer() as server:
        server.responder = lambda body: ANSWER
        raw = openai.OpenAI(base_url=server.url, api_key="bench", max_retries=0, timeout=60)
        ours = backend_for(server)

        def raw_call() -> str:
            return (
                raw.chat.completions.create(
                    model="fake-model", messages=MESSAGES, temperature=0.7, max_tokens=1024, stream=False
                )
                .choices[0]
                .message.content
            )

        def our_call() -> str:
            return ours.chat(MESSAGES)

        for _ in range(20):
            raw_call(), our_call()
        raw_times, our_times = [], []
        for _ in range(calls):
            for fn, times in ((raw_call, raw_times), (our_call, our_times)):
                start = time.perf_counter()
                assert fn() == ANSWER
                times.append(time.perf_counter() - start)
    return statistics.median(raw_times), statistics.median(our_times)


def parallel(latency: float, limit: int) -> float:
    with FakeOpenAIServer(latency=latency) as server:
        model = backend_for(server, concurrency=limit)
        model.chat(MESSAGES)  # warm the connection pool's first connection and the client
        start = time.perf_counter()
        results = gather([lambda: model.chat(MESSAGES) for _ in range(9)])
        wall = time.perf_counter() - start
        assert len(results) == 9
    return wall


def first_token_gaps(streams: int) -> list[float]:
    gaps = []
    with FakeOpenAIServer(latency=0.05, tokens_per_second=20) as server:
        server.responder = lambda body: ANSWER
        model = backend_for(server)
        for i in range(streams):
            pieces = model.stream(MESSAGES)
            first = next(pieces)
            arrived = time.perf_counter()
            assert first
            rest = "".join(pieces)
            assert first + rest == ANSWER
            gaps.append(arrived - server.stream_log[i]["first_chunk_sent"])
    return gaps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--latency", type=float, default=0.5)
    parser.add_argument("--streams", type=int, default=20)
    args = parser.parse_args()

    raw_p50, our_p50 = overhead(args.calls)
    diff_ms = (our_p50 - raw_p50) * 1000
    print(
        f"overhead, {args.calls} calls each, zero server latency: raw openai p50 {raw_p50 * 1000:.2f} ms, "
        f"backend p50 {our_p50 * 1000:.2f} ms, overhead {diff_ms:+.2f} ms (target <= 5 ms) "
        f"{'PASS' if diff_ms <= 5 else 'FAIL'}"
    )

    wall9 = parallel(args.latency, 9)
    wall3 = parallel(args.latency, 3)
    print(
        f"parallel, 9 calls, server latency L={args.latency:g} s: limit 9 wall {wall9:.3f} s = "
        f"{wall9 / args.latency:.2f} L (target <= 1.3 L) {'PASS' if wall9 <= 1.3 * args.latency else 'FAIL'}; "
        f"limit 3 wall {wall3:.3f} s = {wall3 / args.latency:.2f} L (expected ~3 L)"
    )

    gaps = first_token_gaps(args.streams)
    worst = max(gaps) * 1000
    print(
        f"streaming, {args.streams} streams at 20 tokens/s: first piece reaches the caller "
        f"p50 {percentile(gaps, 50) * 1000:.2f} ms, max {worst:.2f} ms after the server wrote it "
        f"(target <= 50 ms) {'PASS' if worst <= 50 else 'FAIL'}"
    )


if __name__ == "__main__":
    main()
