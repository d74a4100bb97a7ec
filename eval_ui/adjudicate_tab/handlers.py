"""The adjudication tab's handlers (plain functions, admins only: every one checks the role again, so the
HTTP API refuses the same people): the disagreements, the item picked, the resolution recorded, the
tab's visibility and the sign-in locks."""

# no `from __future__ import annotations`: Gradio reads the handlers' gr.Request / gr.OAuthProfile hints at runtime

import logging
from collections.abc import Callable
from typing import Any

import gradio as gr

from lawluo.i18n import message as msg
from lawluo.ui.i18n import Html, say

from .. import label_form
from ..annotate_tab import identify, notice_html, say_notice
from ..label_form import SLOTS
from ..service import AnnotationService, Identity
from ..store import AnswerLabel, StoreError, StoreWriteError
from .forms import ResolutionForm, resolution_messages
from .render import ITEM_VERDICT_NAMES, SIDES, error_html, only_admin, say_error, store_failed
from .views import AdjudicationView, empty_view, item_view

logger = logging.getLogger(__package__)  # the tab's one logger: eval_ui.adjudicate_tab


def admin_caller(service: AnnotationService, request: gr.Request | None, profile: Any) -> Identity | None:
    """The caller when they are an admin, else None."""
    who = identify(service, request, profile)
    return who if who is not None and who.is_admin else None


def sign_in_locks(
    service: AnnotationService,
    unlock: Callable[[str], str],
    who: str | None,
    request: gr.Request,
    profile: gr.OAuthProfile | None = None,
) -> str:
    """List the sign-in locks, or lift those of ``who`` (a name, an address, ``name address``, or ``*``);
    admins only. Plain text: names are whatever visitors typed (shown in a read-only textbox)."""
    if admin_caller(service, request, profile) is None:
        return str(msg("adjudicate.only_admin_unlock"))
    return unlock(who or "")


def tab_visibility(
    service: AnnotationService, request: gr.Request, profile: gr.OAuthProfile | None = None
) -> Any:
    """The tab is shown to admins only."""
    return gr.update(visible=admin_caller(service, request, profile) is not None)


def list_disagreements(
    service: AnnotationService,
    state: dict | None,
    request: gr.Request,
    profile: gr.OAuthProfile | None = None,
) -> AdjudicationView:
    """Every item where annotators disagree; the open one stays open (else the first not adjudicated)."""
    try:
        if admin_caller(service, request, profile) is None:
            return AdjudicationView(message=only_admin())
        items = service.store.disagreements()
        if not items:
            return empty_view(say("adjudicate.none"))
        current = (state or {}).get("item_id")
        if current not in {i["item_id"] for i in items}:
            current = next((i["item_id"] for i in items if not i.get("adjudication")), items[0]["item_id"])
        pending = sum(1 for i in items if not i.get("adjudication"))
        message = say("adjudicate.count", n=len(items), pending=pending)
        return item_view(service, items, current, message)
    except StoreError as exc:
        return AdjudicationView(message=store_failed(exc))


def show_item(
    service: AnnotationService,
    item_id: str | None,
    request: gr.Request,
    profile: gr.OAuthProfile | None = None,
) -> AdjudicationView:
    """The picked item, side by side."""
    try:
        if admin_caller(service, request, profile) is None:
            return AdjudicationView(message=only_admin())
        if not item_id:
            return AdjudicationView()
        return item_view(service, service.store.disagreements(), item_id)
    except StoreError as exc:
        return AdjudicationView(message=store_failed(exc))


def record_adjudication(
    service: AnnotationService,
    form: ResolutionForm,
    request: gr.Request,
    profile: gr.OAuthProfile | None = None,
) -> AdjudicationView:
    """Save the resolution of the open item (``form``: the verdict, A/B/tie/both_bad in the item's
    orientation, the statute slots of answer A then B, and the note)."""
    try:
        who = admin_caller(service, request, profile)
        if who is None:
            return AdjudicationView(message=only_admin())
        item_id = form.item_id
        if not item_id:
            return AdjudicationView(message=say_notice("adjudicate.pick_first", "warn"))
        problems = resolution_messages(form.verdict, form.note)
        if problems:
            said = Html(" ".join(say(p) for p in problems))
            return AdjudicationView(message=say_notice("adjudicate.not_saved", "error", error=said))
        answers, unlabelled = {}, 0
        for n, side in enumerate(SIDES):
            keys = [s.key for s in service.statutes(item_id, side)]
            labels = label_form.labels_from_slots(keys[:SLOTS], form.side_marks(n))
            unlabelled += label_form.unlabelled_count(keys, labels)
            answers[side] = AnswerLabel(labels)
        note = (form.note or "").strip()
        saved = service.store.adjudicate(who.name, item_id, form.verdict, answers["a"], answers["b"], note)
    except StoreWriteError as exc:
        logger.error("adjudication not saved: %s", exc.__cause__)
        return AdjudicationView(message=notice_html(error_html(exc), "error"))
    except (StoreError, ValueError) as exc:
        return AdjudicationView(message=notice_html(say_error("adjudicate.not_saved", exc), "error"))
    except Exception:
        logger.exception("adjudication failed")
        return AdjudicationView(message=say_notice("adjudicate.not_saved_bug", "error"))
    message = say(
        "adjudicate.recorded", verdict=msg(ITEM_VERDICT_NAMES[form.verdict]), version=saved["version"]
    )
    if unlabelled:
        message += " " + say("adjudicate.unlabelled", n=unlabelled)
    kind = "warn" if unlabelled else "info"
    return item_view(service, service.store.disagreements(), item_id, message, kind, just_saved=True)
