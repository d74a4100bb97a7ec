"""The annotation tab's HTML and Markdown: message boxes, the status line, text blocks of the data, and an
exception's words (escaped; data in an element of its language)."""

import re
from typing import Any

from lawluo.i18n import Message, message
from lawluo.ui.i18n import Html, say
from lawluo.ui.render import data, data_lang, esc, notice, without_paths

from ..service import AnnotationService, Identity
from .identity import sign_in_help


def md_data(value: object) -> Html:
    """:func:`data` inside Markdown (the status line): Markdown's punctuation backslashed too."""
    return Html(f'<span lang="{data_lang(value)}">{md_text(value)}</span>')


def notice_html(html_text: str, kind: str = "info") -> str:
    """A message box around HTML already escaped (:func:`~lawluo.ui.i18n.say`'s output); ``kind`` is
    ``info``, ``warn`` or ``error``."""
    return notice(Html(html_text), kind)


def error_text(exc: BaseException) -> Message | str:
    """What an exception says, for a field of :func:`say`: its ``message`` (a :class:`Message`) when it
    has one, else its text without the server's paths."""
    found = getattr(exc, "message", None)
    return found if isinstance(found, Message) else without_paths(str(exc))


def error_field(exc: BaseException) -> Message | Html:
    """:func:`error_text` as a field: a message, or the exception's own text in an element of its
    language (a technical text is not translated)."""
    found = error_text(exc)
    return found if isinstance(found, Message) else data(found)


def join_messages(*parts: str) -> Html:
    """Messages (:func:`say`'s HTML) side by side."""
    return Html(" ".join(p for p in parts if p))


def text_block(title: str, text: str) -> str:
    """A heading (HTML: :func:`say`) over a text from the data (the question, an answer), which keeps its
    language on either page."""
    return (
        f'<div class="ann-head">{title}</div><div class="ann-text" lang="{data_lang(text)}">{esc(text)}</div>'
    )


def say_md(msg: Message) -> Html:
    """A message for a Markdown value (the status line): its text fields shown as they are."""
    return say(msg.key, **{k: md_data(v) if isinstance(v, str) else v for k, v in msg.fields.items()})


def status_line(who: Identity | None, service: AnnotationService) -> str:
    """The status line (Markdown): who is signed in, their role and progress; or how to sign in."""
    if who is None:
        return say_md(sign_in_help(service))
    done, assigned = service.store.progress(who.name)
    role = message("annotate.role.admin" if who.is_admin else "annotate.role.annotator")
    return say("annotate.status", name=md_data(who.name), role=role, done=done, assigned=assigned)


def md_text(value: object) -> str:
    r"""``value`` as literal text inside Markdown: Markdown's punctuation backslashed and HTML escaped,
    so a name like ``![x](//host/p.png)`` is shown, not fetched as an image (CommonMark §2.4).

    >>> print(md_text("![x](//evil/p.png) <b>"))
    \!\[x\]\(//evil/p\.png\) &lt;b&gt;
    """
    return esc(_MD_PUNCTUATION.sub(r"\\\g<0>", "" if value is None else str(value)))


_MD_PUNCTUATION = re.compile(r"[\\`*_{}\[\]()#+\-.!|~]")  # `<>&"'` are escaped as HTML


def say_notice(key: str | Message, kind: str = "info", **fields: Any) -> str:
    """``say(key, **fields)`` in a message box."""
    return notice_html(say(key, **fields), kind)


def store_failed(exc: BaseException) -> Html:
    """The message when the store failed, with its words (:func:`error_field`)."""
    return say("annotate.store_failed", error=error_field(exc))


def draft_note(text: str, kind: str = "") -> str:
    """The line under the comment about the draft (``text``: HTML, :func:`say`; ``over``: red)."""
    return f'<div class="ann-count {kind}" id="ann-draft-text">{text}</div>' if text else ""
