"""How fast the batch commands are: the no-judge metrics over LawBench's 3,500 real answers, and
``evaluate`` (a judge metric) and ``generate`` against a served model with latency, at several concurrencies.

    python benchmarks/evaluate_speed.py                 # every part
    python benchmarks/evaluate_speed.py --part nojudge  # NHSR + ROUGE-L (+ METEOR) over 3,500 answers
    python benchmarks/evaluate_speed.py --part judge --latency 1.0 --concurrency 1,16,64
    python benchmarks/evaluate_speed.py --part generate --latency 1.0 --tokens-per-second 50
    python benchmarks/evaluate_speed.py --part generate --latency 1.0 --stream      # streamed answers

Part ``nojudge`` runs ``python -m lawluo evaluate`` end to end in a fresh process (start-up, loading the
statute database and jieba, the metrics, writing the outputs), as a researcher would, once with NHSR +
ROUGE-L (target: ≤ 60 s) and once with METEOR added.

Parts ``judge`` and ``generate`` serve the model from the fake OpenAI server of the tests (every call
waits ``--latency`` seconds, then sends its answer, at ``--tokens-per-second`` or at once: whole, the batch
commands' default, or streamed with ``--stream``) and run the
command in a fresh process at each ``--concurrency`` C (every role's ``concurrency`` set to C), with
``--waves`` × C items (``--items`` to fix the number). Throughput counts **model calls the server
answered**, not items, over the span from the first call's arrival to the last one's end (the server's
clock: process start-up is left out, and shown apart with the process's CPU time), against the ideal
C / L, L being the mean time the server spent on a call (the latency plus the streaming). ``judge`` runs
the single-answer score (one call per answer, ~16 tokens), then again from the on-disk cache (hit rate,
calls). ``generate`` runs ``--baseline`` (one call a question, a 145-token answer) and the LawLuo pipeline
(receptionist, statute and case retrieval, the lawyer, the citation check, the boss: two calls a question).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from _common import DATA, QUESTIONS, ROOT

STREAM: list[str] = []  # ["--stream"]: the measured commands stream their answers (default: whole ones)


def run_cli(argv: list[str], env: dict[str, str]) -> tuple[float, subprocess.CompletedProcess]:
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
        raise SystemExit(f"{argv[0]} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return seconds, proc


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


def fake_server(latency: float, responder, tokens_per_second: float | None = None):
    sys.path.insert(0, str(ROOT))
    from tests.fakes.openai_server import FakeOpenAIServer

    server = FakeOpenAIServer(latency=latency, tokens_per_second=tokens_per_second)
    server.responder = responder
    return server


@dataclass
class Measured:
    calls: int  # chat calls the server answered in this run
    busy: float  # seconds from the first call's arrival to the last one's end (the server's clock)
    per_call: float  # mean seconds the server spent on a call: L, plus the tokens at --tokens-per-second
    total: float  # seconds end to end, process start-up included
    cpu: float  # CPU seconds of the command's process (user + system), start-up included
    server_cpu: float  # CPU seconds of this process meanwhile: the fake server's threads
    stderr: str


def measure(server, argv: list[str], concurrency: int) -> Measured:
    """Run ``argv`` with every role on ``server`` at ``concurrency``. The span is the server's: on a server
    that served an earlier run it starts at that run's first call."""
    from tests.fakes.live_app import model_environ

    env = {
        **clean_env(),
        **model_environ(server),
        "LAWLUO_DEFAULT_CONCURRENCY": str(concurrency),
    }
    calls, service = server.finished, server.service_seconds
    cpu, mine = resource.getrusage(resource.RUSAGE_CHILDREN), resource.getrusage(resource.RUSAGE_SELF)
    total, proc = run_cli([*argv, *STREAM, "--concurrency", str(concurrency)], env)
    after, mine_after = resource.getrusage(resource.RUSAGE_CHILDREN), resource.getrusage(resource.RUSAGE_SELF)
    first, last = server.busy or (0.0, 0.0)
    calls = server.finished - calls
    return Measured(
        calls,
        last - first,
        (server.service_seconds - service) / max(1, calls),
        total,
        after.ru_utime + after.ru_stime - cpu.ru_utime - cpu.ru_stime,
        mine_after.ru_utime + mine_after.ru_stime - mine.ru_utime - mine.ru_stime,
        proc.stderr,
    )


def line(what: str, m: Measured, concurrency: int) -> str:
    what += ", streamed" if STREAM else ""
    rate = m.calls / m.busy if m.busy else 0.0
    ideal = concurrency / m.per_call if m.per_call else 0.0
    return (
        f"{what}, C={concurrency:2d}: {m.calls:4d} calls in {m.busy:5.2f} s = {rate:5.1f} calls/s = "
        f"{rate / ideal if ideal else 0:4.0%} of C/L = {ideal:5.1f} (L = {m.per_call:.2f} s per call at the "
        f"server); {m.total:4.1f} s and {m.cpu:4.1f} s CPU with start-up; the fake server {m.server_cpu:.1f} s CPU"
    )


