"""The gate in front of Gradio's queue: per-client limits applied *before* a request takes a queue place.

Gradio checks nothing per client before an event joins its queue, and its queue has one size for every
event: with the models slow, 40 Asks from 40 addresses held the model slots and 70 more joins from one
address filled the 64 places, so another visitor's statute search got "Queue is full" 102 times out of 102.
Per-visitor checks inside the handlers came too late (an event runs them only after it leaves the queue).

:class:`QueueGate` is ASGI middleware on the app's POST routes under ``/gradio_api`` (and the event
stream). Each request's client is the address :mod:`.client_address` resolved, the same one every other
limit uses. In order, a request is refused when

1. its body is larger than ``max_body_bytes`` (``max_upload_bytes`` for ``/upload``): 413, read no
   further — a 300 MB JSON body used to add 600 MB of memory and stall every request;
2. its address, or its signed-in user (Gradio's login or Hugging Face OAuth), has made
   ``requests_per_minute`` requests in the last minute: 429 (a token bucket each);
3. it opens a browser session (a ``session_hash`` not seen from this address) after the address opened
   ``sessions_per_hour`` in the last hour: 429 — Gradio keeps ``state_session_capacity`` sessions and
   evicts the oldest, so one address opening thousands of sessions would push out other visitors';
4. (events that join the queue) its address — or, once signed in, its user — already has
   ``model_per_address`` model events, or ``free_per_address`` model-free events, waiting or running: 429;
5. (events that join the queue) ``model_queue`` model events, or ``free_queue`` model-free events, of
   all visitors are waiting: 429 too (Gradio's page shows a 503 as its own English "busy" line, and a
   429 with the gate's message).

A *model event* is one of the consultation's events that may call a language model (concurrency group
``model_group``, ``"firm"``); every other event (search, citation checks, marks, annotation, statistics)
is model-free and has places of its own, so model events can never starve them. Gradio's own queue size
is then only a backstop (:data:`GRADIO_QUEUE_SIZE`).

The event stream ``GET /gradio_api/queue/data?session_hash=…`` carries a session's questions and answers
to whoever names the session. The gate remembers which browser (the digest of its visitor cookie,
:mod:`.visitors`) joined each session's first event, and refuses the stream, and any event of that
session, to a request without that cookie (403): the hash alone is no longer enough.

Refusals are JSON ``{"detail": …}`` with a message in both languages (HTML, each in its ``<span lang>``:
the page's toast shows its own) and ``Retry-After``; nothing else about the request is read or logged.
"""

from __future__ import annotations

import json
import logging
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import parse_qs

from starlette.middleware import Middleware

from ..config import Settings
from ..config.settings import from_setting, read_settings
from .client_address import DEFAULT_TRUSTED, TrustedProxies, scope_address
from .i18n import say
from .visitors import VISITOR_COOKIE, owner_digest

logger = logging.getLogger(__name__)

PREFIX = "/gradio_api"
#: Gradio's own queue size: never reached while the gate's limits hold (they sum to less).
GRADIO_QUEUE_SIZE = 4096


@dataclass(frozen=True)
class GateLimits:
    """What one client address may do before its requests reach Gradio (see the settings' help texts)."""

    requests_per_minute: int = from_setting("requests_per_minute")
    sessions_per_hour: int = from_setting("sessions_per_hour")
    model_per_address: int = from_setting("queue_model_per_address")
    free_per_address: int = from_setting("queue_free_per_address")
    model_queue: int = from_setting("queue_model_size")
    free_queue: int = from_setting("queue_free_size")
    max_body_bytes: int = from_setting("max_body_kb", 1024)
    max_upload_bytes: int = from_setting("max_upload_mb", 1024 * 1024)
    model_group: str = "firm"
    max_addresses: int = field(
        default=20_000, metadata={"help": "addresses remembered; the stalest go first"}
    )

    @classmethod
    def from_settings(cls, settings: Settings) -> GateLimits:
        return read_settings(cls, settings)


class Refused(Exception):
    """A request the gate turns away: HTTP ``status`` with ``message`` and a ``Retry-After`` in seconds."""

    def __init__(self, status: int, key: str, retry_after: float | None = None, **fields) -> None:
        message = say(key, **fields)  # both languages, each in its <span lang>: the page shows its own
        super().__init__(message)
        self.status, self.message, self.retry_after = status, message, retry_after


#: The refusals' messages (keys of ``lawluo/strings/app.yaml``), sent as :func:`~lawluo.ui.i18n.say` HTML:
#: Gradio shows a refused event's ``detail`` as a toast that renders HTML, in the page's language.
TOO_BIG = "app.gate_too_big"
TOO_FAST = "app.gate_too_fast"
TOO_MANY_SESSIONS = "app.gate_too_many_sessions"
ADDRESS_BUSY = "app.gate_address_busy"
QUEUE_FULL = "app.gate_queue_full"
FREE_QUEUE_FULL = "app.gate_free_queue_full"
NOT_YOUR_SESSION = "app.gate_not_your_session"


