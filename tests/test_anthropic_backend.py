"""The ``anthropic`` backend (lawluo/llm/anthropic_backend.py) against a fake Messages API on loopback
(tests/fakes/anthropic_server.py): the answer, the request, retries, errors, the watchdog and the deadlines of
:mod:`lawluo.llm.http`. Offline, no key."""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path

import pytest

from lawluo.config import load_settings
from lawluo.llm import (
    AuthenticationFailed,
    LLMConnectionError,
    LLMTimeout,
    MalformedResponse,
    ModelUnavailable,
    RequestRejected,
    ServerError,
    StreamInterrupted,
)
from lawluo.llm.answer import cut_at
from lawluo.llm.anthropic_backend import AnthropicBackend
from lawluo.llm.budget import BudgetExceeded, Deadline
from lawluo.llm.cancel import Cancelled, CancelToken, watching
from lawluo.llm.options import AnthropicOptions
from lawluo.llm.registry import create_backend

from .fakes.anthropic_server import FakeAnthropicServer, Fault, Reply

pytestmark = pytest.mark.slow  # 4 s of the suite on 2 cores (4 s or more: left out of the inner loop)

KEY = "test-key-never-logged"
SYSTEM = "你是一名中国劳动法律师。"
QUESTION = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "试用期可以不交社保吗？"}]
CONFIG = Path(__file__).resolve().parent.parent / "configs" / "anthropic.yaml"


@pytest.fixture
def server():
    with FakeAnthropicServer(api_key=KEY) as fake:
        yield fake


def backend(server: FakeAnthropicServer, key: str | None = KEY, **options) -> AnthropicBackend:
    settings = {"model": "claude-test", "base_url": server.url, "backoff": 0.001, "timeout": 10.0} | options
    return AnthropicBackend(AnthropicOptions(**settings), role="lawyer", api_key=key)


def test_a_streamed_answer_is_assembled_from_its_text_deltas(server):
    server.script(Reply("依据《社会保险法》第五十八条，试用期也必须缴纳社保。"))
    stream = backend(server).stream(QUESTION)
    pieces = list(stream)
    assert len(pieces) > 5
    assert "".join(pieces) == "依据《社会保险法》第五十八条，试用期也必须缴纳社保。"
    assert cut_at(stream) is None
    assert backend(server).chat(QUESTION) == "echo: 试用期可以不交社保吗？"


def test_the_request_carries_the_system_prompt_the_version_and_the_key(server):
    backend(server, temperature=0.2, max_tokens=300).chat(QUESTION, stop=["。"], top_p=0.9)
    body, headers = server.requests[-1], server.headers[-1]
    assert body["system"] == SYSTEM
    assert body["messages"] == [{"role": "user", "content": "试用期可以不交社保吗？"}]
    assert (body["model"], body["max_tokens"], body["stream"], body["temperature"]) == (
        "claude-test",
        300,
        True,
        0.2,
    )
    assert (body["top_p"], body["stop_sequences"]) == (0.9, ["。"])
    assert headers["anthropic-version"] == "2023-06-01" and headers["x-api-key"] == KEY


def test_a_whole_answer_without_streaming_and_a_cut_one(server):
    server.script(Reply("答案", stop_reason="max_tokens"))
    answer = backend(server, stream=False).chat(QUESTION, max_tokens=2)
    assert answer == "答案" and cut_at(answer) == 2
    assert server.requests[-1]["stream"] is False


def test_overloaded_and_rate_limited_are_retried_then_the_answer_arrives(server, caplog):
    server.script(
        Fault.status("overloaded_error"), Fault.status("rate_limit_error", retry_after=0), Reply("好")
    )
    with caplog.at_level(logging.WARNING, logger="lawluo.llm.anthropic_backend"):
        assert backend(server).chat(QUESTION) == "好"
    assert len(server.requests) == 3
    assert "ServerError; retry 1/3" in caplog.text and "RateLimited; retry 2/3" in caplog.text
    assert KEY not in caplog.text


def test_overloaded_every_time_ends_in_a_server_error_after_max_retries(server):
    server.script(*[Fault.status("overloaded_error")] * 3)
    with pytest.raises(ServerError, match="overloaded") as caught:
        backend(server, max_retries=2).chat(QUESTION)
    assert len(server.requests) == 3
    assert server.url not in str(caught.value)


def test_a_wrong_key_is_an_authentication_error_naming_the_variable_and_is_not_retried(server, caplog):
    with caplog.at_level(logging.WARNING), pytest.raises(AuthenticationFailed) as caught:
        backend(server, key="wrong-key").chat(QUESTION)
    message = str(caught.value)
    assert "ANTHROPIC_API_KEY" in message and "401" in message and "claude-test" in message
    assert server.url not in message and "127.0.0.1" not in message
    assert "wrong-key" not in message and "wrong-key" not in caplog.text
    assert server.received == 1 and server.requests == []  # refused once, before the body was recorded


def test_no_key_makes_the_role_unavailable_before_any_request(server):
    model = backend(server, key=None)
    assert not model.available and "ANTHROPIC_API_KEY" in model.unavailable_reason()
    with pytest.raises(ModelUnavailable):
        model.chat(QUESTION)


