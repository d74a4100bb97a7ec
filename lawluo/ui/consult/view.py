"""What one event of the consultation tab shows (:class:`ConsultView`, :func:`view`), drawn from the firm's
state and what the firm allows now (:meth:`~lawluo.firm.Firm.allowed`); and the views of a refusal, a busy
session, another browser's request and an unexpected error."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import gradio as gr

from ...firm import Consultation, Firm
from ...firm.firm import ConsultationClosed
from ...i18n import Message, message
from ...llm.cancel import Cancelled
from .. import consult_render as cr
from ..i18n import Html, say
from ..render import without_paths
from ..views import KEEP, Keep, View
from ..visitors import (
    Visit,
    Visitors,
)
from .page import BUSY, CLOSED, ELAPSED, FAILED, FOREIGN, MAX_QUESTION_CHARS, REFUSALS

logger = logging.getLogger("lawluo.ui.consult_tab")


class Refusal(ValueError):
    """Why a saved consultation is refused, as a :class:`~lawluo.i18n.Message` (``.message``); ``str()`` is
    its Chinese text."""

    def __init__(self, message: Message) -> None:
        super().__init__(str(message))
        self.message = message


def why(exc: BaseException) -> Message | Html:
    """What the page says of an error it shows: its :class:`~lawluo.i18n.Message` (a :class:`Refusal`), else
    its text (the library's, in English), marked so and without the server's paths."""
    found = getattr(exc, "message", None)
    if isinstance(found, Message):
        return found
    return Html(f'<span lang="en">{cr.esc(without_paths(str(exc)))}</span>')


def said(reason: str) -> Html:
    """A reason a step stopped (the text its model calls carry, Chinese): in both languages when it is one of
    the tab's, else as written."""
    return cr.note_html(reason)


def too_long(n: int) -> Message:
    """Why a question of ``n`` characters is refused."""
    return message("consult.msg.too_long", n=f"{n:,}", limit=f"{MAX_QUESTION_CHARS:,}")


def too_long_message(n: int) -> str:
    """:func:`too_long`'s Chinese text (a plain text: the MCP tool's error)."""
    return str(too_long(n))


# -- the view of a consultation -------------------------------------------------------------------


@dataclass
class ConsultView(View):
    """What one event of the tab shows: a field per component (:data:`~lawluo.ui.views.KEEP`: unchanged)."""

    state: Consultation | None | Keep = KEEP
    question: str | Keep = KEEP
    report: str | Keep = KEEP
    download_md: Any = KEEP
    download_docx: Any = KEEP
    saved: Any = KEEP
    chat: list | Keep = KEEP
    routing: str | Keep = KEEP
    domain: str | None | dict | Keep = KEEP  # a dict (gr.update) when the menu opens or closes
    tree: str | Keep = KEEP
    citations: str | Keep = KEEP
    retrieved: str | Keep = KEEP
    trace: str | Keep = KEEP
    message: str | Keep = KEEP
    stored: str | Keep = KEEP  # the copy the browser tab keeps (REMEMBER_JS)


#: What :func:`view` draws of a consultation.
DRAWN = ("chat", "routing", "domain", "tree", "citations", "retrieved", "trace", "message")
#: Each event's outputs, by field name (the components are looked up by the same names).
ASKED = ("state", "question", *DRAWN)
STEPPED = ("state", *DRAWN)  # answer, regenerate, mark, domain, resume
ENDED = ("state", "report", "download_md", "download_docx", *DRAWN)
SAVED = ("saved", *DRAWN)
RESTARTED = ("state", "question", "report", "download_md", "download_docx", *DRAWN)
RESTORED = ("state", "report", *DRAWN, "stored")  # on page load, from the browser's copy


def view(
    firm: Firm,
    state: Consultation | None,
    /,
    message: str | Html | Message = "",
    kind: str = "info",
    streaming: str | None = None,
    *,
    working: bool = False,
    **also,
) -> ConsultView:
    """What the tab shows for ``state`` (and ``state`` itself, kept in the session); ``also`` sets other
    fields (e.g. ``question=""``). The tree's buttons are active only when the firm accepts marks and no
    step is ``working`` on the consultation or ``streaming`` its answer."""
    lawyer_turn = next((t for t in reversed(state.turns) if t.role == "lawyer"), None) if state else None
    history = [e.summary for e in (state.trace if state else []) if e.kind in ("reroute", "override")]
    markable = firm.allowed(state).mark and streaming is None and not working
    drawn = dict(
        state=state,
        chat=cr.chat_messages(state, streaming),
        routing=cr.routing_html(
            state.routing if state else None,
            state.domain if state else None,
            history,
            firm.domains,
            firm.routing_notice,
        ),
        domain=domain_menu(firm, state),
        tree=cr.tree_html(
            state.tree if state else None,
            firm.case,
            markable,
            *(firm.issue_menu(state) if state is not None else ((), "")),
            firm.domains,
        ),
        citations=cr.citations_html(lawyer_turn),
        retrieved=cr.retrieved_html(lawyer_turn),
        trace=cr.trace_html(state.trace if state else []),
        message=(cr.notice(message, kind) if message else "")
        + (ELAPSED if message and (working or streaming is not None) else ""),
    )
    return ConsultView(**{**drawn, **also})


def domain_menu(firm: Firm, state: Consultation | None, reopen: bool = False) -> str | None | dict:
    """The domain menu: the consultation's domain; once the consultation is closed, closed to changes too
    (and marked ``ll-off``, which the page's :data:`UNLOCK_JS` leaves disabled). ``reopen``: the page may
    show a closed consultation before this one (新咨询, Resume), so the menu is opened again explicitly.
    Otherwise the domain id itself, as ``/ask`` and the other endpoints return it to scripts."""
    value = state.domain if state else None
    if not firm.allowed(state).change_domain:
        return gr.update(value=value, interactive=False, elem_classes=["ll-off"])
    return gr.update(value=value, interactive=True, elem_classes=[]) if reopen else value


def refused(firm: Firm, state: Consultation, exc: Exception, step: str, **also) -> ConsultView:
    """The view after the firm refused ``step`` (its typed error, or a bad value): why, and nothing changed."""
    if isinstance(exc, ConsultationClosed):
        return view(firm, state, say(CLOSED), "warn", **also)
    return view(
        firm, state, say("consult.refused", what=message(REFUSALS[step]), why=why(exc)), "warn", **also
    )


def busy_view(firm: Firm, state: Consultation | None, **also) -> ConsultView:
    """Another step of the visitor is running: say so, and leave the consultation to it (state unchanged)."""
    return view(firm, state, say(BUSY), "warn", working=True, **{**also, "state": KEEP})


def is_busy(visitors: Visitors | None, visit: Visit) -> bool:
    return visitors is not None and bool(visit.session) and visitors.busy(visit.session)


def foreign_view(firm: Firm, state: Consultation | None, **also) -> ConsultView:
    """A request from another browser: nothing of the consultation is shown, and it is left as it is."""
    return view(firm, None, say(FOREIGN), "error", **{**also, "state": state})


def failed_view(firm: Firm, state: Consultation | None, exc: Exception, **also) -> ConsultView:
    """Log the traceback (call inside ``except``) and show a message instead (a step that was stopped: why)."""
    kind = "error"
    if isinstance(exc, Cancelled):  # not a failure: the page left, or the step's time ran out
        logger.info("consultation step stopped: %s", exc)
        shown, kind = said(str(exc)), "warn"
    else:
        logger.exception("consultation handler failed")  # the error's type and text: for the operator
        shown = say(FAILED)
    try:
        return view(firm, state, shown, kind, **also)
    except Exception:  # noqa: BLE001 — the state cannot be drawn: show the message, leave the rest as it is
        logger.exception("consultation view failed")
        return ConsultView(state=state, message=cr.notice(shown, "error"), **also)


def hidden_file() -> dict:
    return gr.update(value=None, visible=False)
