"""What every chat backend over HTTP shares: retries with backoff, deadlines, the watchdog of stalled streams,
and LawLuo's typed errors (:mod:`.errors`) for whatever the provider's client or the transport raised.

A provider's backend subclasses :class:`HttpChatBackend` and writes only what differs between providers:

- ``_request(messages, gen)``: the request body of one call (its ``stream`` key says whether it streams,
  as in OpenAI's and Anthropic's APIs);
- ``_send(request, timeout)``: make the request, or open the stream; returns its handle;
- ``_pieces(handle, request)``: the handle's text pieces (``""`` for an event without text), then how the
  answer ended (a :class:`~.answer.Finish`, the generator's return value);
- ``_classify(exc)``: what went wrong, as a :class:`Failure` naming one of :data:`KINDS`;

plus ``base_url`` (for the log and for keeping the address out of messages) and, where a server can be
fitted after it refused a request, ``_adapt(request, exc)``.

The policy (``options``: ``max_retries``, ``retry_timeouts``, ``backoff``, ``timeout``, ``call_timeout``):

- retried, with exponential backoff and jitter (or the server's ``retry-after``/``retry-after-ms``): the
  errors marked ``retryable`` (429, 5xx, 529, connection errors, malformed bodies); timeouts only with
  ``retry_timeouts: true`` (a server still generating the first copy would queue the second behind it);
- a request the server closed its connection on without answering at all (:data:`CLOSED_UNANSWERED`) is sent
  again at once, once, on a new connection, before any of that: it is not a failure of the server;
- a stream is retried only before its first piece; once text has reached the caller a break raises
  :class:`~.errors.StreamInterrupted` carrying the partial text;
- ``timeout`` is the wait for the first piece and for each next one; a call that is cancelled (:mod:`.cancel`),
  runs out of its ``call_timeout`` or, for a whole answer, of the step's budget (:mod:`.budget`) stops, and
  :class:`Watchdog` shuts the stream's socket down even while no piece arrives, so the server sees the
  client go and stops generating.

Every message may reach a visitor, so it names "the <role> role's model server", never its URL (logged for the
operator instead, and cut out of the server's own error text).
"""

from __future__ import annotations

import logging
import random
import socket
import threading
import time
from abc import abstractmethod
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from typing import Any, ClassVar
from urllib.parse import urlsplit

import httpx

from . import budget, cancel
from .answer import ChatAnswer, Finish
from .base import CANCEL_POLL_S, ChatBackend
from .errors import (
    AuthenticationFailed,
    LLMConnectionError,
    LLMError,
    LLMTimeout,
    MalformedResponse,
    RateLimited,
    RequestRejected,
    ServerError,
    StreamInterrupted,
)

MAX_BACKOFF_S = 30.0
MAX_SERVER_WAIT_S = 60.0
#: A server that is down answers at once; one that is unreachable should not take ``timeout``.
CONNECT_TIMEOUT_S = 10.0

#: What can go wrong (a :class:`Failure`'s ``kind``) → the typed error it becomes.
KINDS: dict[str, type[LLMError]] = {
    "timeout": LLMTimeout,
    "connection": LLMConnectionError,
    "rate_limited": RateLimited,
    "auth": AuthenticationFailed,
    "not_found": RequestRejected,
    "overloaded": ServerError,
    "server": ServerError,
    "rejected": RequestRejected,
    "format_rejected": RequestRejected,
    "malformed": MalformedResponse,
    "api_error": ServerError,
}

