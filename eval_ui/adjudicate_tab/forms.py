"""The resolution's form as one named value (:class:`ResolutionForm`), read from the record event's
inputs, and checked (:func:`validate_resolution`, :func:`resolution_messages`)."""

from dataclasses import dataclass, field
from typing import Any

from lawluo.i18n import Message
from lawluo.i18n import message as msg

from .. import label_form, verdicts
from ..label_form import MAX_NOTE_CHARS, SLOTS


@dataclass(frozen=True)
class ResolutionForm:
    """What the resolution's form holds when it is recorded: the open item's ``state``, the verdict
    (A/B/tie/both_bad, the item's orientation), the note, and the statute slots' labels (:data:`SLOTS` of
    answer A, then B's; None: unlabelled)."""

    state: dict = field(default_factory=dict)
    verdict: str | None = None
    note: str | None = None
    marks: tuple = (None,) * (2 * SLOTS)

    @classmethod
    def from_inputs(
        cls,
        state: dict | None = None,
        verdict: str | None = None,
        note: str | None = None,
        *marks: str | None,
    ) -> "ResolutionForm":
        """The form from the record event's inputs, as Gradio passes them (by position, in this order;
        missing slots are unlabelled).

        >>> form = ResolutionForm.from_inputs({"item_id": "q1"}, "A", "", "wrong")
        >>> form.item_id, form.verdict, form.side_marks(0)[:2], len(form.marks)
        ('q1', 'A', ('wrong', None), 60)
        """
        marks = tuple(marks) + (None,) * (2 * SLOTS - len(marks))
        return cls(state or {}, verdict, note, marks)

    @property
    def item_id(self) -> str | None:
        """The open item's id (None: none is open)."""
        return self.state.get("item_id")

    def side_marks(self, n: int) -> tuple:
        """The statute slots' labels of answer A (``n`` 0) or B (1)."""
        return self.marks[n * SLOTS : (n + 1) * SLOTS]


#: A verdict's problem as a field's validation message, in no language: the codes it may be.
VERDICT_PROBLEM = "? " + " | ".join(verdicts.VERDICTS)


def resolution_problems(verdict: str | None, note: str | None) -> list[str]:
    """The verdict's problem and the note's, in no language (a field's validation message: the field it
    marks and its counter say it); empty strings where there is none."""
    return [
        "" if verdict in verdicts.VERDICTS else VERDICT_PROBLEM,
        label_form.text_problem(note, MAX_NOTE_CHARS),
    ]


def resolution_messages(verdict: str | None, note: str | None) -> list[Message]:
    """:func:`resolution_problems` in words (messages)."""
    found = [] if verdict in verdicts.VERDICTS else [msg("adjudicate.choose_verdict")]
    too_long = label_form.text_message(note, MAX_NOTE_CHARS, "adjudicate.the_note")
    return found + ([too_long] if too_long is not None else [])


def validate_resolution(*values: Any) -> list[dict]:
    """The record button's validator (the event's inputs: :meth:`ResolutionForm.from_inputs`): marks the
    verdict or the note when it is at fault."""
    form = ResolutionForm.from_inputs(*values)
    return label_form.validations(
        ["", *resolution_problems(form.verdict, form.note), *[""] * len(values[3:])]
    )
