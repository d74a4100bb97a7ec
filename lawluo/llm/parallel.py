"""Run several model calls at once, e.g. ToLC expanding every node of a tree level together.

The backends enforce their own concurrency limits (a semaphore per backend), so the thread pool here
can be as wide as the work; results come back in the order of the calls.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")
MAX_THREADS = 32


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
