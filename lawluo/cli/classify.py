"""``lawluo classify``: the receptionist's domain routing of each question, as JSON lines — as the app routes, with the
labelled lay questions' domain vote when the e5 stage is installed (:mod:`lawluo.agents.domain_vote`)."""

from __future__ import annotations

import argparse
import sys

from ..config import Settings
from .common import emit, inputs, warn_cut


def add_parser(subparsers) -> None:
    """Register ``classify QUESTION``, its options and :func:`run`."""
    classify = subparsers.add_parser(
        "classify", help="route questions to one of the consultation domains (the settings' domains_file)"
    )
    classify.add_argument("question", nargs="?", help="the question, or - to read stdin")
    classify.add_argument("--input", help='JSONL file, one {"text": …, "id": …} per line')
    classify.set_defaults(func=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    """One JSON line per question: the domain the receptionist routes it to."""
    from ..agents.receptionist import MAX_CHARS, Receptionist

    questions = list(inputs(args, "question"))
    receptionist = Receptionist.load(settings, dense=_dense_stage(settings))
    status = 0
    for qid, text in questions:
        if len(text) > MAX_CHARS:
            warn_cut("classify", f"question {qid}", len(text), MAX_CHARS, "used")
        try:
            routing = receptionist.classify(text)
        except ValueError as exc:
            print(f"lawluo classify: question {qid}: {exc}", file=sys.stderr)
            emit({"id": qid, "question": text, "error": str(exc)})
            status = 2
            continue
        emit({"id": qid, "question": text, **routing.as_dict()})
    return status


def _dense_stage(settings: Settings):
    """The statute search's e5 stage, for the lay questions' domain vote the app's routing mixes in; ``None`` (said
    on stderr) when the vote is off or the stage cannot be loaded: the receptionist then routes alone."""
    if not settings.lay_domain_vote or not settings.statute_encoder:
        return None
    from ..law.database import StatuteDB
    from ..retrieval.dense import LOAD_FAULTS, load_statute_vectors

    try:
        return load_statute_vectors(settings, StatuteDB(settings.statutes_path))
    except LOAD_FAULTS as exc:
        print(f"lawluo classify: routing without the lay questions' domain vote ({exc})", file=sys.stderr)
        return None
