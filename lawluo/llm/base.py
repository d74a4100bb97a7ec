"""The one interface every chat backend implements: messages in, text out, plus streaming and JSON.

A backend is created from its options (a dataclass in the backend's module, validated when the
settings load) and the role it serves. Subclasses implement :meth:`ChatBackend._chat` and
:meth:`ChatBackend._stream`; this base class adds what every backend needs the same way:

- message validation (a list of ``{"role": "system"|"user"|"assistant", "content": str}``);
- per-call generation overrides, restricted to :data:`GENERATION_KEYS`;
- a concurrency limit (a semaphore of ``concurrency`` slots) shared by every caller of the backend,
  held for the whole call and, for a stream, until the stream is exhausted or closed; inside a time
  budget (:mod:`.budget`) a call waits for a slot only until the deadline, then raises
  :class:`~.budget.BudgetExceeded` instead of queueing behind a hung model;
- cancellation (:mod:`.cancel`): a call whose watched token is cancelled stops waiting for a slot, and
  a stream stops between two pieces (closing the backend's stream) with :class:`~.cancel.Cancelled`;
- :meth:`chat_json`, the structured-output helper of :mod:`lawluo.llm.structured`.

Reference: the decoder registry of alpaca_eval (one file per backend, one fake for the tests).
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Generator, Iterator, Mapping, Sequence
from typing import Any, ClassVar

from . import budget, cancel
from .answer import ChatStream, Finish
from .errors import ModelUnavailable
from .structured import chat_json

Message = Mapping[str, str]
ROLES_OF_MESSAGES = ("system", "user", "assistant")
# Per-call overrides. ``json`` (bool) tells a backend that the caller wants JSON, and ``json_schema`` (a
# JSON Schema dict, from :func:`~lawluo.llm.structured.chat_json`) which; a backend that cannot enforce
# them (or is not configured to) ignores them.
CANCEL_POLL_S = 0.1  # how often a call waiting for a slot looks at its cancel token
PING_TIMEOUT_S = 10.0  # the longest a ping (``models --ping``) waits for a model server
GENERATION_KEYS = frozenset({"temperature", "max_tokens", "top_p", "stop", "seed", "json", "json_schema"})


def validate_messages(messages: Sequence[Message]) -> list[dict[str, str]]:
    """A clean copy of ``messages``, or ``ValueError`` naming the first bad one."""
    if isinstance(messages, str | bytes) or not isinstance(messages, Sequence) or not messages:
        raise ValueError("messages must be a non-empty list of {'role': …, 'content': …} dicts")
    clean = []
    for i, message in enumerate(messages):
        if not isinstance(message, Mapping):
            raise ValueError(f"message {i} is a {type(message).__name__}, not a dict")
        role, content = message.get("role"), message.get("content")
        if role not in ROLES_OF_MESSAGES:
            raise ValueError(f"message {i}: role {role!r} is not one of {', '.join(ROLES_OF_MESSAGES)}")
        if not isinstance(content, str):
            raise ValueError(f"message {i}: content must be a string, not {type(content).__name__}")
        clean.append({"role": role, "content": content})
    return clean


def check_overrides(overrides: Mapping[str, Any]) -> dict[str, Any]:
    unknown = set(overrides) - GENERATION_KEYS
    if unknown:
        raise TypeError(
            f"unknown generation option(s) {', '.join(sorted(unknown))}; "
            f"valid: {', '.join(sorted(GENERATION_KEYS))}"
        )
    return {key: value for key, value in overrides.items() if value is not None}


class ChatBackend(ABC):
    """A configured model for one or more roles. Thread-safe; cheap to create (loads lazily)."""

    name: ClassVar[str]

    def __init__(self, options: Any, role: str = "model", api_key: str | None = None) -> None:
        self.options = options
        self.role = role
        self._api_key = api_key  # resolved from the environment by the settings; never logged
        self._slots = threading.BoundedSemaphore(self.concurrency)
        self._sent = 0  # calls that got a slot, i.e. were sent to the model (``sent``)
        self._sent_lock = threading.Lock()

    # -- what a caller uses -------------------------------------------------------------------
    @property
    def available(self) -> bool:
        return self.unavailable_reason() is None

    def unavailable_reason(self) -> str | None:
        """Why calls would fail before any request is made (missing key, no model), else ``None``."""
        return None

    def describe(self) -> str:
        """One line a visitor may see (the UI, reports, error messages), e.g. ``openai · deepseek-chat``.

        Never a server's address: an internal URL (``http://10.0.0.5:8000/v1``) is no business of a visitor.
        """
        return self.name

    def setup_notes(self) -> dict[str, str]:
        """What this backend chose for its server, for ``python -m lawluo models --ping`` (e.g.
        ``{"system_message": "merge (llama.cpp server: its chat format drops system messages)"}``).
        May contact the server; ``{}`` when there is nothing to say."""
        return {}

    def ping(self, timeout: float = PING_TIMEOUT_S) -> None:
        """One one-token request, to see whether the model answers; raises the call's :class:`LLMError`.

        Made inside a time budget of ``timeout`` seconds that allows no retry (:class:`~.budget.Deadline`
        with ``retries=False``), so a server that is down fails at once and a hung one within ``timeout``.
        ``python -m lawluo models --ping`` calls it once per distinct backend. A local backend loads its
        model first, which the budget does not cut short.
        """
        with budget.Deadline.after(timeout, "the ping", retries=False).active():
            self.chat([{"role": "user", "content": "ping"}], max_tokens=1)

    def log_name(self) -> str:
        """:meth:`describe` plus where the model is served (a server's URL): for server logs, the CLI and
        cache keys, never for visitors."""
        return self.describe()

    @property
    def sent(self) -> int:
        """Calls sent to the model so far (each chat or stream that got a slot; retries not counted apart),
        for a batch's calls per second."""
        return self._sent

    @property
    def concurrency(self) -> int:
        return max(1, int(getattr(self.options, "concurrency", 1)))

    def chat(self, messages: Sequence[Message], **overrides: Any) -> str:
        """The model's whole answer to ``messages`` (a :class:`~.answer.ChatAnswer` where the backend knows
        whether it was cut at ``max_tokens``: see :func:`~.answer.cut_at`)."""
        clean, gen = validate_messages(messages), check_overrides(overrides)
        self._raise_if_unavailable()
        self._take_slot()
        try:
            answer = self._chat(clean, gen)
        finally:
            self._slots.release()
        cancel.check()  # nobody waits for it any more: do not hand it on as if they did
        return answer

    def stream(self, messages: Sequence[Message], **overrides: Any) -> ChatStream:
        """The answer as it is generated, piece by piece; close the iterator to stop early. Once exhausted,
        its ``finish`` says whether it was cut at ``max_tokens`` (:func:`~.answer.cut_at`)."""
        clean, gen = validate_messages(messages), check_overrides(overrides)
        self._raise_if_unavailable()
        return ChatStream(self._stream_with_slot(clean, gen))

    def chat_json(self, messages: Sequence[Message], schema: Any, **overrides: Any) -> Any:
        """The answer parsed as JSON and validated against ``schema`` (see :mod:`.structured`)."""
        return chat_json(self, messages, schema, **overrides)

    # -- what a backend implements ------------------------------------------------------------
    @abstractmethod
    def _chat(self, messages: list[dict[str, str]], gen: dict[str, Any]) -> str: ...

    @abstractmethod
    def _stream(self, messages: list[dict[str, str]], gen: dict[str, Any]) -> Iterator[str]:
        """The pieces; a generator may ``return`` a :class:`~.answer.Finish` (how the answer ended)."""

    # -- internals ----------------------------------------------------------------------------
    def _raise_if_unavailable(self) -> None:
        reason = self.unavailable_reason()
        if reason is not None:
            raise ModelUnavailable(reason)

    def _take_slot(self) -> None:
        """One of the backend's slots; within a time budget, waiting no longer than the budget allows."""
        budget.spend_call()  # the visitor's allowance of model calls, if the step has one
        cancel.check()
        wait = budget.slot_wait()
        if not self._acquire(wait):
            cancel.check()
            deadline = budget.current()
            raise budget.BudgetExceeded(
                f"All {self.concurrency} request slots of the {self.role} model stayed busy for "
                f"{deadline.seconds if deadline else wait:g} s (other visitors' requests); try again in a moment."
            )
        with self._sent_lock:
            self._sent += 1

    def _acquire(self, wait: float | None) -> bool:
        """A slot within ``wait`` seconds (``None``: however long it takes), giving up on cancellation."""
        token = cancel.current()
        if token is None:
            return self._slots.acquire(timeout=wait)
        waited = 0.0
        while wait is None or waited < wait:
            step = CANCEL_POLL_S if wait is None else min(CANCEL_POLL_S, wait - waited)
            if self._slots.acquire(timeout=step):
                return True
            token.check()
            waited += step
        return self._slots.acquire(blocking=False)

    def _stream_with_slot(
        self, messages: list[dict[str, str]], gen: dict[str, Any]
    ) -> Generator[str, None, Finish | None]:
        self._take_slot()
        try:
            pieces = iter(self._stream(messages, gen))
            try:
                while True:
                    try:
                        piece = next(pieces)
                    except StopIteration as stop:
                        return stop.value if isinstance(stop.value, Finish) else None
                    cancel.check()  # closes ``pieces`` (the finally below): the server stops generating
                    yield piece
            finally:
                close = getattr(pieces, "close", None)
                if close is not None:
                    close()
        finally:
            self._slots.release()
