"""The openai backend fits the server it talks to (issue 21): llama.cpp (llama-server and llama-cpp-python),
vLLM and Ollama, emulated by the fake server: system messages merged where a template drops or rejects
them, the JSON schema sent as the server understands it (and a rejected format dropped), answers cut at
the call's max_tokens said to be cut, timeouts not re-sent, and a cancelled call closing its connection."""

from __future__ import annotations

import json
import threading
import time
from typing import Literal

import pytest
from pydantic import BaseModel, Field

from lawluo.llm import (
    Cancelled,
    CancelToken,
    LLMConnectionError,
    LLMTimeout,
    RequestRejected,
    StructuredOutputError,
)
from lawluo.llm import openai_backend as backend_module
from lawluo.llm.answer import cut_at
from lawluo.llm.cancel import watching
from lawluo.llm.errors import AnswerCut
from lawluo.llm.openai_backend import OpenAIBackend
from lawluo.llm.options import OpenAIOptions

from .fakes.live_app import free_port
from .fakes.openai_server import Emulation, FakeOpenAIServer, Fault, Reply, tokenize
from .test_openai_backend import backend

SYSTEM = "你是劳动法律师，只依据法律回答。"
HELLO = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "试用期可以不交社保吗？"}]
MERGED = [{"role": "user", "content": f"{SYSTEM}\n\n试用期可以不交社保吗？"}]
GEMMA2_TEMPLATE = (
    "{{ bos_token }}{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}"
    "{% endif %}{% for message in messages %}<start_of_turn>{{ message['content'] }}<end_of_turn>{% endfor %}"
)
LONG = (
    "根据《中华人民共和国社会保险法》第五十八条，用人单位应当自用工之日起三十日内为其职工向社会保险经办机构申请办理社会保险登记。"
    * 3
)


class Verdict(BaseModel):
    relevant: bool
    score: int


def eventually(condition, limit_s: float = 20.0) -> bool:
    """Whether ``condition()`` becomes true (polled); the limit only keeps a broken test from hanging."""
    end = time.monotonic() + limit_s
    while not condition():
        if time.monotonic() > end:
            return False
        time.sleep(0.01)
    return True


def first_content(body: dict) -> str:
    """A responder: what the "model" saw first (system messages a server drops never reach it)."""
    return body["messages"][0]["content"]


SERVERS = {
    "llama-cpp-python": (Emulation.llama_cpp_python(), "merge", "json_object"),
    "llama-server": (Emulation.llama_server(supports_system_role=True), "keep", "json_schema"),
    "llama-server-no-system": (Emulation.llama_server(supports_system_role=False), "merge", "json_schema"),
    "llama-server-old-gemma2": (Emulation.llama_server(None, GEMMA2_TEMPLATE), "merge", "json_schema"),
    "vllm": (Emulation.vllm(), "keep", "json_schema"),
    "ollama": (Emulation.ollama(), "keep", "json_schema"),
    "unknown": (Emulation(), "keep", "json_object"),
}


@pytest.mark.parametrize("kind", list(SERVERS))
def test_auto_detects_each_server_and_sends_what_it_understands(kind):
    emulation, system, response_format = SERVERS[kind]
    with FakeOpenAIServer(emulate=emulation) as server:
        model = backend(server)
        notes = model.setup_notes()
        assert notes["system_message"].startswith(f"{system} (")
        assert notes["response_format"].startswith(f"{response_format} (")
        assert "none on timeouts" in notes["retries"]
        server.script(Reply("好"), Reply('{"relevant": true, "score": 7}'))
        model.chat(HELLO)
        assert model.chat_json(HELLO, Verdict) == Verdict(relevant=True, score=7)
    plain, structured = server.requests
    assert plain["messages"] == (MERGED if system == "merge" else HELLO)
    assert "response_format" not in plain
    sent = structured["response_format"]
    assert sent["type"] == response_format
    schema = Verdict.model_json_schema()
    if response_format == "json_schema":
        assert sent["json_schema"] == {"name": "Verdict", "schema": schema, "strict": False}
    elif kind == "llama-cpp-python":
        assert sent["schema"] == schema  # its json_object takes the schema and turns it into a grammar
    else:
        assert sent == {"type": "json_object"}


