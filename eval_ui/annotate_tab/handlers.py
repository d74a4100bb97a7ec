"""The annotation tab's handlers (plain functions; the service is bound first, the caller identified from
the request on every call): open the next or a linked item, save a label, keep a draft, skip, go back.
They never raise: a problem is a message, and the form keeps what was typed."""

# no `from __future__ import annotations`: Gradio reads the handlers' gr.Request / gr.OAuthProfile hints at runtime

import logging
import time
import uuid

import gradio as gr

from lawluo.i18n import Message, message
from lawluo.ui.i18n import say
from lawluo.ui.render import data

from .. import label_form
from ..auth import UsersError
from ..label_form import SLOTS
from ..service import AnnotationService
from ..store import AnswerLabel, Assignment, Draft, LabelInput, SavedLabel, StoreError, StoreWriteError
from .browser import SHOWN_NAMES
from .forms import LabelForm, form_messages, read_draft_form
from .identity import identify, refusal
from .render import draft_note, error_field, error_text, join_messages, say_md, store_failed
from .views import AnnotationView, blank_view, item_view, message_only, next_view, shown_sides

logger = logging.getLogger(__package__)  # the tab's one logger: eval_ui.annotate_tab

#: The query parameter of a deep link to an item (``/annotate?item=<item id>``), and the longest id read.
ITEM_PARAM = "item"
MAX_ITEM_ID_CHARS = 200


def open_annotation(
    service: AnnotationService, request: gr.Request, profile: gr.OAuthProfile | None = None
) -> AnnotationView:
    """On page load (and after signing in): who is here, their progress and their next item."""
    try:
        who = identify(service, request, profile)
        if who is None:
            why = refusal(service, request, profile)
            return blank_view(service, None, say(why), "warn", status=say_md(why))
        return next_view(service, who)
    except (StoreError, UsersError) as exc:
        return blank_view(service, None, store_failed(exc), "error")
    except Exception:
        logger.exception("annotation: open failed")
        return blank_view(service, None, say("annotate.went_wrong"), "error")


def linked_item(request: gr.Request | None) -> str | None:
    """The item id of the page's deep link (``/annotate?item=<id>``: :data:`ITEM_PARAM`), or None. The
    browser sends the page's query string with every event, so only the page-load event reads it."""
    params = getattr(request, "query_params", None) if request is not None else None
    value = params.get(ITEM_PARAM) if params is not None else None
    value = (value or "").strip()
    return value[:MAX_ITEM_ID_CHARS] if value else None


def open_linked(
    service: AnnotationService, request: gr.Request, profile: gr.OAuthProfile | None = None
) -> AnnotationView:
    """On page load: the item of the page's deep link (:func:`linked_item`) when it is assigned to the
    annotator (labelled or not: a labelled one opens to edit, as 上一条 Back opens it), else their next item
    with a message that the linked one is not theirs (whether it exists is not said). Without a link, or
    for someone who is not signed in, what :func:`open_annotation` shows."""
    item_id = linked_item(request)
    if item_id is None:
        return open_annotation(service, request, profile)
    try:
        who = identify(service, request, profile)
        if who is None:
            return open_annotation(service, request, profile)
        try:
            a = service.store.assignment(who.name, item_id)
        except StoreError:  # no such item, or not assigned to them
            a = None
        if a is None or a.status == "unassigned":  # an admin may read any item, but labels only their own
            shown = " ".join(item_id.split())[:60]
            return next_view(service, who, say("annotate.link_not_yours", item=data(shown)), "warn")
        return item_view(service, who, a, say("annotate.link_opened", item=data(item_id)))
    except (StoreError, UsersError) as exc:
        return blank_view(service, None, store_failed(exc), "error")
    except Exception:
        logger.exception("annotation: open of a linked item failed")
        return blank_view(service, None, say("annotate.went_wrong"), "error")


def submit_label(
    service: AnnotationService,
    verdict_shown: str,
    form: LabelForm,
    request: gr.Request,
    profile: gr.OAuthProfile | None = None,
) -> AnnotationView:
    """Save the label of the item in ``form.state`` with ``verdict_shown`` (left/right/tie/both_bad), then go on.

    Gradio passes the form's components by position: :func:`~eval_ui.annotate_tab.binding.bind_form`
    makes them one :class:`LabelForm` (missing slots are unlabelled).
    """
    try:
        who = identify(service, request, profile)
        if who is None:
            return message_only(say(refusal(service, request, profile)), "warn")
        item_id = form.item_id
        if not item_id:
            return message_only(say("annotate.no_item_open"), "warn")
        problems = form_messages(form.scores, form.comment)
        if problems:
            return message_only(say("annotate.not_saved", why=join_messages(*(say(m) for m in problems))))
        a = service.store.assignment(who.name, item_id)
        scores = [None if v in (None, "") else float(v) for v in form.scores]
        answers, unlabelled = _answer_labels(service, a, form, scores)
        shown_at = float(form.state.get("shown_at") or time.time())
        label = LabelInput(
            verdict_shown,
            left=answers["left"],
            right=answers["right"],
            comment=(form.comment or "").strip(),
            guideline_version=service.guideline_version,
            seconds_spent=round(max(0.0, time.time() - shown_at), 1),
        )
        submission = str(form.state.get("submission_id") or uuid.uuid4().hex)
        saved = service.store.save_label(who.name, item_id, label, submission)
    except StoreWriteError as exc:  # the disk refused: the message says so in the reader's language
        logger.error("annotation: a label was not saved: %s", exc.__cause__)
        return message_only(say(error_text(exc)) if exc.message is not None else store_failed(exc))
    except (StoreError, ValueError) as exc:
        found = error_text(exc)
        return message_only(
            say(found) if isinstance(found, Message) else say("annotate.not_saved", why=data(found))
        )
    except Exception:
        logger.exception("annotation: saving a label failed")
        return message_only(say("annotate.not_saved_wrong"))
    return next_view(service, who, *_saved_note(saved, verdict_shown, unlabelled))


