"""The annotation tab's layout and events: the verdict bar, the item with its label form, the admin's
part, each built by its own function, then wired to the handlers (the service bound to every one)."""

from typing import Any

import gradio as gr

from lawluo.ui.copy import both_markdown, languages
from lawluo.ui.i18n import Html, say, t

from .. import human_scores, label_form, verdicts
from ..label_form import MAX_COMMENT_CHARS, score_field
from ..service import AnnotationService
from ..store import EXPORT_FORMATS
from .admin import (
    EXPORT_SOURCES,
    FORMAT_NAMES,
    AnnotatorsReply,
    ExportReply,
    _admin_table_on_load,
    export_everything,
    export_labels,
    import_items,
    list_annotators,
)
from .binding import bind, bind_form, components_for
from .browser import (
    ANNOTATE_CSS,
    DRAFT_SOON_JS,
    KEYS_JS,
    SETTLED_JS,
    SIGN_OUT_JS,
    TAB_LABEL,
    VERDICT_BUTTONS,
    draft_form_js,
)
from .forms import LabelForm, validate_form
from .handlers import go_back, keep_draft, next_item, open_linked, skip_item, submit_label
from .identity import NOT_CONFIGURED, sign_in_help
from .views import view_components

#: What every event that shows an item runs last, in the browser only: its grace period (SETTLED_JS).
SETTLED = {"js": SETTLED_JS, "queue": False, "api_visibility": "private"}
#: One annotation event at a time per page, a second click ignored while one runs.
ONCE = {"trigger_mode": "once", "concurrency_id": "annotation"}


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
    """The tab's sections, top to bottom, then their events (components by name: a view's field, or a
    control's name)."""
    ui = _build_bar(service)
    with gr.Column(elem_id="ann-form", visible=False) as form:
        ui |= _build_item(service)
    ui["form"] = form
    ui["state"] = gr.State({})
    ui |= _build_admin()
    outputs = view_components(ui)
    _wire_item_events(service, ui, outputs)
    _wire_admin_events(service, ui)
    # the page's deep link (/annotate?item=<id>) is read here only: every event carries the page's query
    demo.load(bind(open_linked, service), None, outputs, api_name="annotation_open").then(None, **SETTLED)
    demo.load(bind(_admin_table_on_load, service), None, ui["table"], api_visibility="private")


def _build_bar(service: AnnotationService) -> dict[str, Any]:
    """The verdict bar (sticky at the top): status, back, next and sign-out; the verdicts and skip (shown
    with an item); the last message."""
    ui: dict[str, Any] = {}
    with gr.Column(elem_id="ann-bar"):
        with gr.Row(elem_classes=["ann-row"], elem_id="ann-nav"):
            ui["status"] = gr.Markdown(t(sign_in_help(service).key), elem_id="ann-status")
            ui["back"] = gr.Button(t("annotate.back"), size="sm", elem_id="ann-back", scale=0, min_width=120)
            ui["next"] = gr.Button(t("annotate.next"), size="sm", elem_id="ann-next", scale=0, min_width=120)
            if service.sign_in == "oauth":
                gr.LoginButton(size="sm", scale=0, min_width=120)  # "Logout (name)" once signed in
            else:
                sign_out = gr.Button(
                    t("annotate.sign_out"), size="sm", elem_id="ann-signout", scale=0, min_width=120
                )
                sign_out.click(None, js=SIGN_OUT_JS, queue=False)
        with gr.Row(elem_classes=["ann-row"], elem_id="ann-verdicts", visible=False) as ui["verdict_row"]:
            ui["verdicts"] = {
                v: gr.Button(
                    label,
                    variant="primary" if v in ("left", "right") else "secondary",
                    elem_id=f"ann-verdict-{v}",
                    min_width=100,
                )
                for v, label in VERDICT_BUTTONS
            }
            ui["skip"] = gr.Button(t("annotate.skip"), size="sm", elem_id="ann-skip", scale=0, min_width=70)
        ui["message"] = gr.HTML("", css_template=ANNOTATE_CSS, elem_id="ann-message")
    return ui