#: The message of each kind, formatted with ``where`` (:meth:`~.base.ChatBackend.describe`), ``role``,
#: ``model``, ``timeout``, ``key_env``, ``detail`` (the server's words, its address cut out) and ``status``.
#: A backend overrides the ones it can say better (``MESSAGES = {**http.MESSAGES, …}``).
MESSAGES: dict[str, str] = {
    "timeout": "{where} did not answer within {timeout:g} s (waiting for the first piece of the answer, or the "
    "next one). Raise `timeout` for the {role} role, or check the server's load.",
    "connection": "Cannot reach the {role} role's model server ({detail}). Check its base_url and that the "
    "server is running and reachable from this machine (the server log names the URL).",
    "rate_limited": "{where} is rate-limiting requests (429: {detail}). Lower `concurrency` for the {role} "
    "role, or wait and try again.",
    "auth": "{where} rejected the API key from {key_env} ({status}: {detail}). Check the key and that it may "
    "use {model}.",
    "not_found": "The {role} role's model server has no model {model!r} ({status}: {detail}). Check `model` "
    "and base_url.",
    "overloaded": "{where} is overloaded ({status}: {detail}). Try again later, or lower `concurrency` for "
    "the {role} role.",
    "server": "{where} failed with {status} ({detail}). The server may be overloaded or restarting; try again "
    "later.",
    "rejected": "{where} refused the request ({status}: {detail}). The prompt may be too long for the model, or "
    "an option unsupported by this server.",
    "format_rejected": "{where} refused the request's response_format ({status}: {detail}).",
    "malformed": "{where} sent a response that is not valid JSON ({detail}). Check base_url.",
    "api_error": "{where} reported an error: {detail}",
}


@dataclass(frozen=True)
class Failure:
    """What a provider's exception means: a key of :data:`KINDS` (``None``: unexpected), the server's own
    words (or the exception's) and the HTTP status, if any."""

    kind: str | None
    detail: str
    status: int | str = ""


def kind_of_status(status: int) -> str:
    """The :data:`KINDS` key of an HTTP error status.

    >>> [kind_of_status(s) for s in (400, 401, 403, 404, 429, 500, 529)]
    ['rejected', 'auth', 'auth', 'not_found', 'rate_limited', 'server', 'overloaded']
    """
    if status in (401, 403):
        return "auth"
    if status == 404:
        return "not_found"
    if status == 429:
        return "rate_limited"
    if status == 529:
        return "overloaded"
    return "server" if status >= 500 else "rejected"


def transport_kind(exc: BaseException) -> str | None:
    """The :data:`KINDS` key of an exception raised by httpx itself, or by a body that is not JSON."""
    if isinstance(exc, httpx.TimeoutException):
        return "timeout"
    if isinstance(exc, httpx.TransportError):
        return "connection"  # refused, reset, cut mid-body (RemoteProtocolError)
    if isinstance(exc, ValueError):
        return "malformed"
    return None


#: httpcore's words when the server closed the connection before answering this request at all: a kept-alive
#: connection the server had given up on (llama-server closes one after every streamed answer while its
#: headers say keep-alive, so the next request raced that close in ~1 of 5 back-to-back calls). The request
#: reached no handler; sent again at once it gets a new connection (urllib3 does the same).
CLOSED_UNANSWERED = "Server disconnected without sending a response"


def closed_unanswered(exc: BaseException | None) -> bool:
    """Whether ``exc`` (or an error it wraps) is :data:`CLOSED_UNANSWERED`.

    >>> closed_unanswered(httpx.RemoteProtocolError("Server disconnected without sending a response."))
    True
    >>> closed_unanswered(httpx.RemoteProtocolError("peer closed connection without sending complete message body"))
    False
    """
    for _ in range(4):  # the SDK's error wraps httpx's
        if exc is None:
            return False
        # by name: the OpenAI SDK runs on httpx or on its fork httpx2, whose classes are others
        if type(exc).__name__ == "RemoteProtocolError" and CLOSED_UNANSWERED in str(exc):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def http_timeout(seconds: float) -> httpx.Timeout:
    """``seconds`` for every read (the first piece, then each next one); connecting gets at most 10 s."""
    return httpx.Timeout(seconds, connect=min(CONNECT_TIMEOUT_S, seconds))


