"""What an event of the annotation tab shows (:class:`AnnotationView`, a field per component): no item
(:func:`blank_view`), an item with the annotator's label or draft (:func:`item_view`), their next item
(:func:`next_view`), or just a message (:func:`message_only`)."""

import logging
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import gradio as gr

from lawluo.i18n import message
from lawluo.ui.i18n import say
from lawluo.ui.views import KEEP, Keep, View

from .. import human_scores, label_form
from ..label_form import SLOTS
from ..service import AnnotationService, Identity
from ..store import Assignment, StoreError
from .browser import SHOWN_NAMES
from .render import join_messages, notice_html, status_line, text_block

logger = logging.getLogger(__package__)  # the tab's one logger: eval_ui.annotate_tab


@dataclass
class AnnotationView(View):
    """What an event of the tab shows: a field per component, in the order of the events' outputs
    (:data:`~lawluo.ui.views.KEEP`: the component keeps what it shows). ``left_slots`` and
    ``right_slots`` each stand for an answer's statute cards (:func:`label_form.fill_slots`)."""

    status: str | Keep = KEEP
    message: str | Keep = KEEP
    verdict_row: Any = KEEP  # gr.update(visible=…): the verdict buttons, only with an item open
    form: Any = KEEP  # gr.update(visible=…): the item and its labels
    question: str | Keep = KEEP
    reference: str | Keep = KEEP
    left: str | Keep = KEEP
    right: str | Keep = KEEP
    left_note: str | Keep = KEEP
    right_note: str | Keep = KEEP
    left_slots: list | Keep = KEEP
    right_slots: list | Keep = KEEP
    #: the score fields' values (:func:`~eval_ui.human_scores.form_fields`: ``left_rel``, ``left_tlc``,
    #: ``right_rel``, ``right_tlc``), a component each; each is also an attribute (``view.left_rel``)
    scores: dict | Keep = KEEP
    comment: str | Keep = KEEP
    draft: str | Keep = KEEP  # the line under the comment about its draft (emptied when an item is shown)
    state: dict | Keep = KEEP
    admin: Any = KEEP  # gr.update(visible=…)

    def __getattr__(self, name: str) -> Any:
        scores = self.__dict__.get("scores")
        if isinstance(scores, dict) and name in scores:
            return scores[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def outputs(self, names: Sequence[str] | None = None) -> tuple:
        """The event's outputs, each slot field spread over its cards' components, ``scores`` over its
        fields' (in the order of :func:`~eval_ui.human_scores.form_fields`)."""
        names = self.names() if names is None else tuple(names)
        values = list(super().outputs(names))
        if "scores" in names and self.scores is not KEEP:  # one value per field, in the form's order
            values[names.index("scores")] = [self.scores.get(f) for f in human_scores.form_fields()]
        return label_form.flatten(zip(names, values, strict=True), slot_widths())


def slot_widths() -> dict[str, int]:
    """The view's fields that are many components: each answer's statute cards, and the score fields."""
    return {**SLOT_WIDTHS, "scores": len(human_scores.form_fields())}


def view_components(ui: dict[str, Any]) -> list:
    """The components of every view field (:data:`VIEW_FIELDS`) in order: a slot field its cards', ``scores``
    its fields' (``ui["left_rel"]`` …)."""
    fields = [f for name in VIEW_FIELDS for f in (human_scores.form_fields() if name == "scores" else [name])]
    return label_form.output_components(fields, ui, ui["slots"], SLOT_WIDTHS)


def api_outputs() -> tuple[str, ...]:
    """What the HTTP API returns for an event that shows an item, in order: the view's fields without the
    state and the layout blocks (form, verdict row, admin, each card's group), a slot field as its cards'
    HTML then their labels (``left_card_1`` … ``left_mark_1`` …), ``scores`` as its fields (``left_rel`` …)."""
    return tuple(
        part
        for name in VIEW_FIELDS
        if name not in ("state", "admin", "form", "verdict_row")
        for part in (
            [f"{name[:-6]}_card_{n}" for n in range(1, SLOTS + 1)]
            + [f"{name[:-6]}_mark_{n}" for n in range(1, SLOTS + 1)]
            if name in SLOT_WIDTHS
            else human_scores.form_fields()
            if name == "scores"
            else [name]
        )
    )


#: The components every view fills, in this order (the handlers' outputs; a slot field is many).
VIEW_FIELDS = AnnotationView.names()
SLOT_WIDTHS = {"left_slots": 3 * SLOTS, "right_slots": 3 * SLOTS}
#: :func:`api_outputs` of the shipped table.
API_OUTPUTS = api_outputs()


def blank_view(
    service: AnnotationService,
    who: Identity | None,
    message: str,
    kind: str = "info",
    status: str | None = None,
) -> AnnotationView:
    """No item: the status (``status`` in place of the usual line) and the message (HTML: :func:`say`);
    the form is hidden and emptied."""
    return AnnotationView(
        status=status_line(who, service) if status is None else status,
        message=notice_html(message, kind) if message else "",
        verdict_row=gr.update(visible=False), form=gr.update(visible=False),
        question="", reference="", left="", right="", left_note="", right_note="",
        left_slots=label_form.blank_slots(), right_slots=label_form.blank_slots(),
        scores=dict.fromkeys(human_scores.form_fields()), comment="", draft="",
        state={},
        admin=gr.update(visible=bool(who and who.is_admin)),
    )  # fmt: skip


def shown_sides(a: Assignment) -> tuple[str, str]:
    """The item's answer sides ('a'/'b') shown left and right."""
    return ("b", "a") if a.swapped else ("a", "b")


def item_view(
    service: AnnotationService, who: Identity, a: Assignment, text: str = "", kind: str = "info"
) -> AnnotationView:
    """Show assignment ``a``; pre-filled from the annotator's current label when there is one. ``message``
    is HTML (:func:`say`)."""
    label = service.store.label(who.name, a.item.id)
    left_side, right_side = shown_sides(a)
    fill: dict[str, Any] = {"left_labels": {}, "right_labels": {}, "comment": ""}
    fill |= dict.fromkeys(human_scores.form_fields())
    if label is not None:
        labels = label["answer_labels"]
        for shown, side in (("left", left_side), ("right", right_side)):
            mine = labels.get(side) or {}
            fill[f"{shown}_labels"] = dict(mine.get("statutes") or {})
            fill |= {f"{shown}_{key}": mine.get(key) for key in human_scores.keys()}
        fill["comment"] = label["comment"] or ""
        earlier = message(SHOWN_NAMES[a.to_shown(label["verdict"])])
        text = join_messages(text, say("annotate.editing", version=label["version"], verdict=earlier))
        if labels.get("legacy"):
            text = join_messages(text, say("annotate.legacy"))
    text = join_messages(text, _restore_draft(service, who, a, fill, (left_side, right_side)))
    done, assigned = service.store.progress(who.name)
    heading = say("annotate.question")
    if label is None:
        heading = say("annotate.question_at", n=min(done + 1, assigned), assigned=assigned)
    state = {
        "item_id": a.item.id,
        "shown_at": time.time(),
        "submission_id": uuid.uuid4().hex,
        "editing": label is not None,
        "version": label["version"] if label is not None else 0,  # what a draft of this form is based on
    }
    cited = {
        shown: service.statutes(a.item.id, side)
        for shown, side in (("left", left_side), ("right", right_side))
    }
    reference = ""
    if a.item.reference or a.item.statutes:
        reference = text_block(say("annotate.reference_answer"), a.item.reference or "—")
        if a.item.statutes:
            reference += text_block(say("annotate.reference_statutes"), "\n".join(a.item.statutes))
    slots = {
        shown: label_form.fill_slots(cited[shown], fill[f"{shown}_labels"], service.show_checker)
        for shown in ("left", "right")
    }
    notes = {
        shown: label_form.slots_note(cited[shown], fill[f"{shown}_labels"] if label is not None else None)
        for shown in ("left", "right")
    }
    return AnnotationView(
        status=status_line(who, service),
        message=notice_html(text, kind) if text else "",
        verdict_row=gr.update(visible=True),
        form=gr.update(visible=True),
        question=text_block(heading, a.item.question),
        reference=reference,
        left=text_block(say("annotate.left"), a.left),
        right=text_block(say("annotate.right"), a.right),
        left_note=notes["left"],
        right_note=notes["right"],
        left_slots=slots["left"],
        right_slots=slots["right"],
        scores={f: fill[f] for f in human_scores.form_fields()},
        comment=fill["comment"],
        draft="",
        state=state,
        admin=gr.update(visible=who.is_admin),
    )


def _restore_draft(
    service: AnnotationService, who: Identity, a: Assignment, fill: dict[str, Any], sides: tuple[str, str]
) -> str:
    """Put ``who``'s unsaved draft of the item into ``fill`` (what the form shows) and say so; "" when there
    is none. Only the draft of this annotator and item is read (:meth:`~eval_ui.store.AnnotationStore.draft`
    validates it and drops a stale one), and a statute label is restored only onto a statute this answer
    cites; a store that cannot be read restores nothing."""
    try:
        draft = service.store.draft(who.name, a.item.id)
    except StoreError as exc:
        logger.warning("annotation: a draft was not read: %s", exc)
        return ""
    if draft is None:
        return ""
    for shown, side in zip(("left", "right"), sides, strict=True):
        cited = {s.key for s in service.statutes(a.item.id, side)}
        mine = draft[side]
        fill[f"{shown}_labels"] = {k: v for k, v in mine["statutes"].items() if k in cited}
        fill |= {f"{shown}_{key}": mine.get(key) for key in human_scores.keys()}
    fill["comment"] = draft["comment"]
    when = time.strftime("%H:%M", time.gmtime(draft["updated_at"]))
    return say("annotate.draft_restored", when=when)


def next_view(
    service: AnnotationService, who: Identity, text: str = "", kind: str = "info"
) -> AnnotationView:
    """The annotator's next item (``text``: a message before it, HTML), or why there is none."""
    a = service.store.next_item(who.name)
    if a is None and service.top_up(who):  # out of items: any short of annotators or left idle by others
        a = service.store.next_item(who.name)
    if a is None:
        done, assigned = service.store.progress(who.name)
        if assigned:
            why = say("annotate.all_done", assigned=assigned)
        elif who.is_admin:
            why = say("annotate.admin_not_assigned")
        else:
            why = say("annotate.none_assigned")
        return blank_view(service, who, join_messages(text, why), kind)
    return item_view(service, who, a, text, kind)


def message_only(text: str, kind: str = "error") -> AnnotationView:
    """A message (HTML: :func:`say`); every other component keeps what it shows (nothing typed is lost)."""
    return AnnotationView(message=notice_html(text, kind))
