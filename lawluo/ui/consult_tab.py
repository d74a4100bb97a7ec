"""The 法律咨询 / Consultation tab: the firm's four agents in the browser (LawLuo paper §3.2).

A visitor asks; the receptionist routes the question (overridable); the clarification tree grows level
by level and the visitor marks its facts 是 / 否 / 不确定; the lawyer's answer streams in, every statute
it cites checked; ending the consultation has the secretary write the report (shown, and downloadable
as .md and .docx); the boss's scores and the trace of every step are shown along the way.

Handlers are plain module-level functions that take the :class:`~lawluo.firm.Firm` first and the
session's :class:`~lawluo.firm.Consultation` (kept in ``gr.State``) next; the tab binds them to the
request's visitor (:mod:`.visitors`: one model step at a time per session, a bounded tree, a time
budget per step, downloads in the session's own folder, the consultation bound to its browser). They
never raise: bad input (an empty or over-long question, a click on a closed consultation, a second
click while a step runs) gets a message and the typed question stays in its box; an unexpected error
is logged and shown as a message, and the consultation keeps everything it had.

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

import logging
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import gradio as gr

from ..agents.domains import DOMAINS
from ..agents.secretary import Report, render_docx, render_markdown
from ..firm import Consultation, Firm
from ..firm.firm import ConsultationTooLong
from ..firm.saved import MAX_TURN_CHARS
from ..llm import Deadline, LanguageModels
from ..tolc.builder import MAX_HEIGHT, MAX_K
from . import consult_render as cr
from .render import CSS, notice
from .copy import UICopy
from .visitors import (
    DIRECT,
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

TAB_LABEL = "法律咨询 / Consultation"
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
  if (!button || !element.contains(button)) return;
  trigger('click', {node: button.dataset.node, mark: button.dataset.mark});
});
"""

EMPTY_MESSAGE = "请输入您的问题。Please type a question first."
CLOSED_MESSAGE = "本次咨询已结束，请点击“新咨询”开始新的咨询。This consultation has ended: start a new one."
BUSY_MESSAGE = (
    "上一个操作仍在进行中（生成澄清树、回答或报告），请等它完成后再试。"
    "Your previous request is still running: wait for it to finish, then try again."
)
FOREIGN_MESSAGE = (
    "这个咨询属于另一个浏览器，无法在此查看或继续。This consultation belongs to another browser."
)
REPORT_FILE, SAVED_FILE = "LawLuo-consultation-report", "LawLuo-consultation.json"


def too_long_message(n: int) -> str:
    return (
        f"问题过长：{n:,} 字，上限 {MAX_QUESTION_CHARS:,} 字，请精简后再提交（您输入的内容仍保留在输入框中）。"
        f"The question has {n:,} characters; the limit is {MAX_QUESTION_CHARS:,}. Shorten it and ask again."
    )


# -- the view of a consultation -------------------------------------------------------------------


VIEW_SIZE = 8  # the components view() fills


def view(
    firm: Firm, state: Consultation | None, message: str = "", kind: str = "info", streaming=None
) -> tuple:
    """What the tab shows for ``state``: chat, routing, domain, tree, citations, retrieved, trace, message."""
    lawyer_turn = next((t for t in reversed(state.turns) if t.role == "lawyer"), None) if state else None
    history = [e.summary for e in (state.trace if state else []) if e.kind in ("reroute", "override")]
    return (
        cr.chat_messages(state, streaming),
        cr.routing_html(state.routing if state else None, state.domain if state else None, history),
        state.domain if state else None,
        cr.tree_html(state.tree if state else None, firm.case_searcher.get),
        cr.citations_html(lawyer_turn),
        cr.retrieved_html(lawyer_turn),
        cr.trace_html(state.trace if state else []),
        notice(message, kind) if message else "",
    )


