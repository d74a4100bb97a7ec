"""The 标注 / Annotation tab: lawyers compare two anonymous answers and label their hallucinations.

An annotator signs in (Gradio's login form from a users file, or Hugging Face on a Space; see
:mod:`eval_ui.service`), sees their progress, and gets their next item: the question, the two answers
left and right (system names hidden, the order random per annotator and item), and under each answer the
statutes it cites, each with its real text one click away (the checker's verdicts hidden unless the
setting ``annotation_show_checker`` is on). Per answer they tick the hallucinated statutes and may give
Rel and T_LC (0–10); a verdict button (keys 1–4) saves the label and serves the next item. 跳过 Skip puts
an item aside, 上一条 Back reopens their earlier labels to edit (the store keeps every version). An
admin also imports items and exports labels. Nobody sees another annotator's labels.

A held-down key or a hasty second click labels one item, not the next one too: the page ignores key
repeats, disables the verdict buttons while a label is being saved and for :data:`GRACE_MS` after a new
item is shown (:data:`KEYS_JS`). The server does not refuse fast labels: a double submit of one item is
already idempotent, and a minimum time would also refuse scripted API use and quick re-saves; each
label records ``seconds_spent`` for the analysis to filter on. Text from items, labels and names is
shown escaped (HTML, and Markdown in the status line), so none of it can make the browser fetch an
image or anything else.

Handlers are plain functions; the :class:`~eval_ui.service.AnnotationService` is bound first with
``functools.partial`` and the caller is identified from the request on every call (never from state),
so the HTTP API enforces the same rules as the page. They never raise: a problem (not signed in, a
score out of range, a store error) is a message and the form keeps what was typed.

Through the API (``gradio_client`` with ``auth=(name, password)``)::

    client.predict(api_name="/annotation_open")                 # the next item, as the page shows it
    client.predict(state, ["《民法典》第1079条"], [], 8, 6, None, None, "", api_name="/label_left")
    client.predict(handle_file("items.jsonl"), api_name="/import_items")        # admins only
    client.predict("csv", api_name="/export_labels")                             # admins only
"""

# no `from __future__ import annotations`: Gradio reads the handlers' gr.Request / gr.OAuthProfile hints at runtime

import inspect
import json
import logging
import re
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial, wraps
from pathlib import Path
from typing import Any, get_type_hints

import gradio as gr

from lawluo.jsonl import JSONLError
from lawluo.ui.render import CSS, badge, esc, notice
from lawluo.ui.views import KEEP, Keep, View

from . import verdicts
from .auth import UsersError
from .items import read_items
from .service import AnnotationService, Identity
from .store import AnswerLabel, Assignment, LabelInput, StoreError, StoreWriteError

logger = logging.getLogger(__name__)

TAB_LABEL = "标注 / Annotation"
#: The verdict buttons (shown verdict, text with its key) and names, from eval_ui/verdicts.py.
VERDICT_BUTTONS = tuple((v.shown, f"{v.label} [{v.key}]") for v in verdicts.VERDICT_TABLE)
SHOWN_NAMES = {v.shown: v.label.strip("⬅➡ ") for v in verdicts.VERDICT_TABLE}
#: key → the id of the verdict button it presses (read by KEYS_JS)
VERDICT_KEYS = {v.key: f"ann-verdict-{v.shown}" for v in verdicts.VERDICT_TABLE}
MAX_IMPORT_BYTES = 20_000_000
MAX_IMPORT_ITEMS = 20_000
MAX_COMMENT_CHARS = 2000

ANNOTATE_CSS = (
    CSS
    + """
.ann-text { white-space: pre-wrap; line-height: 1.7; padding: 10px 12px; border: 1px solid #d0d7de;
  border-radius: 8px; background: #fafbfc; max-height: 520px; overflow-y: auto; }
.ann-head { font-weight: 600; margin: 4px 0; }
.ann-statute { border: 1px solid #e5e7eb; border-radius: 6px; padding: 6px 10px; margin: 4px 0; }
.ann-statute summary { cursor: pointer; color: #1d4ed8; }
.ann-statute .ann-law-text { white-space: pre-wrap; margin-top: 6px; color: #374151; }
.ann-note { color: #6b7280; font-size: 0.9em; }
"""
)

