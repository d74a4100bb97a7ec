"""The label form as one named value (:class:`LabelForm`): read from the verdict event's inputs, or from
the page's draft JSON, and checked (:func:`validate_form`, :func:`form_messages`)."""

import inspect
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from lawluo.i18n import Message, message

from .. import human_scores, label_form
from ..label_form import MAX_COMMENT_CHARS, SLOTS
from ..store import MAX_DRAFT_BYTES

#: The form's score fields (``left_rel, left_tlc, right_rel, right_tlc``: the left answer's scores of
#: :data:`~eval_ui.human_scores.HUMAN_SCORE_TABLE`, then the right's), in the order of :class:`LabelForm` and
#: of the event's inputs, as shipped (the form reads :func:`~eval_ui.human_scores.form_fields` when built).
SCORE_FIELDS = human_scores.form_fields()


class FormReader:
    """``LabelForm.from_inputs``: :meth:`LabelForm.from_values` with a parameter per score field of the table
    as it is now (``left_rel`` …: the names the HTTP API gives the verdict events' inputs), then ``comment``
    and ``*marks``.

    >>> list(inspect.signature(LabelForm.from_inputs).parameters)
    ['state', 'left_rel', 'left_tlc', 'right_rel', 'right_tlc', 'comment', 'marks']
    """

    def __get__(self, instance: object, owner: type) -> Callable[..., "LabelForm"]:
        def from_inputs(*values: Any) -> "LabelForm":
            return owner.from_values(*values)

        keyword = inspect.Parameter.POSITIONAL_OR_KEYWORD
        params = [inspect.Parameter("state", keyword, default=None, annotation=dict | None)]
        params += [
            inspect.Parameter(name, keyword, default=None, annotation=float | None)
            for name in human_scores.form_fields()
        ]
        params += [
            inspect.Parameter("comment", keyword, default=None, annotation=str | None),
            inspect.Parameter("marks", inspect.Parameter.VAR_POSITIONAL, annotation=str | None),
        ]
        from_inputs.__signature__ = inspect.Signature(params, return_annotation="LabelForm")  # type: ignore[attr-defined]
        from_inputs.__doc__ = owner.from_values.__doc__
        return from_inputs


@dataclass(frozen=True)
class LabelForm:
    """What the label form holds when a verdict is pressed: the item's ``state`` (its id, when it was
    shown…), each answer's scores (:func:`~eval_ui.human_scores.form_fields`: Rel and T_LC of the left
    answer, then the right's, as typed: a number, "" or None), the comment, and the statute slots' labels
    (:data:`SLOTS` of the left answer, then the right's; None: unlabelled)."""

    state: dict = field(default_factory=dict)
    typed: tuple = ()
    comment: str | None = None
    marks: tuple = (None,) * (2 * SLOTS)

    from_inputs = FormReader()

    @classmethod
    def from_values(cls, state: dict | None = None, *values: Any) -> "LabelForm":
        """The form from the verdict event's inputs, as Gradio passes them (by position: the state, a value per
        score field, the comment, the statute slots; missing ones are empty or unlabelled).

        >>> form = LabelForm.from_values({"item_id": "q1"}, 7, None, "", 3, "ok", "wrong")
        >>> form.item_id, form.scores, form.side_marks(0)[:2], len(form.marks)
        ('q1', [7, None, '', 3], ('wrong', None), 60)
        """
        n = len(human_scores.form_fields())
        typed = tuple(values[:n]) + (None,) * (n - len(values[:n]))
        comment = values[n] if len(values) > n else None
        marks = tuple(values[n + 1 :])
        marks += (None,) * (2 * SLOTS - len(marks))
        return cls(state or {}, typed, comment, marks)

    @property
    def item_id(self) -> str | None:
        """The open item's id (None: no item is open)."""
        return self.state.get("item_id")

    @property
    def scores(self) -> list:
        """The scores of the left answer, then the right's, as typed (Rel and T_LC of each)."""
        return list(self.typed)

    def side_scores(self, n: int) -> list:
        """The scores of the ``n``-th answer shown (0: left, 1: right), in the table's order."""
        width = len(self.typed) // 2
        return list(self.typed[n * width : (n + 1) * width])

    def side_marks(self, n: int) -> tuple:
        """The statute slots' labels of the ``n``-th answer shown (0: left, 1: right)."""
        return self.marks[n * SLOTS : (n + 1) * SLOTS]