def _failed(firm: Firm, state: Consultation | None, exc: Exception) -> tuple:
    """Log the traceback (call inside ``except``) and show a message instead."""
    logger.exception("consultation handler failed")
    message = f"出错了 Something went wrong: {type(exc).__name__}: {exc}"
    try:
        return view(firm, state, message, "error")
    except Exception:  # noqa: BLE001 — the state cannot be drawn: show the message, leave the rest as it is
        logger.exception("consultation view failed")
        return (*[gr.skip()] * (VIEW_SIZE - 1), notice(message, "error"))


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
) -> Iterator[tuple]:
    """Route the question, then grow the clarification tree (or, without ToLC, stream the answer).

    Yields ``(state, question box, *view)``; the box is emptied once the question is taken. The tree is
    reduced to the visitors' limit of clarifier calls, and the tree or answer gets one step's budget.
    """
    visitors = visitors or Visitors()
    text = (question or "").strip()
    if not owner_of(state, visit):
        yield (state, question, *view(firm, None, FOREIGN_MESSAGE, "error"))
        return
    if not text:
        yield (state, question, *view(firm, state, EMPTY_MESSAGE, "warn"))
        return
    if len(text) > MAX_QUESTION_CHARS:
        yield (state, question, *view(firm, state, too_long_message(len(text)), "warn"))
        return
    if state is not None and state.status == "closed":
        yield (state, question, *view(firm, state, CLOSED_MESSAGE, "warn"))
        return
    with visitors.model_work(visit) as allowed:
        if not allowed:
            yield (state, question, *view(firm, state, BUSY_MESSAGE, "warn"))
            return
        if state is None:
            state = firm.new()
            state.owner = visit.owner
        try:
            firm.receive(state, text)
        except ConsultationTooLong as exc:
            yield (state, question, *view(firm, state, f"无法继续提问 Cannot ask more: {exc}", "warn"))
            return
        except Exception as exc:  # noqa: BLE001 — the UI shows every failure as a message
            yield (state, question, *_failed(firm, state, exc))
            return
        try:
            yield (state, "", *view(firm, state, "已收到问题。Question received.", "info"))
            deadline = _deadline(visitors, "澄清树 The clarification tree" if use_tolc else "回答 The answer")
            if use_tolc:
                tree_height, tree_k, reduced = _tree_size(firm, visitors, height, k)
                for _tree in firm.clarify(state, tree_height, tree_k, deadline):
                    yield (state, "", *view(firm, state, "正在生成澄清树… Building the clarification tree…"))
                done = (
                    "请逐条标记“是 / 否 / 不确定”，然后点击“提交已标记的事实”。"
                    "Mark the facts, then submit them to the lawyer."
                )
                late = deadline.expired and state.tree is not None and state.tree.source == "model"
                if late:
                    done = f"{deadline.exceeded()} 部分要素改由相似案例生成 Some elements come from similar cases. {done}"
                yield (state, "", *view(firm, state, reduced + done, "warn" if reduced or late else "info"))
            else:
                yield from _stream(firm, state, firm.answer(state, deadline), prefix=("",))
        except Exception as exc:  # noqa: BLE001 — the UI shows every failure as a message
            yield (state, "", *_failed(firm, state, exc))


def _deadline(visitors: Visitors, what: str) -> Deadline:
    return Deadline.after(visitors.limits.step_budget_s, what)


def _tree_size(firm: Firm, visitors: Visitors, height, k) -> tuple[int, int, str]:
    """The tree size asked for, within the sliders' range and the visitors' limit; and a note if reduced."""
    asked_h = min(max(_int(height) or firm.height, 2), MAX_HEIGHT)
    asked_k = min(max(_int(k) or firm.k, 1), MAX_K)
    if not firm.tree_builder.uses_model:  # a tree read off similar cases costs no model call
        return asked_h, asked_k, ""
    tree_height, tree_k = fit_tree(asked_h, asked_k, visitors.limits.tree_calls)
    if (tree_height, tree_k) == (asked_h, asked_k):
        return tree_height, tree_k, ""
    return (
        tree_height,
        tree_k,
        f"澄清树已缩小为 H={tree_height}、K={tree_k}（本站每棵树最多 {visitors.limits.tree_calls} 次模型调用，"
        f"H={asked_h}、K={asked_k} 需要 {tree_calls(asked_h, asked_k)} 次）。"
        f"The tree was reduced to H={tree_height}, K={tree_k}: this server allows "
        f"{visitors.limits.tree_calls} model calls per tree. ",
    )


def answer(
    firm: Firm, state: Consultation | None, visitors: Visitors | None = None, visit: Visit = DIRECT
) -> Iterator[tuple]:
    """The lawyer answers the latest question with the facts marked so far (streamed)."""
    visitors = visitors or Visitors()
    if not owner_of(state, visit):
        yield (state, *view(firm, None, FOREIGN_MESSAGE, "error"))
        return
    if state is None or not state.turns:
        yield (state, *view(firm, state, "请先提问。Ask a question first.", "warn"))
        return
    if state.status == "closed":
        yield (state, *view(firm, state, CLOSED_MESSAGE, "warn"))
        return
    if state.turns[-1].role != "client":
        yield (
            state,
            *view(firm, state, "这个问题已经回答过了；可以继续提问或重新生成。Already answered.", "info"),
        )
        return
    yield from _lawyer_streams(firm, state, visitors, visit, firm.answer)


