"""Gradio's login form, guarded against floods: failed sign-ins are limited per account and per client
address, and the password check runs off the event loop, a few at a time.

Gradio's ``POST /login`` is an ``async`` route: a plain ``auth`` callable runs on the event loop, so each
0.2 s PBKDF2 check (``eval_ui.auth.ITERATIONS``) stalls every other request, and nothing limited the
guesses. ``SignIn.check`` is a coroutine function, which Gradio awaits (``gradio/routes.py``: ``await
app.auth(username, password)`` when ``inspect.iscoroutinefunction(app.auth)``). It

1. refuses, before any hashing, a name or an address with too many recent failures
   (``SignInLimits``: 5 for a name or 20 for an address within 5 minutes lock it for 15 minutes);
   every attempt counts as a failure *before* it is checked, so concurrent guesses cannot overshoot the
   allowance, and a successful sign-in clears its name's count and takes back its address's failure;
2. runs the check in a worker thread (``anyio.to_thread.run_sync``) under a limiter of its own (2 at a
   time), so a flood can neither block the event loop nor take Gradio's worker threads.

A refusal is an HTTP 400 whose ``detail`` says ``Too many failed sign-ins; try again in N minutes 登录失败
次数过多…`` (with ``Retry-After``), and the lock is logged once when it starts. Gradio's login page
shows its own "Incorrect Credentials" for every 400 and cannot show another text, so the limits are
also stated in the page's ``auth_message`` (``SignInLimits.notice``).

Gradio passes ``auth`` only the name and password; the client address comes from ``ClientAddress``, an
ASGI middleware that puts ``scope["client"]`` in a context variable for the request (given to
``launch(app_kwargs={"middleware": [client_address_middleware()]})``). That is the address uvicorn sees,
after its proxy-headers handling: ``X-Forwarded-For`` is believed only from ``FORWARDED_ALLOW_IPS``
(default 127.0.0.1, a reverse proxy on the same host). Without the middleware only names are limited.

    guard = SignIn(users.check)
    demo.launch(auth=guard.check, app_kwargs={"middleware": [client_address_middleware()]})

Reference: OWASP Authentication Cheat Sheet, "Protect against automated attacks" (account lockout and
per-address throttling).
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field

import anyio
from fastapi import HTTPException
from starlette.middleware import Middleware

logger = logging.getLogger(__name__)

#: The address of the client whose request is being served (set by ``ClientAddress``), else None.
CLIENT_ADDRESS: ContextVar[str | None] = ContextVar("lawluo_client_address", default=None)

#: Longest part of a name kept as a limiter key (a longer one is cut: only its own count is merged).
MAX_NAME_KEY = 200


class ClientAddress:
    """ASGI middleware: ``CLIENT_ADDRESS`` is the request's client address while the app serves it."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        token = CLIENT_ADDRESS.set((scope.get("client") or (None,))[0])
        try:
            await self.app(scope, receive, send)
        finally:
            CLIENT_ADDRESS.reset(token)


def client_address_middleware() -> Middleware:
    """``ClientAddress`` for ``launch(app_kwargs={"middleware": [...]})``."""
    return Middleware(ClientAddress)


@dataclass(frozen=True)
class SignInLimits:
    account_failures: int = field(
        default=5, metadata={"help": "failed sign-ins for one name within `window` that lock the name"}
    )
    address_failures: int = field(
        default=20, metadata={"help": "failed sign-ins from one client address within `window` that lock it"}
    )
    window: float = field(default=300.0, metadata={"help": "seconds over which failures are counted"})
    cooldown: float = field(
        default=900.0,
        metadata={"help": "seconds a name or address stays locked after its last counted failure"},
    )
    max_keys: int = field(
        default=10_000,
        metadata={"help": "names (and, separately, addresses) remembered; the stalest go first"},
    )
    concurrent_checks: int = field(
        default=2, metadata={"help": "password checks run at once (each a 0.2 s PBKDF2 on one core)"}
    )

    def __post_init__(self) -> None:
        for name in ("account_failures", "address_failures", "max_keys", "concurrent_checks"):
            if getattr(self, name) < 1:
                raise ValueError(f"SignInLimits.{name} must be at least 1, not {getattr(self, name)}")
        if self.window <= 0 or self.cooldown <= 0:
            raise ValueError("SignInLimits.window and cooldown must be positive")

    def notice(self) -> str:
        """One line for the login page.

        >>> SignInLimits().notice()
        'After 5 wrong passwords a name is locked for 15 minutes. 连续 5 次密码错误将锁定该账号 15 分钟。'
        """
        m = math.ceil(self.cooldown / 60)
        n = self.account_failures
        return f"After {n} wrong passwords a name is locked for {m} minutes. 连续 {n} 次密码错误将锁定该账号 {m} 分钟。"


