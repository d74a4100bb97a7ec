"""The 法律咨询 / Consultation tab: the firm's four agents in the browser (LawLuo paper §3.2).

A visitor asks; the receptionist routes the question (overridable); the clarification tree grows level
by level and the visitor marks its facts 是 / 否 / 不确定; the lawyer's answer streams in, every statute
it cites checked; ending the consultation has the secretary write the report (shown, and downloadable
as .md and .docx); the boss's scores and the trace of every step are shown along the way.

Handlers are plain module-level functions that take the :class:`~lawluo.firm.Firm` first (bound with
:func:`functools.partial`) and the session's :class:`~lawluo.firm.Consultation` (kept in ``gr.State``)
next. They never raise: bad input (an empty or over-long question, a click on a closed consultation)
gets a message and the typed question stays in its box; an unexpected error is logged and shown as a
message, and the consultation keeps everything it had.

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
import tempfile
from collections.abc import Iterator
from functools import partial
from pathlib import Path

import gradio as gr

from ..agents.domains import DOMAINS
from ..agents.secretary import Report, render_docx, render_markdown
from ..firm import Consultation, Firm
from ..firm.firm import MAX_TURN_CHARS
from ..llm import LanguageModels
from ..tolc.builder import MAX_HEIGHT, MAX_K
from . import consult_render as cr
from .render import CSS, notice
from .statute_tab import UI_COPY_DIR

logger = logging.getLogger(__name__)

TAB_LABEL = "法律咨询 / Consultation"
MAX_QUESTION_CHARS = MAX_TURN_CHARS
MAX_SAVED_BYTES = 5_000_000
#: Events that call language models share this many slots per app (each backend has its own limit too).
FIRM_CONCURRENCY = 8
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
    history = [
        e.summary
        for e in (state.trace if state else [])
        if e.agent == "receptionist" and (e.action == "override" or e.summary.startswith("re-routed"))
    ]
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


def ask(firm: Firm, state: Consultation | None, question: str, use_tolc: bool, height, k) -> Iterator[tuple]:
    """Route the question, then grow the clarification tree (or, without ToLC, stream the answer).

    Yields ``(state, question box, *view)``; the box is emptied once the question is taken.
    """
    text = (question or "").strip()
    if not text:
        yield (state, question, *view(firm, state, EMPTY_MESSAGE, "warn"))
        return
    if len(text) > MAX_QUESTION_CHARS:
        yield (state, question, *view(firm, state, too_long_message(len(text)), "warn"))
        return
    if state is not None and state.status == "closed":
        yield (state, question, *view(firm, state, CLOSED_MESSAGE, "warn"))
        return
    state = state or firm.new()
    try:
        firm.receive(state, text)
        yield (state, "", *view(firm, state, "已收到问题。Question received.", "info"))
        if use_tolc:
            for _tree in firm.clarify(state, _int(height), _int(k)):
                yield (state, "", *view(firm, state, "正在生成澄清树… Building the clarification tree…"))
            yield (
                state,
                "",
                *view(
                    firm,
                    state,
                    "请逐条标记“是 / 否 / 不确定”，然后点击“提交已标记的事实”。"
                    "Mark the facts, then submit them to the lawyer.",
                ),
            )
        else:
            yield from _stream(firm, state, firm.answer(state), prefix=("",))
    except Exception as exc:  # noqa: BLE001 — the UI shows every failure as a message
        yield (state, "", *_failed(firm, state, exc))


def answer(firm: Firm, state: Consultation | None) -> Iterator[tuple]:
    """The lawyer answers the latest question with the facts marked so far (streamed)."""
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
    yield from _stream(firm, state, firm.answer(state))


def regenerate(firm: Firm, state: Consultation | None) -> Iterator[tuple]:
    """Answer the latest question again (the previous answer is dropped)."""
    if state is None or not state.turns or state.turns[-1].role != "lawyer" or state.status == "closed":
        yield (state, *view(firm, state, "没有可以重新生成的回答。There is no answer to regenerate.", "warn"))
        return
    yield from _stream(firm, state, firm.regenerate(state))


def _stream(firm: Firm, state: Consultation, pieces: Iterator[str], prefix: tuple = ()) -> Iterator[tuple]:
    text = ""
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
            else:  # until the answer ends only the chat changes: leave the other panels as they are
                yield (state, *prefix, cr.chat_messages(state, text), *[gr.skip()] * (VIEW_SIZE - 1))
        last = state.turns[-1]
        done = "回答完毕，引用的法条已核查。Answered; its citations are checked."
        yield (state, *prefix, *view(firm, state, last.note or done, "warn" if last.note else "info"))
    except Exception as exc:  # noqa: BLE001
        yield (state, *prefix, *_failed(firm, state, exc))


def mark(firm: Firm, state: Consultation | None, node_id: str, value: str) -> tuple:
    """Mark a tree element yes / no / unknown; a no folds its subtree."""
    if state is None or state.tree is None:
        return (state, *view(firm, state, "还没有澄清树。There is no clarification tree yet.", "warn"))
    try:
        firm.mark(state, str(node_id), str(value))
    except (KeyError, ValueError) as exc:
        return (state, *view(firm, state, f"无法标记 Cannot mark: {exc}", "warn"))
    text = cr.MARK_TEXT.get(str(value), str(value))
    return (state, *view(firm, state, f"已标记 {node_id}：{text}"))


def mark_clicked(firm: Firm, state: Consultation | None, evt: gr.EventData) -> tuple:
    """A click on a mark button of the tree (its ``data-node`` and ``data-mark``)."""
    data = getattr(evt, "_data", None) or {}
    return mark(firm, state, data.get("node", ""), data.get("mark", ""))


def set_domain(firm: Firm, state: Consultation | None, domain_id: str | None) -> tuple:
    """The client overrides the receptionist's domain."""
    if state is None or not state.turns:
        return (state, *view(firm, state, "请先提问，再调整领域。Ask first, then change the domain.", "warn"))
    if not domain_id or domain_id == state.domain:
        return (state, *view(firm, state))
    try:
        firm.set_domain(state, domain_id)
    except (KeyError, ValueError) as exc:
        return (state, *view(firm, state, f"无法设置领域 Cannot set the domain: {exc}", "warn"))
    return (state, *view(firm, state, "已改派领域，之后的回答由该领域律师作答。Domain changed."))


