"""What an event of the adjudication tab shows (:class:`AdjudicationView`, a field per component): nothing
open (:func:`empty_view`), or an item side by side with its resolution's form (:func:`item_view`)."""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import gradio as gr

from lawluo.ui.i18n import Html, say
from lawluo.ui.render import data
from lawluo.ui.views import KEEP, Keep, View

from .. import label_form
from ..annotate_tab import notice_html
from ..label_form import SLOTS
from ..service import AnnotationService
from .render import SIDES, choice, comparison_html, consensus

SLOT_WIDTHS = {"a_slots": 3 * SLOTS, "b_slots": 3 * SLOTS}


@dataclass
class AdjudicationView(View):
    """What an event of the tab shows (``a_slots``/``b_slots``: each answer's statute cards)."""

    message: str | Keep = KEEP
    pick: Any = KEEP  # gr.update(choices=…, value=…)
    form: Any = KEEP  # gr.update(visible=…)
    comparison: str | Keep = KEEP
    a: str | Keep = KEEP
    b: str | Keep = KEEP
    a_note: str | Keep = KEEP
    b_note: str | Keep = KEEP
    a_slots: list | Keep = KEEP
    b_slots: list | Keep = KEEP
    verdict: str | None | Keep = KEEP
    note: str | Keep = KEEP
    state: dict | Keep = KEEP

    def outputs(self, names: Sequence[str] | None = None) -> tuple:
        """The event's outputs, each slot field spread over its cards' components."""
        names = self.names() if names is None else tuple(names)
        return label_form.flatten(zip(names, super().outputs(names), strict=True), SLOT_WIDTHS)


VIEW_FIELDS = AdjudicationView.names()
#: What the HTTP API returns for the tab's events, in order (no state, no layout blocks; each slot
#: field as its cards' HTML then their labels: ``a_card_1`` … ``a_mark_1`` …).
API_OUTPUTS = tuple(
    part
    for name in VIEW_FIELDS
    if name not in ("state", "form")
    for part in (
        [f"{name[:1]}_card_{n}" for n in range(1, SLOTS + 1)]
        + [f"{name[:1]}_mark_{n}" for n in range(1, SLOTS + 1)]
        if name in SLOT_WIDTHS
        else [name]
    )
)


def empty_view(message: str, kind: str = "info", choices: list | None = None) -> AdjudicationView:
    """Nothing open; ``message`` is HTML (:func:`say`) or empty."""
    return AdjudicationView(
        message=notice_html(message, kind) if message else "",
        pick=gr.update(choices=choices or [], value=None),
        form=gr.update(visible=False),
        comparison="", a="", b="", a_note="", b_note="",
        a_slots=label_form.blank_slots(), b_slots=label_form.blank_slots(),
        verdict=None, note="", state={},
    )  # fmt: skip


def item_view(
    service: AnnotationService,
    items: list[dict],
    item_id: str,
    message: str = "",
    kind: str = "info",
    just_saved: bool = False,
) -> AdjudicationView:
    """The item ``item_id`` of ``items`` (the disagreements) side by side, its form filled from an earlier
    adjudication or else the statute labels the annotators agree on; the list when it is gone."""
    item = next((i for i in items if i["item_id"] == item_id), None)
    if item is None:
        return empty_view(say("adjudicate.no_longer"), "warn", [choice(i) for i in items])
    stored = service.store.item(item_id)
    earlier = item.get("adjudication")
    cited, labels, notes = {}, {}, {}
    for side in SIDES:
        cited[side] = service.statutes(item_id, side)
        if earlier:
            labels[side] = dict((earlier["answer_labels"].get(side) or {}).get("statutes") or {})
        else:
            labels[side] = consensus(item, side)
        notes[side] = label_form.slots_note(cited[side])
    if earlier and not just_saved:
        message = (message + " " if message else "") + say(
            "adjudicate.already", version=earlier["version"], admin=Html(data(earlier["admin"]))
        )
    answers = {side: getattr(stored, f"answer_{side}", "") if stored else "" for side in SIDES}
    return AdjudicationView(
        message=notice_html(message, kind) if message else "",
        pick=gr.update(choices=[choice(i) for i in items], value=item_id),
        form=gr.update(visible=True),
        comparison=comparison_html(service, item),
        a=f'<div class="ann-head">A · {data(item["system_a"])}</div><div class="ann-text">{data(answers["a"])}</div>',
        b=f'<div class="ann-head">B · {data(item["system_b"])}</div><div class="ann-text">{data(answers["b"])}</div>',
        a_note=notes["a"],
        b_note=notes["b"],
        a_slots=label_form.fill_slots(cited["a"], labels["a"], service.show_checker),
        b_slots=label_form.fill_slots(cited["b"], labels["b"], service.show_checker),
        verdict=earlier["verdict"] if earlier else None,
        note=(earlier or {}).get("note") or "",
        state={"item_id": item_id},
    )
