"""Run several model calls at once: :func:`gather` for a few (ToLC expanding every node of a tree level
together), results in the order of the calls; :func:`as_finished` for a batch (``generate``, ``evaluate``),
results as they finish, on workers that an interrupted caller does not wait for.

The backends enforce their own concurrency limits (a semaphore per backend), so the thread pools here
can be as wide as the work.
"""

from __future__ import annotations

import contextvars
import queue
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")
MAX_THREADS = 32
_END = object()


def gather(
    calls: Sequence[Callable[[], T]], *, max_workers: int | None = None, return_exceptions: bool = False
) -> list[T | BaseException]:
    """Call every function in ``calls`` concurrently and return their results in order.

    With ``return_exceptions`` a failed call's exception takes its place in the list (as in
    ``asyncio.gather``) so one failure does not discard the others' work; otherwise the first
    failure (in call order) is raised after all calls have finished.

    >>> gather([lambda: 1, lambda: 2])
    [1, 2]
    """
    if not calls:
        return []
    workers = max(1, min(max_workers or len(calls), len(calls), MAX_THREADS))
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="lawluo-llm") as pool:
        # each call runs in a copy of the caller's context: an active time budget (.budget) applies to it
        futures = [pool.submit(contextvars.copy_context().run, call) for call in calls]
        outcomes: list[T | BaseException] = []
        for future in futures:
            error = future.exception()
            outcomes.append(error if error is not None else future.result())
    if not return_exceptions:
        for outcome in outcomes:
            if isinstance(outcome, BaseException):
                raise outcome
    return outcomes


def as_finished(
    work: Callable[[T], R], items: Iterable[T], workers: int, *, name: str = "lawluo-batch"
) -> Iterator[tuple[T, Future[R]]]:
    """``work(item)`` for every item, ``workers`` at a time: yields ``(item, future)`` as each finishes (the
    future done, holding the result or the exception).

    Each worker takes its next item as soon as its last one is done, without waiting for the caller to
    take the result: 64 answers of a served model ending together are parsed one after another under
    the GIL, and a next request waiting for the caller's turn left the server idle meanwhile. ``items``
    is read by one worker at a time (a generator may prepare what it yields); it and ``work`` run in the
    caller's context (its cancel token and time budget; ``work`` in a copy per item).

    When the caller stops reading (a ``break``, an error, Ctrl-C), no further item is taken, and the
    calls in flight are not waited for: the workers are daemon threads, so an interrupted command exits
    at once and its connections close with the process (the server stops generating those answers),
    even a call waiting for a whole answer, which no cancel token can interrupt. An exception raised by
    ``items`` itself is raised to the caller.
    """
    source, lock, stop = iter(items), threading.Lock(), threading.Event()
    finished: queue.SimpleQueue = queue.SimpleQueue()
    context = contextvars.copy_context()

    def take() -> object:
        with lock:  # `items` too runs in the caller's context (one thread at a time enters it)
            return _END if stop.is_set() else context.run(next, source, _END)

    def loop() -> None:
        try:
            while (item := take()) is not _END:
                future: Future = Future()
                try:
                    future.set_result(context.copy().run(work, item))
                except Exception as exc:  # noqa: BLE001 — the caller judges it, as a pool's future
                    future.set_exception(exc)
                finished.put((item, future))
        except Exception as exc:  # noqa: BLE001 — from `items`: the caller's to raise
            finished.put(exc)
        finally:
            finished.put(_END)

    for i in range(max(1, workers)):
        threading.Thread(target=loop, name=f"{name}-{i}", daemon=True).start()
    alive = max(1, workers)
    try:
        while alive:
            got = finished.get()
            if got is _END:
                alive -= 1
            elif isinstance(got, Exception):
                raise got
            else:
                yield got
    finally:
        stop.set()
        close = getattr(source, "close", None)
        if callable(close):
            with lock:  # not while a worker is inside the generator
                close()
