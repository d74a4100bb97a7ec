"""What the annotation tab's page runs in the browser: its verdict buttons and keys, its CSS, and its
scripts (the verdict guard, the draft's form reader, sign-out)."""

import json

from lawluo.ui.i18n import t
from lawluo.ui.render import CSS

from .. import human_scores, label_form, verdicts
from ..label_form import MAX_COMMENT_CHARS, SLOTS

TAB_LABEL = t("tab.annotate")
#: The verdict buttons (shown verdict, text with its key: a ``gr.I18n`` key, one per button) and each
#: verdict's name in messages (a catalogue key), from eval_ui/verdicts.py.
VERDICT_BUTTONS = tuple((v.shown, t(f"{v.name_key}.button")) for v in verdicts.VERDICT_TABLE)
SHOWN_NAMES = {v.shown: v.short_key for v in verdicts.VERDICT_TABLE}
#: key → the id of the verdict button it presses (read by KEYS_JS)
VERDICT_KEYS = {v.key: f"ann-verdict-{v.shown}" for v in verdicts.VERDICT_TABLE}

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
#: The form's fields as :func:`keep_draft` reads them: one JSON text (the scores as typed — each score field
#: of :func:`~eval_ui.human_scores.form_fields` —, the comment, each statute slot's label or null, the left
#: answer's first), passed with the state. ``__SCORES__``: the score inputs' ids (``left-rel`` …).
_DRAFT_FORM_JS = """(state, form) => {
  const value = (selector) => { const field = document.querySelector(selector); return field ? field.value : null; };
  const marks = [];
  for (const side of ['left', 'right']) for (let n = 1; n <= __SLOTS__; n++) {
    const box = document.querySelector('#ann-' + side + '-mark-' + n + ' input:checked');
    marks.push(box ? box.value : null);
  }
  const scores = [__SCORES__].map((f) => value('#ann-' + f + ' input'));
  return [state, JSON.stringify({scores, comment: value('#ann-comment textarea') || '', marks})];
}"""


def draft_form_js() -> str:
    """:data:`_DRAFT_FORM_JS` for the score fields of the table as it is now."""
    fields = ", ".join(f"'{name.replace('_', '-', 1)}'" for name in human_scores.form_fields())
    return _DRAFT_FORM_JS.replace("__SLOTS__", str(SLOTS)).replace("__SCORES__", fields)


DRAFT_FORM_JS = draft_form_js()  # the shipped table's (the page is built with draft_form_js())
#: Keep the draft soon (after the page's own edits of the labels: 这些都没问题, 清除).
DRAFT_SOON_JS = "() => { if (window.__annGuard) window.__annGuard.draftSoon(); }"
#: Run after every event that shows an item: the grace period before it takes a verdict.
SETTLED_JS = "() => { if (window.__annGuard) window.__annGuard.settled(); }"
#: Sign out of Gradio's login (its ``/logout`` route, next to the page): this browser only.
SIGN_OUT_JS = (
    "() => { window.location.assign(new URL('logout?all_session=false', window.location.href).href); }"
)
