"""The controls a label form is made of, shared by the annotation and the adjudication tabs.

- **Statute slots** (:class:`StatuteSlots`): one card per statute an answer cites, each with its own
  label control (真实 Correct, 有误 Wrong, or a kind of error: the rows of
  :data:`eval_ui.verdicts.STATUTE_LABEL_TABLE`) and the statute's real text one click away
  (``<details>``). A statute nobody labels stays unlabelled: its control has no value and it is not
  sent as "correct". 这些都没问题 "None of these is wrong" marks as 真实 in one click every statute not
  yet labelled **that the checker found as cited** (:data:`ONE_CLICK_VERDICTS`: the article exists and
  its text agrees); a statute already marked keeps its label, and one the checker did not find (a
  non-existent article, a wrong number, a repealed law…) stays unlabelled for the annotator to judge;
  清除 Clear empties the answer's labels.
- **Scores** (:func:`score_field`): Rel and T_LC (the rows of :data:`eval_ui.human_scores.HUMAN_SCORE_TABLE`),
  0–10 (the row's range) or empty. An out-of-range value is reported on its own field by the event's
  validator (:func:`score_problem`), in numbers only (Gradio shows a field's validation message as plain
  text, untranslated); the message after a refused save says it in words.
- **The comment** is never cut: the page counts its characters against :data:`MAX_COMMENT_CHARS`
  (the store's limit), and a longer one is refused on the field, with what to do.

Why a fixed pool of slots and not ``@gr.render``: a verdict button's inputs are fixed when the page is
built (so are the keys 1–4, the validator and the HTTP API), and a rendered block is redrawn by a second
event after the item arrives, while a key may already be pressed. :data:`SLOTS` cards per answer are
built once, hidden when unused and filled by the event that shows an item; an answer citing more (none
of the demo items does) has the rest listed in its note, unlabelled. Slot *n* of a side holds its
*n*-th cited statute; a handler gets the slots in order, and the HTTP API names them ``left_1`` …
(:func:`named_slots`).
"""

# no `from __future__ import annotations`: Gradio reads component classes at runtime

import inspect
import json
import types
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import gradio as gr

from lawluo.i18n import EN, ZH, Message, message
from lawluo.i18n import text as catalogue_text
from lawluo.ui.i18n import say, t
from lawluo.ui.render import badge, esc, zh

from . import verdicts
from .statutes import CitedStatute
from .store import MAX_COMMENT, MAX_NOTE

#: Cards per answer; the form has this many label controls per side.
SLOTS = 30
#: The comment's limit: the store's (a longer one is refused on the field, never cut).
MAX_COMMENT_CHARS = MAX_COMMENT
MAX_NOTE_CHARS = MAX_NOTE
SCORE_RANGE = (0, 10)
#: (shown, code) of each label a form may give a statute (not the migration's legacy code). Gradio
#: translates a choice given as a ``gr.I18n`` key in the browser (tried with Gradio 6.31), so the radio
#: shows 真实 on the Chinese page and Correct on the English one; its value stays the code.
LABEL_CHOICES = [(t(verdicts.STATUTE_NAME_KEYS[code]), code) for code in verdicts.STATUTE_LABELS]
#: The checker verdicts whose statutes 这些都没问题 may mark 真实 in one click: the ones the label 真实
#: names (the article exists at the number cited and what the answer says of it agrees), never
#: ``not_found``, ``wrong_number``, ``content_mismatch``, ``repealed`` or ``outdated_version``.
ONE_CLICK_VERDICTS: tuple[str, ...] = verdicts.STATUTE_CHECKER_VERDICTS["correct"]
#: The class of a card whose statute 这些都没问题 may mark (read by the button's JavaScript).
ONE_CLICK_CLASS = "ann-found"

