"""The consultation tab's layout (``build_consult_tab`` and its sections) and its events: each event binds a
plain handler (:mod:`.steps`, :mod:`.handlers`, :mod:`.restore`) to the app's firm and visitors."""

from __future__ import annotations

import logging
from collections.abc import Callable

import gradio as gr

from ...firm import Firm
from ...llm import LanguageModels
from ...tolc.builder import MAX_HEIGHT, MAX_K
from .. import consult_render as cr
from ..copy import UICopy
from ..i18n import t
from ..views import date_box
from ..visitors import (
    VisitorLimits,
    Visitors,
    visit_of,
)
from .handlers import choose_issue, end, issue_clicked, mark, mark_clicked, save_consultation, set_domain
from .leaving import leave_later
from .page import (
    CHAT_MAX_HEIGHT,
    CHAT_MIN_HEIGHT,
    FIRM_CONCURRENCY,
    HTML_CSS,
    INTRO_FOLD,
    PAGE_JS,
    REMEMBER_JS,
    RESTORE_JS,
    SHOW_CHAT,
    SHOW_NEXT,
    TAB_LABEL,
    TREE_JS,
    UNLOCK_JS,
    lock_js,
)
from .restore import (
    consultation_json,
    new_consultation,
    remembered,
    restore_consultation,
    resume_consultation,
)
from .steps import answer, ask, regenerate
from .view import ASKED, ENDED, RESTARTED, RESTORED, SAVED, STEPPED, ConsultView

logger = logging.getLogger("lawluo.ui.consult_tab")

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
    with gr.Tab(TAB_LABEL, id="consult", elem_id="ll-consult"):
        _intro_section(copy, models)
        # idle consultations expire (the visitor can save one to keep it); a closed page frees it at once
        components = {"state": gr.State(None, time_to_live=visitors.limits.session_ttl_s)}
        # the copy a reload brings back, on its way between the server and the tab's sessionStorage (see
        # remembered / REMEMBER_JS and restore_consultation / RESTORE_JS); not gr.BrowserState: its copy would
        # stay in localStorage for the next user of the computer
        components["stored"] = gr.Textbox("", visible=False)
        with gr.Row(elem_id="ll-main"):
            with gr.Column(scale=3, elem_id="ll-left"):
                components |= _consultation_column()
            with gr.Column(scale=2, elem_id="ll-right"):
                components |= _side_column(firm)
        components |= _report_section()
        components |= _script_inputs()
        handlers = _event_handlers(firm, visitors)
        _bind_steps(components, handlers)
    if demo is not None:
        _bind_page(demo, visitors, components, handlers)
    return visitors


def _intro_section(copy: UICopy | None, models: LanguageModels) -> None:
    """The tab's intro (its fold under 使用说明) and the banner of the models' status."""
    intro, more = intro_parts(copy)
    if intro:
        gr.Markdown(intro, elem_id="ll-intro")
    if more:
        with gr.Accordion(t("consult.how_it_works"), open=False, elem_id="ll-intro-more"):
            gr.Markdown(more)
    gr.HTML(cr.banner_html(models.status()), css_template=HTML_CSS, elem_id="ll-banner")


def _consultation_column() -> dict:
    """The left column: the chat, the question and its buttons, the client's name and date of the facts,
    the message, the clarification tree and Submit."""
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
    client_name = gr.Textbox(label=t("consult.client"), max_lines=1, max_length=100, elem_id="ll-client")
    facts_date = date_box(
        t("consult.facts_date"),
        t("consult.facts_date_info"),
        "ll-facts-date",
        t("consult.facts_date_placeholder"),
    )
    message = gr.HTML("", css_template=HTML_CSS, js_on_load=PAGE_JS, elem_id="ll-message")
    gr.Markdown("### " + t("consult.tree_title"), elem_id="ll-tree-title")
    tree = gr.HTML(cr.tree_html(None), css_template=HTML_CSS, js_on_load=TREE_JS, elem_id="ll-tree")
    submit_btn = gr.Button(t("consult.submit"), variant="primary", elem_id="ll-submit")
    return {
        "chat": chat,
        "question": question,
        "ask_btn": ask_btn,
        "regen_btn": regen_btn,
        "end_btn": end_btn,
        "new_btn": new_btn,
        "client_name": client_name,
        "facts_date": facts_date,
        "message": message,
        "tree": tree,
        "submit_btn": submit_btn,
    }


