"""The 标注 / Annotation tab: lawyers compare two anonymous answers and label their hallucinations.

An annotator signs in (Gradio's login form from a users file, or Hugging Face on a Space, where only
invited accounts and members of the listed organisations get in: anyone else reads that they have not
been invited; see :mod:`eval_ui.service`), sees their progress, and gets their next item (when they
have none left, items short of annotators or left untouched by others are topped up first): the
question, the two answers left and right (system names hidden, the order random per annotator and
item), and under each answer one card per statute it cites, with its own label (真实 Correct, 有误 Wrong or a kind of error:
:mod:`eval_ui.label_form`) and its real text one click away (the checker's verdicts hidden unless the
setting ``annotation_show_checker`` is on). 这些都没问题 marks the statutes not yet labelled, and found
by the checker as cited, as correct in one click (never an article that does not exist); a statute left
unlabelled is saved as unlabelled (missing data, never "correct"), and the message after saving says
how many. What the annotator marks and types is kept as their draft of the item (:func:`keep_draft`,
in the store) and shown again with it, e.g. after a reload, until the label is saved. Rel and T_LC (0–10) are optional; an out-of-range score or an
over-long comment is refused on its own field (in numbers: Gradio shows a field's message untranslated)
and nothing is cut. Every text is in the reader's language (``annotate.*`` in lawluo/strings/annotate.yaml:
fixed texts as ``gr.I18n`` keys, messages with :func:`~lawluo.ui.i18n.say`); the items' questions, answers
and statutes, legal content, stay Chinese in an element that says so.

The verdict bar (status, verdict buttons, keys 1–4, back/skip/next, sign-out, the last message) stays
at the top of the window while the annotator scrolls (:data:`LAYOUT_CSS`), so a verdict is one click
or key away whatever they are reading. Keys 1–4 work wherever the focus is, except in a text or
number field. 跳过 Skip puts an item aside, 上一条 Back reopens their earlier labels to edit (the store
keeps every version). An admin also imports items and exports labels (both in the audit log; the
invitations and the log itself are in the admin's 裁决 / Adjudication tab, on ``/admin``); the admin's
part of the tab is hidden from everyone else, and the tab shows no form when nobody can sign in. Nobody
sees another annotator's labels. The tab is the page ``/annotate``; ``/annotate?item=<id>`` opens that
item when it is the annotator's (:func:`open_linked`).

A held-down key or a hasty second click labels one item, not the next one too: the page ignores key
repeats, disables the verdict buttons while a label is being saved and for :data:`GRACE_MS` after a new
item is shown (:data:`KEYS_JS`). The server does not refuse fast labels: a double submit of one item is
already idempotent, and a minimum time would also refuse scripted API use and quick re-saves; each
label records ``seconds_spent`` for the analysis to filter on. Text from items, labels and names is
shown escaped (HTML, and Markdown in the status line), so none of it can make the browser fetch an
image or anything else.

Handlers are plain functions; the :class:`~eval_ui.service.AnnotationService` is bound first with
:func:`bind` and the caller is identified from the request on every call (never from state), so the HTTP
API enforces the same rules as the page. They never raise: a problem (not signed in, a store error) is
a message and the form keeps what was typed.

Through the API (``gradio_client`` with ``auth=(name, password)``); a verdict takes the four scores,
the comment, then one label per statute card: ``left_1`` … ``left_30``, ``right_1`` … (slot *n* is the
*n*-th card of that answer as the item shows it; a slot left out is unlabelled)::

    client.predict(api_name="/annotation_open")                 # the next item, as the page shows it
    client.predict(8, 6, None, 3, "", left_1="wrong_number", right_2="correct", api_name="/label_left")
    client.predict(handle_file("items.jsonl"), api_name="/import_items")        # admins only
    client.predict("parquet", "raw", False, api_name="/export_labels")          # admins only
"""

# no `from __future__ import annotations`: Gradio reads the handlers' gr.Request / gr.OAuthProfile hints at runtime

import inspect
import json
import logging
import re
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial, wraps
from pathlib import Path
from typing import Any, get_type_hints

import gradio as gr

from lawluo.i18n import Message, message
from lawluo.jsonl import JSONLError
from lawluo.ui.copy import both_markdown, languages
from lawluo.ui.i18n import Html, say, t
from lawluo.ui.render import CSS, data, data_lang, esc, notice, without_paths
from lawluo.ui.views import KEEP, Keep, View

from . import label_form, verdicts
from .auth import UsersError
from .items import read_items
from .label_form import MAX_COMMENT_CHARS, SLOTS, score_field
from .scratch import scratch_folder
from .service import AnnotationService, Identity, profile_orgs
from .store import (
    EXPORT_FORMATS,
    MAX_DRAFT_BYTES,
    AnswerLabel,
    Assignment,
    Draft,
    LabelInput,
    StoreError,
    StoreWriteError,
)

logger = logging.getLogger(__name__)

TAB_LABEL = t("tab.annotate")
#: The verdict buttons (shown verdict, text with its key: a ``gr.I18n`` key, one per button) and each
#: verdict's name in messages (a catalogue key), from eval_ui/verdicts.py.
VERDICT_BUTTONS = tuple((v.shown, t(f"{v.name_key}.button")) for v in verdicts.VERDICT_TABLE)
SHOWN_NAMES = {v.shown: v.short_key for v in verdicts.VERDICT_TABLE}
#: key → the id of the verdict button it presses (read by KEYS_JS)
VERDICT_KEYS = {v.key: f"ann-verdict-{v.shown}" for v in verdicts.VERDICT_TABLE}
MAX_IMPORT_BYTES = 20_000_000
MAX_IMPORT_ITEMS = 20_000
SCORE_FIELDS = ("left_rel", "left_tlc", "right_rel", "right_tlc")
#: The query parameter of a deep link to an item (``/annotate?item=<item id>``), and the longest id read.
ITEM_PARAM = "item"
MAX_ITEM_ID_CHARS = 200

ANNOTATE_CSS = (
    CSS
    + """
.ann-text { white-space: pre-wrap; line-height: 1.7; padding: 10px 12px; border: 1px solid #d0d7de;
  border-radius: 8px; background: #fafbfc; max-height: 520px; overflow-y: auto; }
.ann-head { font-weight: 600; margin: 4px 0; }
.ann-note { color: #6b7280; font-size: 0.9em; }
"""
)

