"""What the store raises (:class:`StoreError` and its kinds) and how it quotes a value in a message."""

from __future__ import annotations

from lawluo.i18n import Message


class StoreError(ValueError):
    """A request the store refuses (bad label, unknown annotator, duplicate item…); the message says why.

    One an annotator may read on the page also has ``message``, a :class:`~lawluo.i18n.Message` the page
    renders in the reader's language (``str(exc)`` stays the text for the logs); None for the others."""

    def __init__(self, *args: object, message: Message | None = None) -> None:
        super().__init__(*args)
        self.message = message


class SchemaError(StoreError):
    """The file's schema cannot be used by this code (written by a newer version, or not a store)."""


class StoreWriteError(StoreError):
    """The disk refused a write (full, read-only, locked too long): nothing was saved; the message says so.

    The message is for the annotator as it is (``message``: in the reader's language on the page; ``str``:
    Chinese); the SQLite error is the ``__cause__``.
    """


def short_name(value: object, limit: int = 40) -> str:
    """``value`` quoted for a message: cut to ``limit`` characters, control and invisible characters
    escaped (``repr``), so a hostile name can neither flood nor garble what is shown.

    >>> print(short_name("a\\x00b"), short_name("x" * 50, limit=5))
    'a\\x00b' 'xxxxx'…
    """
    text = value if isinstance(value, str) else str(value)
    return repr(text[:limit]) + ("…" if len(text) > limit else "")