def _answer_labels(
    service: AnnotationService, a: Assignment, form: LabelForm, scores: list
) -> tuple[dict[str, AnswerLabel], int]:
    """Each shown answer's label (its statute slots read against the statutes it cites, its ``scores``: the left
    answer's, then the right's, each in the order of the human scores' table), and how many cited statutes
    are left unlabelled."""
    answers, unlabelled = {}, 0
    for n, (shown, side) in enumerate(zip(("left", "right"), shown_sides(a), strict=True)):
        keys = [s.key for s in service.statutes(form.item_id, side)]
        labels = label_form.labels_from_slots(keys[:SLOTS], form.side_marks(n))
        unlabelled += label_form.unlabelled_count(keys, labels)
        width = len(scores) // 2
        answers[shown] = AnswerLabel(labels, *scores[n * width : (n + 1) * width])
    return answers, unlabelled


def _saved_note(saved: SavedLabel, verdict_shown: str, unlabelled: int) -> tuple[str, str]:
    """The message after a save (HTML) and its kind: saved, a duplicate, unchanged; the statutes left unlabelled."""
    if saved.duplicate:
        note = say("annotate.saved_duplicate")
    elif not saved.changed:
        note = say("annotate.saved_unchanged")
    else:
        note = say("annotate.saved", verdict=message(SHOWN_NAMES[verdict_shown]), version=saved.version)
    if unlabelled and not saved.duplicate:
        note = join_messages(note, say("annotate.saved_unlabelled", n=unlabelled))
    return note, "warn" if unlabelled else "info"


def keep_draft(
    service: AnnotationService,
    request: gr.Request,
    profile: gr.OAuthProfile | None = None,
    state: dict | None = None,
    form: str | None = None,
) -> str:
    """Keep what the form holds for the open item (``form``: :data:`DRAFT_FORM_JS`'s JSON of the page's
    fields) as the caller's draft (shown again with the item, e.g. after F5) and say so in one line under
    the comment. A score outside 0–10 is left out of the draft (the verdict's validator reports it on
    its field); a comment over the limit, or any label not from the form's choices, keeps no draft and
    says why. Page only (not in the HTTP API); never raises.

    The form's fields reach it as one JSON text read from the page, not as the fields themselves: an
    event that takes a field as input clears the error the verdict's validator showed on it.
    """
    try:
        fields = read_draft_form(form, state)
        who = identify(service, request, profile)
        item_id = fields.item_id
        if who is None or not item_id:
            return ""
        a = service.store.assignment(who.name, item_id)
        scores = [None if v in (None, "") or label_form.score_problem(v) else float(v) for v in fields.scores]
        answers, _ = _answer_labels(service, a, fields, scores)
        draft = Draft(answers["left"], answers["right"], fields.comment or "")
        kept = service.store.save_draft(who.name, item_id, draft, int(fields.state.get("version") or 0))
    except (StoreError, ValueError) as exc:
        return draft_note(say("annotate.draft_not_kept", why=error_field(exc)), "over")
    except Exception:
        logger.exception("annotation: keeping a draft failed")
        return draft_note(say("annotate.draft_not_kept_wrong"), "over")
    if not kept:
        return ""
    if draft.is_empty():
        return draft_note("")
    when = time.strftime("%H:%M:%S", time.gmtime())
    left_out = sum(1 for v in fields.scores if label_form.score_problem(v))
    note = say("annotate.draft_kept", when=when)
    if left_out:
        note = join_messages(note, say("annotate.draft_scores_left_out", n=left_out))
    return draft_note(note)


def skip_item(
    service: AnnotationService,
    state: dict | None,
    request: gr.Request,
    profile: gr.OAuthProfile | None = None,
) -> AnnotationView:
    """Put the open item aside (it comes back when nothing else is left) and show the next."""
    try:
        who = identify(service, request, profile)
        if who is None:
            return message_only(say(refusal(service, request, profile)), "warn")
        item_id = (state or {}).get("item_id")
        if item_id and not (state or {}).get("editing"):
            service.store.skip(who.name, item_id)
        return next_view(service, who, say("annotate.skipped") if item_id else "")
    except StoreError as exc:
        return message_only(store_failed(exc))


def go_back(
    service: AnnotationService,
    state: dict | None,
    request: gr.Request,
    profile: gr.OAuthProfile | None = None,
) -> AnnotationView:
    """Reopen the annotator's label before the open one (the last one when a new item is open)."""
    try:
        who = identify(service, request, profile)
        if who is None:
            return message_only(say(refusal(service, request, profile)), "warn")
        done = service.store.done_items(who.name)
        if not done:
            return message_only(say("annotate.no_label_yet"), "info")
        current = (state or {}).get("item_id")
        if current in done:
            index = done.index(current)
            if index == 0:
                return message_only(say("annotate.first_label"), "info")
            target = done[index - 1]
        else:
            target = done[-1]
        return item_view(service, who, service.store.assignment(who.name, target))
    except StoreError as exc:
        return message_only(store_failed(exc))


def next_item(
    service: AnnotationService, request: gr.Request, profile: gr.OAuthProfile | None = None
) -> AnnotationView:
    """Leave the label being edited and go to the next unlabelled item."""
    return open_annotation(service, request, profile)