#: The page's layout rules for this tab (global: ``app.py`` passes them to ``launch``). The verdict
#: bar sticks to the top of the window; ``.gradio-container`` clips instead of hiding its overflow,
#: which would make it the sticky bar's scroll container (one that never scrolls). On a phone (≤ 700 px
#: wide) the bar is compact, at most about 120 px of an 844-px screen: the status on one line, the four
#: verdicts side by side, Skip / Back / Next / Sign out in one thin row (its rows' boxes dissolved with
#: ``display: contents``, so their buttons share lines), and the last message in at most about two lines
#: (a longer one scrolls inside it).
LAYOUT_CSS = (
    label_form.CARD_CSS
    + """
.gradio-container { overflow: clip !important; }
#ann-bar { position: sticky; top: 0; z-index: 40; background: var(--background-fill-primary, #fff);
  border-bottom: 1px solid #e5e7eb; padding: 6px 0 4px 0; gap: 4px !important; }
#ann-bar .ann-row { align-items: center; gap: 6px !important; }
#ann-status p { margin: 0 !important; }
#ann-message:not(:has(.ll-notice)) { display: none; }
#ann-message .ll-notice { margin: 2px 0; padding: 4px 10px; }
#ann-verdicts button { min-height: 38px; }
@media (max-width: 700px) {
  #ann-bar { flex-direction: row !important; flex-wrap: wrap !important; align-items: stretch !important;
    padding: 2px 0 !important; gap: 2px !important; }
  #ann-nav, #ann-verdicts:not(.hidden):not(.hide) { display: contents !important; }
  #ann-status { order: 1; flex: 1 1 100% !important; font-size: 0.72em; padding: 0 !important; min-height: 0 !important; }
  #ann-status * { line-height: 1.3 !important; }
  #ann-status, #ann-status > * { overflow: visible !important; }  /* no scroll region a keyboard cannot reach */
  #ann-verdicts > button[id^="ann-verdict-"] { order: 2; flex: 1 1 22% !important; min-width: 0 !important;
    min-height: 30px !important; font-size: 0.72em !important; line-height: 1.15 !important; padding: 1px 2px !important; }
  #ann-nav > button, #ann-verdicts > #ann-skip { order: 3; flex: 1 1 20% !important; min-width: 0 !important;
    min-height: 20px !important; font-size: 0.68em !important; line-height: 1.1 !important; padding: 1px 2px !important; }
  #ann-message { order: 4; flex: 1 1 100% !important; max-height: 2.25em !important; overflow-y: auto !important; }
  #ann-message .ll-notice { margin: 0 !important; padding: 0 6px !important; font-size: 0.72em; line-height: 1.25; }
  #ann-message > * { padding-top: 0 !important; padding-bottom: 0 !important; margin-top: 0 !important; }
}
"""
)

#: Milliseconds a newly shown item ignores verdicts: a held key or a second click meant for the item
#: just saved must not label one nobody has read.
GRACE_MS = 1000
#: Milliseconds after the last edit in the form that its draft is kept (one save per pause in typing).
DRAFT_MS = 400

#: Keys 1–4 press the verdict buttons wherever the focus is, except in a field that takes typing
#: (a text or number input, a textarea, a select, anything contenteditable): after clicking a
#: statute's label, 2 still means "right better". A verdict (key or click) is taken only when no
#: verdict is in flight and the item has been shown for GRACE_MS; the buttons are disabled meanwhile.
#: Auto-repeated keydowns (a held key, ``event.repeat``) are ignored, Enter on a focused button
#: included. A verdict the form's validator will refuse (a score outside its field's min/max, a
#: comment over its limit: the same rules as :func:`validate_form`) goes through without holding the
#: buttons: nothing is saved, Gradio marks the field at fault, and the annotator fixes it and presses
#: again. ``window.__annGuard.settled()`` (SETTLED_JS, after every event that shows an item) starts
#: the grace period and, when a new item is shown below the fold, scrolls it into view.
KEYS_JS = (
    """
if (!window.__annGuard) {
  const GRACE_MS = __GRACE_MS__, MAX_BUSY_MS = 120000, MAX_COMMENT = __MAX_COMMENT__, DRAFT_MS = __DRAFT_MS__;
  const TYPING = ['text', 'number', 'password', 'email', 'search', 'url', 'tel', 'date', 'time',
    'datetime-local', 'month', 'week'];
  const guard = window.__annGuard = {busy: false, readyAt: 0, timer: null, question: ''};
  const verdictButton = (el) => (el && el.closest ? el.closest('button[id^="ann-verdict-"]') : null);
  const typing = (el) => {
    const tag = (el.tagName || '').toLowerCase();
    if (tag === 'textarea' || tag === 'select' || el.isContentEditable) return true;
    return tag === 'input' && TYPING.includes((el.type || 'text').toLowerCase());
  };
  const refused = () => {  // the field the validator will refuse (checked before the click holds the buttons)
    for (const input of document.querySelectorAll('#ann-form input[type=number]')) {
      if (input.value === '') continue;
      const x = Number(input.value);
      const lo = input.min === '' ? -Infinity : Number(input.min), hi = input.max === '' ? Infinity : Number(input.max);
      if (!(x >= lo && x <= hi)) return input;
    }
    const comment = document.querySelector('#ann-comment textarea');
    return comment && [...comment.value].length > MAX_COMMENT ? comment : null;
  };
  const setDisabled = (on) => document.querySelectorAll('button[id^="ann-verdict-"]').forEach((b) => {
    b.disabled = on;
  });
  const holdFor = (ms) => {
    clearTimeout(guard.timer);
    guard.readyAt = performance.now() + ms;
    setDisabled(true);
    guard.timer = setTimeout(() => { guard.busy = false; setDisabled(false); }, ms);
  };
  const showNewItem = () => {  // a new question below the sticky bar's bottom edge is scrolled up to it
    const q = document.getElementById('ann-question'), bar = document.getElementById('ann-bar');
    if (!q || !bar || q.innerText === guard.question) return;
    guard.question = q.innerText;
    const gap = q.getBoundingClientRect().top - bar.getBoundingClientRect().bottom - 8;
    if (gap < 0) window.scrollBy(0, gap);
  };
  guard.settled = () => { guard.busy = false; holdFor(GRACE_MS); setTimeout(showNewItem, 60); };
  // an edit in the form (typing, pasting, a statute's label, a score) is kept as the item's draft once
  // the annotator pauses for DRAFT_MS: the hidden draft button sends the whole form (keep_draft)
  const keepDraft = () => {
    clearTimeout(guard.draftTimer);
    guard.draftTimer = null;
    const button = document.getElementById('ann-draft-save');
    if (button) button.click();
  };
  guard.draftSoon = () => { clearTimeout(guard.draftTimer); guard.draftTimer = setTimeout(keepDraft, DRAFT_MS); };
  document.addEventListener('input', (event) => {
    const form = document.getElementById('ann-form');
    if (form && form.contains(event.target)) guard.draftSoon();
  }, true);
  document.addEventListener('click', (event) => {
    if (!verdictButton(event.target)) return;
    if (guard.draftTimer) keepDraft();  // what was typed just before: kept first, then the verdict
    if (guard.busy || performance.now() < guard.readyAt) {
      event.preventDefault();
      event.stopImmediatePropagation();  // capture phase: Gradio's own handler never sees it
      return;
    }
    const bad = refused();
    if (bad) {  // the validator answers on that field, brought into view; the buttons stay usable
      bad.scrollIntoView({block: 'center'});
      return;
    }
    guard.busy = true;
    setTimeout(() => { if (guard.busy) setDisabled(true); }, 0);  // after this click has reached Gradio
    clearTimeout(guard.timer);
    guard.timer = setTimeout(() => guard.settled(), MAX_BUSY_MS);  // no answer: usable again, later
  }, true);
  document.addEventListener('keydown', (event) => {
    if (typing(event.target)) return;
    if (event.repeat) {  // a held key: neither a shortcut nor Enter on a focused verdict button repeats
      if (Object.hasOwn(__VERDICT_KEYS__, event.key) || verdictButton(event.target)) event.preventDefault();
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const ids = __VERDICT_KEYS__;
    const button = ids[event.key] && document.getElementById(ids[event.key]);
    if (button && button.offsetParent !== null) { event.preventDefault(); button.click(); }
  }, true);
}
""".replace("__GRACE_MS__", str(GRACE_MS))
    .replace("__DRAFT_MS__", str(DRAFT_MS))
    .replace("__VERDICT_KEYS__", json.dumps(VERDICT_KEYS))
    .replace("__MAX_COMMENT__", str(MAX_COMMENT_CHARS))
)
#: The form's fields as :func:`keep_draft` reads them: one JSON text (the four scores as typed, the
#: comment, each statute slot's label or null, the left answer's first), passed with the state.
DRAFT_FORM_JS = (
    """(state, form) => {
  const value = (selector) => { const field = document.querySelector(selector); return field ? field.value : null; };
  const marks = [];
  for (const side of ['left', 'right']) for (let n = 1; n <= __SLOTS__; n++) {
    const box = document.querySelector('#ann-' + side + '-mark-' + n + ' input:checked');
    marks.push(box ? box.value : null);
  }
  const scores = ['left-rel', 'left-tlc', 'right-rel', 'right-tlc'].map((f) => value('#ann-' + f + ' input'));
  return [state, JSON.stringify({scores, comment: value('#ann-comment textarea') || '', marks})];
}"""
).replace("__SLOTS__", str(SLOTS))
#: Keep the draft soon (after the page's own edits of the labels: 这些都没问题, 清除).
DRAFT_SOON_JS = "() => { if (window.__annGuard) window.__annGuard.draftSoon(); }"
#: Run after every event that shows an item: the grace period before it takes a verdict.
SETTLED_JS = "() => { if (window.__annGuard) window.__annGuard.settled(); }"
#: Sign out of Gradio's login (its ``/logout`` route, next to the page): this browser only.
SIGN_OUT_JS = (
    "() => { window.location.assign(new URL('logout?all_session=false', window.location.href).href); }"
)