def test_a_bad_request_is_rejected_without_a_retry(server):
    server.script(Fault.status("invalid_request_error", "prompt is too long"))
    with pytest.raises(RequestRejected, match="prompt is too long"):
        backend(server).chat(QUESTION)
    assert len(server.requests) == 1


def test_a_stalled_stream_is_cut_at_call_timeout(server):
    server.script(Fault.stall("依据 劳动 合同法", after=2, seconds=30))
    start = time.monotonic()
    with pytest.raises(LLMTimeout, match="call_timeout=0.6"):
        backend(server, call_timeout=0.6).chat(QUESTION)
    assert time.monotonic() - start < 5  # pings every 0.2 s keep every read alive
    deadline = time.monotonic() + 5
    while server.abandoned < 1 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.abandoned == 1  # the server saw the client go


def test_a_stream_that_stalls_after_its_first_pieces_keeps_them(server):
    server.script(Fault.stall("依据 劳动 合同法", after=2, seconds=30))
    received = []
    with pytest.raises(StreamInterrupted) as caught:
        for piece in backend(server, call_timeout=0.6).stream(QUESTION):
            received.append(piece)
    assert caught.value.partial == "".join(received) == "依据"  # two tokens: 依, 据


def test_the_watchdog_stops_a_cancelled_stream_while_the_server_is_silent(server):
    server.script(Fault.stall("", after=0, seconds=30, pings=False))  # headers, then nothing: no read ends
    token = CancelToken()
    model = backend(server)
    threading.Timer(0.3, token.cancel).start()
    start = time.monotonic()
    with watching(token), pytest.raises(Cancelled):
        model.chat(QUESTION)
    assert time.monotonic() - start < 5
    deadline = time.monotonic() + 5
    while server.abandoned < 1 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.abandoned == 1  # the socket was shut down: the server saw the client go


def test_a_connection_dropped_before_the_first_piece_is_retried(server):
    server.script(Fault.broken("半句", after=0), Reply("完整的答案"))
    assert backend(server).chat(QUESTION) == "完整的答案"
    assert len(server.requests) == 2


def test_a_stream_broken_midway_keeps_its_partial_answer(server):
    server.script(Fault.broken("依据 劳动合同法 第十九条", after=4))
    received = []
    with pytest.raises(StreamInterrupted) as caught:
        for piece in backend(server).stream(QUESTION):
            received.append(piece)
    assert caught.value.partial == "".join(received) == "依据 劳动"  # four tokens
    assert len(server.requests) == 1  # shown text is never sent again


@pytest.mark.parametrize(
    ("fault", "error"),
    [
        (Fault.garbled(), MalformedResponse),
        (Fault.unended("没有结尾的答案"), LLMConnectionError),
        (Fault.error_event("overloaded_error"), ServerError),
    ],
    ids=["garbled-json", "no-message_stop", "error-event"],
)
def test_broken_event_streams_become_typed_errors_and_are_retried(server, fault, error):
    server.script(fault, Reply("好"))
    assert backend(server).chat(QUESTION) == "好"  # retried
    server.script(fault)
    with pytest.raises(error):
        backend(server, max_retries=0).chat(QUESTION)


def test_a_silent_server_times_out_after_timeout_and_is_not_sent_again(server):
    server.script(Fault.hang(30))
    start = time.monotonic()
    with pytest.raises(LLMTimeout, match="within 0.5 s") as caught:
        backend(server, timeout=0.5).chat(QUESTION)
    assert time.monotonic() - start < 3
    assert len(server.requests) == 1 and "Raise `timeout`" in str(caught.value)


def test_the_steps_deadline_is_respected_retries_included(server):
    server.script(*[Fault.status("overloaded_error", retry_after=0.3)] * 10)
    start = time.monotonic()
    with Deadline.after(0.5, "the test step").active(), pytest.raises((BudgetExceeded, ServerError)):
        backend(server, max_retries=10).chat(QUESTION)
    assert time.monotonic() - start < 2
    assert len(server.requests) < 4


def test_a_hung_server_is_cut_at_the_steps_deadline(server):
    server.script(Fault.hang(30))
    start = time.monotonic()
    with Deadline.after(0.5, "the test step").active(), pytest.raises(BudgetExceeded):
        backend(server).chat(QUESTION)
    assert time.monotonic() - start < 3


def test_the_registry_and_the_example_config_select_the_backend(monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    model = create_backend("anthropic", AnthropicOptions(model="claude-test"), "judge", api_key="k")
    assert isinstance(model, AnthropicBackend) and model.describe() == "anthropic · claude-test"
    assert model.base_url == "https://api.anthropic.com"
    settings = load_settings(CONFIG, environ={"ANTHROPIC_API_KEY": KEY})
    for role in ("lawyer", "clarifier", "judge", "boss"):
        config = getattr(settings.models, role)
        assert config.backend == "anthropic" and config.api_key == KEY
        assert isinstance(config.options, AnthropicOptions)
    assert KEY not in repr(settings)


def test_setup_notes_say_the_retries_and_time_limits(server):
    notes = backend(server, call_timeout=30).setup_notes()
    assert notes["retries"].startswith("up to 3 on 429") and "call_timeout 30 s" in notes["timeout"]
