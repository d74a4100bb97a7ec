"""Ask a model for JSON matching a schema, parse it tolerantly, validate it, retry once, or fail clearly.

Models wrap JSON in Markdown fences, add prose before or after it, write Chinese quotation marks or
full-width punctuation as JSON syntax, leave trailing commas and put raw line breaks inside strings.
:func:`parse_json` undoes exactly those habits and nothing cleverer; :func:`chat_json` validates the
result with pydantic against the caller's schema, sends one corrective turn quoting the error, and
then raises :class:`~lawluo.llm.errors.StructuredOutputError` carrying the raw answer.

The schema also goes to the backend (``json_schema=``), which may have the server constrain the answer to
it (``response_format``, see :mod:`lawluo.llm.openai_backend`). An answer cut at ``max_tokens``
(:func:`~lawluo.llm.answer.cut_at`) is not "invalid JSON": if a complete value still starts the answer
it is used, else :class:`~lawluo.llm.errors.AnswerCut` says "cut at max_tokens=N" with the call's N —
without the corrective retry, which would be cut the same way (its prompt is longer, its limit the same).

    class Element(BaseModel):
        question: str
        children: list[Element] = []

    elements = chat_json(models["clarifier"], messages, list[Element])
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from pydantic import TypeAdapter, ValidationError

from lawluo import prompts

from .answer import cut_at
from .errors import AnswerCut, StructuredOutputError

Message = Mapping[str, str]


class JSONChatter(Protocol):
    """What :func:`chat_json` needs of a backend (every :class:`~lawluo.llm.base.ChatBackend` is one)."""

    role: str

    def chat(self, messages: Sequence[Message], **overrides: Any) -> str: ...

    def describe(self) -> str: ...


FENCE = re.compile(r"```[ \t]*(?:json|JSON)?[ \t]*\n?(.*?)```", re.S)
OPEN_QUOTES, CLOSE_QUOTES = "“„‟", "”"
FULL_WIDTH = {"：": ":", "，": ",", "｛": "{", "｝": "}", "［": "[", "］": "]"}
TRAILING_COMMA = re.compile(r",(\s*[}\]])")


class JSONParseError(ValueError):
    """No JSON value could be recovered from a model's answer."""


def parse_json(text: str, salvage: bool = True) -> Any:
    """The JSON value in ``text``, tolerating fences, surrounding prose and Chinese quotes.

    ``salvage=False`` only accepts the value that starts first (not a later one inside a broken value:
    for an answer that was cut off).

    >>> parse_json('好的，结果如下：```json\\n{“a”：1，}\\n```')
    {'a': 1}
    """
    if not isinstance(text, str) or not text.strip():
        raise JSONParseError("the answer is empty")
    candidates = [m.group(1) for m in FENCE.finditer(text)] + [text]
    first_error: json.JSONDecodeError | None = None
    # The value that starts first wins, repaired if need be; a later-starting one ("见[1]" in prose
    # before the object) is the last resort.
    for candidate in candidates:
        attempts = ((candidate, True), (_normalise(candidate), True), (candidate, False))
        for attempt, earliest_only in attempts if salvage else attempts[:2]:
            try:
                return _first_value(attempt, earliest_only)
            except json.JSONDecodeError as exc:
                first_error = first_error or exc
            except LookupError:
                break
    if first_error is None:
        raise JSONParseError("the answer contains no JSON object or array")
    raise JSONParseError(
        f"invalid JSON ({first_error.msg} at line {first_error.lineno} column {first_error.colno})"
    )


def chat_json(
    backend: JSONChatter, messages: Sequence[Message], schema: Any, *, retries: int = 1, **overrides: Any
) -> Any:
    """The model's answer to ``messages`` as a value of ``schema`` (a pydantic model or any type
    pydantic can validate, e.g. ``list[Element]``); one corrective retry, then StructuredOutputError.
    """
    adapter = TypeAdapter(schema)
    json_schema = adapter.json_schema()
    schema_text = json.dumps(json_schema, ensure_ascii=False)
    name = getattr(schema, "__name__", str(schema))
    conversation = [dict(m) for m in messages]
    if not conversation or conversation[-1].get("role") != "user":
        raise ValueError("chat_json needs the conversation to end with a user message")
    conversation[-1]["content"] += prompts.render("structured/json_instructions", schema=schema_text)
    answer, problem = "", ""
    for attempt in range(retries + 1):
        answer = backend.chat(conversation, json=True, json_schema=json_schema, **overrides)
        limit = cut_at(answer)
        try:
            return adapter.validate_python(parse_json(answer, salvage=limit is None))
        except JSONParseError as exc:
            problem = str(exc)
        except ValidationError as exc:
            problem = _describe_validation(exc)
        if limit is not None:
            raise _cut(backend, name, answer, limit if limit > 0 else overrides.get("max_tokens"))
        if attempt < retries:
            retry = prompts.render("structured/json_retry", error=problem, schema=schema_text)
            conversation += [{"role": "assistant", "content": answer}, {"role": "user", "content": retry}]
    raise StructuredOutputError(
        f"{backend.describe()} did not return valid JSON for {name} after {retries + 1} attempt(s): {problem}",
        raw=answer,
    )


def _cut(backend: JSONChatter, name: str, answer: str, max_tokens: int | None) -> AnswerCut:
    limit = f"max_tokens={max_tokens}" if max_tokens else "max_tokens"
    return AnswerCut(
        f"{backend.describe()} stopped before its JSON for {name} was complete: the answer was cut at "
        f"{limit} ({len(answer)} characters). Raise `max_tokens` for the {backend.role} role; not retried "
        "(a second answer would be cut the same way).",
        raw=answer,
        max_tokens=max_tokens,
    )


def _first_value(text: str, earliest_only: bool) -> Any:
    """The JSON object/array starting at the first ``{`` or ``[`` of ``text`` (or, unless
    ``earliest_only``, at the next one); prose after it is ignored. LookupError if none starts."""
    starts = sorted(i for i in (text.find("{"), text.find("[")) if i >= 0)
    if not starts:
        raise LookupError
    decoder = json.JSONDecoder(strict=False)  # strict=False: raw newlines inside strings are accepted
    error = None
    for start in starts[:1] if earliest_only else starts:
        try:
            return decoder.raw_decode(text, start)[0]
        except json.JSONDecodeError as exc:
            error = error or exc
    raise error


def _normalise(text: str) -> str:
    """JSON syntax written with Chinese punctuation → ASCII, outside of ASCII-quoted strings only.

    A string opened by “ is closed by ”; full-width ：，｛｝［］ become ASCII between strings; trailing
    commas before } or ] are dropped. Text inside ordinary "…" strings is left exactly as it was.
    """
    out, i, n = [], 0, len(text)
    while i < n:
        ch = text[i]
        if ch == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i : j + 1])
            i = j + 1
        elif ch in OPEN_QUOTES:
            j = text.find(CLOSE_QUOTES, i + 1)
            j = n if j < 0 else j
            out.append(json.dumps(text[i + 1 : j], ensure_ascii=False))
            i = j + 1
        else:
            out.append(FULL_WIDTH.get(ch, ch))
            i += 1
    return TRAILING_COMMA.sub(r"\1", "".join(out))


def _describe_validation(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors()[:5]:
        where = ".".join(str(p) for p in error["loc"]) or "(top level)"
        parts.append(f"{where}: {error['msg']}")
    more = f" (+{exc.error_count() - 5} more)" if exc.error_count() > 5 else ""
    return "; ".join(parts) + more
