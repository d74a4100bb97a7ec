"""A consultation brought back: from a file the visitor saved (Resume), from the copy the browser tab kept
(a reloaded page), checked whole either way (:func:`parse_saved`); and 新咨询, which forgets it."""

from __future__ import annotations

import json
import logging
from pathlib import Path

from ...agents.secretary import Report, render_markdown
from ...firm import Consultation, Firm
from ...firm.saved import SavedConsultationError
from ...i18n import Message, message
from ..i18n import Html, say
from ..render import without_paths
from ..views import KEEP, Keep
from ..visitors import (
    DIRECT,
    Visit,
    Visitors,
    owner_of,
)
from .handlers import shown_report
from .page import (
    MAX_SAVED_BYTES,
    MAX_STORED_BYTES,
    NOT_TEXT,
    NOTHING_STORED,
    REPLACE_WAIT_S,
    RESTORED_CLOSED_KEY,
    RESTORED_KEY,
    RESUME_REFUSED_KEY,
    STARTED_OVER,
    STORED_REFUSED_KEY,
)
from .view import ConsultView, Refusal, busy_view, domain_menu, foreign_view, hidden_file, is_busy, view, why

logger = logging.getLogger("lawluo.ui.consult_tab")


def resume_consultation(
    firm: Firm,
    state: Consultation | None,
    upload,
    visit: Visit = DIRECT,
    *,
    visitors: Visitors | None = None,
) -> ConsultView:
    """Continue a consultation from a JSON file saved earlier; a bad file changes nothing and says why.

    The file is checked whole against the saved-consultation schema (:mod:`lawluo.firm.saved`) first. A
    client address resumes at most ``resumes_per_hour`` times an hour (each resumed consultation may hold
    a few MB of memory for the session's life).
    """
    if not owner_of(state, visit):
        return foreign_view(firm, state)
    if is_busy(visitors, visit):
        return busy_view(firm, state)
    path = Path(upload if isinstance(upload, str) else getattr(upload, "name", "") or "")
    try:
        if not path.is_file():
            raise Refusal(message("consult.resume.no_file"))
        spent = visitors.resume(visit, path.stat().st_size) if visitors is not None else None
        if spent is not None:  # each try counts: parsing costs too
            raise Refusal(spent)
        if path.stat().st_size > MAX_SAVED_BYTES:
            raise Refusal(too_big(path.stat().st_size))
        with path.open("rb") as f:
            resumed = parse_saved(firm, f.read(MAX_SAVED_BYTES + 1))
    except OSError:
        logger.exception("cannot read an uploaded consultation")
        unread = message("consult.resume.unreadable")
        return view(firm, state, say(RESUME_REFUSED_KEY, why=unread), "warn")
    except ValueError as exc:
        return view(firm, state, say(RESUME_REFUSED_KEY, why=why(exc)), "warn")
    resumed.owner = visit.owner
    shown = say("consult.msg.resumed", id=resumed.id)
    return view(firm, resumed, shown, domain=domain_menu(firm, resumed, reopen=True))


def too_big(n: int) -> Message:
    return message("consult.resume.too_big", n=f"{n:,}", limit=f"{MAX_SAVED_BYTES:,}")


def parse_saved(firm: Firm, raw: bytes | str) -> Consultation:
    """A saved consultation (an uploaded file's bytes, or the copy a browser kept) checked whole against
    :mod:`lawluo.firm.saved` and the firm's domain table; raises :class:`Refusal` (a ``ValueError``) saying
    what is wrong (its ``.message``; never where the file was stored)."""
    if isinstance(raw, bytes):
        if len(raw) > MAX_SAVED_BYTES:
            raise Refusal(too_big(len(raw)))
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise Refusal(message(NOT_TEXT)) from None
    if not isinstance(raw, str) or "\x00" in raw:
        raise Refusal(message(NOT_TEXT))
    if len(raw.encode("utf-8")) > MAX_SAVED_BYTES:
        raise Refusal(too_big(len(raw.encode("utf-8"))))
    try:
        return Consultation.from_json(raw, firm.domains)
    except SavedConsultationError as exc:
        gloss = (
            "consult.resume.unknown_domain"
            if " is not a domain of " in str(exc)
            else "consult.resume.bad_format"
        )
        raise Refusal(message(gloss, detail=without_paths(str(exc)))) from None
    except ValueError as exc:  # not JSON at all
        raise Refusal(message("consult.resume.not_json", detail=without_paths(str(exc)))) from None


def new_consultation(
    firm: Firm, visitors: Visitors | None = None, visit: Visit = DIRECT, state: Consultation | None = None
) -> ConsultView:
    """Forget the session's consultation and its files (``state`` is the one shown).

    A model step of the session still running is stopped (:meth:`Visitors.replace`): its model calls are
    cancelled and it changes nothing more. The page starts over once it has ended, or after
    :data:`REPLACE_WAIT_S` (a model call that does not look at its token until the server answers); the
    page's controls stay disabled, and Ask is refused, until the step has let go of the session.
    """
    if not owner_of(state, visit):
        return foreign_view(firm, state)
    if visitors is not None:
        if not visitors.replace(visit, STARTED_OVER, REPLACE_WAIT_S):
            logger.info("新咨询: the step it stopped still waits for its model call")
        visitors.forget(visit.session)
    return view(
        firm,
        None,
        question="",
        report="",
        download_md=hidden_file(),
        download_docx=hidden_file(),
        domain=domain_menu(firm, None, reopen=True),
    )


def remembered(state: Consultation | None, visit: Visit = DIRECT) -> str | Keep:
    """What the visitor's browser tab keeps of the consultation after a step (:data:`REMEMBER_JS`), so that a
    reload of the page brings it back: its JSON (:data:`NOTHING_STORED` after 新咨询: the copy is deleted). A
    copy over :data:`MAX_STORED_BYTES` is left as it was (:data:`KEEP`). Never another browser's
    consultation."""
    if state is None or not state.turns or not owner_of(state, visit):
        return NOTHING_STORED
    text = json.dumps(state.to_dict(), ensure_ascii=False, separators=(",", ":"))
    return text if len(text.encode("utf-8")) <= MAX_STORED_BYTES else KEEP


def restore_consultation(
    firm: Firm, state: Consultation | None, stored: object, visit: Visit = DIRECT
) -> ConsultView:
    """When the page loads: the consultation the tab kept (``stored``, from its sessionStorage), checked
    whole like an uploaded file (:func:`parse_saved`: schema, sizes, the firm's domains) and bound to this
    visitor. A copy that fails the check is deleted, with a message; the page then starts empty."""
    if state is not None or not stored or stored == NOTHING_STORED:
        return ConsultView()
    try:
        if not isinstance(stored, str):
            raise Refusal(message(NOT_TEXT))
        restored = parse_saved(firm, stored)
    except ValueError as exc:
        return view(firm, None, say(STORED_REFUSED_KEY, why=why(exc)), "warn", stored=NOTHING_STORED)
    restored.owner = visit.owner
    report, shown = "", say(RESTORED_KEY)
    if firm.allowed(restored).closed and restored.report:
        report, shown = (
            shown_report(render_markdown(Report(**restored.report)), Report(**restored.report)),
            Html(f"{shown} {say(RESTORED_CLOSED_KEY)}"),
        )
    return view(firm, restored, shown, report=report)


def consultation_json(state: Consultation | None, visit: Visit = DIRECT) -> dict:
    """The session's consultation as a JSON object (empty before the first question, or when the request
    does not come from the browser the consultation belongs to)."""
    return state.to_dict() if state is not None and owner_of(state, visit) else {}
