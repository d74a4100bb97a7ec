"""The adjudication tab's 邀请与审计 Invitations and audit log: invite a Hugging Face account (as annotator or
admin) or withdraw an invitation, see every invitation and the newest rows of the audit log (admins only).
Each handler answers an :class:`AccessReply`; every cell is plain text on one line (:func:`cell`)."""

# no `from __future__ import annotations`: Gradio reads the handlers' gr.Request / gr.OAuthProfile hints at runtime

import json
import logging
import re
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import gradio as gr

from lawluo.i18n import message as msg
from lawluo.ui.i18n import Html, say, say_block
from lawluo.ui.render import data, data_lang

from ..annotate_tab import md_text, notice_html, say_notice
from ..service import AnnotationService, Identity
from ..store import StoreError, StoreWriteError, iso_utc, short_name
from .handlers import admin_caller
from .render import error_html, only_admin, say_error, store_failed

logger = logging.getLogger(__package__)  # the tab's one logger: eval_ui.adjudicate_tab

#: The roles an invitation gives (label key, value).
INVITE_ROLES = (("adjudicate.role.annotator", "annotator"), ("adjudicate.role.admin", "admin"))
#: The columns of the invitations and of the audit log (keys). The API's tables keep these neutral
#: headers; the page shows the rows as HTML tables with the headers in its language (:func:`rows_html`):
#: Gradio 6.31 does not translate an I18n key in a Dataframe header.
INVITATION_COLUMNS = ("name", "role", "invited_by", "invited_at")
AUDIT_COLUMNS = ("at", "actor", "action", "subject", "details")
INVITATION_HEADERS = list(INVITATION_COLUMNS)
AUDIT_HEADERS = list(AUDIT_COLUMNS)
#: Rows of the audit log the tab shows (``python -m eval_ui audit --limit N`` reads further back).
AUDIT_ROWS = 200
_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u2064\ufeff]")


class AccessReply(NamedTuple):
    """What the invitations' events show: the message above the tables (HTML), the invitations' rows and
    the audit log's."""

    message: str
    invitations: list
    audit: list


def cell(value: object, limit: int = 300) -> str:
    """``value`` as one line of plain text for a table cell: control and invisible characters replaced,
    at most ``limit`` characters.

    >>> cell("a\\nb\\x00" + "c" * 9, limit=6)
    'a b cc…'
    """
    text = _UNPRINTABLE.sub(" ", "" if value is None else str(value))
    return text if len(text) <= limit else text[:limit] + "…"


def invitations_table(service: AnnotationService) -> list[list[str]]:
    """Every invitation's row: name, role, who invited, when (each cell :func:`cell`)."""
    return [
        [cell(i["name"]), cell(i["role"]), cell(i["invited_by"]), cell(iso_utc(i["invited_at"]))]
        for i in service.store.invitations()
    ]


def audit_table(service: AnnotationService, limit: int = AUDIT_ROWS) -> list[list[str]]:
    """The newest ``limit`` rows of the audit log: when, who, what, whom, details (each cell :func:`cell`)."""
    return [
        [
            cell(iso_utc(e["at"])),
            cell(e["actor"]),
            cell(e["action"]),
            cell(e["subject"]),
            cell(json.dumps(e["details"], ensure_ascii=False, sort_keys=True)),
        ]
        for e in service.store.audit_log(limit)
    ]


def _md_name(name: str) -> str:
    """A name inside Markdown, as literal text in an element of its language (:func:`data`)."""
    return f'<span lang="{data_lang(name)}">{md_text(name)}</span>'


def access_help(service: AnnotationService) -> str:
    """Who may sign in, in a few lines of Markdown (names escaped)."""
    how = "adjudicate.access.password" if service.sign_in == "password" else "adjudicate.access.oauth"
    admins = ", ".join(_md_name(n) for n in sorted(service.admins)) or "—"
    orgs = ", ".join(_md_name(n) for n in sorted(service.orgs)) or "—"
    return say_block(
        "adjudicate.access.help",
        how=msg(how),
        admins=Html(admins),
        orgs=Html(orgs),
        admins_var=Html(data("LAWLUO_ANNOTATION_ADMINS")),
        orgs_var=Html(data("LAWLUO_ANNOTATION_ORGS")),
    )


