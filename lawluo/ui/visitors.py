"""What the consultation tab knows about the visitor behind a request, and the limits it holds them to.

The tab is open to anonymous visitors, so one of them must not be able to stall the others or reach
their consultations:

- **One model step at a time per browser session, a few per client address**
  (:meth:`Visitors.model_work`): a second Ask, Regenerate or End while the first still runs is refused
  with a message, never interleaved (an End during a streaming answer would otherwise write the
  report without it).
- **No model works for nobody** (:class:`Step`, :meth:`Visitors.step`): each model step has a
  :class:`~lawluo.llm.cancel.CancelToken` that its time budget carries into every model call. It is
  cancelled when the page leaves (:meth:`Visitors.cancel`), when the visitor starts over with 新咨询
  (:meth:`Visitors.replace`; the step then changes nothing more), and shortly after the step's time budget
  ran out; a cancelled call closes its connection, and the model server stops generating.
- **A bounded tree** (:func:`fit_tree`): H and K asked for are reduced until the tree costs at most
  ``visitor_tree_calls`` clarifier calls (H=5, K=6 would cost 259).
- **Downloads in a folder of the session** (:meth:`Visitors.folder`) under one private (0700) folder
  of the app, named by the server, removed when the visitor leaves (:meth:`Visitors.forget`) or after
  ``session_ttl_s``.
- **A consultation bound to its browser** (:func:`owner_of`): the app sets an HttpOnly cookie
  (:class:`VisitorCookie`); a consultation remembers a digest of the cookie it was started with, and a
  request that presents its Gradio session hash without that cookie is refused. A client that keeps
  no cookies (some embedded browsers) gets an unbound consultation: the session hash, a random value
  the browser never shows, is then the only key — the limit is documented in docs/consultation.md.

The client address is the one :mod:`.client_address` resolved for the request (the setting
``trusted_proxies`` says whose ``X-Forwarded-For`` is believed), the same address the queue gate and the
sign-in limits use.
"""

from __future__ import annotations

import ctypes
import hashlib
import logging
import secrets
import shutil
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from ..config.settings import from_setting, read_settings
from ..i18n import Message, message, text
from ..llm.cancel import CancelToken
from ..tolc.tree import tree_calls  # the tree's cost (tolc.tree: its one home)
from .client_address import request_address

logger = logging.getLogger(__name__)

VISITOR_COOKIE = "lawluo_visitor"
COOKIE_MAX_AGE_S = 30 * 24 * 3600


@dataclass(frozen=True)
class VisitorLimits:
    """The settings of :class:`~lawluo.config.Settings` that bound one visitor (see their help texts)."""

    tree_calls: int = from_setting("visitor_tree_calls")
    parallel: int = from_setting("visitor_parallel")
    step_budget_s: float = from_setting("step_budget_s")
    session_ttl_s: float = from_setting("session_ttl_s")
    session_grace_s: float = from_setting("session_grace_s")
    calls_per_minute: int = from_setting("visitor_calls_per_minute")
    calls_per_hour: int = from_setting("visitor_calls_per_hour")
    resumes_per_hour: int = from_setting("resumes_per_hour")
    resumed_memory_mb: int = from_setting("resumed_memory_mb")

    @classmethod
    def from_settings(cls, settings) -> VisitorLimits:
        return read_settings(cls, settings)


#: What a visitor whose model calls are spent is told (:func:`calls_spent`).
CALLS_SPENT = "consult.limit.calls_spent"
#: Memory a resumed consultation holds, per byte of its file (a 2 MB file was measured at ~5 MB).
RESUMED_MEMORY_FACTOR = 3
RESUMED_FULL = "consult.limit.resumed_full"
RESUMES_SPENT = "consult.limit.resumes_spent"


