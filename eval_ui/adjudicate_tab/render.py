"""The adjudication tab's HTML: a verdict or a statute label in words, what the annotators disagree on,
their labels side by side, the statute labels they agree on, and an exception's words (all escaped)."""

from collections.abc import Mapping
from typing import Any

from lawluo.i18n import Message
from lawluo.ui.i18n import Html, say
from lawluo.ui.render import data, esc, without_paths

from .. import human_scores, verdicts
from ..annotate_tab import ANNOTATE_CSS, notice_html, say_notice
from ..service import AnnotationService

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


def only_admin() -> str:
    """The message a caller who is not an admin reads."""
    return say_notice("adjudicate.only_admin", "error")


def store_failed(exc: BaseException) -> str:
    """The message when the store failed (its words: :func:`say_error`)."""
    return notice_html(say_error("adjudicate.store_failed", exc), "error")


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
    """A score as the table shows it (— when none was given)."""
    return "—" if value is None else f"{float(value):g}"


def _scores(answer: Mapping[str, Any]) -> str:
    """An answer's human scores (:data:`~eval_ui.human_scores.HUMAN_SCORE_TABLE`) as the table shows them.

    >>> _scores({"rel": 7, "tlc": None})
    '7 / —'
    """
    return " / ".join(_score(answer.get(key)) for key in human_scores.keys())


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
    scores = human_scores.names()  # Rel / T_LC
    parts = [
        f'<div class="adj-reasons">{say("adjudicate.disagreement", reasons=Html(reasons_html(item)))}</div>',
        f'<div class="ann-head">{say("adjudicate.question", item_id=Html(data(item["item_id"])))}</div>',
        f'<div class="ann-text">{data(item["question"])}</div>',
        f'<table class="adj-table"><tr><th>{say("adjudicate.col.annotator")}</th>'
        f"<th>{say('adjudicate.col.verdict')}</th>"
        f"<th>{say('adjudicate.col.scores', side='A', names=scores)}</th>"
        f"<th>{say('adjudicate.col.scores', side='B', names=scores)}</th>"
        f"<th>{say('adjudicate.col.comment')}</th></tr>",
    ]
    verdict_set = {label["verdict"] for label in labels}
    for label in labels:
        a, b = (label["answer_labels"].get(s) or {} for s in SIDES)
        differs = ' class="adj-differs"' if len(verdict_set) > 1 else ""
        parts.append(
            f"<tr{differs}><td>{data(label['annotator'])}</td><td>{verdict_name(label['verdict'], item)}</td>"
            f"<td>{_scores(a)}</td><td>{_scores(b)}</td>"
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


def choice(item: Mapping[str, Any]) -> tuple[str, str]:
    """An item of the drop-down: adjudicated or not (a mark, no words: a choice is one string, shown in
    either language), the question's start (Chinese, the data's language) and the item id."""
    mark = "✓" if item.get("adjudication") else "•"
    question = " ".join(str(item["question"]).split())
    return f"{mark} {question[:36]}{'…' if len(question) > 36 else ''} · {item['item_id'][:60]}", item[
        "item_id"
    ]
