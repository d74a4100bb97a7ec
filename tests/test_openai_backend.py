"""The openai backend through the real ``openai`` client against the fake server on loopback:
streaming and plain answers, and every injected fault becoming a retry or the right typed error."""

from __future__ import annotations

import socket

import pytest
from pydantic import BaseModel

from lawluo.llm import (
    AuthenticationFailed,
    LLMConnectionError,
    LLMTimeout,
    MalformedResponse,
    RateLimited,
    RequestRejected,
    ServerError,
    StreamInterrupted,
)
from lawluo.llm.answer import cut_at
from lawluo.llm.openai_backend import OpenAIBackend
from lawluo.llm.options import OpenAIOptions

from .fakes.openai_server import FakeOpenAIServer, Fault, Reply, tokenize

HELLO = [{"role": "system", "content": "你是律师。"}, {"role": "user", "content": "试用期可以不交社保吗？"}]
ANSWER = "不可以。根据《社会保险法》第五十八条，用人单位应当自用工之日起三十日内为职工申请办理社会保险登记。"


@pytest.fixture
def server():
    with FakeOpenAIServer() as fake:
        yield fake


def backend(server, **options) -> OpenAIBackend:
    defaults = {
        "model": "fake-model",
        "base_url": server.url,
        "backoff": 0.001,
        "max_retries": 2,
        "timeout": 5,
    }
    return OpenAIBackend(OpenAIOptions(**{**defaults, **options}), role="lawyer", api_key="test")


def test_chat_returns_the_answer_and_sends_the_configured_request(server):
    server.script(Reply(ANSWER))
    model = backend(server, temperature=0.2, max_tokens=300, extra_body={"enable_thinking": False})
    assert model.chat(HELLO, top_p=0.9) == ANSWER
    (request,) = server.requests
    assert request["model"] == "fake-model" and request["messages"] == HELLO
    assert (request["temperature"], request["max_tokens"], request["top_p"]) == (0.2, 300, 0.9)
    assert request["enable_thinking"] is False and request["stream"] is True  # every call streams
    assert "response_format" not in request


def test_stream_false_sends_one_plain_request_for_servers_that_cannot_stream(server):
    server.script(Reply(ANSWER, finish_reason="length"))
    answer = backend(server, stream=False).chat(HELLO, max_tokens=32)
    assert answer == ANSWER and cut_at(answer) == 32
    assert server.requests[0]["stream"] is False


def test_stream_yields_the_answer_piece_by_piece(server):
    server.script(Reply(ANSWER))
    pieces = list(backend(server).stream(HELLO))
    assert pieces == tokenize(ANSWER) and len(pieces) > 10
    assert "".join(pieces) == ANSWER
    assert server.requests[0]["stream"] is True


def test_the_deprecated_json_mode_still_chooses_json_object_or_nothing(server):
    class Verdict(BaseModel):
        relevant: bool
        score: int

    server.script(
        Reply('```json\n{"relevant": true, "score": 8}\n```'), Reply('{"relevant": false, "score": 2}')
    )
    assert backend(server, json_mode=True).chat_json(HELLO, Verdict) == Verdict(relevant=True, score=8)
    assert server.requests[0]["response_format"] == {"type": "json_object"}
    backend(server, json_mode=False).chat_json(HELLO, Verdict)
    assert "response_format" not in server.requests[1]
    with pytest.raises(ValueError, match="set only response_format"):
        OpenAIOptions(model="m", json_mode=True, response_format="json_schema")


@pytest.mark.parametrize(
    "fault",
    [
        Fault.status(429, retry_after_ms=5),
        Fault.status(500),
        Fault.status(503),
        Fault.malformed(),
    ],
    ids=["429", "500", "503", "malformed-body"],
)
def test_transient_faults_are_retried_until_the_answer_arrives(server, fault):
    server.script(fault, Reply(ANSWER))
    assert backend(server, timeout=0.5).chat(HELLO) == ANSWER
    assert len(server.requests) == 2


def test_a_timed_out_request_is_not_sent_again_by_default(server):
    server.script(Fault.hang(2), Reply(ANSWER))
    with pytest.raises(LLMTimeout):
        backend(server, timeout=0.3, max_retries=3).chat(HELLO)
    assert len(server.requests) == 1  # the server may still be generating it: no second copy behind it