def _lawyer_streams(
    firm: Firm, state: Consultation, visitors: Visitors, visit: Visit, step
) -> Iterator[tuple]:
    """``step(state, deadline)`` (answer or regenerate) streamed, as the visitor's one model step."""
    with visitors.model_work(visit) as allowed:
        if not allowed:
            yield (state, *view(firm, state, BUSY_MESSAGE, "warn"))
            return
        yield from _stream(firm, state, step(state, _deadline(visitors, "回答 The answer")))


def regenerate(
    firm: Firm, state: Consultation | None, visitors: Visitors | None = None, visit: Visit = DIRECT
) -> Iterator[tuple]:
    """Answer the latest question again (the previous answer is dropped)."""
    visitors = visitors or Visitors()
    if not owner_of(state, visit):
        yield (state, *view(firm, None, FOREIGN_MESSAGE, "error"))
        return
    if state is None or not state.turns or state.turns[-1].role != "lawyer" or state.status == "closed":
        yield (state, *view(firm, state, "没有可以重新生成的回答。There is no answer to regenerate.", "warn"))
        return
    yield from _lawyer_streams(firm, state, visitors, visit, firm.regenerate)


def _stream(firm: Firm, state: Consultation, pieces: Iterator[str], prefix: tuple = ()) -> Iterator[tuple]:
    """The answer as it streams: the chat redrawn at most every :data:`STREAM_UPDATE_S` (a model sends a
    piece per token; redrawing and sending the whole chat for each would cost the server more than the
    model does), then the whole view once the answer is checked."""
    text, shown = "", 0.0
    try:
        yield (state, *prefix, *view(firm, state, "律师正在回答… The lawyer is answering…", streaming=""))
        for n, piece in enumerate(pieces):
            text += piece
            if n == 0:  # retrieval has run: its trace step shows with the first piece
                yield (
                    state,
                    *prefix,
                    *view(firm, state, "律师正在回答… The lawyer is answering…", streaming=text),
                )
                shown = time.monotonic()
            elif time.monotonic() - shown >= STREAM_UPDATE_S:  # only the chat changes until the answer ends
                yield (state, *prefix, cr.chat_messages(state, text), *[gr.skip()] * (VIEW_SIZE - 1))
                shown = time.monotonic()
        last = state.turns[-1]
        done = "回答完毕，引用的法条已核查。Answered; its citations are checked."
        yield (state, *prefix, *view(firm, state, last.note or done, "warn" if last.note else "info"))
    except Exception as exc:  # noqa: BLE001
        yield (state, *prefix, *_failed(firm, state, exc))


def mark(firm: Firm, state: Consultation | None, node_id: str, value: str, visit: Visit = DIRECT) -> tuple:
    """Mark a tree element yes / no / unknown; a no folds its subtree."""
    if not owner_of(state, visit):
        return (state, *view(firm, None, FOREIGN_MESSAGE, "error"))
    if state is None or state.tree is None:
        return (state, *view(firm, state, "还没有澄清树。There is no clarification tree yet.", "warn"))
    try:
        firm.mark(state, str(node_id), str(value))
    except (KeyError, ValueError) as exc:
        return (state, *view(firm, state, f"无法标记 Cannot mark: {exc}", "warn"))
    text = cr.MARK_TEXT.get(str(value), str(value))
    return (state, *view(firm, state, f"已标记 {node_id}：{text}"))


def mark_clicked(firm: Firm, state: Consultation | None, evt: gr.EventData, visit: Visit = DIRECT) -> tuple:
    """A click on a mark button of the tree (its ``data-node`` and ``data-mark``)."""
    data = getattr(evt, "_data", None) or {}
    if not isinstance(data, dict):
        data = {}
    return mark(firm, state, str(data.get("node", ""))[:40], str(data.get("mark", ""))[:20], visit)