class HttpChatBackend(ChatBackend):
    """A chat backend over HTTP: the retry loop, the limits of a call and the errors; see the module's
    docstring for what a subclass writes."""

    #: the subclass's logger (its module's), so that its messages keep their logger's name
    _logger: ClassVar[logging.Logger] = logging.getLogger(__name__)
    MESSAGES: ClassVar[dict[str, str]] = MESSAGES

    # -- what a provider writes -----------------------------------------------------------------
    @property
    @abstractmethod
    def base_url(self) -> str: ...

    @abstractmethod
    def _request(self, messages: list[dict[str, str]], gen: dict[str, Any]) -> dict[str, Any]:
        """The request body of one attempt (built again for a retry: :meth:`_adapt` may change it)."""

    @abstractmethod
    def _send(self, request: dict[str, Any], timeout: httpx.Timeout) -> Any:
        """Make the request (open the stream when ``request["stream"]``); the handle :meth:`_pieces` reads."""

    @abstractmethod
    def _pieces(self, handle: Any, request: dict[str, Any]) -> Generator[str, None, Finish]:
        """The answer's text pieces (``""`` for an event without text), then how it ended."""

    @abstractmethod
    def _classify(self, exc: BaseException) -> Failure:
        """What ``exc`` (raised by :meth:`_send` or :meth:`_pieces`) means."""

    def _adapt(self, request: dict[str, Any], exc: BaseException) -> bool:
        """After the server refused ``request``: whether a changed request may succeed (sent at once)."""
        return False

    # -- shared ----------------------------------------------------------------------------------
    def describe(self) -> str:
        """``<backend> · <model>``: no server address (visitors see it; see :meth:`ChatBackend.describe`)."""
        return f"{self.name} · {self.options.model}"

    def log_name(self) -> str:
        return f"{self.describe()} @ {self.base_url}"

    def unavailable_reason(self) -> str | None:
        if getattr(self.options, "api_key_required", True) and not self._api_key:
            return (
                f"The {self.role} role uses {self.options.model}, but the environment "
                f"variable {self.options.api_key_env} is not set. Export it (on a Hugging Face Space: "
                "Settings → Variables and secrets), or set api_key_required: false for a local server "
                "that accepts any key."
            )
        return None

    def setup_notes(self) -> dict[str, str]:
        """The retries and time limits this backend works with (``python -m lawluo models --ping``)."""
        o = self.options
        notes = {}
        notes["retries"] = f"up to {o.max_retries} on 429, 5xx and dropped connections; " + (
            "timeouts too (retry_timeouts: true)"
            if o.retry_timeouts
            else "none on timeouts (retry_timeouts: false)"
        )
        whole = f"call_timeout {o.call_timeout:g} s" if o.call_timeout else "the step's budget"
        notes["timeout"] = f"{o.timeout:g} s for the first piece and for each next one; a whole call: {whole}"
        if not o.stream:
            notes["stream"] = "off (stream: false): a cancelled call runs on at the server until it ends"
        return notes

    def _chat(self, messages: list[dict[str, str]], gen: dict[str, Any]) -> ChatAnswer:
        run = self._run(messages, gen, CallLimits.start(self, whole=True), shown=False)
        pieces = []
        while True:
            try:
                pieces.append(next(run))
            except StopIteration as stop:
                return ChatAnswer("".join(pieces), stop.value)

    def _stream(self, messages: list[dict[str, str]], gen: dict[str, Any]) -> Iterator[str]:
        return (yield from self._run(messages, gen, CallLimits.start(self, whole=False), shown=True))

    def _run(
        self, messages: list[dict[str, str]], gen: dict[str, Any], call: CallLimits, shown: bool
    ) -> Generator[str, None, Finish]:
        """The answer, retried as configured. ``shown``: pieces are passed on as they come (and a break after
        the first is :class:`StreamInterrupted`); else an attempt's text is passed on once it is complete."""
        attempt, received, resent = 0, [], False
        while True:
            request = self._request(messages, gen)
            pieces = self._attempt(request, call)
            try:
                buffered = []
                while True:
                    try:
                        piece = next(pieces)
                    except StopIteration as stop:
                        finish = stop.value
                        break
                    if shown:
                        received.append(piece)
                        yield piece
                    else:
                        buffered.append(piece)
                if buffered:
                    yield "".join(buffered)
                self._warn_if_cut(finish)
                return finish
            except GeneratorExit:
                raise
            except Exception as exc:  # noqa: BLE001 — every failure is translated into a typed error
                stopped = call.stopped()
                if stopped is None and not resent and not received and closed_unanswered(exc):
                    resent = True  # once, at once, not counted: the request was never answered
                    self._logger.debug(
                        "%s: the server had closed the connection; sent again", self.describe()
                    )
                    continue
                error = stopped or budget.explain(self._translate(exc))
                if isinstance(error, cancel.Cancelled):
                    raise error from exc  # not a break: nobody waits for the rest
                if received:
                    raise StreamInterrupted(
                        f"The answer from {self.describe()} broke off after {len(''.join(received))} "
                        f"characters ({error}). The partial answer is kept; ask again to retry.",
                        partial="".join(received),
                    ) from exc
                if self._adapt(request, exc):
                    continue
                if not self._should_retry(error, attempt, exc, call):
                    raise error from exc
                attempt += 1
            finally:
                pieces.close()

    def _warn_if_cut(self, finish: Finish) -> None:
        """Log an answer cut at ``max_tokens`` (a one-token ping is cut by design)."""
        if finish.cut and (finish.max_tokens or 2) > 1:
            self._logger.warning(
                "%s (%s role): answer %s; raise max_tokens if answers end mid-sentence",
                self.describe(),
                self.role,
                finish.describe(),
            )

    def _attempt(self, request: dict[str, Any], call: CallLimits) -> Generator[str, None, Finish]:
        """One request: its pieces, then how it ended. A stream's limits are checked between its events, and
        a watchdog closes the connection when they run out while no event arrives."""
        timeout = http_timeout(call.read_timeout(self.options.timeout))
        handle = self._send(request, timeout)
        watchdog = Watchdog(handle, call) if call.watched else None
        streamed = bool(request.get("stream"))
        try:
            pieces = self._pieces(handle, request)
            while True:
                try:
                    piece = next(pieces)
                except StopIteration as stop:
                    return stop.value
                if streamed:
                    call.check()
                if piece:
                    yield piece
        finally:
            if watchdog is not None:
                watchdog.stop()
            close = getattr(handle, "close", None)
            if callable(close):
                close()  # unread: the connection closes, and the server stops generating

    def _should_retry(self, error: LLMError, attempt: int, exc: BaseException, call: CallLimits) -> bool:
        """Whether to try again (after waiting the backoff, or what the server asked for)."""
        o = self.options
        if not error.retryable or attempt >= o.max_retries:
            return False
        if isinstance(error, LLMTimeout) and not o.retry_timeouts:
            return False
        delay = server_wait(exc)
        if delay is None:
            delay = min(MAX_BACKOFF_S, o.backoff * 2**attempt) * random.uniform(0.75, 1.25)
        if not budget.can_wait(delay) or not call.can_wait(delay):  # no room for another attempt
            return False
        self._logger.warning(
            "%s: %s; retry %d/%d in %.2f s",
            self.describe(),
            type(error).__name__,
            attempt + 1,
            o.max_retries,
            delay,
        )
        cancel.pause(delay)
        return True

    def _translate(self, exc: BaseException) -> LLMError:
        """One typed error, with a message saying what to change, for anything the request raised.

        The message may reach a visitor (a turn's note, the trace, the report), so it names "the lawyer
        role's model server" and never the server's address, which is logged here for the operator instead
        (also cut out of the server's own error text, should that repeat it).
        """
        if isinstance(exc, LLMError):
            return exc
        o = self.options
        failure = self._classify(exc)
        self._logger.warning(
            "%s role, %s: %s: %s", self.role, self.log_name(), type(exc).__name__, failure.detail
        )
        fields = {
            "where": self.describe(),
            "role": self.role,
            "model": o.model,
            "timeout": o.timeout,
            "key_env": o.api_key_env,
            "detail": self._hide_server(failure.detail),
            "status": failure.status,
        }
        if failure.kind is None:
            return LLMError("{where}: unexpected {kind}: {detail}".format(kind=type(exc).__name__, **fields))
        return KINDS[failure.kind](self.MESSAGES[failure.kind].format(**fields))

    def _hide_server(self, text: str) -> str:
        """``text`` with the server's URL, ``host:port`` and (a dotted) host name replaced by ``<server>``."""
        url = urlsplit(self.base_url)
        host = url.hostname or ""
        for part in (self.base_url, url.netloc, host if "." in host else ""):
            if part:
                text = text.replace(part, "<server>")
        return text


