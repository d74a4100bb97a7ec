"""The adjudication tab's layout and events: the item picked and its resolution's form, the invitations
and audit log, the sign-in locks, each built by its own function, then wired to the handlers."""

from typing import Any

import gradio as gr

from lawluo.ui.i18n import say_block, t

from .. import label_form
from ..annotate_tab import bind, bind_form, components_for
from ..label_form import MAX_NOTE_CHARS
from ..login import SignIn, unlock_form
from ..service import AnnotationService
from .access import (
    AUDIT_COLUMNS,
    AUDIT_HEADERS,
    AUDIT_ROWS,
    INVITATION_COLUMNS,
    INVITATION_HEADERS,
    INVITE_ROLES,
    AccessReply,
    access_help,
    access_tables,
    invite_account,
    rows_html,
    tables_html,
    uninvite_account,
)
from .forms import ResolutionForm, validate_resolution
from .handlers import list_disagreements, record_adjudication, show_item, sign_in_locks, tab_visibility
from .render import ADJUDICATE_CSS, ITEM_VERDICT_NAMES, SIDES
from .views import SLOT_WIDTHS, VIEW_FIELDS

TAB_LABEL = t("tab.adjudicate")


def build_adjudicate_tab(service: AnnotationService, demo: gr.Blocks, sign_in: SignIn | None = None) -> None:
    """The tab (hidden until an admin's page loads) and its events; nothing without a way to sign in.
    With ``sign_in`` (the login's guard, :mod:`eval_ui.login`) the admin can list and lift sign-in locks."""
    if service.sign_in is None:
        return
    with gr.Tab(TAB_LABEL, id="adjudicate", visible=False) as tab:
        ui = _build_resolution()
        ui["state"] = gr.State({})
        ui |= _build_access(service)
        if sign_in is not None:
            ui |= _build_locks()
    _wire_resolution_events(service, tab, ui)
    _wire_access_events(service, tab, ui)
    if sign_in is not None:
        ui["do_unlock"].click(
            bind(sign_in_locks, service, unlock_form(sign_in)),
            [ui["unlock_who"]],
            [ui["locks_out"]],
            api_name="sign_in_locks",
            **ONCE_ACCESS,
        )
    demo.load(bind(tab_visibility, service), None, tab, api_visibility="private")


def _build_resolution() -> dict[str, Any]:
    """The intro, the message, the item's picker, and the item's form: the annotators' labels side by
    side, each answer with its statute cards, the verdict, the note and the save button."""
    gr.Markdown(t("adjudicate.intro"))
    ui: dict[str, Any] = {"message": gr.HTML("", css_template=ADJUDICATE_CSS, elem_id="adj-message")}
    with gr.Row(equal_height=True):
        ui["pick"] = gr.Dropdown([], value=None, label=t("adjudicate.pick"), elem_id="adj-pick", scale=4)
        ui["refresh"] = gr.Button(
            t("adjudicate.refresh"), size="sm", elem_id="adj-refresh", scale=0, min_width=90
        )
    with gr.Column(visible=False, elem_id="adj-form") as ui["form"]:
        ui["comparison"] = gr.HTML("", css_template=ADJUDICATE_CSS, elem_id="adj-comparison")
        slots: dict[str, label_form.StatuteSlots] = {}
        with gr.Row(equal_height=False):
            for side in SIDES:
                with gr.Column(min_width=300):
                    ui[side] = gr.HTML("", css_template=ADJUDICATE_CSS, elem_id=f"adj-{side}")
                    slots[side] = label_form.build_slots(f"adj-{side}", side.upper())
        ui["verdict"] = gr.Radio(
            [(t(key), code) for code, key in ITEM_VERDICT_NAMES.items()],
            value=None,
            label=t("adjudicate.verdict"),
            elem_id="adj-verdict",
        )
        ui["note"] = gr.Textbox(label=t("adjudicate.note"), lines=2, elem_id="adj-note")
        label_form.counter("#adj-note textarea", "adj-note-count", MAX_NOTE_CHARS)
        ui["save"] = gr.Button(t("adjudicate.save"), variant="primary", elem_id="adj-save")
    return ui | {"slots": slots, "a_note": slots["a"].note, "b_note": slots["b"].note}


def _build_access(service: AnnotationService) -> dict[str, Any]:
    """Invitations and audit log: who may sign in, the invite form and its buttons, the message, and the
    tables (the API's Dataframes, hidden, and the page's HTML tables)."""
    ui: dict[str, Any] = {}
    with gr.Accordion(t("adjudicate.access"), open=False, elem_id="adj-access"):
        gr.Markdown(access_help(service), elem_id="adj-access-help")
        with gr.Row(equal_height=True):
            ui["invite_name"] = gr.Textbox(label=t("adjudicate.invite_name"), max_lines=1, max_length=100,
                                           elem_id="adj-invite-name", scale=3)  # fmt: skip
            ui["invite_role"] = gr.Radio([(t(key), value) for key, value in INVITE_ROLES], value="annotator",
                                         label=t("adjudicate.role"), elem_id="adj-invite-role", scale=2)  # fmt: skip
        with gr.Row():
            ui["do_invite"] = gr.Button(
                t("adjudicate.invite"), variant="primary", elem_id="adj-invite", scale=0, min_width=120
            )
            ui["do_uninvite"] = gr.Button(
                t("adjudicate.uninvite"), elem_id="adj-uninvite", scale=0, min_width=170
            )
            ui["refresh_access"] = gr.Button(
                t("adjudicate.refresh"), size="sm", elem_id="adj-access-refresh", scale=0, min_width=90
            )
        ui |= _build_access_tables()
    return ui