class Windows:
    """Events per key within sliding windows (e.g. 30 a minute and 300 an hour); at most ``max_keys`` keys.

    >>> now = [0.0]
    >>> w = Windows({60: 2, 3600: 3}, clock=lambda: now[0])
    >>> w.take("a"), w.take("a"), w.take("a")
    (None, None, (60, 2, 60.0))
    >>> now[0] = 61; w.take("a"), w.take("a")
    (None, (3600, 3, 3539.0))
    """

    def __init__(self, limits: dict[float, int], max_keys: int = 20_000, clock=time.monotonic) -> None:
        self.limits = {window: n for window, n in sorted(limits.items()) if n > 0}
        self.max_keys, self.clock = max_keys, clock
        self._times: dict[str, list[float]] = {}
        self._lock = threading.Lock()

    def take(self, key: str) -> tuple[float, int, float] | None:
        """Count one event of ``key`` now: ``None``, or (window, limit, seconds to wait) when a window is full
        (then nothing is counted)."""
        if not self.limits:
            return None
        now, longest = self.clock(), max(self.limits)
        with self._lock:
            times = [t for t in self._times.pop(key, []) if now - t < longest]
            for window, limit in self.limits.items():
                recent = [t for t in times if now - t < window]
                if len(recent) >= limit:
                    self._times[key] = times
                    return window, limit, recent[-limit] + window - now
            times.append(now)
            self._times[key] = times
            while len(self._times) > self.max_keys:
                self._times.pop(next(iter(self._times)))
        return None


@dataclass(frozen=True)
class AddressAllowance:
    """A step's :class:`~lawluo.llm.budget.CallAllowance`: each model call counted against its address."""

    calls: Windows
    address: str

    def spend(self) -> str | None:
        full = self.calls.take(self.address)
        return None if full is None else calls_spent(*full)


def calls_spent(window: float, limit: int, wait: float) -> str:
    """What a visitor whose model calls are spent is told (its Chinese text: the message of the model call's
    error; :func:`calls_spent_message` is the message itself).

    >>> calls_spent(60, 30, 12.5).split('；')[0]
    '本站每个网络地址每分钟最多调用模型 30 次，您的额度已用完，请 1 分钟后再试'
    """
    return str(calls_spent_message(window, limit, wait))


