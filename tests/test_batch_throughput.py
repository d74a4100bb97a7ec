"""Batch work that keeps a served model busy (issue 22, item 6): ``generate`` and ``evaluate`` really run
their calls at once, the OpenAI backend shares one client and reuses its connections, and both commands
show a progress bar with ETA (on a terminal) and end with calls per second and the judge cache hit rate.
Counts, not timings: the fake server records the most requests it had in flight and the connections
it accepted. (Throughput figures: ``benchmarks/evaluate_speed.py``, docs/results/evaluate_speed.md.)"""

from __future__ import annotations

import json
import os
import re
import sys
import threading

import pytest

from lawluo.cli import main
from lawluo.firm import Firm
from lawluo.llm import cancel
from lawluo.llm.openai_backend import OpenAIBackend
from lawluo.llm.options import OpenAIOptions
from lawluo.llm.parallel import gather
from tests.conftest import SESSION_KEYS
from tests.fakes.firm_models import FirmResponder
from tests.fakes.judge_responder import JudgeResponder
from tests.fakes.live_app import model_environ
from tests.fakes.openai_server import FakeOpenAIServer

pytestmark = pytest.mark.slow  # 13 s of the suite on 2 cores (4 s or more: left out of the inner loop)

N = 64
LATENCY = 1.0  # long enough for every thread to have sent its call before the first answer comes back


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, [json.loads(line) for line in out.splitlines()], err


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def served(monkeypatch, firm_services):
    """Every role on a fake server with ``LATENCY`` per call and 64 request slots; nothing from the shell."""
    for key in list(os.environ):
        if key.startswith(("LAWLUO_", "OPENAI_")) and key not in SESSION_KEYS:
            monkeypatch.delenv(key)
    original = Firm.from_settings.__func__
    monkeypatch.setattr(Firm, "from_settings", classmethod(lambda cls, s: original(cls, s, **firm_services)))
    with FakeOpenAIServer(latency=LATENCY) as server:
        for key, value in model_environ(server).items():
            monkeypatch.setenv(key, value)
        monkeypatch.setenv("LAWLUO_DEFAULT_CONCURRENCY", str(N))
        yield server


@pytest.fixture
def items(tmp_path):
    refs = [{"id": f"q{i}", "question": f"问题{i}", "reference": "参考"} for i in range(N)]
    answers = [{"id": f"q{i}", "system": "S", "answer": f"回答{i}"} for i in range(N)]
    return write_jsonl(tmp_path / "answers.jsonl", answers), write_jsonl(tmp_path / "refs.jsonl", refs)


def on_a_terminal(monkeypatch):
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)


def test_evaluate_at_concurrency_64_keeps_the_calls_in_flight_and_reports_the_cache(
    capsys, monkeypatch, served, items, tmp_path
):
    served.responder = JudgeResponder()
    on_a_terminal(monkeypatch)
    argv = ["evaluate", "--answers", items[0], "--references", items[1], "--metrics", "score",
            "--concurrency", N, "--cache", tmp_path / "cache.sqlite"]  # fmt: skip
    code, rows, err = run(capsys, *argv, "--out", tmp_path / "o1")
    assert code == 0, err
    assert served.finished == N and served.max_in_flight >= N // 2
    assert served.connections <= N + 1  # one client, its connections pooled (+ the server probe's)
    # the bar: items done of all, the rate, the ETA, the judge's calls and cache hits so far
    assert re.search(
        rf"score: +\d+%\|.*\| *\d+/{N} \[\d\d:\d\d<\d\d:\d\d, +[\d.]+(item/s|s/item), \d+ calls, cache 0 hits\]",
        err,
    )
    assert f"0 hits, {N} calls (hit rate 0.0%)" in err
    assert re.search(rf"judge: {N} model calls in [\d.]+ s \([\d.]+ calls/s\)", err)

    code, rows_again, err = run(capsys, *argv, "--out", tmp_path / "o2", "--quiet")
    assert code == 0 and rows_again == rows and served.finished == N
    assert "\r" not in err and "item" not in err  # --quiet: no bar
    assert f"{N} hits, 0 calls (hit rate 100.0%)" in err and "judge: 0 model calls" in err


def test_generate_at_concurrency_64_keeps_the_calls_in_flight_with_a_progress_bar(
    capsys, monkeypatch, served, tmp_path
):
    served.responder = FirmResponder()
    on_a_terminal(monkeypatch)
    questions = write_jsonl(
        tmp_path / "q.jsonl", [{"id": str(i), "question": f"醉酒驾驶会被判刑吗？{i}"} for i in range(N)]
    )
    code, (summary,), err = run(
        capsys, "generate", "--questions", questions, "--system", "Plain", "--baseline",
        "--out", tmp_path / "a.jsonl", "--concurrency", N,
    )  # fmt: skip
    assert code == 0, err
    assert summary["written"] == N and summary["model_calls"] == N == served.finished
    assert N // 2 <= served.max_in_flight <= N and served.connections <= N + 1  # never more than asked
    assert re.search(
        rf"Plain: 100%\|.*\| {N}/{N} \[\d\d:\d\d<00:00, +[\d.]+(q/s|s/q), {N} model calls\]", err
    )
    assert re.search(rf"generate: {N} model calls in [\d.]+ s \([\d.]+ calls/s\) for {N} questions", err)