class LongReason(BaseModel):
    preference: Literal["A", "B", "tie"]
    reason: str = Field(default="", max_length=2000)
    summary: str = Field(default="", max_length=80)
    points: list[str] = Field(default=[], max_length=5)


@pytest.mark.parametrize("kind", ["llama-cpp-python", "llama-server", "vllm"])
def test_llama_cpp_servers_get_no_length_limits_too_large_for_a_grammar_but_keep_the_small_ones(kind):
    emulation, _, _ = SERVERS[kind]
    with FakeOpenAIServer(emulate=emulation) as server:
        server.script(
            Reply('{"preference": "A", "reason": "' + "理" * 2100 + '"}'), Reply('{"preference": "A"}')
        )
        model = backend(server)
        with pytest.raises(StructuredOutputError):  # the limit is still checked, by pydantic, here
            model.chat_json(HELLO, LongReason, retries=0)
        assert model.chat_json(HELLO, LongReason, retries=0).preference == "A"
    sent = server.requests[0]["response_format"]
    schema = sent["schema"] if "schema" in sent else sent["json_schema"]["schema"]
    text = json.dumps(schema)
    if kind == "vllm":  # its guided decoding takes the limits as they are
        assert '"maxLength": 2000' in text and schema == LongReason.model_json_schema()
    else:
        assert "2000" not in text and schema["properties"]["reason"] == {
            "default": "",
            "title": "Reason",
            "type": "string",
        }
        # small limits stay: they keep a small model from writing on until max_tokens (the short report)
        assert (
            schema["properties"]["summary"]["maxLength"] == 80
            and schema["properties"]["points"]["maxItems"] == 5
        )
        assert schema["properties"]["preference"]["enum"] == ["A", "B", "tie"]


def test_llama_cpp_pythons_gemma_format_would_drop_the_system_prompt_unless_merged():
    with FakeOpenAIServer(emulate=Emulation.llama_cpp_python()) as server:
        server.responder = first_content
        assert (
            backend(server, system_message="keep").chat(HELLO) == "试用期可以不交社保吗？"
        )  # the role is lost
        assert backend(server).chat(HELLO).startswith(SYSTEM)  # auto: merged, so the model reads it


