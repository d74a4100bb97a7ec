"""Every LLM path of LawLuo against a real model server: a smoke run, not a CI test (it needs a model).

    # start llama-cpp-python's server on a GGUF and run everything against it (configs/llamacpp-cpu.yaml):
    python benchmarks/real_model_smoke.py --gguf /path/gemma-3-270m.gguf --llama-python /path/venv/bin/python
    # or use an OpenAI-compatible server that is already running:
    python benchmarks/real_model_smoke.py --base-url http://localhost:8000/v1 --model NAME [--config configs/vllm.yaml]
    # or check this script itself against the scripted fake server of tests/fakes (no model):
    python benchmarks/real_model_smoke.py --scripted

Steps, each timed, each run in its own process as a user would run it:

1. ``python -m lawluo models --ping``;
2. ``python -m lawluo consult --script examples/consultation.json --save …`` (tree, marks, answer, a second
   question, report);
3. ``python app.py`` and ``--consultations`` consultations through ``gradio_client`` (ask with ToLC, mark
   the first two elements yes / no, answer, end with the report);
4. ``python -m lawluo generate`` on ``--questions`` LawBench consultation questions, then
   ``python -m lawluo evaluate`` on its answers (NHSR and the judge's single-answer score).

For every consultation it prints what fell back and why, read from the saved state: trace events that
failed, turn notes (an answer held back, cut or missing), where the tree's elements came from, a partial
report. With ``--gguf`` the server's own log gives prompt-reading and generation speed (tokens/s,
llama.cpp's ``llama_perf_context_print`` lines). The server and the app are stopped at the end, whatever
happened. Every figure printed is measured by this run; nothing is assumed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import DATA, QUESTIONS, ROOT, read_jsonl, wait_for

from tests.fakes.live_app import free_port

PERF = re.compile(r"(prompt eval|\s eval) time =\s*([\d.]+) ms /\s*(\d+) (?:tokens|runs)")
LAWBENCH_CONSULT = DATA / "lawbench" / "consult.dev.jsonl"


def stop(proc: subprocess.Popen | None) -> None:
    if proc is None or proc.poll() is not None:
        return
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def run(cmd: list[str], env: dict, timeout: float) -> tuple[float, int, str, str]:
    start = time.perf_counter()
    try:
        done = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
        code, out, err = done.returncode, done.stdout, done.stderr
    except subprocess.TimeoutExpired as exc:
        code, out, err = 124, exc.stdout or "", (exc.stderr or "") + f"\n(timed out after {timeout:g} s)"
        out = out.decode() if isinstance(out, bytes) else out
        err = err.decode() if isinstance(err, bytes) else err
    return time.perf_counter() - start, code, out, err


def fallbacks(state: dict) -> list[str]:
    """What fell back in a saved consultation, and why, in plain lines."""
    lines = []
    for event in state.get("trace", []):
        if not event.get("ok", True) or event.get("action") == "build tree":
            lines.append(f"{event['agent']}/{event['action']}: {event['summary'][:200]}")
    for i, turn in enumerate(state.get("turns", [])):
        if turn.get("role") == "lawyer" and turn.get("note"):
            lines.append(f"turn {i} note: {turn['note'][:160]}")
        held = turn.get("held_back") or turn.get("withheld")
        if held:
            lines.append(f"turn {i} held back: {str(held)[:160]}")
    tree = state.get("tree") or {}
    sources = _tree_sources(tree)
    if sources:
        lines.append("tree elements by source: " + ", ".join(f"{k} {v}" for k, v in sorted(sources.items())))
    report = state.get("report") or {}
    if report and (report.get("partial") or report.get("note") or report.get("problem")):
        lines.append(f"report: {str(report.get('note') or report.get('problem') or 'partial')[:160]}")
    return lines


def _tree_sources(tree: dict) -> dict[str, int]:
    """Elements per source (``model``, ``material``, ``cases``), with why the model was not used."""
    counts: dict[str, int] = {}
    for node in tree.get("nodes", []):
        if node.get("depth", 0) == 0:
            continue
        key = node.get("source") or "?"
        if node.get("fallback"):
            key += f" (model not used: {node['fallback']})"
        counts[key] = counts.get(key, 0) + 1
    return counts


def server_speed(log: Path) -> str:
    """Prompt-reading and generation speed from llama.cpp's per-request perf lines."""
    if not log.exists():
        return "no server log"
    prompt_ms = prompt_tok = gen_ms = gen_tok = 0.0
    requests = 0
    for kind, ms, n in PERF.findall(log.read_text(errors="replace")):
        if kind.strip() == "prompt eval":
            prompt_ms, prompt_tok = prompt_ms + float(ms), prompt_tok + int(n)
            requests += 1
        else:
            gen_ms, gen_tok = gen_ms + float(ms), gen_tok + int(n)
    if not requests:
        return "no perf lines in the server log"
    return (
        f"{requests} requests: prompt {prompt_tok:.0f} tokens read at {prompt_tok / max(prompt_ms, 1) * 1000:.1f} tok/s, "
        f"{gen_tok:.0f} tokens generated at {gen_tok / max(gen_ms, 1) * 1000:.1f} tok/s"
    )