def _score_ranges() -> list[tuple[int, int]]:
    """The range of each score field, in the order of :func:`~eval_ui.human_scores.form_fields`."""
    return [s.range for s in human_scores.table()] * len(human_scores.SHOWN_SIDES)


def form_problems(scores: Sequence[Any], comment: str | None) -> list[str]:
    """The problem of each score field (Rel, T_LC of the left answer, then the right) and of the
    comment, in no language (a field's validation message: :func:`label_form.score_problem`); an empty
    string where there is none."""
    checked = zip(scores, _score_ranges(), strict=False)
    return [label_form.score_problem(v, r) for v, r in checked] + [
        label_form.text_problem(comment, MAX_COMMENT_CHARS)
    ]


def form_messages(scores: Sequence[Any], comment: str | None) -> list[Message]:
    """The form's problems (:func:`form_problems`) in words, for the message after a refused save."""
    found = [label_form.score_message(v, r) for v, r in zip(scores, _score_ranges(), strict=False)]
    found.append(label_form.text_message(comment, MAX_COMMENT_CHARS))
    return [m for m in found if m is not None]


def validate_form(*values: Any) -> list[dict]:
    """The verdict buttons' validator (the event's inputs: :meth:`LabelForm.from_inputs`): a ``gr.validate``
    per input, so Gradio marks the one field at fault (a score outside 0–10, a comment over the limit) and
    the label is not saved."""
    form = LabelForm.from_values(*values)
    problems = form_problems(form.scores, form.comment)
    slots = values[2 + len(form.typed) :]
    return label_form.validations(["", *problems, *[""] * len(slots)])


class FormError(ValueError):
    """The page's form data that is not what :data:`~eval_ui.annotate_tab.browser.DRAFT_FORM_JS` sends;
    ``message`` says so."""

    def __init__(self, msg: Message) -> None:
        super().__init__(str(msg))
        self.message = msg


def read_draft_form(form: str | None, state: dict | None = None) -> LabelForm:
    """The form of :data:`~eval_ui.annotate_tab.browser.DRAFT_FORM_JS`'s JSON (the scores, the comment
    and the :data:`SLOTS` × 2 statute labels) with the item's ``state``; untrusted: ValueError unless it is
    exactly that shape, within the draft's size bound.

    >>> form = read_draft_form(json.dumps({"scores": ["7", "", None, "11"], "comment": "再查", "marks": [None] * 60}))
    >>> form.scores, form.comment
    (['7', '', None, '11'], '再查')
    """
    if not isinstance(form, str) or len(form.encode("utf-8")) > 2 * MAX_DRAFT_BYTES:
        raise FormError(message("annotate.form_not_understood"))
    data = json.loads(form)
    shape = (
        isinstance(data, dict)
        and set(data) == {"scores", "comment", "marks"}
        and isinstance(data["scores"], list)
        and len(data["scores"]) == len(human_scores.form_fields())
        and all(v is None or isinstance(v, str | int | float) for v in data["scores"])
        and isinstance(data["comment"], str)
        and isinstance(data["marks"], list)
        and len(data["marks"]) == 2 * SLOTS
        and all(v is None or isinstance(v, str) for v in data["marks"])
    )
    if not shape:
        raise FormError(message("annotate.form_not_understood"))
    return LabelForm(state or {}, tuple(data["scores"]), data["comment"], tuple(data["marks"]))
