"""A server on 127.0.0.1 that speaks Anthropic's Messages API: the test double of the ``anthropic`` backend.

``POST /v1/messages``, plain and ``stream: true`` (server-sent events: ``message_start``,
``content_block_start``, ``ping``, ``content_block_delta`` with ``text_delta``, ``content_block_stop``,
``message_delta`` with ``stop_reason``, ``message_stop``). Each request is answered by the next item of a
script (a :class:`Reply` or a :class:`Fault`), or, once the script is empty, by ``"echo: "`` + the last user
message::

    with FakeAnthropicServer(api_key="test") as server:
        server.script(Fault.status(529), Reply("答案"))
        ...                                    # the code under test, base_url=server.url
        server.requests[-1]["system"]          # what it sent; server.headers[-1]["anthropic-version"]

Order of checks: ``x-api-key`` (401 ``authentication_error`` when ``api_key`` is set and not sent),
``anthropic-version`` (400 when missing), the JSON body (400), then the request is recorded and the next
script item consumed. Errors are ``{"type": "error", "error": {"type", "message"}}`` with the API's status
for the type (:data:`STATUS_OF`).

Every wait (a hang, a stall, the pace between tokens) watches the socket, as a real server notices a client
that hung up: ``abandoned`` counts the requests whose client left first, ``finished`` those answered whole.

Reference: Anthropic API reference, "Messages", "Streaming Messages", "Errors"; RFC 9112 section 7.1
(chunked transfer coding: a cut stream lacks its last chunk).
"""

from __future__ import annotations

import json
import select
import socket
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from socketserver import TCPServer
from typing import Any, ClassVar

from .loopback import LoopbackServer
from .openai_server import tokenize

__all__ = ["Fault", "FakeAnthropicServer", "Reply", "STATUS_OF"]

PING_EVERY_S = 0.2  # a stalled stream's keep-alive pings
#: The API's error types and their HTTP status.
STATUS_OF = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "permission_error": 403,
    "not_found_error": 404,
    "rate_limit_error": 429,
    "api_error": 500,
    "overloaded_error": 529,
}


@dataclass(frozen=True)
class Reply:
    """An answer with ``content``; ``stop_reason`` as the API says it (``max_tokens``: cut)."""

    content: str
    stop_reason: str = "end_turn"


@dataclass(frozen=True)
class Fault:
    """A failure to answer one request with; build it with one of the constructors below."""

    KINDS: ClassVar[tuple[str, ...]] = (
        "status",
        "hang",
        "stall",
        "broken",
        "garbled",
        "error_event",
        "unended",
    )

    kind: str
    error_type: str = "api_error"
    message: str = "Internal server error"
    retry_after: float | None = None
    seconds: float = 0.0
    content: str = ""
    after: int = 0
    pings: bool = True

    @classmethod
    def status(cls, error_type: str, message: str | None = None, retry_after: float | None = None) -> Fault:
        """An error response of ``error_type`` with its status; ``retry-after`` header when given."""
        return cls("status", error_type, message or error_type.replace("_", " "), retry_after)

    @classmethod
    def hang(cls, seconds: float) -> Fault:
        """Say nothing for ``seconds`` (not even the response's headers), then answer ``echo``."""
        return cls("hang", seconds=seconds)

    @classmethod
    def stall(cls, content: str, after: int = 2, seconds: float = 30.0, pings: bool = True) -> Fault:
        """Stream ``after`` tokens of ``content``, then for ``seconds`` only ``ping`` events, every
        :data:`PING_EVERY_S` (no read times out; only the client can end it), or nothing (``pings=False``)."""
        return cls("stall", content=content, after=after, seconds=seconds, pings=pings)

    @classmethod
    def broken(cls, content: str, after: int = 2) -> Fault:
        """Stream ``after`` tokens of ``content``, then drop the connection mid-body."""
        return cls("broken", content=content, after=after)

    @classmethod
    def garbled(cls, content: str = "", after: int = 0) -> Fault:
        """Stream ``after`` tokens, then a ``content_block_delta`` whose data is not JSON."""
        return cls("garbled", content=content, after=after)

    @classmethod
    def error_event(cls, error_type: str = "overloaded_error", content: str = "", after: int = 0) -> Fault:
        """Stream ``after`` tokens, then an ``error`` event (HTTP status 200 was already sent)."""
        return cls("error_event", error_type, error_type.replace("_", " "), content=content, after=after)

    @classmethod
    def unended(cls, content: str) -> Fault:
        """Stream all of ``content`` and end the body properly, but without ``message_delta``/``message_stop``."""
        return cls("unended", content=content, after=len(tokenize(content)))


