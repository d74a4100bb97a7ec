"""The consultation tab's model steps: Ask (the receptionist routes, the clarification tree grows level by
level, or the answer streams), and the lawyer's answer and its regeneration, each run as the session's one
model step within its time budget (:class:`~lawluo.ui.visitors.Visitors`)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Generator, Iterator

from ...firm import Consultation, Firm
from ...firm.firm import ConsultationTooLong, StepNotAllowed, facts_day
from ...llm import Deadline
from ...tolc.builder import MAX_HEIGHT, MAX_K
from ...tolc.tree import tree_calls
from .. import consult_render as cr
from ..i18n import Html, say
from ..visitors import DIRECT, Step, Visit, Visitors, fit_tree, owner_of
from .page import EMPTY, FACTS_DATE, MARK, MAX_QUESTION_CHARS, PAGE_LEFT, STREAM_UPDATE_S
from .view import ConsultView, busy_view, failed_view, foreign_view, refused, too_long, view, why

logger = logging.getLogger("lawluo.ui.consult_tab")

# -- handlers -------------------------------------------------------------------------------------


def ask(
    firm: Firm,
    state: Consultation | None,
    question: str,
    use_tolc: bool,
    height,
    k,
    visitors: Visitors | None = None,
    visit: Visit = DIRECT,
    facts_date: str | None = None,
) -> Iterator[ConsultView]:
    """Route the question, then grow the clarification tree (or, without ToLC, stream the answer).

    Yields views with ``state`` and ``question``; the box is emptied once the question is taken. The tree
    is reduced to the visitors' limit of clarifier calls, and the tree or answer gets one step's budget.
    The last view is sent once the step is over, when the visitor may start the next one. ``facts_date``
    (the client's date of the facts, ``YYYY-MM-DD``; empty: today) is the day the answers' citations are
    checked against; one that is not a date is refused with the question kept.
    """
    visitors = visitors or Visitors()
    text = (question or "").strip()
    if not owner_of(state, visit):
        yield foreign_view(firm, state, question=question)
        return
    try:
        facts_day(facts_date)  # checked here, set once the consultation takes the question
    except ValueError as exc:
        yield view(firm, state, say(FACTS_DATE, why=why(exc)), "warn", question=question)
        return
    if not text:
        if firm.allowed(state).mark:
            yield view(firm, state, say(MARK), question=question)
        else:
            yield view(firm, state, say(EMPTY), "warn", question=question)
        return
    if len(text) > MAX_QUESTION_CHARS:
        yield view(firm, state, say(too_long(len(text))), "warn", question=question)
        return

    def run(step: Step) -> Generator[ConsultView, None, ConsultView]:
        asked = state
        if asked is None:
            asked = firm.new()
            asked.owner = visit.owner
        try:
            firm.receive(asked, text)
            firm.set_facts_date(asked, facts_date)
        except (StepNotAllowed, ConsultationTooLong) as exc:
            return refused(firm, asked, exc, "ask", question=question)
        except Exception as exc:  # noqa: BLE001 — the UI shows every failure as a message
            return failed_view(firm, asked, exc, question=question)
        return (yield from clarify_or_answer(firm, asked, use_tolc, height, k, visitors, step))

    yield from one_step(visitors, visit, "ask", run, lambda: busy_view(firm, state, question=question))


def one_step(
    visitors: Visitors,
    visit: Visit,
    kind: str,
    run: Callable[[Step], Generator[ConsultView, None, ConsultView]],
    busy: Callable[[], ConsultView],
) -> Iterator[ConsultView]:
    """``run`` as the session's one model step (:meth:`Visitors.step`), or ``busy()`` when another runs.

    ``run`` gets the :class:`~lawluo.ui.visitors.Step` (its token goes into the step's deadline), yields
    views and returns the last one, which is sent once the session is let go. A step that 新咨询 replaced
    shows nothing more (every later view is empty: the page and the session's state stay as New left
    them). When Gradio closes the handler (the page or the client went away), the step's model calls are
    cancelled before ``run`` is closed, so nothing ``run`` does on its way out calls a model.
    """
    step = None
    try:
        with visitors.step(visit, kind) as step:
            if step is None:
                yield busy()
                return
            body = run(step)
            try:
                while True:
                    try:
                        shown = next(body)
                    except StopIteration as stop:
                        final = stop.value
                        break
                    yield step.shown(shown) or ConsultView()
            except GeneratorExit:
                step.cancel(PAGE_LEFT)
                body.close()
                raise
        yield step.shown(final) or ConsultView()
    finally:
        if step is not None:
            visitors.ended(visit, step)


def clarify_or_answer(
    firm: Firm, state: Consultation, use_tolc: bool, height, k, visitors: Visitors, step: Step | None = None
) -> Generator[ConsultView, None, ConsultView]:
    """The question taken: the tree level by level, or the streamed answer; returns the last view."""
    try:
        running = say("consult.msg.building" if use_tolc else "consult.msg.answering_first")
        yield view(firm, state, running, working=True, question="")
        deadline = step_deadline(visitors, "the clarification tree" if use_tolc else "the answer", step)
        if not use_tolc:
            return (yield from stream_answer(firm, state, firm.answer(state, deadline), question=""))
        tree_height, tree_k, reduced = tree_size(firm, visitors, height, k)
        for n, _tree in enumerate(firm.clarify(state, tree_height, tree_k, deadline), start=1):
            building = say("consult.msg.levels", n=n)
            yield view(firm, state, building, working=True, question="")
        done = say(MARK)
        late = deadline.expired and state.tree is not None and state.tree.source == "model"
        if late:
            done = say("consult.msg.late", seconds=f"{deadline.seconds:g}", then=done)
        return view(firm, state, Html(reduced + done), "warn" if reduced or late else "info", question="")
    except Exception as exc:  # noqa: BLE001 — the UI shows every failure as a message
        return failed_view(firm, state, exc, question="")


def step_deadline(visitors: Visitors, what: str, step: Step | None = None) -> Deadline:
    """The step's time budget; its model calls also stop once ``step`` is cancelled."""
    return Deadline.after(
        visitors.limits.step_budget_s,
        what,
        cancel=step.token if step else None,
        allowance=step.allowance if step else None,
    )


def tree_size(firm: Firm, visitors: Visitors, height, k) -> tuple[int, int, Html]:
    """The tree size asked for, within the sliders' range and the visitors' limit; and a note if reduced."""
    asked_h = min(max(as_int(height) or firm.height, 2), MAX_HEIGHT)
    asked_k = min(max(as_int(k) or firm.k, 1), MAX_K)
    if not firm.clarifier_available:  # a tree read off similar cases costs no model call
        return asked_h, asked_k, Html("")
    tree_height, tree_k = fit_tree(asked_h, asked_k, visitors.limits.tree_calls)
    if (tree_height, tree_k) == (asked_h, asked_k):
        return tree_height, tree_k, Html("")
    reduced = say(
        "consult.msg.reduced",
        h=tree_height,
        k=tree_k,
        limit=visitors.limits.tree_calls,
        asked_h=asked_h,
        asked_k=asked_k,
        calls=tree_calls(asked_h, asked_k),
    )
    return tree_height, tree_k, Html(reduced + " ")


def answer(
    firm: Firm, state: Consultation | None, visitors: Visitors | None = None, visit: Visit = DIRECT
) -> Iterator[ConsultView]:
    """The lawyer answers the latest question with the facts marked so far (streamed)."""
    first = say("consult.msg.ask_first")
    yield from lawyer_streams(firm, state, visitors, visit, firm.answer, "answer", first)


def regenerate(
    firm: Firm, state: Consultation | None, visitors: Visitors | None = None, visit: Visit = DIRECT
) -> Iterator[ConsultView]:
    """Answer the latest question again (the previous answer is dropped)."""
    nothing = say("consult.msg.nothing_to_regenerate")
    yield from lawyer_streams(firm, state, visitors, visit, firm.regenerate, "regenerate", nothing)


def lawyer_streams(
    firm: Firm,
    state: Consultation | None,
    visitors: Visitors | None,
    visit: Visit,
    run: Callable[[Consultation, Deadline], Iterator[str]],
    step: str,
    no_consultation: Html,
) -> Iterator[ConsultView]:
    """``run`` (``firm.answer`` or ``firm.regenerate``) streamed as the visitor's one model step; the firm
    says whether the consultation accepts it (``step`` names its refusal in :data:`REFUSALS`)."""
    visitors = visitors or Visitors()
    if not owner_of(state, visit):
        yield foreign_view(firm, state)
        return
    if state is None:
        yield view(firm, state, no_consultation, "warn")
        return

    def streamed(running: Step) -> Generator[ConsultView, None, ConsultView]:
        try:
            pieces = run(state, step_deadline(visitors, "the answer", running))
        except StepNotAllowed as exc:
            return refused(firm, state, exc, step)
        return (yield from stream_answer(firm, state, pieces))

    yield from one_step(visitors, visit, step, streamed, lambda: busy_view(firm, state))


def stream_answer(
    firm: Firm, state: Consultation, pieces: Iterator[str], **also
) -> Generator[ConsultView, None, ConsultView]:
    """The answer as it streams: the chat updated at most every :data:`STREAM_UPDATE_S` (a model sends a
    piece per token); returns the whole view, drawn once the answer is checked.

    While the answer streams only the chat changes, and only at its end: the earlier messages are drawn
    once, and each update adds the new text to the last message (no cursor mark after it), so Gradio's
    streaming diff sends the browser just the new characters (an ``append``) and every other component
    is left as it is (:data:`~lawluo.ui.views.KEEP`).
    """
    text, shown = "", 0.0
    answering = say("consult.msg.answering")
    try:
        yield view(firm, state, answering, streaming="", **also)
        earlier: list[dict] = []
        for n, piece in enumerate(pieces):
            text += piece
            if n == 0:  # retrieval has run: its trace step shows with the first piece
                yield view(firm, state, answering, streaming=text, **also)
                earlier = cr.chat_messages(state)
                shown = time.monotonic()
            elif time.monotonic() - shown >= STREAM_UPDATE_S:
                yield ConsultView(state=state, chat=[*earlier, cr.streaming_message(text)], **also)
                shown = time.monotonic()
        last = state.turns[-1]
        done = cr.note_html(last.note) if last.note else say("consult.msg.answered")
        return view(firm, state, done, "warn" if last.note else "info", **also)
    except Exception as exc:  # noqa: BLE001
        return failed_view(firm, state, exc, **also)


def as_int(value) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None