#: Milliseconds a newly shown item ignores verdicts: a held key or a second click meant for the item
#: just saved must not label one nobody has read.
GRACE_MS = 1000

#: Keys 1–4 press the verdict buttons (not while typing in a field). A verdict (key or click) is taken
#: only when no verdict is in flight and the item has been shown for GRACE_MS; the buttons are disabled
#: meanwhile. Auto-repeated keydowns (a held key, ``event.repeat``) are ignored, Enter on a focused
#: button included. ``window.__annGuard.settled()`` (SETTLED_JS, after every event that shows an item)
#: starts the grace period.
KEYS_JS = """
if (!window.__annGuard) {
  const GRACE_MS = __GRACE_MS__, MAX_BUSY_MS = 120000;
  const guard = window.__annGuard = {busy: false, readyAt: 0, timer: null};
  const verdictButton = (el) => (el && el.closest ? el.closest('button[id^="ann-verdict-"]') : null);
  const setDisabled = (on) => document.querySelectorAll('button[id^="ann-verdict-"]').forEach((b) => {
    b.disabled = on;
  });
  const holdFor = (ms) => {
    clearTimeout(guard.timer);
    guard.readyAt = performance.now() + ms;
    setDisabled(true);
    guard.timer = setTimeout(() => { guard.busy = false; setDisabled(false); }, ms);
  };
  guard.settled = () => { guard.busy = false; holdFor(GRACE_MS); };
  document.addEventListener('click', (event) => {
    if (!verdictButton(event.target)) return;
    if (guard.busy || performance.now() < guard.readyAt) {
      event.preventDefault();
      event.stopImmediatePropagation();  // capture phase: Gradio's own handler never sees it
      return;
    }
    guard.busy = true;
    setTimeout(() => { if (guard.busy) setDisabled(true); }, 0);  // after this click has reached Gradio
    clearTimeout(guard.timer);
    guard.timer = setTimeout(() => guard.settled(), MAX_BUSY_MS);  // no answer: usable again, later
  }, true);
  document.addEventListener('keydown', (event) => {
    const tag = (event.target.tagName || '').toLowerCase();
    if (['input', 'textarea', 'select'].includes(tag) || event.target.isContentEditable) return;
    if (event.repeat) {  // a held key: neither a shortcut nor Enter on a focused verdict button repeats
      if (Object.hasOwn(__VERDICT_KEYS__, event.key) || verdictButton(event.target)) event.preventDefault();
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const ids = __VERDICT_KEYS__;
    const button = ids[event.key] && document.getElementById(ids[event.key]);
    if (button && button.offsetParent !== null) { event.preventDefault(); button.click(); }
  }, true);
}
""".replace("__GRACE_MS__", str(GRACE_MS)).replace("__VERDICT_KEYS__", json.dumps(VERDICT_KEYS))
#: Run after every event that shows an item: the grace period before it takes a verdict.
SETTLED_JS = "() => { if (window.__annGuard) window.__annGuard.settled(); }"


def bind(fn: Callable[..., Any], *bound: Any) -> Callable[..., Any]:
    """``fn`` with its first arguments fixed to ``bound`` (the service…), keeping the hints Gradio reads;
    a :class:`~lawluo.ui.views.View` it returns becomes the event's outputs (every field, in order).

    ``functools.partial`` would hide them: Gradio looks for ``gr.Request`` / ``gr.OAuthProfile`` hints
    with ``typing.get_type_hints``, which finds none on a partial object, and would then count the
    request as one of the event's inputs.
    """
    hints = get_type_hints(fn)
    for name in list(inspect.signature(fn).parameters)[: len(bound)]:
        hints.pop(name, None)

    @wraps(fn)
    def handler(*args: Any, **kwargs: Any) -> Any:
        result = fn(*bound, *args, **kwargs)
        return result.outputs() if isinstance(result, View) else result

    handler.__signature__ = inspect.signature(partial(fn, *bound))  # type: ignore[attr-defined]
    handler.__annotations__ = hints
    del handler.__wrapped__  # inspect.signature would follow it back to fn's own parameters
    return handler