#: Card styles (global, passed to ``launch`` with the tab's layout CSS).
CARD_CSS = """
.ann-card { --block-background-fill: #ffffff; background: #ffffff !important; border: 1px solid #d0d7de !important;
  border-radius: 8px !important; margin: 3px 0 !important; gap: 0 !important; }
.ann-card > * { background: #ffffff !important; }
.ann-statute { padding: 5px 10px 0 10px; line-height: 1.5; }
.ann-statute b { font-weight: 600; }
.ann-statute details { display: inline; margin-left: 6px; }
.ann-statute summary { cursor: pointer; color: #1d4ed8; font-size: 0.9em; display: inline; }
.ann-statute .ann-law-text { white-space: pre-wrap; margin: 6px 0; color: #374151; line-height: 1.6; }
.ann-mark { padding: 2px 8px 6px 8px !important; }
.ann-mark .wrap { gap: 4px !important; }
.ann-mark label { padding: 1px 7px !important; font-size: 0.85em !important; }
.ann-mark label:has(input[value="correct"]:checked) { background: #e3f6e8 !important; border-color: #8fd3a3 !important; }
.ann-mark label:has(input[value^="wrong"]:checked) { background: #fde4e4 !important; border-color: #f19a9a !important; }
.ann-slot-note { color: #4b5563; font-size: 0.9em; margin: 2px 0; }
.ann-slot-tools { gap: 6px !important; align-items: center; }
.ann-count { color: #6b7280; font-size: 0.85em; text-align: right; margin-top: -4px; }
.ann-count.over { color: #b91c1c; font-weight: 600; }
"""


def _lenient_preprocess(field: gr.Number, payload: float | None) -> float | None:
    """``gr.Number.preprocess`` without its range check (the validator reports the range)."""
    return None if payload is None else field.round_to_precision(payload, field.precision)


def score_field(label: Any, elem_id: str, score_range: tuple[int, int] | None = None) -> gr.Number:
    """An empty 0–10 score (Rel, T_LC): the page's input gets ``min``/``max``, and a value out of range
    reaches the event's validator, which marks this field and only this one (:func:`score_problem`).

    ``gr.Number`` with ``minimum``/``maximum`` raises in its ``preprocess``, before any validator runs,
    and Gradio then marks every output as failed with an English toast, so this field's ``preprocess``
    is replaced by one without the check. (A subclass would do the same, but Gradio writes a ``.pyi``
    stub next to the module of every component class it sees defined.)
    ``score_range``: the score's (a row of :data:`~eval_ui.human_scores.HUMAN_SCORE_TABLE`), else 0–10.
    """
    low, high = score_range or SCORE_RANGE
    field = gr.Number(None, label=label, minimum=low, maximum=high, elem_id=elem_id)
    field.preprocess = types.MethodType(_lenient_preprocess, field)  # type: ignore[method-assign]
    return field


def score_problem(value: object, score_range: tuple[int, int] | None = None) -> str:
    """Why ``value`` is not a score, in no language (a field's validation message, which Gradio shows as
    plain text and does not translate): empty when it is a score, or empty.

    >>> score_problem(11)
    '11 ∉ [0, 10]'
    >>> score_problem(None), score_problem(7.5)
    ('', '')
    """
    low, high = score_range or SCORE_RANGE
    if value is None or value == "":
        return ""
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = float("nan")
    if isinstance(value, bool) or not low <= number <= high:
        shown = (
            "?" if isinstance(value, bool) or number != number else str(value)[:20]
        )  # no word of a language
        return f"{shown} ∉ [{low}, {high}]"
    return ""


def score_message(value: object, score_range: tuple[int, int] | None = None) -> Message | None:
    """:func:`score_problem` as a message in words (``annotate.score_problem``), None for a score."""
    if not score_problem(value, score_range):
        return None
    low, high = score_range or SCORE_RANGE
    return message("annotate.score_problem", value=str(value)[:20], low=low, high=high)