@dataclass
class CallLimits:
    """The limits of one call, across its attempts: its cancel token, its ``call_timeout`` and, for a whole
    answer (nobody sees pieces, so a late one is worth nothing), the step's deadline."""

    backend: HttpChatBackend
    token: cancel.CancelToken | None
    ends: float | None
    deadline: budget.Deadline | None

    @classmethod
    def start(cls, backend: HttpChatBackend, whole: bool) -> CallLimits:
        seconds = backend.options.call_timeout
        return cls(
            backend,
            cancel.current(),
            time.monotonic() + seconds if seconds else None,
            budget.current() if whole else None,
        )

    @property
    def watched(self) -> bool:
        return self.token is not None or self.ends is not None or self.deadline is not None

    def stopped(self) -> LLMError | None:
        """Why the call must stop now (cancelled, out of its call_timeout or budget), else ``None``."""
        if self.token is not None and self.token.cancelled:
            return cancel.Cancelled(self.token.reason or cancel.DEFAULT_REASON)
        if self.deadline is not None and self.deadline.expired:
            return self.deadline.exceeded()
        if self.ends is not None and time.monotonic() >= self.ends:
            b = self.backend
            return LLMTimeout(
                f"{b.describe()} did not finish its answer within call_timeout={b.options.call_timeout:g} s. "
                f"Raise `call_timeout` (or lower `max_tokens`) for the {b.role} role."
            )
        return None

    def check(self) -> None:
        error = self.stopped()
        if error is not None:
            raise error

    def read_timeout(self, configured: float) -> float:
        """Seconds to wait for the next piece: ``configured``, or less when the call or the budget ends sooner."""
        self.check()
        timeout = budget.request_timeout(configured)
        return timeout if self.ends is None else max(0.001, min(timeout, self.ends - time.monotonic()))

    def can_wait(self, seconds: float) -> bool:
        return self.stopped() is None and (self.ends is None or self.ends - time.monotonic() > seconds)