# --------------------------------------------------------------------------- rendering


def _text_block(title: str, text: str) -> str:
    return f'<div class="ann-head">{esc(title)}</div><div class="ann-text">{esc(text)}</div>'


def statutes_html(service: AnnotationService, item_id: str, side: str) -> str:
    """The cited statutes of one answer, each with its real text behind a click (verdicts when enabled)."""
    cited = service.statutes(item_id, side)
    if service.checker is None:
        return notice("法规库不可用，无法列出引用的法条 The statute database is not available.", "warn")
    if not cited:
        return '<div class="ann-note">这个回答没有引用具体法条 This answer cites no statute article.</div>'
    cards = []
    for s in cited:
        verdict = badge(s.verdict, "ll-badge") if service.show_checker else ""
        body = (
            f'<div class="ann-law-text">{esc(s.text)}</div>'
            if s.text
            else f'<div class="ann-note">{esc(s.note)}</div>'
        )
        cards.append(
            f'<div class="ann-statute"><b>{esc(s.key)}</b> {verdict}'
            f"<details><summary>查看条文 View the statute</summary>{body}</details></div>"
        )
    return "".join(cards)


def _status(who: Identity | None, service: AnnotationService) -> str:
    if who is None:
        return _sign_in_help(service)
    done, assigned = service.store.progress(who.name)
    role = "管理员 admin" if who.is_admin else "标注员 annotator"
    return f"**{md_text(who.name)}** ({role}) · 进度 Progress: **{done} / {assigned}**"


def md_text(value: object) -> str:
    r"""``value`` as literal text inside Markdown: Markdown's punctuation backslashed and HTML escaped,
    so a name like ``![x](//host/p.png)`` is shown, not fetched as an image (CommonMark §2.4).

    >>> print(md_text("![x](//evil/p.png) <b>"))
    \!\[x\]\(//evil/p\.png\) &lt;b&gt;
    """
    return esc(_MD_PUNCTUATION.sub(r"\\\g<0>", "" if value is None else str(value)))


_MD_PUNCTUATION = re.compile(r"[\\`*_{}\[\]()#+\-.!|~]")  # `<>&"'` are escaped as HTML


def _sign_in_help(service: AnnotationService) -> str:
    if service.sign_in == "oauth":
        return "请用 Hugging Face 账号登录 Sign in with Hugging Face to annotate."
    if service.sign_in == "password":
        return "请登录 Sign in to annotate."
    return (
        "标注需要登录，但尚未配置 Sign-in is not configured. Start the app with annotators, e.g. "
        "`LAWLUO_ANNOTATION_USERS=alice:PASSWORD:admin,bob:PASSWORD python app.py` (or a users file; see "
        "the README), or on a Hugging Face Space set `hf_oauth: true`."
    )


# --------------------------------------------------------------------------- views


@dataclass
class AnnotationView(View):
    """What an event of the tab shows: a field per component, in the order of the events' outputs
    (:data:`~lawluo.ui.views.KEEP`: the component keeps what it shows)."""

    status: str | Keep = KEEP
    message: str | Keep = KEEP
    question: str | Keep = KEEP
    reference: str | Keep = KEEP
    left: str | Keep = KEEP
    right: str | Keep = KEEP
    left_statutes: str | Keep = KEEP
    right_statutes: str | Keep = KEEP
    left_hall: Any = KEEP  # gr.update(choices=…, value=…)
    right_hall: Any = KEEP
    left_rel: float | None | Keep = KEEP
    left_tlc: float | None | Keep = KEEP
    right_rel: float | None | Keep = KEEP
    right_tlc: float | None | Keep = KEEP
    comment: str | Keep = KEEP
    state: dict | Keep = KEEP
    admin: Any = KEEP  # gr.update(visible=…)


#: The components every view fills, in this order (the handlers' outputs).
VIEW_FIELDS = AnnotationView.names()