def text_problem(text: str | None, limit: int, what: Any = None) -> str:
    """Why ``text`` is too long for its field, in no language (a field's validation message: the page's
    counter under the field says it in words): empty when it fits; it is never cut. ``what`` is the
    field's name for :func:`text_message`.

    >>> text_problem("好" * 12, 10)
    '12 > 10'
    """
    n = len(text or "")
    return f"{n:,} > {limit:,}" if n > limit else ""


def text_message(text: str | None, limit: int, what: str = "annotate.the_comment") -> Message | None:
    """:func:`text_problem` in words (``annotate.text_problem``; ``what``: the catalogue key of the field's
    name), None when the text fits.

    >>> str(text_message("好" * 12, 10))
    '备注有 12 字，上限 10 字。请删减，不会自动截断。'
    """
    n = len(text or "")
    if n <= limit:
        return None
    return message("annotate.text_problem", what=message(what), n=f"{n:,}", limit=f"{limit:,}")


def validations(problems: Sequence[str]) -> list[dict]:
    """``gr.validate`` results, one per input: a problem marks its field, an empty string passes."""
    return [gr.validate(not p, p) for p in problems]


# --------------------------------------------------------------------------- statute slots


def card_html(statute: CitedStatute, show_checker: bool) -> str:
    """One statute's card: its key, the checker's verdict when enabled, its text behind a click."""
    verdict = badge(statute.verdict, "ll-badge") if show_checker else ""
    body = (
        f'<div class="ann-law-text" lang="zh-CN">{esc(statute.text)}</div>'
        if statute.text
        else f'<div class="ann-slot-note">{note_html(statute.note)}</div>'
    )
    found = f" {ONE_CLICK_CLASS}" if statute.verdict in ONE_CLICK_VERDICTS else ""
    return (
        f'<div class="ann-statute{found}"><b lang="zh-CN">{esc(statute.key)}</b> {verdict}'
        f"<details><summary>{say('annotate.view_statute')}</summary>{body}</details></div>"
    )


def note_html(note: Message | str | None) -> str:
    """A statute's note (:class:`~eval_ui.statutes.CitedStatute`) in the reader's language; its fields (a
    law's name, an article) are legal content, shown in Chinese."""
    if isinstance(note, Message):
        return say(note.key, **{k: zh(v) for k, v in note.fields.items()})
    return zh(note) if note else ""


def slots_note(cited: Sequence[CitedStatute], labels: Mapping[str, str] | None = None) -> str:
    """The line above an answer's cards: how many it cites, and what the form cannot list."""
    if not cited:
        return f'<div class="ann-slot-note">{say("annotate.cites_none")}</div>'
    parts = [say("annotate.cites", n=len(cited))]
    if labels is not None:
        unlabelled = sum(1 for s in cited if labels.get(s.key) not in verdicts.STATUTE_LABELS)
        if unlabelled:
            parts.append(say("annotate.cites_unlabelled", n=unlabelled))
    if len(cited) > SLOTS:
        rest = [s.key for s in cited[SLOTS:]]
        parts.append(say("annotate.cites_more", slots=SLOTS, rest=len(rest)))
        parts.append(zh("; ".join(rest)))
    return f'<div class="ann-slot-note">{" ".join(parts)}</div>'


def labels_from_slots(cited_keys: Sequence[str], values: Sequence[Any]) -> dict[str, str]:
    """The labels the slots hold for ``cited_keys`` (slot *i* is statute *i*; empty slots are unlabelled).

    >>> labels_from_slots(["a", "b", "c"], ["wrong", None, "correct", "correct"])
    {'a': 'wrong', 'c': 'correct'}
    """
    out = {}
    for key, value in zip(cited_keys, values, strict=False):
        if value in (None, ""):
            continue
        if value not in verdicts.STATUTE_LABELS:
            raise LabelError(message("annotate.unknown_label", value=repr(str(value)[:40]), statute=key))
        out[key] = value
    return out