def _build_item(service: AnnotationService) -> dict[str, Any]:
    """The open item: the question, the reference, the two answers with their statute cards and scores,
    the comment and its draft line, the keys' note and the guidelines."""
    ui: dict[str, Any] = {"question": gr.HTML("", css_template=ANNOTATE_CSS, elem_id="ann-question")}
    with gr.Accordion(t("annotate.reference"), open=False):
        ui["reference"] = gr.HTML("", css_template=ANNOTATE_CSS, elem_id="ann-reference")
    ui |= _build_answers()
    # a gr.I18n key has no fields: the limit is the counter's, under the field
    ui["comment"] = gr.Textbox(label=t("annotate.comment_label"), lines=2, elem_id="ann-comment")
    label_form.counter("#ann-comment textarea", "ann-comment-count", MAX_COMMENT_CHARS)
    ui["draft"] = gr.HTML("", elem_id="ann-draft", padding=False)
    ui["draft_button"] = gr.Button(t("annotate.draft_button"), visible="hidden", elem_id="ann-draft-save")
    ui["draft_form"] = gr.Textbox(  # draft_form_js() fills it
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
    return ui


def _build_answers() -> dict[str, Any]:
    """The two answers side by side, each with its statute cards (``slots``) and its scores (Rel, T_LC: a field
    per row of :data:`~eval_ui.human_scores.HUMAN_SCORE_TABLE`, ``left_rel`` …)."""
    ui: dict[str, Any] = {}
    slots: dict[str, label_form.StatuteSlots] = {}
    with gr.Row(equal_height=False):
        for shown, title in (("left", "L"), ("right", "R")):
            with gr.Column(min_width=300):
                ui[shown] = gr.HTML("", css_template=ANNOTATE_CSS, elem_id=f"ann-{shown}")
                slots[shown] = label_form.build_slots(f"ann-{shown}", title)
                with gr.Row():
                    for s in human_scores.table():
                        label, elem_id = t(s.label_key), f"ann-{shown}-{s.key}"
                        ui[f"{shown}_{s.key}"] = score_field(label, elem_id, s.range)
    return ui | {"slots": slots, "left_note": slots["left"].note, "right_note": slots["right"].note}


def _build_admin() -> dict[str, Any]:
    """The admin's part (hidden from everyone else): import items, export labels, the annotators' table."""
    ui: dict[str, Any] = {}
    with gr.Accordion(t("annotate.admin"), open=False, visible=False, elem_id="ann-admin") as ui["admin"]:
        ui["admin_message"] = gr.HTML("", css_template=ANNOTATE_CSS, elem_id="ann-admin-message")
        with gr.Row():
            ui["upload"] = gr.File(
                label=t("annotate.import_file"),
                file_types=[".jsonl", ".csv"],
                elem_id="ann-import-file",
            )
            with gr.Column():
                ui |= _build_export_choices()
        ui["exported"] = gr.File(label=t("annotate.exported_file"), interactive=False, elem_id="ann-exported")
        ui["exported_all"] = gr.File(label=t("annotate.exported_all_files"), interactive=False,
                                     file_count="multiple", elem_id="ann-exported-all")  # fmt: skip
        # Gradio 6.31 does not translate a Dataframe's headers: they are signs, the label names the columns
        ui["table"] = gr.Dataframe(
            headers=["✎", "⚑", "✓", "Σ"],
            label=t("annotate.annotators_table"),
            show_label=True,
            interactive=False,
            elem_id="ann-annotators",
        )
        ui["refresh"] = gr.Button(t("annotate.refresh"), size="sm")
    return ui


def _build_export_choices() -> dict[str, Any]:
    """The import button, then the export's choices (format, source, history) and buttons."""
    ui: dict[str, Any] = {"do_import": gr.Button(t("annotate.import"), elem_id="ann-import")}
    ui["fmt"] = gr.Radio(
        [(FORMAT_NAMES.get(f, f), f) for f in EXPORT_FORMATS],
        value="csv",
        label=t("annotate.export_format"),
        elem_id="ann-export-format",
    )
    # Gradio 6.31 translates a choice given as a gr.I18n key (its value stays the code)
    ui["source"] = gr.Radio([(t(v), k) for k, v in EXPORT_SOURCES.items()], value="raw",
                            label=t("annotate.export_source"), elem_id="ann-export-source")  # fmt: skip
    ui["history"] = gr.Checkbox(False, label=t("annotate.export_history"), elem_id="ann-export-history")
    ui["do_export"] = gr.Button(t("annotate.export"), elem_id="ann-export")
    ui["do_export_all"] = gr.Button(t("annotate.export_all"), elem_id="ann-export-all")
    return ui


def _label_form_inputs(ui: dict[str, Any]) -> list:
    """The verdict events' inputs, in the order of :meth:`LabelForm.from_inputs`."""
    slots = ui["slots"]
    return [
        ui["state"],
        *(ui[k] for k in human_scores.form_fields()),
        ui["comment"],
        *slots["left"].marks,
        *slots["right"].marks,
    ]


def _wire_item_events(service: AnnotationService, ui: dict[str, Any], outputs: list) -> None:
    """The verdicts, the draft, back, skip and next: every event that shows an item fills ``outputs`` (the
    view's components) and ends in the browser's grace period (:data:`SETTLED`)."""
    for v, button in ui["verdicts"].items():
        event = button.click(
            bind_form(submit_label, LabelForm.from_inputs, ("left", "right"), service, v),
            _label_form_inputs(ui),
            outputs,
            api_name=f"label_{v}",
            validator=validate_form,
            **ONCE,
        )
        event.then(None, **SETTLED)
    # what the annotator marks or types is kept as the item's draft (restored after a reload): the page
    # presses the hidden draft button DRAFT_MS after the last edit in the form (KEYS_JS); the page's own
    # edits (这些都没问题, 清除) are followed by it too
    ui["draft_button"].click(
        bind(keep_draft, service), [ui["state"], ui["draft_form"]], [ui["draft"]], js=draft_form_js(), queue=False,
        trigger_mode="always_last", show_progress="hidden", api_visibility="private",
    )  # fmt: skip
    for side in ("left", "right"):
        for event in ui["slots"][side].page_edits:
            event.then(None, js=DRAFT_SOON_JS, queue=False, api_visibility="private")
    for button, handler, inputs, api_name in (
        (ui["back"], bind(go_back, service), [ui["state"]], "annotation_back"),
        (ui["skip"], bind(skip_item, service), [ui["state"]], "annotation_skip"),
        (ui["next"], bind(next_item, service), None, "annotation_next"),
    ):
        button.click(handler, inputs, outputs, api_name=api_name, **ONCE).then(None, **SETTLED)


def _wire_admin_events(service: AnnotationService, ui: dict[str, Any]) -> None:
    """Import, export (one format, or everything) and the annotators' table; each answers a named reply."""
    annotators = components_for(AnnotatorsReply, message=ui["admin_message"], annotators=ui["table"])
    ui["do_import"].click(bind(import_items, service), [ui["upload"]], annotators, api_name="import_items")
    ui["do_export"].click(
        bind(export_labels, service),
        [ui["fmt"], ui["source"], ui["history"]],
        components_for(ExportReply, message=ui["admin_message"], file=ui["exported"]),
        api_name="export_labels",
    )
    ui["do_export_all"].click(
        bind(export_everything, service),
        None,
        components_for(ExportReply, message=ui["admin_message"], file=ui["exported_all"]),
        api_name="export_all",
    )
    ui["refresh"].click(bind(list_annotators, service), None, annotators, api_name="annotators")
