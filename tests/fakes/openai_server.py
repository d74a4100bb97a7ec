"""An OpenAI-compatible chat server on 127.0.0.1: the test double for every OpenAI-backed code path.

It speaks enough of the OpenAI HTTP API for the real ``openai`` client: ``POST /v1/chat/completions``
(plain and ``stream: true``) and ``GET /v1/models``. Each chat request is answered by the next item
of a script (a :class:`Reply` or a :class:`Fault`), or, once the script is empty, by
``server.responder`` (default: ``"echo: "`` + the last user message)::

    with FakeOpenAIServer() as server:
        server.script(Reply("答案"), Fault.status(429, retry_after_ms=10), Reply('{"a": 1}'))
        client = openai.OpenAI(base_url=server.url, api_key="test", max_retries=0)
        client.chat.completions.create(model="fake-model", messages=[...])  # "答案"
        server.requests[-1]["messages"]  # what the code under test sent

Order of checks for a chat request: ``Authorization`` (401 when ``api_key`` is set and not sent),
JSON body (400; not recorded), recorded in ``requests``, ``model`` (404 when ``models`` is set and
does not list it), then the next script item is consumed. So rejected requests consume no script
item. ``latency`` (or ``Reply.latency``) is slept before every chat answer, faults included;
``/v1/models`` answers at once.

``emulate`` makes the fake behave like a particular real server where LawLuo must adapt to it
(:class:`Emulation`: ``Emulation.llama_cpp_python()``, ``.llama_server()``, ``.vllm()``, ``.ollama()``):
the ``owned_by`` its ``/v1/models`` reports, ``GET /props`` (llama-server), system messages dropped
before the "model" (the responder) sees them or rejected, response_format types it refuses (with the
status and message the real server sends), and answers cut at the request's ``max_tokens`` with
``finish_reason: "length"``. Without it the fake accepts everything and cuts nothing.

Like llama.cpp's and vLLM's servers, the fake stops working on a request whose client closed the
connection: every wait (latency, a hang, the pace between streamed tokens) watches the socket.
``finished`` counts chat requests whose response was written whole (an error status included);
``abandoned`` those whose client hung up first (a cancelled stream, a client timeout). A request cut by
``close()`` or a ``broken_stream`` fault is neither. ``max_in_flight`` is the most chat requests the
fake was handling at one moment (a count, for tests of a client's concurrency); ``connections`` the
connections it accepted (a client that pools them opens each once); ``busy`` the ``perf_counter`` span
from the first chat request's arrival to the last one's end; ``service_seconds`` the sum of the chat
requests' own durations (latency, then the answer's tokens at ``tokens_per_second``).

Streams are sent without buffering: TCP_NODELAY, an unbuffered socket writer, one chunked-encoding
chunk per SSE event. ``stream_log`` gets one entry per streamed answer when it starts,
``{"first_chunk_sent": perf_counter() just after the first content chunk was written (None until
then), "chunks": content chunks written so far}``; both are final once the client has the whole
stream.

By hand, to try the app without a key (serves the echo responder until Ctrl-C)::

    python -m tests.fakes.openai_server --port 8001 --latency 0.5 --tokens-per-second 20
    # then e.g. LAWLUO_{ROLE}_BACKEND=openai LAWLUO_{ROLE}_MODEL=fake-model \\
    #   OPENAI_BASE_URL=http://127.0.0.1:8001/v1 OPENAI_API_KEY=test python app.py

Reference: OpenAI API reference, "Chat" (chat.completion and chat.completion.chunk objects, the
``data: [DONE]`` end of stream) and "Error codes"; RFC 9112 section 7.1 (chunked transfer coding),
which lets a client tell a stream that was cut off from one that ended.
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import select
import signal
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from socketserver import TCPServer
from typing import Any, ClassVar

from .loopback import LoopbackServer

__all__ = ["Emulation", "FakeOpenAIServer", "Fault", "Reply", "tokenize"]

DEFAULT_MODEL = "fake-model"

_CJK = (
    "\u2e80-\u2fdf"  # radicals
    "\u3000-\u303f"  # CJK punctuation (、。「」)
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"  # ideographs
    "\uff00-\uffef"  # full-width forms (，！？：)
    "\U00020000-\U0002fa1f"  # ideographs, extensions B-F and compatibility supplement
)
_TOKEN = re.compile(rf"\s*(?:[{_CJK}]|[^\s{_CJK}]+)|\s+")

# Default (message, type, code) of an error body per status, as the OpenAI API words them.
_ERRORS: dict[int, tuple[str, str, str | None]] = {
    400: ("Invalid request.", "invalid_request_error", None),
    401: ("Incorrect API key provided.", "invalid_request_error", "invalid_api_key"),
    403: ("You are not allowed to access this resource.", "invalid_request_error", None),
    404: ("Not found.", "invalid_request_error", None),
    429: ("Rate limit reached for requests.", "requests", "rate_limit_exceeded"),
    500: ("The server had an error while processing your request.", "server_error", None),
    503: ("The engine is currently overloaded, please try again later.", "server_error", None),
}


def tokenize(text: str) -> list[str]:
    """The fake's tokens: one CJK character, or a run of other non-space characters; leading spaces
    stay with the token they precede, so ``"".join(tokenize(t)) == t``.

    >>> tokenize("hello world，你好 GPT-4o!")
    ['hello', ' world', '，', '你', '好', ' GPT-4o!']
    """
    return _TOKEN.findall(text)


def _text(content: Any) -> str:
    """The text of a message ``content``: a string, or a list of parts of which the text ones count."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def echo(body: dict) -> str:
    """The default responder: ``"echo: "`` + the content of the last user message."""
    users = [m for m in body.get("messages", []) if isinstance(m, dict) and m.get("role") == "user"]
    return "echo: " + (_text(users[-1].get("content")) if users else "")