def app_consultations(url: str, n: int, out: Path) -> list[dict]:
    from gradio_client import Client

    results = []
    for i in range(n):
        question = QUESTIONS[i % len(QUESTIONS)]
        client = Client(url, verbose=False, download_files=False, analytics_enabled=False)
        steps: dict[str, float] = {}
        error = None
        try:
            for name, call_args, endpoint in (
                ("ask (route + tree)", (question, True, 3, 2), "/ask"),
                ("mark 1 yes", ("1", "yes"), "/mark"),
                ("mark 2 no", ("2", "no"), "/mark"),
                ("answer", (), "/answer"),
                ("end (report)", (), "/end_consultation"),
            ):
                start = time.perf_counter()
                client.predict(*call_args, api_name=endpoint)
                steps[name] = time.perf_counter() - start
            state = client.predict(api_name="/consultation")
            state = json.loads(state) if isinstance(state, str) else state
        except Exception as exc:  # noqa: BLE001 — a smoke run reports every failure and goes on
            error, state = f"{type(exc).__name__}: {exc}"[:300], {}
        finally:
            client.close()
        (out / f"app_consultation_{i + 1}.json").write_text(json.dumps(state, ensure_ascii=False, indent=1))
        results.append({"question": question, "steps": steps, "error": error, "state": state})
    return results


def lawbench_questions(path: Path, n: int) -> Path:
    rows = read_jsonl(LAWBENCH_CONSULT)[:n]
    path.write_text(
        "".join(
            json.dumps({"id": r["id"], "question": r["question"]}, ensure_ascii=False) + "\n" for r in rows
        ),
        encoding="utf-8",
    )
    return path


def real_answers(path: Path, n: int) -> Path:
    """The first system's answers to the first ``n`` LawBench consultation questions."""
    rows = read_jsonl(DATA / "lawbench" / "consult_predictions.dev.jsonl")
    system = rows[0]["system"]
    ids = [r["id"] for r in read_jsonl(LAWBENCH_CONSULT)[:n]]
    kept = [r for r in rows if r["system"] == system and r["id"] in ids]
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in kept), encoding="utf-8")
    return path


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--gguf", type=Path, help="start llama-cpp-python's server on this GGUF file")
    where.add_argument("--base-url", help="an OpenAI-compatible server that is already running (…/v1)")
    where.add_argument(
        "--scripted", action="store_true", help="the scripted fake server of tests/fakes (no model)"
    )
    parser.add_argument("--model", default="gemma-3-270m", help="the model's name on the server (alias)")
    parser.add_argument("--llama-python", default=sys.executable, help="python with llama-cpp-python[server]")
    parser.add_argument(
        "--chat-format", default="gemma", help="llama-cpp-python --chat_format (default gemma)"
    )
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--config", default="configs/llamacpp-cpu.yaml")
    parser.add_argument("--consultations", type=int, default=3, help="app consultations (default 3)")
    parser.add_argument(
        "--questions", type=int, default=5, help="LawBench questions for generate (default 5)"
    )
    parser.add_argument(
        "--step-timeout", type=float, default=1800, help="seconds per CLI step (default 1800)"
    )
    parser.add_argument("--out", type=Path, default=None, help="folder for the states, answers and logs")
    return parser.parse_args()


def start_server(args: argparse.Namespace, server_log: Path):
    """(llama.cpp server process or None, fake server or None, base URL) of the model server asked for;
    a server that fails to come up is stopped before the error propagates."""
    server = fake = None
    if args.gguf:
        port = free_port()
        base_url = f"http://127.0.0.1:{port}/v1"
        cmd = [
            args.llama_python, "-m", "llama_cpp.server", "--model", str(args.gguf),
            "--model_alias", args.model, "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "8192",
            "--chat_format", args.chat_format, "--n_threads", str(args.threads), "--interrupt_requests", "False",
        ]  # fmt: skip
        server = subprocess.Popen(cmd, stdout=server_log.open("w"), stderr=subprocess.STDOUT)
        try:
            print(f"llama.cpp server up after {wait_for(base_url + '/models', 300, server):.1f} s")
        except BaseException:
            stop(server)  # it never came up: stopped here, as the caller never gets it
            raise
    elif args.scripted:
        from tests.fakes.firm_models import FirmResponder
        from tests.fakes.openai_server import FakeOpenAIServer

        fake = FakeOpenAIServer(latency=0.05)
        try:
            fake.responder = FirmResponder()
        except BaseException:
            fake.close()
            raise
        base_url = fake.url
    else:
        base_url = args.base_url.rstrip("/")
    return server, fake, base_url


