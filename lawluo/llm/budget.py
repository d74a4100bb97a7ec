"""A time budget for one step of a consultation, honoured by every model call made inside it.

A hung or slow model must not hold a visitor (or a backend's slots) for longer than the step allows:

    deadline = Deadline.after(90, "the answer")
    with deadline.active():            # every backend call in this block (and in threads started
        text = lawyer_model.chat(...)  # by :func:`lawluo.llm.gather`) waits and retries only
                                       # within what is left, then raises BudgetExceeded

Inside an active deadline a backend waits for a free slot only until the deadline
(:meth:`ChatBackend.chat`), sends each request with a timeout of at most what is left
(:func:`request_timeout`), and does not retry once the budget is spent. Outside one, calls behave
exactly as configured (CLI batch runs have no budget).

A deadline may carry the :class:`~.cancel.CancelToken` of whoever waits for the step (a visitor's
session): while it is active, every call also stops as soon as that token is cancelled (:mod:`.cancel`).

The deadline is a context variable, so it travels with the thread that set it and with
:func:`~lawluo.llm.parallel.gather`'s workers. A generator that yields between model calls must
activate it around each resumption, not across a ``yield`` (see :mod:`lawluo.firm.firm`).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Protocol

from .cancel import CancelToken, watching
from .errors import LLMError, LLMTimeout

_CURRENT: ContextVar[Deadline | None] = ContextVar("lawluo_deadline", default=None)


class BudgetExceeded(LLMTimeout):
    """The step's time budget ran out before a model answered; not worth retrying within the step."""

    retryable = False


class CallsSpent(LLMError):
    """The visitor's allowance of model calls is spent (per minute or per hour); not retried."""


class CallAllowance(Protocol):
    """How many model calls whoever a step works for may still make (a visitor's budget, per address)."""

    def spend(self) -> str | None:
        """Count one call: ``None`` when it may be made, else why not (a message for the visitor)."""


@dataclass(frozen=True)
class Deadline:
    """A point in time (``time.monotonic()``) by which ``what`` must be done, and its budget in seconds."""

    at: float
    seconds: float
    what: str = "this step"
    cancel: CancelToken | None = field(default=None, compare=False, repr=False)
    retries: bool = True  # False: no failed request is retried inside it (a ping wants the first answer)
    allowance: CallAllowance | None = field(default=None, compare=False, repr=False)

    @classmethod
    def after(
        cls,
        seconds: float,
        what: str = "this step",
        cancel: CancelToken | None = None,
        *,
        retries: bool = True,
        allowance: CallAllowance | None = None,
    ) -> Deadline:
        """A deadline ``seconds`` from now; calls inside it also stop once ``cancel`` is cancelled, retry
        nothing if ``retries`` is False, and each is counted against ``allowance`` (:func:`spend_call`)."""
        return cls(time.monotonic() + seconds, seconds, what, cancel, retries, allowance)

    def remaining(self) -> float:
        return self.at - time.monotonic()

    @property
    def expired(self) -> bool:
        return self.remaining() <= 0

    def exceeded(self) -> BudgetExceeded:
        return BudgetExceeded(
            f"{self.what} took longer than its time budget of {self.seconds:g} s; "
            "the model server is slow or busy. Try again in a moment."
        )

    def check(self) -> None:
        if self.expired:
            raise self.exceeded()

    @contextmanager
    def active(self) -> Iterator[Deadline]:
        """Make this the deadline of every model call in the block (an earlier, tighter one still wins),
        and its cancel token, if it has one, the watched one."""
        outer = _CURRENT.get()
        token = _CURRENT.set(self if outer is None or self.at < outer.at else outer)
        try:
            with watching(self.cancel):
                yield self
        finally:
            _CURRENT.reset(token)


def current() -> Deadline | None:
    """The active deadline, if any."""
    return _CURRENT.get()


@contextmanager
def within(deadline: Deadline | None) -> Iterator[None]:
    """``deadline.active()``, or nothing when ``deadline`` is None."""
    if deadline is None:
        yield
    else:
        with deadline.active():
            yield


def request_timeout(configured: float) -> float:
    """The timeout for one request: the configured one, or less when the active budget has less left.

    Raises :class:`BudgetExceeded` when the budget is already spent.
    """
    deadline = _CURRENT.get()
    if deadline is None:
        return configured
    left = deadline.remaining()
    if left <= 0:
        raise deadline.exceeded()
    return min(configured, left)


def explain(error: LLMTimeout | Exception) -> Exception:
    """A timeout that happened because the active budget ran out, as :class:`BudgetExceeded` (which says
    so, and is not retried); any other error as it is."""
    deadline = _CURRENT.get()
    if isinstance(error, LLMTimeout) and deadline is not None and deadline.remaining() <= 0.05:
        return deadline.exceeded()
    return error


def can_wait(seconds: float) -> bool:
    """Whether waiting ``seconds`` (a retry's backoff) still leaves time within the active budget, and the
    budget allows retries at all."""
    deadline = _CURRENT.get()
    return deadline is None or (deadline.retries and deadline.remaining() > seconds)


def spend_call() -> None:
    """Count a model call against the active deadline's allowance; raise :class:`CallsSpent` when it is spent.

    Called by every backend call before it takes a slot (:meth:`~lawluo.llm.base.ChatBackend.chat`,
    ``stream``): a visitor's tree, answer and report draw on one budget, retries not counted apart.
    """
    deadline = _CURRENT.get()
    if deadline is not None and deadline.allowance is not None:
        refusal = deadline.allowance.spend()
        if refusal is not None:
            raise CallsSpent(refusal)


def slot_wait() -> float | None:
    """How long a call may wait for a backend slot: the budget left, or ``None`` (forever) without one."""
    deadline = _CURRENT.get()
    return None if deadline is None else max(0.0, deadline.remaining())