def _side_column(firm: Firm) -> dict:
    """The right column: the routing and the domain menu, the tree's size, save and resume, the answer's
    citations, what was retrieved, and the trace."""
    routing = gr.HTML(
        cr.routing_html(None, None, (), firm.domains, firm.routing_notice),
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
            2, MAX_HEIGHT, value=firm.height, step=1, label=t("consult.height"), elem_id="ll-height"
        )
        k = gr.Slider(1, MAX_K, value=firm.k, step=1, label=t("consult.k"), elem_id="ll-k")
    with gr.Accordion(t("consult.save_resume"), open=False, elem_id="ll-save-accordion"):
        save_btn = gr.Button(t("consult.save"), elem_id="ll-save")
        saved = gr.File(label=t("consult.saved"), visible=False, elem_id="ll-saved")
        resume_btn = gr.UploadButton(t("consult.resume"), file_types=[".json"], elem_id="ll-resume")
    with gr.Accordion(t("consult.citations"), open=True, elem_id="ll-citations-accordion"):
        citations = gr.HTML(cr.citations_html(None), css_template=HTML_CSS, elem_id="ll-citations")
    with gr.Accordion(t("consult.retrieved"), open=False, elem_id="ll-retrieved-accordion"):
        retrieved = gr.HTML("", css_template=HTML_CSS, elem_id="ll-retrieved")
    with gr.Accordion(t("consult.trace"), open=False, elem_id="ll-trace-accordion"):
        trace = gr.HTML(cr.trace_html([]), css_template=HTML_CSS, elem_id="ll-trace")
    return {
        "routing": routing,
        "domain": domain_box,
        "use_tolc": use_tolc,
        "height": height,
        "k": k,
        "save_btn": save_btn,
        "saved": saved,
        "resume_btn": resume_btn,
        "citations": citations,
        "retrieved": retrieved,
        "trace": trace,
    }


def _report_section() -> dict:
    """The secretary's report, and its .md and .docx downloads (shown once it is written)."""
    gr.Markdown("### " + t("consult.report"))
    report = gr.Markdown("", elem_id="ll-report")
    with gr.Row():
        download_md = gr.DownloadButton(t("consult.download_md"), visible=False, elem_id="ll-download-md")
        download_docx = gr.DownloadButton(
            t("consult.download_docx"), visible=False, elem_id="ll-download-docx"
        )
    return {"report": report, "download_md": download_md, "download_docx": download_docx}


def _script_inputs() -> dict:
    """Hidden inputs of the scriptable endpoints: /mark, /set_issue and /consultation (the tree's buttons and
    menu use its click and select events)."""
    return {
        "node_box": gr.Textbox(visible=False),
        "mark_box": gr.Textbox(visible=False),
        "mark_api": gr.Button(visible=False),
        "issue_box": gr.Textbox(visible=False),
        "issue_api": gr.Button(visible=False),
        "state_api": gr.Button(visible=False),
        "state_json": gr.JSON(visible=False),
    }


def _event_handlers(firm: Firm, visitors: Visitors) -> dict[str, Callable]:
    """Each event's handler: the plain handler bound to this app's firm and visitors and to the request's
    visitor, its view turned into the event's outputs (the same names as the event's components)."""

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

    handlers = (on_ask, on_answer, on_regenerate, on_end, on_new, on_save, on_resume, on_mark, on_tree_click)
    handlers += (on_issue, on_tree_issue, on_domain, on_consultation, on_remember, on_restore)
    return {fn.__name__: fn for fn in handlers}


