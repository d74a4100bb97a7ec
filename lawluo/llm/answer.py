"""How a model's answer ended, told to the caller beside the text: was it cut at ``max_tokens``?

A backend that knows (the ``openai`` backend reads the server's ``finish_reason``) returns a
:class:`ChatAnswer` from :meth:`~lawluo.llm.base.ChatBackend.chat` — a ``str``, so every caller keeps
working — and its :meth:`~lawluo.llm.base.ChatBackend.stream` returns a :class:`ChatStream` whose
``finish`` is set once the stream is exhausted. :func:`cut_at` reads either::

    answer = lawyer.chat(messages, max_tokens=32)
    if cut_at(answer) is not None:      # 32: the call's own limit, not the configured one
        ...                             # label the answer as cut

    pieces = lawyer.stream(messages)
    text = "".join(pieces)
    cut_at(pieces)                      # None until the stream is exhausted

A plain ``str`` (a backend that does not know, a cached answer) is never reported as cut.
Reference: OpenAI API reference, "Chat", ``choices[].finish_reason`` ("stop", "length", …).
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Finish:
    """Why generation stopped (``reason``: the server's ``finish_reason``) and the call's ``max_tokens``."""

    reason: str | None
    max_tokens: int | None = None

    @property
    def cut(self) -> bool:
        """Whether the answer stopped at ``max_tokens`` rather than where the model ended it."""
        return self.reason == "length"

    def describe(self) -> str:
        """``"cut at max_tokens=32"`` for a cut answer, else ``""``.

        >>> Finish("length", 32).describe(), Finish("stop", 32).describe()
        ('cut at max_tokens=32', '')
        """
        if not self.cut:
            return ""
        return f"cut at max_tokens={self.max_tokens}" if self.max_tokens else "cut at max_tokens"


class ChatAnswer(str):
    """A ``str`` that also carries how the answer ended (``finish``; ``None`` when unknown).

    >>> answer = ChatAnswer("依据《劳动合同法》第", Finish("length", 8))
    >>> answer == "依据《劳动合同法》第", cut_at(answer)
    (True, 8)
    """

    finish: Finish | None

    def __new__(cls, text: str, finish: Finish | None = None) -> ChatAnswer:
        answer = super().__new__(cls, text)
        answer.finish = finish
        return answer

    def __reduce__(self) -> tuple[Any, ...]:  # copy/deepcopy/pickle keep the finish
        return (ChatAnswer, (str(self), self.finish))

    @property
    def cut_at_max_tokens(self) -> int | None:
        """:func:`cut_at` of this answer (what :func:`reported_cut` reads)."""
        return cut_at(self)


class ChatStream(Iterator[str]):
    """The pieces of a streamed answer; ``finish`` is set when the backend's stream ends normally.

    Wraps a generator that yields the pieces and *returns* a :class:`Finish` (or ``None``).
    ``close()`` stops it early (the backend closes its connection).
    """

    def __init__(self, pieces: Generator[str, None, Finish | None]) -> None:
        self._pieces = pieces
        self.finish: Finish | None = None

    def __iter__(self) -> ChatStream:
        return self

    def __next__(self) -> str:
        try:
            return next(self._pieces)
        except StopIteration as stop:
            if isinstance(stop.value, Finish):
                self.finish = stop.value
            raise StopIteration(self.finish) from None  # ``yield from`` a ChatStream gets the finish too

    def close(self) -> None:
        self._pieces.close()

    @property
    def cut_at_max_tokens(self) -> int | None:
        """:func:`cut_at` of this stream (``None`` until it is exhausted)."""
        return cut_at(self)


def cut_at(result: object) -> int | None:
    """The ``max_tokens`` a :class:`ChatAnswer` or an exhausted :class:`ChatStream` was cut at, else ``None``
    (``-1`` when it was cut at a limit the backend did not say).

    >>> cut_at(ChatAnswer("x", Finish("length", 32))), cut_at(ChatAnswer("x", Finish("stop", 32))), cut_at("x")
    (32, None, None)
    """
    finish = getattr(result, "finish", None)
    if not isinstance(finish, Finish) or not finish.cut:
        return None
    return finish.max_tokens or -1


def reported_cut(result: object) -> int | None:
    """The ``max_tokens`` an answer was cut at, as the backend reported it on what it returned (a string,
    a stream, an error), else ``None``.

    **Hook** for the language-model layer: a backend that knows its answer stopped at ``max_tokens``
    (``finish_reason == "length"``) sets ``cut_at_max_tokens`` (an int: the call's limit, ``-1`` when not
    known) on the object it returns or raises: :class:`ChatAnswer` and an exhausted
    :class:`ChatStream` do. This is the one place the firm asks, so a change of that API
    changes only this.
    """
    value = getattr(result, "cut_at_max_tokens", None)
    return value if isinstance(value, int) and not isinstance(value, bool) else None
