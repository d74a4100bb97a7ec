"""``lawluo consult``: run a scripted consultation through the firm; its transcript as JSON."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..config import Settings
from .common import UsageError, emit


def add_parser(subparsers) -> None:
    """Register ``consult --script``, its options and :func:`run`."""
    consult = subparsers.add_parser(
        "consult", help="run a scripted consultation through the firm; prints JSON"
    )
    consult.add_argument(
        "--script", required=True, help="JSON: client turns and Yes/No marks (see lawluo/firm/script.py)"
    )
    consult.add_argument("--save", help="write the consultation state here as JSON (resume it with --resume)")
    consult.add_argument("--resume", help="continue a consultation saved with --save")
    consult.set_defaults(func=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    """Run the script through the firm and print the transcript as one JSON line."""
    from ..domains import load_domains
    from ..firm import Consultation, Firm
    from ..firm.script import load_script, run_script, transcript

    try:
        script = load_script(args.script)
        state = None
        if args.resume:
            domains = load_domains(settings.domains_file)
            state = Consultation.from_json(Path(args.resume).read_text(encoding="utf-8"), domains)
    except (ValueError, OSError) as exc:
        raise UsageError(str(exc)) from None
    firm = Firm.from_settings(settings)
    try:
        state = run_script(firm, script, state)
    except ValueError as exc:  # a mark naming a node the tree does not have, a closed consultation
        raise UsageError(str(exc)) from None
    save_error = None
    if args.save:
        from ..files import write_atomically

        try:
            write_atomically(args.save, state.to_json())
        except OSError as exc:  # the consultation is not lost: its transcript still goes to stdout
            save_error = exc
    emit(transcript(state))
    if save_error is not None:
        print(
            f"lawluo consult: cannot save the consultation to {args.save}: {save_error.strerror or save_error} "
            "(the transcript is on stdout; an earlier file there is unchanged)",
            file=sys.stderr,
        )
        return 1
    return 0