class Watchdog:
    """Shuts a streaming response's socket down once its call is cancelled or out of time, waking the reader
    even while the server sends nothing (or only keep-alive comments): the server sees the client go."""

    def __init__(self, handle: Any, call: CallLimits) -> None:
        self._call = call
        self._done = threading.Event()
        self._socket = socket_of(handle)
        if self._socket is not None:
            threading.Thread(target=self._watch, name="lawluo-llm-watchdog", daemon=True).start()

    def _watch(self) -> None:
        while not self._done.wait(CANCEL_POLL_S):
            if self._call.stopped() is not None:
                try:
                    self._socket.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                return

    def stop(self) -> None:
        self._done.set()


def socket_of(handle: Any) -> socket.socket | None:
    """The socket under an httpx response, or under a stream that holds one as ``.response``; else None."""
    response = handle if hasattr(handle, "extensions") else getattr(handle, "response", None)
    try:
        network = response.extensions["network_stream"]
        sock = network.get_extra_info("socket")
    except (AttributeError, KeyError, TypeError):
        return None
    return sock if isinstance(sock, socket.socket) else None


def server_wait(exc: BaseException) -> float | None:
    """Seconds the server asked us to wait (``retry-after-ms`` or ``retry-after``), if it said and it is sane."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if not headers:
        return None
    try:
        if "retry-after-ms" in headers:
            wait = float(headers["retry-after-ms"]) / 1000
        elif "retry-after" in headers:
            wait = float(headers["retry-after"])
        else:
            return None
    except ValueError:
        return None
    return wait if 0 <= wait <= MAX_SERVER_WAIT_S else None
