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
"""

# no `from __future__ import annotations`: Gradio reads the handlers' gr.Request / gr.OAuthProfile hints at runtime

import json
import logging
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import gradio as gr

from lawluo.ui.i18n import t
from lawluo.ui.render import esc, notice
from lawluo.ui.views import KEEP, Keep, View

from . import label_form, verdicts
from .annotate_tab import ANNOTATE_CSS, bind, identify, md_text
from .label_form import MAX_NOTE_CHARS, SLOTS
from .login import SignIn, unlock_form
from .service import AnnotationService, Identity
from .store import AnswerLabel, StoreError, StoreWriteError, iso_utc, short_name

logger = logging.getLogger(__name__)

TAB_LABEL = t("tab.adjudicate")
#: A verdict in the item's own orientation, as the admin reads it.
ITEM_VERDICT_NAMES = {
    "A": "A 更好 A better",
    "B": "B 更好 B better",
    **{v.code: v.label.strip("⬅➡ ") for v in verdicts.VERDICT_TABLE if v.code not in ("A", "B")},
}
ADJUDICATE_CSS = (
    ANNOTATE_CSS
    + """
.adj-table { border-collapse: collapse; font-size: 0.92em; margin: 6px 0 10px 0; }
.adj-table th, .adj-table td { border: 1px solid #d0d7de; padding: 3px 8px; text-align: left; vertical-align: top; }
.adj-table th { background: #f3f4f6; }
.adj-table tr.adj-differs td { background: #fff6e5; }
.adj-reasons { color: #7f1d1d; margin: 4px 0; }
"""
)
SIDES = ("a", "b")
SLOT_WIDTHS = {"a_slots": 3 * SLOTS, "b_slots": 3 * SLOTS}
#: The roles an invitation gives (label, value).
INVITE_ROLES = (("标注员 annotator", "annotator"), ("管理员 admin", "admin"))
INVITATION_HEADERS = ["用户名 name", "角色 role", "邀请人 invited by", "时间 invited at (UTC)"]
AUDIT_HEADERS = ["时间 at (UTC)", "谁 actor", "操作 action", "对象 subject", "详情 details"]
#: Rows of the audit log the tab shows (``python -m eval_ui audit --limit N`` reads further back).
AUDIT_ROWS = 200
_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u2064\ufeff]")


def _only_admin() -> str:
    return notice("只有管理员可以裁决 Only an admin can adjudicate.", "error")


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
        return "只有管理员可以解锁 Only an admin can unlock sign-ins."
    return unlock(who or "")


# --------------------------------------------------------------------------- rendering


def verdict_name(code: str | None, item: Mapping[str, Any]) -> str:
    """A verdict with the winning system's name: ``A 更好 A better (sysA)``."""
    if code is None:
        return "—"
    name = ITEM_VERDICT_NAMES.get(code, str(code))
    system = {"A": item.get("system_a"), "B": item.get("system_b")}.get(code)
    return f"{name} ({system})" if system else name


def _score(value: Any) -> str:
    return "—" if value is None else f"{float(value):g}"


def _statute_label(code: str | None) -> str:
    if code is None:
        return "未标 —"
    return verdicts.STATUTE_NAMES.get(code, str(code))


def _side_keys(service: AnnotationService, item: Mapping[str, Any], side: str) -> list[str]:
    """The statutes the answer cites, then any other statute an annotator labelled (in their order)."""
    keys = [s.key for s in service.statutes(item["item_id"], side)]
    for label in item["labels"]:
        for key in (label["answer_labels"].get(side) or {}).get("statutes") or {}:
            if key not in keys:
                keys.append(key)
    return keys


def comparison_html(service: AnnotationService, item: Mapping[str, Any]) -> str:
    """The question, what the annotators disagree on, and their labels side by side (all escaped)."""
    labels = item["labels"]
    names = [label["annotator"] for label in labels]
    head = "".join(f"<th>{esc(n)}</th>" for n in names)
    parts = [
        f'<div class="adj-reasons">分歧 Disagreement: {esc("; ".join(item.get("reasons") or []))}</div>',
        f'<div class="ann-head">问题 Question · {esc(item["item_id"])}</div>',
        f'<div class="ann-text">{esc(item["question"])}</div>',
        '<table class="adj-table"><tr><th>标注员 Annotator</th><th>结论 Verdict</th>'
        "<th>A Rel / T_LC</th><th>B Rel / T_LC</th><th>备注 Comment</th></tr>",
    ]
    verdict_set = {label["verdict"] for label in labels}
    for label in labels:
        a, b = (label["answer_labels"].get(s) or {} for s in SIDES)
        differs = ' class="adj-differs"' if len(verdict_set) > 1 else ""
        parts.append(
            f"<tr{differs}><td>{esc(label['annotator'])}</td><td>{esc(verdict_name(label['verdict'], item))}</td>"
            f"<td>{_score(a.get('rel'))} / {_score(a.get('tlc'))}</td>"
            f"<td>{_score(b.get('rel'))} / {_score(b.get('tlc'))}</td>"
            f"<td>{esc(label.get('comment') or '')}</td></tr>"
        )
    parts.append("</table>")
    for side in SIDES:
        system = item["system_a"] if side == "a" else item["system_b"]
        keys = _side_keys(service, item, side)
        parts.append(f'<div class="ann-head">{side.upper()} · {esc(system)} · 法条标注 Statute labels</div>')
        if not keys:
            parts.append('<div class="ann-note">没有引用法条 No statute cited.</div>')
            continue
        parts.append(f'<table class="adj-table"><tr><th>法条 Statute</th>{head}</tr>')
        for key in keys:
            codes = [
                ((label["answer_labels"].get(side) or {}).get("statutes") or {}).get(key) for label in labels
            ]
            flags = {verdicts.STATUTE_HALLUCINATED.get(c) for c in codes} - {None}
            differs = ' class="adj-differs"' if len(flags) > 1 else ""
            cells = "".join(f"<td>{esc(_statute_label(c))}</td>" for c in codes)
            parts.append(f"<tr{differs}><td>{esc(key)}</td>{cells}</tr>")
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
    mark = "✓ 已裁决" if item.get("adjudication") else "• 待裁决"
    question = " ".join(str(item["question"]).split())
    return f"{mark} · {question[:36]}{'…' if len(question) > 36 else ''} · {item['item_id'][:60]}", item[
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
    return AdjudicationView(
        message=notice(message, kind) if message else "",
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
        return _empty(
            "这个条目已没有分歧 This item has no disagreement now.", "warn", [_choice(i) for i in items]
        )
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
        message = (message + " " if message else "") + (
            f"已有裁决（第 {earlier['version']} 版，{earlier['admin']}）；再次记录即修改。"
            f" Adjudicated already (version {earlier['version']}, by {earlier['admin']}); recording again changes it."
        )
    answers = {side: getattr(stored, f"answer_{side}", "") if stored else "" for side in SIDES}
    return AdjudicationView(
        message=notice(message, kind) if message else "",
        pick=gr.update(choices=[_choice(i) for i in items], value=item_id),
        form=gr.update(visible=True),
        comparison=comparison_html(service, item),
        a=f'<div class="ann-head">A · {esc(item["system_a"])}</div><div class="ann-text">{esc(answers["a"])}</div>',
        b=f'<div class="ann-head">B · {esc(item["system_b"])}</div><div class="ann-text">{esc(answers["b"])}</div>',
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
            return _empty("目前没有分歧 No item has disagreeing labels yet.")
        current = (state or {}).get("item_id")
        if current not in {i["item_id"] for i in items}:
            current = next((i["item_id"] for i in items if not i.get("adjudication")), items[0]["item_id"])
        pending = sum(1 for i in items if not i.get("adjudication"))
        message = f"{len(items)} 个条目有分歧，{pending} 个待裁决 {len(items)} items disagree; {pending} not adjudicated."
        return _item_view(service, items, current, message)
    except StoreError as exc:
        return AdjudicationView(message=notice(f"标注库出错 The annotation store failed: {exc}", "error"))


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
        return AdjudicationView(message=notice(f"标注库出错 The annotation store failed: {exc}", "error"))


def resolution_problems(verdict: str | None, note: str | None) -> list[str]:
    """The verdict's problem and the note's (empty strings where there is none)."""
    return [
        "" if verdict in verdicts.VERDICTS else "请选择裁决的结论 Choose the resolved verdict.",
        label_form.text_problem(note, MAX_NOTE_CHARS, "说明 The note"),
    ]


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
            return AdjudicationView(message=notice("请先选择一个条目 Pick an item first.", "warn"))
        problems = [p for p in resolution_problems(verdict, note) if p]
        if problems:
            return AdjudicationView(message=notice("没有保存 Not saved: " + " ".join(problems), "error"))
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
        return AdjudicationView(message=notice(str(exc), "error"))
    except (StoreError, ValueError) as exc:
        return AdjudicationView(message=notice(f"没有保存 Not saved: {exc}", "error"))
    except Exception:
        logger.exception("adjudication failed")
        return AdjudicationView(
            message=notice("没有保存，出错了 Not saved: something went wrong; see the server log.", "error")
        )
    message = f"已记录裁决 Resolution recorded ({ITEM_VERDICT_NAMES[verdict]}, version {saved['version']})."
    if unlabelled:
        message += (
            f" {unlabelled} 条法条未标注 {unlabelled} statute{'s' * (unlabelled != 1)} left unlabelled."
        )
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


def access_help(service: AnnotationService) -> str:
    """Who may sign in, in a few lines of Markdown (names escaped)."""
    if service.sign_in == "password":
        how = (
            "登录方式：用户名单（名单里的人即受邀）。 Sign-in: the users file (being in it is the invitation); "
            "the invitations below count only for Hugging Face sign-in on a Space."
        )
    else:
        how = (
            "Hugging Face 登录：只有受邀的账号、下列组织的成员和管理员可以标注。 Hugging Face sign-in: "
            "only invited accounts, members of the organisations below and the admins may annotate."
        )
    admins = ", ".join(md_text(n) for n in sorted(service.admins)) or "—"
    orgs = ", ".join(md_text(n) for n in sorted(service.orgs)) or "—"
    return (
        f"{how}\n\n管理员 Admins (LAWLUO_ANNOTATION_ADMINS): {admins} · "
        f"组织 Organisations (LAWLUO_ANNOTATION_ORGS): {orgs}"
    )


def _access(service: AnnotationService, message: str = "", kind: str = "info") -> tuple[str, list, list]:
    return (notice(message, kind) if message else "", invitations_table(service), audit_table(service))


def access_tables(
    service: AnnotationService, request: gr.Request, profile: gr.OAuthProfile | None = None
) -> tuple[str, list, list]:
    """The invitations and the newest rows of the audit log (admins only)."""
    try:
        if _admin(service, request, profile) is None:
            return _only_admin(), [], []
        return _access(service)
    except StoreError as exc:
        return notice(f"标注库出错 The annotation store failed: {exc}", "error"), [], []


def _access_change(
    service: AnnotationService,
    request: gr.Request | None,
    profile: Any,
    refused: tuple[str, str],
    change: Callable[[Identity], str],
) -> tuple[str, list, list]:
    """An admin's change of who may annotate: ``change(admin)`` returns the message shown above the tables;
    a store that refuses is said in ``refused`` (Chinese, English) words, never as a traceback."""
    try:
        who = _admin(service, request, profile)
        if who is None:
            return _only_admin(), [], []
        return _access(service, change(who))
    except StoreWriteError as exc:
        return _access(service, str(exc), "error")
    except StoreError as exc:
        return _access(service, f"{refused[0]} {refused[1]}: {exc}", "error")
    except Exception:
        logger.exception("%s failed", refused[1])
        return (
            notice(f"{refused[0]}，出错了 {refused[1]}: something went wrong; see the server log.", "error"),
            [],
            [],
        )


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
        return _access(service, "请选择角色 Choose a role: annotator or admin.", "warn")

    def change(who: Identity) -> str:
        invitation = service.invite(name, role, who.name)
        message = f"已邀请 Invited {short_name(invitation['name'])} as {invitation['role']}."
        if service.sign_in != "oauth":
            message += " 提示：邀请只对 Hugging Face 登录有效。 Note: invitations count for Hugging Face sign-in only."
        return message

    return _access_change(service, request, profile, ("没有邀请", "Not invited"), change)


def uninvite_account(
    service: AnnotationService, name: str | None, request: gr.Request, profile: gr.OAuthProfile | None = None
) -> tuple[str, list, list]:
    """Withdraw ``name``'s invitation: the items they have not labelled go to others; labels stay."""

    def change(who: Identity) -> str:
        released = service.uninvite(name, who.name)
        message = (
            f"已取消邀请 Invitation withdrawn: {short_name(str(name).strip())}; {released} 条未标注的条目转给别人"
            f" {released} unlabelled item(s) released to others; their labels are kept."
        )
        if str(name).strip() in service.admins:
            message += " 仍是管理员 Still an admin through LAWLUO_ANNOTATION_ADMINS."
        return message

    return _access_change(service, request, profile, ("没有取消", "Not withdrawn"), change)


# --------------------------------------------------------------------------- layout


def build_adjudicate_tab(service: AnnotationService, demo: gr.Blocks, sign_in: SignIn | None = None) -> None:
    """The tab (hidden until an admin's page loads) and its events; nothing without a way to sign in.
    With ``sign_in`` (the login's guard, :mod:`eval_ui.login`) the admin can list and lift sign-in locks."""
    if service.sign_in is None:
        return
    with gr.Tab(TAB_LABEL, id="adjudicate", visible=False) as tab:
        gr.Markdown(
            "标注员意见不一致的条目。左右对照各人的标注，记录裁决后的标签（不改动标注员的标注）。"
            " Items where annotators disagree, side by side; record the resolved label (the annotators' "
            "labels are kept as they are). Statistics and exports can use either."
        )
        message = gr.HTML("", css_template=ADJUDICATE_CSS, elem_id="adj-message")
        with gr.Row(equal_height=True):
            pick = gr.Dropdown(
                [],
                value=None,
                label="有分歧的条目 Items where annotators disagree",
                elem_id="adj-pick",
                scale=4,
            )
            refresh = gr.Button("刷新 Refresh", size="sm", elem_id="adj-refresh", scale=0, min_width=90)
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
                [(name, code) for code, name in ITEM_VERDICT_NAMES.items()],
                value=None,
                label="裁决结论 Resolved verdict (A and B as above: not swapped)",
                elem_id="adj-verdict",
            )
            note = gr.Textbox(
                label=f"说明 Note (optional, up to {MAX_NOTE_CHARS:,} characters)",
                lines=2,
                elem_id="adj-note",
            )
            label_form.counter("#adj-note textarea", "adj-note-count", MAX_NOTE_CHARS)
            save = gr.Button("记录裁决 Record the resolution", variant="primary", elem_id="adj-save")
        state = gr.State({})
        with gr.Accordion("邀请与审计 Invitations and audit log", open=False, elem_id="adj-access"):
            gr.Markdown(access_help(service), elem_id="adj-access-help")
            with gr.Row(equal_height=True):
                invite_name = gr.Textbox(
                    label="Hugging Face 用户名 Hugging Face username",
                    max_lines=1,
                    max_length=100,
                    elem_id="adj-invite-name",
                    scale=3,
                )
                invite_role = gr.Radio(
                    list(INVITE_ROLES),
                    value="annotator",
                    label="角色 Role",
                    elem_id="adj-invite-role",
                    scale=2,
                )
            with gr.Row():
                do_invite = gr.Button(
                    "邀请 Invite", variant="primary", elem_id="adj-invite", scale=0, min_width=120
                )
                do_uninvite = gr.Button("取消邀请 Withdraw", elem_id="adj-uninvite", scale=0, min_width=170)
                refresh_access = gr.Button(
                    "刷新 Refresh", size="sm", elem_id="adj-access-refresh", scale=0, min_width=90
                )
            access_message = gr.HTML("", css_template=ADJUDICATE_CSS, elem_id="adj-access-message")
            invitations = gr.Dataframe(
                headers=INVITATION_HEADERS, interactive=False, elem_id="adj-invitations", wrap=True
            )
            gr.Markdown(
                f"审计日志（只读，最新的 {AUDIT_ROWS} 条在前） Audit log (read-only, newest {AUDIT_ROWS} first)"
            )
            audit = gr.Dataframe(
                headers=AUDIT_HEADERS, interactive=False, elem_id="adj-audit", wrap=True, max_height=500
            )
        if sign_in is not None:
            with gr.Accordion("登录锁定 Sign-in locks", open=False, elem_id="adj-locks-accordion"):
                unlock_who = gr.Textbox(
                    label="用户名、地址、“用户名 地址”或 *（留空：只列出）Name, address, 'name address' or * "
                    "(empty: list)",
                    max_lines=1,
                    max_length=300,
                    elem_id="adj-unlock-who",
                )
                do_unlock = gr.Button("解锁 / 列出 Unlock / list", size="sm", elem_id="adj-unlock")
                locks_out = gr.Textbox(label="锁定 Locks", interactive=False, lines=8, elem_id="adj-locks")
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
    do_invite.click(
        bind(invite_account, service), [invite_name, invite_role], access, api_name="invite", **once_access
    )
    do_uninvite.click(
        bind(uninvite_account, service), [invite_name], access, api_name="uninvite", **once_access
    )
    refresh_access.click(bind(access_tables, service), None, access, api_name="invitations", **once_access)
    tab.select(bind(access_tables, service), None, access, api_visibility="private", **once_access)
    if sign_in is not None:
        do_unlock.click(
            bind(sign_in_locks, service, unlock_form(sign_in)),
            [unlock_who],
            [locks_out],
            api_name="sign_in_locks",
            **once_access,
        )
    demo.load(bind(tab_visibility, service), None, tab, api_visibility="private")