def _build_access_tables() -> dict[str, Any]:
    """The message above the tables, then the invitations and the audit log: the HTTP API's tables
    (neutral headers; hidden), and the page's (headers in its language)."""
    ui: dict[str, Any] = {}
    ui["access_message"] = gr.HTML("", css_template=ADJUDICATE_CSS, elem_id="adj-access-message")
    ui["invitations"] = gr.Dataframe(
        headers=INVITATION_HEADERS, interactive=False, elem_id="adj-invitations", wrap=True, visible=False
    )
    ui["invitations_html"] = gr.HTML(
        rows_html(INVITATION_COLUMNS, []), css_template=ADJUDICATE_CSS, elem_id="adj-invitations-table"
    )
    gr.Markdown(say_block("adjudicate.audit", n=AUDIT_ROWS))
    ui["audit"] = gr.Dataframe(
        headers=AUDIT_HEADERS, interactive=False, elem_id="adj-audit", wrap=True, max_height=500,
        visible=False,
    )  # fmt: skip
    ui["audit_html"] = gr.HTML(
        rows_html(AUDIT_COLUMNS, []), css_template=ADJUDICATE_CSS, elem_id="adj-audit-table"
    )
    return ui


def _build_locks() -> dict[str, Any]:
    """The sign-in locks: whose to lift, the button, and the list."""
    ui: dict[str, Any] = {}
    with gr.Accordion(t("adjudicate.locks"), open=False, elem_id="adj-locks-accordion"):
        ui["unlock_who"] = gr.Textbox(
            label=t("adjudicate.unlock_who"), max_lines=1, max_length=300, elem_id="adj-unlock-who"
        )
        ui["do_unlock"] = gr.Button(t("adjudicate.unlock"), size="sm", elem_id="adj-unlock")
        ui["locks_out"] = gr.Textbox(
            label=t("adjudicate.locks_out"), interactive=False, lines=8, elem_id="adj-locks"
        )
    return ui


#: One adjudication event at a time per page (and one change of the invitations), a second click ignored.
ONCE = {"trigger_mode": "once", "concurrency_id": "adjudication"}
ONCE_ACCESS = {"trigger_mode": "once", "concurrency_id": "invitations"}


def _wire_resolution_events(service: AnnotationService, tab: gr.Tab, ui: dict[str, Any]) -> None:
    """The disagreements (on refresh and when the tab opens), the item picked, the resolution saved: each
    fills the view's components."""
    outputs = label_form.output_components(VIEW_FIELDS, ui, ui["slots"], SLOT_WIDTHS)
    state, slots = ui["state"], ui["slots"]
    ui["refresh"].click(bind(list_disagreements, service), [state], outputs, api_name="disagreements", **ONCE)
    tab.select(bind(list_disagreements, service), [state], outputs, api_visibility="private", **ONCE)
    ui["pick"].input(bind(show_item, service), [ui["pick"]], outputs, api_name="adjudication_item", **ONCE)
    ui["save"].click(
        bind_form(record_adjudication, ResolutionForm.from_inputs, SIDES, service),
        [state, ui["verdict"], ui["note"], *slots["a"].marks, *slots["b"].marks],  # ResolutionForm's order
        outputs,
        api_name="adjudicate",
        validator=validate_resolution,
        **ONCE,
    )


def _wire_access_events(service: AnnotationService, tab: gr.Tab, ui: dict[str, Any]) -> None:
    """Invite, withdraw, refresh (and the tab opened): each answers an :class:`AccessReply`, then the
    page's tables are drawn from the API's."""
    access = components_for(
        AccessReply, message=ui["access_message"], invitations=ui["invitations"], audit=ui["audit"]
    )
    shown = {"fn": tables_html, "inputs": [ui["invitations"], ui["audit"]],
             "outputs": [ui["invitations_html"], ui["audit_html"]], "api_visibility": "private"}  # fmt: skip
    ui["do_invite"].click(
        bind(invite_account, service), [ui["invite_name"], ui["invite_role"]], access, api_name="invite",
        **ONCE_ACCESS,
    ).then(**shown)  # fmt: skip
    ui["do_uninvite"].click(
        bind(uninvite_account, service), [ui["invite_name"]], access, api_name="uninvite", **ONCE_ACCESS
    ).then(**shown)
    ui["refresh_access"].click(
        bind(access_tables, service), None, access, api_name="invitations", **ONCE_ACCESS
    ).then(**shown)
    tab.select(bind(access_tables, service), None, access, api_visibility="private", **ONCE_ACCESS).then(
        **shown
    )