def _size(n: int) -> str:
    """A byte count as a visitor reads it.

    >>> _size(4 * 1024 * 1024), _size(2048)
    ('4 MB', '2 KB')
    """
    return f"{n // (1024 * 1024)} MB" if n >= 1024 * 1024 else f"{n // 1024} KB"


class TokenBucket:
    """``rate`` tokens a minute per key, at most ``rate`` saved up; at most ``max_keys`` keys (stalest go).

    >>> now = [0.0]
    >>> bucket = TokenBucket(2, 10, clock=lambda: now[0])
    >>> [bucket.take("a") for _ in range(3)], bucket.take("b")
    ([0.0, 0.0, 30.0], 0.0)
    >>> now[0] = 30.0; bucket.take("a")
    0.0
    """

    def __init__(self, rate: int, max_keys: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.rate, self.max_keys, self.clock = rate, max_keys, clock
        self._keys: OrderedDict[str, tuple[float, float]] = OrderedDict()  # key → (tokens, when)

    def take(self, key: str) -> float:
        """Take a token for ``key``: 0.0 when given, else the seconds until one is available."""
        now = self.clock()
        tokens, when = self._keys.pop(key, (float(self.rate), now))
        tokens = min(float(self.rate), tokens + (now - when) * self.rate / 60.0)
        if tokens >= 1.0:
            tokens -= 1.0
            wait = 0.0
        else:
            wait = (1.0 - tokens) * 60.0 / self.rate
        self._keys[key] = (tokens, now)
        while len(self._keys) > self.max_keys:
            self._keys.popitem(last=False)
        return wait


class SessionCounter:
    """Distinct browser sessions each key opened within the last ``window`` seconds (at most ``limit`` kept).

    >>> now = [0.0]
    >>> c = SessionCounter(limit=2, window=3600, max_keys=10, clock=lambda: now[0])
    >>> c.admit("a", "s1"), c.admit("a", "s2"), c.admit("a", "s1"), c.admit("a", "s3")
    (True, True, True, False)
    >>> now[0] = 3601; c.admit("a", "s3")
    True
    """

    def __init__(
        self, limit: int, window: float, max_keys: int, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.limit, self.window, self.max_keys, self.clock = limit, window, max_keys, clock
        self._keys: OrderedDict[str, OrderedDict[str, float]] = OrderedDict()

    def admit(self, key: str, session: str) -> bool:
        now = self.clock()
        seen = self._keys.pop(key, None) or OrderedDict()
        while seen and now - next(iter(seen.values())) > self.window:
            seen.popitem(last=False)
        ok = session in seen or len(seen) < self.limit
        if ok and session not in seen:
            seen[session] = now
        self._keys[key] = seen
        while len(self._keys) > self.max_keys:
            self._keys.popitem(last=False)
        return ok


class SessionOwners:
    """Which browser (visitor-cookie digest) a Gradio session belongs to: the first one that used it."""

    def __init__(self, max_sessions: int = 50_000) -> None:
        self.max_sessions = max_sessions
        self._owners: OrderedDict[str, str] = OrderedDict()

    def claim(self, session: str, owner: str | None) -> None:
        if session and owner and session not in self._owners:
            self._owners[session] = owner
            while len(self._owners) > self.max_sessions:
                self._owners.popitem(last=False)

    def allows(self, session: str, owner: str | None) -> bool:
        """Whether a request with ``owner`` may read ``session``'s stream (a session never claimed: yes)."""
        known = self._owners.get(session)
        return known is None or known == owner


def request_cookies(headers: list[tuple[bytes, bytes]]) -> dict[str, str]:
    """The cookies of raw ASGI ``headers`` (the first value of each name)."""
    cookies: dict[str, str] = {}
    for name, value in headers:
        if name.lower() == b"cookie":
            for part in value.decode("latin-1").split(";"):
                key, _, token = part.strip().partition("=")
                cookies.setdefault(key, token)
    return cookies


def cookie_owner(headers: list[tuple[bytes, bytes]], cookie_name: str) -> str | None:
    """The digest of the visitor cookie in raw ASGI ``headers`` (the same digest :func:`visit_of` computes)."""
    token = request_cookies(headers).get(cookie_name)
    return owner_digest(token) if token else None


class QueueGate:
    """ASGI middleware applying :class:`GateLimits` per client address (see the module docstring)."""

    def __init__(
        self,
        app,
        limits: GateLimits | None = None,
        trusted: TrustedProxies | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.app = app
        self.limits = limits = limits or GateLimits()
        self.trusted = trusted if trusted is not None else TrustedProxies.parse(DEFAULT_TRUSTED)
        self.requests = TokenBucket(limits.requests_per_minute, limits.max_addresses, clock)
        self.sessions = SessionCounter(limits.sessions_per_hour, 3600.0, limits.max_addresses, clock)
        self.owners = SessionOwners()
        self._admitting: dict[tuple[str, bool], int] = {}  # admitted joins not yet in Gradio's queue
        self._lock = threading.Lock()
        self.refused: dict[int, int] = {}  # status → count (benchmarks read it)

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http" or not scope.get("path", "").startswith(PREFIX):
            await self.app(scope, receive, send)
            return
        path = scope["path"][len(PREFIX) :]
        method = scope.get("method", "GET")
        try:
            if method == "GET" and path.rstrip("/") == "/queue/data":
                self._check_stream(scope)
                await self.app(scope, receive, send)
            elif method == "POST":
                await self._post(scope, receive, send, path)
            else:
                await self.app(scope, receive, send)
        except Refused as refusal:
            with self._lock:
                self.refused[refusal.status] = self.refused.get(refusal.status, 0) + 1
            await _send_refusal(send, refusal)

    # -- the event stream ---------------------------------------------------------------------------
    def _check_stream(self, scope) -> None:
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        session = (query.get("session_hash") or [""])[0]
        owner = cookie_owner(scope.get("headers") or [], VISITOR_COOKIE)
        if not self.owners.allows(session, owner):
            raise Refused(403, NOT_YOUR_SESSION)

    # -- requests that may start work ---------------------------------------------------------------
    async def _post(self, scope, receive, send, path: str) -> None:
        address = scope_address(scope, self.trusted)
        upload = path.rstrip("/") == "/upload"
        limit = self.limits.max_upload_bytes if upload else self.limits.max_body_bytes
        _check_length(scope, limit)
        user = signed_in_user(scope)
        wait = max(self.requests.take(address), self.requests.take(f"user:{user}") if user else 0.0)
        if wait > 0:
            raise Refused(429, TOO_FAST, wait, seconds=math.ceil(wait))
        if upload:  # streamed to disk by Gradio: counted as it comes, never held whole here
            await self.app(scope, _counting(receive, limit), send)
            return
        body = await _read_body(receive, limit)
        event = _event_of(body)
        session = event.get("session_hash") if isinstance(event.get("session_hash"), str) else ""
        if session and not self.sessions.admit(address, session):
            raise Refused(429, TOO_MANY_SESSIONS, 600)
        joins = path.rstrip("/") == "/queue/join" or path.startswith("/call/")
        if session:
            owner = cookie_owner(scope.get("headers") or [], VISITOR_COOKIE)
            if not self.owners.allows(session, owner):  # another browser's session: neither join nor run
                raise Refused(403, NOT_YOUR_SESSION)
            if joins:
                self.owners.claim(session, owner)
        if not joins:
            await self.app(scope, _replay(body, receive), send)
            return
        model = self._is_model_event(scope, event, path)
        key = (address, model)
        with self._lock:
            self._check_places(scope, address, model, user)
            self._admitting[key] = self._admitting.get(key, 0) + 1
        try:
            await self.app(scope, _replay(body, receive), send)
        finally:
            with self._lock:
                self._admitting[key] -= 1
                if self._admitting[key] <= 0:
                    del self._admitting[key]

    def _is_model_event(self, scope, event: dict, path: str) -> bool:
        fn = _function(scope, event, path)
        return fn is not None and getattr(fn, "concurrency_id", None) == self.limits.model_group

    def _check_places(self, scope, address: str, model: bool, user: str | None = None) -> None:
        """Refuse an event whose address (or signed-in user), or whose kind of event, has no place left
        (call under the lock)."""
        mine, waiting, users = self._admitting.get((address, model), 0), 0, 0
        for ev, queued in _events(scope):
            if (getattr(ev, "concurrency_id", None) == self.limits.model_group) != model:
                continue
            waiting += queued
            request = getattr(ev, "request", None)
            state = getattr(request, "scope", {}).get("state") or {} if request is not None else {}
            mine += state.get("lawluo_client") == address
            users += bool(user) and getattr(ev, "username", None) == user
        mine = max(mine, users)
        per_address = self.limits.model_per_address if model else self.limits.free_per_address
        if mine >= per_address:
            raise Refused(429, ADDRESS_BUSY, 10, n=mine)
        if waiting + sum(n for (_, m), n in self._admitting.items() if m == model) >= (
            self.limits.model_queue if model else self.limits.free_queue
        ):
            # 429, not 503: Gradio's page shows a 503 as its own English "busy" line, a 429 with our detail
            raise Refused(429, QUEUE_FULL if model else FREE_QUEUE_FULL, 30)


def signed_in_user(scope) -> str | None:
    """The signed-in user of a request: Gradio's login (its access-token cookie) or Hugging Face OAuth (the
    session's ``oauth_info``), else None."""
    session = scope.get("session") if "session" in scope else None
    info = (session or {}).get("oauth_info") if isinstance(session, dict) else None
    if isinstance(info, dict):
        name = (info.get("userinfo") or {}).get("preferred_username")
        if isinstance(name, str) and name:
            return name
    app = scope.get("app")
    tokens, cookie_id = getattr(app, "tokens", None), getattr(app, "cookie_id", None)
    if not tokens or cookie_id is None:
        return None
    cookies = request_cookies(scope.get("headers") or [])
    for key in (f"access-token-{cookie_id}", f"access-token-unsecure-{cookie_id}"):
        user = tokens.get(cookies.get(key, ""))
        if isinstance(user, str):
            return user
    return None


def _blocks(scope):
    app = scope.get("app")
    get = getattr(app, "get_blocks", None)
    try:
        return get() if get is not None else None
    except Exception:  # noqa: BLE001 — no Blocks mounted yet
        return None


def _function(scope, event: dict, path: str):
    blocks = _blocks(scope)
    fns = getattr(blocks, "fns", None) or {}
    index = event.get("fn_index")
    if isinstance(index, int) and index in fns:
        return fns[index]
    if path.startswith("/call/"):
        name = path.split("/")[-1] or path.split("/")[-2]
        return next((fn for fn in fns.values() if getattr(fn, "api_name", None) == name), None)
    return None


def _events(scope):
    """(event, whether it waits) for every event in Gradio's queue, waiting or running."""
    queue = getattr(_blocks(scope), "_queue", None)
    if queue is None:
        return
    for event_queue in list(getattr(queue, "event_queue_per_concurrency_id", {}).values()):
        for ev in list(event_queue.queue):
            yield ev, True
    for job in list(getattr(queue, "active_jobs", []) or []):
        for ev in job or ():
            yield ev, False


def _event_of(body: bytes) -> dict:
    """The JSON object of an event request's body (``{}`` when it is not one: Gradio then answers 422)."""
    try:
        value = json.loads(body) if body else {}
    except (ValueError, RecursionError):
        return {}
    return value if isinstance(value, dict) else {}


def _check_length(scope, limit: int) -> None:
    for name, value in scope.get("headers") or []:
        if name.lower() == b"content-length":
            try:
                declared = int(value)
            except ValueError:
                raise Refused(400, "app.gate_bad_length") from None
            if declared > limit:
                raise Refused(413, TOO_BIG, limit=_size(limit))


async def _read_body(receive, limit: int) -> bytes:
    chunks, total = [], 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise Refused(400, "app.gate_went_away")
        chunk = message.get("body", b"")
        total += len(chunk)
        if total > limit:
            raise Refused(413, TOO_BIG, limit=_size(limit))
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def _replay(body: bytes, receive):
    """The request's body, read by the gate, once; then the client's own messages (a streamed answer — an
    MCP tool's event stream — waits on them to learn that the client left)."""
    sent = False

    async def replay():
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


def _counting(receive, limit: int):
    """``receive`` that fails the request once more than ``limit`` bytes came (a body with no length)."""
    total = 0

    async def counted():
        nonlocal total
        message = await receive()
        if message["type"] == "http.request":
            total += len(message.get("body", b""))
            if total > limit:
                raise Refused(413, TOO_BIG, limit=_size(limit))
        return message

    return counted


async def _send_refusal(send, refusal: Refused) -> None:
    body = json.dumps({"detail": refusal.message}, ensure_ascii=False).encode("utf-8")
    headers = [
        (b"content-type", b"application/json; charset=utf-8"),
        (b"content-length", str(len(body)).encode()),
    ]
    if refusal.retry_after:
        headers.append((b"retry-after", str(math.ceil(refusal.retry_after)).encode()))
    try:
        await send({"type": "http.response.start", "status": refusal.status, "headers": headers})
        await send({"type": "http.response.body", "body": body})
    except RuntimeError:  # the response had started (an upload refused mid-stream): just end it
        logger.info("gate: refused a request whose response had started (%s)", refusal.status)


def queue_gate_middleware(
    limits: GateLimits | None = None, trusted: TrustedProxies | None = None
) -> Middleware:
    """:class:`QueueGate` for ``launch(app_kwargs={"middleware": [...]})``, after ``ClientAddress``."""
    return Middleware(QueueGate, limits=limits, trusted=trusted)