@dataclass(frozen=True)
class Reply:
    """A normal answer with ``content``; ``latency`` (seconds) overrides the server's for this one."""

    content: str
    latency: float | None = None
    finish_reason: str = "stop"


@dataclass(frozen=True)
class Fault:
    """A failure to answer one request with; build it with one of the constructors below."""

    KINDS: ClassVar[tuple[str, ...]] = ("status", "hang", "malformed", "broken_stream", "closed")

    kind: str
    code: int | None = None
    message: str | None = None
    retry_after_ms: int | None = None
    seconds: float = 0.0
    content: str = ""
    after: int = 0

    def __post_init__(self) -> None:
        if self.kind not in self.KINDS:
            raise ValueError(f"fault kind {self.kind!r} is not one of {', '.join(self.KINDS)}")
        if self.kind == "status" and not (self.code and 400 <= self.code <= 599):
            raise ValueError(f"a status fault needs an HTTP error code (400-599), not {self.code!r}")

    @classmethod
    def status(cls, code: int, message: str | None = None, retry_after_ms: int | None = None) -> Fault:
        """HTTP ``code`` with an OpenAI error body; ``retry-after-ms`` header when ``retry_after_ms`` is set."""
        return cls("status", code=code, message=message, retry_after_ms=retry_after_ms)

    @classmethod
    def hang(cls, seconds: float) -> Fault:
        """Say nothing for ``seconds`` (cut short by ``close()``), then answer with the responder."""
        return cls("hang", seconds=seconds)

    @classmethod
    def malformed(cls) -> Fault:
        """HTTP 200, ``application/json``, and a body that is not JSON."""
        return cls("malformed")

    @classmethod
    def broken_stream(cls, content: str, after: int = 3) -> Fault:
        """Stream the first ``after`` tokens of ``content``, then drop the connection mid-body.

        A request without ``stream: true`` gets its connection closed without any response.
        """
        return cls("broken_stream", content=content, after=after)

    @classmethod
    def closed(cls) -> Fault:
        """Close the connection without any response, as llama-server closes a kept-alive connection
        after a streamed answer (while its headers said keep-alive): the client's next request on it
        is never answered."""
        return cls("closed")


Item = Reply | Fault