def set_domain(firm: Firm, state: Consultation | None, domain_id: str | None, visit: Visit = DIRECT) -> tuple:
    """The client overrides the receptionist's domain."""
    if not owner_of(state, visit):
        return (state, *view(firm, None, FOREIGN_MESSAGE, "error"))
    if state is None or not state.turns:
        return (state, *view(firm, state, "请先提问，再调整领域。Ask first, then change the domain.", "warn"))
    if not domain_id or domain_id == state.domain:
        return (state, *view(firm, state))
    try:
        firm.set_domain(state, domain_id)
    except (KeyError, ValueError) as exc:
        return (state, *view(firm, state, f"无法设置领域 Cannot set the domain: {exc}", "warn"))
    return (state, *view(firm, state, "已改派领域，之后的回答由该领域律师作答。Domain changed."))


def end(
    firm: Firm, state: Consultation | None, visitors: Visitors | None = None, visit: Visit = DIRECT
) -> tuple:
    """The secretary's report, scored by the boss: ``(state, report markdown, .md file, .docx file, *view)``.

    The files are written into a fresh folder of the visitor's session, named by the server (never from
    the consultation, which may come from an uploaded file), readable by the app's user only.
    """
    visitors = visitors or Visitors()
    nothing = (gr.update(value=None, visible=False), gr.update(value=None, visible=False))
    if not owner_of(state, visit):
        return (state, "", *nothing, *view(firm, None, FOREIGN_MESSAGE, "error"))
    if state is None or not state.turns:
        return (
            state,
            "",
            *nothing,
            *view(firm, state, "还没有可以写成报告的咨询。Ask a question first.", "warn"),
        )
    with visitors.model_work(visit) as allowed:
        if not allowed:
            return (state, "", *nothing, *view(firm, state, BUSY_MESSAGE, "warn"))
        try:
            if state.status != "closed":
                firm.close(state, _deadline(visitors, "报告 The report"))
            report = Report(**state.report)
            markdown = render_markdown(report)
            score = cr.score_line(state.report_score)
            folder = visitors.folder(visit)
            md_path = _write_private(
                folder / f"{REPORT_FILE}.md", markdown + (f"\n\n{score}\n" if score else "")
            )
            docx_path = render_docx(report, folder / f"{REPORT_FILE}.docx")
            os.chmod(docx_path, 0o600)
        except Exception as exc:  # noqa: BLE001
            return (state, "", *nothing, *_failed(firm, state, exc))
    shown = markdown + (f"\n\n---\n{score}" if score else "")
    message = report.notice or "咨询已结束，报告已生成。The consultation has ended; its report is below."
    return (
        state,
        shown,
        gr.update(value=str(md_path), visible=True),
        gr.update(value=str(docx_path), visible=True),
        *view(firm, state, message, "warn" if report.notice else "info"),
    )


