"""The counters behind the sign-in limits (:mod:`eval_ui.login`): failures per key within a window
(:class:`FailureLimiter`, the address limit), failures in a row with exponential backoff
(:class:`Backoff`, a name at an address and a name from everywhere), and the password checks' slots in
two lanes (:class:`Slots`). ``FailureLimiter`` and ``Backoff`` remember at most ``max_keys`` keys and may
be shared between threads; ``Slots`` is for the event loop's thread only.

References: NIST SP 800-63B §5.2.2 "Rate Limiting (Throttling)"; OWASP Authentication Cheat Sheet.
"""

from __future__ import annotations

import threading
from collections import OrderedDict, deque
from collections.abc import AsyncIterator, Callable, Hashable
from contextlib import asynccontextmanager

import anyio

__all__ = ["Backoff", "FailureLimiter", "Slots"]


class FailureLimiter:
    """Recent failures per key, at most ``max_keys`` keys: a key with ``limit`` failures within
    ``window`` seconds is locked until ``cooldown`` seconds after the last of them (the address limit).

    Each key keeps only its last ``limit`` failure times, so memory is at most ``max_keys × limit``
    floats; when a new key would exceed ``max_keys``, the key failed least recently is forgotten.

    >>> now = [0.0]
    >>> limiter = FailureLimiter(limit=2, window=60, cooldown=600, max_keys=10, clock=lambda: now[0])
    >>> limiter.fail("10.0.0.1"), limiter.locked_for("10.0.0.1")
    (False, 0.0)
    >>> now[0] = 30; limiter.fail("10.0.0.1"), limiter.locked_for("10.0.0.1")
    (True, 600.0)
    >>> now[0] = 630; limiter.locked_for("10.0.0.1")
    0.0
    """

    def __init__(
        self, limit: int, window: float, cooldown: float, max_keys: int, clock: Callable[[], float]
    ) -> None:
        self.limit, self.window, self.cooldown, self.max_keys = limit, window, cooldown, max_keys
        self.clock = clock
        self._failures: OrderedDict[Hashable, deque[float]] = OrderedDict()  # least recently failed first
        self._lock = threading.Lock()

    def _left(self, times: deque[float] | None) -> float:
        if times is None or len(times) < self.limit or times[-1] - times[0] > self.window:
            return 0.0
        return max(0.0, float(times[-1] + self.cooldown - self.clock()))

    def locked_for(self, key: Hashable) -> float:
        """Seconds until ``key`` may try again (0.0 when it may now)."""
        with self._lock:
            return self._left(self._failures.get(key))

    def fail(self, key: Hashable) -> bool:
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

    def forgive(self, key: Hashable) -> None:
        """Take back the last failure counted for ``key`` (it turned out to be a success)."""
        with self._lock:
            times = self._failures.get(key)
            if times:
                times.pop()
            if not times:
                self._failures.pop(key, None)

    def locked(self) -> list[tuple[Hashable, int, float]]:
        """``(key, failures, seconds left)`` of every locked key."""
        with self._lock:
            rows = [(key, len(times), self._left(times)) for key, times in self._failures.items()]
        return [row for row in rows if row[2] > 0]

    def forget(self, which: Callable[[Hashable], bool]) -> int:
        """Forget every key for which ``which`` is true; how many."""
        with self._lock:
            keys = [key for key in self._failures if which(key)]
            for key in keys:
                del self._failures[key]
        return len(keys)

    def __len__(self) -> int:
        return len(self._failures)

    def __contains__(self, key: Hashable) -> bool:
        """Whether any failure of ``key`` is remembered."""
        return key in self._failures


