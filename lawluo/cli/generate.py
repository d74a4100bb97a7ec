"""``lawluo generate``: answer questions with the LawLuo pipeline (or a baseline) into a JSONL file."""

from __future__ import annotations

import argparse
import sys

from ..config import Settings
from .batch import STREAM_HELP, batch_settings, call_rate, show_progress, warn_slots
from .common import UsageError, emit, plural


def add_parser(subparsers) -> None:
    """Register ``generate``, its options and :func:`run`."""
    generate = subparsers.add_parser(
        "generate", help="answer questions with the LawLuo pipeline (or a baseline) → JSONL"
    )
    generate.add_argument("--questions", required=True, help='JSONL: {"id", "question"} per line')
    generate.add_argument("--system", required=True, help='the name written in each row\'s "system" field')
    generate.add_argument(
        "--out", required=True, help="answers JSONL; appended to, questions already in it skipped"
    )
    generate.add_argument(
        "--baseline", action="store_true", help="the lawyer model alone: no role prompt, no retrieval"
    )
    generate.add_argument("--concurrency", type=int, default=4, help="questions answered at once (default 4)")
    generate.add_argument("--limit", type=int, default=None, help="only the first N questions")
    generate.add_argument(
        "--quiet", action="store_true", help="no progress bar (drawn only when stderr is a terminal)"
    )
    generate.add_argument("--stream", action="store_true", help=STREAM_HELP)
    generate.set_defaults(func=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    """Answer the questions into ``--out`` (resuming it) and print a summary as one JSON line."""
    from tqdm.auto import tqdm

    from ..firm import Firm
    from ..firm.batch import BatchGenerator, read_questions
    from ..jsonl import JSONLError

    if not args.system.strip():
        raise UsageError('--system must name the system (the answers file\'s "system" field)')
    if not 1 <= args.concurrency <= 64:
        raise UsageError("--concurrency must be between 1 and 64")
    try:
        questions = read_questions(args.questions)
    except JSONLError as exc:
        raise UsageError(str(exc)) from None
    if args.limit:
        questions = questions[: args.limit]
    firm = Firm.from_settings(batch_settings(settings, args))
    generator = BatchGenerator(
        firm, args.system.strip(), baseline=args.baseline, concurrency=args.concurrency
    )
    reason = generator.unavailable_reason()
    if reason:
        raise UsageError(f"generating answers needs a lawyer model: {reason}")
    for role in generator.roles():
        warn_slots("generate", role, firm.models[role], args.concurrency)
    try:
        with tqdm(
            total=len(questions), desc=args.system, unit="q", file=sys.stderr, disable=not show_progress(args)
        ) as bar:

            def done() -> None:
                bar.set_postfix_str(f"{generator.calls()} model calls", refresh=False)
                bar.update()

            report = generator.run(questions, args.out, on_done=done, on_start=lambda n: bar.reset(total=n))
    except JSONLError as exc:
        raise UsageError(f"{exc} (the output file; it was not changed)") from None
    if report.dropped:
        print(f"lawluo generate: warning: {report.dropped}; its question is answered again", file=sys.stderr)
    for qid, error in report.failed:
        print(f"lawluo generate: question {qid}: {error}", file=sys.stderr)
    emit(
        {
            "system": generator.system,
            "written": report.written,
            "already_answered": report.skipped,
            "failed": len(report.failed),
            "held_back": dict(report.held_back),  # of the failed: answers the check held back, per reason
            "model_calls": report.calls,
            "seconds": round(report.seconds, 1),
            "out": str(args.out),
        }
    )
    print(
        f"lawluo generate: {call_rate(report.calls, report.seconds)} for "
        f"{plural(report.written + len(report.failed), 'question')} at concurrency {args.concurrency}",
        file=sys.stderr,
    )
    if report.stopped:
        print(f"lawluo generate: stopped: {report.stopped}", file=sys.stderr)
    if report.write_error is not None:
        print(
            f"lawluo generate: cannot write {args.out}: {report.write_error.strerror or report.write_error}; "
            f"{plural(report.written, 'answer')} written ({report.skipped + report.written:,} of "
            f"{len(questions):,} questions now answered) — run the same command again to resume once "
            "the disk can be written",
            file=sys.stderr,
        )
        return 1
    if report.failed:
        print("lawluo generate: run the same command again to retry the failed questions", file=sys.stderr)
        return 1
    return 0
