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

Which step a consultation accepts is the firm's to say (the tab reads no status: it asks
:meth:`~lawluo.firm.Firm.allowed`, and :meth:`~lawluo.firm.Firm.change_domain` decides what a choice of
domain does): each step raises
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
columns become one, the citations right under the answer (:data:`LAYOUT_CSS`). The page's scripts and
styles are files, read once at import: ``assets/ui/consult_page.js`` (:data:`PAGE_JS`),
``consult_tree.js`` (:data:`TREE_JS`), ``consult_remember.js`` and ``consult_restore.js``
(:data:`REMEMBER_JS`, :data:`RESTORE_JS`), ``consult_layout.css`` (:data:`LAYOUT_CSS`) and ``consult.css``
(the tree's, the trace's and the routing's styles).

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

# The tab lives in :mod:`lawluo.ui.consult`: ``page`` (its scripts, styles and messages), ``view`` (what an event
# shows), ``steps`` (Ask and the lawyer's answers), ``handlers`` (marks, domain, issue, end, save), ``restore``
# (resume, the browser's copy, 新咨询), ``leaving`` (a page gone) and ``layout`` (the components and events).
# Every name the app, the MCP tools and the tests use is importable from here, as before.
from ..firm import Consultation  # noqa: F401
from .consult.handlers import (  # noqa: F401
    choose_issue,
    end,
    issue_clicked,
    mark,
    mark_clicked,
    rebuilt_view,
    save_consultation,
    set_domain,
    shown_report,
    write_private,
    write_report,
)
from .consult.layout import (  # noqa: F401
    build_consult_tab,
    intro_parts,
)
from .consult.leaving import (  # noqa: F401
    free_session_state,
    leave_later,
)
from .consult.page import (  # noqa: F401
    BUSY,
    BUSY_MESSAGE,
    CHAT_MAX_HEIGHT,
    CHAT_MIN_HEIGHT,
    CLEAR_BUTTON,
    CLOSED,
    CLOSED_MESSAGE,
    CONTROLS,
    DOMAIN_CHANGED,
    DOMAIN_CHANGED_KEY,
    ELAPSED,
    ELAPSED_TEXT,
    EMPTY,
    EMPTY_MESSAGE,
    FACTS_DATE,
    FACTS_DATE_MESSAGE,
    FAILED,
    FAILED_MESSAGE,
    FIRM_CONCURRENCY,
    FOREIGN,
    FOREIGN_MESSAGE,
    HTML_CSS,
    INTRO_FOLD,
    ISSUE_REBUILDING,
    ISSUE_REBUILDING_KEY,
    ISSUE_REBUILT,
    LAYOUT_CSS,
    LOCK_JS,
    MARK,
    MARK_MESSAGE,
    MAX_QUESTION_CHARS,
    MAX_SAVED_BYTES,
    MAX_STORED_BYTES,
    NEW_CONFIRM,
    NOT_TEXT,
    NOT_TEXT_MESSAGE,
    NOTHING_STORED,
    PAGE_JS,
    PAGE_LEFT,
    REBUILDING,
    REBUILDING_KEY,
    REFUSALS,
    REMEMBER_JS,
    REPLACE_WAIT_S,
    REPORT_FILE,
    RESTORE_JS,
    RESTORED_CLOSED,
    RESTORED_CLOSED_KEY,
    RESTORED_KEY,
    RESTORED_MESSAGE,
    RESUME_REFUSED,
    RESUME_REFUSED_KEY,
    SAVED_FILE,
    SHOW_CHAT,
    SHOW_NEXT,
    STARTED_OVER,
    STORAGE_KEY,
    STORED_REFUSED,
    STORED_REFUSED_KEY,
    STREAM_UPDATE_S,
    TAB_LABEL,
    TREE_JS,
    TREE_REBUILT,
    UNLOCK_JS,
    lock_js,
)
from .consult.restore import (  # noqa: F401
    consultation_json,
    new_consultation,
    parse_saved,
    remembered,
    restore_consultation,
    resume_consultation,
    too_big,
)
from .consult.steps import (  # noqa: F401
    answer,
    as_int,
    ask,
    clarify_or_answer,
    lawyer_streams,
    one_step,
    regenerate,
    step_deadline,
    stream_answer,
    tree_size,
)
from .consult.view import (  # noqa: F401
    ASKED,
    DRAWN,
    ENDED,
    RESTARTED,
    RESTORED,
    SAVED,
    STEPPED,
    ConsultView,
    Refusal,
    busy_view,
    domain_menu,
    failed_view,
    foreign_view,
    hidden_file,
    is_busy,
    refused,
    said,
    too_long,
    too_long_message,
    view,
    why,
)
from .views import KEEP, Keep  # noqa: F401
