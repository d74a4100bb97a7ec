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
refuses the same people.

Languages: fixed texts are ``gr.I18n`` keys (:func:`lawluo.ui.i18n.t`; the verdict's and the role's choices
too: Gradio translates a choice's key); messages are in both languages (:func:`~lawluo.ui.i18n.say`);
data (names, questions, answers, comments, item ids) sit in an element that says their language
(:func:`data`). Gradio 6.31 does not translate a key in a Dataframe's header, so the invitations and the
audit log keep their Dataframes for the HTTP API (neutral headers, hidden) and the page shows them as HTML
tables with headers in its language (:func:`rows_html`).
"""

# no `from __future__ import annotations`: Gradio reads the handlers' gr.Request / gr.OAuthProfile hints at runtime

import json
import logging
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import gradio as gr

from lawluo.i18n import Message
from lawluo.i18n import message as msg
from lawluo.ui.i18n import Html, say, say_block, t
from lawluo.ui.render import data, data_lang, esc, without_paths
from lawluo.ui.views import KEEP, Keep, View

from . import label_form, verdicts
from .annotate_tab import ANNOTATE_CSS, bind, identify, md_text, notice_html, say_notice
from .label_form import MAX_NOTE_CHARS, SLOTS
from .login import SignIn, unlock_form
from .service import AnnotationService, Identity
from .store import AnswerLabel, StoreError, StoreWriteError, iso_utc, short_name

logger = logging.getLogger(__name__)

TAB_LABEL = t("tab.adjudicate")
#: A verdict in the item's own orientation, as the admin reads it: its key (``adjudicate.verdict.<code>``).
ITEM_VERDICT_NAMES = {v.code: f"adjudicate.verdict.{v.code}" for v in verdicts.VERDICT_TABLE}
ADJUDICATE_CSS = (
    ANNOTATE_CSS
    + """
.adj-table { border-collapse: collapse; font-size: 0.92em; margin: 6px 0 10px 0; }
.adj-table th, .adj-table td { border: 1px solid #d0d7de; padding: 3px 8px; text-align: left; vertical-align: top; }
.adj-table th { background: #f3f4f6; }
.adj-table tr.adj-differs td { background: #fff6e5; }
.adj-reasons { color: #7f1d1d; margin: 4px 0; }
.adj-scroll { overflow: auto; max-height: 500px; max-width: 100%; }
"""
)
SIDES = ("a", "b")
SLOT_WIDTHS = {"a_slots": 3 * SLOTS, "b_slots": 3 * SLOTS}
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


def error_text(exc: BaseException) -> Message | Html:
    """What an exception says, for a field of :func:`say`: its ``.message`` (a :class:`Message`) when it
    has one, else its text without the server's paths, in an element of its language (:func:`data`)."""
    found = getattr(exc, "message", None)
    return found if isinstance(found, Message) else Html(data(without_paths(str(exc))))


def say_error(key: str, exc: BaseException) -> Html:
    """``say(key, error=…)`` for an exception: its ``.message`` in each language; a plain text (the store's
    own words, in whatever language they are) shown once after the key's words, not once per language."""
    found = error_text(exc)
    if isinstance(found, Message):
        return say(key, error=found)
    return Html(f"{say(key, error=Html(''))} {found}")


def error_html(exc: BaseException) -> str:
    """An exception's own words as HTML: its ``.message`` in both languages, else its text (escaped)."""
    found = error_text(exc)
    return say(found) if isinstance(found, Message) else found


def _only_admin() -> str:
    return say_notice("adjudicate.only_admin", "error")


def _store_failed(exc: BaseException) -> str:
    return notice_html(say_error("adjudicate.store_failed", exc), "error")


def _admin(service: AnnotationService, request: gr.Request | None, profile: Any) -> Identity | None:
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
    if _admin(service, request, profile) is None:
        return str(msg("adjudicate.only_admin_unlock"))
    return unlock(who or "")


# --------------------------------------------------------------------------- rendering


def verdict_name(code: str | None, item: Mapping[str, Any]) -> str:
    """A verdict with the winning system's name, in both languages (:func:`say`): ``A 更好 (sysA)``."""
    if code is None:
        return "—"
    if code not in ITEM_VERDICT_NAMES:
        return esc(str(code))
    system = {"A": item.get("system_a"), "B": item.get("system_b")}.get(code)
    name = say(ITEM_VERDICT_NAMES[code])
    return f"{name} ({data(system)})" if system else name


def _score(value: Any) -> str:
    return "—" if value is None else f"{float(value):g}"


def _statute_label(code: str | None) -> str:
    """A statute label in both languages (HTML); an unknown code as itself."""
    if code is None:
        return say("adjudicate.statute.none")
    if code in verdicts.STATUTE_NAMES:
        return say(f"adjudicate.statute.{code}")
    return esc(str(code))


def _side_keys(service: AnnotationService, item: Mapping[str, Any], side: str) -> list[str]:
    """The statutes the answer cites, then any other statute an annotator labelled (in their order)."""
    keys = [s.key for s in service.statutes(item["item_id"], side)]
    for label in item["labels"]:
        for key in (label["answer_labels"].get(side) or {}).get("statutes") or {}:
            if key not in keys:
                keys.append(key)
    return keys


def reasons_html(item: Mapping[str, Any]) -> str:
    """What the annotators disagree on (as :func:`eval_ui.store.AnnotationStore.disagreements` finds it),
    from their labels, in both languages: their verdicts, and each statute labelled both correct and wrong."""
    labels = item["labels"]
    reasons = []
    if len({label["verdict"] for label in labels}) > 1:
        given = ", ".join(
            f"{data(label['annotator'])} {verdict_name(label['verdict'], {})}" for label in labels
        )
        reasons.append(say("adjudicate.reason.verdicts", given=Html(given)))
    for side in SIDES:
        flags: dict[str, set[bool]] = {}
        for label in labels:
            for key, code in ((label["answer_labels"].get(side) or {}).get("statutes") or {}).items():
                flag = verdicts.STATUTE_HALLUCINATED.get(code)
                if flag is not None:
                    flags.setdefault(key, set()).add(flag)
        reasons += [
            say("adjudicate.reason.statute", side=side.upper(), statute=Html(data(key)))
            for key, seen in flags.items()
            if len(seen) > 1
        ]
    return "; ".join(reasons)


def comparison_html(service: AnnotationService, item: Mapping[str, Any]) -> str:
    """The question, what the annotators disagree on, and their labels side by side (all escaped)."""
    labels = item["labels"]
    names = [label["annotator"] for label in labels]
    head = "".join(f"<th>{data(n)}</th>" for n in names)
    parts = [
        f'<div class="adj-reasons">{say("adjudicate.disagreement", reasons=Html(reasons_html(item)))}</div>',
        f'<div class="ann-head">{say("adjudicate.question", item_id=Html(data(item["item_id"])))}</div>',
        f'<div class="ann-text">{data(item["question"])}</div>',
        f'<table class="adj-table"><tr><th>{say("adjudicate.col.annotator")}</th>'
        f"<th>{say('adjudicate.col.verdict')}</th>"
        f"<th>{say('adjudicate.col.scores', side='A')}</th><th>{say('adjudicate.col.scores', side='B')}</th>"
        f"<th>{say('adjudicate.col.comment')}</th></tr>",
    ]
    verdict_set = {label["verdict"] for label in labels}
    for label in labels:
        a, b = (label["answer_labels"].get(s) or {} for s in SIDES)
        differs = ' class="adj-differs"' if len(verdict_set) > 1 else ""
        parts.append(
            f"<tr{differs}><td>{data(label['annotator'])}</td><td>{verdict_name(label['verdict'], item)}</td>"
            f"<td>{_score(a.get('rel'))} / {_score(a.get('tlc'))}</td>"
            f"<td>{_score(b.get('rel'))} / {_score(b.get('tlc'))}</td>"
            f"<td>{data(label.get('comment') or '')}</td></tr>"
        )
    parts.append("</table>")
    for side in SIDES:
        system = item["system_a"] if side == "a" else item["system_b"]
        keys = _side_keys(service, item, side)
        parts.append(
            f'<div class="ann-head">{side.upper()} · {data(system)} · '
            f"{say('adjudicate.statute_labels')}</div>"
        )
        if not keys:
            parts.append(f'<div class="ann-note">{say("adjudicate.no_statute")}</div>')
            continue
        parts.append(f'<table class="adj-table"><tr><th>{say("adjudicate.col.statute")}</th>{head}</tr>')
        for key in keys:
            codes = [
                ((label["answer_labels"].get(side) or {}).get("statutes") or {}).get(key) for label in labels
            ]
            flags = {verdicts.STATUTE_HALLUCINATED.get(c) for c in codes} - {None}
            differs = ' class="adj-differs"' if len(flags) > 1 else ""
            cells = "".join(f"<td>{_statute_label(c)}</td>" for c in codes)
            parts.append(f"<tr{differs}><td>{data(key)}</td>{cells}</tr>")
        parts.append("</table>")
    return "".join(parts)


def consensus(item: Mapping[str, Any], side: str) -> dict[str, str]:
    """The statute labels every annotator who labelled the statute agrees on (one code), per statute.

    >>> item = {"labels": [{"answer_labels": {"a": {"statutes": {"x": "wrong", "y": "correct"}}}},
    ...                    {"answer_labels": {"a": {"statutes": {"x": "wrong", "y": "wrong_number"}}}}]}
    >>> consensus(item, "a")
    {'x': 'wrong'}
    """
    given: dict[str, set[str]] = {}
    for label in item["labels"]:
        for key, code in ((label["answer_labels"].get(side) or {}).get("statutes") or {}).items():
            if code in verdicts.STATUTE_LABELS:
                given.setdefault(key, set()).add(code)
    return {key: next(iter(codes)) for key, codes in given.items() if len(codes) == 1}


def _choice(item: Mapping[str, Any]) -> tuple[str, str]:
    """An item of the drop-down: adjudicated or not (a mark, no words: a choice is one string, shown in
    either language), the question's start (Chinese, the data's language) and the item id."""
    mark = "✓" if item.get("adjudication") else "•"
    question = " ".join(str(item["question"]).split())
    return f"{mark} {question[:36]}{'…' if len(question) > 36 else ''} · {item['item_id'][:60]}", item[
        "item_id"
    ]


# --------------------------------------------------------------------------- views


@dataclass
class AdjudicationView(View):
    """What an event of the tab shows (``a_slots``/``b_slots``: each answer's statute cards)."""

    message: str | Keep = KEEP
    pick: Any = KEEP  # gr.update(choices=…, value=…)
    form: Any = KEEP  # gr.update(visible=…)
    comparison: str | Keep = KEEP
    a: str | Keep = KEEP
    b: str | Keep = KEEP
    a_note: str | Keep = KEEP
    b_note: str | Keep = KEEP
    a_slots: list | Keep = KEEP
    b_slots: list | Keep = KEEP
    verdict: str | None | Keep = KEEP
    note: str | Keep = KEEP
    state: dict | Keep = KEEP

    def outputs(self, names: Sequence[str] | None = None) -> tuple:
        names = self.names() if names is None else tuple(names)
        return label_form.flatten(zip(names, super().outputs(names), strict=True), SLOT_WIDTHS)


VIEW_FIELDS = AdjudicationView.names()
#: What the HTTP API returns for the tab's events, in order (no state, no layout blocks; each slot
#: field as its cards' HTML then their labels: ``a_card_1`` … ``a_mark_1`` …).
API_OUTPUTS = tuple(
    part
    for name in VIEW_FIELDS
    if name not in ("state", "form")
    for part in (
        [f"{name[:1]}_card_{n}" for n in range(1, SLOTS + 1)]
        + [f"{name[:1]}_mark_{n}" for n in range(1, SLOTS + 1)]
        if name in SLOT_WIDTHS
        else [name]
    )
)


def _empty(message: str, kind: str = "info", choices: list | None = None) -> AdjudicationView:
    """Nothing open; ``message`` is HTML (:func:`say`) or empty."""
    return AdjudicationView(
        message=notice_html(message, kind) if message else "",
        pick=gr.update(choices=choices or [], value=None),
        form=gr.update(visible=False),
        comparison="", a="", b="", a_note="", b_note="",
        a_slots=label_form.blank_slots(), b_slots=label_form.blank_slots(),
        verdict=None, note="", state={},
    )  # fmt: skip


def _item_view(
    service: AnnotationService,
    items: list[dict],
    item_id: str,
    message: str = "",
    kind: str = "info",
    just_saved: bool = False,
) -> AdjudicationView:
    item = next((i for i in items if i["item_id"] == item_id), None)
    if item is None:
        return _empty(say("adjudicate.no_longer"), "warn", [_choice(i) for i in items])
    stored = service.store.item(item_id)
    earlier = item.get("adjudication")
    cited, labels, notes = {}, {}, {}
    for side in SIDES:
        cited[side] = service.statutes(item_id, side)
        if earlier:
            labels[side] = dict((earlier["answer_labels"].get(side) or {}).get("statutes") or {})
        else:
            labels[side] = consensus(item, side)
        notes[side] = label_form.slots_note(cited[side])
    if earlier and not just_saved:
        message = (message + " " if message else "") + say(
            "adjudicate.already", version=earlier["version"], admin=Html(data(earlier["admin"]))
        )
    answers = {side: getattr(stored, f"answer_{side}", "") if stored else "" for side in SIDES}
    return AdjudicationView(
        message=notice_html(message, kind) if message else "",
        pick=gr.update(choices=[_choice(i) for i in items], value=item_id),
        form=gr.update(visible=True),
        comparison=comparison_html(service, item),
        a=f'<div class="ann-head">A · {data(item["system_a"])}</div><div class="ann-text">{data(answers["a"])}</div>',
        b=f'<div class="ann-head">B · {data(item["system_b"])}</div><div class="ann-text">{data(answers["b"])}</div>',
        a_note=notes["a"],
        b_note=notes["b"],
        a_slots=label_form.fill_slots(cited["a"], labels["a"], service.show_checker),
        b_slots=label_form.fill_slots(cited["b"], labels["b"], service.show_checker),
        verdict=earlier["verdict"] if earlier else None,
        note=(earlier or {}).get("note") or "",
        state={"item_id": item_id},
    )


# --------------------------------------------------------------------------- handlers


def tab_visibility(
    service: AnnotationService, request: gr.Request, profile: gr.OAuthProfile | None = None
) -> Any:
    """The tab is shown to admins only."""
    return gr.update(visible=_admin(service, request, profile) is not None)


def list_disagreements(
    service: AnnotationService,
    state: dict | None,
    request: gr.Request,
    profile: gr.OAuthProfile | None = None,
) -> AdjudicationView:
    """Every item where annotators disagree; the open one stays open (else the first not adjudicated)."""
    try:
        if _admin(service, request, profile) is None:
            return AdjudicationView(message=_only_admin())
        items = service.store.disagreements()
        if not items:
            return _empty(say("adjudicate.none"))
        current = (state or {}).get("item_id")
        if current not in {i["item_id"] for i in items}:
            current = next((i["item_id"] for i in items if not i.get("adjudication")), items[0]["item_id"])
        pending = sum(1 for i in items if not i.get("adjudication"))
        message = say("adjudicate.count", n=len(items), pending=pending)
        return _item_view(service, items, current, message)
    except StoreError as exc:
        return AdjudicationView(message=_store_failed(exc))


def show_item(
    service: AnnotationService,
    item_id: str | None,
    request: gr.Request,
    profile: gr.OAuthProfile | None = None,
) -> AdjudicationView:
    """The picked item, side by side."""
    try:
        if _admin(service, request, profile) is None:
            return AdjudicationView(message=_only_admin())
        if not item_id:
            return AdjudicationView()
        return _item_view(service, service.store.disagreements(), item_id)
    except StoreError as exc:
        return AdjudicationView(message=_store_failed(exc))


#: A verdict's problem as a field's validation message, in no language: the codes it may be.
VERDICT_PROBLEM = "? " + " | ".join(verdicts.VERDICTS)


def resolution_problems(verdict: str | None, note: str | None) -> list[str]:
    """The verdict's problem and the note's, in no language (a field's validation message: the field it
    marks and its counter say it); empty strings where there is none."""
    return [
        "" if verdict in verdicts.VERDICTS else VERDICT_PROBLEM,
        label_form.text_problem(note, MAX_NOTE_CHARS),
    ]


def resolution_messages(verdict: str | None, note: str | None) -> list[Message]:
    """:func:`resolution_problems` in words (messages)."""
    found = [] if verdict in verdicts.VERDICTS else [msg("adjudicate.choose_verdict")]
    too_long = label_form.text_message(note, MAX_NOTE_CHARS, "adjudicate.the_note")
    return found + ([too_long] if too_long is not None else [])


def validate_resolution(
    state: dict | None = None, verdict: str | None = None, note: str | None = None, *marks: Any
) -> list[dict]:
    """The record button's validator: marks the verdict or the note when it is at fault."""
    return label_form.validations(["", *resolution_problems(verdict, note), *[""] * len(marks)])


def record_adjudication(
    service: AnnotationService,
    request: gr.Request,
    profile: gr.OAuthProfile | None = None,
    state: dict | None = None,
    verdict: str | None = None,
    note: str | None = None,
    *marks: str | None,
) -> AdjudicationView:
    """Save the resolution of the open item: ``verdict`` (A/B/tie/both_bad, the item's orientation),
    the statute slots of answer A then B (:data:`SLOTS` each), and the note."""
    try:
        who = _admin(service, request, profile)
        if who is None:
            return AdjudicationView(message=_only_admin())
        item_id = (state or {}).get("item_id")
        if not item_id:
            return AdjudicationView(message=say_notice("adjudicate.pick_first", "warn"))
        problems = resolution_messages(verdict, note)
        if problems:
            said = Html(" ".join(say(p) for p in problems))
            return AdjudicationView(message=say_notice("adjudicate.not_saved", "error", error=said))
        marks = tuple(marks) + (None,) * (2 * SLOTS - len(marks))
        answers, unlabelled = {}, 0
        for n, side in enumerate(SIDES):
            keys = [s.key for s in service.statutes(item_id, side)]
            labels = label_form.labels_from_slots(keys[:SLOTS], marks[n * SLOTS : (n + 1) * SLOTS])
            unlabelled += label_form.unlabelled_count(keys, labels)
            answers[side] = AnswerLabel(labels)
        saved = service.store.adjudicate(
            who.name, item_id, verdict, answers["a"], answers["b"], (note or "").strip()
        )
    except StoreWriteError as exc:
        logger.error("adjudication not saved: %s", exc.__cause__)
        return AdjudicationView(message=notice_html(error_html(exc), "error"))
    except (StoreError, ValueError) as exc:
        return AdjudicationView(message=notice_html(say_error("adjudicate.not_saved", exc), "error"))
    except Exception:
        logger.exception("adjudication failed")
        return AdjudicationView(message=say_notice("adjudicate.not_saved_bug", "error"))
    message = say("adjudicate.recorded", verdict=msg(ITEM_VERDICT_NAMES[verdict]), version=saved["version"])
    if unlabelled:
        message += " " + say("adjudicate.unlabelled", n=unlabelled)
    kind = "warn" if unlabelled else "info"
    return _item_view(service, service.store.disagreements(), item_id, message, kind, just_saved=True)


# --------------------------------------------------------------------------- invitations and audit log


def cell(value: object, limit: int = 300) -> str:
    """``value`` as one line of plain text for a table cell: control and invisible characters replaced,
    at most ``limit`` characters.

    >>> cell("a\\nb\\x00" + "c" * 9, limit=6)
    'a b cc…'
    """
    text = _UNPRINTABLE.sub(" ", "" if value is None else str(value))
    return text if len(text) <= limit else text[:limit] + "…"


def invitations_table(service: AnnotationService) -> list[list[str]]:
    return [
        [cell(i["name"]), cell(i["role"]), cell(i["invited_by"]), cell(iso_utc(i["invited_at"]))]
        for i in service.store.invitations()
    ]


def audit_table(service: AnnotationService, limit: int = AUDIT_ROWS) -> list[list[str]]:
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


def _access(service: AnnotationService, message: str = "", kind: str = "info") -> tuple[str, list, list]:
    """The message (HTML: :func:`say`) above the tables, and the tables' rows."""
    return (notice_html(message, kind) if message else "", invitations_table(service), audit_table(service))


def access_tables(
    service: AnnotationService, request: gr.Request, profile: gr.OAuthProfile | None = None
) -> tuple[str, list, list]:
    """The invitations and the newest rows of the audit log (admins only)."""
    try:
        if _admin(service, request, profile) is None:
            return _only_admin(), [], []
        return _access(service)
    except StoreError as exc:
        return _store_failed(exc), [], []


def _access_change(
    service: AnnotationService,
    request: gr.Request | None,
    profile: Any,
    refused: str,
    change: Callable[[Identity], str],
) -> tuple[str, list, list]:
    """An admin's change of who may annotate: ``change(admin)`` returns the message (HTML) shown above the
    tables; a store that refuses is said with the key ``refused`` (``{error}``), never as a traceback."""
    try:
        who = _admin(service, request, profile)
        if who is None:
            return _only_admin(), [], []
        return _access(service, change(who))
    except StoreWriteError as exc:
        return _access(service, error_html(exc), "error")
    except StoreError as exc:
        return _access(service, say_error(refused, exc), "error")
    except Exception:
        logger.exception("%s failed", refused)
        return say_notice(refused, "error", error=msg("adjudicate.went_wrong")), [], []


def invite_account(
    service: AnnotationService,
    name: str | None,
    role: str | None,
    request: gr.Request,
    profile: gr.OAuthProfile | None = None,
) -> tuple[str, list, list]:
    """Invite the Hugging Face account ``name`` as ``role`` (annotator or admin)."""
    if role not in dict((v, k) for k, v in INVITE_ROLES):
        if _admin(service, request, profile) is None:
            return _only_admin(), [], []
        return _access(service, say("adjudicate.choose_role"), "warn")

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
) -> tuple[str, list, list]:
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


# --------------------------------------------------------------------------- layout


def build_adjudicate_tab(service: AnnotationService, demo: gr.Blocks, sign_in: SignIn | None = None) -> None:
    """The tab (hidden until an admin's page loads) and its events; nothing without a way to sign in.
    With ``sign_in`` (the login's guard, :mod:`eval_ui.login`) the admin can list and lift sign-in locks."""
    if service.sign_in is None:
        return
    with gr.Tab(TAB_LABEL, id="adjudicate", visible=False) as tab:
        gr.Markdown(t("adjudicate.intro"))
        message = gr.HTML("", css_template=ADJUDICATE_CSS, elem_id="adj-message")
        with gr.Row(equal_height=True):
            pick = gr.Dropdown(
                [],
                value=None,
                label=t("adjudicate.pick"),
                elem_id="adj-pick",
                scale=4,
            )
            refresh = gr.Button(
                t("adjudicate.refresh"), size="sm", elem_id="adj-refresh", scale=0, min_width=90
            )
        with gr.Column(visible=False, elem_id="adj-form") as form:
            comparison = gr.HTML("", css_template=ADJUDICATE_CSS, elem_id="adj-comparison")
            answers: dict[str, gr.HTML] = {}
            slots: dict[str, label_form.StatuteSlots] = {}
            with gr.Row(equal_height=False):
                for side in SIDES:
                    with gr.Column(min_width=300):
                        answers[side] = gr.HTML("", css_template=ADJUDICATE_CSS, elem_id=f"adj-{side}")
                        slots[side] = label_form.build_slots(f"adj-{side}", side.upper())
            verdict = gr.Radio(
                [(t(key), code) for code, key in ITEM_VERDICT_NAMES.items()],
                value=None,
                label=t("adjudicate.verdict"),
                elem_id="adj-verdict",
            )
            note = gr.Textbox(
                label=t("adjudicate.note"),
                lines=2,
                elem_id="adj-note",
            )
            label_form.counter("#adj-note textarea", "adj-note-count", MAX_NOTE_CHARS)
            save = gr.Button(t("adjudicate.save"), variant="primary", elem_id="adj-save")
        state = gr.State({})
        with gr.Accordion(t("adjudicate.access"), open=False, elem_id="adj-access"):
            gr.Markdown(access_help(service), elem_id="adj-access-help")
            with gr.Row(equal_height=True):
                invite_name = gr.Textbox(
                    label=t("adjudicate.invite_name"),
                    max_lines=1,
                    max_length=100,
                    elem_id="adj-invite-name",
                    scale=3,
                )
                invite_role = gr.Radio(
                    [(t(key), value) for key, value in INVITE_ROLES],
                    value="annotator",
                    label=t("adjudicate.role"),
                    elem_id="adj-invite-role",
                    scale=2,
                )
            with gr.Row():
                do_invite = gr.Button(
                    t("adjudicate.invite"), variant="primary", elem_id="adj-invite", scale=0, min_width=120
                )
                do_uninvite = gr.Button(
                    t("adjudicate.uninvite"), elem_id="adj-uninvite", scale=0, min_width=170
                )
                refresh_access = gr.Button(
                    t("adjudicate.refresh"), size="sm", elem_id="adj-access-refresh", scale=0, min_width=90
                )
            access_message = gr.HTML("", css_template=ADJUDICATE_CSS, elem_id="adj-access-message")
            # the HTTP API's tables (neutral headers; hidden), and the page's (headers in its language)
            invitations = gr.Dataframe(
                headers=INVITATION_HEADERS,
                interactive=False,
                elem_id="adj-invitations",
                wrap=True,
                visible=False,
            )
            invitations_html = gr.HTML(
                rows_html(INVITATION_COLUMNS, []),
                css_template=ADJUDICATE_CSS,
                elem_id="adj-invitations-table",
            )
            gr.Markdown(say_block("adjudicate.audit", n=AUDIT_ROWS))
            audit = gr.Dataframe(
                headers=AUDIT_HEADERS, interactive=False, elem_id="adj-audit", wrap=True, max_height=500,
                visible=False,
            )  # fmt: skip
            audit_html = gr.HTML(
                rows_html(AUDIT_COLUMNS, []), css_template=ADJUDICATE_CSS, elem_id="adj-audit-table"
            )
        if sign_in is not None:
            with gr.Accordion(t("adjudicate.locks"), open=False, elem_id="adj-locks-accordion"):
                unlock_who = gr.Textbox(
                    label=t("adjudicate.unlock_who"),
                    max_lines=1,
                    max_length=300,
                    elem_id="adj-unlock-who",
                )
                do_unlock = gr.Button(t("adjudicate.unlock"), size="sm", elem_id="adj-unlock")
                locks_out = gr.Textbox(
                    label=t("adjudicate.locks_out"), interactive=False, lines=8, elem_id="adj-locks"
                )
    views = dict(
        message=message, pick=pick, form=form, comparison=comparison, a=answers["a"], b=answers["b"],
        a_note=slots["a"].note, b_note=slots["b"].note, verdict=verdict, note=note, state=state,
    )  # fmt: skip
    outputs = label_form.output_components(VIEW_FIELDS, views, slots, SLOT_WIDTHS)
    once = {"trigger_mode": "once", "concurrency_id": "adjudication"}
    refresh.click(bind(list_disagreements, service), [state], outputs, api_name="disagreements", **once)
    tab.select(bind(list_disagreements, service), [state], outputs, api_visibility="private", **once)
    pick.input(bind(show_item, service), [pick], outputs, api_name="adjudication_item", **once)
    save.click(
        label_form.named_slots(bind(record_adjudication, service), SIDES),
        [state, verdict, note, *slots["a"].marks, *slots["b"].marks],
        outputs,
        api_name="adjudicate",
        validator=validate_resolution,
        **once,
    )
    access = [access_message, invitations, audit]
    once_access = {"trigger_mode": "once", "concurrency_id": "invitations"}
    shown = {"fn": tables_html, "inputs": [invitations, audit], "outputs": [invitations_html, audit_html],
             "api_visibility": "private"}  # fmt: skip
    do_invite.click(
        bind(invite_account, service), [invite_name, invite_role], access, api_name="invite", **once_access
    ).then(**shown)
    do_uninvite.click(
        bind(uninvite_account, service), [invite_name], access, api_name="uninvite", **once_access
    ).then(**shown)
    refresh_access.click(
        bind(access_tables, service), None, access, api_name="invitations", **once_access
    ).then(**shown)
    tab.select(bind(access_tables, service), None, access, api_visibility="private", **once_access).then(
        **shown
    )
    if sign_in is not None:
        do_unlock.click(
            bind(sign_in_locks, service, unlock_form(sign_in)),
            [unlock_who],
            [locks_out],
            api_name="sign_in_locks",
            **once_access,
        )
    demo.load(bind(tab_visibility, service), None, tab, api_visibility="private")
