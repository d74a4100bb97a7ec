"""The 标注 / Annotation tab: lawyers compare two anonymous answers and label their hallucinations.

An annotator signs in (Gradio's login form from a users file, or Hugging Face on a Space, where only
invited accounts and members of the listed organisations get in: anyone else reads that they have not
been invited; see :mod:`eval_ui.service`), sees their progress, and gets their next item (when they
have none left, items short of annotators or left untouched by others are topped up first): the
question, the two answers left and right (system names hidden, the order random per annotator and
item), and under each answer one card per statute it cites, with its own label (真实 Correct, 有误 Wrong or a kind of error:
:mod:`eval_ui.label_form`) and its real text one click away (the checker's verdicts hidden unless the
setting ``annotation_show_checker`` is on). 这些都没问题 marks the statutes not yet labelled, and found
by the checker as cited, as correct in one click (never an article that does not exist); a statute left
unlabelled is saved as unlabelled (missing data, never "correct"), and the message after saving says
how many. What the annotator marks and types is kept as their draft of the item (:func:`keep_draft`,
in the store) and shown again with it, e.g. after a reload, until the label is saved. Rel and T_LC (0–10) are optional; an out-of-range score or an
over-long comment is refused on its own field (in numbers: Gradio shows a field's message untranslated)
and nothing is cut. Every text is in the reader's language (``annotate.*`` in lawluo/strings/annotate.yaml:
fixed texts as ``gr.I18n`` keys, messages with :func:`~lawluo.ui.i18n.say`); the items' questions, answers
and statutes, legal content, stay Chinese in an element that says so.

The verdict bar (status, verdict buttons, keys 1–4, back/skip/next, sign-out, the last message) stays
at the top of the window while the annotator scrolls (:data:`LAYOUT_CSS`), so a verdict is one click
or key away whatever they are reading. Keys 1–4 work wherever the focus is, except in a text or
number field. 跳过 Skip puts an item aside, 上一条 Back reopens their earlier labels to edit (the store
keeps every version). An admin also imports items and exports labels (both in the audit log; the
invitations and the log itself are in the admin's 裁决 / Adjudication tab, on ``/admin``); the admin's
part of the tab is hidden from everyone else, and the tab shows no form when nobody can sign in. Nobody
sees another annotator's labels. The tab is the page ``/annotate``; ``/annotate?item=<id>`` opens that
item when it is the annotator's (:func:`open_linked`).

A held-down key or a hasty second click labels one item, not the next one too: the page ignores key
repeats, disables the verdict buttons while a label is being saved and for :data:`GRACE_MS` after a new
item is shown (:data:`KEYS_JS`). The server does not refuse fast labels: a double submit of one item is
already idempotent, and a minimum time would also refuse scripted API use and quick re-saves; each
label records ``seconds_spent`` for the analysis to filter on. Text from items, labels and names is
shown escaped (HTML, and Markdown in the status line), so none of it can make the browser fetch an
image or anything else.

Handlers are plain functions (:mod:`.handlers`, :mod:`.admin`); the :class:`~eval_ui.service.AnnotationService`
is bound first with :func:`bind` and the caller is identified from the request on every call (never from
state), so the HTTP API enforces the same rules as the page. They never raise: a problem (not signed in, a
store error) is a message and the form keeps what was typed. A verdict's inputs reach its handler as one
:class:`LabelForm` (:func:`bind_form`); a handler answers a named view (:class:`AnnotationView`) or reply
(:class:`AnnotatorsReply`, :class:`ExportReply`), mapped to the components in :mod:`.layout` only.

The package: :mod:`.browser` (CSS and scripts), :mod:`.binding` (Gradio glue), :mod:`.identity` (who calls),
:mod:`.render` (HTML), :mod:`.forms` (the label form), :mod:`.views` (what an event shows), :mod:`.handlers`,
:mod:`.admin`, :mod:`.layout`.

Through the API (``gradio_client`` with ``auth=(name, password)``); a verdict takes the scores (``left_rel``,
``left_tlc``, ``right_rel``, ``right_tlc``: a field per answer and row of
:data:`eval_ui.human_scores.HUMAN_SCORE_TABLE`), the comment, then one label per statute card: ``left_1`` … ``left_30``, ``right_1`` … (slot *n* is the
*n*-th card of that answer as the item shows it; a slot left out is unlabelled)::

    client.predict(api_name="/annotation_open")                 # the next item, as the page shows it
    client.predict(8, 6, None, 3, "", left_1="wrong_number", right_2="correct", api_name="/label_left")
    client.predict(handle_file("items.jsonl"), api_name="/import_items")        # admins only
    client.predict("parquet", "raw", False, api_name="/export_labels")          # admins only
"""