def bind(fn: Callable[..., Any], *bound: Any) -> Callable[..., Any]:
    """``fn`` with its first arguments fixed to ``bound`` (the service…), keeping the hints Gradio reads;
    a :class:`~lawluo.ui.views.View` it returns becomes the event's outputs (every field, in order).

    ``functools.partial`` would hide them: Gradio looks for ``gr.Request`` / ``gr.OAuthProfile`` hints
    with ``typing.get_type_hints``, which finds none on a partial object, and would then count the
    request as one of the event's inputs.
    """
    hints = get_type_hints(fn)
    for name in list(inspect.signature(fn).parameters)[: len(bound)]:
        hints.pop(name, None)

    @wraps(fn)
    def handler(*args: Any, **kwargs: Any) -> Any:
        result = fn(*bound, *args, **kwargs)
        return result.outputs() if isinstance(result, View) else result

    handler.__signature__ = inspect.signature(partial(fn, *bound))  # type: ignore[attr-defined]
    handler.__annotations__ = hints
    del handler.__wrapped__  # inspect.signature would follow it back to fn's own parameters
    return handler


# --------------------------------------------------------------------------- rendering


def md_data(value: object) -> Html:
    """:func:`data` inside Markdown (the status line): Markdown's punctuation backslashed too."""
    return Html(f'<span lang="{data_lang(value)}">{md_text(value)}</span>')


def notice_html(html_text: str, kind: str = "info") -> str:
    """A message box around HTML already escaped (:func:`~lawluo.ui.i18n.say`'s output); ``kind`` is
    ``info``, ``warn`` or ``error``."""
    return notice(Html(html_text), kind)


def error_text(exc: BaseException) -> Message | str:
    """What an exception says, for a field of :func:`say`: its ``message`` (a :class:`Message`) when it
    has one, else its text without the server's paths."""
    found = getattr(exc, "message", None)
    return found if isinstance(found, Message) else without_paths(str(exc))


def error_field(exc: BaseException) -> Message | Html:
    """:func:`error_text` as a field: a message, or the exception's own text in an element of its
    language (a technical text is not translated)."""
    found = error_text(exc)
    return found if isinstance(found, Message) else data(found)


def _join(*parts: str) -> Html:
    """Messages (:func:`say`'s HTML) side by side."""
    return Html(" ".join(p for p in parts if p))


def _text_block(title: str, text: str) -> str:
    """A heading (HTML: :func:`say`) over a text from the data (the question, an answer), which keeps its
    language on either page."""
    return (
        f'<div class="ann-head">{title}</div><div class="ann-text" lang="{data_lang(text)}">{esc(text)}</div>'
    )


def _say_md(msg: Message) -> Html:
    """A message for a Markdown value (the status line): its text fields shown as they are."""
    return say(msg.key, **{k: md_data(v) if isinstance(v, str) else v for k, v in msg.fields.items()})


def _status(who: Identity | None, service: AnnotationService) -> str:
    if who is None:
        return _say_md(sign_in_help(service))
    done, assigned = service.store.progress(who.name)
    role = message("annotate.role.admin" if who.is_admin else "annotate.role.annotator")
    return say("annotate.status", name=md_data(who.name), role=role, done=done, assigned=assigned)


def md_text(value: object) -> str:
    r"""``value`` as literal text inside Markdown: Markdown's punctuation backslashed and HTML escaped,
    so a name like ``![x](//host/p.png)`` is shown, not fetched as an image (CommonMark §2.4).

    >>> print(md_text("![x](//evil/p.png) <b>"))
    \!\[x\]\(//evil/p\.png\) &lt;b&gt;
    """
    return esc(_MD_PUNCTUATION.sub(r"\\\g<0>", "" if value is None else str(value)))


_MD_PUNCTUATION = re.compile(r"[\\`*_{}\[\]()#+\-.!|~]")  # `<>&"'` are escaped as HTML

#: What the tab shows, once and instead of the form, when nobody can sign in (a Markdown value: a
#: ``gr.I18n`` key, translated in the browser).
NOT_CONFIGURED = t("annotate.not_configured")


def not_invited(name: str) -> Message:
    """What a Hugging Face account that is signed in but not invited reads (``str()``: in Chinese)."""
    shown = " ".join(str(name).split())[:60]  # one line, no control characters, not a flood
    return message("annotate.not_invited", name=shown)