def _blank(
    service: AnnotationService, who: Identity | None, message: str, kind: str = "info"
) -> AnnotationView:
    """No item: the status and the message, every other field emptied."""
    no_statutes = {"choices": [], "value": []}
    return AnnotationView(
        status=_status(who, service),
        message=notice(message, kind) if message else "",
        question="", reference="", left="", right="", left_statutes="", right_statutes="",
        left_hall=gr.update(**no_statutes), right_hall=gr.update(**no_statutes),
        left_rel=None, left_tlc=None, right_rel=None, right_tlc=None, comment="",
        state={},
        admin=gr.update(visible=bool(who and who.is_admin)),
    )  # fmt: skip


def _sides(a: Assignment) -> tuple[str, str]:
    """The item's answer sides ('a'/'b') shown left and right."""
    return ("b", "a") if a.swapped else ("a", "b")


def _view(
    service: AnnotationService, who: Identity, a: Assignment, message: str = "", kind: str = "info"
) -> AnnotationView:
    """Show assignment ``a``; pre-filled from the annotator's current label when there is one."""
    label = service.store.label(who.name, a.item.id)
    left_side, right_side = _sides(a)
    fill: dict[str, Any] = {"left_hall": [], "right_hall": [], "comment": ""}
    fill |= dict.fromkeys(("left_rel", "left_tlc", "right_rel", "right_tlc"))
    if label is not None:
        labels = label["answer_labels"]
        for shown, side in (("left", left_side), ("right", right_side)):
            mine = labels[side]
            fill[f"{shown}_hall"] = [k for k, v in mine["statutes"].items() if v]
            fill[f"{shown}_rel"], fill[f"{shown}_tlc"] = mine["rel"], mine["tlc"]
        fill["comment"] = label["comment"] or ""
        earlier = SHOWN_NAMES[a.to_shown(label["verdict"])]
        message = (message + " " if message else "") + (
            f"正在修改你的标注（第 {label['version']} 版，当时选择：{earlier}）。选一个结论即保存修改。"
            f" Editing your label (version {label['version']}, verdict: {earlier}); a verdict button saves the change."
        )
    position = ""
    done, assigned = service.store.progress(who.name)
    if label is None:
        position = f"第 {min(done + 1, assigned)} / {assigned} 条 · "
    state = {
        "item_id": a.item.id,
        "shown_at": time.time(),
        "submission_id": uuid.uuid4().hex,
        "editing": label is not None,
    }
    choices = {
        shown: [s.key for s in service.statutes(a.item.id, side)]
        for shown, side in (("left", left_side), ("right", right_side))
    }
    reference = ""
    if a.item.reference or a.item.statutes:
        reference = _text_block("参考答案 Reference answer", a.item.reference or "—")
        if a.item.statutes:
            reference += _text_block("参考法条 Reference statutes", "\n".join(a.item.statutes))
    return AnnotationView(
        status=_status(who, service),
        message=notice(message, kind) if message else "",
        question=_text_block(f"{position}问题 Question", a.item.question),
        reference=reference,
        left=_text_block("左 Left", a.left),
        right=_text_block("右 Right", a.right),
        left_statutes=statutes_html(service, a.item.id, left_side),
        right_statutes=statutes_html(service, a.item.id, right_side),
        left_hall=gr.update(
            choices=choices["left"], value=[v for v in fill["left_hall"] if v in choices["left"]]
        ),
        right_hall=gr.update(
            choices=choices["right"], value=[v for v in fill["right_hall"] if v in choices["right"]]
        ),
        left_rel=fill["left_rel"],
        left_tlc=fill["left_tlc"],
        right_rel=fill["right_rel"],
        right_tlc=fill["right_tlc"],
        comment=fill["comment"],
        state=state,
        admin=gr.update(visible=who.is_admin),
    )


def _next(service: AnnotationService, who: Identity, message: str = "", kind: str = "info") -> AnnotationView:
    a = service.store.next_item(who.name)
    if a is None:
        done, assigned = service.store.progress(who.name)
        text = (
            f"全部完成，谢谢！All {assigned} of your items are labelled. 用「上一条 Back」可以修改。"
            if assigned
            else "目前没有分配给你的条目 No items are assigned to you yet."
        )
        if who.is_admin and not assigned:
            text = "管理员不分配条目；请在「管理 Admin」中导入、导出 Admins are not assigned items; use Admin below."
        return _blank(service, who, (message + " " if message else "") + text, kind)
    return _view(service, who, a, message, kind)