# no `from __future__ import annotations`: Gradio reads the handlers' gr.Request / gr.OAuthProfile hints at runtime

from .admin import (
    EXPORT_SOURCES,
    FORMAT_NAMES,
    MAX_IMPORT_BYTES,
    MAX_IMPORT_ITEMS,
    AnnotatorsReply,
    ExportReply,
    annotators_table,
    export_everything,
    export_labels,
    import_items,
    list_annotators,
)
from .binding import bind, bind_form, components_for
from .browser import (
    ANNOTATE_CSS,
    DRAFT_FORM_JS,
    DRAFT_MS,
    DRAFT_SOON_JS,
    GRACE_MS,
    KEYS_JS,
    LAYOUT_CSS,
    SETTLED_JS,
    SHOWN_NAMES,
    SIGN_OUT_JS,
    TAB_LABEL,
    VERDICT_BUTTONS,
    VERDICT_KEYS,
    draft_form_js,
)
from .forms import (
    SCORE_FIELDS,
    FormError,
    LabelForm,
    form_messages,
    form_problems,
    read_draft_form,
    validate_form,
)
from .handlers import (
    ITEM_PARAM,
    MAX_ITEM_ID_CHARS,
    go_back,
    keep_draft,
    linked_item,
    next_item,
    open_annotation,
    open_linked,
    skip_item,
    submit_label,
)
from .identity import NOT_CONFIGURED, identify, not_invited, refusal, sign_in_help
from .layout import build_annotate_tab
from .render import (
    error_field,
    error_text,
    md_data,
    md_text,
    notice_html,
    say_notice,
    text_block,
)
from .views import (
    API_OUTPUTS,
    SLOT_WIDTHS,
    VIEW_FIELDS,
    AnnotationView,
    api_outputs,
    slot_widths,
    view_components,
)

__all__ = [
    "ANNOTATE_CSS",
    "API_OUTPUTS",
    "api_outputs",
    "slot_widths",
    "view_components",
    "draft_form_js",
    "DRAFT_FORM_JS",
    "DRAFT_MS",
    "DRAFT_SOON_JS",
    "EXPORT_SOURCES",
    "FORMAT_NAMES",
    "GRACE_MS",
    "ITEM_PARAM",
    "KEYS_JS",
    "LAYOUT_CSS",
    "MAX_IMPORT_BYTES",
    "MAX_IMPORT_ITEMS",
    "MAX_ITEM_ID_CHARS",
    "NOT_CONFIGURED",
    "SCORE_FIELDS",
    "SETTLED_JS",
    "SHOWN_NAMES",
    "SIGN_OUT_JS",
    "SLOT_WIDTHS",
    "TAB_LABEL",
    "VERDICT_BUTTONS",
    "VERDICT_KEYS",
    "VIEW_FIELDS",
    "AnnotationView",
    "AnnotatorsReply",
    "ExportReply",
    "FormError",
    "LabelForm",
    "annotators_table",
    "bind",
    "bind_form",
    "build_annotate_tab",
    "components_for",
    "error_field",
    "error_text",
    "export_everything",
    "export_labels",
    "form_messages",
    "form_problems",
    "go_back",
    "identify",
    "import_items",
    "keep_draft",
    "linked_item",
    "list_annotators",
    "md_data",
    "md_text",
    "next_item",
    "not_invited",
    "notice_html",
    "open_annotation",
    "open_linked",
    "read_draft_form",
    "refusal",
    "say_notice",
    "sign_in_help",
    "skip_item",
    "submit_label",
    "text_block",
    "validate_form",
]
