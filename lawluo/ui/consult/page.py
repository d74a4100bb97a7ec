"""The consultation tab's page: its scripts and styles (files under ``assets/ui/``, read once), the
controls a running step disables, the browser's copy of the consultation, and the catalogue keys of the
tab's messages (with, under their old names, their Chinese texts: the logs, the tests)."""

from __future__ import annotations

import json
import logging

from ...firm.saved import MAX_TURN_CHARS
from ...i18n import LANGUAGES, text
from .. import consult_render as cr
from ..i18n import LOCALES, t
from ..render import CSS
from .assets import asset

logger = logging.getLogger("lawluo.ui.consult_tab")

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
TREE_JS = asset("consult_tree.js")

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
#: ``__llSteps`` counts the steps running (:data:`UNLOCK_JS` counts them down); ``__llStarted`` only ever counts
#: up, so a delayed follow-up of one step (:data:`SHOW_NEXT`) can tell that another has started since.
LOCK_JS = (
    "(...inputs) => { if (!window.__llSteps) window.__llSince = Date.now();"
    " window.__llSteps = (window.__llSteps || 0) + 1; window.__llStarted = (window.__llStarted || 0) + 1;"
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
    # again once late redraws (the message, the chat) have settled, unless a step started meanwhile (提交
    # tapped at once): its own scroll (SHOW_CHAT) is where the visitor's eye now is
    " const started = window.__llStarted;"
    " show(); setTimeout(() => { if (window.__llStarted === started) show(); }, 300);"
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
PAGE_JS = asset("consult_page.js")
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
LAYOUT_CSS = asset("consult_layout.css")

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
REMEMBER_JS = asset("consult_remember.js")
#: Run in the browser as the page loads (``js`` of the load event, before :func:`restore_consultation`):
#: the tab's copy becomes the event's ``stored`` input. What earlier versions of the page left in
#: ``localStorage`` is deleted: their copy (``gr.BrowserState``) and the runs of Gradio's run history
#: (``launch(run_history=False)`` deletes only those of the running server's ``app_id``, a new one at
#: each start).
RESTORE_JS = asset("consult_restore.js")
REMEMBER_JS, RESTORE_JS = (
    js.replace("__KEY__", json.dumps(STORAGE_KEY)).replace("__NOTHING__", json.dumps(NOTHING_STORED))
    for js in (REMEMBER_JS, RESTORE_JS)
)
RESTORED_KEY, RESTORED_CLOSED_KEY = "consult.restored", "consult.restored_closed"
RESTORED_MESSAGE, RESTORED_CLOSED = text(RESTORED_KEY), text(RESTORED_CLOSED_KEY)
#: Before why the browser's copy cannot be restored (``{why}``).
STORED_REFUSED_KEY = "consult.stored_refused"
STORED_REFUSED = text(STORED_REFUSED_KEY, why="")
