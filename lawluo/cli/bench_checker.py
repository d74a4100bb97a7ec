"""``lawluo bench checker``: the citation checker's false alarms and recall on the frozen controls."""

from __future__ import annotations

import argparse
import sys

from ..config import Settings
from .common import UsageError, command_line, write


def add_parser(subparsers) -> None:
    """Register ``bench checker``, its options and :func:`run`."""
    checker = subparsers.add_parser(
        "checker",
        help="the citation checker's false alarms on real citations and recall on corrupted ones (frozen controls)",
        description="Runs the citation checker on the frozen controls of benchmarks/data/checker_controls "
        "(lawluo/law/checker_bench.py, lawluo/law/controls/) and prints false-alarm rate, recall and per-verdict "
        "precision and recall with 95 % bootstrap intervals.",
    )
    from ..law.checker_bench import add_arguments as checker_bench_arguments

    checker_bench_arguments(checker)
    checker.set_defaults(func=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    """``bench checker`` (lawluo/law/checker_bench.py): false alarms and recall on the frozen controls."""
    from ..files import write_atomically
    from ..law.checker_bench import ControlsError, command

    try:
        status, text = command(args, settings.statutes_path, command_line(args))
    except ControlsError as exc:
        raise UsageError(str(exc)) from None
    write(text)
    if args.out:
        write_atomically(args.out, text)
        print(f"lawluo bench: wrote {args.out}", file=sys.stderr)
    return status