def test_the_server_is_asked_once_per_backend_even_by_many_threads(monkeypatch):
    calls = []
    real_probe = backend_module.probe

    def counting_probe(*args, **kwargs):
        calls.append(args)
        return real_probe(*args, **kwargs)

    monkeypatch.setattr(backend_module, "probe", counting_probe)
    with FakeOpenAIServer(emulate=Emulation.vllm()) as server:
        model = backend(server)
        threads = [threading.Thread(target=model.chat, args=(HELLO,)) for _ in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        model.chat(HELLO)
        model.setup_notes()
        assert len(server.requests) == 7
    assert len(calls) == 1


def test_explicit_options_need_no_probe(monkeypatch):
    monkeypatch.setattr(backend_module, "probe", lambda *a, **k: pytest.fail("the server was probed"))
    with FakeOpenAIServer(emulate=Emulation.llama_cpp_python()) as server:
        model = backend(server, system_message="merge", response_format="none")
        server.script(Reply('{"relevant": false, "score": 1}'))
        assert model.chat_json(HELLO, Verdict).score == 1
        (request,) = server.requests
    assert request["messages"][0]["content"].startswith(SYSTEM) and "response_format" not in request
    assert model.setup_notes()["system_message"] == "merge (system_message: merge in the configuration)"


def test_a_server_that_cannot_be_reached_is_kept_as_it_is_with_a_note():
    options = OpenAIOptions(model="m", base_url=f"http://127.0.0.1:{free_port()}/v1", max_retries=0)
    notes = OpenAIBackend(options, role="judge", api_key="k").setup_notes()
    assert notes["system_message"].startswith("keep (") and "could not reach the server" in notes["server"]
    assert "127.0.0.1" not in " ".join(notes.values())


def test_a_rejected_system_role_is_merged_once_and_remembered():
    with FakeOpenAIServer(emulate=Emulation.vllm(system_role="reject")) as server:
        model = backend(server)
        assert model.chat(HELLO) == f"echo: {SYSTEM}\n\n试用期可以不交社保吗？"
        first, retry = server.requests
        assert first["messages"] == HELLO and retry["messages"] == MERGED
        model.chat(HELLO)
        assert len(server.requests) == 3 and server.requests[2]["messages"] == MERGED  # remembered
        assert model.setup_notes()["system_message"].startswith("merge (the server rejected a system message")


def test_keep_means_keep_even_when_the_server_rejects_the_system_role():
    with FakeOpenAIServer(emulate=Emulation.vllm(system_role="reject")) as server:
        with pytest.raises(RequestRejected, match="System role not supported"):
            backend(server, system_message="keep").chat(HELLO)
        assert len(server.requests) == 1


def test_a_rejected_json_schema_falls_back_to_json_object_and_remembers():
    picky = Emulation(owned_by="vllm", response_formats=("text", "json_object"))
    with FakeOpenAIServer(emulate=picky) as server:
        model = backend(server)
        server.script(Reply('{"relevant": true, "score": 9}'), Reply('{"relevant": false, "score": 0}'))
        assert model.chat_json(HELLO, Verdict).score == 9
        assert model.chat_json(HELLO, Verdict).score == 0
        kinds = [r["response_format"]["type"] for r in server.requests]
    assert kinds == ["json_schema", "json_object", "json_object"]
    assert model.setup_notes()["response_format"].startswith(
        "json_object (the server rejected response_format"
    )


def test_a_server_rejecting_both_formats_gets_none():
    with FakeOpenAIServer(emulate=Emulation(owned_by="llamacpp", response_formats=("text",))) as server:
        model = backend(server)
        server.script(Reply('{"relevant": true, "score": 3}'), Reply('{"relevant": true, "score": 4}'))
        assert model.chat_json(HELLO, Verdict).score == 3
        assert model.chat_json(HELLO, Verdict).score == 4
        kinds = [r.get("response_format", {}).get("type") for r in server.requests]
    assert kinds == ["json_schema", "json_object", None, None]


def test_an_explicit_format_the_server_refuses_says_which_setting_to_change():
    """llama-cpp-python answers json_schema with a 500: not retried as a server error, and not hidden."""
    with FakeOpenAIServer(emulate=Emulation.llama_cpp_python()) as server:
        model = backend(server, response_format="json_schema", max_retries=3)
        with pytest.raises(
            RequestRejected, match="response_format.*Set response_format: json_object or none"
        ):
            model.chat_json(HELLO, Verdict)
        assert len(server.requests) == 1


def test_json_object_is_not_forced_on_a_list_schema():
    with FakeOpenAIServer(emulate=Emulation()) as server:
        server.script(Reply("[1, 2]"))
        assert backend(server).chat_json(HELLO, list[int]) == [1, 2]
        assert "response_format" not in server.requests[0]


def test_a_cut_json_answer_names_the_calls_max_tokens_not_the_configured_one():
    with FakeOpenAIServer(emulate=Emulation.vllm()) as server:
        server.script(Reply('{"relevant": true, "score": 8, "reason": "' + LONG + '"}'))
        with pytest.raises(AnswerCut, match=r"cut at max_tokens=32 .*Raise `max_tokens` for the lawyer role"):
            backend(server, max_tokens=1024).chat_json(HELLO, Verdict, max_tokens=32)
        assert len(server.requests) == 1  # no corrective retry for a cut answer
        assert server.requests[0]["max_tokens"] == 32


def test_a_cut_plain_answer_is_marked_and_logged_with_the_calls_max_tokens(caplog):
    with FakeOpenAIServer(emulate=Emulation.vllm()) as server:
        server.script(Reply(LONG), Reply(LONG), Reply("好的。"))
        model = backend(server, max_tokens=1024)
        answer = model.chat(HELLO, max_tokens=32)
        assert answer == "".join(tokenize(LONG)[:32]) and cut_at(answer) == 32
        assert "answer cut at max_tokens=32" in caplog.text and "1024" not in caplog.text
        pieces = model.stream(HELLO, max_tokens=20)
        assert "".join(pieces) == "".join(tokenize(LONG)[:20]) and cut_at(pieces) == 20
        assert (answer.cut_at_max_tokens, pieces.cut_at_max_tokens) == (32, 20)  # answer_check's hook
        assert cut_at(model.chat(HELLO, max_tokens=32)) is None  # a finished answer is not cut


def test_a_cancelled_call_closes_its_connection_and_the_server_stops():
    with FakeOpenAIServer(emulate=Emulation.vllm(), tokens_per_second=20) as server:
        server.script(Reply(LONG))
        token = CancelToken()

        def cancel_after_the_first_piece() -> None:
            eventually(
                lambda: bool(server.stream_log) and server.stream_log[0]["first_chunk_sent"] is not None
            )
            token.cancel("the visitor left")

        threading.Thread(target=cancel_after_the_first_piece, daemon=True).start()
        with watching(token), pytest.raises(Cancelled, match="the visitor left"):
            backend(server).chat(HELLO)  # a whole answer: streamed inside, so it can be stopped
        assert eventually(lambda: server.abandoned == 1)  # the server notices the closed connection
        assert server.finished == 0 and len(server.requests) == 1  # not retried either
        assert server.stream_log[0]["chunks"] < len(tokenize(LONG))


def test_a_cancelled_call_is_closed_while_the_server_sends_nothing():
    """Between two pieces (a CPU server reading a long prompt) the watchdog closes the connection: the
    server sees the client go before it sends its next piece."""
    with FakeOpenAIServer(emulate=Emulation.vllm(), tokens_per_second=0.5) as server:
        server.script(Reply(LONG))
        token = CancelToken()
        model = backend(server)
        with watching(token):
            pieces = model.stream(HELLO)
            assert next(pieces)  # the role chunk's empty content is skipped: this is the first token
            threading.Timer(0.05, token.cancel).start()
            with pytest.raises(Cancelled):
                next(pieces)  # blocked reading until the watchdog shuts the socket
        assert eventually(lambda: server.abandoned == 1)
        assert server.stream_log[0]["chunks"] == 1 and server.finished == 0


def test_call_timeout_bounds_the_whole_answer_and_is_not_retried():
    with FakeOpenAIServer(emulate=Emulation.vllm(), tokens_per_second=10) as server:
        server.script(Reply(LONG), Reply("好"))
        with pytest.raises(LLMTimeout, match=r"call_timeout=0.3 s\. Raise `call_timeout`"):
            backend(server, call_timeout=0.3, timeout=5).chat(HELLO)
        assert eventually(lambda: server.abandoned == 1)
        assert len(server.requests) == 1 and server.finished == 0


def test_a_structured_output_error_is_still_raised_for_a_finished_bad_answer():
    with FakeOpenAIServer(emulate=Emulation.vllm()) as server:
        server.script(Reply("不是 JSON"), Reply("还不是"))
        with pytest.raises(StructuredOutputError, match="contains no JSON") as caught:
            backend(server).chat_json(HELLO, Verdict)
        assert not isinstance(caught.value, AnswerCut)


def test_a_connection_the_server_closed_unanswered_is_sent_again_at_once_and_not_counted(caplog):
    """llama-server closes a kept-alive connection after every streamed answer (its headers say keep-alive),
    and the next request raced that close in ~1 of 5 back-to-back calls of the 1.5B judge: "Server
    disconnected without sending a response", a warning and a retry with backoff each time. That request
    reached nobody: it is sent again at once on a new connection, once, without using up a retry."""
    with FakeOpenAIServer(emulate=Emulation.llama_server()) as server:
        server.script(Fault.closed(), Reply("好"), Fault.closed(), Fault.closed(), Reply("不会到这里"))
        model = backend(server, max_retries=0, stream=True)
        with caplog.at_level("WARNING"):
            assert model.chat(HELLO) == "好"
        assert "retry" not in caplog.text and "disconnected" not in caplog.text
        # twice in a row is the server's failure, not a stale connection: the configured retries decide
        with pytest.raises(LLMConnectionError):
            model.chat(HELLO)
    assert len(server.requests) == 4


def test_a_503_is_retried_but_a_timeout_is_not():
    with FakeOpenAIServer(emulate=Emulation.vllm()) as server:
        server.script(Fault.status(503), Fault.hang(3), Reply("好"))
        with pytest.raises(LLMTimeout):
            backend(server, timeout=0.3, max_retries=3).chat(HELLO)
        assert len(server.requests) == 2
