"""Gradio's login form, guarded against password guessing without letting anyone lock anyone else out.

Gradio's ``POST /login`` is an ``async`` route; ``SignIn.check`` is a coroutine function, which Gradio
awaits (``gradio/routes.py``: ``await app.auth(username, password)`` when
``inspect.iscoroutinefunction(app.auth)``). Each attempt is limited in three ways (``SignInLimits``):

1. **A name at an address** (the pair): after 5 failures in a row of one name from one client address,
   that pair is refused for 1 minute, doubling with each further failure up to 15 minutes
   (``pair_failures``, ``pair_lock``, ``pair_max_lock``). Only that pair: the same name from another
   address, and other names from that address, are unaffected, so a stranger's wrong guesses cannot
   lock an annotator out (a lock per name let 5 guesses lock ``root`` for everyone, and 68 requests
   lock all 16 annotators).
2. **An address**: 20 failures from one address within 5 minutes, whatever the names, lock the address
   for 15 minutes (``address_failures``, ``window``, ``address_lock``). This stops one client spraying
   guesses across all the names.
3. **A name from everywhere** (distributed guessing: one name, many addresses, each under the limits
   above): after 20 failures of a name in a row, from any addresses, every attempt at that name waits
   1 second before its check, doubling with each further failure up to 10 seconds (``name_failures``,
   ``name_delay``, ``name_max_delay``). It is a slowdown, never a refusal: the right password from an
   address that has not failed still signs in, only later.

Why the third is a slowdown and not a lock: NIST SP 800-63B §5.2.2 caps the consecutive failed attempts
on one account (at most 100) and lists ways to keep that cap from locking the legitimate user out, among
them a wait after each failure that grows as the failures mount; the OWASP Authentication Cheat Sheet
("Account Lockout") warns that lockout lets an attacker lock out any account, and suggests exponential
lockout instead of a fixed one. A lock on the name alone, reachable by any stranger, is that denial of
service (5 guesses locked ``root``; 68 locked all 16 annotators), so the name gets no lock at all: this
departs from NIST's cap on purpose. What bounds guessing instead: each pair gets 5 guesses, then one per
lock (about 11 in the first hour); each address 20 per 5 minutes across names, then a 15-minute lock; the
delay slows every guess at a name under attack; and the password checks run 2 at a time. Many addresses
together can still make many guesses, so an admin gives each annotator a long random password (stored as
PBKDF2, ``eval_ui.auth``).

Every attempt counts as a failure *before* it is checked, so concurrent guesses cannot overshoot an
allowance; a successful sign-in clears its pair and takes back its own count of the address and the
name. The password check runs in a worker thread (``anyio.to_thread.run_sync``) under a limiter of its
own (2 at a time), so a flood can neither block the event loop nor take Gradio's worker threads. An
address has one check at a time (``checks_per_address``): a client's many connections wait their turn
behind each other instead of filling the queue in front of everyone else. And an address with no failure
on record goes ahead of those with failures (``Slots``), so a real sign-in waits at most for the checks
already running, not for the attacker's queue. The name's delay is awaited before all this, holding
nothing.

A refusal is an HTTP 400 whose ``detail`` says ``Too many failed sign-ins; try again in N minutes 登录失败
次数过多…`` (with ``Retry-After``), and each lock is logged when it starts. Gradio's login page shows its
own "Incorrect Credentials" for every 400, so the limit is also stated in the page's ``auth_message``
(``SignInLimits.notice``). An admin lists and lifts locks with ``SignIn.locks`` and ``SignIn.unlock``
(the handler ``unlock_form``).

Gradio passes ``auth`` only the name and password; the client address is the one every per-client limit
of the app reads, :data:`lawluo.ui.client_address.CLIENT_ADDRESS`, set by that module's middleware
(setting ``trusted_proxies``). Without the middleware the address is unknown: only the name's limits
apply, and a name failing 5 times is then refused for every client.

    sign_in = SignIn(users.check)
    demo.launch(auth=sign_in.check, app_kwargs={"middleware": [client_address_middleware(trusted)]})

References: NIST SP 800-63B §5.2.2 "Rate Limiting (Throttling)"; OWASP Authentication Cheat Sheet.
"""

from __future__ import annotations

import ipaddress
import logging
import math
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import anyio
from fastapi import HTTPException

from lawluo.i18n import ZH, Message, message
from lawluo.ui.client_address import (
    CLIENT_ADDRESS,
    client_address_middleware,  # re-exported for app.py until it switches
)

from .login_limiters import Backoff, FailureLimiter, Slots