def part_judge(
    out: Path,
    latency: float,
    items: int | None,
    waves: int,
    concurrencies: tuple[int, ...],
    tps: float | None,
) -> None:
    from tests.fakes.judge_responder import JudgeResponder

    for concurrency in concurrencies:
        answers, refs = write_items(out / f"judge{concurrency}", items or waves * concurrency)
        argv = ["evaluate", "--answers", str(answers), "--references", str(refs), "--metrics", "score",
                "--quiet", "--out", str(out / f"judge{concurrency}" / "out"), "--no-cache"]  # fmt: skip
        with fake_server(latency, JudgeResponder(), tps) as server:
            measured = measure(server, argv, concurrency)
        print(line("evaluate --metrics score", measured, concurrency))
    concurrency = concurrencies[-1]
    answers, refs = write_items(out / "cached", items or waves * concurrency)
    argv = ["evaluate", "--answers", str(answers), "--references", str(refs), "--metrics", "score",
            "--quiet", "--cache", str(out / "cache.sqlite")]  # fmt: skip
    with fake_server(latency, JudgeResponder(), tps) as server:  # one server: the cache's keys name its URL
        measure(server, [*argv, "--out", str(out / "warm")], concurrency)
        again = measure(server, [*argv, "--out", str(out / "again")], concurrency)
    said = [x.removeprefix("lawluo evaluate: ") for x in again.stderr.splitlines() if "judge" in x]
    print(f"again from the cache: {again.calls} calls to the server, {again.total:.1f} s; " + "; ".join(said))


def part_generate(
    out: Path,
    latency: float,
    items: int | None,
    waves: int,
    concurrencies: tuple[int, ...],
    tps: float | None,
) -> None:
    from tests.fakes.firm_models import FirmResponder

    for mode in ("--baseline", "pipeline"):
        for concurrency in concurrencies:
            n = items or waves * concurrency
            questions = out / f"q{n}.jsonl"
            rows = ({"id": f"q{i}", "question": QUESTIONS[i % len(QUESTIONS)]} for i in range(n))
            questions.write_text(
                "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
            )
            target = out / f"gen-{mode.strip('-')}-{concurrency}.jsonl"
            argv = ["generate", "--questions", str(questions), "--system", "S", "--out", str(target),
                    "--quiet", *([mode] if mode == "--baseline" else [])]  # fmt: skip
            with fake_server(latency, FirmResponder(), tps) as server:
                measured = measure(server, argv, concurrency)
            print(
                line(
                    f"generate {mode.strip('-')} ({measured.calls / n:.1f} calls a question)",
                    measured,
                    concurrency,
                )
            )


def write_items(folder: Path, n: int) -> tuple[Path, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    refs = [{"id": f"q{i}", "question": f"问题{i}", "reference": "参考"} for i in range(n)]
    answers = [{"id": f"q{i}", "system": "S", "answer": f"回答{i}"} for i in range(n)]
    for name, rows in (("refs.jsonl", refs), ("answers.jsonl", answers)):
        (folder / name).write_text(
            "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
        )
    return folder / "answers.jsonl", folder / "refs.jsonl"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--part", choices=["nojudge", "judge", "generate", "all"], default="all")
    parser.add_argument("--latency", type=float, default=1.0, help="seconds per model call, L (default 1.0)")
    parser.add_argument("--concurrency", default="1,16,64", help="comma-separated C (default 1,16,64)")
    parser.add_argument("--waves", type=int, default=5, help="calls per run = waves × C (default 5)")
    parser.add_argument("--items", type=int, default=None, help="a fixed number of items per run instead")
    parser.add_argument(
        "--tokens-per-second",
        type=float,
        default=None,
        help="pace of each streamed answer (default: at once)",
    )
    parser.add_argument(
        "--stream",
        action="store_true",
        help="the commands stream their answers (their --stream); default: whole answers, one response a call",
    )
    args = parser.parse_args()
    if args.stream:
        STREAM.append("--stream")
    concurrencies = tuple(int(c) for c in args.concurrency.split(","))
    with tempfile.TemporaryDirectory() as tmp:
        if args.part in ("nojudge", "all"):
            part_nojudge(Path(tmp))
        if args.part in ("judge", "all"):
            part_judge(Path(tmp), args.latency, args.items, args.waves, concurrencies, args.tokens_per_second)
        if args.part in ("generate", "all"):
            part_generate(
                Path(tmp), args.latency, args.items, args.waves, concurrencies, args.tokens_per_second
            )


if __name__ == "__main__":
    main()