def _write_private(path: Path, text: str) -> Path:
    """Write ``text`` to a new file only the app's user can read (Gradio's served copy keeps the mode)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def save_consultation(
    firm: Firm, state: Consultation | None, visitors: Visitors | None = None, visit: Visit = DIRECT
) -> tuple:
    """The consultation as a JSON file to download (resumable here or with ``python -m lawluo consult``).

    Returns ``(file, *view)``.
    """
    visitors = visitors or Visitors()
    hidden = gr.update(value=None, visible=False)
    if not owner_of(state, visit):
        return (hidden, *view(firm, None, FOREIGN_MESSAGE, "error"))
    if state is None or not state.turns:
        return (hidden, *view(firm, state, "还没有可以保存的咨询。Nothing to save yet.", "warn"))
    try:
        path = _write_private(visitors.folder(visit) / SAVED_FILE, state.to_json())
    except OSError as exc:
        return (hidden, *_failed(firm, state, exc))
    return (
        gr.update(value=str(path), visible=True),
        *view(firm, state, "已保存，请下载文件。Saved: download the file."),
    )


def resume_consultation(firm: Firm, state: Consultation | None, upload, visit: Visit = DIRECT) -> tuple:
    """Continue a consultation from a JSON file saved earlier; a bad file changes nothing and says why.

    The file is checked whole against the saved-consultation schema (:mod:`lawluo.firm.saved`) first.
    """
    if not owner_of(state, visit):
        return (state, *view(firm, None, FOREIGN_MESSAGE, "error"))
    path = Path(upload if isinstance(upload, str) else getattr(upload, "name", "") or "")
    try:
        if not path.is_file():
            raise ValueError("no file was uploaded")
        if path.stat().st_size > MAX_SAVED_BYTES:
            raise ValueError(
                f"the file has {path.stat().st_size:,} bytes; a saved consultation has at most {MAX_SAVED_BYTES:,}"
            )
        resumed = Consultation.from_json(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        return (
            state,
            *view(firm, state, f"无法恢复，当前咨询未改变 Cannot resume (nothing changed): {exc}", "warn"),
        )
    resumed.owner = visit.owner
    return (resumed, *view(firm, resumed, f"已恢复咨询 {resumed.id}。Consultation resumed."))


def new_consultation(firm: Firm, visitors: Visitors | None = None, visit: Visit = DIRECT) -> tuple:
    """Forget the session's consultation and its files: ``(state, question, report, .md, .docx, *view)``."""
    if visitors is not None:
        visitors.forget(visit.session)
    hidden = gr.update(value=None, visible=False)
    return (None, "", "", hidden, hidden, *view(firm, None))


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

    With ``demo`` the visitor's consultation and files are freed when they close the page.
    """
    visitors = Visitors(limits)
    intro = copy.text("consult.md") if copy else ""
    with gr.Tab(TAB_LABEL, id="consult"):
        if intro:
            gr.Markdown(intro)
        gr.HTML(cr.banner_html(models.status()), css_template=HTML_CSS, elem_id="ll-banner")
        # idle consultations expire (the visitor can save one to keep it); a closed page frees it at once
        state = gr.State(None, time_to_live=visitors.limits.session_ttl_s)
        with gr.Row():
            with gr.Column(scale=3):
                chat = gr.Chatbot(
                    label="咨询对话 Conversation", elem_id="ll-chat", height=440, buttons=["copy"]
                )
                question = gr.Textbox(
                    label="您的问题 Your question",
                    placeholder="例如：我在公司干了两年一直没签劳动合同，现在被辞退了，能要求什么赔偿？",
                    lines=3,
                    max_lines=8,
                    elem_id="ll-question",
                )
                with gr.Row():
                    ask_btn = gr.Button("提问 Ask", variant="primary", elem_id="ll-ask")
                    regen_btn = gr.Button("重新生成 Regenerate", elem_id="ll-regenerate")
                    end_btn = gr.Button("结束咨询 End consultation", variant="stop", elem_id="ll-end")
                    new_btn = gr.Button("新咨询 New", elem_id="ll-new")
                message = gr.HTML("", css_template=HTML_CSS, elem_id="ll-message")
                gr.Markdown("### 法律要素澄清树 Tree of Legal Clarifications")
                tree = gr.HTML(
                    cr.tree_html(None), css_template=HTML_CSS, js_on_load=TREE_JS, elem_id="ll-tree"
                )
                submit_btn = gr.Button(
                    "提交已标记的事实 Submit the marked facts", variant="primary", elem_id="ll-submit"
                )
            with gr.Column(scale=2):
                routing = gr.HTML(cr.routing_html(None, None), css_template=HTML_CSS, elem_id="ll-routing")
                domain_box = gr.Dropdown(
                    choices=[(d.name, d.id) for d in DOMAINS],
                    value=None,
                    label="改派领域 Change the domain",
                    elem_id="ll-domain",
                )
                with gr.Accordion("设置 Settings", open=False, elem_id="ll-use-tolc-accordion"):
                    use_tolc = gr.Checkbox(
                        True, label="回答前先澄清 (ToLC) Clarify before answering", elem_id="ll-use-tolc"
                    )
                    height = gr.Slider(
                        2, MAX_HEIGHT, value=firm.height, step=1, label="树高 H (levels)", elem_id="ll-height"
                    )
                    k = gr.Slider(
                        1, MAX_K, value=firm.k, step=1, label="每个节点的子要素数 K", elem_id="ll-k"
                    )
                with gr.Accordion("保存 / 恢复 Save / resume", open=False, elem_id="ll-save-accordion"):
                    save_btn = gr.Button("保存咨询 Save (.json)", elem_id="ll-save")
                    saved = gr.File(label="咨询记录 Saved consultation", visible=False, elem_id="ll-saved")
                    resume_btn = gr.UploadButton(
                        "恢复咨询 Resume from .json", file_types=[".json"], elem_id="ll-resume"
                    )
                with gr.Accordion("引用核查 Citations", open=True):
                    citations = gr.HTML(
                        cr.citations_html(None), css_template=HTML_CSS, elem_id="ll-citations"
                    )
                with gr.Accordion("检索到的法条与案例 Retrieved statutes and cases", open=False):
                    retrieved = gr.HTML("", css_template=HTML_CSS, elem_id="ll-retrieved")
                with gr.Accordion("流程追踪 Trace", open=False, elem_id="ll-trace-accordion"):
                    trace = gr.HTML(cr.trace_html([]), css_template=HTML_CSS, elem_id="ll-trace")
        gr.Markdown("### 咨询报告 Consultation report")
        report = gr.Markdown("", elem_id="ll-report")
        with gr.Row():
            download_md = gr.DownloadButton("下载 .md", visible=False, elem_id="ll-download-md")
            download_docx = gr.DownloadButton("下载 .docx", visible=False, elem_id="ll-download-docx")

        # Hidden inputs of the scriptable /mark endpoint (the tree's buttons use the click event).
        node_box = gr.Textbox(visible=False)
        mark_box = gr.Textbox(visible=False)
        mark_api = gr.Button(visible=False)
        state_api = gr.Button(visible=False)
        state_json = gr.JSON(visible=False)

        views = [chat, routing, domain_box, tree, citations, retrieved, trace, message]
        ends = [state, question, report, download_md, download_docx, *views]

        # Each event handler binds the plain handler to this app's visitors and the request's visitor.
        def on_ask(session, text, use, h, kk, request: gr.Request):
            yield from ask(firm, session, text, use, h, kk, visitors, visit_of(request))

        def on_answer(session, request: gr.Request):
            yield from answer(firm, session, visitors, visit_of(request))

        def on_regenerate(session, request: gr.Request):
            yield from regenerate(firm, session, visitors, visit_of(request))

        def on_end(session, request: gr.Request):
            return end(firm, session, visitors, visit_of(request))

        def on_new(request: gr.Request):
            return new_consultation(firm, visitors, visit_of(request))

        def on_save(session, request: gr.Request):
            return save_consultation(firm, session, visitors, visit_of(request))

        def on_resume(session, upload, request: gr.Request):
            return resume_consultation(firm, session, upload, visit_of(request))

        def on_mark(session, node_id, value, request: gr.Request):
            return mark(firm, session, node_id, value, visit_of(request))

        def on_tree_click(session, evt: gr.EventData, request: gr.Request):
            return mark_clicked(firm, session, evt, visit_of(request))

        def on_domain(session, domain_id, request: gr.Request):
            return set_domain(firm, session, domain_id, visit_of(request))

        def on_consultation(session, request: gr.Request):
            return consultation_json(session, visit_of(request))

        llm = {"concurrency_id": "firm", "concurrency_limit": FIRM_CONCURRENCY, "trigger_mode": "once"}
        gr.on(
            [ask_btn.click, question.submit],
            on_ask,
            inputs=[state, question, use_tolc, height, k],
            outputs=[state, question, *views],
            api_name="ask",
            **llm,
        )
        submit_btn.click(on_answer, [state], [state, *views], api_name="answer", **llm)
        regen_btn.click(on_regenerate, [state], [state, *views], api_name="regenerate", **llm)
        end_btn.click(
            on_end,
            [state],
            [state, report, download_md, download_docx, *views],
            api_name="end_consultation",
            **llm,
        )
        new_btn.click(on_new, None, ends, api_name="new_consultation")
        # the chatbot's own trash button starts over too (not just the picture of the chat)
        chat.clear(on_new, None, ends, api_visibility="private")
        save_btn.click(on_save, [state], [saved, *views], api_name="save_consultation")
        resume_btn.upload(on_resume, [state, resume_btn], [state, *views], api_name="resume_consultation")
        tree.click(on_tree_click, [state], [state, *views], api_visibility="private")
        mark_api.click(on_mark, [state, node_box, mark_box], [state, *views], api_name="mark")
        domain_box.input(on_domain, [state, domain_box], [state, *views], api_name="set_domain")
        state_api.click(on_consultation, [state], [state_json], api_name="consultation")
    if demo is not None:

        def on_leave(request: gr.Request) -> None:
            """The visitor's page lost its connection: after a grace period, free what it held."""
            leave_later(visitors, request)

        demo.unload(on_leave)
    return visitors


def leave_later(visitors: Visitors, request: gr.Request) -> None:
    """Free a departed session's consultation and files ``session_grace_s`` after its page disconnected.

    A page whose connection only dropped (a phone put away, a network blip) reconnects its heartbeat
    with the same session: if it has by then (:class:`~lawluo.ui.visitors.Presence`), or a step of it is
    still running, nothing is freed and the check is made again later.
    """
    session = getattr(request, "session_hash", None)
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