@dataclass(frozen=True)
class Emulation:
    """How a real server differs, for :class:`FakeOpenAIServer` (``emulate=``); build it with a preset.

    ``system_role``: ``"keep"``, ``"drop"`` (the responder never sees system messages: llama-cpp-python's
    gemma format) or ``"reject"`` (``reject_status`` with "System role not supported", as a template that
    raises on it). ``response_formats``: the response_format types accepted; another one gets
    ``format_status`` with ``format_message``. ``props``: served at ``GET /props`` when set.
    """

    owned_by: str = "fake"
    props: dict | None = None
    system_role: str = "keep"
    reject_status: int = 400
    response_formats: tuple[str, ...] = ("text", "json_object", "json_schema")
    format_status: int = 400
    format_message: str = "response_format is not supported"
    cut_at_max_tokens: bool = True

    @classmethod
    def llama_cpp_python(cls, system_role: str = "drop") -> Emulation:
        """``python -m llama_cpp.server --chat_format gemma`` (0.3.36): drops system messages, accepts only
        text/json_object and answers json_schema with a 500 whose message is pydantic's validation error."""
        return cls(
            owned_by="me",
            system_role=system_role,
            reject_status=500,
            response_formats=("text", "json_object"),
            format_status=500,
            format_message=(
                "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), "
                "'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema'}"
            ),
        )

    @classmethod
    def llama_server(cls, supports_system_role: bool | None = True, template: str = "") -> Emulation:
        """llama.cpp's ``llama-server``: ``/props`` with ``chat_template_caps`` (unless
        ``supports_system_role`` is None: an older server that shows only its ``chat_template``)."""
        props: dict[str, Any] = {"chat_template": template, "total_slots": 1}
        if supports_system_role is not None:
            props["chat_template_caps"] = {"supports_system_role": supports_system_role}
        return cls(owned_by="llamacpp", props=props)

    @classmethod
    def vllm(cls, system_role: str = "keep") -> Emulation:
        return cls(owned_by="vllm", system_role=system_role)

    @classmethod
    def ollama(cls) -> Emulation:
        return cls(owned_by="library")


