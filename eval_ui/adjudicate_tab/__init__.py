"""The 裁决 / Adjudication tab (admins only): items where annotators disagree, side by side, and the
label the admin resolves them to.

The list comes from :meth:`~eval_ui.store.AnnotationStore.disagreements` (two or more current labels
that differ on the verdict or on whether a statute is hallucinated). For the item picked, the admin
sees the question, both answers in the item's own A/B orientation with the systems' names, and every
annotator's verdict, scores, comment and statute labels next to each other (rows where they disagree
marked). Below each answer the statute cards of :mod:`eval_ui.label_form` take the resolved labels
(pre-filled where every annotator who labelled a statute agrees, or from an earlier adjudication), and a
verdict and an optional note complete the resolution, saved with
:meth:`~eval_ui.store.AnnotationStore.adjudicate`: apart from the annotators' labels, which it never
changes (statistics and exports choose raw or adjudicated labels).

Below, 邀请与审计 Invitations and audit log: the admin invites a Hugging Face account by name (as annotator
or admin) or withdraws an invitation (their labels stay; items they have not labelled go to others),
sees every invitation, and reads the store's append-only audit log (sign-ups, invitations, role
changes, imports, exports, released reservations), newest first. Names are checked by the store
(a Hugging Face handle, at most 100 characters) and every cell is shown as plain text on one line.

The tab is hidden from everyone but admins, and every handler checks the role again, so the HTTP API
refuses the same people. Handlers are plain functions (:mod:`.handlers`, :mod:`.access`); the record
event's inputs reach its handler as one :class:`ResolutionForm`, and a handler answers a named view
(:class:`AdjudicationView`) or reply (:class:`AccessReply`), mapped to the components in :mod:`.layout`.
The package: :mod:`.render` (HTML), :mod:`.forms`, :mod:`.views`, :mod:`.handlers`, :mod:`.access`
(invitations and audit log), :mod:`.layout`.

Languages: fixed texts are ``gr.I18n`` keys (:func:`lawluo.ui.i18n.t`; the verdict's and the role's choices
too: Gradio translates a choice's key); messages are in both languages (:func:`~lawluo.ui.i18n.say`);
data (names, questions, answers, comments, item ids) sit in an element that says their language
(:func:`data`). Gradio 6.31 does not translate a key in a Dataframe's header, so the invitations and the
audit log keep their Dataframes for the HTTP API (neutral headers, hidden) and the page shows them as HTML
tables with headers in its language (:func:`rows_html`).
"""

# no `from __future__ import annotations`: Gradio reads the handlers' gr.Request / gr.OAuthProfile hints at runtime

from lawluo.ui.render import data

from ..annotate_tab import notice_html, say_notice
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
    audit_table,
    cell,
    invitations_table,
    invite_account,
    rows_html,
    tables_html,
    uninvite_account,
)
from .forms import (
    VERDICT_PROBLEM,
    ResolutionForm,
    resolution_messages,
    resolution_problems,
    validate_resolution,
)
from .handlers import (
    admin_caller,
    list_disagreements,
    record_adjudication,
    show_item,
    sign_in_locks,
    tab_visibility,
)
from .layout import TAB_LABEL, build_adjudicate_tab
from .render import (
    ADJUDICATE_CSS,
    ITEM_VERDICT_NAMES,
    SIDES,
    comparison_html,
    consensus,
    error_html,
    error_text,
    reasons_html,
    say_error,
    verdict_name,
)
from .views import API_OUTPUTS, SLOT_WIDTHS, VIEW_FIELDS, AdjudicationView

__all__ = [
    "ADJUDICATE_CSS",
    "API_OUTPUTS",
    "AUDIT_COLUMNS",
    "AUDIT_HEADERS",
    "AUDIT_ROWS",
    "INVITATION_COLUMNS",
    "INVITATION_HEADERS",
    "INVITE_ROLES",
    "ITEM_VERDICT_NAMES",
    "SIDES",
    "SLOT_WIDTHS",
    "TAB_LABEL",
    "VERDICT_PROBLEM",
    "VIEW_FIELDS",
    "AccessReply",
    "AdjudicationView",
    "ResolutionForm",
    "access_help",
    "access_tables",
    "admin_caller",
    "audit_table",
    "build_adjudicate_tab",
    "cell",
    "comparison_html",
    "consensus",
    "data",
    "error_html",
    "error_text",
    "invitations_table",
    "invite_account",
    "list_disagreements",
    "notice_html",
    "reasons_html",
    "record_adjudication",
    "resolution_messages",
    "resolution_problems",
    "rows_html",
    "say_error",
    "say_notice",
    "show_item",
    "sign_in_locks",
    "tab_visibility",
    "tables_html",
    "uninvite_account",
    "validate_resolution",
    "verdict_name",
]
