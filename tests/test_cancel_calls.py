"""A cancelled model call stops: the server sees the connection close and finishes nothing for it.

Against the fake OpenAI-compatible server, which (like llama.cpp's and vLLM's) stops working on a request
whose client hung up and counts the requests it ``finished`` and those ``abandoned``. Reproduces issue 21:
with a slow local server, requests nobody waited for any more were generated to the end.
"""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest
from pydantic import BaseModel

from lawluo.llm.cancel import Cancelled, CancelToken, watching
from lawluo.llm.openai_backend import OpenAIBackend
from lawluo.llm.options import OpenAIOptions

from .fakes.openai_server import FakeOpenAIServer, Reply

pytestmark = pytest.mark.slow  # 7 s of the suite on 2 cores (4 s or more: left out of the inner loop)

QUESTION = [{"role": "user", "content": "试用期可以不交社保吗？"}]
LONG_ANSWER = "不可以。用人单位应当自用工之日起三十日内为职工申请办理社会保险登记。" * 4  # ~130 tokens


def backend(server: FakeOpenAIServer, **options) -> OpenAIBackend:
    settings = {"model": "fake-model", "base_url": server.url, "max_retries": 0, "timeout": 30, **options}
    return OpenAIBackend(OpenAIOptions(**settings), role="lawyer", api_key="test")


def until(condition, what: str, seconds: float = 20.0) -> None:
    """Wait for ``condition()`` (polled); fail naming ``what`` if it never holds."""
    end = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < end, f"never happened: {what}"
        time.sleep(0.01)


def test_a_stream_cancelled_after_its_first_piece_closes_the_connection_and_the_server_stops():
    with FakeOpenAIServer(tokens_per_second=10) as server:  # the whole answer would take ~13 s
        server.script(Reply(LONG_ANSWER))
        token = CancelToken()
        with watching(token):
            pieces = backend(server).stream(QUESTION)
            first = next(pieces)
            token.cancel("the visitor left")
            with pytest.raises(Cancelled, match="the visitor left"):
                next(pieces)
        until(lambda: server.abandoned == 1, "the server saw the connection close")
        assert first and server.finished == 0
        assert server.stream_log[0]["chunks"] < 10  # it stopped generating, not sent the rest


def test_a_call_waiting_for_a_busy_slot_is_cancelled_before_it_sends_anything():
    with FakeOpenAIServer(tokens_per_second=20) as server:
        server.script(Reply(LONG_ANSWER[:40]))
        model = backend(server, concurrency=1)
        holding = model.stream(QUESTION)
        next(holding)  # the only slot is taken by a stream in progress
        token, outcome = CancelToken(), {}

        def waiting() -> None:
            with watching(token):
                try:
                    outcome["answer"] = model.chat(QUESTION)
                except Cancelled as exc:
                    outcome["error"] = exc

        caller = threading.Thread(target=waiting)
        caller.start()
        caller.join(0.3)  # gives it time to reach the wait: the slot stays taken while `holding` is open
        assert caller.is_alive()
        token.cancel("the visitor started a new consultation")
        caller.join(10)
        rest = "".join(holding)  # the first call goes on, unaffected
        assert not caller.is_alive() and "answer" not in outcome
        assert "new consultation" in str(outcome["error"])
        assert server.wait_idle() and len(server.requests) == 1 and server.finished == 1 and rest


def test_a_token_cancelled_before_the_call_sends_nothing():
    with FakeOpenAIServer() as server:
        token = CancelToken()
        token.cancel()
        with watching(token), pytest.raises(Cancelled):
            backend(server).chat(QUESTION)
        assert server.requests == []


class Elements(BaseModel):
    elements: list[str]


def test_a_structured_call_is_streamed_so_cancelling_it_stops_the_server():
    """Waits for helper A's change (issue 21 item 2: the openai backend's ``chat()`` streams internally);
    until then the JSON is asked for in one piece, the call cannot be stopped, and this fails."""
    elements = ", ".join(f'"要素{i}：劳动者是否已经在用人单位连续工作满一年"' for i in range(8))
    with FakeOpenAIServer(tokens_per_second=10) as server:
        server.script(Reply(f'{{"elements": [{elements}]}}'))  # ~150 tokens: ~15 s
        token, outcome = CancelToken(), {}

        def structured() -> None:
            with watching(token):
                try:
                    outcome["answer"] = backend(server).chat_json(QUESTION, Elements)
                except Cancelled as exc:
                    outcome["error"] = exc

        caller = threading.Thread(target=structured)
        caller.start()
        streaming = lambda: bool(server.stream_log) and server.stream_log[0]["chunks"] > 0  # noqa: E731
        until(lambda: streaming() or not caller.is_alive(), "the call streams or ends")
        assert streaming(), f"the JSON was not streamed, so the call could not be stopped: {outcome}"
        token.cancel()
        caller.join(10)
        until(lambda: server.abandoned == 1, "the server saw the connection close")
        assert "error" in outcome and server.finished == 0


