"""Cancelling model calls nobody waits for any more (a visitor left, or started something else).

A :class:`CancelToken` belongs to whoever waits for the answers (one per visitor session in the app).
Every model call made while it is *watched* checks it: before waiting for a backend slot, while
waiting, and between the pieces of a stream. A cancelled call raises :class:`Cancelled` and closes its
stream, which closes the HTTP connection, and OpenAI-compatible servers (llama.cpp, vLLM) stop
generating for a closed connection; the ``transformers`` backend stops after the current token.

    token = CancelToken()
    with watching(token):                 # every model call in this block (and in threads started
        for piece in lawyer.stream(...):  # by :func:`lawluo.llm.gather`) stops once token.cancel()
            ...                           # is called, from any thread

Like the time budget (:mod:`.budget`) the token is a context variable: it travels with the thread that
set it and with :func:`~lawluo.llm.parallel.gather`'s workers. A generator that yields between model
calls must watch it around each resumption, not across a ``yield``.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from .errors import LLMError

_CURRENT: ContextVar[CancelToken | None] = ContextVar("lawluo_cancel", default=None)
DEFAULT_REASON = "the request was cancelled: nobody is waiting for the answer any more"


class Cancelled(LLMError):
    """The call was cancelled by its :class:`CancelToken`; never retried."""

    retryable = False


class CancelToken:
    """A one-way switch, thread-safe: once :meth:`cancel` is called every watched call stops."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self.reason = ""

    def cancel(self, reason: str = DEFAULT_REASON) -> None:
        if not self._event.is_set():
            self.reason = reason
            self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def check(self) -> None:
        """Raise :class:`Cancelled` if the token was cancelled."""
        if self._event.is_set():
            raise Cancelled(self.reason or DEFAULT_REASON)

    def wait(self, seconds: float) -> bool:
        """Sleep up to ``seconds``, waking early on cancellation; whether it was cancelled."""
        return self._event.wait(max(0.0, seconds))


@contextmanager
def watching(token: CancelToken | None) -> Iterator[CancelToken | None]:
    """Make ``token`` the cancel token of every model call in the block (``None``: nothing to watch)."""
    if token is None:
        yield None
        return
    reset = _CURRENT.set(token)
    try:
        yield token
    finally:
        _CURRENT.reset(reset)


def current() -> CancelToken | None:
    """The watched token, if any."""
    return _CURRENT.get()


def check() -> None:
    """Raise :class:`Cancelled` if the watched token was cancelled."""
    token = _CURRENT.get()
    if token is not None:
        token.check()


def pause(seconds: float) -> None:
    """``time.sleep(seconds)`` that raises :class:`Cancelled` as soon as the watched token is cancelled."""
    token = _CURRENT.get()
    if token is None:
        import time

        time.sleep(seconds)
    elif token.wait(seconds):
        token.check()
