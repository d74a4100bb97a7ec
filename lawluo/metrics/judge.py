"""The judge as the metrics use it: one prompt template in, a validated JSON value (or text) out.

Every judge metric renders a template from ``lawluo/prompts/metrics/`` with the untrusted texts
quoted (:mod:`lawluo.prompts.untrusted`) and cut to a budget, asks the judge role's model at
temperature 0 (so that a repeated call is the same call, and the on-disk cache of
:mod:`.cache` can answer it), and validates JSON with :func:`lawluo.llm.structured.chat_json`, which
sends one corrective turn before giving up with :class:`~lawluo.llm.errors.StructuredOutputError`.

Errors are per item, never per run: a metric records the error message of a failed item and goes on
(:class:`Outcome`), except for errors that would fail every item the same way (no model, a rejected
API key), which stop the metric at once (:data:`FATAL`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from lawluo import prompts
from lawluo.llm import AuthenticationFailed, ChatBackend, LLMError, ModelUnavailable
from lawluo.prompts.untrusted import clip, quote

from .cache import JudgeCache

QUESTION_BUDGET = 2_000  # characters of a question the judge reads
ANSWER_BUDGET = 6_000  # characters of an answer
STATUTES_BUDGET = 4_000  # characters of reference statutes
REFERENCE_BUDGET = 3_000  # characters of a reference answer
FATAL = (ModelUnavailable, AuthenticationFailed)

T = TypeVar("T")


def untrusted(text: str, budget: int, what: str) -> str:
    """``text`` cut to ``budget`` characters and quoted for a judge prompt."""
    clipped, note = clip(text or "", budget, what, "The judge")
    return quote(clipped, note)


@dataclass
class Judge:
    """The judge role's backend with the settings every judge call shares."""

    backend: ChatBackend
    temperature: float | None = 0.0

    @property
    def available(self) -> bool:
        return self.backend.available

    def unavailable_reason(self) -> str | None:
        return self.backend.unavailable_reason()

    @property
    def cache(self) -> JudgeCache | None:
        """The on-disk cache in front of the model, if there is one."""
        return getattr(self.backend, "cache", None)

    def tally(self) -> str:
        """Calls sent so far and the cache's hits, for a progress bar: ``"12 calls, cache 30 hits"``."""
        calls = f"{self.backend.sent} calls"
        return f"{calls}, cache {self.cache.hits} hits" if self.cache is not None else calls

    def ask(self, name: str, as_type: Any = None, **fields: object) -> Any:
        """Judge ``name``'s answer (a folder of ``lawluo/prompts``: ``prompt.txt`` + ``judge.yaml``) as a
        value of the schema its ``judge.yaml`` names, or of ``as_type`` (a narrower one made for this call)."""
        schema = as_type if as_type is not None else prompts.judge(name).schema_type()
        messages = [{"role": "user", "content": prompts.render(name, **fields)}]
        return self.backend.chat_json(messages, schema, temperature=self.temperature)

    def chat(self, messages: list[dict[str, str]]) -> str:
        return self.backend.chat(messages, temperature=self.temperature)


@dataclass
class Outcome:
    """What one judged item produced: a value, or the error that stopped it."""

    value: Any = None
    error: str | None = None


def attempt(call: Callable[[], T]) -> Outcome:
    """Run ``call``; a model error becomes the outcome's ``error``; :data:`FATAL` errors propagate."""
    try:
        return Outcome(call())
    except FATAL:
        raise
    except LLMError as exc:
        return Outcome(None, f"{type(exc).__name__}: {exc}")