def refusal_message(seconds: float) -> str:
    """What a locked name or address is told.

    >>> refusal_message(61)
    'Too many failed sign-ins; try again in 2 minutes. 登录失败次数过多，请 2 分钟后再试。'
    """
    m = max(1, math.ceil(seconds / 60))
    return f"Too many failed sign-ins; try again in {m} minute{'s' * (m != 1)}. 登录失败次数过多，请 {m} 分钟后再试。"


class FailureLimiter:
    """Recent failures per key, at most ``max_keys`` keys: a key with ``limit`` failures within
    ``window`` seconds is locked until ``cooldown`` seconds after the last of them.

    Each key keeps only its last ``limit`` failure times, so memory is at most ``max_keys × limit``
    floats; when a new key would exceed ``max_keys``, the key failed least recently is forgotten.

    >>> now = [0.0]
    >>> limiter = FailureLimiter(limit=2, window=60, cooldown=600, max_keys=10, clock=lambda: now[0])
    >>> limiter.fail("bob"), limiter.locked_for("bob")
    (False, 0.0)
    >>> now[0] = 30; limiter.fail("bob"), limiter.locked_for("bob")
    (True, 600.0)
    >>> now[0] = 630; limiter.locked_for("bob")
    0.0
    """

    def __init__(
        self, limit: int, window: float, cooldown: float, max_keys: int, clock: Callable[[], float]
    ) -> None:
        self.limit, self.window, self.cooldown, self.max_keys = limit, window, cooldown, max_keys
        self.clock = clock
        self._failures: OrderedDict[str, deque[float]] = OrderedDict()  # least recently failed first
        self._lock = threading.Lock()

    def locked_for(self, key: str) -> float:
        """Seconds until ``key`` may try again (0.0 when it may now)."""
        with self._lock:
            times = self._failures.get(key)
            if times is None or len(times) < self.limit or times[-1] - times[0] > self.window:
                return 0.0
            return max(0.0, float(times[-1] + self.cooldown - self.clock()))

    def fail(self, key: str) -> bool:
        """Count a failure of ``key`` now; True when that locks it."""
        with self._lock:
            times = self._failures.pop(key, None)
            if times is None:
                times = deque(maxlen=self.limit)
                while len(self._failures) >= self.max_keys:
                    self._failures.popitem(last=False)
            times.append(self.clock())
            self._failures[key] = times
            return len(times) == self.limit and times[-1] - times[0] <= self.window

    def forgive(self, key: str) -> None:
        """Take back the last failure counted for ``key`` (it turned out to be a success)."""
        with self._lock:
            times = self._failures.get(key)
            if times:
                times.pop()
            if not times:
                self._failures.pop(key, None)

    def reset(self, key: str) -> None:
        """Forget every failure of ``key``."""
        with self._lock:
            self._failures.pop(key, None)

    def __len__(self) -> int:
        return len(self._failures)


class SignIn:
    """Gradio's ``auth`` with limits: ``check`` refuses locked names and addresses without hashing and
    runs ``verify`` (e.g. ``Users.check``) in a worker thread, ``limits.concurrent_checks`` at a time."""

    def __init__(
        self,
        verify: Callable[[str, str], bool],
        limits: SignInLimits | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.verify = verify
        self.limits = limits or SignInLimits()
        lim = self.limits
        self.accounts = FailureLimiter(lim.account_failures, lim.window, lim.cooldown, lim.max_keys, clock)
        self.addresses = FailureLimiter(lim.address_failures, lim.window, lim.cooldown, lim.max_keys, clock)
        self._checks = anyio.CapacityLimiter(lim.concurrent_checks)

    async def check(self, username: str, password: str) -> bool:
        """True when ``verify`` accepts; False when not; raises ``HTTPException(400)`` with
        ``refusal_message`` when the name or the client address is locked (``verify`` not called)."""
        name = (username or "").strip()[:MAX_NAME_KEY]
        address = CLIENT_ADDRESS.get()
        wait = max(self.accounts.locked_for(name), self.addresses.locked_for(address) if address else 0.0)
        if wait > 0:
            raise HTTPException(
                status_code=400, detail=refusal_message(wait), headers={"Retry-After": str(math.ceil(wait))}
            )
        # Counted before checking: guesses in flight count against the allowance.
        locking = [("name", name)] if self.accounts.fail(name) else []
        if address and self.addresses.fail(address):
            locking.append(("address", address))
        ok = await anyio.to_thread.run_sync(self.verify, username, password, limiter=self._checks)
        if ok:
            self.accounts.reset(name)
            if address:
                self.addresses.forgive(address)
            return True
        for kind, key in locking:
            logger.warning("sign-in: %s %r locked: %s", kind, key[:64], refusal_message(self.limits.cooldown))
        return False
