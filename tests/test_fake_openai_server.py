"""The fake OpenAI server, seen through the real ``openai`` client and raw ``httpx``: what the
tests and benchmarks of the OpenAI backend may rely on."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time

import httpx
import openai
import pytest

from .conftest import ROOT
from .fakes.openai_server import FakeOpenAIServer, Fault, Reply, tokenize

MESSAGES = [{"role": "system", "content": "你是律师"}, {"role": "user", "content": "试用期 can I quit?"}]
MIXED = "根据《劳动合同法》第37条, an employee may quit with 3 days' notice。\n 好的"
MIXED_TOKENS = [
    "根", "据", "《", "劳", "动", "合", "同", "法", "》", "第", "37", "条", ",", " an", " employee", " may",
    " quit", " with", " 3", " days'", " notice", "。", "\n 好", "的",
]  # fmt: skip


@pytest.fixture
def server():
    with FakeOpenAIServer() as fake:
        yield fake


@pytest.fixture(scope="module")
def openai_client():
    # Made once: building a client loads TLS certificates (~25 ms); each test points it at its server.
    with openai.OpenAI(base_url="http://127.0.0.1:1/v1", api_key="test", max_retries=0, timeout=5) as c:
        yield c


@pytest.fixture
def client(openai_client, server):
    return openai_client.with_options(base_url=server.url)


@pytest.fixture(scope="module")
def http():
    with httpx.Client(timeout=5) as c:
        yield c


def ask(client, **kwargs):
    return client.chat.completions.create(model="fake-model", messages=MESSAGES, **kwargs)


def stream_pieces(client, **kwargs) -> list[str]:
    chunks = list(ask(client, stream=True, **kwargs))
    return [c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content]


# Answers


def test_tokens_are_cjk_characters_or_words_with_their_leading_spaces():
    assert tokenize("hello world") == ["hello", " world"]
    assert tokenize(MIXED) == MIXED_TOKENS
    assert tokenize("  end  ") == ["  end", "  "] and tokenize("") == []


def test_plain_answer_is_a_chat_completion_with_usage_from_the_fake_tokenizer(server, client):
    server.script(Reply("答案 is 42"))
    completion = ask(client)
    assert completion.object == "chat.completion" and completion.model == "fake-model"
    (choice,) = completion.choices
    assert choice.message.role == "assistant" and choice.message.content == "答案 is 42"
    assert choice.finish_reason == "stop"
    # prompt: 你 是 律 师 | 试 用 期 " can" " I" " quit?"; completion: 答 案 " is" " 42"
    assert (completion.usage.prompt_tokens, completion.usage.completion_tokens) == (10, 4)
    assert completion.usage.total_tokens == 14


def test_stream_sends_one_chunk_per_token_and_reassembles_exactly(server, client):
    server.script(Reply(MIXED, finish_reason="length"))
    chunks = list(ask(client, stream=True))
    assert chunks[0].object == "chat.completion.chunk"
    assert (chunks[0].choices[0].delta.role, chunks[0].choices[0].delta.content) == ("assistant", "")
    pieces = [c.choices[0].delta.content for c in chunks[1:-1]]
    assert pieces == MIXED_TOKENS and "".join(pieces) == MIXED
    assert chunks[-1].choices[0].finish_reason == "length" and chunks[-1].choices[0].delta.content is None


def test_stream_on_the_wire_is_chunked_sse_ending_with_done(server, http):
    server.script(Reply("你好 world"))
    body = {"model": "m", "messages": MESSAGES, "stream": True}
    with http.stream("POST", f"{server.url}/chat/completions", json=body) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        assert response.headers["transfer-encoding"] == "chunked"
        lines = [line for line in response.iter_lines() if line]
    assert all(line.startswith("data: ") for line in lines) and lines[-1] == "data: [DONE]"
    events = [json.loads(line[6:]) for line in lines[:-1]]
    assert [e["choices"][0]["delta"].get("content") for e in events] == ["", "你", "好", " world", None]
    assert events[-1]["choices"][0]["finish_reason"] == "stop"


def test_stream_usage_chunk_when_the_client_asks_for_it(server, client):
    server.script(Reply("答案 is 42"))
    last = list(ask(client, stream=True, stream_options={"include_usage": True}))[-1]
    assert last.choices == [] and last.usage.completion_tokens == 4


def test_script_is_consumed_first_in_first_out_then_the_responder_answers(server, client):
    server.script(Reply("一"), Reply('{"a": 1}'))
    answers = [ask(client).choices[0].message.content for _ in range(3)]
    assert answers == ["一", '{"a": 1}', "echo: 试用期 can I quit?"]
    server.responder = lambda body: f"{len(body['messages'])} messages"
    assert ask(client).choices[0].message.content == "2 messages"


def test_a_responder_that_raises_becomes_a_500_naming_the_exception(server, client):
    server.responder = lambda body: 1 / 0
    with pytest.raises(openai.InternalServerError, match="ZeroDivisionError"):
        ask(client)


def test_requests_are_recorded_in_arrival_order_with_their_bodies(server, client):
    ask(client, temperature=0.1)
    stream_pieces(client)
    first, second = server.requests
    assert first["messages"] == MESSAGES and first["model"] == "fake-model" and first["temperature"] == 0.1
    assert second["stream"] is True and "temperature" not in second


def test_models_lists_the_accepted_models(server, http):
    assert [m["id"] for m in http.get(f"{server.url}/models").json()["data"]] == ["fake-model"]
    server.models = ["qwen-plus", "deepseek-chat"]
    listing = http.get(f"{server.url}/models").json()
    assert listing["object"] == "list" and [m["id"] for m in listing["data"]] == [
        "qwen-plus",
        "deepseek-chat",
    ]


def test_unknown_paths_and_bad_json_get_openai_error_bodies(server, http):
    response = http.get(f"{server.url}/embeddings")
    assert response.status_code == 404 and response.json()["error"]["code"] == "unknown_url"
    response = http.post(f"{server.url}/chat/completions", content=b"{not json")
    assert response.status_code == 400 and response.json()["error"]["type"] == "invalid_request_error"
    assert server.requests == []


# Faults


def test_rate_limit_raises_rate_limit_error_with_retry_after_ms_header(server, client):
    server.script(Fault.status(429, retry_after_ms=250))
    with pytest.raises(openai.RateLimitError) as exc:
        ask(client)
    assert exc.value.response.headers["retry-after-ms"] == "250"
    assert exc.value.body == {
        "message": "Rate limit reached for requests.",
        "type": "requests",
        "param": None,
        "code": "rate_limit_exceeded",
    }


@pytest.mark.parametrize(
    ("code", "error"),
    [
        (500, openai.InternalServerError),
        (503, openai.InternalServerError),
        (400, openai.BadRequestError),
        (401, openai.AuthenticationError),
        (404, openai.NotFoundError),
    ],
)
def test_status_faults_raise_the_matching_openai_error(server, client, code, error):
    server.script(Fault.status(code, message=f"scripted {code}"))
    with pytest.raises(error, match=f"scripted {code}") as exc:
        ask(client)
    assert exc.value.status_code == code and "retry-after-ms" not in exc.value.response.headers
    assert ask(client).choices[0].message.content.startswith("echo: ")  # one fault, one request


def test_api_key_is_required_when_set(server, http, client):
    server.api_key = "sk-right"
    with pytest.raises(openai.AuthenticationError):
        ask(client)
    assert http.get(f"{server.url}/models").status_code == 401
    assert ask(client.with_options(api_key="sk-right")).choices[0].message.content.startswith("echo: ")


def test_unknown_model_is_not_found_when_models_are_set(server, client):
    server.models = ["fake-model"]
    with pytest.raises(openai.NotFoundError, match="The model `gpt-x` does not exist"):
        client.chat.completions.create(model="gpt-x", messages=MESSAGES)
    assert ask(client).model == "fake-model"


def test_hang_makes_the_client_time_out(server, client):
    server.script(Fault.hang(5))
    with pytest.raises(openai.APITimeoutError):
        ask(client.with_options(timeout=0.2))


def test_hang_answers_normally_when_the_client_waits(server, http):
    server.script(Fault.hang(0.2))
    start = time.perf_counter()
    response = http.post(f"{server.url}/chat/completions", json={"model": "m", "messages": MESSAGES})
    assert time.perf_counter() - start >= 0.2
    assert response.json()["choices"][0]["message"]["content"] == "echo: 试用期 can I quit?"


def test_malformed_body_is_200_json_that_does_not_parse(server, http, client):
    server.script(Fault.malformed(), Fault.malformed())
    with pytest.raises(json.JSONDecodeError):
        ask(client)
    response = http.post(f"{server.url}/chat/completions", json={"model": "m", "messages": MESSAGES})
    assert response.status_code == 200 and response.headers["content-type"] == "application/json"
    with pytest.raises(json.JSONDecodeError):
        response.json()


def test_broken_stream_delivers_exactly_after_pieces_then_raises(server, client):
    server.script(Fault.broken_stream(MIXED, after=3))
    pieces = []
    with pytest.raises(openai.APIConnectionError) as exc:
        for chunk in ask(client, stream=True):
            pieces.append(chunk.choices[0].delta.content)
    assert pieces == ["", *MIXED_TOKENS[:3]]  # the role chunk, then 3 content pieces
    assert type(exc.value.__cause__).__name__ == "RemoteProtocolError"  # from httpx (or openai's httpx2)


def test_broken_stream_is_an_incomplete_chunked_body_without_done(server, http):
    server.script(Fault.broken_stream("a b c d e", after=2))
    lines = []
    body = {"model": "m", "messages": MESSAGES, "stream": True}
    with pytest.raises(httpx.RemoteProtocolError, match="incomplete chunked read"):
        with http.stream("POST", f"{server.url}/chat/completions", json=body) as response:
            lines.extend(line for line in response.iter_lines() if line)
    assert len(lines) == 3 and "data: [DONE]" not in lines


def test_broken_stream_on_a_plain_request_closes_without_a_response(server, client):
    server.script(Fault.broken_stream("a b c"))
    with pytest.raises(openai.APIConnectionError) as exc:
        ask(client)
    assert type(exc.value.__cause__).__name__ == "RemoteProtocolError"  # from httpx (or openai's httpx2)


# Timing (lower bounds only) and shutdown


def test_latency_is_slept_before_the_answer_and_a_reply_may_override_it(server, client):
    server.latency = 0.1
    start = time.perf_counter()
    ask(client)
    assert time.perf_counter() - start >= 0.1
    server.latency = 0.0
    server.script(Reply("slow", latency=0.15))
    start = time.perf_counter()
    assert ask(client).choices[0].message.content == "slow"
    assert time.perf_counter() - start >= 0.15


def test_wait_idle_returns_once_no_request_is_being_handled(server, client):
    assert server.wait_idle(0.0)  # nothing asked yet
    server.script(Reply("慢", latency=0.3))
    asking = threading.Thread(target=ask, args=(client,))
    asking.start()
    while not server.requests:
        time.sleep(0.01)
    assert not server.wait_idle(0.05)  # the reply is still being waited for
    assert server.wait_idle(5.0) and server.finished == 1
    asking.join()


def test_tokens_per_second_paces_the_stream(server, client):
    server.tokens_per_second = 200
    server.script(Reply(MIXED))
    start = time.perf_counter()
    assert stream_pieces(client) == MIXED_TOKENS
    assert time.perf_counter() - start >= (len(MIXED_TOKENS) - 1) / 200


def test_a_whole_answer_comes_when_its_last_token_would_have_been_streamed(server, client):
    server.tokens_per_second = 200
    server.script(Reply(MIXED))
    start = time.perf_counter()
    assert ask(client).choices[0].message.content == MIXED
    assert time.perf_counter() - start >= (len(MIXED_TOKENS) - 1) / 200


def test_each_token_reaches_the_client_before_the_next_is_sent(server, client):
    server.tokens_per_second = 1
    server.script(Reply("一 二 三"))
    stream = ask(client, stream=True)
    assert next(stream).choices[0].delta.role == "assistant"
    assert next(stream).choices[0].delta.content == "一"
    assert server.stream_log[0]["chunks"] <= 1  # a buffering server would have sent all three by now
    stream.close()


def test_stream_log_has_one_entry_per_stream(server, client):
    ask(client)
    server.script(Reply(MIXED))
    start = time.perf_counter()
    stream_pieces(client)
    done = time.perf_counter()
    (entry,) = server.stream_log
    assert entry["chunks"] == len(MIXED_TOKENS)
    assert start < entry["first_chunk_sent"] < done


def test_close_returns_at_once_while_a_hang_is_pending_and_ends_every_server_thread(openai_client):
    before = set(threading.enumerate())
    server = FakeOpenAIServer()
    server.script(Fault.hang(30))
    errors = []

    def call():
        try:
            ask(openai_client.with_options(base_url=server.url, timeout=10))
        except openai.APIError as exc:
            errors.append(exc)

    caller = threading.Thread(target=call)
    caller.start()
    while not server.requests:
        time.sleep(0.01)
    server_threads = set(threading.enumerate()) - before - {caller}
    assert len(server_threads) == 2  # serve_forever and the handler of the hanging request
    start = time.perf_counter()
    server.close()
    assert time.perf_counter() - start < 1.0
    for thread in server_threads:
        thread.join(timeout=1.0)
    assert not any(thread.is_alive() for thread in server_threads)
    caller.join(timeout=5)
    assert [type(e) for e in errors] == [openai.APIConnectionError]  # the request was dropped


def test_command_line_serves_the_echo_responder_until_interrupted():
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.fakes.openai_server", "--port", "0", "--latency", "0"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
        # as from a script's background job: SIGINT inherited ignored (a CI run started that way hung here)
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    try:
        url = process.stdout.readline().split()[4]
        client = openai.OpenAI(base_url=url, api_key="any", max_retries=0, timeout=5)
        assert ask(client).choices[0].message.content == "echo: 试用期 can I quit?"
        client.close()
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=30) == 0  # a bound for a hang, not a timing
    finally:
        process.kill()
        process.stdout.close()