def _keep(message: str, kind: str = "error") -> AnnotationView:
    """A message; every other component keeps what it shows (nothing typed is lost)."""
    return AnnotationView(message=notice(message, kind))


def identify(service: AnnotationService, request: gr.Request | None, profile: Any = None) -> Identity | None:
    username = getattr(request, "username", None) if request is not None else None
    oauth_name = getattr(profile, "username", None) if profile is not None else None
    return service.identify(username, oauth_name)


# --------------------------------------------------------------------------- handlers


def open_annotation(
    service: AnnotationService, request: gr.Request, profile: gr.OAuthProfile | None = None
) -> AnnotationView:
    """On page load (and after signing in): who is here, their progress and their next item."""
    try:
        who = identify(service, request, profile)
        if who is None:
            return _blank(service, None, _sign_in_help(service), "warn")
        return _next(service, who)
    except (StoreError, UsersError) as exc:
        return _blank(service, None, f"标注库出错 The annotation store failed: {exc}", "error")
    except Exception:
        logger.exception("annotation: open failed")
        return _blank(service, None, "出错了 Something went wrong; see the server log.", "error")


def _scores(values: Sequence[Any]) -> list[float | None]:
    out = []
    for v in values:
        if v is None or v == "":
            out.append(None)
            continue
        x = float(v)
        if not 0 <= x <= 10:
            raise ValueError(f"分数必须在 0–10 之间 Scores must be 0–10 (got {v})")
        out.append(x)
    return out


def submit_label(
    service: AnnotationService,
    verdict_shown: str,
    state: dict | None,
    left_hall: list[str] | None,
    right_hall: list[str] | None,
    left_rel: float | None,
    left_tlc: float | None,
    right_rel: float | None,
    right_tlc: float | None,
    comment: str | None,
    request: gr.Request,
    profile: gr.OAuthProfile | None = None,
) -> AnnotationView:
    """Save the label of the item in ``state`` with ``verdict_shown`` (left/right/tie/both_bad), then go on."""
    try:
        who = identify(service, request, profile)
        if who is None:
            return _keep(_sign_in_help(service), "warn")
        item_id = (state or {}).get("item_id")
        if not item_id:
            return _keep("没有正在标注的条目 No item is open; reload the page.", "warn")
        a = service.store.assignment(who.name, item_id)
        left_side, right_side = _sides(a)
        ticked = {"left": list(left_hall or []), "right": list(right_hall or [])}
        answers = {}
        rel_l, tlc_l, rel_r, tlc_r = _scores([left_rel, left_tlc, right_rel, right_tlc])
        for shown, side, rel, tlc in (("left", left_side, rel_l, tlc_l), ("right", right_side, rel_r, tlc_r)):
            keys = [s.key for s in service.statutes(item_id, side)]
            unknown = [t for t in ticked[shown] if t not in keys]
            if unknown:
                return _keep(
                    f"没有保存 Not saved: 这些法条不在该回答中 Not cited by this answer: {', '.join(map(str, unknown))[:300]}"
                )
            answers[shown] = AnswerLabel({k: k in ticked[shown] for k in keys}, rel, tlc)
        comment = (comment or "").strip()
        if len(comment) > MAX_COMMENT_CHARS:
            return _keep(
                f"没有保存 Not saved: 备注太长 the comment is over {MAX_COMMENT_CHARS} characters ({len(comment)})."
            )
        shown_at = float((state or {}).get("shown_at") or time.time())
        label = LabelInput(
            verdict_shown,
            left=answers["left"],
            right=answers["right"],
            comment=comment,
            guideline_version=service.guideline_version,
            seconds_spent=round(max(0.0, time.time() - shown_at), 1),
        )
        saved = service.store.save_label(
            who.name, item_id, label, str(state.get("submission_id") or uuid.uuid4().hex)
        )
    except StoreWriteError as exc:  # the disk refused: the message says so in both languages
        logger.error("annotation: a label was not saved: %s", exc.__cause__)
        return _keep(str(exc))
    except (StoreError, ValueError) as exc:
        return _keep(f"没有保存 Not saved: {exc}")
    except Exception:
        logger.exception("annotation: saving a label failed")
        return _keep("没有保存，出错了 Not saved: something went wrong; see the server log.")
    if saved.duplicate:
        note = "已保存（重复提交已忽略）Saved (the repeated click was ignored)."
    elif not saved.changed:
        note = "已保存，没有改动 Saved; nothing changed."
    else:
        note = f"已保存 Saved ({SHOWN_NAMES[verdict_shown]}, version {saved.version})."
    return _next(service, who, note, "info")


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
            return _keep(_sign_in_help(service), "warn")
        item_id = (state or {}).get("item_id")
        if item_id and not (state or {}).get("editing"):
            service.store.skip(who.name, item_id)
        return _next(service, who, "已跳过 Skipped." if item_id else "")
    except StoreError as exc:
        return _keep(str(exc))


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
            return _keep(_sign_in_help(service), "warn")
        done = service.store.done_items(who.name)
        if not done:
            return _keep("你还没有保存过标注 You have not saved a label yet.", "info")
        current = (state or {}).get("item_id")
        if current in done:
            index = done.index(current)
            if index == 0:
                return _keep("这已经是你的第一条标注 This is your first label.", "info")
            target = done[index - 1]
        else:
            target = done[-1]
        return _view(service, who, service.store.assignment(who.name, target))
    except StoreError as exc:
        return _keep(str(exc))


