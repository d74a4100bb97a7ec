"""The ``anthropic`` backend: Anthropic's Messages API over plain HTTP (``httpx``; the ``anthropic`` SDK is
not needed), on the plumbing of :class:`~lawluo.llm.http.HttpChatBackend`: retries with backoff (529
overloaded, 429, 5xx, dropped connections; the server's ``retry-after``), ``timeout`` per piece,
``call_timeout`` and the step's budget, the watchdog that closes a stalled stream, and typed errors whose
messages name the role's model server, never its address or the key.

    models:
      default:
        backend: anthropic
        model: claude-haiku-4-5        # the key: export ANTHROPIC_API_KEY=…

One request per attempt, ``POST {base_url}/v1/messages`` with the headers ``x-api-key`` and
``anthropic-version: 2023-06-01`` and the body ``{model, max_tokens, system, messages, stream, temperature}``
(plus ``top_p`` and ``stop_sequences`` when set). LawLuo's system messages become the top-level ``system``;
consecutive messages of one role are joined (the API wants user and assistant turns to alternate).
``json``/``json_schema`` requests are not constrained by the server (the Messages API has no
``response_format``): :func:`~lawluo.llm.structured.chat_json` parses and validates the answer, asking again
once if it is not valid.

A stream is server-sent events: ``message_start``, ``content_block_start``, ``content_block_delta`` (text in
``delta.text`` when ``delta.type`` is ``text_delta``), ``content_block_stop``, ``message_delta`` (its
``delta.stop_reason``: ``max_tokens`` is an answer cut at ``max_tokens``), ``message_stop``; ``ping`` between;
an ``error`` event carries the same ``{"type": "error", "error": {"type", "message"}}`` as an error response.
A stream that ends before ``message_stop`` is a dropped connection (retried before its first piece).

Reference: Anthropic API reference, "Messages", "Streaming Messages" and "Errors" (HTTP 400
invalid_request_error, 401 authentication_error, 403 permission_error, 404 not_found_error, 413
request_too_large, 429 rate_limit_error, 500 api_error, 529 overloaded_error).
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Generator, Iterator
from typing import Any

import httpx

from . import http
from .answer import Finish
from .http import Failure, HttpChatBackend, http_timeout, kind_of_status, transport_kind
from .options import AnthropicOptions

logger = logging.getLogger(__name__)

DEFAULT_BASE_URL = "https://api.anthropic.com"
API_VERSION = "2023-06-01"
#: The API's error types → what went wrong (:data:`lawluo.llm.http.KINDS`); another type goes by its status.
ERROR_TYPES = {
    "overloaded_error": "overloaded",
    "rate_limit_error": "rate_limited",
    "authentication_error": "auth",
    "permission_error": "auth",
    "not_found_error": "not_found",
    "invalid_request_error": "rejected",
    "request_too_large": "rejected",
    "api_error": "server",
}
#: ``stop_reason`` → LawLuo's finish reason (:class:`~lawluo.llm.answer.Finish`: "length" is a cut answer).
STOP_REASONS = {"max_tokens": "length", "end_turn": "stop", "stop_sequence": "stop"}


class AnthropicError(Exception):
    """An error the API reported: an HTTP error response, or an ``error`` event in a stream."""

    def __init__(
        self, status: int | None, kind: str | None, message: str, response: httpx.Response | None = None
    ) -> None:
        super().__init__(message)
        self.status_code, self.type, self.message, self.response = status, kind, message, response

    @classmethod
    def of_response(cls, response: httpx.Response) -> AnthropicError:
        """The error a (read) error response describes, in its JSON body or, failing that, its text."""
        error = _error_body(_json_or_none(response.content))
        if error is not None:
            return cls(response.status_code, error[0], error[1], response)
        text = response.text.strip() or response.reason_phrase
        return cls(response.status_code, None, text[:300], response)


class StreamEnded(Exception):
    """The event stream ended (or the connection closed cleanly) before ``message_stop``."""


class AnthropicBackend(HttpChatBackend):
    name = "anthropic"
    options: AnthropicOptions
    _logger = logger
    MESSAGES = {
        **http.MESSAGES,
        "not_found": "{where}: no model {model!r} or no Messages API at base_url ({status}: {detail}). Check "
        "`model` and base_url.",
        "malformed": "{where} sent a response that is not the Messages API's JSON or events ({detail}). Is "
        "base_url Anthropic's API (without /v1)?",
    }

    def __init__(self, options: AnthropicOptions, role: str = "model", api_key: str | None = None) -> None:
        super().__init__(options, role, api_key)
        self._client: httpx.Client | None = None
        self._client_lock = threading.Lock()

    @property
    def base_url(self) -> str:
        return (self.options.base_url or DEFAULT_BASE_URL).rstrip("/")

    @property
    def client(self) -> httpx.Client:
        """The one client (and connection pool) of this backend, made by the first call (under a lock)."""
        if self._client is None:
            with self._client_lock:
                if self._client is None:
                    headers = {"anthropic-version": API_VERSION, "content-type": "application/json"}
                    if self._api_key:
                        headers["x-api-key"] = self._api_key
                    self._client = httpx.Client(
                        base_url=self.base_url,
                        headers=headers,
                        timeout=http_timeout(self.options.timeout),
                        limits=httpx.Limits(max_connections=self.concurrency, max_keepalive_connections=8),
                    )
        return self._client

    # -- the provider's part ----------------------------------------------------------------------
    def _request(self, messages: list[dict[str, str]], gen: dict[str, Any]) -> dict[str, Any]:
        o = self.options
        system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
        request: dict[str, Any] = {
            "model": o.model,
            "max_tokens": gen.get("max_tokens", o.max_tokens),
            "messages": alternating([m for m in messages if m["role"] != "system"]),
            "stream": o.stream,
            "temperature": gen.get("temperature", o.temperature),
        }
        if system:
            request["system"] = system
        top_p = gen.get("top_p", o.top_p)
        if top_p is not None:
            request["top_p"] = top_p
        stop = gen.get("stop")
        if stop:
            request["stop_sequences"] = [stop] if isinstance(stop, str) else list(stop)
        return request

    def _send(self, request: dict[str, Any], timeout: httpx.Timeout) -> httpx.Response:
        """The response, its body unread when it streams; an error response raises :class:`AnthropicError`."""
        sent = self.client.build_request("POST", "/v1/messages", json=request, timeout=timeout)
        response = self.client.send(sent, stream=request["stream"])
        if response.status_code >= 400:
            try:
                response.read()
            finally:
                response.close()
            raise AnthropicError.of_response(response)
        return response

    def _pieces(self, handle: httpx.Response, request: dict[str, Any]) -> Generator[str, None, Finish]:
        """The text of a whole message, or of a stream's ``text_delta`` events ("" for every other event)."""
        content_type = handle.headers.get("content-type", "")
        if not request["stream"] or "text/event-stream" not in content_type:
            text, reason = whole_message(handle.read() if request["stream"] else handle.content)
            yield text
            return Finish(reason, request["max_tokens"])
        reason = None
        for event, data in sse_events(handle.iter_lines()):
            piece, stop = stream_event(event, data)
            if stop is _END:
                return Finish(reason, request["max_tokens"])
            reason = stop or reason
            yield piece
        raise StreamEnded("the event stream ended before message_stop")

    def _classify(self, exc: BaseException) -> Failure:
        if isinstance(exc, AnthropicError):
            kind = ERROR_TYPES.get(exc.type or "")
            if kind is None:
                kind = kind_of_status(exc.status_code) if exc.status_code else "api_error"
            return Failure(
                kind, f"{exc.type}: {exc.message}" if exc.type else exc.message, exc.status_code or ""
            )
        if isinstance(exc, StreamEnded):
            return Failure("connection", str(exc))
        detail = str(exc) or type(exc).__name__
        return Failure(transport_kind(exc), detail[:300])