def unlabelled_count(cited_keys: Sequence[str], labels: Mapping[str, str]) -> int:
    return sum(1 for key in cited_keys if labels.get(key) not in verdicts.STATUTE_LABELS)


class LabelError(ValueError):
    """A statute label the form does not offer; ``message`` says so in the reader's language."""

    def __init__(self, msg: Message) -> None:
        super().__init__(str(msg))
        self.message = msg


@dataclass
class StatuteSlots:
    """One answer's statute cards: per slot a group (shown when a statute fills it), its card and its label."""

    note: gr.HTML
    groups: list
    cards: list
    marks: list
    #: the events that change the labels in the page only (这些都没问题, 清除), to chain on
    page_edits: list = field(default_factory=list)

    def components(self) -> list:
        """The outputs :func:`fill_slots` fills, in its order (the note is a field of its own)."""
        return [*self.groups, *self.cards, *self.marks]


def build_slots(prefix: str, title: str) -> StatuteSlots:
    """The cards of one answer (ids ``{prefix}-card-{i}``, ``{prefix}-mark-{i}``), with "none of these is
    wrong" (``{prefix}-none-wrong``) and "clear" (``{prefix}-clear``), which act in the page only."""
    with gr.Row(elem_classes=["ann-slot-tools"]):
        note = gr.HTML("", elem_id=f"{prefix}-note", padding=False)
        none_wrong = gr.Button(
            t("annotate.none_wrong"),
            size="sm",
            variant="secondary",
            elem_id=f"{prefix}-none-wrong",
            min_width=120,
        )
        clear = gr.Button(t("annotate.clear"), size="sm", elem_id=f"{prefix}-clear", min_width=60, scale=0)
    groups, cards, marks = [], [], []
    for i in range(SLOTS):
        with gr.Group(visible=False, elem_classes=["ann-card"]) as group:
            cards.append(gr.HTML("", elem_id=f"{prefix}-card-{i + 1}", padding=False))
            marks.append(
                gr.Radio(
                    LABEL_CHOICES,
                    value=None,
                    label=f"{title} · {i + 1}",
                    show_label=False,
                    container=False,
                    elem_id=f"{prefix}-mark-{i + 1}",
                    elem_classes=["ann-mark"],
                )
            )
        groups.append(group)
    # In the page only: a statute already labelled keeps its label; an empty slot stays empty, and so
    # does one whose card the checker did not find (no ONE_CLICK_CLASS).
    found = f"document.querySelector('#{prefix}-card-' + (i + 1) + ' .{ONE_CLICK_CLASS}')"
    edits = [
        none_wrong.click(None, marks, marks, js=f"(...v) => v.map((x, i) => x || ({found} ? 'correct' : null))",
                         queue=False),
        clear.click(None, marks, marks, js="(...v) => v.map(() => null)", queue=False),
    ]  # fmt: skip
    return StatuteSlots(note, groups, cards, marks, edits)


def fill_slots(
    cited: Sequence[CitedStatute], labels: Mapping[str, str], show_checker: bool, slots: int = SLOTS
) -> list:
    """Updates for one answer's slots showing ``cited`` labelled as ``labels`` (other slots hidden, empty)."""
    shown = list(cited[:slots])
    groups = [gr.update(visible=i < len(shown)) for i in range(slots)]
    cards = [card_html(s, show_checker) for s in shown] + [""] * (slots - len(shown))
    marks = [labels.get(s.key) if labels.get(s.key) in verdicts.STATUTE_LABELS else None for s in shown] + [
        None
    ] * (slots - len(shown))
    return [*groups, *cards, *marks]


def blank_slots(slots: int = SLOTS) -> list:
    """Updates that hide and empty every slot of one answer."""
    return fill_slots([], {}, False, slots)


