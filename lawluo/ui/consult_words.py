"""The consultation tab's words in the visitor's language: message boxes, domain names, the firm's notes on a
turn (kept as Chinese text, said in both languages), and the checker's verdict labels. Pure functions; nothing
here imports Gradio."""

from __future__ import annotations

from collections.abc import Mapping

from ..agents.answer_check import HELD_TAIL, NO_ANSWER_TAIL
from ..domains import Domains
from ..i18n import Message, catalogue, text
from ..law.verdicts import BY_CODE
from .i18n import Html, both, say
from .render import (
    esc,
    without_paths,
    zh,
)


def notice(message: str | Html | Message, kind: str = "info") -> str:
    """A message box, like :func:`lawluo.ui.render.notice`, for a message in both languages: an
    :class:`~lawluo.ui.i18n.Html` (already built with :func:`say`) is kept as it is, a
    :class:`~lawluo.i18n.Message` is said, and any other text is escaped, its paths cut, and marked Chinese
    (a message of the library that has no key yet)."""
    kind = kind if kind in ("info", "warn", "error") else "info"
    if isinstance(message, Message):
        message = say(message)
    elif not isinstance(message, Html):
        message = zh(without_paths(str(message)))
    return f'<div class="ll-notice {kind}" role="status">{message}</div>'


def domain_name(domains: Domains, domain_id: str | None, name: str | None = None) -> Html:
    """A domain's name on the page: the catalogue's (``consult.domain.<id>``, both languages) for a domain
    the app ships, else its name from the domain table, marked Chinese."""
    key = f"consult.domain.{domain_id}"
    if domain_id and key in catalogue():
        return say(key)
    if name is None and domain_id and domain_id in domains:
        name = domains[domain_id].name
    return zh(name or domain_id or "")


def domain_field(domains: Domains, domain_id: str | None) -> Message | str:
    """A domain's name as a field of a message: the catalogue's :class:`~lawluo.i18n.Message` for a domain the
    app ships (each language its own name), else the table's name (Chinese data, see :func:`say_chinese`)."""
    key = f"consult.domain.{domain_id}"
    if domain_id and key in catalogue():
        return Message(key)
    return domains[domain_id].name if domain_id in domains else str(domain_id or "")


def say_chinese(key: str, chinese: Mapping[str, object], **fields: object) -> Html:
    """:func:`~lawluo.ui.i18n.say` with ``chinese`` fields: Chinese data (a title, a name, a question) shown
    as it is on the Chinese page and marked ``lang="zh-CN"`` on the English one. Other fields as ``say``
    takes them (a :class:`~lawluo.i18n.Message` said in each language, :class:`Html` kept, the rest escaped)."""

    def build(lang: str) -> str:
        filled = {}
        for name, value in fields.items():
            if isinstance(value, Message):
                value = value.text(lang)
            filled[name] = value if isinstance(value, Html) else esc(value)
        for name, value in chinese.items():
            if isinstance(value, Message):
                filled[name] = esc(value.text(lang))
            else:
                filled[name] = esc(value) if lang == "zh" else zh(value)
        return text(key, lang, **filled)

    return both(build)


def domain_choice(domain) -> object:
    """A domain's name in the domain menu: the catalogue key (Gradio translates it), or its name."""
    key = f"consult.domain.{domain.id}"
    if key in catalogue():
        from .i18n import t  # the page's translations (Gradio)

        return t(key)
    return domain.name


def note_html(note: str) -> Html:
    """A note of the firm on a turn, or why a step stopped (kept as Chinese text: in the consultation, in a
    cancelled call's reason): in both languages when it is one of the catalogue's (:func:`known_note`), else
    as written, marked Chinese."""
    found = known_note(note)
    if found is not None:
        return say(found)
    return held_note(note) or zh(note)


def held_note(note: str) -> Html | None:
    """A held-back answer's note (:meth:`~lawluo.agents.answer_check.Held.message`: the Chinese reason and what
    is shown instead, then the same in English), each language in its own element; None for another note."""
    for tail in (HELD_TAIL, NO_ANSWER_TAIL):
        at = note.find(tail[0])
        if at < 0:
            continue
        said = {"zh": note[: at + len(tail[0])], "en": note[at + len(tail[0]) :].strip()}
        if not said["en"]:  # a reason written for the visitor in Chinese only (a spent allowance)
            return zh(note)
        return both(lambda lang, said=said: esc(said[lang]))
    return None


#: The firm's notes on a lawyer's turn, and the reasons a step stops, that the page says in the visitor's
#: language (their Chinese text is what the consultation and the cancelled calls keep).
NOTES = (
    "consult.note.stopped",
    "consult.note.broke_off",
    "consult.stop.page_left",
    "consult.stop.started_over",
    "consult.report_notice.no_model",
    "consult.report_notice.failed",
)


#: The notes as consultations saved before the catalogue kept them (both languages in one text).
LEGACY_NOTES = {
    "回答已停止：没有人在等待这个回答了（页面已关闭或开始了新的咨询）。The answer was stopped.": "consult.note.stopped",
    "律师模型的回答中断了，以上是已写出的部分，可以点击“重新生成”再试。The answer broke off.": "consult.note.broke_off",
}


def known_note(note: str) -> Message | None:
    """The :class:`~lawluo.i18n.Message` whose Chinese text ``note`` is (one of :data:`NOTES`, a step's time
    budget spent, an answer stopped for one of those reasons), or None."""
    for key in NOTES:
        if note == text(key):
            return Message(key)
    if note in LEGACY_NOTES:
        return Message(LEGACY_NOTES[note])
    for key, name in (("consult.stop.budget", "seconds"), ("consult.note.cancelled", "reason")):
        head, _, tail = text(key, **{name: "\0"}).partition("\0")
        if note.startswith(head) and note.endswith(tail) and len(note) > len(head) + len(tail):
            inner = note[len(head) : len(note) - len(tail)]
            if key == "consult.stop.budget":
                return Message(key, {name: inner})
            reason = known_note(inner)
            return Message(key, {name: reason}) if reason is not None else None
    return None


def verdict_label(code: str) -> Html:
    """A verdict's label in both languages (the statute tab's catalogue), or its Chinese label."""
    key = f"statute.verdict.{code}"
    if key in catalogue():
        return say(key)
    row = BY_CODE.get(code)
    return zh(row.label_zh if row else code)