def next_item(
    service: AnnotationService, request: gr.Request, profile: gr.OAuthProfile | None = None
) -> AnnotationView:
    """Leave the label being edited and go to the next unlabelled item."""
    return open_annotation(service, request, profile)


# --------------------------------------------------------------------------- admin


def _admin(service: AnnotationService, request: gr.Request | None, profile: Any) -> Identity:
    who = identify(service, request, profile)
    if who is None or not who.is_admin:
        raise PermissionError("只有管理员可以这样做 Only an admin can do this.")
    return who


def import_items(
    service: AnnotationService, file: Any, request: gr.Request, profile: gr.OAuthProfile | None = None
) -> tuple[str, Any]:
    """Import comparison items from an uploaded JSONL or CSV file (all or nothing), then assign them."""
    try:
        _admin(service, request, profile)
        path = Path(getattr(file, "name", None) or getattr(file, "path", None) or file or "")
        if not file or not path.is_file():
            return notice("请选择一个 .jsonl 或 .csv 文件 Choose a .jsonl or .csv file.", "warn"), gr.skip()
        if path.suffix.lower() not in (".jsonl", ".csv"):
            return notice(
                f"只接受 .jsonl 或 .csv Only .jsonl or .csv files, not {path.suffix or path.name}.", "error"
            ), gr.skip()
        size = path.stat().st_size
        if size > MAX_IMPORT_BYTES:
            return notice(
                f"文件太大 The file is {size / 1e6:.1f} MB; the limit is {MAX_IMPORT_BYTES / 1e6:.0f} MB. "
                "Split it, or import it with `python -m eval_ui import`.",
                "error",
            ), gr.skip()
        items = read_items(path)
        if len(items) > MAX_IMPORT_ITEMS:
            return notice(
                f"条目太多 {len(items)} items; at most {MAX_IMPORT_ITEMS:,} per import.", "error"
            ), gr.skip()
        n = service.store.import_items(items)
        assigned = service.assign()
        message = f"已导入 Imported {n} items ({assigned} new assignments); the store has {service.store.item_count()}."
        return notice(message, "info"), annotators_table(service)
    except PermissionError as exc:
        return notice(str(exc), "error"), gr.skip()
    except (JSONLError, StoreError, ValueError, UnicodeDecodeError) as exc:
        text = str(exc)
        return notice(
            "没有导入任何条目 Nothing was imported:\n" + (text[:3000] + (" …" if len(text) > 3000 else "")),
            "error",
        ), gr.skip()
    except Exception:
        logger.exception("annotation: import failed")
        return notice(
            "没有导入，出错了 Nothing was imported: something went wrong; see the server log.", "error"
        ), gr.skip()