__all__ = [
    "CLIENT_ADDRESS",
    "Backoff",
    "FailureLimiter",
    "SignIn",
    "SignInLimits",
    "Slots",
    "client_address_middleware",
    "refusal_message",
    "unlock_form",
]

logger = logging.getLogger(__name__)

#: Longest part of a name kept as a limiter key (a longer one is cut: only its own count is merged).
MAX_NAME_KEY = 200
#: Longest part of a name shown in a log line or to the admin.
SHOWN_NAME = 64
#: Longest delay ``name_max_delay`` may set: beyond it a slowdown is a lock in all but name.
MAX_NAME_DELAY = 60.0


@dataclass(frozen=True)
class SignInLimits:
    pair_failures: int = field(
        default=5,
        metadata={"help": "failed sign-ins in a row of one name from one client address that lock that pair"},
    )
    pair_lock: float = field(
        default=60.0,
        metadata={
            "help": "seconds the first lock of a name at an address lasts; each further failure doubles it"
        },
    )
    pair_max_lock: float = field(
        default=900.0, metadata={"help": "longest lock of a name at an address, in seconds"}
    )
    address_failures: int = field(
        default=20,
        metadata={"help": "failed sign-ins from one client address within `window`, any names, that lock it"},
    )
    address_lock: float = field(
        default=900.0,
        metadata={"help": "seconds an address stays locked after its last counted failure"},
    )
    name_failures: int = field(
        default=20,
        metadata={
            "help": "failed sign-ins in a row of one name, from any addresses, after which every attempt at "
            "it is slowed (never refused)"
        },
    )
    name_delay: float = field(
        default=1.0,
        metadata={
            "help": "seconds the first slowed attempt at a name waits; each further failure doubles it"
        },
    )
    name_max_delay: float = field(
        default=10.0,
        metadata={
            "help": f"longest wait of an attempt at a slowed name, in seconds (at most {MAX_NAME_DELAY:g})"
        },
    )
    window: float = field(
        default=300.0,
        metadata={
            "help": "seconds over which an address's failures are counted; a pair's or a name's failures "
            "in a row are forgotten once its lock or delay is this long past its last failure"
        },
    )
    max_keys: int = field(
        default=10_000,
        metadata={"help": "pairs, addresses and names remembered (each separately); the stalest go first"},
    )
    concurrent_checks: int = field(
        default=2, metadata={"help": "password checks run at once (each a 0.2 s PBKDF2 on one core)"}
    )
    checks_per_address: int = field(
        default=1,
        metadata={
            "help": "password checks of one client address queued or running at once; its further attempts "
            "wait for them, so one address cannot fill the queue of `concurrent_checks`"
        },
    )

    def __post_init__(self) -> None:
        counts = (
            "pair_failures",
            "address_failures",
            "name_failures",
            "max_keys",
            "concurrent_checks",
            "checks_per_address",
        )
        for name in counts:
            if getattr(self, name) < 1:
                raise ValueError(f"SignInLimits.{name} must be at least 1, not {getattr(self, name)}")
        for name in ("pair_lock", "pair_max_lock", "address_lock", "name_delay", "name_max_delay", "window"):
            if not getattr(self, name) > 0:
                raise ValueError(f"SignInLimits.{name} must be positive, not {getattr(self, name)}")
        if self.pair_max_lock < self.pair_lock or self.name_max_delay < self.name_delay:
            raise ValueError(
                "SignInLimits: pair_max_lock and name_max_delay cannot be below pair_lock, name_delay"
            )
        if self.name_max_delay > MAX_NAME_DELAY:
            raise ValueError(
                f"SignInLimits.name_max_delay is at most {MAX_NAME_DELAY:g} s (a slowdown, not a lock), "
                f"not {self.name_max_delay:g}"
            )

    def notice_message(self) -> Message:
        """The limits for the login page, as a :class:`~lawluo.i18n.Message` (``login.notice``); the page
        renders it in the reader's language (``say(limits.notice_message())`` in ``auth_message``)."""
        return message(
            "login.notice",
            n=self.pair_failures,
            first=max(1, math.ceil(self.pair_lock / 60)),
            most=max(1, math.ceil(self.pair_max_lock / 60)),
        )

    def notice(self, lang: str = ZH) -> str:
        """One line for the login page, in ``lang`` (``zh`` or ``en``).

        >>> SignInLimits().notice()
        '同一地址连续 5 次密码错误将锁定该账号 1 分钟，再错时间加倍（最长 15 分钟）。'
        >>> SignInLimits().notice("en")
        'After 5 wrong passwords a name is locked for 1 minute(s) from that address, longer after each further one (up to 15 minutes).'
        """
        return self.notice_message().text(lang)


