"""The 法律咨询 / Consultation tab: the firm's four agents in the browser (LawLuo paper §3.2).

A visitor asks; the receptionist routes the question (overridable); the clarification tree grows level
by level and the visitor marks its facts 是 / 否 / 不确定; the lawyer's answer streams in, every statute
it cites checked; ending the consultation has the secretary write the report (shown, and downloadable
as .md and .docx, under the name the visitor gives); the trace of every step, the boss's scores included,
is shown along the way.

Handlers are plain module-level functions that take the :class:`~lawluo.firm.Firm` first and the
session's :class:`~lawluo.firm.Consultation` (kept in ``gr.State``) next, and return (or yield) a
:class:`ConsultView`: one field per component, turned into each event's outputs by
:meth:`~lawluo.ui.views.View.outputs`. The tab binds them to the request's visitor (:mod:`.visitors`:
one model step at a time per session, a bounded tree, a time budget per step, downloads in the
session's own folder, the consultation bound to its browser). They never raise: bad input (an empty
or over-long question, a click on a closed consultation, a second click while a step runs) gets a
message and the typed question stays in its box; an unexpected error is logged and shown as a
message, and the consultation keeps everything it had.

Which step a consultation accepts is the firm's to say: each step raises
:class:`~lawluo.firm.firm.StepNotAllowed` (:class:`~lawluo.firm.firm.ConsultationClosed` when it is
closed), and :func:`refused` turns that into the message. The tree's buttons are active only while the
firm accepts marks: not while the tree grows or the lawyer answers, not after the answer, not once the
consultation is closed.

**Overlapping actions are disabled, not queued.** While a step runs (Ask, Submit, Regenerate, End, a
mark, a change of domain, Resume, New), the page disables every control that changes the consultation
(:data:`LOCK_JS`) until the step is done (:data:`UNLOCK_JS`). A request that arrives while a model step
of the session runs anyway (a script, two clicks in the same instant) is refused by the server with
:data:`BUSY_MESSAGE` and changes nothing; a model step's last view is sent once it has let go of the
session, so the page never shows a control the server would still refuse. Queueing would be wrong: a
Submit queued behind a growing tree would reach the lawyer before the visitor marked a single fact (and
a mark made while the tree grows would be lost with its next level), and an Ask queued behind a
Regenerate would send a question written before the visitor read the new answer.

**A step nobody waits for is stopped** (:class:`~lawluo.ui.visitors.Step`): its model calls are cancelled,
their connections closed, and the model server stops generating. When the page leaves (``unload``) or
Gradio drops the handler (its client went away), at once: what was streamed is kept with the firm's note.
When the visitor clicks 新咨询 New, which stays clickable while a step runs (the page asks first): the
step is stopped and shows nothing more, and the page starts over (:func:`new_consultation`). Regenerate,
End, Ask and Submit while a step runs are refused, and do not stop it: End's report and a regenerated
answer both need the whole answer (the report sums it up; Regenerate replaces an answer the visitor has
read), and the page disables them until it is in. A step whose time budget ran out is stopped too.

**Nothing is lost, nothing a model writes is live.** Enter sends the question and Shift+Enter starts a
new line (:data:`PAGE_JS`); 新咨询 and the chat's trash button ask before they clear. After every step
the browser tab keeps a copy of the consultation (its ``sessionStorage``: :func:`remembered`,
:data:`REMEMBER_JS`), and a reloaded page gets it back, checked whole like an uploaded file
(:func:`restore_consultation`, :data:`RESTORE_JS`). **Private by default**: 新咨询 deletes the copy in the
browser as it is clicked, and closing the tab deletes it with the tab; nothing of a consultation is kept in
``localStorage`` (Gradio's run history is off: ``launch(run_history=False)``). Text from a client
or a model reaches the chat and the report as Markdown with no HTML, image, diagram or link
(:func:`~lawluo.ui.render.inert_md`); while an answer streams, only the end of the last message changes,
so the browser receives the new characters alone. Messages name no server path. On a phone the two
columns become one, the citations right under the answer (:data:`LAYOUT_CSS`).

Scriptable with ``gradio_client`` (each client keeps its own consultation)::

    from gradio_client import Client
    client = Client("http://127.0.0.1:7860/")
    client.predict("公司一直没和我签劳动合同怎么办？", True, 3, 3, api_name="/ask")
    client.predict("1", "yes", api_name="/mark")
    client.predict(api_name="/answer")                       # the lawyer answers the marked facts
    client.predict(api_name="/end_consultation")             # the secretary's report
    state = client.predict(api_name="/consultation")          # the whole consultation as JSON
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gradio as gr

from ..agents.secretary import GENERATED_BY, Report, render_docx, render_markdown
from ..firm import Consultation, Firm
from ..firm.firm import ConsultationClosed, ConsultationTooLong, StepNotAllowed, facts_day
from ..firm.saved import MAX_TURN_CHARS, SavedConsultationError, Status
from ..i18n import LANGUAGES, Message, message, text
from ..llm import Deadline, LanguageModels
from ..llm.cancel import Cancelled
from ..tolc.builder import MAX_HEIGHT, MAX_K, drawn_elsewhere
from . import consult_render as cr
from .copy import UICopy
from .i18n import LOCALES, Html, say, t
from .render import CSS, inert_links, without_paths
from .views import KEEP, Keep, View, date_box
from .visitors import (
    DIRECT,
    Step,
    Visit,
    VisitorLimits,
    Visitors,
    fit_tree,
    give_back_memory,
    owner_of,
    tree_calls,
    visit_of,
)

logger = logging.getLogger(__name__)

TAB_LABEL = t("tab.consult")
MAX_QUESTION_CHARS = MAX_TURN_CHARS
MAX_SAVED_BYTES = 2_000_000
#: Events that may call language models run this many at a time per app. Each visitor runs one at a time
#: (:class:`~lawluo.ui.visitors.Visitors`), waits for a backend slot only within its step's time budget,
#: and the model-free events (marks, domain, save, search…) have slots of their own.
FIRM_CONCURRENCY = 32
#: Seconds between two redraws of the chat while an answer streams.
STREAM_UPDATE_S = 0.1
HTML_CSS = CSS + cr.CONSULT_CSS

#: A click on a mark button in the tree becomes a ``click`` event carrying the node id and the mark.
TREE_JS = """
element.addEventListener('click', (event) => {
  const button = event.target.closest('button[data-mark]');
  if (!button || button.disabled || !element.contains(button)) return;
  trigger('click', {node: button.dataset.node, mark: button.dataset.mark});
});
element.addEventListener('change', (event) => {
  const menu = event.target.closest('select[data-issue]');
  if (!menu || menu.disabled || !menu.value || !element.contains(menu)) return;
  trigger('select', {issue: menu.value});
});
// the issue in force is the option the server marked selected: a redrawn menu (another domain's issue chosen,
// the domain changed) must not keep showing what the browser had selected before the redraw
const syncIssue = () => element.querySelectorAll('select[data-issue]').forEach((menu) => {
  const chosen = [...menu.options].find((o) => o.defaultSelected);
  if (chosen && menu.value !== chosen.value) menu.value = chosen.value;
});
new MutationObserver(syncIssue).observe(
  element, {childList: true, subtree: true, attributes: true, attributeFilter: ['selected']}
);
syncIssue();
element.addEventListener('input', (event) => {
  const box = event.target.closest('input[data-issue-filter]');
  if (!box || !element.contains(box)) return;
  const menu = box.closest('.ll-issue').querySelector('select[data-issue]');
  const words = box.value.trim().toLowerCase().split(/\\s+/).filter(Boolean);
  menu.querySelectorAll('optgroup').forEach((group) => {
    let shown = 0;
    group.querySelectorAll('option').forEach((option) => {
      const text = (option.textContent + ' ' + group.label).toLowerCase();
      const hit = option.selected || words.every((w) => text.includes(w));
      option.hidden = !hit;
      option.disabled = !hit;
      shown += hit ? 1 : 0;
    });
    group.hidden = !shown;
  });
});
element.addEventListener('keydown', (event) => {
  const box = event.target.closest('input[data-issue-filter]');
  if (!box || event.key !== 'Enter' || !element.contains(box)) return;
  event.preventDefault();
  const menu = box.closest('.ll-issue').querySelector('select[data-issue]');
  const left = [...menu.querySelectorAll('option')].filter((o) => !o.hidden && !o.selected && o.value);
  if (left.length === 1 && !menu.disabled) { menu.value = left[0].value; trigger('select', {issue: menu.value}); }
});
"""

#: The chat's trash button: Gradio names it in the page's language (its own translation of "Clear").
CLEAR_BUTTON = "#ll-chat button[aria-label='Clear'], #ll-chat button[aria-label='清空对话']"
#: The page's controls that change the consultation (the tree's mark buttons included), disabled while a step
#: runs; 新咨询 New is not one of them: it stops a running step (:func:`new_consultation`).
CONTROLS = (
    "#ll-ask",
    "#ll-regenerate",
    "#ll-end",
    "#ll-submit",
    "#ll-resume",
    "#ll-question textarea",
    "#ll-domain input",
    CLEAR_BUTTON,
    "#ll-tree button[data-mark]",
    "#ll-tree select[data-issue]",
)
#: Run in the browser as a step's request is about to leave (``js`` of its event, so only when the step
#: really starts): every enabled control is disabled and tagged, so no second click (the same button or
#: another) can start an overlapping step. The event's inputs pass through unchanged.
#: The first step of the page also starts the clock the message's "已用 N 秒" counts from (:data:`PAGE_JS`).
LOCK_JS = (
    "(...inputs) => { if (!window.__llSteps) window.__llSince = Date.now();"
    " window.__llSteps = (window.__llSteps || 0) + 1;"
    " document.querySelectorAll(__CONTROLS__).forEach((el) => {"
    " if (!el.disabled) { el.disabled = true; el.dataset.llLocked = '1'; } });__FOLLOW__ return inputs; }"
).replace("__CONTROLS__", json.dumps(", ".join(CONTROLS)))
#: Keep what the visitor waits for in view (issue 42: on a phone nothing seemed to happen after 提问 or 提交;
#: the tree began 1,600 px below, the streaming answer 3,400 px above). :data:`SHOW_CHAT` runs as the lawyer
#: starts to answer (the answer streams into the chat); :data:`SHOW_NEXT` once a question was taken: the
#: tree when it awaits marks, else the chat.
SHOW_CHAT = (
    " const chat = document.querySelector('#ll-chat');"
    " if (chat) chat.scrollIntoView({block: 'start', behavior: 'instant'});"
)
SHOW_NEXT = (
    "() => { const tree = document.querySelector('#ll-tree button[data-mark]:not([disabled])');"
    " const target = document.querySelector(tree ? '#ll-tree-title' : '#ll-chat');"
    " const show = () => target && target.scrollIntoView({block: 'start', behavior: 'instant'});"
    " show(); setTimeout(show, 300);"  # again once late redraws (the message, the chat) have settled
    # the focus follows the eye: the first mark, or the question box (once the step lets go of it)
    " const box = document.querySelector('#ll-question textarea');"
    " if (tree) tree.focus({preventScroll: true});"
    " else if (box && !box.disabled) box.focus({preventScroll: true});"
    " else window.__llFocus = '#ll-question textarea'; }"
)


def lock_js(follow: str = "") -> str:
    """:data:`LOCK_JS`, with ``follow`` (statements) run as the step starts."""
    return LOCK_JS.replace("__FOLLOW__", follow)


#: Run in the browser when the step is done or failed: once no step of the page runs, the controls it
#: disabled are enabled again (a tree redrawn meanwhile has new buttons, active or not as the server drew
#: them), except those the step closed (inside an ``ll-off`` element: the domain menu of a closed
#: consultation).
UNLOCK_JS = (
    "() => { window.__llSteps = Math.max(0, (window.__llSteps || 0) - 1); if (window.__llSteps) return;"
    " document.querySelectorAll('[data-ll-locked]').forEach((el) => {"
    " if (!el.closest('.ll-off')) el.disabled = false; delete el.dataset.llLocked; });"
    " const back = window.__llFocus && document.querySelector(window.__llFocus); window.__llFocus = null;"
    " if (back && !back.disabled) back.focus({preventScroll: true}); }"
)

#: Installed once per page (``js_on_load`` of the message box), as capturing listeners of the document so
#: they run before Gradio's own: Enter in the question box sends the question (a click on 提问 Ask, so it
#: is locked like a click while a step runs), Shift+Enter starts a new line (Gradio would send on it), and
#: an Enter that confirms an input method's composition (Chinese pinyin) is left to the input method;
#: 新咨询 and the chat's trash button ask before they clear a consultation (a "No" stops the click), and a
#: click that goes on deletes the tab's copy of the consultation (:data:`STORAGE_KEY`) at once: not only
#: once the server has started over and the chained :func:`remembered` came back, two round trips later,
#: which a reload or a closed tab in between (or a busy queue) would never see.
PAGE_JS = """
if (!window.__llPage) {
  window.__llPage = true;
  // a text of the script in the page's language (Gradio sets <html lang>; Chinese unless it is English)
  const __llSay = (texts) => (document.documentElement.lang || '').toLowerCase().startsWith('en') ? texts.en : texts['zh-CN'];
  // the chat's messages are the consultation's Chinese text: said so, for the English page (its notes and
  // footers carry their own lang)
  const markChat = () => document.querySelectorAll('#ll-chat [data-testid="user"], #ll-chat [data-testid="bot"], #ll-report')
    .forEach((el) => { if (!el.hasAttribute('lang')) el.setAttribute('lang', 'zh-CN'); });
  new MutationObserver(markChat).observe(document.body, {childList: true, subtree: true});
  const question = (event) => event.target instanceof Element && event.target.closest('#ll-question textarea');
  document.addEventListener('keydown', (event) => {
    if (event.key !== 'Enter' || !question(event) || event.isComposing || event.keyCode === 229) return;
    if (event.shiftKey || event.ctrlKey || event.metaKey || event.altKey) return;
    event.preventDefault();
    event.stopPropagation();
    const ask = document.querySelector('#ll-ask');
    if (ask && !ask.disabled) ask.click();
  }, true);
  document.addEventListener('keypress', (event) => {
    if (event.key === 'Enter' && question(event)) event.stopPropagation();
  }, true);
  document.addEventListener('click', (event) => {
    const clear = event.target instanceof Element && event.target.closest(__CLEARS__);
    if (!clear || clear.disabled) return;
    if (document.querySelector('#ll-chat [data-testid="user"]') && !window.confirm(__CONFIRM__)) {
      event.preventDefault();
      event.stopImmediatePropagation();
      return;
    }
    try { sessionStorage.removeItem(__KEY__); localStorage.removeItem(__KEY__); } catch (error) {}
    // a new consultation forgets the client's name too
    const name = document.querySelector('#ll-client textarea, #ll-client input');
    if (name && name.value) { name.value = ''; name.dispatchEvent(new Event('input', {bubbles: true})); }
  }, true);
  // a click on a mark: once the tree is drawn again, the focus goes back to the same button (FOCUS_AFTER)
  document.addEventListener('click', (event) => {
    const mark = event.target instanceof Element && event.target.closest('#ll-tree button[data-mark]');
    if (mark) window.__llFocus = `#ll-tree button[data-node="${CSS.escape(mark.dataset.node)}"][data-mark="${CSS.escape(mark.dataset.mark)}"]`;
  }, true);
  const actions = () => {  // what can act now, while no step runs (ACTIONS)
    const closed = !!document.querySelector('#ll-domain.ll-off');
    const asked = !!document.querySelector('#ll-chat [data-testid="user"]');
    const answered = document.querySelectorAll('#ll-chat [data-testid="bot"]').length > 0;
    const awaiting = !!document.querySelector('#ll-tree button[data-mark]:not([disabled])');
    for (const [id, on] of [['#ll-submit', awaiting], ['#ll-regenerate', answered && !awaiting && !closed], ['#ll-end', asked]]) {
      const button = document.querySelector(id);
      if (button && button.disabled === on) { button.disabled = !on; button.setAttribute('aria-disabled', String(!on)); }
    }
  };
  // how long the running step has taken so far, in the message of a step at work (ELAPSED)
  setInterval(() => {
    const seconds = window.__llSteps ? Math.floor((Date.now() - window.__llSince) / 1000) : -1;
    document.querySelectorAll('#ll-message .ll-elapsed').forEach((el) => {
      el.textContent = seconds >= 0 ? __ELAPSED__.replace('{s}', seconds) : '';
    });
    if (!window.__llSteps) actions();
  }, 250);
}
"""
#: The texts the page's script shows itself (the confirmation of 新咨询, the seconds a step has taken), by the
#: page's language (``<html lang>``).
NEW_CONFIRM = {LOCALES[lang]: text("consult.new_confirm", lang) for lang in LANGUAGES}
ELAPSED_TEXT = {LOCALES[lang]: text("consult.elapsed", lang) for lang in LANGUAGES}
#: The key of the browser tab's copy of the consultation in its ``sessionStorage`` (:data:`REMEMBER_JS`).
STORAGE_KEY = "lawluo-consultation"
PAGE_JS = (
    PAGE_JS.replace("__CLEARS__", json.dumps(f"#ll-new, {CLEAR_BUTTON}"))
    .replace("__CONFIRM__", f"__llSay({json.dumps(NEW_CONFIRM, ensure_ascii=False)})")
    .replace("__KEY__", json.dumps(STORAGE_KEY))
    .replace("__ELAPSED__", f"__llSay({json.dumps(ELAPSED_TEXT, ensure_ascii=False)})")
)
#: The chat grows with its messages from this height to this one, then scrolls (an empty chat is small, so
#: the question box is on a phone's first screen).
CHAT_MIN_HEIGHT, CHAT_MAX_HEIGHT = 120, 440
#: In ``consult.md``, what follows this line is folded under 使用说明 / How it works. The file holds each part
#: in both languages, each in its own ``<div class="ll-lang-…" lang>`` (the page shows its language's).
INTRO_FOLD = "<!-- more -->"
#: The page's CSS for the tab (``launch(css=…)``, see ``app.launch_options``). On a narrow screen (a phone)
#: the two columns become one list in the order a visitor needs them: the chat, the question box and its
#: buttons, the message, then the answer's citations right under the answer, the domain, the tree, and the
#: rest. (Gradio wraps a text box or a menu in a ``.form`` element: ``:has`` finds it.)
LAYOUT_CSS = """
#ll-intro p { margin: 0 0 4px 0; }
#ll-tree-title, #ll-chat { scroll-margin-top: 8px; }
@media (max-width: 700px) {
  #ll-main { flex-direction: column; flex-wrap: nowrap; }
  #ll-left, #ll-right { display: contents; }
  #ll-left > *, #ll-right > * { order: 20; }
  #ll-chat { order: 1; }
  #ll-main .form:has(#ll-question) { order: 2; }
  #ll-buttons { order: 3; }
  #ll-message { order: 4; }
  #ll-citations-accordion { order: 5; }
  #ll-routing { order: 6; }
  #ll-main .form:has(#ll-domain) { order: 7; }
  #ll-tree-title { order: 8; }
  #ll-tree { order: 9; }
  #ll-submit { order: 10; }
  #ll-main .form:has(#ll-client) { order: 11; }
  #ll-buttons button { min-width: 0; flex: 1 1 40%; }
  #ll-banner .ll-notice { font-size: 0.85em; padding: 6px 10px; line-height: 1.5; }
  #ll-intro { font-size: 0.92em; }
}
"""

#: After the message of a step at work: the page writes how long the step has run (:data:`PAGE_JS`).
ELAPSED = '<div class="ll-elapsed" aria-hidden="true"></div>'
#: The tab's messages: each one's catalogue key (``lawluo/strings/consult.yaml``; the page says it with
#: :func:`~lawluo.ui.i18n.say`) and, under the old name, its Chinese text (the logs, the tests).
EMPTY = "consult.msg.empty"
FACTS_DATE = "consult.msg.facts_date"
#: What the visitor does next while the tree awaits marks: shown when the tree is ready, and again for an
#: empty Ask then (a second click of Ask, after the first took the question, is not a missing question).
MARK = "consult.msg.mark"
CLOSED = "consult.msg.closed"
DOMAIN_CHANGED_KEY = "consult.msg.domain_changed"
REBUILDING_KEY = "consult.msg.rebuilding"
#: After an override while the tree awaited marks: the tree was built again from the chosen domain.
TREE_REBUILT = "consult.msg.tree_rebuilt"
ISSUE_REBUILDING_KEY = "consult.msg.issue_rebuilding"
#: After the client chose an issue in the tree's 问题类型 menu.
ISSUE_REBUILT = "consult.msg.issue_rebuilt"
#: An unexpected error, in plain words (its type and text go to the log, never to the visitor).
FAILED = "consult.msg.failed"
BUSY = "consult.msg.busy"
FOREIGN = "consult.msg.foreign"
EMPTY_MESSAGE, FACTS_DATE_MESSAGE, MARK_MESSAGE, CLOSED_MESSAGE = map(text, (EMPTY, FACTS_DATE, MARK, CLOSED))
DOMAIN_CHANGED, REBUILDING, ISSUE_REBUILDING = map(
    text, (DOMAIN_CHANGED_KEY, REBUILDING_KEY, ISSUE_REBUILDING_KEY)
)
FAILED_MESSAGE, BUSY_MESSAGE, FOREIGN_MESSAGE = map(text, (FAILED, BUSY, FOREIGN))
#: Why a step's model calls were cancelled (the firm keeps what was written, with its note): the Chinese text
#: is the reason the model calls carry; the page says it in its language (:func:`said`).
PAGE_LEFT = text("consult.stop.page_left")
STARTED_OVER = text("consult.stop.started_over")
#: How long 新咨询 waits for the step it stopped to end before the page starts over anyway (the step then
#: changes nothing, and holds the session until its model call returns: Ask is refused until then).
REPLACE_WAIT_S = 2.0
#: What the visitor reads when the firm refuses a step (the firm's reason follows); a closed
#: consultation always reads :data:`CLOSED_MESSAGE`.
REFUSALS = {
    "ask": "consult.refused.ask",
    "answer": "consult.refused.answer",
    "regenerate": "consult.refused.regenerate",
    "mark": "consult.refused.mark",
    "domain": "consult.refused.domain",
    "issue": "consult.refused.issue",
    "end": "consult.refused.end",
}
REPORT_FILE, SAVED_FILE = "LawLuo-consultation-report", "LawLuo-consultation.json"

#: Before why a saved consultation cannot be resumed (``{why}``).
RESUME_REFUSED_KEY = "consult.resume.refused"
RESUME_REFUSED = text(RESUME_REFUSED_KEY, why="")
NOT_TEXT = "consult.resume.not_text"
NOT_TEXT_MESSAGE = text(NOT_TEXT)
#: The browser's copy of a consultation is at most this big; a bigger one is not updated (a browser's
#: sessionStorage holds about 5 MB an origin).
MAX_STORED_BYTES = 1_000_000
#: The browser's copy when there is no consultation: :data:`REMEMBER_JS` deletes the copy (an empty value
#: means "nothing new": the page has not sent one since it loaded).
NOTHING_STORED = "-"
#: Run in the browser once :func:`remembered` is back after a step (``js`` of a chained event): the copy
#: goes into the tab's ``sessionStorage``, which the browser keeps across reloads of the tab and deletes
#: with it, so the next user of the computer finds nothing (``localStorage``, shared by every tab and kept
#: until deleted, would keep it; Gradio's ``gr.BrowserState`` can only use that one).
REMEMBER_JS = """
(copy) => {
  try {
    if (copy === __NOTHING__) sessionStorage.removeItem(__KEY__);
    else if (copy) sessionStorage.setItem(__KEY__, copy);
  } catch (error) {}  // storage full or turned off: the page works on, a reload starts empty
}
"""
#: Run in the browser as the page loads (``js`` of the load event, before :func:`restore_consultation`):
#: the tab's copy becomes the event's ``stored`` input. What earlier versions of the page left in
#: ``localStorage`` is deleted: their copy (``gr.BrowserState``) and the runs of Gradio's run history
#: (``launch(run_history=False)`` deletes only those of the running server's ``app_id``, a new one at
#: each start).
RESTORE_JS = """
(state) => {
  let kept = '';
  try {
    for (const store of [localStorage, sessionStorage]) {
      Object.keys(store).filter((key) => key.startsWith('gradio:run-history:')).forEach((key) => store.removeItem(key));
    }
    localStorage.removeItem(__KEY__);
    kept = sessionStorage.getItem(__KEY__) || '';
  } catch (error) {}
  return [state, kept];
}
"""
REMEMBER_JS, RESTORE_JS = (
    js.replace("__KEY__", json.dumps(STORAGE_KEY)).replace("__NOTHING__", json.dumps(NOTHING_STORED))
    for js in (REMEMBER_JS, RESTORE_JS)
)
RESTORED_KEY, RESTORED_CLOSED_KEY = "consult.restored", "consult.restored_closed"
RESTORED_MESSAGE, RESTORED_CLOSED = text(RESTORED_KEY), text(RESTORED_CLOSED_KEY)
#: Before why the browser's copy cannot be restored (``{why}``).
STORED_REFUSED_KEY = "consult.stored_refused"
STORED_REFUSED = text(STORED_REFUSED_KEY, why="")


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
    markable = state is not None and state.status == Status.CLARIFYING and streaming is None and not working
    drawn = dict(
        state=state,
        chat=cr.chat_messages(state, streaming),
        routing=cr.routing_html(
            state.routing if state else None,
            state.domain if state else None,
            history,
            firm.domains,
            firm.receptionist.notice,
        ),
        domain=domain_menu(state),
        tree=cr.tree_html(
            state.tree if state else None,
            firm.case_searcher.get,
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


def domain_menu(state: Consultation | None, reopen: bool = False) -> str | None | dict:
    """The domain menu: the consultation's domain; once the consultation is closed, closed to changes too
    (and marked ``ll-off``, which the page's :data:`UNLOCK_JS` leaves disabled). ``reopen``: the page may
    show a closed consultation before this one (新咨询, Resume), so the menu is opened again explicitly.
    Otherwise the domain id itself, as ``/ask`` and the other endpoints return it to scripts."""
    value = state.domain if state else None
    if state is not None and state.status == Status.CLOSED:
        return gr.update(value=value, interactive=False, elem_classes=["ll-off"])
    return gr.update(value=value, interactive=True, elem_classes=[]) if reopen else value


def refused(firm: Firm, state: Consultation, exc: Exception, step: str, **also) -> ConsultView:
    """The view after the firm refused ``step`` (its typed error, or a bad value): why, and nothing changed."""
    if isinstance(exc, ConsultationClosed):
        return view(firm, state, say(CLOSED), "warn", **also)
    return view(
        firm, state, say("consult.refused", what=message(REFUSALS[step]), why=why(exc)), "warn", **also
    )


def _busy(firm: Firm, state: Consultation | None, **also) -> ConsultView:
    """Another step of the visitor is running: say so, and leave the consultation to it (state unchanged)."""
    return view(firm, state, say(BUSY), "warn", working=True, **{**also, "state": KEEP})


def _is_busy(visitors: Visitors | None, visit: Visit) -> bool:
    return visitors is not None and bool(visit.session) and visitors.busy(visit.session)


def _foreign(firm: Firm, state: Consultation | None, **also) -> ConsultView:
    """A request from another browser: nothing of the consultation is shown, and it is left as it is."""
    return view(firm, None, say(FOREIGN), "error", **{**also, "state": state})


def _failed(firm: Firm, state: Consultation | None, exc: Exception, **also) -> ConsultView:
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


def _hidden() -> dict:
    return gr.update(value=None, visible=False)


# -- handlers -------------------------------------------------------------------------------------


def ask(
    firm: Firm,
    state: Consultation | None,
    question: str,
    use_tolc: bool,
    height,
    k,
    visitors: Visitors | None = None,
    visit: Visit = DIRECT,
    facts_date: str | None = None,
) -> Iterator[ConsultView]:
    """Route the question, then grow the clarification tree (or, without ToLC, stream the answer).

    Yields views with ``state`` and ``question``; the box is emptied once the question is taken. The tree
    is reduced to the visitors' limit of clarifier calls, and the tree or answer gets one step's budget.
    The last view is sent once the step is over, when the visitor may start the next one. ``facts_date``
    (the client's date of the facts, ``YYYY-MM-DD``; empty: today) is the day the answers' citations are
    checked against; one that is not a date is refused with the question kept.
    """
    visitors = visitors or Visitors()
    text = (question or "").strip()
    if not owner_of(state, visit):
        yield _foreign(firm, state, question=question)
        return
    try:
        facts_day(facts_date)  # checked here, set once the consultation takes the question
    except ValueError as exc:
        yield view(firm, state, say(FACTS_DATE, why=why(exc)), "warn", question=question)
        return
    if not text:
        if state is not None and state.status == Status.CLARIFYING and state.tree is not None:
            yield view(firm, state, say(MARK), question=question)
        else:
            yield view(firm, state, say(EMPTY), "warn", question=question)
        return
    if len(text) > MAX_QUESTION_CHARS:
        yield view(firm, state, say(too_long(len(text))), "warn", question=question)
        return

    def run(step: Step) -> Generator[ConsultView, None, ConsultView]:
        asked = state
        if asked is None:
            asked = firm.new()
            asked.owner = visit.owner
        try:
            firm.receive(asked, text)
            firm.set_facts_date(asked, facts_date)
        except (StepNotAllowed, ConsultationTooLong) as exc:
            return refused(firm, asked, exc, "ask", question=question)
        except Exception as exc:  # noqa: BLE001 — the UI shows every failure as a message
            return _failed(firm, asked, exc, question=question)
        return (yield from _clarify_or_answer(firm, asked, use_tolc, height, k, visitors, step))

    yield from _one_step(visitors, visit, "ask", run, lambda: _busy(firm, state, question=question))


def _one_step(
    visitors: Visitors,
    visit: Visit,
    kind: str,
    run: Callable[[Step], Generator[ConsultView, None, ConsultView]],
    busy: Callable[[], ConsultView],
) -> Iterator[ConsultView]:
    """``run`` as the session's one model step (:meth:`Visitors.step`), or ``busy()`` when another runs.

    ``run`` gets the :class:`~lawluo.ui.visitors.Step` (its token goes into the step's deadline), yields
    views and returns the last one, which is sent once the session is let go. A step that 新咨询 replaced
    shows nothing more (every later view is empty: the page and the session's state stay as New left
    them). When Gradio closes the handler (the page or the client went away), the step's model calls are
    cancelled before ``run`` is closed, so nothing ``run`` does on its way out calls a model.
    """
    step = None
    try:
        with visitors.step(visit, kind) as step:
            if step is None:
                yield busy()
                return
            body = run(step)
            try:
                while True:
                    try:
                        shown = next(body)
                    except StopIteration as stop:
                        final = stop.value
                        break
                    yield step.shown(shown) or ConsultView()
            except GeneratorExit:
                step.cancel(PAGE_LEFT)
                body.close()
                raise
        yield step.shown(final) or ConsultView()
    finally:
        if step is not None:
            visitors.ended(visit, step)


def _clarify_or_answer(
    firm: Firm, state: Consultation, use_tolc: bool, height, k, visitors: Visitors, step: Step | None = None
) -> Generator[ConsultView, None, ConsultView]:
    """The question taken: the tree level by level, or the streamed answer; returns the last view."""
    try:
        running = say("consult.msg.building" if use_tolc else "consult.msg.answering_first")
        yield view(firm, state, running, working=True, question="")
        deadline = _deadline(visitors, "the clarification tree" if use_tolc else "the answer", step)
        if not use_tolc:
            return (yield from _stream(firm, state, firm.answer(state, deadline), question=""))
        tree_height, tree_k, reduced = _tree_size(firm, visitors, height, k)
        for n, _tree in enumerate(firm.clarify(state, tree_height, tree_k, deadline), start=1):
            building = say("consult.msg.levels", n=n)
            yield view(firm, state, building, working=True, question="")
        done = say(MARK)
        late = deadline.expired and state.tree is not None and state.tree.source == "model"
        if late:
            done = say("consult.msg.late", seconds=f"{deadline.seconds:g}", then=done)
        return view(firm, state, Html(reduced + done), "warn" if reduced or late else "info", question="")
    except Exception as exc:  # noqa: BLE001 — the UI shows every failure as a message
        return _failed(firm, state, exc, question="")


def _deadline(visitors: Visitors, what: str, step: Step | None = None) -> Deadline:
    """The step's time budget; its model calls also stop once ``step`` is cancelled."""
    return Deadline.after(
        visitors.limits.step_budget_s,
        what,
        cancel=step.token if step else None,
        allowance=step.allowance if step else None,
    )


def _tree_size(firm: Firm, visitors: Visitors, height, k) -> tuple[int, int, Html]:
    """The tree size asked for, within the sliders' range and the visitors' limit; and a note if reduced."""
    asked_h = min(max(_int(height) or firm.height, 2), MAX_HEIGHT)
    asked_k = min(max(_int(k) or firm.k, 1), MAX_K)
    if not firm.tree_builder.uses_model:  # a tree read off similar cases costs no model call
        return asked_h, asked_k, Html("")
    tree_height, tree_k = fit_tree(asked_h, asked_k, visitors.limits.tree_calls)
    if (tree_height, tree_k) == (asked_h, asked_k):
        return tree_height, tree_k, Html("")
    reduced = say(
        "consult.msg.reduced",
        h=tree_height,
        k=tree_k,
        limit=visitors.limits.tree_calls,
        asked_h=asked_h,
        asked_k=asked_k,
        calls=tree_calls(asked_h, asked_k),
    )
    return tree_height, tree_k, Html(reduced + " ")


def answer(
    firm: Firm, state: Consultation | None, visitors: Visitors | None = None, visit: Visit = DIRECT
) -> Iterator[ConsultView]:
    """The lawyer answers the latest question with the facts marked so far (streamed)."""
    first = say("consult.msg.ask_first")
    yield from _lawyer_streams(firm, state, visitors, visit, firm.answer, "answer", first)


def regenerate(
    firm: Firm, state: Consultation | None, visitors: Visitors | None = None, visit: Visit = DIRECT
) -> Iterator[ConsultView]:
    """Answer the latest question again (the previous answer is dropped)."""
    nothing = say("consult.msg.nothing_to_regenerate")
    yield from _lawyer_streams(firm, state, visitors, visit, firm.regenerate, "regenerate", nothing)


def _lawyer_streams(
    firm: Firm,
    state: Consultation | None,
    visitors: Visitors | None,
    visit: Visit,
    run: Callable[[Consultation, Deadline], Iterator[str]],
    step: str,
    no_consultation: Html,
) -> Iterator[ConsultView]:
    """``run`` (``firm.answer`` or ``firm.regenerate``) streamed as the visitor's one model step; the firm
    says whether the consultation accepts it (``step`` names its refusal in :data:`REFUSALS`)."""
    visitors = visitors or Visitors()
    if not owner_of(state, visit):
        yield _foreign(firm, state)
        return
    if state is None:
        yield view(firm, state, no_consultation, "warn")
        return

    def streamed(running: Step) -> Generator[ConsultView, None, ConsultView]:
        try:
            pieces = run(state, _deadline(visitors, "the answer", running))
        except StepNotAllowed as exc:
            return refused(firm, state, exc, step)
        return (yield from _stream(firm, state, pieces))

    yield from _one_step(visitors, visit, step, streamed, lambda: _busy(firm, state))


def _stream(
    firm: Firm, state: Consultation, pieces: Iterator[str], **also
) -> Generator[ConsultView, None, ConsultView]:
    """The answer as it streams: the chat updated at most every :data:`STREAM_UPDATE_S` (a model sends a
    piece per token); returns the whole view, drawn once the answer is checked.

    While the answer streams only the chat changes, and only at its end: the earlier messages are drawn
    once, and each update adds the new text to the last message (no cursor mark after it), so Gradio's
    streaming diff sends the browser just the new characters (an ``append``) and every other component
    is left as it is (:data:`~lawluo.ui.views.KEEP`).
    """
    text, shown = "", 0.0
    answering = say("consult.msg.answering")
    try:
        yield view(firm, state, answering, streaming="", **also)
        earlier: list[dict] = []
        for n, piece in enumerate(pieces):
            text += piece
            if n == 0:  # retrieval has run: its trace step shows with the first piece
                yield view(firm, state, answering, streaming=text, **also)
                earlier = cr.chat_messages(state)
                shown = time.monotonic()
            elif time.monotonic() - shown >= STREAM_UPDATE_S:
                yield ConsultView(state=state, chat=[*earlier, cr.streaming_message(text)], **also)
                shown = time.monotonic()
        last = state.turns[-1]
        done = cr.note_html(last.note) if last.note else say("consult.msg.answered")
        return view(firm, state, done, "warn" if last.note else "info", **also)
    except Exception as exc:  # noqa: BLE001
        return _failed(firm, state, exc, **also)


def mark(
    firm: Firm,
    state: Consultation | None,
    node_id: str,
    value: str,
    visit: Visit = DIRECT,
    *,
    visitors: Visitors | None = None,
) -> ConsultView:
    """Mark a tree element yes / no / unknown; a no folds its subtree."""
    if not owner_of(state, visit):
        return _foreign(firm, state)
    if state is None:
        return view(firm, state, say("consult.msg.no_tree"), "warn")
    if _is_busy(visitors, visit):  # a growing tree would drop the mark with its next level
        return _busy(firm, state)
    try:
        firm.mark(state, str(node_id), str(value))
    except (KeyError, ValueError) as exc:
        return refused(firm, state, exc, "mark")
    key = cr.MARK_TEXT.get(str(value))
    return view(
        firm, state, say("consult.msg.marked", node=node_id, mark=message(key) if key else str(value))
    )


def mark_clicked(
    firm: Firm,
    state: Consultation | None,
    evt: gr.EventData,
    visit: Visit = DIRECT,
    *,
    visitors: Visitors | None = None,
) -> ConsultView:
    """A click on a mark button of the tree (its ``data-node`` and ``data-mark``)."""
    data = getattr(evt, "_data", None) or {}
    if not isinstance(data, dict):
        data = {}
    node, value = str(data.get("node", ""))[:40], str(data.get("mark", ""))[:20]
    return mark(firm, state, node, value, visit, visitors=visitors)


def _rebuilt(
    firm: Firm,
    state: Consultation,
    start: Callable[[], Iterator],
    step: str,
    building: Html,
    done: Callable[[Message], Html],
) -> Generator[ConsultView, None, ConsultView]:
    """Drive a rebuild of the tree the firm starts with ``start()`` (:meth:`Firm.reclarify`, :meth:`Firm.reissue`):
    what the firm refuses is shown as a refusal of ``step``; while the new tree grows the tree is shown with
    the ``building`` message; a rebuild that fails or is closed halfway (the page left) is closed, which puts
    the consultation back as it was. Returns the final view, its message ``done(kept)`` with the marks kept
    (a :class:`~lawluo.i18n.Message`)."""
    marked = sum(n.mark != "unknown" for n in state.tree.visible())
    try:
        rebuild = start()
    except (ConsultationClosed, StepNotAllowed, KeyError, ValueError) as exc:
        return refused(firm, state, exc, step)
    try:
        for _tree in rebuild:
            yield view(firm, state, building, working=True)
    except BaseException as exc:  # failed, or the page left halfway
        rebuild.close()  # a rebuild closed before it ends puts the consultation back (the firm does)
        if not isinstance(exc, Exception):  # the page left: nothing more is shown
            raise
        return _failed(firm, state, exc)
    kept = sum(n.mark != "unknown" for n in state.tree.visible())
    words = (
        message("consult.msg.kept", kept=kept, marked=marked) if marked else message("consult.msg.mark_each")
    )
    return view(firm, state, done(words))


def set_domain(
    firm: Firm,
    state: Consultation | None,
    domain_id: str | None,
    visit: Visit = DIRECT,
    *,
    visitors: Visitors | None = None,
) -> Iterator[ConsultView]:
    """The client overrides the receptionist's domain. While the tree awaits the client's marks it is
    built again from the chosen domain's elements, keeping the marks of the elements still in it
    (:meth:`Firm.reclarify`); so is it when the client chooses the routed domain itself and the tree's
    elements came from another (soft routing, :func:`~lawluo.tolc.builder.drawn_elsewhere`). Once the
    lawyer has answered, the choice applies to the next answers. Yields views; the last is sent once the
    step is over."""
    visitors = visitors or Visitors()
    if not owner_of(state, visit):
        yield _foreign(firm, state)
        return
    if state is None or not state.turns:
        yield view(firm, state, say("consult.msg.domain_first"), "warn")
        return
    if _is_busy(visitors, visit):
        yield _busy(firm, state)
        return
    tree = state.tree if state.status == Status.CLARIFYING else None
    rebuild = tree is not None and (domain_id != state.domain or drawn_elsewhere(tree))
    if not domain_id or (domain_id == state.domain and not rebuild):
        yield view(firm, state)
        return
    if not rebuild:
        try:
            firm.set_domain(state, domain_id)
        except (KeyError, ValueError) as exc:
            yield refused(firm, state, exc, "domain")
            return
        yield view(firm, state, say(DOMAIN_CHANGED_KEY))
        return

    def run(step: Step) -> Generator[ConsultView, None, ConsultView]:
        deadline = _deadline(visitors, "the clarification tree", step)
        return (
            yield from _rebuilt(
                firm,
                state,
                lambda: firm.reclarify(state, domain_id, deadline),
                "domain",
                say(REBUILDING_KEY),
                lambda kept: cr.say_chinese(
                    TREE_REBUILT, {"name": cr.domain_field(firm.domains, state.domain)}, kept=kept
                ),
            )
        )

    yield from _one_step(visitors, visit, "domain", run, lambda: _busy(firm, state))


def choose_issue(
    firm: Firm,
    state: Consultation | None,
    issue_id: str | None,
    visit: Visit = DIRECT,
    *,
    visitors: Visitors | None = None,
) -> Iterator[ConsultView]:
    """The client chose an issue in the tree's 问题类型 menu while the tree awaits marks: the tree is built
    again with that issue's elements first, keeping the marks of the elements still in it
    (:meth:`Firm.reissue`). Choosing the issue the tree already has changes nothing. Yields views; the last
    is sent once the step is over."""
    visitors = visitors or Visitors()
    if not owner_of(state, visit):
        yield _foreign(firm, state)
        return
    if state is None or state.tree is None:
        yield view(firm, state, say("consult.msg.issue_first"), "warn")
        return
    if _is_busy(visitors, visit):
        yield _busy(firm, state)
        return
    issue_id = str(issue_id or "")[:200]
    if not issue_id or issue_id == firm.issue_menu(state)[1]:
        yield view(firm, state)
        return

    def run(step: Step) -> Generator[ConsultView, None, ConsultView]:
        deadline = _deadline(visitors, "the clarification tree", step)

        def rebuilt(kept: Message) -> Html:  # only after Firm.reissue accepted the issue
            title = firm.material.issue(issue_id).title
            return cr.say_chinese(ISSUE_REBUILT, {"title": title}, kept=kept)

        return (
            yield from _rebuilt(
                firm,
                state,
                lambda: firm.reissue(state, issue_id, deadline),
                "issue",
                say(ISSUE_REBUILDING_KEY),
                rebuilt,
            )
        )

    yield from _one_step(visitors, visit, "issue", run, lambda: _busy(firm, state))


def issue_clicked(
    firm: Firm,
    state: Consultation | None,
    evt: gr.EventData,
    visit: Visit = DIRECT,
    *,
    visitors: Visitors | None = None,
) -> Iterator[ConsultView]:
    """A choice in the tree's 问题类型 menu (its option's value, sent by the tree's script)."""
    data = getattr(evt, "_data", None) or {}
    issue_id = str(data.get("issue", "")) if isinstance(data, dict) else ""
    yield from choose_issue(firm, state, issue_id, visit, visitors=visitors)


def end(
    firm: Firm,
    state: Consultation | None,
    visitors: Visitors | None = None,
    visit: Visit = DIRECT,
    client: str | None = None,
) -> ConsultView:
    """The secretary's report (for ``client``, the name the visitor typed), scored by the boss (the score is
    in the trace), and its .md and .docx files, which hold the same text; the consultation is closed.
    Ending a closed consultation offers its report again.

    The files are written into a fresh folder of the visitor's session, named by the server (never from
    the consultation, which may come from an uploaded file), readable by the app's user only.
    """
    visitors = visitors or Visitors()
    nothing = {"report": "", "download_md": _hidden(), "download_docx": _hidden()}
    if not owner_of(state, visit):
        return _foreign(firm, state, **nothing)
    if state is None:
        return view(firm, state, say("consult.msg.nothing_to_report"), "warn", **nothing)
    step = None
    try:
        with visitors.step(visit, "end") as step:
            if step is None:
                return _busy(firm, state, **nothing)
            return step.shown(_report(firm, state, visitors, visit, client, step, nothing)) or ConsultView()
    finally:
        if step is not None:
            visitors.ended(visit, step)


def _report(
    firm: Firm,
    state: Consultation,
    visitors: Visitors,
    visit: Visit,
    client: str | None,
    step: Step,
    nothing: dict,
) -> ConsultView:
    """:func:`end`'s work, as the session's model step ``step``."""
    try:
        try:
            # an empty name box keeps the name the consultation has (one resumed from a file)
            firm.close(state, _deadline(visitors, "the report", step), (client or "").strip() or None)
        except ConsultationClosed:
            pass  # ended before: its report is offered again
        if step.replaced:  # 新咨询 cleared the session's folder: write nothing into it
            return ConsultView()
        report = Report(**state.report)
        markdown = render_markdown(report)
        folder = visitors.folder(visit)
        md_path = _write_private(folder / f"{REPORT_FILE}.md", markdown)
        docx_path = render_docx(report, folder / f"{REPORT_FILE}.docx")
        os.chmod(docx_path, 0o600)
    except StepNotAllowed as exc:
        return refused(firm, state, exc, "end", **nothing)
    except Exception as exc:  # noqa: BLE001
        return _failed(firm, state, exc, **nothing)
    return view(
        firm,
        state,
        cr.note_html(report.notice) if report.notice else say("consult.msg.ended"),
        "warn" if report.notice else "info",
        report=shown_report(markdown, report),  # the report's model-written text links nowhere
        download_md=gr.update(value=str(md_path), visible=True),
        download_docx=gr.update(value=str(docx_path), visible=True),
    )


def shown_report(markdown: str, report: Report) -> str:
    """The report as the page shows it: its model-written text links nowhere, and its number and the name of
    the model that wrote it, codes, are marked as no language's (``zxx``: the report is Chinese, they are not)."""
    shown = inert_links(markdown)
    if report.number:
        shown = shown.replace(report.number, f'<span lang="zxx">{cr.esc(report.number)}</span>', 1)
    by = " ".join(str(report.generated_by or "").split())
    if by and not report.partial:  # the model's name: a code too
        line = GENERATED_BY.format(by=by)
        shown = shown.replace(line, GENERATED_BY.format(by=f'<span lang="zxx">{cr.esc(by)}</span>'), 1)
    return shown


def _write_private(path: Path, text: str) -> Path:
    """Write ``text`` to a new file only the app's user can read (Gradio's served copy keeps the mode)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def save_consultation(
    firm: Firm, state: Consultation | None, visitors: Visitors | None = None, visit: Visit = DIRECT
) -> ConsultView:
    """The consultation as a JSON file to download (``saved``; resumable here or with
    ``python -m lawluo consult``)."""
    visitors = visitors or Visitors()
    if not owner_of(state, visit):
        return _foreign(firm, state, saved=_hidden())
    if state is None or not state.turns:
        return view(firm, state, say("consult.msg.nothing_to_save"), "warn", saved=_hidden())
    try:
        path = _write_private(visitors.folder(visit) / SAVED_FILE, state.to_json())
    except OSError as exc:
        return _failed(firm, state, exc, saved=_hidden())
    saved = gr.update(value=str(path), visible=True)
    return view(firm, state, say("consult.msg.saved"), saved=saved)


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
        return _foreign(firm, state)
    if _is_busy(visitors, visit):
        return _busy(firm, state)
    path = Path(upload if isinstance(upload, str) else getattr(upload, "name", "") or "")
    try:
        if not path.is_file():
            raise Refusal(message("consult.resume.no_file"))
        spent = visitors.resume(visit, path.stat().st_size) if visitors is not None else None
        if spent is not None:  # each try counts: parsing costs too
            raise Refusal(spent)
        if path.stat().st_size > MAX_SAVED_BYTES:
            raise Refusal(_too_big(path.stat().st_size))
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
    return view(firm, resumed, shown, domain=domain_menu(resumed, reopen=True))


def _too_big(n: int) -> Message:
    return message("consult.resume.too_big", n=f"{n:,}", limit=f"{MAX_SAVED_BYTES:,}")


def parse_saved(firm: Firm, raw: bytes | str) -> Consultation:
    """A saved consultation (an uploaded file's bytes, or the copy a browser kept) checked whole against
    :mod:`lawluo.firm.saved` and the firm's domain table; raises :class:`Refusal` (a ``ValueError``) saying
    what is wrong (its ``.message``; never where the file was stored)."""
    if isinstance(raw, bytes):
        if len(raw) > MAX_SAVED_BYTES:
            raise Refusal(_too_big(len(raw)))
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise Refusal(message(NOT_TEXT)) from None
    if not isinstance(raw, str) or "\x00" in raw:
        raise Refusal(message(NOT_TEXT))
    if len(raw.encode("utf-8")) > MAX_SAVED_BYTES:
        raise Refusal(_too_big(len(raw.encode("utf-8"))))
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
        return _foreign(firm, state)
    if visitors is not None:
        if not visitors.replace(visit, STARTED_OVER, REPLACE_WAIT_S):
            logger.info("新咨询: the step it stopped still waits for its model call")
        visitors.forget(visit.session)
    return view(
        firm,
        None,
        question="",
        report="",
        download_md=_hidden(),
        download_docx=_hidden(),
        domain=domain_menu(None, reopen=True),
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
    if restored.status == Status.CLOSED and restored.report:
        report, shown = (
            shown_report(render_markdown(Report(**restored.report)), Report(**restored.report)),
            Html(f"{shown} {say(RESTORED_CLOSED_KEY)}"),
        )
    return view(firm, restored, shown, report=report)


def consultation_json(state: Consultation | None, visit: Visit = DIRECT) -> dict:
    """The session's consultation as a JSON object (empty before the first question, or when the request
    does not come from the browser the consultation belongs to)."""
    return state.to_dict() if state is not None and owner_of(state, visit) else {}


def _int(value) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


# -- the tab --------------------------------------------------------------------------------------


def build_consult_tab(
    firm: Firm,
    models: LanguageModels,
    limits: VisitorLimits | None = None,
    demo: gr.Blocks | None = None,
    copy: UICopy | None = None,
) -> Visitors:
    """The tab's components and events, inside the current ``gr.Blocks``; returns its :class:`Visitors`.

    With ``demo`` the visitor's consultation and files are freed when they close the page, and a page
    reloaded in a browser tab that kept a consultation gets it back (:func:`restore_consultation`). The
    layout's narrow-screen order is :data:`LAYOUT_CSS` (the app passes it to ``launch``).
    """
    visitors = Visitors(limits)
    intro, more = _intro(copy)
    with gr.Tab(TAB_LABEL, id="consult", elem_id="ll-consult"):
        if intro:
            gr.Markdown(intro, elem_id="ll-intro")
        if more:
            with gr.Accordion(t("consult.how_it_works"), open=False, elem_id="ll-intro-more"):
                gr.Markdown(more)
        gr.HTML(cr.banner_html(models.status()), css_template=HTML_CSS, elem_id="ll-banner")
        # idle consultations expire (the visitor can save one to keep it); a closed page frees it at once
        state = gr.State(None, time_to_live=visitors.limits.session_ttl_s)
        # the copy a reload brings back, on its way between the server and the tab's sessionStorage (see
        # remembered / REMEMBER_JS and restore_consultation / RESTORE_JS); not gr.BrowserState: its copy would
        # stay in localStorage for the next user of the computer
        stored = gr.Textbox("", visible=False)
        with gr.Row(elem_id="ll-main"):
            with gr.Column(scale=3, elem_id="ll-left"):
                chat = gr.Chatbot(
                    label=t("consult.chat"),
                    elem_id="ll-chat",
                    height=None,
                    min_height=CHAT_MIN_HEIGHT,
                    max_height=CHAT_MAX_HEIGHT,
                    buttons=["copy"],
                )
                question = gr.Textbox(
                    label=t("consult.question"),
                    placeholder=t("consult.question_placeholder"),
                    lines=3,
                    max_lines=8,
                    elem_id="ll-question",
                )
                with gr.Row(elem_id="ll-buttons"):
                    ask_btn = gr.Button(t("consult.ask"), variant="primary", elem_id="ll-ask")
                    regen_btn = gr.Button(t("consult.regenerate"), elem_id="ll-regenerate")
                    end_btn = gr.Button(t("consult.end"), variant="stop", elem_id="ll-end")
                    new_btn = gr.Button(t("consult.new"), elem_id="ll-new")
                client_name = gr.Textbox(
                    label=t("consult.client"),
                    max_lines=1,
                    max_length=100,
                    elem_id="ll-client",
                )
                facts_date = date_box(
                    t("consult.facts_date"),
                    t("consult.facts_date_info"),
                    "ll-facts-date",
                    t("consult.facts_date_placeholder"),
                )
                message = gr.HTML("", css_template=HTML_CSS, js_on_load=PAGE_JS, elem_id="ll-message")
                gr.Markdown("### " + t("consult.tree_title"), elem_id="ll-tree-title")
                tree = gr.HTML(
                    cr.tree_html(None), css_template=HTML_CSS, js_on_load=TREE_JS, elem_id="ll-tree"
                )
                submit_btn = gr.Button(t("consult.submit"), variant="primary", elem_id="ll-submit")
            with gr.Column(scale=2, elem_id="ll-right"):
                routing = gr.HTML(
                    cr.routing_html(None, None, (), firm.domains, firm.receptionist.notice),
                    css_template=HTML_CSS,
                    elem_id="ll-routing",
                )
                domain_box = gr.Dropdown(
                    choices=[(cr.domain_choice(d), d.id) for d in firm.domains],
                    value=None,
                    label=t("consult.domain"),
                    elem_id="ll-domain",
                )
                with gr.Accordion(t("consult.advanced"), open=False, elem_id="ll-use-tolc-accordion"):
                    use_tolc = gr.Checkbox(True, label=t("consult.use_tolc"), elem_id="ll-use-tolc")
                    height = gr.Slider(
                        2,
                        MAX_HEIGHT,
                        value=firm.height,
                        step=1,
                        label=t("consult.height"),
                        elem_id="ll-height",
                    )
                    k = gr.Slider(1, MAX_K, value=firm.k, step=1, label=t("consult.k"), elem_id="ll-k")
                with gr.Accordion(t("consult.save_resume"), open=False, elem_id="ll-save-accordion"):
                    save_btn = gr.Button(t("consult.save"), elem_id="ll-save")
                    saved = gr.File(label=t("consult.saved"), visible=False, elem_id="ll-saved")
                    resume_btn = gr.UploadButton(
                        t("consult.resume"), file_types=[".json"], elem_id="ll-resume"
                    )
                with gr.Accordion(t("consult.citations"), open=True, elem_id="ll-citations-accordion"):
                    citations = gr.HTML(
                        cr.citations_html(None), css_template=HTML_CSS, elem_id="ll-citations"
                    )
                with gr.Accordion(
                    t("consult.retrieved"),
                    open=False,
                    elem_id="ll-retrieved-accordion",
                ):
                    retrieved = gr.HTML("", css_template=HTML_CSS, elem_id="ll-retrieved")
                with gr.Accordion(t("consult.trace"), open=False, elem_id="ll-trace-accordion"):
                    trace = gr.HTML(cr.trace_html([]), css_template=HTML_CSS, elem_id="ll-trace")
        gr.Markdown("### " + t("consult.report"))
        report = gr.Markdown("", elem_id="ll-report")
        with gr.Row():
            download_md = gr.DownloadButton(t("consult.download_md"), visible=False, elem_id="ll-download-md")
            download_docx = gr.DownloadButton(
                t("consult.download_docx"), visible=False, elem_id="ll-download-docx"
            )

        # Hidden inputs of the scriptable /mark endpoint (the tree's buttons use the click event).
        node_box = gr.Textbox(visible=False)
        mark_box = gr.Textbox(visible=False)
        mark_api = gr.Button(visible=False)
        issue_box = gr.Textbox(visible=False)
        issue_api = gr.Button(visible=False)
        state_api = gr.Button(visible=False)
        state_json = gr.JSON(visible=False)

        components = {
            "state": state,
            "question": question,
            "report": report,
            "download_md": download_md,
            "download_docx": download_docx,
            "saved": saved,
            "chat": chat,
            "routing": routing,
            "domain": domain_box,
            "tree": tree,
            "citations": citations,
            "retrieved": retrieved,
            "trace": trace,
            "message": message,
            "stored": stored,
        }

        def outputs(names: tuple[str, ...]) -> list:
            return [components[name] for name in names]

        # Each event handler binds the plain handler to this app's visitors and the request's visitor,
        # and turns its view into the event's outputs (the same names as the event's components).
        def on_ask(session, text, use, h, kk, day=None, request: gr.Request = None):
            for shown in ask(firm, session, text, use, h, kk, visitors, visit_of(request), facts_date=day):
                yield shown.outputs(ASKED)

        def on_answer(session, request: gr.Request):
            for shown in answer(firm, session, visitors, visit_of(request)):
                yield shown.outputs(STEPPED)

        def on_regenerate(session, request: gr.Request):
            for shown in regenerate(firm, session, visitors, visit_of(request)):
                yield shown.outputs(STEPPED)

        def on_end(session, name: str | None = None, request: gr.Request = None):
            # ``name`` defaults to None: a script may leave it out (``/end_consultation`` with no name)
            return end(firm, session, visitors, visit_of(request), name).outputs(ENDED)

        def on_new(session, request: gr.Request):
            return new_consultation(firm, visitors, visit_of(request), session).outputs(RESTARTED)

        def on_save(session, request: gr.Request):
            return save_consultation(firm, session, visitors, visit_of(request)).outputs(SAVED)

        def on_resume(session, upload, request: gr.Request):
            return resume_consultation(firm, session, upload, visit_of(request), visitors=visitors).outputs(
                STEPPED
            )

        def on_mark(session, node_id, value, request: gr.Request):
            return mark(firm, session, node_id, value, visit_of(request), visitors=visitors).outputs(STEPPED)

        def on_tree_click(session, evt: gr.EventData, request: gr.Request):
            return mark_clicked(firm, session, evt, visit_of(request), visitors=visitors).outputs(STEPPED)

        def on_issue(session, issue_id, request: gr.Request):
            for shown in choose_issue(firm, session, issue_id, visit_of(request), visitors=visitors):
                yield shown.outputs(STEPPED)

        def on_tree_issue(session, evt: gr.EventData, request: gr.Request):
            for shown in issue_clicked(firm, session, evt, visit_of(request), visitors=visitors):
                yield shown.outputs(STEPPED)

        def on_domain(session, domain_id, request: gr.Request):
            for shown in set_domain(firm, session, domain_id, visit_of(request), visitors=visitors):
                yield shown.outputs(STEPPED)

        def on_consultation(session, request: gr.Request):
            return consultation_json(session, visit_of(request))

        def on_remember(session, request: gr.Request):
            return ConsultView(stored=remembered(session, visit_of(request))).outputs(("stored",))[0]

        def on_restore(session, kept, request: gr.Request):
            return restore_consultation(firm, session, kept, visit_of(request)).outputs(RESTORED)

        def step(
            triggers: list,
            handler,
            inputs: list,
            names: tuple[str, ...],
            follow: str = "",
            then: str = "",
            **options,
        ) -> None:
            """An event that changes the consultation: the page's controls are disabled as its request
            leaves and enabled when it is done (or failed), so no other step of the page can overlap it;
            once it is done, the browser's copy of the consultation is updated (:func:`remembered`)."""
            event = gr.on(
                triggers, handler, inputs=inputs, outputs=outputs(names), js=lock_js(follow), **options
            )
            event.then(None, js=UNLOCK_JS, queue=False, api_visibility="private")
            if then:
                event.success(None, js=then, queue=False, api_visibility="private")
            event.failure(None, js=UNLOCK_JS, queue=False, api_visibility="private")
            remember = event.then(on_remember, [state], [stored], queue=False, api_visibility="private")
            remember.then(None, [stored], None, js=REMEMBER_JS, queue=False, api_visibility="private")

        llm = {"concurrency_id": "firm", "concurrency_limit": FIRM_CONCURRENCY, "trigger_mode": "once"}
        ask_inputs = [state, question, use_tolc, height, k, facts_date]
        step(
            [ask_btn.click, question.submit], on_ask, ask_inputs, ASKED, api_name="ask", then=SHOW_NEXT, **llm
        )
        step([submit_btn.click], on_answer, [state], STEPPED, api_name="answer", follow=SHOW_CHAT, **llm)
        step(
            [regen_btn.click], on_regenerate, [state], STEPPED, api_name="regenerate", follow=SHOW_CHAT, **llm
        )
        step([end_btn.click], on_end, [state, client_name], ENDED, api_name="end_consultation", **llm)
        step([new_btn.click], on_new, [state], RESTARTED, api_name="new_consultation")
        # the chatbot's own trash button starts over too (not just the picture of the chat)
        step([chat.clear], on_new, [state], RESTARTED, api_visibility="private")
        step([resume_btn.upload], on_resume, [state, resume_btn], STEPPED, api_name="resume_consultation")
        step([tree.click], on_tree_click, [state], STEPPED, api_visibility="private")
        step([domain_box.input], on_domain, [state, domain_box], STEPPED, api_name="set_domain", **llm)
        step([tree.select], on_tree_issue, [state], STEPPED, api_visibility="private", **llm)
        step([issue_api.click], on_issue, [state, issue_box], STEPPED, api_name="set_issue", **llm)
        # scripts only (hidden buttons), and saving, which changes nothing: no lock
        mark_api.click(on_mark, [state, node_box, mark_box], outputs(STEPPED), api_name="mark")
        save_btn.click(on_save, [state], outputs(SAVED), api_name="save_consultation")
        state_api.click(on_consultation, [state], [state_json], api_name="consultation")
    if demo is not None:

        def on_leave(request: gr.Request) -> None:
            """The visitor's page lost its connection: stop its model step now; after a grace period,
            free what it held."""
            leave_later(visitors, request)

        demo.unload(on_leave)
        demo.load(
            on_restore,
            [state, stored],
            outputs(RESTORED),
            js=RESTORE_JS,
            api_visibility="private",
            queue=False,
            show_progress="hidden",
        ).then(None, [stored], None, js=REMEMBER_JS, queue=False, api_visibility="private")
    return visitors


def _intro(copy: UICopy | None) -> tuple[str, str]:
    """The tab's intro (``consult.md``): what is shown above the consultation, and what is folded under
    使用说明 (after a line ``<!-- more -->``), so that on a phone the question box is on the first screen."""
    return copy.split("consult.md", INTRO_FOLD) if copy else ("", "")


def leave_later(visitors: Visitors, request: gr.Request) -> None:
    """Stop the departed session's model step at once; free its consultation and files ``session_grace_s``
    after its page disconnected.

    A page whose connection only dropped (a phone put away, a network blip) reconnects its heartbeat
    with the same session: if it has by then (:class:`~lawluo.ui.visitors.Presence`), or a step of it is
    still running, nothing is freed and the check is made again later. Its running step is stopped all the
    same (what was streamed is kept, with the firm's note): nobody is sure to be waiting for it.
    """
    session = getattr(request, "session_hash", None)
    if session:
        visitors.cancel(session, PAGE_LEFT)
    app = getattr(getattr(request, "request", None), "app", None)
    if not session or app is None:
        return
    presence = getattr(getattr(app, "state", None), "lawluo_presence", None)

    def check() -> None:
        if presence is not None and presence.is_open(session):
            return  # the page is back: Gradio calls unload again when it leaves
        if visitors.busy(session):  # a step of the departed page still runs: look again later
            later(check)
            return
        visitors.forget(session)
        free_session_state(getattr(app, "state_holder", None), session)
        give_back_memory()

    def later(fn) -> None:
        timer = threading.Timer(max(visitors.limits.session_grace_s, 1.0), fn)
        timer.daemon = True
        timer.start()

    later(check)


def free_session_state(holder, session: str) -> None:
    """Drop a departed session's ``gr.State`` values and its copies of the components' configuration.

    Gradio keeps a closed page's state for an hour, and the session's configuration copies until 10,000
    newer sessions push them out; a consultation cannot be reopened once its page is gone for good (a new
    page is a new session), so both are freed at once. Uses the app's Gradio state holder.
    """
    if holder is None or not session:
        return
    try:
        holder.delete_state(session)
        with holder.lock:
            holder.session_data.pop(session, None)
            holder.time_last_used.pop(session, None)
    except (KeyError, AttributeError):  # already gone, or a Gradio whose holder works differently
        logger.debug("could not free the state of session %s", session, exc_info=True)