def test_retry_timeouts_re_sends_a_timed_out_request(server):
    server.script(Fault.hang(2), Reply(ANSWER))
    assert backend(server, timeout=0.3, retry_timeouts=True).chat(HELLO) == ANSWER
    assert len(server.requests) == 2


def test_a_dropped_connection_before_the_answer_is_retried(server):
    server.script(Fault.broken_stream("x", after=0), Reply(ANSWER))
    assert backend(server).chat(HELLO) == ANSWER


def test_a_stream_is_retried_when_it_fails_before_its_first_piece(server):
    server.script(Fault.status(500), Reply(ANSWER))
    assert "".join(backend(server).stream(HELLO)) == ANSWER


@pytest.mark.parametrize(
    ("fault", "error", "message"),
    [
        (Fault.status(429), RateLimited, r"is rate-limiting requests \(429"),
        (Fault.status(500), ServerError, "failed with 500"),
        (Fault.malformed(), MalformedResponse, "not valid OpenAI JSON"),
    ],
    ids=["429", "500", "malformed-body"],
)
@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "whole"])
def test_faults_that_persist_end_in_a_typed_error_after_max_retries(server, fault, error, message, stream):
    server.script(*[fault] * 3)
    with pytest.raises(error, match=message) as caught:
        backend(server, max_retries=2, stream=stream).chat(HELLO)
    assert "fake-model" in str(caught.value)
    assert len(server.requests) == 3


def test_a_timeout_names_the_setting_to_raise(server):
    server.script(Fault.hang(2))
    with pytest.raises(
        LLMTimeout, match=r"did not answer within 0.3 s \(waiting .*Raise `timeout` for the lawyer"
    ):
        backend(server, timeout=0.3, max_retries=0).chat(HELLO)


@pytest.mark.parametrize(
    ("fault", "error", "message"),
    [
        (Fault.status(401), AuthenticationFailed, "rejected the API key from OPENAI_API_KEY"),
        (Fault.status(400, message="prompt is too long"), RequestRejected, "400: prompt is too long"),
    ],
    ids=["401", "400"],
)
def test_faults_that_cannot_be_fixed_by_retrying_are_not_retried(server, fault, error, message):
    server.script(fault, Reply(ANSWER))
    with pytest.raises(error, match=message):
        backend(server).chat(HELLO)
    assert len(server.requests) == 1


def test_an_unknown_model_says_where_to_find_the_served_names():
    with FakeOpenAIServer(models=["Qwen/Qwen2.5-7B-Instruct"]) as server:
        with pytest.raises(RequestRejected, match=r"has no model 'lawluo-lawyer' \(404.*/v1/models"):
            backend(server, model="lawluo-lawyer").chat(HELLO)


def test_a_wrong_key_is_reported_as_an_authentication_failure():
    with FakeOpenAIServer(api_key="right") as server:
        model = OpenAIBackend(
            OpenAIOptions(model="m", base_url=server.url, api_key_env="DEEPSEEK_API_KEY"),
            role="judge",
            api_key="wrong",
        )
        with pytest.raises(AuthenticationFailed, match="DEEPSEEK_API_KEY"):
            model.chat(HELLO)


def test_an_unreachable_server_is_a_connection_error_naming_the_role_and_logging_the_url(caplog):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens here
    options = OpenAIOptions(model="m", base_url=f"http://127.0.0.1:{port}/v1", max_retries=1, backoff=0.001)
    with pytest.raises(LLMConnectionError, match="Cannot reach the judge role's model server") as caught:
        OpenAIBackend(options, role="judge", api_key="k").chat(HELLO)
    assert f"127.0.0.1:{port}" not in str(caught.value)  # the message may reach a visitor
    assert f"http://127.0.0.1:{port}/v1" in caplog.text  # the operator reads it in the log


def test_a_stream_that_breaks_midway_keeps_the_partial_answer(server):
    server.script(Fault.broken_stream(ANSWER, after=3))
    received = []
    with pytest.raises(StreamInterrupted, match="broke off after") as caught:
        for piece in backend(server).stream(HELLO):
            received.append(piece)
    assert received == tokenize(ANSWER)[:3]
    assert caught.value.partial == "".join(received)
    assert len(server.requests) == 1  # text already shown is never silently replaced by a retry


def test_closing_a_stream_early_frees_its_slot(server):
    server.tokens_per_second = 200
    model = backend(server, concurrency=1)
    stream = model.stream(HELLO)
    assert next(stream)
    stream.close()
    server.script(Reply("好"))
    assert model.chat(HELLO) == "好"