def _bind_steps(c: dict, on: dict[str, Callable]) -> None:
    """The events of the tab's controls (``c``: the components by name; ``on``: :func:`_event_handlers`)."""

    def outputs(names: tuple[str, ...]) -> list:
        return [c[name] for name in names]

    def step(triggers: list, handler, inputs: list, names: tuple[str, ...], follow="", then="", **options):
        """An event that changes the consultation: the page's controls are disabled as its request
        leaves and enabled when it is done (or failed), so no other step of the page can overlap it;
        once it is done, the browser's copy of the consultation is updated (:func:`remembered`)."""
        event = gr.on(triggers, handler, inputs=inputs, outputs=outputs(names), js=lock_js(follow), **options)
        event.then(None, js=UNLOCK_JS, queue=False, api_visibility="private")
        if then:
            event.success(None, js=then, queue=False, api_visibility="private")
        event.failure(None, js=UNLOCK_JS, queue=False, api_visibility="private")
        remember = event.then(
            on["on_remember"], [c["state"]], [c["stored"]], queue=False, api_visibility="private"
        )
        remember.then(None, [c["stored"]], None, js=REMEMBER_JS, queue=False, api_visibility="private")

    state = c["state"]
    llm = {"concurrency_id": "firm", "concurrency_limit": FIRM_CONCURRENCY, "trigger_mode": "once"}
    ask_inputs = [state, c["question"], c["use_tolc"], c["height"], c["k"], c["facts_date"]]
    asked = [c["ask_btn"].click, c["question"].submit]
    step(asked, on["on_ask"], ask_inputs, ASKED, api_name="ask", then=SHOW_NEXT, **llm)
    step(
        [c["submit_btn"].click], on["on_answer"], [state], STEPPED, api_name="answer", follow=SHOW_CHAT, **llm
    )
    regenerated = [c["regen_btn"].click]
    step(regenerated, on["on_regenerate"], [state], STEPPED, api_name="regenerate", follow=SHOW_CHAT, **llm)
    ended = [state, c["client_name"]]
    step([c["end_btn"].click], on["on_end"], ended, ENDED, api_name="end_consultation", **llm)
    step([c["new_btn"].click], on["on_new"], [state], RESTARTED, api_name="new_consultation")
    # the chatbot's own trash button starts over too (not just the picture of the chat)
    step([c["chat"].clear], on["on_new"], [state], RESTARTED, api_visibility="private")
    resumed = [state, c["resume_btn"]]
    step([c["resume_btn"].upload], on["on_resume"], resumed, STEPPED, api_name="resume_consultation")
    step([c["tree"].click], on["on_tree_click"], [state], STEPPED, api_visibility="private")
    domain = [state, c["domain"]]
    step([c["domain"].input], on["on_domain"], domain, STEPPED, api_name="set_domain", **llm)
    step([c["tree"].select], on["on_tree_issue"], [state], STEPPED, api_visibility="private", **llm)
    step(
        [c["issue_api"].click], on["on_issue"], [state, c["issue_box"]], STEPPED, api_name="set_issue", **llm
    )
    # scripts only (hidden buttons), and saving, which changes nothing: no lock
    marked = [state, c["node_box"], c["mark_box"]]
    c["mark_api"].click(on["on_mark"], marked, outputs(STEPPED), api_name="mark")
    c["save_btn"].click(on["on_save"], [state], outputs(SAVED), api_name="save_consultation")
    c["state_api"].click(on["on_consultation"], [state], [c["state_json"]], api_name="consultation")


def _bind_page(demo: gr.Blocks, visitors: Visitors, c: dict, on: dict[str, Callable]) -> None:
    """The page's own events: a page that leaves stops its step and frees its session later
    (:func:`leave_later`); a page that loads gets back the consultation its browser tab kept."""

    def on_leave(request: gr.Request) -> None:
        """The visitor's page lost its connection: stop its model step now; after a grace period,
        free what it held."""
        leave_later(visitors, request)

    demo.unload(on_leave)
    demo.load(
        on["on_restore"],
        [c["state"], c["stored"]],
        [c[name] for name in RESTORED],
        js=RESTORE_JS,
        api_visibility="private",
        queue=False,
        show_progress="hidden",
    ).then(None, [c["stored"]], None, js=REMEMBER_JS, queue=False, api_visibility="private")


def intro_parts(copy: UICopy | None) -> tuple[str, str]:
    """The tab's intro (``consult.md``): what is shown above the consultation, and what is folded under
    使用说明 (after a line ``<!-- more -->``), so that on a phone the question box is on the first screen."""
    return copy.split("consult.md", INTRO_FOLD) if copy else ("", "")
