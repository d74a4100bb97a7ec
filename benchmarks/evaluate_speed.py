"""How fast the batch evaluator is: the no-judge metrics over LawBench's 3,500 real answers, and judge
metrics against a judge with latency at several concurrency limits.

    python benchmarks/evaluate_speed.py                 # both parts
    python benchmarks/evaluate_speed.py --part nojudge  # NHSR + ROUGE-L (+ METEOR) over 3,500 answers
    python benchmarks/evaluate_speed.py --part judge --latency 0.2 --items 60
    python benchmarks/evaluate_speed.py --part judge --latency 1.0 --items 320 --concurrency 16,64

Part 1 runs ``python -m lawluo evaluate`` end to end in a fresh process (start-up, loading the statute
database and jieba, the metrics, writing the outputs), as a researcher would, once with NHSR + ROUGE-L
(the issue's target: ≤ 60 s) and once with METEOR added. Part 2 serves the single-answer score from
the fake OpenAI server of the tests (every call sleeps ``--latency`` seconds) and runs the metric at
each ``--concurrency`` (default 1, 4 and 16), then once more from the on-disk cache. Each line also gives
the throughput against the ideal ``concurrency / latency``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import DATA, ROOT


def run_cli(argv: list[str], env: dict[str, str]) -> tuple[float, str]:
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "lawluo", *argv],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"evaluate failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return seconds, proc.stdout


def clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(("LAWLUO_", "OPENAI_"))}


def part_nojudge(out: Path) -> None:
    answers = DATA / "lawbench" / "consult_predictions.dev.jsonl"
    refs = DATA / "lawbench" / "consult.dev.jsonl"
    n = sum(1 for _ in answers.open(encoding="utf-8"))
    for metrics in ("nhsr,rouge_l", "nhsr,rouge_l,meteor"):
        argv = ["evaluate", "--answers", str(answers), "--references", str(refs), "--metrics", metrics]
        seconds, _ = run_cli([*argv, "--out", str(out / metrics.replace(",", "-")), "--quiet"], clean_env())
        per = json.loads((out / metrics.replace(",", "-") / "summary.json").read_text(encoding="utf-8"))[
            "seconds"
        ]
        print(f"{metrics:22s} {n:,} answers: {seconds:5.1f} s end to end (metrics: {per})")


def part_judge(out: Path, latency: float, items: int, concurrencies: tuple[int, ...] = (1, 4, 16)) -> None:
    sys.path.insert(0, str(ROOT))
    from tests.fakes.judge_responder import JudgeResponder
    from tests.fakes.live_app import model_environ
    from tests.fakes.openai_server import FakeOpenAIServer

    refs = [{"id": f"q{i}", "question": f"问题{i}", "reference": "参考"} for i in range(items)]
    answers = [{"id": f"q{i}", "system": "S", "answer": f"回答{i}"} for i in range(items)]
    (out / "refs.jsonl").write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in refs), encoding="utf-8"
    )
    (out / "answers.jsonl").write_text(
        "".join(json.dumps(a, ensure_ascii=False) + "\n" for a in answers), encoding="utf-8"
    )
    with FakeOpenAIServer(latency=latency) as server:
        server.responder = JudgeResponder()
        env = {**clean_env(), **model_environ(server), "LAWLUO_JUDGE_CONCURRENCY": "64"}
        base = ["evaluate", "--answers", str(out / "answers.jsonl"), "--references", str(out / "refs.jsonl"),
                "--metrics", "score", "--quiet"]  # fmt: skip
        for concurrency in concurrencies:
            seconds, _ = run_cli([*base, "--out", str(out / f"c{concurrency}"), "--no-cache",
                                  "--concurrency", str(concurrency)], env)  # fmt: skip
            print(
                f"score, {items} judge calls of {latency:.2f} s, concurrency {concurrency:2d}: {seconds:5.1f} s "
                f"({items / seconds:.1f} calls/s; ideal {concurrency / latency:.1f}, process start-up included)"
            )
        cache = out / "cache.sqlite"
        run_cli([*base, "--out", str(out / "warm"), "--cache", str(cache), "--concurrency", "16"], env)
        before = len(server.requests)
        seconds, _ = run_cli([*base, "--out", str(out / "cached"), "--cache", str(cache)], env)
        print(f"score again from the cache: {seconds:5.1f} s, {len(server.requests) - before} judge calls")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--part", choices=["nojudge", "judge", "both"], default="both")
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--items", type=int, default=60)
    parser.add_argument("--concurrency", default="1,4,16", help="comma-separated limits (default 1,4,16)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if args.part in ("nojudge", "both"):
            part_nojudge(Path(tmp))
        if args.part in ("judge", "both"):
            concurrencies = tuple(int(c) for c in args.concurrency.split(","))
            part_judge(Path(tmp), args.latency, args.items, concurrencies)


if __name__ == "__main__":
    main()