# -- Ctrl-C in the CLI's batch paths ----------------------------------------------------------------


@pytest.fixture
def cli_server(monkeypatch, firm_services):
    """The fake server as every role's model for ``python -m lawluo`` run in this process."""
    from lawluo.firm import Firm
    from tests.conftest import SESSION_KEYS

    from .fakes.firm_models import FirmResponder
    from .fakes.live_app import model_environ

    for key in list(os.environ):
        if key.startswith(("LAWLUO_", "OPENAI_")) and key not in SESSION_KEYS:
            monkeypatch.delenv(key)
    original = Firm.from_settings.__func__
    monkeypatch.setattr(Firm, "from_settings", classmethod(lambda cls, s: original(cls, s, **firm_services)))
    with FakeOpenAIServer(tokens_per_second=20) as server:
        server.responder = FirmResponder()
        for key, value in model_environ(server).items():
            monkeypatch.setenv(key, value)
        yield server


def test_ctrl_c_during_generate_cancels_the_answers_in_flight_and_the_run_resumes(
    capsys, tmp_path, cli_server
):
    from lawluo.cli import main

    server = cli_server
    server.script(Reply(LONG_ANSWER * 4), Reply(LONG_ANSWER * 4))  # two answers of ~25 s each
    questions, out = tmp_path / "q.jsonl", tmp_path / "answers.jsonl"
    asked = ["公司一直没和我签劳动合同怎么办？", "离婚时孩子的抚养权一般归谁？", "醉酒驾驶会被判刑吗？"]
    questions.write_text(
        "".join(f'{{"id": "{i}", "question": "{q}"}}\n' for i, q in enumerate(asked)), "utf-8"
    )
    argv = ["generate", "--questions", str(questions), "--system", "LawLuo", "--out", str(out), "--quiet"]
    argv.append("--stream")  # streamed answers: the cancel token closes their connections (whole ones: below)
    running = threading.Event()

    def ctrl_c() -> None:  # as a terminal's Ctrl-C: SIGINT to the main thread, once both answers stream
        end = time.monotonic() + 30
        while time.monotonic() < end and not (len(server.stream_log) == 2 and server.stream_log[1]["chunks"]):
            time.sleep(0.01)
        if running.is_set() and len(server.stream_log) == 2:
            signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)

    running.set()
    threading.Thread(target=ctrl_c, daemon=True).start()
    try:
        code = main([*argv, "--concurrency", "2"])
    finally:
        running.clear()
    err = capsys.readouterr().err
    until(lambda: server.abandoned == 2, "the server saw both connections close")
    assert code == 130 and "interrupted (Ctrl-C)" in err and "Traceback" not in err
    assert server.finished == 0 and len(server.requests) == 2  # the third question was never sent
    assert not out.exists() or out.read_text(encoding="utf-8") == ""

    server.tokens_per_second = None
    assert main(argv) == 0  # the same command answers every question
    assert len(out.read_text(encoding="utf-8").splitlines()) == 3


def test_ctrl_c_during_generate_with_whole_answers_exits_at_once_and_the_server_stops(tmp_path):
    """Whole answers (the batch default) cannot be cancelled by closing a stream: the request waits for the
    server's one response. The batch's workers are not waited for, so the command exits on Ctrl-C while
    the server still generates, and the process's exit closes the connections (the server stops too)."""
    import subprocess
    import sys

    from .conftest import ROOT
    from .fakes.firm_models import FirmResponder
    from .fakes.live_app import model_environ

    questions, out = tmp_path / "q.jsonl", tmp_path / "answers.jsonl"
    questions.write_text(
        "".join(f'{{"id": "{i}", "question": "醉酒驾驶会被判刑吗？"}}\n' for i in range(3)), "utf-8"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LAWLUO_", "OPENAI_"))}
    with FakeOpenAIServer(latency=60) as server:  # an answer would take a minute
        server.responder = FirmResponder()
        env.update(model_environ(server), LAWLUO_DEFAULT_TIMEOUT="120")
        argv = ["generate", "--questions", questions, "--system", "S", "--baseline", "--out", out,
                "--concurrency", "2", "--quiet"]  # fmt: skip
        process = subprocess.Popen(
            [sys.executable, "-m", "lawluo", *map(str, argv)],
            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            until(lambda: len(server.requests) == 2 or process.poll() is not None, "both questions sent", 60)
            process.send_signal(signal.SIGINT)
            _, err = process.communicate(timeout=30)  # well before the server's answers
        finally:
            process.kill()
        until(lambda: server.abandoned == 2, "the server saw both connections close")
        assert process.returncode == 130 and "interrupted (Ctrl-C)" in err and "Traceback" not in err, err
        assert server.finished == 0 and len(server.requests) == 2
        assert {r["stream"] for r in server.requests} == {False}
    assert not out.exists() or out.read_text(encoding="utf-8") == ""