class Backoff:
    """Failures in a row per key, at most ``max_keys`` keys: from the ``threshold``-th failure on, the key's
    penalty is ``base · 2^(n − threshold)`` seconds after ``n`` failures, at most ``cap`` (exponential
    backoff; NIST SP 800-63B §5.2.2, "increasing wait times"). A key is locked for its penalty after its
    last failure; its failures are forgotten once that lock is ``forget`` seconds over.

    >>> now = [0.0]
    >>> backoff = Backoff(threshold=2, base=60, cap=200, forget=300, max_keys=10, clock=lambda: now[0])
    >>> [backoff.step(n) for n in range(1, 6)]
    [0.0, 60.0, 120.0, 200.0, 200.0]
    >>> backoff.fail("k"), backoff.locked_for("k"), backoff.fail("k"), backoff.locked_for("k")
    (1, 0.0, 2, 60.0)
    >>> now[0] = 60; backoff.locked_for("k"), backoff.fail("k"), backoff.locked_for("k"), backoff.penalty("k")
    (0.0, 3, 120.0, 120.0)
    >>> now[0] = 60 + 120 + 301; backoff.penalty("k"), backoff.fail("k")  # forgotten: starts again
    (0.0, 1)
    """

    def __init__(
        self,
        threshold: int,
        base: float,
        cap: float,
        forget: float,
        max_keys: int,
        clock: Callable[[], float],
    ) -> None:
        self.threshold, self.base, self.cap, self.forget_after = threshold, base, cap, forget
        self.max_keys, self.clock = max_keys, clock
        self._streaks: OrderedDict[Hashable, tuple[int, float]] = OrderedDict()  # key → (n, last failure)
        self._lock = threading.Lock()

    def step(self, n: int) -> float:
        """The penalty after ``n`` failures in a row."""
        if n < self.threshold:
            return 0.0
        return float(min(self.cap, self.base * 2.0 ** min(n - self.threshold, 64)))

    def _streak(self, key: Hashable) -> tuple[int, float]:
        n, last = self._streaks.get(key, (0, 0.0))
        if n and self.clock() - last > self.step(n) + self.forget_after:
            return 0, 0.0
        return n, last

    def fail(self, key: Hashable) -> int:
        """Count a failure of ``key`` now; its failures in a row."""
        with self._lock:
            n, _ = self._streak(key)
            if self._streaks.pop(key, None) is None:
                while len(self._streaks) >= self.max_keys:
                    self._streaks.popitem(last=False)
            self._streaks[key] = (n + 1, self.clock())
            return n + 1

    def penalty(self, key: Hashable) -> float:
        """``step`` of the key's failures in a row (0.0 when it has too few or they are forgotten)."""
        with self._lock:
            return self.step(self._streak(key)[0])

    def locked_for(self, key: Hashable) -> float:
        """Seconds until ``key`` may try again (0.0 when it may now)."""
        with self._lock:
            n, last = self._streak(key)
            return max(0.0, float(last + self.step(n) - self.clock())) if n else 0.0

    def forgive(self, key: Hashable) -> None:
        """Take back one failure counted for ``key`` (it turned out to be a success)."""
        with self._lock:
            n, last = self._streak(key)
            if n > 1:
                self._streaks[key] = (n - 1, last)
            else:
                self._streaks.pop(key, None)

    def reset(self, key: Hashable) -> None:
        """Forget every failure of ``key``."""
        with self._lock:
            self._streaks.pop(key, None)

    def penalized(self) -> list[tuple[Hashable, int, float, float]]:
        """``(key, failures, penalty, seconds since its last failure)`` of every key with a penalty now."""
        now, rows = self.clock(), []
        with self._lock:
            for key in list(self._streaks):
                n, last = self._streak(key)
                if self.step(n) > 0:
                    rows.append((key, n, self.step(n), now - last))
        return rows

    def forget(self, which: Callable[[Hashable], bool]) -> int:
        """Forget every key for which ``which`` is true; how many."""
        with self._lock:
            keys = [key for key in self._streaks if which(key)]
            for key in keys:
                del self._streaks[key]
        return len(keys)

    def __len__(self) -> int:
        return len(self._streaks)


class Slots:
    """``size`` slots for password checks, handed out first come first served within two lanes: a waiter of
    lane 0 (a client address with no failure on record) goes before every waiter of lane 1, so a real
    sign-in waits for a running check at most, not for the queue an attacker's addresses keep full. Only
    the event loop's thread may use it."""

    def __init__(self, size: int) -> None:
        self.free = size
        self._waiting: tuple[deque[anyio.Event], deque[anyio.Event]] = (deque(), deque())

    @asynccontextmanager
    async def slot(self, lane: int) -> AsyncIterator[None]:
        if self.free > 0 and not any(self._waiting):
            self.free -= 1
        else:
            event = anyio.Event()
            self._waiting[lane].append(event)
            try:
                await event.wait()
            except BaseException:  # cancelled: give back the slot if it was handed over meanwhile
                if event.is_set():
                    self._release()
                else:
                    self._waiting[lane].remove(event)
                raise
        try:
            yield
        finally:
            self._release()

    def _release(self) -> None:
        for waiting in self._waiting:
            if waiting:
                waiting.popleft().set()  # the slot passes straight to the next waiter
                return
        self.free += 1

    def __len__(self) -> int:
        """Waiters."""
        return sum(map(len, self._waiting))
