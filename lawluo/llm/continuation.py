"""An answer that stops at ``max_tokens`` is asked to finish, instead of being cut (issue 41 item 4).

A small model told how long to write still overruns now and then; an answer cut mid-sentence is useless to a
client and, rightly, held back. Here the model is given its own text back as the assistant's turn and asked,
in one more user turn (``follow_up``: the prompt ``lawyer/finish``), to finish it briefly without repeating
itself — at most ``times`` times. The pieces of every call are one answer; how the *last* call ended is the
answer's ``finish``, so an answer still cut after its continuations is reported cut, as before::

    pieces = stream_to_the_end(model, messages, "请接着写完。", times=1)
    text = "".join(pieces)
    cut_at(pieces)      # None when the continuation ended the answer; its max_tokens when it was cut again

The same for a whole answer (:func:`chat_to_the_end`). An answer with no text, one that ended by itself, or
one the caller's ``worth`` says is not worth finishing (the lawyer: one that is going round in circles,
:func:`~lawluo.agents.answer_check.repeated_share`) costs no further call. (llama.cpp's server and hosted APIs
alike accept an assistant turn followed by a user turn; a trailing assistant "prefill" is not portable across
OpenAI-compatible servers, so it is not used.)
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence

from .answer import ChatAnswer, ChatStream, Finish
from .base import ChatBackend, Message


def follow_up_messages(messages: Sequence[Message], text: str, follow_up: str) -> list[Message]:
    """``messages``, then the answer so far as the assistant's turn and ``follow_up`` as the user's."""
    return [*messages, {"role": "assistant", "content": text}, {"role": "user", "content": follow_up}]


def anything(text: str) -> bool:
    """The default ``worth``: every cut answer is worth finishing."""
    return True


def needs_more(
    finish: Finish | None, text: str, asked: int, times: int, worth: Callable[[str], bool] = anything
) -> bool:
    """Whether an answer ``text`` that ended with ``finish`` after ``asked`` continuations gets another one:
    it was cut, has text, has had fewer than ``times`` and is ``worth`` it.

    >>> needs_more(Finish("length", 300), "依据", 0, 1), needs_more(Finish("length", 300), "依据", 1, 1)
    (True, False)
    >>> needs_more(Finish("stop", 300), "依据", 0, 1), needs_more(Finish("length", 300), "  ", 0, 1)
    (False, False)
    >>> needs_more(Finish("length", 300), "依据", 0, 1, worth=lambda text: False)
    False
    """
    return finish is not None and finish.cut and asked < times and bool(text.strip()) and worth(text)


def chat_to_the_end(
    model: ChatBackend,
    messages: Sequence[Message],
    follow_up: str,
    times: int = 1,
    worth: Callable[[str], bool] = anything,
) -> str:
    """The model's whole answer to ``messages``, continued up to ``times`` times while it is cut at
    ``max_tokens`` (a :class:`ChatAnswer` whose ``finish`` is the last call's; a plain ``str`` from a backend
    that does not say how its answer ended, which is never continued)."""
    answer = model.chat(messages)
    asked = 0
    while needs_more(getattr(answer, "finish", None), answer, asked, times, worth):
        asked += 1
        more = model.chat(follow_up_messages(messages, answer, follow_up))
        answer = ChatAnswer(str(answer) + str(more), getattr(more, "finish", None))
    return answer


def stream_to_the_end(
    model: ChatBackend,
    messages: Sequence[Message],
    follow_up: str,
    times: int = 1,
    worth: Callable[[str], bool] = anything,
) -> ChatStream:
    """The model's answer to ``messages`` piece by piece, continued up to ``times`` times while it is cut at
    ``max_tokens``; once exhausted its ``finish`` is the last call's. Closing it closes the call in flight."""

    def pieces() -> Generator[str, None, Finish | None]:
        written: list[str] = []
        asked = 0
        current = model.stream(messages)
        while True:
            try:
                for piece in current:
                    written.append(piece)
                    yield piece
            finally:
                current.close()
            text = "".join(written)
            if not needs_more(current.finish, text, asked, times, worth):
                return current.finish
            asked += 1
            current = model.stream(follow_up_messages(messages, text, follow_up))

    return ChatStream(pieces())


__all__ = ["chat_to_the_end", "follow_up_messages", "needs_more", "stream_to_the_end"]
