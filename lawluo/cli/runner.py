"""Running one command: its errors reported on stderr with an exit status, Ctrl-C cancelling model calls."""

from __future__ import annotations

import argparse
import os
import signal
import sqlite3
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from ..config import Settings
from .common import UsageError, describe

#: Why Ctrl-C stopped the model calls in flight, and what of the command's work is kept.
INTERRUPTED = "interrupted (Ctrl-C)"
INTERRUPTED_KEPT = {
    "generate": "the answers written so far are kept: run the same command again to answer the rest",
    "evaluate": "no result file was written or changed",
    "consult": "the consultation was not saved",
}


@contextmanager
def _ctrl_c_cancels() -> Iterator[None]:
    """Every model call of the block watches one cancel token (:mod:`lawluo.llm.cancel`), which Ctrl-C
    cancels before the ``KeyboardInterrupt`` unwinds the block: the threads of a batch (``generate``,
    ``evaluate``) or of a tree's level stop at once, their connections closed (the model server stops
    generating), instead of being waited for while they generate answers nobody will keep."""
    from ..llm.cancel import CancelToken, watching

    token = CancelToken()
    if threading.current_thread() is not threading.main_thread():  # signals reach the main thread only
        with watching(token):
            yield
        return

    def interrupted(signum, frame) -> None:
        token.cancel(INTERRUPTED)
        signal.default_int_handler(signum, frame)  # raises KeyboardInterrupt, as without this handler

    previous = signal.signal(signal.SIGINT, interrupted)
    try:
        with watching(token):
            yield
    finally:
        signal.signal(signal.SIGINT, previous if previous is not None else signal.SIG_DFL)


def run_command(args: argparse.Namespace, settings: Settings) -> int:
    """The command's exit status, its errors reported on stderr (a :class:`StdoutError` is raised)."""
    try:
        with _ctrl_c_cancels():
            return args.func(args, settings)
    except KeyboardInterrupt:
        kept = INTERRUPTED_KEPT.get(args.command)
        print(
            f"lawluo {args.command}: 已中断 {INTERRUPTED}; the model calls in flight were cancelled"
            + (f"; {kept}" if kept else ""),
            file=sys.stderr,
        )
        return 130
    except UsageError as exc:
        print(f"lawluo {args.command}: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # missing assets, a full disk, a read-only folder: say what, not a traceback
        print(f"lawluo {args.command}: {describe(exc)}", file=sys.stderr)
        return 1
    except sqlite3.Error as exc:  # the judge cache on a full or read-only disk, or not a file
        where = f" (the judge cache {args.cache}; --no-cache runs without it)" if "cache" in args else ""
        print(f"lawluo {args.command}: SQLite: {exc}{where}", file=sys.stderr)
        return 1
    except Exception as exc:  # an unreadable database
        from ..law.database import StatuteDBError

        if isinstance(exc, StatuteDBError):
            print(f"lawluo {args.command}: {exc}", file=sys.stderr)
            return 1
        raise


def detach_stdout() -> None:
    """Point stdout at /dev/null, so that Python's flush at exit does not fail (and print) again.

    The pattern of the Python documentation's note on SIGPIPE (``signal`` module, "Note on SIGPIPE").
    """
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # stdout is not a file descriptor (captured, in tests)
        pass
