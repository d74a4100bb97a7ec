"""A chat backend that answers from a script, in process: for tests of code that uses a model
(structured output, ToLC, agents) where the HTTP path is not the point. The HTTP path is tested with
:mod:`tests.fakes.openai_server`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from lawluo.llm.base import ChatBackend


@dataclass(frozen=True)
class ScriptedOptions:
    concurrency: int = 8


class ScriptedBackend(ChatBackend):
    """Answers with ``replies`` in order (an Exception in the script is raised), then with ``responder``."""

    name = "scripted"

    def __init__(
        self,
        *replies: str | Exception,
        responder: Callable[[list[dict]], str] | None = None,
        concurrency: int = 8,
    ) -> None:
        super().__init__(ScriptedOptions(concurrency), role="test")
        self.replies = list(replies)
        self.responder = responder
        self.calls: list[tuple[list[dict], dict[str, Any]]] = []
        self._lock = threading.Lock()

    def describe(self) -> str:
        return "scripted test model"

    def _next(self, messages: list[dict], gen: dict[str, Any]) -> str:
        with self._lock:
            self.calls.append((messages, gen))
            reply = self.replies.pop(0) if self.replies else None
        if reply is None:
            if self.responder is None:
                raise AssertionError("the script ran out of replies")
            reply = self.responder(messages)
        if isinstance(reply, Exception):
            raise reply
        return reply

    def _chat(self, messages: list[dict], gen: dict[str, Any]) -> str:
        return self._next(messages, gen)

    def _stream(self, messages: list[dict], gen: dict[str, Any]) -> Iterator[str]:
        reply = self._next(messages, gen)  # a ChatAnswer in the script: streamed, then its finish returned
        yield from reply
        return getattr(reply, "finish", None)