def test_the_pipeline_prepares_the_next_questions_in_a_thread_of_its_own(
    capsys, monkeypatch, served, tmp_path
):
    """Routing and retrieval run ahead of the model calls, in one preparing thread, each question once:
    the workers only wait on the model (64 answers ending together no longer leave the server idle while
    64 retrievals share the GIL)."""
    served.responder, served.latency = FirmResponder(), 0.2
    threads, tokens = [], []
    retrieve = Firm.retrieve

    def recording(self, state):
        threads.append(threading.current_thread().name)
        tokens.append(cancel.current())  # the CLI's Ctrl-C token reaches a model the retrieval may ask
        return retrieve(self, state)

    monkeypatch.setattr(Firm, "retrieve", recording)
    n = 12
    questions = write_jsonl(
        tmp_path / "q.jsonl", [{"id": str(i), "question": f"醉酒驾驶会被判刑吗？{i}"} for i in range(n)]
    )
    code, (summary,), err = run(
        capsys, "generate", "--questions", questions, "--system", "LawLuo",
        "--out", tmp_path / "a.jsonl", "--concurrency", 4,
    )  # fmt: skip
    assert code == 0, err
    assert summary["written"] == n and served.finished == summary["model_calls"] >= n
    assert len(threads) == n and all(name.startswith("prepare") for name in threads)
    assert None not in tokens and len(set(map(id, tokens))) == 1


def test_the_batch_commands_ask_for_whole_answers_unless_told_to_stream(
    capsys, monkeypatch, served, items, tmp_path
):
    """Nobody watches a batch's answers being written: ``generate`` and ``evaluate`` ask every role for one
    JSON response a call (less client CPU per answer, docs/evaluation.md), ``--stream`` streams as the
    roles' settings say; the rows are the same either way."""
    served.responder, served.latency = FirmResponder(), 0.0
    questions = write_jsonl(
        tmp_path / "q.jsonl", [{"id": str(i), "question": f"醉酒驾驶会被判刑吗？{i}"} for i in range(4)]
    )
    kinds = {}
    for flag in ([], ["--stream"]):
        before = len(served.requests)
        code, (summary,), err = run(
            capsys, "generate", "--questions", questions, "--system", "LawLuo", *flag,
            "--out", tmp_path / f"a{len(flag)}.jsonl", "--concurrency", 4,
        )  # fmt: skip
        assert code == 0, err
        assert summary["written"] == 4 and summary["model_calls"] >= 4
        kinds[tuple(flag)] = {r["stream"] for r in served.requests[before:]}
    assert kinds == {(): {False}, ("--stream",): {True}}
    rows = [
        [json.loads(line) for line in (tmp_path / f"a{n}.jsonl").read_text("utf-8").splitlines()]
        for n in (0, 1)
    ]
    assert all(r["answer"] and r["verdicts"] for r in rows[0])
    assert sorted(r["answer"] for r in rows[0]) == sorted(r["answer"] for r in rows[1])

    served.responder = JudgeResponder()
    for flag in ([], ["--stream"]):
        before = len(served.requests)
        argv = ["evaluate", "--answers", items[0], "--references", items[1], "--metrics", "score",
                "--no-cache", "--limit", 3, "--out", tmp_path / f"e{len(flag)}", "--quiet", *flag]  # fmt: skip
        code, _, err = run(capsys, *argv)
        assert code == 0, err
        assert {r["stream"] for r in served.requests[before:]} == {bool(flag)}


def test_without_a_terminal_there_is_no_bar_and_a_role_with_fewer_slots_is_named(
    capsys, monkeypatch, served, tmp_path
):
    served.responder, served.latency = FirmResponder(), 0.0
    monkeypatch.setenv("LAWLUO_LAWYER_CONCURRENCY", "4")
    questions = write_jsonl(tmp_path / "q.jsonl", [{"id": "1", "question": "醉酒驾驶会被判刑吗？"}])
    code, _, err = run(
        capsys, "generate", "--questions", questions, "--system", "S", "--baseline",
        "--out", tmp_path / "a.jsonl", "--concurrency", 16,
    )  # fmt: skip
    assert code == 0, err
    assert "\r" not in err and "Plain" not in err  # captured stderr is not a terminal
    assert "LAWLUO_LAWYER_CONCURRENCY=16" in err and "at most 4 in flight" in err and "最多 4 个在途" in err


def test_one_client_per_backend_and_its_connections_are_reused():
    hello = [{"role": "user", "content": "你好"}]
    with FakeOpenAIServer(latency=0.3) as server:
        options = OpenAIOptions(model="fake-model", base_url=server.url, concurrency=16, max_retries=0)
        model = OpenAIBackend(options, role="judge", api_key="test")
        for _ in range(2):  # two waves of 16 at once, the first making the client: one pool serves them all
            gather([lambda: model.chat(hello)] * 16)
        assert server.max_in_flight == 16 and server.connections <= 16 + 1  # + the server probe's
        opened = server.connections
        for _ in range(3):  # one after another: a connection read to the end of its answer is used again
            assert model.chat(hello) == "echo: 你好"
        assert server.connections == opened and model.sent == 35
