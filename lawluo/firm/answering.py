"""The lawyer's answer, as the firm writes it (LawLuo paper §3.2): streamed, or the best of n drafts by the
boss's score; held back when it fails :mod:`~lawluo.agents.answer_check` (the extract from the databases in
its place); then its citations checked and the boss's score of it. Each writes its trace event."""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import asdict
from datetime import date
from typing import Protocol

from ..agents.answer_check import Held
from ..agents.boss import Boss
from ..agents.lawyer import REPLY_HELD_BACK, Brief, Lawyer, grounded_reply
from ..i18n import message
from ..law.checker import CitationChecker
from ..llm import Cancelled, Deadline, LLMError, StreamInterrupted
from ..llm.answer import reported_cut
from ..llm.budget import CallsSpent, within
from .saved import MAX_ANSWER_CHARS, Status
from .state import Consultation, TraceEvent, Turn
from .tracing import ms, now, traced

log = logging.getLogger("lawluo.firm.firm")  # the firm's log, as before the answer had a module of its own


class Office(Protocol):
    """Who writes and judges an answer (a :class:`~lawluo.firm.Firm` has them): the lawyer, the boss, the
    citation checker, and how many drafts the boss chooses from."""

    lawyer: Lawyer
    boss: Boss
    checker: CitationChecker
    best_of: int


BEGAN_CHARS = 40  # of a held-back answer, the trace quotes this many characters (for the operator)
#: A turn's notes are kept as their Chinese text (a consultation is saved as JSON; the command line shows
#: them); the web page shows these in the visitor's language (``lawluo/ui/consult_render.note_html``).
STOPPED_NOTE = str(message("consult.note.stopped"))
#: A model's answer that broke off after some text (the error itself is in the trace and the log).
BROKE_OFF_NOTE = str(message("consult.note.broke_off"))


def stream(
    firm: Office, state: Consultation, brief: Brief, turn: Turn, deadline: Deadline | None = None
) -> Iterator[str]:
    start = time.perf_counter()
    pieces, cut, error, spent = None, None, "", ""
    try:
        with within(deadline):
            pieces = firm.lawyer.stream(brief)
        while True:
            with within(deadline):  # per piece: the budget must not span a yield
                if deadline is not None:
                    deadline.check()
                piece = next(pieces, None)
            if piece is None:
                break
            cut = reported_cut(piece) or cut
            turn.text += piece
            yield piece
        cut = reported_cut(pieces) or cut
    except StreamInterrupted as exc:
        error, turn.note = f"{type(exc).__name__}: {exc}", BROKE_OFF_NOTE
    except Cancelled as exc:  # the visitor left or started over: what was written is kept, marked
        turn.note = str(message("consult.note.cancelled", reason=str(exc)))
    except GeneratorExit:  # the caller closed the answer mid-stream (a page gone, a new consultation)
        turn.note = turn.note or STOPPED_NOTE
        raise
    except LLMError as exc:
        cut = reported_cut(exc) or cut
        error, turn.note = f"{type(exc).__name__}: {exc}", BROKE_OFF_NOTE
        spent = str(exc) if isinstance(exc, CallsSpent) else ""  # its message is written for the visitor
    finally:
        if pieces is not None:
            pieces.close()  # a stream stopped early releases its connection and its slot now
    summary = f"{len(turn.text)} characters streamed" + (f"; {error or turn.note}" if turn.note else "")
    if error:  # the visitor reads plain words (the note); the error goes to the trace and the log
        log.warning("lawyer: the model's answer failed after %d characters: %s", len(turn.text), error)
    # Any text, whole or partial, is checked; a call that failed before writing a word gives the extract.
    if turn.text.strip() or not turn.note:
        held = firm.lawyer.held_back(brief, turn.text, cut)
    else:
        held = Held("no_answer", error, told=spent) if error else None
    if held is not None:
        summary = f"{summary}; {hold_back(turn, brief, held)}"
    state.trace.append(TraceEvent("lawyer", "answer", summary, ms(start), ok=not turn.note, at=now()))