def calls_spent_message(window: float, limit: int, wait: float) -> Message:
    """:func:`calls_spent` as a :class:`~lawluo.i18n.Message`."""
    minute = window <= 60
    return message(
        CALLS_SPENT,
        period=message("consult.limit.minute" if minute else "consult.limit.hour"),
        limit=limit,
        minutes=max(1, int(-(-wait // 60))),
    )


@dataclass(frozen=True)
class Visit:
    """One request's visitor: the Gradio session, the client address, the digest of the visitor cookie."""

    session: str = ""
    address: str = ""
    owner: str | None = None


DIRECT = Visit()  # a direct call of a handler (tests, scripts): no session, nothing to limit


#: Seconds after a step's time budget ran out at which its model calls are cancelled. The budget itself stops
#: them first (a request's timeout, a slot's wait, the answer's check between pieces); this stops whatever
#: does not look at it (a structured call streamed token by token).
BUDGET_GRACE_S = 1.0
BUDGET_SPENT = "consult.stop.budget"


@dataclass
class Step:
    """One running model step of a session: what it is (``kind``), the token that cancels its model calls
    (give it to the step's :class:`~lawluo.llm.budget.Deadline`), and whether another action replaced it.

    ``ended`` is set once the step has sent its last view (:meth:`Visitors.ended`).
    """

    kind: str
    token: CancelToken = field(default_factory=CancelToken)
    allowance: AddressAllowance | None = None
    replaced: bool = False
    ended: threading.Event = field(default_factory=threading.Event)
    _timer: threading.Timer | None = field(default=None, repr=False)

    def cancel(self, reason: str) -> None:
        self.token.cancel(reason)

    def expire_after(self, seconds: float) -> None:
        """Cancel the step ``seconds`` (plus :data:`BUDGET_GRACE_S`) from now, unless it has ended."""
        reason = text(BUDGET_SPENT, seconds=f"{seconds:g}")  # the reason the model calls carry: Chinese
        self._timer = threading.Timer(seconds + BUDGET_GRACE_S, self.token.cancel, args=(reason,))
        self._timer.daemon = True
        self._timer.start()

    def shown(self, view):
        """``view``, or ``None`` once the step was replaced: what it would show is no longer the visitor's."""
        return None if self.replaced else view


def fit_tree(height: int, k: int, max_calls: int) -> tuple[int, int]:
    """``(height, k)`` reduced — height first, down to 2, then k — until the tree costs ≤ ``max_calls``.

    >>> fit_tree(5, 6, 13), fit_tree(3, 3, 13), fit_tree(2, 6, 1)
    ((3, 6), (3, 3), (2, 6))
    """
    while height > 2 and tree_calls(height, k) > max_calls:
        height -= 1
    while k > 1 and tree_calls(height, k) > max_calls:
        k -= 1
    return height, k


def owner_digest(token: str) -> str:
    """What a consultation (and the queue gate's session) remembers of the visitor cookie ``token``."""
    return hashlib.sha256(token.encode()).hexdigest()[:32]


def visit_of(request) -> Visit:
    """The visitor behind a ``gr.Request`` (or ``None``: a direct call, as in tests)."""
    if request is None:
        return Visit()
    address = request_address(request)
    cookies = getattr(request, "cookies", None) or {}
    token = cookies.get(VISITOR_COOKIE)
    owner = owner_digest(token) if token else None
    return Visit(getattr(request, "session_hash", "") or "", address, owner)


def owner_of(state, visit: Visit) -> bool:
    """Whether ``visit`` may see and change ``state`` (unbound states and direct calls: yes)."""
    owner = getattr(state, "owner", None)
    return state is None or owner is None or not visit.session or owner == visit.owner


class Visitors:
    """Per-visitor limits and files of the consultation tab; one per app, shared by every session."""

    def __init__(self, limits: VisitorLimits | None = None, root: Path | None = None) -> None:
        self.limits = limits or VisitorLimits()
        self._lock = threading.Lock()
        self._sessions: set[str] = set()
        self._steps: dict[str, Step] = {}  # each session's latest step, until it has ended
        self._addresses: Counter[str] = Counter()
        self._root = root
        self._last_sweep = 0.0
        self.calls = Windows({60: self.limits.calls_per_minute, 3600: self.limits.calls_per_hour})
        self.resumes = Windows({3600: self.limits.resumes_per_hour})
        self._resumed: dict[str, tuple[int, float]] = {}  # session → (bytes held, when resumed)

    # -- budgets per client address ------------------------------------------------------------------
    def allowance(self, visit: Visit) -> AddressAllowance | None:
        """The model-call budget of ``visit``'s address (``None`` for a direct call: nothing to limit)."""
        return AddressAllowance(self.calls, visit.address) if visit.session else None

    def resume(self, visit: Visit, file_bytes: int = 0) -> Message | None:
        """Count a resumed consultation of ``visit``'s address (a file of ``file_bytes``): ``None``, or why it
        may not resume now — the address resumed ``resumes_per_hour`` times this hour, or the consultations
        resumed by every visitor would hold more than ``resumed_memory_mb`` (until a session leaves or expires)."""
        if not visit.session:
            return None
        full = self.resumes.take(visit.address)
        if full is not None:
            return message(RESUMES_SPENT, limit=full[1], minutes=max(1, int(-(-full[2] // 60))))
        held = file_bytes * RESUMED_MEMORY_FACTOR
        now = time.monotonic()
        with self._lock:
            for session, (_, when) in list(self._resumed.items()):
                if now - when > self.limits.session_ttl_s:
                    del self._resumed[session]
            others = sum(n for s, (n, _) in self._resumed.items() if s != visit.session)
            if others + held > self.limits.resumed_memory_mb * 1024 * 1024:
                return message(RESUMED_FULL)
            self._resumed[visit.session] = (held, now)
        return None

    # -- concurrent model work ----------------------------------------------------------------------
    @contextmanager
    def model_work(self, visit: Visit) -> Iterator[bool]:
        """``True`` inside the block when ``visit`` may start a model step now (the slot is held until
        the block ends); ``False`` when its session already runs one or its address runs ``parallel``."""
        if not visit.session:  # a direct call (tests, scripts): no visitor to limit
            yield True
            return
        with self._lock:
            allowed = visit.session not in self._sessions and (
                not visit.address or self._addresses[visit.address] < self.limits.parallel
            )
            if allowed:
                self._sessions.add(visit.session)
                self._addresses[visit.address] += 1
        try:
            yield allowed
        finally:
            if allowed:
                with self._lock:
                    self._sessions.discard(visit.session)
                    self._addresses[visit.address] -= 1
                    if self._addresses[visit.address] <= 0:
                        del self._addresses[visit.address]

    @contextmanager
    def step(self, visit: Visit, kind: str) -> Iterator[Step | None]:
        """:meth:`model_work` with a :class:`Step`: ``None`` when refused. The step is cancelled once its
        time budget (``step_budget_s``) ran out; call :meth:`ended` once it has sent its last view (which
        may come after the block, when the session is let go)."""
        with self.model_work(visit) as allowed:
            if not allowed:
                yield None
                return
            step = Step(kind, allowance=self.allowance(visit))
            step.expire_after(self.limits.step_budget_s)
            if visit.session:
                with self._lock:
                    self._steps[visit.session] = step
            yield step

    def ended(self, visit: Visit, step: Step) -> None:
        """``step`` has sent its last view (or was closed): nothing of it runs or changes the page any more."""
        if step._timer is not None:
            step._timer.cancel()
        with self._lock:
            if self._steps.get(visit.session) is step:
                del self._steps[visit.session]
        step.ended.set()

    def cancel(self, session: str, reason: str) -> None:
        """Cancel the running step of ``session`` (its page left): its model calls stop, it ends as usual."""
        with self._lock:
            step = self._steps.get(session)
        if step is not None:
            step.cancel(reason)

    def replace(self, visit: Visit, reason: str, wait_s: float) -> bool:
        """The visitor starts over: cancel the session's running step, which from now on changes nothing
        (:meth:`Step.shown`), and wait up to ``wait_s`` for it to end; whether it has (or none ran)."""
        with self._lock:
            step = self._steps.get(visit.session) if visit.session else None
        if step is None:
            return True
        step.replaced = True
        step.cancel(reason)
        return step.ended.wait(wait_s)

    def busy(self, session: str) -> bool:
        """Whether a model step of ``session`` is running."""
        with self._lock:
            return session in self._sessions

    # -- download files -----------------------------------------------------------------------------
    @property
    def root(self) -> Path:
        """The app's private folder of session downloads (created 0700 on first use)."""
        with self._lock:
            if self._root is None:
                self._root = Path(tempfile.mkdtemp(prefix="lawluo-sessions-"))
            self._root.mkdir(mode=0o700, parents=True, exist_ok=True)
            return self._root

    def folder(self, visit: Visit) -> Path:
        """A fresh folder for one download of this session (the session's folder is emptied first)."""
        self._sweep()
        name = hashlib.sha256(visit.session.encode()).hexdigest()[:24] if visit.session else "direct"
        session_dir = self.root / name
        shutil.rmtree(session_dir, ignore_errors=True)  # one download at a time per session: drop the last
        folder = session_dir / secrets.token_hex(8)
        folder.mkdir(mode=0o700, parents=True)
        return folder

    def forget(self, session: str) -> None:
        """The visitor left (or started over): remove their files now; a resumed consultation no longer counts."""
        with self._lock:
            self._resumed.pop(session, None)
        if session:
            shutil.rmtree(self.root / hashlib.sha256(session.encode()).hexdigest()[:24], ignore_errors=True)

    def _sweep(self) -> None:
        """Remove session folders untouched for ``session_ttl_s`` (visitors whose leaving went unseen)."""
        now = time.time()
        if now - self._last_sweep < 60:
            return
        self._last_sweep = now
        for entry in self.root.iterdir():
            try:
                if now - entry.stat().st_mtime > self.limits.session_ttl_s:
                    shutil.rmtree(entry, ignore_errors=True)
            except OSError:
                continue


M_ARENA_MAX = -8  # glibc's mallopt parameter number


def limit_malloc_arenas(arenas: int = 2) -> None:
    """Have glibc keep at most ``arenas`` malloc arenas (call at start-up, before the worker threads).

    By default glibc gives threads up to 8 arenas per core; memory freed in one stays in it, so a
    server whose many worker threads each served a visitor keeps every arena's peak. Does nothing off
    glibc (same as ``MALLOC_ARENA_MAX``).
    """
    try:
        ctypes.CDLL("libc.so.6").mallopt(M_ARENA_MAX, arenas)
    except (OSError, AttributeError):
        return


def give_back_memory() -> None:
    """Ask glibc to return freed heap pages to the system (``malloc_trim``), e.g. after sessions are freed.

    CPython frees a departed visitor's objects, but glibc keeps the pages in its per-thread arenas, so
    the process's RSS would stay at its peak; trimming gives them back. Does nothing off glibc.
    """
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.malloc_trim(0)
    except (OSError, AttributeError):
        return


class Presence:
    """Which sessions have a page open: the heartbeat streams (``GET …/heartbeat/<session>``) now open.

    Gradio calls ``unload`` when a page's heartbeat drops, and a page that only lost its connection
    reconnects it with the same session; this tells the two apart (see ``consult_tab.leave_later``).
    """

    def __init__(self) -> None:
        self._open: Counter[str] = Counter()
        self._lock = threading.Lock()

    def is_open(self, session: str) -> bool:
        with self._lock:
            return self._open[session] > 0

    @contextmanager
    def heartbeat(self, session: str) -> Iterator[None]:
        with self._lock:
            self._open[session] += 1
        try:
            yield
        finally:
            with self._lock:
                self._open[session] -= 1
                if self._open[session] <= 0:
                    del self._open[session]


class VisitorCookie:
    """ASGI middleware: gives every browser a random HttpOnly cookie that binds its consultations, and
    keeps the app's :class:`Presence` (``app.state.lawluo_presence``) of open pages.

    ``SameSite=None; Secure`` over HTTPS (a Space runs inside an iframe on huggingface.co, where a
    ``Lax`` cookie would not be sent), ``Lax`` over plain HTTP (loopback).
    """

    def __init__(self, app) -> None:
        self.app = app
        self.presence = Presence()

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if "app" in scope and not hasattr(scope["app"].state, "lawluo_presence"):
            scope["app"].state.lawluo_presence = self.presence
        path = scope.get("path", "")
        if "/heartbeat/" in path:
            with self.presence.heartbeat(path.rsplit("/", 1)[-1]):
                await self._serve(scope, receive, send)
        else:
            await self._serve(scope, receive, send)

    async def _serve(self, scope, receive, send) -> None:
        """The request, with a new visitor cookie set on the way back when it carries none."""
        if _has_cookie(scope):
            await self.app(scope, receive, send)
            return
        token = secrets.token_urlsafe(24)
        headers = {k.lower(): v for k, v in scope.get("headers", [])}
        https = scope.get("scheme") == "https" or headers.get(b"x-forwarded-proto", b"").startswith(b"https")
        attributes = "; SameSite=None; Secure" if https else "; SameSite=Lax"
        cookie = f"{VISITOR_COOKIE}={token}; Path=/; Max-Age={COOKIE_MAX_AGE_S}; HttpOnly{attributes}"
        scope = {
            **scope,
            "headers": _request_headers_with(scope.get("headers", []), token),
        }  # bound from the first

        async def send_with_cookie(message) -> None:
            if message["type"] == "http.response.start":
                message = {
                    **message,
                    "headers": [*message.get("headers", []), (b"set-cookie", cookie.encode())],
                }
            await send(message)

        await self.app(scope, receive, send_with_cookie)


def _has_cookie(scope) -> bool:
    marker = f"{VISITOR_COOKIE}=".encode()
    return any(name.lower() == b"cookie" and marker in value for name, value in scope.get("headers", []))


def _request_headers_with(headers: list, token: str) -> list:
    """``headers`` with the visitor cookie added to the request's ``Cookie`` header (or as one)."""
    pair = f"{VISITOR_COOKIE}={token}".encode()
    out, added = [], False
    for name, value in headers:
        if name.lower() == b"cookie" and not added:
            value, added = value + b"; " + pair, True
        out.append((name, value))
    return out if added else [*out, (b"cookie", pair)]


def visitor_cookie_middleware():
    """:class:`VisitorCookie` for ``launch(app_kwargs={"middleware": [...]})``."""
    from starlette.middleware import Middleware

    return Middleware(VisitorCookie)