def consult_step(python: list[str], env: dict, out: Path, timeout: float, rows: list) -> None:
    """Steps 1 and 2: ``models --ping`` and a scripted ``consult``, with what fell back."""
    seconds, code, stdout, stderr = run([*python, "models", "--ping"], env, 300)
    rows.append(("models --ping", seconds, f"exit {code}"))
    print(stdout.strip() or stderr.strip()[-500:])

    saved = out / "consult_state.json"
    seconds, code, stdout, stderr = run(
        [*python, "consult", "--script", "examples/consultation.json", "--save", str(saved)],
        env,
        timeout,
    )
    rows.append(("consult --script examples/consultation.json", seconds, f"exit {code}"))
    (out / "consult_stdout.json").write_text(stdout)
    if code:
        print("consult stderr:", stderr.strip()[-800:])
    if saved.exists():
        print("consult: fell back / held back:")
        for line in fallbacks(json.loads(saved.read_text())) or ["(nothing)"]:
            print("  -", line)


def app_step(env: dict, out: Path, consultations: int, rows: list) -> None:
    """Step 3: ``python app.py`` and its consultations through ``gradio_client``; the app is stopped after."""
    app_port = free_port()
    app_env = {**env, "GRADIO_SERVER_PORT": str(app_port), "GRADIO_SERVER_NAME": "127.0.0.1"}
    app = subprocess.Popen(
        [sys.executable, "app.py"], cwd=ROOT, env=app_env, stdout=(out / "app.log").open("w"),
        stderr=subprocess.STDOUT,
    )  # fmt: skip
    try:
        url = f"http://127.0.0.1:{app_port}/"
        rows.append(("app start (GET / 200)", wait_for(url, 300, app), ""))
        for i, result in enumerate(app_consultations(url, consultations, out), 1):
            total = sum(result["steps"].values())
            detail = ", ".join(f"{k} {v:.1f} s" for k, v in result["steps"].items())
            rows.append((f"app consultation {i}", total, result["error"] or detail))
            print(f"app consultation {i}: {result['question'][:30]}…")
            for line in fallbacks(result["state"]) or ["(nothing fell back)"]:
                print("  -", line)
    finally:
        stop(app)


def generate_step(python: list[str], env: dict, out: Path, args: argparse.Namespace, rows: list) -> None:
    """Step 4: ``generate`` on LawBench questions, then ``evaluate`` (NHSR and the judge's score)."""
    questions = lawbench_questions(out / "questions.jsonl", args.questions)
    answers = out / "answers.jsonl"
    seconds, code, stdout, stderr = run(
        [*python, "generate", "--questions", str(questions), "--system", "lawluo-smoke", "--out", str(answers),
         "--quiet"],
        env, args.step_timeout,
    )  # fmt: skip
    rows.append((f"generate ({args.questions} LawBench questions)", seconds, f"exit {code}"))
    if stderr.strip():
        print("generate:", stderr.strip()[-800:])
    if not answers.exists() or not answers.read_text(encoding="utf-8").strip():
        # every answer was held back (a base model): the judge is still tried, on one real system's answers
        answers = real_answers(out / "lawbench_answers.jsonl", args.questions)
        print(f"evaluate: no answer of this model was kept; judging {answers.name} (a LawBench system's)")
    seconds, code, stdout, stderr = run(
        [*python, "evaluate", "--answers", str(answers), "--references", str(LAWBENCH_CONSULT),
         "--metrics", "nhsr,score", "--limit", str(args.questions), "--out", str(out / "evaluation"),
         "--no-cache", "--quiet"],
        env, args.step_timeout,
    )  # fmt: skip
    rows.append(("evaluate (NHSR + judge single score)", seconds, f"exit {code}"))
    print("evaluate:", (stdout.strip() or stderr.strip())[-1200:])


def print_steps(rows: list, server_log: Path | None, out: Path) -> None:
    """The table of timed steps, the server's speed (``--gguf``) and the totals."""
    print("\n| step | seconds | detail |\n|---|---:|---|")
    for name, seconds, detail in rows:
        print(f"| {name} | {seconds:.1f} | {detail} |")
    if server_log is not None:
        print("\nserver speed:", server_speed(server_log))
    times = [s for _, s, _ in rows if s]
    print(f"\ntotal {sum(times):.0f} s; median step {statistics.median(times):.1f} s; files in {out}")


def main() -> int:
    args = parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="lawluo-smoke-"))
    out.mkdir(parents=True, exist_ok=True)
    server = fake = None
    server_log = out / "server.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LAWLUO_", "OPENAI_"))}
    try:
        server, fake, base_url = start_server(args, server_log)
        env.update(
            {
                "LAWLUO_CONFIG": args.config,
                "LAWLUO_DEFAULT_BASE_URL": base_url,
                "LAWLUO_DEFAULT_MODEL": args.model,
            }
        )
        python = [sys.executable, "-m", "lawluo"]
        rows: list[tuple[str, float, str]] = []
        consult_step(python, env, out, args.step_timeout, rows)
        app_step(env, out, args.consultations, rows)
        generate_step(python, env, out, args, rows)
        print_steps(rows, server_log if args.gguf else None, out)
    finally:
        stop(server)
        if fake is not None:
            fake.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