def hold_back(turn: Turn, brief: Brief, held: Held) -> str:
    """Hold ``turn``'s answer back for ``held``'s reason: the extract in its place, the reason and the
    message recorded; returns the trace's words for it (with the answer's first characters)."""
    began = " ".join(turn.text.split())[:BEGAN_CHARS]
    turn.text = grounded_reply(brief, REPLY_HELD_BACK)
    turn.held_back, turn.note, turn.score = held.reason, held.message(), None
    quoted = f"; it began {began!r}" if began else ""
    return f"{held.summary()}{quoted}; shown instead: extractive answer of {len(turn.text)} characters"


def best_of(
    firm: Office, state: Consultation, brief: Brief, turn: Turn, deadline: Deadline | None = None
) -> Iterator[str]:
    start = time.perf_counter()
    try:
        with within(deadline):
            drafts = firm.lawyer.answers(brief, firm.best_of)
    except LLMError as exc:
        log.warning("lawyer: the model gave no draft: %s", exc)
        hold = hold_back(turn, brief, Held("no_answer", str(exc)))
        summary = f"no draft: {type(exc).__name__}: {exc}; {hold}"
        state.trace.append(TraceEvent("lawyer", "answer", summary, ms(start), ok=False, at=now()))
        return
    # every draft passes the same check as a streamed answer; the boss sees only those that pass
    checks = [firm.lawyer.held_back(brief, d, reported_cut(d)) for d in drafts]
    answers = [d for d, held in zip(drafts, checks, strict=True) if held is None]
    reasons = Counter(held.reason for held in checks if held is not None)
    count = ", ".join(f"{reason} {n}" for reason, n in reasons.most_common())
    if not answers:  # the most frequent reason (the first draft's among equals) is the one given
        top = next(h for h in checks if h is not None and h.reason == reasons.most_common(1)[0][0])
        summary = f"{len(drafts)} drafts, all held back ({count}); " + hold_back(turn, brief, top)
        state.trace.append(TraceEvent("lawyer", "answer", summary, ms(start), ok=False, at=now()))
        yield turn.text
        return
    summary = f"{len(answers)} drafts" + (
        f" ({len(drafts) - len(answers)} held back: {count})" if count else ""
    )
    state.trace.append(TraceEvent("lawyer", "answer", summary, ms(start), at=now()))
    with traced(state, "boss", "best of n") as event, within(deadline):
        try:
            best, scores = firm.boss.best_of(brief.question, answers)
        except LLMError as exc:
            best, scores = 0, []
            event.ok, event.summary = False, f"not scored, kept the first draft: {exc}"
        else:
            event.summary = (
                "P(better) " + ", ".join(f"{s.p_better:.2f}" for s in scores) + f" → draft {best + 1}"
            )
    turn.text = answers[best]
    if scores:
        turn.score = asdict(scores[best])
    yield turn.text


def finish_answer(
    firm: Office, state: Consultation, question: str, turn: Turn, deadline: Deadline | None = None
) -> None:
    """Check the answer's citations and have the boss score it; store the turn whatever happened."""
    turn.text = turn.text[:MAX_ANSWER_CHARS]  # a runaway model: kept within what a saved file may hold
    if turn.text:
        with traced(state, "checker", "check citations") as event:
            as_of = state.as_of or date.today().isoformat()  # the client's date of the facts, or today
            result = firm.checker.check(turn.text, as_of=as_of)
            turn.citations = [c.as_dict() for c in result.citations]
            turn.nhsr = result.nhsr
            event.summary = f"{len(turn.citations)} citations as of {as_of}, NHSR {turn.nhsr}"
        # the boss scores a lawyer's answer, not the extract given without a lawyer model or in place
        # of an answer held back
        scored = firm.lawyer.available and not turn.note and not turn.held_back
        if turn.score is None and firm.boss.available and scored:
            with traced(state, "boss", "score answer") as event, within(deadline):
                try:
                    score = firm.boss.score(question, turn.text)
                    turn.score = asdict(score)
                    event.summary = f"P(better) = {score.p_better:.2f}"
                except LLMError as exc:
                    event.ok, event.summary = False, f"not scored: {exc}"
    state.turns.append(turn)
    if state.status != Status.CLOSED:  # a consultation closed meanwhile stays closed
        state.status = Status.ANSWERED