def refusal(service: AnnotationService, request: gr.Request | None, profile: Any = None) -> Message:
    """Why a request :func:`identify` refused is refused: not invited (signed in with Hugging Face), or
    how to sign in (a :class:`Message`: ``say()`` renders it, ``str()`` is its Chinese text)."""
    oauth_name = getattr(profile, "username", None) if profile is not None else None
    if service.not_invited(oauth_name):
        return not_invited(oauth_name)
    return sign_in_help(service)


def sign_in_help(service: AnnotationService) -> Message:
    """One plain sentence: how to sign in, or (not configured) what the admin has to do."""
    if service.sign_in == "oauth":
        return message("annotate.sign_in.oauth")
    if service.sign_in == "password":
        return message("annotate.sign_in.password")
    return message("annotate.sign_in.none")


# --------------------------------------------------------------------------- views


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
    left_rel: float | None | Keep = KEEP
    left_tlc: float | None | Keep = KEEP
    right_rel: float | None | Keep = KEEP
    right_tlc: float | None | Keep = KEEP
    comment: str | Keep = KEEP
    draft: str | Keep = KEEP  # the line under the comment about its draft (emptied when an item is shown)
    state: dict | Keep = KEEP
    admin: Any = KEEP  # gr.update(visible=…)

    def outputs(self, names: Sequence[str] | None = None) -> tuple:
        names = self.names() if names is None else tuple(names)
        return label_form.flatten(zip(names, super().outputs(names), strict=True), SLOT_WIDTHS)


#: The components every view fills, in this order (the handlers' outputs; a slot field is many).
VIEW_FIELDS = AnnotationView.names()
SLOT_WIDTHS = {"left_slots": 3 * SLOTS, "right_slots": 3 * SLOTS}
#: What the HTTP API returns for an event that shows an item, in order: the view's fields without the
#: state and the layout blocks (form, verdict row, admin, each card's group), a slot field as its
#: cards' HTML then their labels (``left_card_1`` … ``left_mark_1`` …).
API_OUTPUTS = tuple(
    part
    for name in VIEW_FIELDS
    if name not in ("state", "admin", "form", "verdict_row")
    for part in (
        [f"{name[:-6]}_card_{n}" for n in range(1, SLOTS + 1)]
        + [f"{name[:-6]}_mark_{n}" for n in range(1, SLOTS + 1)]
        if name in SLOT_WIDTHS
        else [name]
    )
)


def _blank(
    service: AnnotationService,
    who: Identity | None,
    message: str,
    kind: str = "info",
    status: str | None = None,
) -> AnnotationView:
    """No item: the status (``status`` in place of the usual line) and the message (HTML: :func:`say`);
    the form is hidden and emptied."""
    return AnnotationView(
        status=_status(who, service) if status is None else status,
        message=notice_html(message, kind) if message else "",
        verdict_row=gr.update(visible=False), form=gr.update(visible=False),
        question="", reference="", left="", right="", left_note="", right_note="",
        left_slots=label_form.blank_slots(), right_slots=label_form.blank_slots(),
        left_rel=None, left_tlc=None, right_rel=None, right_tlc=None, comment="", draft="",
        state={},
        admin=gr.update(visible=bool(who and who.is_admin)),
    )  # fmt: skip


def _sides(a: Assignment) -> tuple[str, str]:
    """The item's answer sides ('a'/'b') shown left and right."""
    return ("b", "a") if a.swapped else ("a", "b")