_END = object()  # stream_event's "the message is complete"


def alternating(messages: list[dict[str, str]]) -> list[dict[str, str]]:
    """``messages`` with consecutive messages of one role joined, as the Messages API wants them.

    >>> alternating([{"role": "user", "content": "a"}, {"role": "user", "content": "b"}])
    [{'role': 'user', 'content': 'a\\n\\nb'}]
    """
    joined: list[dict[str, str]] = []
    for message in messages:
        if joined and joined[-1]["role"] == message["role"]:
            joined[-1] = {
                "role": message["role"],
                "content": joined[-1]["content"] + "\n\n" + message["content"],
            }
        else:
            joined.append(dict(message))
    return joined


def sse_events(lines: Iterator[str]) -> Iterator[tuple[str, str]]:
    """``(event, data)`` per server-sent event (W3C EventSource: ``event:``/``data:`` fields, a blank line
    ends an event, ``:`` starts a comment).

    >>> list(sse_events(iter(["event: ping", 'data: {"type": "ping"}', "", ": keep-alive", ""])))
    [('ping', '{"type": "ping"}')]
    """
    event, data = "", []
    for line in lines:
        if not line:
            if data:
                yield event or "message", "\n".join(data)
            event, data = "", []
        elif line.startswith(":"):
            continue
        else:
            name, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if name == "event":
                event = value
            elif name == "data":
                data.append(value)
    if data:
        yield event or "message", "\n".join(data)


def stream_event(event: str, data: str) -> tuple[str, Any]:
    """One event's text piece and what it says about the end: a finish reason (``message_delta``),
    :data:`_END` (``message_stop``) or None. An ``error`` event raises :class:`AnthropicError`; data that is
    not JSON raises ``ValueError``."""
    payload = json.loads(data)
    if not isinstance(payload, dict):
        raise ValueError(f"a {event} event whose data is not a JSON object")
    kind = payload.get("type", event)
    if kind == "error":
        error = _error_body(payload) or (None, data[:300])
        raise AnthropicError(None, error[0], error[1])
    if kind == "message_stop":
        return "", _END
    if kind == "content_block_delta":
        delta = payload.get("delta") if isinstance(payload.get("delta"), dict) else {}
        text = delta.get("text") if delta.get("type") == "text_delta" else None
        return (text if isinstance(text, str) else ""), None
    if kind == "message_delta":
        delta = payload.get("delta") if isinstance(payload.get("delta"), dict) else {}
        reason = delta.get("stop_reason")
        return "", STOP_REASONS.get(reason, reason) if isinstance(reason, str) else None
    return "", None


def whole_message(body: bytes) -> tuple[str, str | None]:
    """The text and finish reason of a whole (not streamed) message; ``ValueError`` if it is none."""
    message = json.loads(body)
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        raise ValueError(f"a response without content ({type(message).__name__})")
    text = "".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")
    reason = message.get("stop_reason")
    return text, STOP_REASONS.get(reason, reason) if isinstance(reason, str) else None


def _json_or_none(body: bytes) -> Any:
    try:
        return json.loads(body)
    except ValueError:
        return None


def _error_body(payload: Any) -> tuple[str | None, str] | None:
    """``(type, message)`` of ``{"type": "error", "error": {"type": …, "message": …}}``, else None."""
    error = payload.get("error") if isinstance(payload, dict) else None
    if not isinstance(error, dict):
        return None
    kind = error.get("type") if isinstance(error.get("type"), str) else None
    return kind, str(error.get("message") or kind or "no message")[:300]