def _minutes(seconds: float) -> str:
    m = max(1, math.ceil(seconds / 60))
    return f"{m} minute{'s' * (m != 1)}"


def refusal_message(seconds: float) -> str:
    """What a locked pair or address is told.

    >>> refusal_message(61)
    'Too many failed sign-ins; try again in 2 minutes. 登录失败次数过多，请 2 分钟后再试。'
    """
    m = max(1, math.ceil(seconds / 60))
    return (
        f"Too many failed sign-ins; try again in {_minutes(seconds)}. 登录失败次数过多，请 {m} 分钟后再试。"
    )


def _shown(name: str) -> str:
    return name if len(name) <= SHOWN_NAME else name[: SHOWN_NAME - 1] + "…"


class SignIn:
    """Gradio's ``auth`` with limits: ``check`` refuses a locked pair (name, address) or address without
    hashing, slows a name guessed from many addresses, and runs ``verify`` (e.g. ``Users.check``) in a
    worker thread, ``limits.concurrent_checks`` at a time. ``sleep`` waits out a name's delay (tests
    replace it)."""

    def __init__(
        self,
        verify: Callable[[str, str], bool],
        limits: SignInLimits | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[object]] = anyio.sleep,
    ) -> None:
        self.verify, self.sleep = verify, sleep
        self.limits = lim = limits or SignInLimits()
        self.pairs = Backoff(
            lim.pair_failures, lim.pair_lock, lim.pair_max_lock, lim.window, lim.max_keys, clock
        )
        self.addresses = FailureLimiter(
            lim.address_failures, lim.window, lim.address_lock, lim.max_keys, clock
        )
        self.names = Backoff(
            lim.name_failures, lim.name_delay, lim.name_max_delay, lim.window, lim.max_keys, clock
        )
        self._slots = Slots(lim.concurrent_checks)
        self._threads = anyio.CapacityLimiter(lim.concurrent_checks)  # as many as there are slots
        self._queues: dict[str, tuple[anyio.CapacityLimiter, int]] = {}  # address → its limiter, users

    async def check(self, username: str, password: str) -> bool:
        """True when ``verify`` accepts; False when not; raises ``HTTPException(400)`` with
        ``refusal_message`` when the name at this client address, or the address, is locked (``verify``
        not called)."""
        name = (username or "").strip()[:MAX_NAME_KEY]
        address = CLIENT_ADDRESS.get() or ""
        pair = (name, address)
        wait = max(self.pairs.locked_for(pair), self.addresses.locked_for(address) if address else 0.0)
        if wait > 0:
            raise HTTPException(
                status_code=400, detail=refusal_message(wait), headers={"Retry-After": str(math.ceil(wait))}
            )
        delay = self.names.penalty(name)
        clean = not address or address not in self.addresses
        # Counted before checking: guesses in flight count against the allowance.
        pair_n = self.pairs.fail(pair)
        address_locked = bool(address) and self.addresses.fail(address)
        name_n = self.names.fail(name)
        if delay > 0:
            await self.sleep(delay)
        ok = await self._verify(address, clean, username, password)
        if ok:
            self.pairs.reset(pair)
            self.names.forgive(name)
            if address:
                self.addresses.forgive(address)
            return True
        if pair_n >= self.limits.pair_failures:
            lock = self.pairs.step(pair_n)
            logger.warning("sign-in: name %r at %s locked for %.0f s", _shown(name), address or "?", lock)
        if address_locked:
            logger.warning(
                "sign-in: address %s locked: %s", address, refusal_message(self.limits.address_lock)
            )
        if name_n == self.limits.name_failures:
            logger.warning(
                "sign-in: name %r failed %d times in a row from any addresses: each attempt now waits "
                "%.0f–%.0f s",
                _shown(name),
                name_n,
                self.limits.name_delay,
                self.limits.name_max_delay,
            )
        return False

    async def _verify(self, address: str, clean: bool, username: str, password: str) -> bool:
        """``verify`` in a worker thread, in one of the ``concurrent_checks`` slots (the first lane when
        ``clean``) and one of the address's ``checks_per_address`` turns."""
        async with self._turn(address), self._slots.slot(0 if clean else 1):
            return await anyio.to_thread.run_sync(self.verify, username, password, limiter=self._threads)

    @asynccontextmanager
    async def _turn(self, address: str) -> AsyncIterator[None]:
        """One of ``address``'s ``checks_per_address`` turns (an unknown address needs none): a limiter per
        address while it has checks queued or running; only the event loop's thread touches ``_queues``."""
        if not address:
            yield
            return
        limiter, users = self._queues.get(address) or (
            anyio.CapacityLimiter(self.limits.checks_per_address),
            0,
        )
        self._queues[address] = (limiter, users + 1)
        try:
            async with limiter:
                yield
        finally:
            limiter, users = self._queues[address]
            if users > 1:
                self._queues[address] = (limiter, users - 1)
            else:
                del self._queues[address]

    def locks(self) -> list[dict]:
        """The current locks and slowdowns, longest first: ``kind`` (``pair``: a name at an address;
        ``address``; ``name``: slowed, never refused), ``key`` (names cut to 64 characters), ``failures``,
        ``seconds_left`` (of the lock; of a slowdown, until it lapses without further failures) and
        ``delay_s`` (what each attempt at a slowed name waits; 0 for a lock)."""
        forget = self.limits.window
        rows = [
            {
                "kind": "pair",
                "key": f"{_shown(n)} @ {a or '?'}",
                "failures": k,
                "seconds_left": p - ago,
                "delay_s": 0.0,
            }
            for (n, a), k, p, ago in self.pairs.penalized()
            if p > ago
        ]
        rows += [
            {"kind": "address", "key": a, "failures": k, "seconds_left": s, "delay_s": 0.0}
            for a, k, s in self.addresses.locked()
        ]
        rows += [
            {"kind": "name", "key": _shown(n), "failures": k, "seconds_left": d + forget - ago, "delay_s": d}
            for n, k, d, ago in self.names.penalized()
        ]
        for row in rows:
            row["seconds_left"] = math.ceil(row["seconds_left"])
        return sorted(rows, key=lambda row: -row["seconds_left"])

    def unlock(self, name: str | None = None, address: str | None = None) -> int:
        """Forget the failures that concern ``name`` and/or ``address`` (both None: all of them); how many
        entries were forgotten. A pair goes when it matches every one given; an address's count when it is
        ``address``; a name's slowdown when it is ``name``."""
        name = None if name is None else name.strip()[:MAX_NAME_KEY]
        cleared = self.pairs.forget(
            lambda pair: (name is None or pair[0] == name) and (address is None or pair[1] == address)
        )
        if name is None or address is not None:
            cleared += self.addresses.forget(lambda key: address is None or key == address)
        if address is None or name is not None:
            cleared += self.names.forget(lambda key: name is None or key == name)
        logger.warning(
            "sign-in: unlocked name=%r address=%r: %d entries", name and _shown(name), address, cleared
        )
        return cleared