def access_reply(service: AnnotationService, message: str = "", kind: str = "info") -> AccessReply:
    """The message (HTML: :func:`say`) above the tables, and the tables' rows."""
    return AccessReply(
        notice_html(message, kind) if message else "", invitations_table(service), audit_table(service)
    )


def access_tables(
    service: AnnotationService, request: gr.Request, profile: gr.OAuthProfile | None = None
) -> AccessReply:
    """The invitations and the newest rows of the audit log (admins only)."""
    try:
        if admin_caller(service, request, profile) is None:
            return AccessReply(only_admin(), [], [])
        return access_reply(service)
    except StoreError as exc:
        return AccessReply(store_failed(exc), [], [])


def _access_change(
    service: AnnotationService,
    request: gr.Request | None,
    profile: Any,
    refused: str,
    change: Callable[[Identity], str],
) -> AccessReply:
    """An admin's change of who may annotate: ``change(admin)`` returns the message (HTML) shown above the
    tables; a store that refuses is said with the key ``refused`` (``{error}``), never as a traceback."""
    try:
        who = admin_caller(service, request, profile)
        if who is None:
            return AccessReply(only_admin(), [], [])
        return access_reply(service, change(who))
    except StoreWriteError as exc:
        return access_reply(service, error_html(exc), "error")
    except StoreError as exc:
        return access_reply(service, say_error(refused, exc), "error")
    except Exception:
        logger.exception("%s failed", refused)
        return AccessReply(say_notice(refused, "error", error=msg("adjudicate.went_wrong")), [], [])


def invite_account(
    service: AnnotationService,
    name: str | None,
    role: str | None,
    request: gr.Request,
    profile: gr.OAuthProfile | None = None,
) -> AccessReply:
    """Invite the Hugging Face account ``name`` as ``role`` (annotator or admin)."""
    if role not in dict((v, k) for k, v in INVITE_ROLES):
        if admin_caller(service, request, profile) is None:
            return AccessReply(only_admin(), [], [])
        return access_reply(service, say("adjudicate.choose_role"), "warn")

    def change(who: Identity) -> str:
        invitation = service.invite(name, role, who.name)
        role_name = msg(dict((v, k) for k, v in INVITE_ROLES)[invitation["role"]])
        message = say("adjudicate.invited", name=short_name(invitation["name"]), role=role_name)
        if service.sign_in != "oauth":
            message += " " + say("adjudicate.invited_oauth_only")
        return message

    return _access_change(service, request, profile, "adjudicate.not_invited", change)


def uninvite_account(
    service: AnnotationService, name: str | None, request: gr.Request, profile: gr.OAuthProfile | None = None
) -> AccessReply:
    """Withdraw ``name``'s invitation: the items they have not labelled go to others; labels stay."""

    def change(who: Identity) -> str:
        released = service.uninvite(name, who.name)
        message = say("adjudicate.withdrawn", name=short_name(str(name).strip()), n=released)
        if str(name).strip() in service.admins:
            message += " " + say("adjudicate.still_admin", var=Html(data("LAWLUO_ANNOTATION_ADMINS")))
        return message

    return _access_change(service, request, profile, "adjudicate.not_withdrawn", change)


def rows_html(columns: Sequence[str], rows: Any) -> str:
    """A table of the page: the headers in both languages (``adjudicate.col.<column>``), each cell as text
    in the language of its content (:func:`data`); "none yet" for no row."""
    if rows is not None and hasattr(rows, "values") and hasattr(rows, "columns"):
        rows = rows.values.tolist()
    rows = [r for r in (rows or []) if any(str(c).strip() for c in r)]
    head = "".join(f"<th>{say(f'adjudicate.col.{c}')}</th>" for c in columns)
    body = "".join("<tr>" + "".join(f"<td>{data(c)}</td>" for c in row) + "</tr>" for row in rows)
    empty = "" if rows else f'<div class="ann-note">{say("adjudicate.no_rows")}</div>'
    return f'<div class="adj-scroll"><table class="adj-table"><tr>{head}</tr>{body}</table>{empty}</div>'


def tables_html(invitations: Any, audit: Any) -> tuple[str, str]:
    """The page's invitations and audit log from the API's tables (after each of their events)."""
    return rows_html(INVITATION_COLUMNS, invitations), rows_html(AUDIT_COLUMNS, audit)