def named_slots(handler: Callable[..., Any], sides: Sequence[str]) -> Callable[..., Any]:
    """``handler`` (whose signature ends in ``*marks``) as seen by Gradio: one keyword parameter per
    slot, ``{side}_{n}`` (n from 1), default None, so an API caller names the statutes it labels and
    leaves the rest out. Gradio reads a handler's parameters from ``__signature__``.
    """
    signature = inspect.signature(handler)
    params = [p for p in signature.parameters.values() if p.kind is not p.VAR_POSITIONAL]
    params += [
        inspect.Parameter(f"{side}_{n}", inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None)
        for side in sides
        for n in range(1, SLOTS + 1)
    ]
    handler.__signature__ = signature.replace(parameters=params)  # type: ignore[attr-defined]
    return handler


def flatten(view_values: Sequence[tuple[str, Any]], slot_fields: Mapping[str, int]) -> tuple:
    """A view's outputs with each slot field (name → width) spread over its components; a kept
    (``gr.skip()``) slot field keeps every one of them."""
    out: list = []
    for name, value in view_values:
        if name in slot_fields:
            out.extend([gr.skip()] * slot_fields[name] if isinstance(value, dict) else value)
        else:
            out.append(value)
    return tuple(out)


def output_components(
    fields: Sequence[str],
    views: Mapping[str, Any],
    slots: Mapping[str, StatuteSlots],
    slot_fields: Mapping[str, int],
) -> list:
    """The components a view's ``fields`` go to, in order (what :func:`flatten` fills): a slot field
    (``left_slots``) is its slot pool's components, any other field its component in ``views``."""
    out: list = []
    for name in fields:
        if name in slot_fields:
            out.extend(slots[name.removesuffix("_slots")].components())
        else:
            out.append(views[name])
    return out


# --------------------------------------------------------------------------- in the page

#: A character counter under a text field (``n / limit``; red over the limit). ``__SEL__`` is the
#: field's textarea, ``__OUT__`` the counter's element id. Characters are counted as Python counts them.
COUNTER_JS = """
(() => {
  const seen = window.__annCounters = window.__annCounters || {};
  if (seen['__OUT__']) return;  // once per page, however often the component mounts
  seen['__OUT__'] = true;
  const LIMIT = __LIMIT__, OVER = __OVER__;  // [lang, class, text with {n}] per language
  const update = () => {
    const field = document.querySelector('__SEL__'), out = document.getElementById('__OUT__');
    if (!field || !out) return;
    const n = [...field.value].length;
    const text = n.toLocaleString('en') + ' / ' + LIMIT.toLocaleString('en');
    const over = n > LIMIT ? OVER.map(([lang, cls, words]) => ' <span class="' + cls + '" lang="' + lang + '">'
      + words.replace('{n}', (n - LIMIT).toLocaleString('en')) + '</span>').join('') : '';
    if (out.dataset.shown !== text + over) { out.dataset.shown = text + over; out.innerHTML = text + over; }
    out.classList.toggle('over', n > LIMIT);
  };
  document.addEventListener('input', update, true);
  setInterval(update, 500);  // a value set by the server fires no input event
  update();
})();
"""


#: The counter's words over the limit, per language (escaped: the counter sets them as HTML).
OVER_WORDS = [
    [lang, f"ll-lang-{code}", esc(catalogue_text("annotate.counter_over", code, n="{n}"))]
    for code, lang in ((ZH, "zh-CN"), (EN, "en"))
]


def counter(field_selector: str, elem_id: str, limit: int) -> gr.HTML:
    """``n / limit`` under a text field, kept up to date in the page."""
    js = (
        COUNTER_JS.replace("__LIMIT__", str(int(limit)))
        .replace("__OVER__", json.dumps(OVER_WORDS, ensure_ascii=False))
        .replace("__SEL__", field_selector)
        .replace("__OUT__", elem_id)
    )
    return gr.HTML(f'<div class="ann-count" id="{elem_id}">0 / {limit:,}</div>', js_on_load=js, padding=False)
