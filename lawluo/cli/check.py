"""``lawluo check``: the statutes a text cites, checked against the statute book, as JSON lines."""

from __future__ import annotations

import argparse
import sys

from ..config import Settings
from .common import MAX_TEXT_CHARS, UsageError, emit, inputs, read_jsonl_rows, warn_cut


def add_parser(subparsers) -> None:
    """Register ``check TEXT``, its options and :func:`run`."""
    check = subparsers.add_parser("check", help="check the statutes cited in a text")
    check.add_argument("text", nargs="?", help="the text, or - to read stdin")
    check.add_argument(
        "--input", help='JSONL file, one {"text": …, "id": …, "as_of": "YYYY-MM-DD" (optional)} per line'
    )
    check.add_argument(
        "--as-of",
        metavar="YYYY-MM-DD",
        help="judge each citation against the version in force on this date (the date the text was "
        "written, or of the facts); a line's own as_of wins. Default: today's statute book",
    )
    check.set_defaults(func=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    """One JSON line per text: its citations, each with a verdict, and the text's NHSR."""
    from ..law.checker import CitationChecker, as_of_day
    from ..law.database import StatuteDB

    try:
        default_day = as_of_day(args.as_of)
    except ValueError as exc:
        raise UsageError(f"--as-of: {exc}") from None
    if args.input and args.text is None:  # each line may carry its own "as_of"
        texts = [(tid, text, row.get("as_of")) for tid, text, row in read_jsonl_rows(args.input)]
    else:
        texts = [(tid, text, None) for tid, text in inputs(args, "text")]
    checker = CitationChecker(StatuteDB(settings.statutes_path))  # the assets of --config, not the default
    status = 0
    for tid, text, row_as_of in texts:
        if len(text) > MAX_TEXT_CHARS:
            warn_cut("check", f"text {tid}", len(text), MAX_TEXT_CHARS, "checked")
            text = text[:MAX_TEXT_CHARS]
        if not text.strip():
            print(f"lawluo check: text {tid} is empty", file=sys.stderr)
            status = 2
        try:
            day = as_of_day(row_as_of) if row_as_of not in (None, "") else default_day
        except (TypeError, ValueError) as exc:
            print(f"lawluo check: text {tid}: {exc}", file=sys.stderr)
            emit({"id": tid, "citations": [], "error": str(exc)})
            status = 2
            continue
        result = checker.check(text, as_of=day)
        emit(
            {
                "id": tid,
                "as_of": day,
                "citations": [c.as_dict() for c in result.citations],
                "nhsr": result.nhsr,
                "counts": result.counts(),
            }
        )
    return status