class FakeOpenAIServer(LoopbackServer):
    """A running fake OpenAI server on ``127.0.0.1`` (an ephemeral port unless ``port`` is given).

    ``latency``: seconds slept before each chat answer starts. ``tokens_per_second``: pace of
    streamed content chunks (None or 0: as fast as possible); a whole answer (``stream: false``) comes
    when its last token would have been streamed. ``api_key``: when set, requests must
    carry ``Authorization: Bearer <api_key>``. ``models``: when set, the only model names accepted
    (and listed by ``/v1/models``). Attributes may be changed between requests.
    """

    def __init__(
        self,
        latency: float = 0.0,
        tokens_per_second: float | None = None,
        api_key: str | None = None,
        models: list[str] | None = None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        emulate: Emulation | None = None,
    ) -> None:
        self.latency = latency
        self.tokens_per_second = tokens_per_second
        self.api_key = api_key
        self.models = models
        self.emulate = emulate
        self.responder: Callable[[dict], str] = echo
        self._script: deque[Item] = deque()
        self._requests: list[dict] = []
        self._stream_log: list[dict] = []
        self._outcomes = {"finished": 0, "abandoned": 0}
        self._in_flight = self._max_in_flight = self._accepted = 0
        self._span: list[float] = []  # [first arrival, last end] of chat requests
        self._service = 0.0  # summed durations of chat requests
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._serve(_HTTPServer((host, port), _Handler, self))
        self.url = f"http://{host}:{self._httpd.server_address[1]}/v1"

    def script(self, *items: Item) -> None:
        """Queue answers for the next chat requests, first in first out (adds to any still queued)."""
        for item in items:
            if not isinstance(item, Reply | Fault):
                raise TypeError(f"script items are Reply or Fault, not {type(item).__name__}")
        with self._lock:
            self._script.extend(items)

    @property
    def requests(self) -> list[dict]:
        """A copy of the JSON bodies received on ``/v1/chat/completions``, in arrival order."""
        with self._lock:
            return list(self._requests)

    @property
    def stream_log(self) -> list[dict]:
        """A copy of the list of per-stream entries (the entries themselves are live dicts)."""
        with self._lock:
            return list(self._stream_log)

    @property
    def finished(self) -> int:
        """Chat requests whose response was written whole."""
        with self._lock:
            return self._outcomes["finished"]

    @property
    def abandoned(self) -> int:
        """Chat requests whose client closed the connection before the response was whole."""
        with self._lock:
            return self._outcomes["abandoned"]

    def wait_idle(self, timeout: float = 5.0) -> bool:
        """Wait until no chat request is being handled; True when that happened within ``timeout``. A client
        can read a response's last byte before the handler has counted it in ``finished``: wait before
        asserting on the counts."""
        end = time.monotonic() + timeout
        while True:
            with self._lock:
                if self._in_flight == 0:
                    return True
            if time.monotonic() >= end:
                return False
            time.sleep(0.005)

    @property
    def max_in_flight(self) -> int:
        """The most chat requests being handled at one moment since the server started."""
        with self._lock:
            return self._max_in_flight

    @property
    def service_seconds(self) -> float:
        """The chat requests' durations, summed (arrival to the response's last byte, or the hang-up)."""
        with self._lock:
            return self._service

    @property
    def connections(self) -> int:
        """Connections accepted since the server started."""
        with self._lock:
            return self._accepted

    @property
    def busy(self) -> tuple[float, float] | None:
        """(first chat request's arrival, last one's end) as ``time.perf_counter`` values; None before any."""
        with self._lock:
            return (self._span[0], self._span[1]) if len(self._span) == 2 else None

    # Called by the request handler threads.

    def _next_item(self, body: dict) -> Item:
        with self._lock:
            if self._script:
                return self._script.popleft()
        return self._respond(body)

    def _respond(self, body: dict) -> Item:
        """The responder's answer; a responder that raises becomes a 500 that names the exception."""
        try:
            return Reply(self.responder(body))
        except Exception as exc:
            return Fault.status(500, f"the fake's responder raised {exc!r}")

    def _record(self, log: list[dict], entry: dict) -> None:
        with self._lock:
            log.append(entry)


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    # listen() backlog: socketserver's default of 5 resets connections when a client opens dozens at once
    # (a batch at concurrency 64); a real server (vLLM's uvicorn) listens with 2048
    request_queue_size = 1024

    def __init__(self, address: tuple[str, int], handler: type, fake: FakeOpenAIServer) -> None:
        self.fake = fake
        super().__init__(address, handler)

    def server_bind(self) -> None:
        # HTTPServer.server_bind also resolves the host's FQDN, which can stall on a machine without DNS.
        TCPServer.server_bind(self)
        self.server_name, self.server_port = self.server_address[:2]

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that went away (a timeout test, close() dropping connections) is not an error here.
        if not isinstance(sys.exc_info()[1], OSError):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # TCP_NODELAY on every accepted socket
    wbufsize = 0  # every write goes straight to the socket
    server: _HTTPServer

    def setup(self) -> None:
        super().setup()
        with self.server.fake._lock:
            self.server.fake._connections.add(self.connection)
            self.server.fake._accepted += 1
        if self.server.fake._closing.is_set():  # accepted just as close() dropped the others
            self.connection.shutdown(socket.SHUT_RDWR)

    def finish(self) -> None:
        with self.server.fake._lock:
            self.server.fake._connections.discard(self.connection)
        super().finish()

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._route()

    def do_POST(self) -> None:
        self._route()

    def do_PUT(self) -> None:
        self._route()

    def do_DELETE(self) -> None:
        self._route()

    def _route(self) -> None:
        fake = self.server.fake
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        path = self.path.split("?", 1)[0].rstrip("/")
        try:
            if (self.command, path) == ("POST", "/v1/chat/completions"):
                self._counted_chat(fake, raw)
            elif (self.command, path) == ("GET", "/v1/models"):
                if self._authorized(fake):
                    names = fake.models or [DEFAULT_MODEL]
                    owner = fake.emulate.owned_by if fake.emulate else "fake"
                    data = [{"id": n, "object": "model", "created": 0, "owned_by": owner} for n in names]
                    self._json(200, {"object": "list", "data": data})
            elif (
                (self.command, path) == ("GET", "/props") and fake.emulate and fake.emulate.props is not None
            ):
                self._json(200, fake.emulate.props)
            else:
                self._error(404, f"Unknown request URL: {self.command} {self.path}.", code="unknown_url")
        except OSError:  # the client hung up or close() dropped the connection
            self.close_connection = True

    def _counted_chat(self, fake: FakeOpenAIServer, raw: bytes) -> None:
        """:meth:`_chat`, counted in ``finished`` or ``abandoned`` (see the module's docstring)."""
        self.whole = self.gone = False
        arrived = time.perf_counter()
        with fake._lock:
            fake._in_flight += 1
            fake._max_in_flight = max(fake._max_in_flight, fake._in_flight)
            fake._span[:1] = fake._span[:1] or [arrived]
        try:
            self._chat(fake, raw)
        except OSError:  # written to a client that hung up
            self.gone = not fake._closing.is_set()
            raise
        finally:
            outcome = "finished" if self.whole else "abandoned" if self.gone else None
            ended = time.perf_counter()
            with fake._lock:
                fake._in_flight -= 1
                fake._span[1:] = [ended]
                fake._service += ended - arrived
                if outcome:
                    fake._outcomes[outcome] += 1

    def _wait(self, fake: FakeOpenAIServer, seconds: float | None) -> bool:
        """Sleep ``seconds`` watching the connection; False (the request is dropped) when the server is
        closing or the client closed the connection (``self.gone``)."""
        end = time.monotonic() + (seconds or 0)
        while not fake._closing.is_set():
            left = end - time.monotonic()
            try:
                # one select for the whole wait (close() shuts the socket down, which wakes it): polling
                # every few ms from 64 handler threads would make the fake, not the client, the bottleneck
                readable, _, _ = select.select([self.connection], [], [], max(0.0, left))
                if readable:  # end of file: the client hung up; data (a next request) is not read here
                    eof = not self.connection.recv(1, socket.MSG_PEEK)
                    self.gone = eof and not fake._closing.is_set()
                    if not eof:
                        time.sleep(max(0.0, min(left, 0.02)))
            except OSError:
                self.gone = not fake._closing.is_set()
            if self.gone or left <= 0:
                return not self.gone and not fake._closing.is_set()
        return False

    def _authorized(self, fake: FakeOpenAIServer) -> bool:
        if fake.api_key is None or self.headers.get("Authorization") == f"Bearer {fake.api_key}":
            return True
        self._error(401)
        return False

    def _chat(self, fake: FakeOpenAIServer, raw: bytes) -> None:
        if not self._authorized(fake):
            return
        try:
            body = json.loads(raw)
        except ValueError as exc:
            self._error(400, f"We could not parse the JSON body of your request: {exc}.")
            return
        if not isinstance(body, dict):
            self._error(400, "The request body must be a JSON object.")
            return
        fake._record(fake._requests, body)
        model = body.get("model") or DEFAULT_MODEL
        if fake.models is not None and model not in fake.models:
            self._error(404, f"The model `{model}` does not exist", code="model_not_found")
            return
        if fake.emulate is not None:
            body = self._emulated_request(fake.emulate, body)
            if body is None:
                return
        item = fake._next_item(body)
        latency = item.latency if isinstance(item, Reply) and item.latency is not None else fake.latency
        if not self._wait(fake, latency):
            self.close_connection = True
            return
        if isinstance(item, Fault) and item.kind == "hang":
            if not self._wait(fake, item.seconds):
                self.close_connection = True
                return
            item = fake._respond(body)
        stream = bool(body.get("stream"))
        if isinstance(item, Fault):
            if item.kind == "status":
                extra = (
                    {"retry-after-ms": str(item.retry_after_ms)} if item.retry_after_ms is not None else {}
                )
                self._error(item.code, item.message, headers=extra)
                return
            if item.kind == "malformed":
                self._send(200, b'{"id": "x", "choices": [', "application/json")
                return
            if item.kind == "closed":
                self.close_connection = True
                return
            if item.kind == "broken_stream":
                self.close_connection = True
                if stream:
                    self._stream(fake, body, model, Reply(item.content), break_after=item.after)
                return
        if fake.emulate is not None and fake.emulate.cut_at_max_tokens:
            item = _cut(item, body.get("max_tokens"))
        if stream:
            self._stream(fake, body, model, item)
            return
        tps, tokens = fake.tokens_per_second, len(tokenize(item.content))
        if tps and tokens > 1 and not self._wait(fake, (tokens - 1) / tps):  # generated as streamed, unseen
            self.close_connection = True
            return
        self._json(200, self._completion(body, model, item))

    def _emulated_request(self, emulate: Emulation, body: dict) -> dict | None:
        """``body`` as the emulated server's model sees it, or None after answering with its error."""
        response_format = body.get("response_format")
        kind = response_format.get("type") if isinstance(response_format, dict) else None
        if kind is not None and kind not in emulate.response_formats:
            self._error(emulate.format_status, emulate.format_message)
            return None
        messages = [m for m in body.get("messages", []) if isinstance(m, dict)]
        if any(m.get("role") == "system" for m in messages):
            if emulate.system_role == "reject":
                self._error(emulate.reject_status, "System role not supported")
                return None
            if emulate.system_role == "drop":
                return body | {"messages": [m for m in messages if m.get("role") != "system"]}
        return body

    def _completion(self, body: dict, model: str, reply: Reply) -> dict:
        fake = self.server.fake
        return {
            "id": f"chatcmpl-fake-{next(fake._ids)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": reply.content},
                    "logprobs": None,
                    "finish_reason": reply.finish_reason,
                }
            ],
            "usage": _usage(body, reply.content),
        }

    def _stream(
        self, fake: FakeOpenAIServer, body: dict, model: str, reply: Reply, break_after: int | None = None
    ) -> None:
        chunk_id, created = f"chatcmpl-fake-{next(fake._ids)}", int(time.time())

        def event(delta: dict, finish_reason: str | None = None) -> dict:
            return {
                "id": chunk_id,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}],
            }

        entry: dict[str, Any] = {"first_chunk_sent": None, "chunks": 0}
        fake._record(fake._stream_log, entry)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self._event(event({"role": "assistant", "content": ""}))
        tps = fake.tokens_per_second
        for i, token in enumerate(tokenize(reply.content)):
            if i == break_after:
                return  # the caller has set close_connection: no last chunk, no [DONE]
            if i and tps and not self._wait(fake, 1 / tps):
                self.close_connection = True
                return
            self._event(event({"content": token}))
            if i == 0:
                entry["first_chunk_sent"] = time.perf_counter()
            entry["chunks"] += 1
        if break_after is not None:
            return  # fewer tokens than ``after``: still cut off before the end
        self._event(event({}, reply.finish_reason))
        if (body.get("stream_options") or {}).get("include_usage"):
            usage = event({}) | {"choices": [], "usage": _usage(body, reply.content)}
            self._event(usage)
        self._event("[DONE]")
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()
        self.whole = True

    def _event(self, data: dict | str) -> None:
        """One SSE event as one chunk of the chunked body, written and flushed at once."""
        text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
        payload = f"data: {text}\n\n".encode()
        self.wfile.write(b"%x\r\n%s\r\n" % (len(payload), payload))
        self.wfile.flush()

    def _error(
        self,
        status: int,
        message: str | None = None,
        code: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        default_message, kind, default_code = _ERRORS.get(
            status, ("Error.", "server_error" if status >= 500 else "invalid_request_error", None)
        )
        error = {
            "message": message or default_message,
            "type": kind,
            "param": None,
            "code": code or default_code,
        }
        self._json(status, {"error": error}, headers)

    def _json(self, status: int, payload: dict, headers: dict[str, str] | None = None) -> None:
        self._send(status, json.dumps(payload, ensure_ascii=False).encode(), "application/json", headers)

    def _send(
        self, status: int, data: bytes, content_type: str, headers: dict[str, str] | None = None
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()
        self.whole = True


def _cut(reply: Reply, max_tokens: Any) -> Reply:
    """``reply`` cut to its first ``max_tokens`` tokens with finish_reason "length", if it is longer."""
    tokens = tokenize(reply.content)
    if not isinstance(max_tokens, int) or max_tokens < 1 or len(tokens) <= max_tokens:
        return reply
    return Reply("".join(tokens[:max_tokens]), reply.latency, "length")


def _usage(body: dict, content: str) -> dict[str, int]:
    prompt = sum(
        len(tokenize(_text(m.get("content")))) for m in body.get("messages", []) if isinstance(m, dict)
    )
    completion = len(tokenize(content))
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


EMULATIONS: dict[str, Callable[[], Emulation]] = {
    "llama-cpp-python": Emulation.llama_cpp_python,
    "llama-server": Emulation.llama_server,
    "vllm": Emulation.vllm,
    "ollama": Emulation.ollama,
}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1", help="Address to listen on.")
    parser.add_argument("--port", type=int, default=8001, help="Port to listen on (0: any free port).")
    parser.add_argument("--latency", type=float, default=0.0, help="Seconds before each answer starts.")
    parser.add_argument("--tokens-per-second", type=float, default=None, help="Pace of streamed tokens.")
    parser.add_argument("--api-key", default=None, help="Require this key (default: accept any).")
    parser.add_argument(
        "--model", action="append", dest="models", help="Accept only this model (repeatable)."
    )
    parser.add_argument(
        "--emulate",
        choices=sorted(EMULATIONS),
        default=None,
        help="Behave like this server (owned_by, /props, system messages, response_format, cut answers).",
    )
    args = parser.parse_args(argv)
    server = FakeOpenAIServer(
        args.latency,
        args.tokens_per_second,
        args.api_key,
        args.models,
        host=args.host,
        port=args.port,
        emulate=EMULATIONS[args.emulate]() if args.emulate else None,
    )
    # Ctrl-C stops it even when started from a script's background job, which inherits SIGINT ignored
    # (as uvicorn installs its handlers whatever it inherited)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    print(f"Fake OpenAI server at {server.url} (echo responder); Ctrl-C to stop.", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()


if __name__ == "__main__":
    main()