class FakeAnthropicServer(LoopbackServer):
    """A running fake on ``127.0.0.1`` (an ephemeral port). ``api_key``: required as ``x-api-key`` when set.
    ``tokens_per_second``: pace of streamed tokens (None: at once)."""

    def __init__(self, api_key: str | None = None, tokens_per_second: float | None = None) -> None:
        self.api_key = api_key
        self.tokens_per_second = tokens_per_second
        self._script: deque[Reply | Fault] = deque()
        self._requests: list[dict] = []
        self._headers: list[dict[str, str]] = []
        self._outcomes = {"finished": 0, "abandoned": 0}
        self._received = 0  # every POST, refused ones included
        self._lock = threading.Lock()
        self._serve(_HTTPServer(("127.0.0.1", 0), _Handler, self))
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def script(self, *items: Reply | Fault) -> None:
        with self._lock:
            self._script.extend(items)

    @property
    def requests(self) -> list[dict]:
        """The JSON bodies received on ``/v1/messages`` (authorised and well-formed), in arrival order."""
        with self._lock:
            return list(self._requests)

    @property
    def headers(self) -> list[dict[str, str]]:
        """The headers of those requests (names in lower case)."""
        with self._lock:
            return list(self._headers)

    @property
    def received(self) -> int:
        """Every request received, refused ones (a wrong key, a missing header) included."""
        with self._lock:
            return self._received

    @property
    def finished(self) -> int:
        with self._lock:
            return self._outcomes["finished"]

    @property
    def abandoned(self) -> int:
        with self._lock:
            return self._outcomes["abandoned"]

    def count(self, outcome: str) -> None:
        with self._lock:
            self._outcomes[outcome] += 1

    def next_item(self, body: dict) -> Reply | Fault:
        with self._lock:
            if self._script:
                return self._script.popleft()
        users = [m for m in body.get("messages", []) if isinstance(m, dict) and m.get("role") == "user"]
        return Reply("echo: " + (str(users[-1].get("content")) if users else ""))


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self, address: tuple[str, int], handler: type, fake: FakeAnthropicServer) -> None:
        self.fake = fake
        super().__init__(address, handler)

    def server_bind(self) -> None:
        TCPServer.server_bind(self)  # no FQDN lookup (it can stall without DNS)
        self.server_name, self.server_port = self.server_address[:2]

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], OSError):  # a client that went away is not an error here
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    wbufsize = 0
    server: _HTTPServer

    def setup(self) -> None:
        super().setup()
        with self.server.fake._lock:
            self.server.fake._connections.add(self.connection)

    def finish(self) -> None:
        with self.server.fake._lock:
            self.server.fake._connections.discard(self.connection)
        super().finish()

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        fake = self.server.fake
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        with fake._lock:
            fake._received += 1
        if self.path.split("?", 1)[0].rstrip("/") != "/v1/messages":
            self._error("not_found_error", f"Unknown URL {self.path}")
            return
        self.gone = False
        try:
            whole = self._messages(fake, raw)
        except OSError:
            self.gone = not fake._closing.is_set()
            whole = False
            self.close_connection = True
        if whole or self.gone:
            fake.count("finished" if whole else "abandoned")

    def _messages(self, fake: FakeAnthropicServer, raw: bytes) -> bool:
        """Answer one request; True when the response was written whole."""
        if fake.api_key is not None and self.headers.get("x-api-key") != fake.api_key:
            return self._error("authentication_error", "invalid x-api-key")
        if not self.headers.get("anthropic-version"):
            return self._error("invalid_request_error", "anthropic-version: header is required")
        try:
            body = json.loads(raw)
        except ValueError as exc:
            return self._error("invalid_request_error", f"the body is not JSON: {exc}")
        with fake._lock:
            fake._requests.append(body)
            fake._headers.append({k.lower(): v for k, v in self.headers.items()})
        item = fake.next_item(body)
        if isinstance(item, Fault) and item.kind == "hang":
            if not self._wait(fake, item.seconds):
                return False
            item = Reply("echo")
        if isinstance(item, Fault) and item.kind == "status":
            extra = {"retry-after": f"{item.retry_after:g}"} if item.retry_after is not None else {}
            return self._error(item.error_type, item.message, extra)
        if not body.get("stream"):
            return self._whole(body, item)
        return self._stream(fake, body, item)

    def _whole(self, body: dict, item: Reply | Fault) -> bool:
        reply = item if isinstance(item, Reply) else Reply(item.content)
        message = {
            "id": "msg_fake",
            "type": "message",
            "role": "assistant",
            "model": body.get("model"),
            "content": [{"type": "text", "text": reply.content}],
            "stop_reason": reply.stop_reason,
            "usage": {"input_tokens": 1, "output_tokens": len(tokenize(reply.content))},
        }
        return self._json(200, message)

    def _stream(self, fake: FakeAnthropicServer, body: dict, item: Reply | Fault) -> bool:
        """The events of one answer, or of a fault (see :class:`Fault`); True when written whole."""
        reply = item if isinstance(item, Reply) else Reply(item.content)
        fault = item if isinstance(item, Fault) else None
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        message = {
            "id": "msg_fake",
            "type": "message",
            "role": "assistant",
            "content": [],
            "model": body.get("model"),
        }
        self._event("message_start", {"type": "message_start", "message": message})
        block = {"type": "text", "text": ""}
        self._event(
            "content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}
        )
        self._event("ping", {"type": "ping"})
        for i, token in enumerate(tokenize(reply.content)):
            if fault is not None and i == fault.after:
                break
            if i and fake.tokens_per_second and not self._wait(fake, 1 / fake.tokens_per_second):
                return False
            delta = {"type": "text_delta", "text": token}
            self._event("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta})
        if fault is not None:
            return self._fault_end(fake, fault)
        self._event("content_block_stop", {"type": "content_block_stop", "index": 0})
        delta = {"stop_reason": reply.stop_reason, "stop_sequence": None}
        self._event("message_delta", {"type": "message_delta", "delta": delta, "usage": {"output_tokens": 1}})
        self._event("message_stop", {"type": "message_stop"})
        return self._last_chunk()

    def _fault_end(self, fake: FakeAnthropicServer, fault: Fault) -> bool:
        """How a faulty stream goes on after its first ``after`` tokens."""
        if fault.kind == "stall":
            end = time.monotonic() + fault.seconds
            while time.monotonic() < end:
                if not self._wait(fake, PING_EVERY_S if fault.pings else fault.seconds):
                    return False
                if fault.pings:
                    self._event("ping", {"type": "ping"})
            return self._last_chunk()
        if fault.kind == "broken":
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)  # no last chunk: the client sees the body cut
            return False
        if fault.kind == "garbled":
            self._raw_event("content_block_delta", '{"type": "content_block_delta", "delta": {"ty')
        elif fault.kind == "error_event":
            self._event(
                "error", {"type": "error", "error": {"type": fault.error_type, "message": fault.message}}
            )
        return self._last_chunk()  # unended: the body ends properly, the message does not

    def _wait(self, fake: FakeAnthropicServer, seconds: float) -> bool:
        """Sleep ``seconds`` watching the connection; False when the client hung up or the server closes."""
        end = time.monotonic() + seconds
        while not fake._closing.is_set():
            left = end - time.monotonic()
            if left <= 0:
                return True
            try:
                readable, _, _ = select.select([self.connection], [], [], left)
                if readable and not self.connection.recv(1, socket.MSG_PEEK):
                    self.gone = True
                    return False
                if readable:
                    time.sleep(min(left, 0.02))
            except OSError:
                self.gone = True
                return False
        return False

    def _event(self, name: str, data: dict) -> None:
        self._raw_event(name, json.dumps(data, ensure_ascii=False))

    def _raw_event(self, name: str, data: str) -> None:
        """One SSE event as one chunk of the chunked body, written at once."""
        payload = f"event: {name}\ndata: {data}\n\n".encode()
        self.wfile.write(b"%x\r\n%s\r\n" % (len(payload), payload))

    def _last_chunk(self) -> bool:
        self.wfile.write(b"0\r\n\r\n")
        return True

    def _error(self, error_type: str, message: str, headers: dict[str, str] | None = None) -> bool:
        payload = {"type": "error", "error": {"type": error_type, "message": message}}
        return self._json(STATUS_OF.get(error_type, 500), payload, headers)

    def _json(self, status: int, payload: dict, headers: dict[str, str] | None = None) -> bool:
        data = json.dumps(payload, ensure_ascii=False).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)
        return True