def export_labels(
    service: AnnotationService,
    fmt: str,
    history: bool,
    request: gr.Request,
    profile: gr.OAuthProfile | None = None,
) -> tuple[str, str | None]:
    """Write every annotator's labels (CSV or JSONL; every version with ``history``) to a file to download."""
    try:
        _admin(service, request, profile)
        fmt = "jsonl" if str(fmt).lower() == "jsonl" else "csv"
        folder = Path(tempfile.mkdtemp(prefix="lawluo-labels-"))
        path = folder / f"labels-{time.strftime('%Y%m%d-%H%M%S')}.{fmt}"
        n = service.store.export(path, fmt, current_only=not history)
        return notice(f"已导出 Exported {n} labels as {fmt.upper()}.", "info"), str(path)
    except PermissionError as exc:
        return notice(str(exc), "error"), None
    except (StoreError, OSError) as exc:
        return notice(f"导出失败 Export failed: {exc}", "error"), None


def annotators_table(service: AnnotationService) -> list[list]:
    return [[a["name"], a["role"], int(a["done"]), int(a["assigned"])] for a in service.store.annotators()]


def list_annotators(
    service: AnnotationService, request: gr.Request, profile: gr.OAuthProfile | None = None
) -> tuple[str, Any]:
    """Every annotator's role and progress (admins only)."""
    try:
        _admin(service, request, profile)
        return "", annotators_table(service)
    except PermissionError as exc:
        return notice(str(exc), "error"), []


def _admin_table_on_load(
    service: AnnotationService, request: gr.Request, profile: gr.OAuthProfile | None = None
) -> list[list]:
    who = identify(service, request, profile)
    return annotators_table(service) if who is not None and who.is_admin else []


# --------------------------------------------------------------------------- layout