def _view(
    service: AnnotationService, who: Identity, a: Assignment, text: str = "", kind: str = "info"
) -> AnnotationView:
    """Show assignment ``a``; pre-filled from the annotator's current label when there is one. ``message``
    is HTML (:func:`say`)."""
    label = service.store.label(who.name, a.item.id)
    left_side, right_side = _sides(a)
    fill: dict[str, Any] = {"left_labels": {}, "right_labels": {}, "comment": ""}
    fill |= dict.fromkeys(SCORE_FIELDS)
    if label is not None:
        labels = label["answer_labels"]
        for shown, side in (("left", left_side), ("right", right_side)):
            mine = labels.get(side) or {}
            fill[f"{shown}_labels"] = dict(mine.get("statutes") or {})
            fill[f"{shown}_rel"], fill[f"{shown}_tlc"] = mine.get("rel"), mine.get("tlc")
        fill["comment"] = label["comment"] or ""
        earlier = message(SHOWN_NAMES[a.to_shown(label["verdict"])])
        text = _join(text, say("annotate.editing", version=label["version"], verdict=earlier))
        if labels.get("legacy"):
            text = _join(text, say("annotate.legacy"))
    text = _join(text, _restore_draft(service, who, a, fill, (left_side, right_side)))
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
        reference = _text_block(say("annotate.reference_answer"), a.item.reference or "—")
        if a.item.statutes:
            reference += _text_block(say("annotate.reference_statutes"), "\n".join(a.item.statutes))
    slots = {
        shown: label_form.fill_slots(cited[shown], fill[f"{shown}_labels"], service.show_checker)
        for shown in ("left", "right")
    }
    notes = {
        shown: label_form.slots_note(cited[shown], fill[f"{shown}_labels"] if label is not None else None)
        for shown in ("left", "right")
    }
    return AnnotationView(
        status=_status(who, service),
        message=notice_html(text, kind) if text else "",
        verdict_row=gr.update(visible=True),
        form=gr.update(visible=True),
        question=_text_block(heading, a.item.question),
        reference=reference,
        left=_text_block(say("annotate.left"), a.left),
        right=_text_block(say("annotate.right"), a.right),
        left_note=notes["left"],
        right_note=notes["right"],
        left_slots=slots["left"],
        right_slots=slots["right"],
        left_rel=fill["left_rel"],
        left_tlc=fill["left_tlc"],
        right_rel=fill["right_rel"],
        right_tlc=fill["right_tlc"],
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
        fill[f"{shown}_rel"], fill[f"{shown}_tlc"] = mine["rel"], mine["tlc"]
    fill["comment"] = draft["comment"]
    when = time.strftime("%H:%M", time.gmtime(draft["updated_at"]))
    return say("annotate.draft_restored", when=when)


def _next(service: AnnotationService, who: Identity, text: str = "", kind: str = "info") -> AnnotationView:
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
        return _blank(service, who, _join(text, why), kind)
    return _view(service, who, a, text, kind)


def _keep(text: str, kind: str = "error") -> AnnotationView:
    """A message (HTML: :func:`say`); every other component keeps what it shows (nothing typed is lost)."""
    return AnnotationView(message=notice_html(text, kind))


def _store_failed(exc: BaseException) -> Html:
    return say("annotate.store_failed", error=error_field(exc))


def identify(service: AnnotationService, request: gr.Request | None, profile: Any = None) -> Identity | None:
    """Who sent the request (:meth:`AnnotationService.identify`); the profile's organisations count."""
    username = getattr(request, "username", None) if request is not None else None
    oauth_name = getattr(profile, "username", None) if profile is not None else None
    orgs = profile_orgs(profile)
    if orgs:
        return service.identify(username, oauth_name, orgs)
    return service.identify(username, oauth_name)  # a stand-in service may take just the two names


# --------------------------------------------------------------------------- handlers


def open_annotation(
    service: AnnotationService, request: gr.Request, profile: gr.OAuthProfile | None = None
) -> AnnotationView:
    """On page load (and after signing in): who is here, their progress and their next item."""
    try:
        who = identify(service, request, profile)
        if who is None:
            why = refusal(service, request, profile)
            return _blank(service, None, say(why), "warn", status=_say_md(why))
        return _next(service, who)
    except (StoreError, UsersError) as exc:
        return _blank(service, None, _store_failed(exc), "error")
    except Exception:
        logger.exception("annotation: open failed")
        return _blank(service, None, say("annotate.went_wrong"), "error")


def linked_item(request: gr.Request | None) -> str | None:
    """The item id of the page's deep link (``/annotate?item=<id>``: :data:`ITEM_PARAM`), or None. The
    browser sends the page's query string with every event, so only the page-load event reads it."""
    params = getattr(request, "query_params", None) if request is not None else None
    value = params.get(ITEM_PARAM) if params is not None else None
    value = (value or "").strip()
    return value[:MAX_ITEM_ID_CHARS] if value else None


def open_linked(
    service: AnnotationService, request: gr.Request, profile: gr.OAuthProfile | None = None
) -> AnnotationView:
    """On page load: the item of the page's deep link (:func:`linked_item`) when it is assigned to the
    annotator (labelled or not: a labelled one opens to edit, as 上一条 Back opens it), else their next item
    with a message that the linked one is not theirs (whether it exists is not said). Without a link, or
    for someone who is not signed in, what :func:`open_annotation` shows."""
    item_id = linked_item(request)
    if item_id is None:
        return open_annotation(service, request, profile)
    try:
        who = identify(service, request, profile)
        if who is None:
            return open_annotation(service, request, profile)
        try:
            a = service.store.assignment(who.name, item_id)
        except StoreError:  # no such item, or not assigned to them
            a = None
        if a is None or a.status == "unassigned":  # an admin may read any item, but labels only their own
            shown = " ".join(item_id.split())[:60]
            return _next(service, who, say("annotate.link_not_yours", item=data(shown)), "warn")
        return _view(service, who, a, say("annotate.link_opened", item=data(item_id)))
    except (StoreError, UsersError) as exc:
        return _blank(service, None, _store_failed(exc), "error")
    except Exception:
        logger.exception("annotation: open of a linked item failed")
        return _blank(service, None, say("annotate.went_wrong"), "error")


def form_problems(scores: Sequence[Any], comment: str | None) -> list[str]:
    """The problem of each score field (Rel, T_LC of the left answer, then the right) and of the
    comment, in no language (a field's validation message: :func:`label_form.score_problem`); an empty
    string where there is none."""
    return [label_form.score_problem(v) for v in scores] + [
        label_form.text_problem(comment, MAX_COMMENT_CHARS)
    ]


def form_messages(scores: Sequence[Any], comment: str | None) -> list[Message]:
    """The form's problems (:func:`form_problems`) in words, for the message after a refused save."""
    found = [label_form.score_message(v) for v in scores]
    found.append(label_form.text_message(comment, MAX_COMMENT_CHARS))
    return [m for m in found if m is not None]


def validate_form(
    state: dict | None = None,
    left_rel: Any = None,
    left_tlc: Any = None,
    right_rel: Any = None,
    right_tlc: Any = None,
    comment: str | None = None,
    *marks: Any,
) -> list[dict]:
    """The verdict buttons' validator: a ``gr.validate`` per input, so Gradio marks the one field at
    fault (a score outside 0–10, a comment over the limit) and the label is not saved."""
    problems = form_problems([left_rel, left_tlc, right_rel, right_tlc], comment)
    return label_form.validations(["", *problems, *[""] * len(marks)])


def submit_label(
    service: AnnotationService,
    verdict_shown: str,
    request: gr.Request,
    profile: gr.OAuthProfile | None = None,
    state: dict | None = None,
    left_rel: float | None = None,
    left_tlc: float | None = None,
    right_rel: float | None = None,
    right_tlc: float | None = None,
    comment: str | None = None,
    *marks: str | None,
) -> AnnotationView:
    """Save the label of the item in ``state`` with ``verdict_shown`` (left/right/tie/both_bad), then go on.

    ``marks`` are the statute slots' labels, the left answer's :data:`SLOTS` first (missing ones are
    unlabelled). ``request`` and ``profile`` come first because Gradio fills them in by position.
    """
    try:
        who = identify(service, request, profile)
        if who is None:
            return _keep(say(refusal(service, request, profile)), "warn")
        item_id = (state or {}).get("item_id")
        if not item_id:
            return _keep(say("annotate.no_item_open"), "warn")
        problems = form_messages([left_rel, left_tlc, right_rel, right_tlc], comment)
        if problems:
            return _keep(say("annotate.not_saved", why=_join(*(say(m) for m in problems))))
        a = service.store.assignment(who.name, item_id)
        left_side, right_side = _sides(a)
        scores = [None if v in (None, "") else float(v) for v in (left_rel, left_tlc, right_rel, right_tlc)]
        marks = tuple(marks) + (None,) * (2 * SLOTS - len(marks))
        answers, unlabelled = {}, 0
        for n, (shown, side) in enumerate((("left", left_side), ("right", right_side))):
            keys = [s.key for s in service.statutes(item_id, side)]
            labels = label_form.labels_from_slots(keys[:SLOTS], marks[n * SLOTS : (n + 1) * SLOTS])
            unlabelled += label_form.unlabelled_count(keys, labels)
            answers[shown] = AnswerLabel(labels, scores[2 * n], scores[2 * n + 1])
        shown_at = float((state or {}).get("shown_at") or time.time())
        label = LabelInput(
            verdict_shown,
            left=answers["left"],
            right=answers["right"],
            comment=(comment or "").strip(),
            guideline_version=service.guideline_version,
            seconds_spent=round(max(0.0, time.time() - shown_at), 1),
        )
        saved = service.store.save_label(
            who.name, item_id, label, str(state.get("submission_id") or uuid.uuid4().hex)
        )
    except StoreWriteError as exc:  # the disk refused: the message says so in the reader's language
        logger.error("annotation: a label was not saved: %s", exc.__cause__)
        return _keep(say(error_text(exc)) if exc.message is not None else _store_failed(exc))
    except (StoreError, ValueError) as exc:
        found = error_text(exc)
        return _keep(say(found) if isinstance(found, Message) else say("annotate.not_saved", why=data(found)))
    except Exception:
        logger.exception("annotation: saving a label failed")
        return _keep(say("annotate.not_saved_wrong"))
    if saved.duplicate:
        note = say("annotate.saved_duplicate")
    elif not saved.changed:
        note = say("annotate.saved_unchanged")
    else:
        note = say("annotate.saved", verdict=message(SHOWN_NAMES[verdict_shown]), version=saved.version)
    if unlabelled and not saved.duplicate:
        note = _join(note, say("annotate.saved_unlabelled", n=unlabelled))
    return _next(service, who, note, "warn" if unlabelled else "info")


def keep_draft(
    service: AnnotationService,
    request: gr.Request,
    profile: gr.OAuthProfile | None = None,
    state: dict | None = None,
    form: str | None = None,
) -> str:
    """Keep what the form holds for the open item (``form``: :data:`DRAFT_FORM_JS`'s JSON of the page's
    fields) as the caller's draft (shown again with the item, e.g. after F5) and say so in one line under
    the comment. A score outside 0–10 is left out of the draft (the verdict's validator reports it on
    its field); a comment over the limit, or any label not from the form's choices, keeps no draft and
    says why. Page only (not in the HTTP API); never raises.

    The form's fields reach it as one JSON text read from the page, not as the fields themselves: an
    event that takes a field as input clears the error the verdict's validator showed on it.
    """
    try:
        left_rel, left_tlc, right_rel, right_tlc, comment, marks = _draft_form(form)
        who = identify(service, request, profile)
        item_id = (state or {}).get("item_id")
        if who is None or not item_id:
            return ""
        a = service.store.assignment(who.name, item_id)
        scores = [
            None if v in (None, "") or label_form.score_problem(v) else float(v)
            for v in (left_rel, left_tlc, right_rel, right_tlc)
        ]
        answers = {}
        for n, (shown, side) in enumerate(zip(("left", "right"), _sides(a), strict=True)):
            keys = [s.key for s in service.statutes(item_id, side)]
            labels = label_form.labels_from_slots(keys[:SLOTS], marks[n * SLOTS : (n + 1) * SLOTS])
            answers[shown] = AnswerLabel(labels, scores[2 * n], scores[2 * n + 1])
        draft = Draft(answers["left"], answers["right"], comment or "")
        kept = service.store.save_draft(who.name, item_id, draft, int((state or {}).get("version") or 0))
    except (StoreError, ValueError) as exc:
        return _draft_note(say("annotate.draft_not_kept", why=error_field(exc)), "over")
    except Exception:
        logger.exception("annotation: keeping a draft failed")
        return _draft_note(say("annotate.draft_not_kept_wrong"), "over")
    if not kept:
        return ""
    if draft.is_empty():
        return _draft_note("")
    when = time.strftime("%H:%M:%S", time.gmtime())
    left_out = sum(1 for v in (left_rel, left_tlc, right_rel, right_tlc) if label_form.score_problem(v))
    note = say("annotate.draft_kept", when=when)
    if left_out:
        note = _join(note, say("annotate.draft_scores_left_out", n=left_out))
    return _draft_note(note)


def _draft_form(form: str | None) -> tuple:
    """The four scores, the comment and the :data:`SLOTS` × 2 statute labels of :data:`DRAFT_FORM_JS`'s
    JSON (untrusted: ValueError unless it is exactly that shape, within the draft's size bound).

    >>> _draft_form(json.dumps({"scores": ["7", "", None, "11"], "comment": "再查", "marks": [None] * 60}))[:5]
    ('7', '', None, '11', '再查')
    """
    if not isinstance(form, str) or len(form.encode("utf-8")) > 2 * MAX_DRAFT_BYTES:
        raise FormError(message("annotate.form_not_understood"))
    data = json.loads(form)
    shape = (
        isinstance(data, dict)
        and set(data) == {"scores", "comment", "marks"}
        and isinstance(data["scores"], list)
        and len(data["scores"]) == 4
        and all(v is None or isinstance(v, str | int | float) for v in data["scores"])
        and isinstance(data["comment"], str)
        and isinstance(data["marks"], list)
        and len(data["marks"]) == 2 * SLOTS
        and all(v is None or isinstance(v, str) for v in data["marks"])
    )
    if not shape:
        raise FormError(message("annotate.form_not_understood"))
    return (*data["scores"], data["comment"], tuple(data["marks"]))


class FormError(ValueError):
    """The page's form data that is not what :data:`DRAFT_FORM_JS` sends; ``message`` says so."""

    def __init__(self, msg: Message) -> None:
        super().__init__(str(msg))
        self.message = msg


def _draft_note(text: str, kind: str = "") -> str:
    """The line under the comment about the draft (``text``: HTML, :func:`say`; ``over``: red)."""
    return f'<div class="ann-count {kind}" id="ann-draft-text">{text}</div>' if text else ""


def skip_item(
    service: AnnotationService,
    state: dict | None,
    request: gr.Request,
    profile: gr.OAuthProfile | None = None,
) -> AnnotationView:
    """Put the open item aside (it comes back when nothing else is left) and show the next."""
    try:
        who = identify(service, request, profile)
        if who is None:
            return _keep(say(refusal(service, request, profile)), "warn")
        item_id = (state or {}).get("item_id")
        if item_id and not (state or {}).get("editing"):
            service.store.skip(who.name, item_id)
        return _next(service, who, say("annotate.skipped") if item_id else "")
    except StoreError as exc:
        return _keep(_store_failed(exc))


def go_back(
    service: AnnotationService,
    state: dict | None,
    request: gr.Request,
    profile: gr.OAuthProfile | None = None,
) -> AnnotationView:
    """Reopen the annotator's label before the open one (the last one when a new item is open)."""
    try:
        who = identify(service, request, profile)
        if who is None:
            return _keep(say(refusal(service, request, profile)), "warn")
        done = service.store.done_items(who.name)
        if not done:
            return _keep(say("annotate.no_label_yet"), "info")
        current = (state or {}).get("item_id")
        if current in done:
            index = done.index(current)
            if index == 0:
                return _keep(say("annotate.first_label"), "info")
            target = done[index - 1]
        else:
            target = done[-1]
        return _view(service, who, service.store.assignment(who.name, target))
    except StoreError as exc:
        return _keep(_store_failed(exc))


def next_item(
    service: AnnotationService, request: gr.Request, profile: gr.OAuthProfile | None = None
) -> AnnotationView:
    """Leave the label being edited and go to the next unlabelled item."""
    return open_annotation(service, request, profile)


# --------------------------------------------------------------------------- admin


def _admin(service: AnnotationService, request: gr.Request | None, profile: Any) -> Identity:
    who = identify(service, request, profile)
    if who is None or not who.is_admin:
        raise PermissionError(str(message("annotate.only_admin")))
    return who


def import_items(
    service: AnnotationService, file: Any, request: gr.Request, profile: gr.OAuthProfile | None = None
) -> tuple[str, Any]:
    """Import comparison items from an uploaded JSONL or CSV file (all or nothing), then assign them."""
    try:
        who = _admin(service, request, profile)
        path = Path(getattr(file, "name", None) or getattr(file, "path", None) or file or "")
        if not file or not path.is_file():
            return say_notice("annotate.choose_file", "warn"), gr.skip()
        if path.suffix.lower() not in (".jsonl", ".csv"):
            return say_notice(
                "annotate.wrong_file_type", "error", what=data(path.suffix or path.name)
            ), gr.skip()
        size = path.stat().st_size
        if size > MAX_IMPORT_BYTES:
            return say_notice(
                "annotate.file_too_big",
                "error",
                size=f"{size / 1e6:.1f}",
                limit=f"{MAX_IMPORT_BYTES / 1e6:.0f}",
            ), gr.skip()
        items = read_items(path)
        if len(items) > MAX_IMPORT_ITEMS:
            return say_notice(
                "annotate.too_many_items", "error", n=f"{len(items):,}", limit=f"{MAX_IMPORT_ITEMS:,}"
            ), gr.skip()
        n = service.store.import_items(items, actor=who.name, source=path.name)
        assigned = service.assign()
        total = service.store.item_count()
        return say_notice("annotate.imported", n=n, assigned=assigned, total=total), annotators_table(service)
    except PermissionError:
        return say_notice("annotate.only_admin", "error"), gr.skip()
    except (JSONLError, StoreError, ValueError, UnicodeDecodeError) as exc:
        found = error_text(exc)
        if not isinstance(found, Message):
            found = Html(f'<span lang="{data_lang(found)}" style="white-space: pre-wrap">'
                         f"{esc(found[:3000] + (' …' if len(found) > 3000 else ''))}</span>")  # fmt: skip
        return say_notice("annotate.nothing_imported", "error", why=found), gr.skip()
    except Exception:
        logger.exception("annotation: import failed")
        return say_notice("annotate.nothing_imported_wrong", "error"), gr.skip()


def say_notice(key: str | Message, kind: str = "info", **fields: Any) -> str:
    """``say(key, **fields)`` in a message box."""
    return notice_html(say(key, **fields), kind)


#: What the export's source choice means (the store's ``source``): its catalogue key.
EXPORT_SOURCES = {
    "raw": "annotate.export_source.raw",
    "adjudicated": "annotate.export_source.adjudicated",
}
#: The export formats as the radio shows them (names, the same in both languages).
FORMAT_NAMES = {"csv": "CSV", "jsonl": "JSONL", "parquet": "Parquet"}


def export_labels(
    service: AnnotationService,
    fmt: str,
    source: str,
    history: bool,
    request: gr.Request,
    profile: gr.OAuthProfile | None = None,
) -> tuple[str, str | None]:
    """Write the labels (one row per item and annotator; every version with ``history``) as CSV, JSONL or
    Parquet, from the annotators' labels or the adjudicated ones, to a file to download."""
    try:
        who = _admin(service, request, profile)
        fmt = str(fmt).lower()
        if fmt not in EXPORT_FORMATS or source not in EXPORT_SOURCES:
            return say_notice(
                "annotate.export_choice_invalid",
                "error",
                formats=data(", ".join(EXPORT_FORMATS)),
                sources=data(", ".join(EXPORT_SOURCES)),
            ), None
        folder = scratch_folder("lawluo-labels-")
        path = folder / f"labels-{source}-{time.strftime('%Y%m%d-%H%M%S')}.{fmt}"
        n = service.store.export(path, fmt, current_only=not history, source=source, actor=who.name)
        shown = message(EXPORT_SOURCES[source])
        return say_notice("annotate.exported", n=n, fmt=fmt.upper(), source=shown), str(path)
    except PermissionError:
        return say_notice("annotate.only_admin", "error"), None
    except (StoreError, OSError, ValueError) as exc:
        return say_notice("annotate.export_failed", "error", why=error_field(exc)), None


def export_everything(
    service: AnnotationService, request: gr.Request, profile: gr.OAuthProfile | None = None
) -> tuple[str, list[str] | None]:
    """Every export file at once (labels and statute labels as CSV, JSONL and Parquet; adjudications)."""
    try:
        who = _admin(service, request, profile)
        folder = scratch_folder("lawluo-export-")
        paths = service.store.export_all(folder, actor=who.name)
        names = data(", ".join(p.name for p in paths))
        return say_notice("annotate.exported_all", n=len(paths), names=names), [str(p) for p in paths]
    except PermissionError:
        return say_notice("annotate.only_admin", "error"), None
    except (StoreError, OSError, ValueError) as exc:
        return say_notice("annotate.export_failed", "error", why=error_field(exc)), None


def annotators_table(service: AnnotationService) -> list[list]:
    return [[a["name"], a["role"], int(a["done"]), int(a["assigned"])] for a in service.store.annotators()]


def list_annotators(
    service: AnnotationService, request: gr.Request, profile: gr.OAuthProfile | None = None
) -> tuple[str, Any]:
    """Every annotator's role and progress (admins only)."""
    try:
        _admin(service, request, profile)
        return "", annotators_table(service)
    except PermissionError:
        return say_notice("annotate.only_admin", "error"), []


def _admin_table_on_load(
    service: AnnotationService, request: gr.Request, profile: gr.OAuthProfile | None = None
) -> list[list]:
    who = identify(service, request, profile)
    return annotators_table(service) if who is not None and who.is_admin else []


# --------------------------------------------------------------------------- layout


def build_annotate_tab(service: AnnotationService, demo: gr.Blocks) -> None:
    """The tab's layout and events (its page-load events on ``demo``); the service is bound to every handler.

    Without a way to sign in the tab says so once and shows no form (nothing in it could work).
    """
    with gr.Tab(TAB_LABEL, id="annotate"):
        if service.sign_in is None:
            gr.Markdown(NOT_CONFIGURED, elem_id="ann-not-configured")
            return
        _build_form(service, demo)


def _build_form(service: AnnotationService, demo: gr.Blocks) -> None:
    with gr.Column(elem_id="ann-bar"):
        with gr.Row(elem_classes=["ann-row"], elem_id="ann-nav"):
            status = gr.Markdown(t(sign_in_help(service).key), elem_id="ann-status")
            back = gr.Button(t("annotate.back"), size="sm", elem_id="ann-back", scale=0, min_width=120)
            forward = gr.Button(t("annotate.next"), size="sm", elem_id="ann-next", scale=0, min_width=120)
            if service.sign_in == "oauth":
                gr.LoginButton(size="sm", scale=0, min_width=120)  # "Logout (name)" once signed in
            else:
                sign_out = gr.Button(
                    t("annotate.sign_out"), size="sm", elem_id="ann-signout", scale=0, min_width=120
                )
                sign_out.click(None, js=SIGN_OUT_JS, queue=False)
        with gr.Row(elem_classes=["ann-row"], elem_id="ann-verdicts", visible=False) as verdict_row:
            buttons = {
                v: gr.Button(
                    label,
                    variant="primary" if v in ("left", "right") else "secondary",
                    elem_id=f"ann-verdict-{v}",
                    min_width=100,
                )
                for v, label in VERDICT_BUTTONS
            }
            skip = gr.Button(t("annotate.skip"), size="sm", elem_id="ann-skip", scale=0, min_width=70)
        message = gr.HTML("", css_template=ANNOTATE_CSS, elem_id="ann-message")
    fields: dict[str, Any] = {}
    with gr.Column(elem_id="ann-form", visible=False) as form:
        question = gr.HTML("", css_template=ANNOTATE_CSS, elem_id="ann-question")
        with gr.Accordion(t("annotate.reference"), open=False):
            reference = gr.HTML("", css_template=ANNOTATE_CSS, elem_id="ann-reference")
        slots: dict[str, label_form.StatuteSlots] = {}
        with gr.Row(equal_height=False):
            for shown, title in (("left", "L"), ("right", "R")):
                with gr.Column(min_width=300):
                    fields[shown] = gr.HTML("", css_template=ANNOTATE_CSS, elem_id=f"ann-{shown}")
                    slots[shown] = label_form.build_slots(f"ann-{shown}", title)
                    with gr.Row():
                        fields[f"{shown}_rel"] = score_field(t("annotate.rel"), f"ann-{shown}-rel")
                        fields[f"{shown}_tlc"] = score_field(t("annotate.tlc"), f"ann-{shown}-tlc")
        # a gr.I18n key has no fields: the limit is the counter's, under the field
        comment = gr.Textbox(label=t("annotate.comment_label"), lines=2, elem_id="ann-comment")
        label_form.counter("#ann-comment textarea", "ann-comment-count", MAX_COMMENT_CHARS)
        draft_note = gr.HTML("", elem_id="ann-draft", padding=False)
        draft_button = gr.Button(t("annotate.draft_button"), visible="hidden", elem_id="ann-draft-save")
        draft_form = gr.Textbox(  # DRAFT_FORM_JS fills it
            label=t("annotate.draft_button"), show_label=False, visible="hidden", elem_id="ann-draft-form"
        )
        keys = Html(" · ".join(f"{v.key} {say(v.short_key)}" for v in verdicts.VERDICT_TABLE))
        gr.HTML(f'<div class="ann-note">{say("annotate.keys", keys=keys)}</div>', css_template=ANNOTATE_CSS,
                js_on_load=KEYS_JS)  # fmt: skip
        with gr.Accordion(t("annotate.guidelines"), open=False):
            gr.HTML(f'<div class="ann-note">{say("annotate.guidelines_version", version=service.guideline_version)}'
                    "</div>", padding=False)  # fmt: skip
            # the file holds a Chinese and an English version (<!-- lang: … --> lines): the page shows its own
            gr.Markdown(both_markdown(languages(service.guidelines)), elem_id="ann-guidelines")
    state = gr.State({})
    with gr.Accordion(t("annotate.admin"), open=False, visible=False, elem_id="ann-admin") as admin:
        admin_message = gr.HTML("", css_template=ANNOTATE_CSS, elem_id="ann-admin-message")
        with gr.Row():
            upload = gr.File(
                label=t("annotate.import_file"),
                file_types=[".jsonl", ".csv"],
                elem_id="ann-import-file",
            )
            with gr.Column():
                do_import = gr.Button(t("annotate.import"), elem_id="ann-import")
                fmt = gr.Radio(
                    [(FORMAT_NAMES.get(f, f), f) for f in EXPORT_FORMATS],
                    value="csv",
                    label=t("annotate.export_format"),
                    elem_id="ann-export-format",
                )
                # Gradio 6.31 translates a choice given as a gr.I18n key (its value stays the code)
                source = gr.Radio([(t(v), k) for k, v in EXPORT_SOURCES.items()], value="raw",
                                  label=t("annotate.export_source"), elem_id="ann-export-source")  # fmt: skip
                history = gr.Checkbox(False, label=t("annotate.export_history"), elem_id="ann-export-history")
                do_export = gr.Button(t("annotate.export"), elem_id="ann-export")
                do_export_all = gr.Button(t("annotate.export_all"), elem_id="ann-export-all")
        exported = gr.File(label=t("annotate.exported_file"), interactive=False, elem_id="ann-exported")
        exported_all = gr.File(label=t("annotate.exported_all_files"), interactive=False, file_count="multiple",
                               elem_id="ann-exported-all")  # fmt: skip
        # Gradio 6.31 does not translate a Dataframe's headers: they are signs, the label names the columns
        table = gr.Dataframe(
            headers=["✎", "⚑", "✓", "Σ"],
            label=t("annotate.annotators_table"),
            show_label=True,
            interactive=False,
            elem_id="ann-annotators",
        )
        refresh = gr.Button(t("annotate.refresh"), size="sm")

    views = dict(
        status=status, message=message, verdict_row=verdict_row, form=form, question=question, reference=reference,
        left_note=slots["left"].note, right_note=slots["right"].note, comment=comment, draft=draft_note, state=state,
        admin=admin,
        **fields,
    )  # fmt: skip
    outputs = label_form.output_components(VIEW_FIELDS, views, slots, SLOT_WIDTHS)
    form_inputs = [
        state,
        *(fields[k] for k in SCORE_FIELDS),
        comment,
        *slots["left"].marks,
        *slots["right"].marks,
    ]
    once = {"trigger_mode": "once", "concurrency_id": "annotation"}
    settled = {"js": SETTLED_JS, "queue": False, "api_visibility": "private"}  # in the browser only
    # every event that shows an item ends in the browser's grace period (SETTLED_JS)
    for v, button in buttons.items():
        event = button.click(
            label_form.named_slots(bind(submit_label, service, v), ("left", "right")),
            form_inputs,
            outputs,
            api_name=f"label_{v}",
            validator=validate_form,
            **once,
        )
        event.then(None, **settled)
    # what the annotator marks or types is kept as the item's draft (restored after a reload): the page
    # presses the hidden draft button DRAFT_MS after the last edit in the form (KEYS_JS); the page's own
    # edits (这些都没问题, 清除) are followed by it too
    draft_button.click(
        bind(keep_draft, service), [state, draft_form], [draft_note], js=DRAFT_FORM_JS, queue=False,
        trigger_mode="always_last", show_progress="hidden", api_visibility="private",
    )  # fmt: skip
    for side in ("left", "right"):
        for event in slots[side].page_edits:
            event.then(None, js=DRAFT_SOON_JS, queue=False, api_visibility="private")
    for button, handler, inputs, api_name in (
        (back, bind(go_back, service), [state], "annotation_back"),
        (skip, bind(skip_item, service), [state], "annotation_skip"),
        (forward, bind(next_item, service), None, "annotation_next"),
    ):
        button.click(handler, inputs, outputs, api_name=api_name, **once).then(None, **settled)
    do_import.click(bind(import_items, service), [upload], [admin_message, table], api_name="import_items")
    do_export.click(
        bind(export_labels, service),
        [fmt, source, history],
        [admin_message, exported],
        api_name="export_labels",
    )
    do_export_all.click(
        bind(export_everything, service), None, [admin_message, exported_all], api_name="export_all"
    )
    refresh.click(bind(list_annotators, service), None, [admin_message, table], api_name="annotators")
    # the page's deep link (/annotate?item=<id>) is read here only: every event carries the page's query
    demo.load(bind(open_linked, service), None, outputs, api_name="annotation_open").then(None, **settled)
    demo.load(bind(_admin_table_on_load, service), None, table, api_visibility="private")
