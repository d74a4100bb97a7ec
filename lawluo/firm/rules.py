"""Which step a consultation accepts in its status (LawLuo paper §3.2): the firm's typed refusals, and
:func:`allowed`, what each of the page's controls may do now.

The firm raises :class:`StepNotAllowed` (:class:`ConsultationClosed` once the consultation is closed) for a
step the status does not accept; whoever shows the consultation asks :func:`allowed` (``Firm.allowed``)
instead of reading the status itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from ..i18n import Message, message
from ..law.checker import as_of_day
from .saved import Status
from .state import Consultation

#: The statuses of an open consultation: it takes questions, answers, a change of domain, its end.
OPEN = (Status.NEW, Status.CLARIFYING, Status.ANSWERED)


class StepNotAllowed(ValueError):
    """A step asked of a consultation whose status does not accept it (the message says why).

    ``str()`` is the reason for a developer (English); ``.message`` the same for a visitor, a
    :class:`~lawluo.i18n.Message` the web page says in the visitor's language (None: the page shows
    ``str()``, marked English)."""

    def __init__(self, reason: str, said: Message | None = None) -> None:
        super().__init__(reason)
        self.message = said  # None: the page shows the reason as it is (English)


class ConsultationClosed(StepNotAllowed):
    """A step that needs an open consultation was asked of a closed one."""


class ConsultationTooLong(ValueError):
    """One more question would take the consultation past what a saved consultation may hold (``.message``:
    what the visitor reads)."""

    def __init__(self, reason: str, said: Message | None = None) -> None:
        super().__init__(reason)
        self.message = said


def require(state: Consultation, allowed: tuple[Status, ...], step: str) -> None:
    """Raise the typed error of a step that ``state``'s status does not accept."""
    if state.status in allowed:
        return
    if state.status == Status.CLOSED:
        raise ConsultationClosed(
            "this consultation is closed; start a new one", message("consult.firm.closed")
        )
    status = Status(state.status).value
    raise StepNotAllowed(
        f"{step} is not possible now: the consultation is {status}"
        + ("; ask a new question to get a new clarification tree" if step == "marking the tree" else ""),
        message(
            "consult.firm.not_now_mark" if step == "marking the tree" else "consult.firm.not_now",
            status=message(f"consult.firm.status.{status}"),
        ),
    )


@dataclass(frozen=True)
class Allowed:
    """What the firm accepts of a consultation now, control by control (:func:`allowed`)."""

    ask: bool = True  #: a question: the first, or a new one of an open consultation
    mark: bool = False  #: a mark on the tree: the tree awaits the client's marks
    answer: bool = False  #: the lawyer's answer to the latest question
    regenerate: bool = False  #: the latest answer written again
    change_domain: bool = True  #: a choice in the domain menu (closed once the consultation is)
    end: bool = False  #: the secretary's report, which closes the consultation
    closed: bool = False  #: closed: no step changes it; End offers its report again


def allowed(state: Consultation | None) -> Allowed:
    """What each control may do for ``state`` (``None``: no consultation yet, only a question).

    >>> allowed(None).ask, allowed(Consultation(status=Status.CLOSED)).change_domain
    (True, False)
    """
    if state is None:
        return Allowed()
    status, turns = state.status, state.turns
    is_open = status in OPEN
    return Allowed(
        ask=is_open,
        mark=status == Status.CLARIFYING and state.tree is not None,
        answer=is_open and bool(turns) and turns[-1].role == "client",
        regenerate=status == Status.ANSWERED and bool(turns) and turns[-1].role == "lawyer",
        change_domain=is_open,
        end=is_open and bool(state.client_turns),
        closed=status == Status.CLOSED,
    )


def facts_day(value: str | date | None) -> str | None:
    """A date of the facts as an ISO day, ``None`` for none; ``ValueError`` naming the accepted form for
    anything that is not a date, or a date after today."""
    day = as_of_day(value)
    if day is not None and day > date.today().isoformat():
        raise ValueError(f"the date of the facts {day} is after today")
    return day