def build_annotate_tab(service: AnnotationService, demo: gr.Blocks) -> None:
    """The tab's layout and events (its page-load events on ``demo``); the service is bound to every handler."""
    with gr.Tab(TAB_LABEL, id="annotate"):
        status = gr.Markdown(_sign_in_help(service), elem_id="ann-status")
        if service.sign_in == "oauth":
            gr.LoginButton()
        message = gr.HTML("", css_template=ANNOTATE_CSS, elem_id="ann-message")
        with gr.Accordion(f"标注指南 Guidelines (version {service.guideline_version})", open=False):
            gr.Markdown(service.guidelines, elem_id="ann-guidelines")
        question = gr.HTML("", css_template=ANNOTATE_CSS, elem_id="ann-question")
        with gr.Accordion("参考答案 Reference (if any)", open=False):
            reference = gr.HTML("", css_template=ANNOTATE_CSS, elem_id="ann-reference")
        fields: dict[str, Any] = {}
        with gr.Row(equal_height=False):
            for shown, title in (("left", "左 Left"), ("right", "右 Right")):
                with gr.Column():
                    fields[shown] = gr.HTML("", css_template=ANNOTATE_CSS, elem_id=f"ann-{shown}")
                    fields[f"{shown}_statutes"] = gr.HTML(
                        "", css_template=ANNOTATE_CSS, elem_id=f"ann-{shown}-statutes"
                    )
                    fields[f"{shown}_hall"] = gr.CheckboxGroup(
                        choices=[],
                        label=f"{title}: 勾选幻觉法条 Tick the hallucinated statutes",
                        elem_id=f"ann-{shown}-hall",
                    )
                    with gr.Row():
                        fields[f"{shown}_rel"] = gr.Number(
                            None,
                            label="法条相关性 Rel (0–10)",
                            minimum=0,
                            maximum=10,
                            elem_id=f"ann-{shown}-rel",
                        )
                        fields[f"{shown}_tlc"] = gr.Number(
                            None,
                            label="法律主张真实性 T_LC (0–10)",
                            minimum=0,
                            maximum=10,
                            elem_id=f"ann-{shown}-tlc",
                        )
        comment = gr.Textbox(
            label="备注 Comment (optional)", lines=2, max_length=MAX_COMMENT_CHARS, elem_id="ann-comment"
        )
        keys = " · ".join(f"{v.key} {v.label.strip('⬅➡ ').split()[0]}" for v in verdicts.VERDICT_TABLE)
        gr.HTML(f'<div class="ann-note">快捷键 Keys: {keys} (Tab + Enter works too)</div>',
                css_template=ANNOTATE_CSS, js_on_load=KEYS_JS)  # fmt: skip
        with gr.Row():
            buttons = {
                v: gr.Button(
                    label,
                    variant="primary" if v in ("left", "right") else "secondary",
                    elem_id=f"ann-verdict-{v}",
                )
                for v, label in VERDICT_BUTTONS
            }
        with gr.Row():
            back = gr.Button("上一条 Back (edit)", size="sm", elem_id="ann-back")
            skip = gr.Button("跳过 Skip", size="sm", elem_id="ann-skip")
            forward = gr.Button("下一条未标注 Next unlabelled", size="sm", elem_id="ann-next")
        state = gr.State({})
        with gr.Accordion("管理 Admin", open=False, visible=False, elem_id="ann-admin") as admin:
            admin_message = gr.HTML("", css_template=ANNOTATE_CSS, elem_id="ann-admin-message")
            with gr.Row():
                upload = gr.File(
                    label="导入条目 Import items (.jsonl / .csv)",
                    file_types=[".jsonl", ".csv"],
                    elem_id="ann-import-file",
                )
                with gr.Column():
                    do_import = gr.Button("导入 Import", elem_id="ann-import")
                    fmt = gr.Radio(
                        ["csv", "jsonl"],
                        value="csv",
                        label="导出格式 Export format",
                        elem_id="ann-export-format",
                    )
                    history = gr.Checkbox(
                        False, label="含历史版本 Include earlier versions", elem_id="ann-export-history"
                    )
                    do_export = gr.Button("导出标注 Export labels", elem_id="ann-export")
            exported = gr.File(label="导出的文件 Exported file", interactive=False, elem_id="ann-exported")
            table = gr.Dataframe(
                headers=["annotator", "role", "done", "assigned"], interactive=False, elem_id="ann-annotators"
            )
            refresh = gr.Button("刷新 Refresh", size="sm")

    views = dict(
        status=status, message=message, question=question, reference=reference, comment=comment, state=state,
        admin=admin, **fields,
    )  # fmt: skip
    outputs = [views[name] for name in VIEW_FIELDS]
    form = [
        state,
        *(fields[k] for k in ("left_hall", "right_hall", "left_rel", "left_tlc", "right_rel", "right_tlc")),
        comment,
    ]
    once = {"trigger_mode": "once", "concurrency_id": "annotation"}
    settled = {"js": SETTLED_JS, "queue": False, "api_visibility": "private"}  # in the browser only
    # every event that shows an item ends in the browser's grace period (SETTLED_JS)
    shows_item = [(b, bind(submit_label, service, v), form, f"label_{v}") for v, b in buttons.items()]
    shows_item += [
        (back, bind(go_back, service), [state], "annotation_back"),
        (skip, bind(skip_item, service), [state], "annotation_skip"),
        (forward, bind(next_item, service), None, "annotation_next"),
    ]
    for button, handler, inputs, api_name in shows_item:
        button.click(handler, inputs, outputs, api_name=api_name, **once).then(None, **settled)
    do_import.click(bind(import_items, service), [upload], [admin_message, table], api_name="import_items")
    do_export.click(
        bind(export_labels, service), [fmt, history], [admin_message, exported], api_name="export_labels"
    )
    refresh.click(bind(list_annotators, service), None, [admin_message, table], api_name="annotators")
    demo.load(bind(open_annotation, service), None, outputs, api_name="annotation_open").then(None, **settled)
    demo.load(bind(_admin_table_on_load, service), None, table, api_visibility="private")