def _who(text: str) -> tuple[str | None, str | None]:
    """``(name, address)`` from the admin's ``name``, ``address``, ``name address`` or ``*``.

    >>> _who("alice"), _who("203.0.113.7"), _who("alice smith 2001:db8::1"), _who("*")
    (('alice', None), (None, '203.0.113.7'), ('alice smith', '2001:db8::1'), (None, None))
    """
    text = text.strip()
    if text == "*":
        return None, None
    parts = text.rsplit(None, 1)
    for name, candidate in ((None, text), (parts[0] if len(parts) == 2 else None, parts[-1])):
        try:
            return name, str(ipaddress.ip_address(candidate))
        except ValueError:
            continue
    return text, None


def unlock_form(sign_in: SignIn) -> Callable[[str], str]:
    """The admin's handler: ``who`` is a name, a client address, ``name address`` (that name at that
    address) or ``*`` (everything); empty only lists. Returns plain text for a read-only ``gr.Textbox``
    (names are whatever a visitor typed: not for Markdown). The caller checks that the user is an admin.

    >>> sign_in = SignIn(lambda name, password: False)
    >>> unlock = unlock_form(sign_in)
    >>> unlock("")
    'No sign-in is locked. 没有被锁定的登录。'
    >>> unlock("alice")
    "Unlocked name='alice': 0 entries. 已解锁 0 项。\\nNo sign-in is locked. 没有被锁定的登录。"
    """

    def unlock(who: str) -> str:
        lines = []
        if (who or "").strip():
            name, address = _who(who)
            cleared = sign_in.unlock(name, address)
            what = (
                " ".join(f"{k}={v!r}" for k, v in (("name", name), ("address", address)) if v) or "everything"
            )
            lines.append(
                f"Unlocked {what}: {cleared} entr{'y' if cleared == 1 else 'ies'}. 已解锁 {cleared} 项。"
            )
        rows = sign_in.locks()
        if not rows:
            lines.append("No sign-in is locked. 没有被锁定的登录。")
        for row in rows:
            slowed = f", each attempt waits {row['delay_s']:.0f} s" if row["delay_s"] else ""
            lines.append(
                f"{row['kind']} {row['key']!r}: {row['failures']} failures, "
                f"{row['seconds_left']} s left{slowed}"
            )
        return "\n".join(lines)

    return unlock
