"""The consultation's trace: each step of the firm appends a :class:`~lawluo.firm.state.TraceEvent` (agent,
action, a summary of what went in and came out, duration), also when it fails."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime

from .state import Consultation, TraceEvent


@contextmanager
def traced(state: Consultation, agent: str, action: str) -> Iterator[TraceEvent]:
    """The event of one step, appended to ``state``'s trace when the step ends (failed: ``ok`` false, the
    error as its summary unless the step wrote one); the step fills in its summary."""
    event = TraceEvent(agent, action, "", 0.0, at=now())
    start = time.perf_counter()
    try:
        yield event
    except Exception as exc:
        event.ok = False
        event.summary = event.summary or f"{type(exc).__name__}: {exc}"
        raise
    finally:
        event.duration_ms = ms(start)
        state.trace.append(event)


def ms(start: float) -> float:
    """Milliseconds since ``start`` (a ``time.perf_counter()``), to two decimals."""
    return round((time.perf_counter() - start) * 1000, 2)


def now() -> str:
    """The time of an event: UTC, ISO 8601 to the millisecond."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")