def end(firm: Firm, state: Consultation | None) -> tuple:
    """The secretary's report, scored by the boss: ``(state, report markdown, .md file, .docx file, *view)``."""
    nothing = (gr.update(value=None, visible=False), gr.update(value=None, visible=False))
    if state is None or not state.turns:
        return (
            state,
            "",
            *nothing,
            *view(firm, state, "还没有可以写成报告的咨询。Ask a question first.", "warn"),
        )
    try:
        if state.status != "closed":
            firm.close(state)
        report = Report(**state.report)
        markdown = render_markdown(report)
        score = cr.score_line(state.report_score)
        folder = Path(tempfile.mkdtemp(prefix="lawluo-report-"))
        md_path = folder / f"{report.number}.md"
        md_path.write_text(markdown + (f"\n\n{score}\n" if score else ""), encoding="utf-8")
        docx_path = render_docx(report, folder / f"{report.number}.docx")
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


def save_consultation(firm: Firm, state: Consultation | None) -> tuple:
    """The consultation as a JSON file to download (resumable here or with ``python -m lawluo consult``).

    Returns ``(file, *view)``.
    """
    if state is None or not state.turns:
        return (
            gr.update(value=None, visible=False),
            *view(firm, state, "还没有可以保存的咨询。Nothing to save yet.", "warn"),
        )
    folder = Path(tempfile.mkdtemp(prefix="lawluo-consultation-"))
    path = folder / f"consultation-{state.id}.json"
    path.write_text(state.to_json(), encoding="utf-8")
    return (
        gr.update(value=str(path), visible=True),
        *view(firm, state, "已保存，请下载文件。Saved: download the file."),
    )


def resume_consultation(firm: Firm, state: Consultation | None, upload) -> tuple:
    """Continue a consultation from a JSON file saved earlier; a bad file changes nothing and says why."""
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
    return (resumed, *view(firm, resumed, f"已恢复咨询 {resumed.id}。Consultation resumed."))


def new_consultation(firm: Firm) -> tuple:
    """Forget the session's consultation: ``(state, question, report, .md, .docx, *view)``."""
    hidden = gr.update(value=None, visible=False)
    return (None, "", "", hidden, hidden, *view(firm, None))


def consultation_json(state: Consultation | None) -> dict:
    """The session's consultation as a JSON object (empty before the first question)."""
    return state.to_dict() if state is not None else {}


def _int(value) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


# -- the tab --------------------------------------------------------------------------------------


def build_consult_tab(firm: Firm, models: LanguageModels) -> None:
    """The tab's components and events, inside the current ``gr.Blocks``."""
    copy = UI_COPY_DIR / "consult.md"
    with gr.Tab(TAB_LABEL, id="consult"):
        if copy.exists():
            gr.Markdown(copy.read_text(encoding="utf-8"))
        gr.HTML(cr.banner_html(models.status()), css_template=HTML_CSS, elem_id="ll-banner")
        state = gr.State(None)
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
        llm = {"concurrency_id": "firm", "concurrency_limit": FIRM_CONCURRENCY, "trigger_mode": "once"}
        gr.on(
            [ask_btn.click, question.submit],
            partial(ask, firm),
            inputs=[state, question, use_tolc, height, k],
            outputs=[state, question, *views],
            api_name="ask",
            **llm,
        )
        submit_btn.click(partial(answer, firm), [state], [state, *views], api_name="answer", **llm)
        regen_btn.click(partial(regenerate, firm), [state], [state, *views], api_name="regenerate", **llm)
        end_btn.click(
            partial(end, firm),
            [state],
            [state, report, download_md, download_docx, *views],
            api_name="end_consultation",
            **llm,
        )
        new_btn.click(
            partial(new_consultation, firm),
            None,
            [state, question, report, download_md, download_docx, *views],
            api_name="new_consultation",
        )

        def on_tree_click(session: Consultation | None, evt: gr.EventData) -> tuple:
            return mark_clicked(firm, session, evt)  # a closure: Gradio finds EventData in a function's hints

        chat.clear(  # the chatbot's own trash button starts over too (not just the picture of the chat)
            partial(new_consultation, firm),
            None,
            [state, question, report, download_md, download_docx, *views],
            api_visibility="private",
        )
        save_btn.click(
            partial(save_consultation, firm), [state], [saved, *views], api_name="save_consultation"
        )
        resume_btn.upload(
            partial(resume_consultation, firm),
            [state, resume_btn],
            [state, *views],
            api_name="resume_consultation",
        )
        tree.click(on_tree_click, [state], [state, *views], api_visibility="private")
        mark_api.click(partial(mark, firm), [state, node_box, mark_box], [state, *views], api_name="mark")
        domain_box.input(
            partial(set_domain, firm), [state, domain_box], [state, *views], api_name="set_domain"
        )
        state_api.click(consultation_json, [state], [state_json], api_name="consultation")
