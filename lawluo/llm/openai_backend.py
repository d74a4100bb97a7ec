"""The ``openai`` backend: the official ``openai`` SDK against any OpenAI-compatible server.

One client per backend (created on first use, shared by all threads: the SDK's httpx pool is
thread-safe). The SDK's own retries are switched off (``max_retries=0``) and done here instead, so that
every failure becomes one typed :mod:`~lawluo.llm.errors` error with a message naming the role's model
server (never its URL, which may be internal: the message may reach a visitor; the URL is logged), the model
and the setting to change, and so that the backoff is an option (tests use milliseconds):

- retried, with exponential backoff and jitter (or the server's ``retry-after``/``retry-after-ms``):
  429, 5xx, connection errors, timeouts, malformed response bodies;
- not retried: 400/401/403/404/422 — repeating them cannot help;
- a stream is retried only before its first piece; once text has reached the caller a break raises
  :class:`~lawluo.llm.errors.StreamInterrupted` carrying the partial text.

Works with OpenAI, DeepSeek (``https://api.deepseek.com/v1``), Qwen on DashScope
(``https://dashscope.aliyuncs.com/compatible-mode/v1``), vLLM (``vllm serve … --enable-lora``) and
Ollama (``http://localhost:11434/v1``).
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import openai

from . import budget
from .base import ChatBackend
from .errors import (
    AuthenticationFailed,
    LLMConnectionError,
    LLMError,
    LLMTimeout,
    MalformedResponse,
    RateLimited,
    RequestRejected,
    ServerError,
    StreamInterrupted,
)
from .options import OpenAIOptions

logger = logging.getLogger(__name__)

DEFAULT_BASE_URL = "https://api.openai.com/v1"
MAX_BACKOFF_S = 30.0
MAX_SERVER_WAIT_S = 60.0
PLACEHOLDER_KEY = "EMPTY"  # vLLM's convention for servers started without --api-key


class OpenAIBackend(ChatBackend):
    name = "openai"
    options: OpenAIOptions

    def __init__(self, options: OpenAIOptions, role: str = "model", api_key: str | None = None) -> None:
        super().__init__(options, role, api_key)
        self._client: openai.OpenAI | None = None

    @property
    def base_url(self) -> str:
        return (self.options.base_url or DEFAULT_BASE_URL).rstrip("/")

    def describe(self) -> str:
        """``openai · <model>``: no server address (visitors see it; see :meth:`ChatBackend.describe`)."""
        return f"openai · {self.options.model}"

    def log_name(self) -> str:
        return f"{self.describe()} @ {self.base_url}"

    def unavailable_reason(self) -> str | None:
        if self.options.api_key_required and not self._api_key:
            return (
                f"The {self.role} role uses {self.options.model}, but the environment "
                f"variable {self.options.api_key_env} is not set. Export it (on a Hugging Face Space: "
                "Settings → Variables and secrets), or set api_key_required: false for a local server "
                "that accepts any key."
            )
        return None

    @property
    def client(self) -> openai.OpenAI:
        if self._client is None:  # a race here creates two clients, one is dropped: harmless
            self._client = openai.OpenAI(
                api_key=self._api_key or PLACEHOLDER_KEY,
                base_url=self.base_url,
                timeout=self.options.timeout,
                max_retries=0,
            )
        return self._client

    # -- requests -----------------------------------------------------------------------------
    def _request(self, messages: list[dict[str, str]], gen: dict[str, Any], stream: bool) -> dict[str, Any]:
        o = self.options
        request: dict[str, Any] = {
            "model": o.model,
            "messages": messages,
            "temperature": gen.get("temperature", o.temperature),
            "max_tokens": gen.get("max_tokens", o.max_tokens),
            "stream": stream,
        }
        for key in ("top_p", "stop", "seed"):
            value = gen.get(key, getattr(o, key, None))
            if value is not None:
                request[key] = value
        if gen.get("json") and o.json_mode:
            request["response_format"] = {"type": "json_object"}
        if o.extra_body:
            request["extra_body"] = dict(o.extra_body)
        return request

    def _chat(self, messages: list[dict[str, str]], gen: dict[str, Any]) -> str:
        request = self._request(messages, gen, stream=False)
        attempt = 0
        while True:
            try:
                timeout = budget.request_timeout(self.options.timeout)
                response = self.client.chat.completions.create(**request, timeout=timeout)
                return self._content(response)
            except Exception as exc:  # noqa: BLE001 — every failure is translated into a typed error
                error = budget.explain(self._translate(exc))
                if not self._should_retry(error, attempt, exc):
                    raise error from exc
                attempt += 1

    def _stream(self, messages: list[dict[str, str]], gen: dict[str, Any]) -> Iterator[str]:
        request = self._request(messages, gen, stream=True)
        attempt, received = 0, []
        while True:
            stream = None
            try:
                timeout = budget.request_timeout(self.options.timeout)
                stream = self.client.chat.completions.create(**request, timeout=timeout)
                for chunk in stream:
                    piece = _delta(chunk)
                    if piece:
                        received.append(piece)
                        yield piece
                return
            except GeneratorExit:
                raise
            except Exception as exc:  # noqa: BLE001
                error = budget.explain(self._translate(exc))
                if received:
                    raise StreamInterrupted(
                        f"The answer from {self.describe()} broke off after {len(''.join(received))} "
                        f"characters ({error}). The partial answer is kept; ask again to retry.",
                        partial="".join(received),
                    ) from exc
                if not self._should_retry(error, attempt, exc):
                    raise error from exc
                attempt += 1
            finally:
                if stream is not None:
                    stream.close()

    # -- errors and retries -------------------------------------------------------------------
    def _should_retry(self, error: LLMError, attempt: int, exc: BaseException) -> bool:
        if not error.retryable or attempt >= self.options.max_retries:
            return False
        delay = _server_wait(exc)
        if delay is None:
            delay = min(MAX_BACKOFF_S, self.options.backoff * 2**attempt) * random.uniform(0.75, 1.25)
        if not budget.can_wait(delay):  # the step's time budget has no room for another attempt
            return False
        logger.warning(
            "%s: %s; retry %d/%d in %.2f s",
            self.describe(),
            type(error).__name__,
            attempt + 1,
            self.options.max_retries,
            delay,
        )
        time.sleep(delay)
        return True

    def _content(self, response: Any) -> str:
        try:
            choice = response.choices[0]
            content = choice.message.content
        except (AttributeError, IndexError, TypeError):
            raise MalformedResponse(
                f"{self.describe()} answered with something that is not a chat completion "
                f"({type(response).__name__}). Is base_url an OpenAI-compatible /v1 endpoint?"
            ) from None
        if getattr(choice, "finish_reason", None) == "length":
            logger.warning("%s: answer cut at max_tokens=%s", self.describe(), self.options.max_tokens)
        return content or ""

    def _translate(self, exc: BaseException) -> LLMError:
        """One typed error, with a message saying what to change, for anything the SDK raised.

        The message may reach a visitor (a turn's note, the trace, the report), so it names "the lawyer
        role's model server" and never the server's address, which is logged here for the operator instead
        (also cut out of the server's own error text, should that repeat it).
        """
        if isinstance(exc, LLMError):
            return exc
        o = self.options
        detail = _detail(exc)
        logger.warning("%s role, %s: %s: %s", self.role, self.log_name(), type(exc).__name__, detail)
        fields = {
            "where": self.describe(),
            "role": self.role,
            "model": o.model,
            "timeout": o.timeout,
            "key_env": o.api_key_env,
            "detail": self._hide_server(detail),
            "status": getattr(exc, "status_code", ""),
        }
        for exc_types, error, message in TRANSLATIONS:
            if isinstance(exc, exc_types):
                return error(message.format(**fields))
        return LLMError("{where}: unexpected {kind}: {detail}".format(kind=type(exc).__name__, **fields))

    def _hide_server(self, text: str) -> str:
        """``text`` with the server's URL, ``host:port`` and (a dotted) host name replaced by ``<server>``."""
        url = urlsplit(self.base_url)
        host = url.hostname or ""
        for part in (self.base_url, url.netloc, host if "." in host else ""):
            if part:
                text = text.replace(part, "<server>")
        return text


# The SDK's exceptions → LawLuo's typed errors, first match wins (subclasses before their bases).
TRANSLATIONS: tuple[tuple[type | tuple[type, ...], type[LLMError], str], ...] = (
    (
        openai.APITimeoutError,
        LLMTimeout,
        "{where} did not answer within {timeout:g} s. Raise `timeout` for the {role} role, or check the "
        "server's load.",
    ),
    (
        openai.APIConnectionError,
        LLMConnectionError,
        "Cannot reach the {role} role's model server ({detail}). Check its base_url and that the server is "
        "running and reachable from this machine (the server log names the URL).",
    ),
    (
        openai.RateLimitError,
        RateLimited,
        "{where} is rate-limiting requests (429: {detail}). Lower `concurrency` for the {role} role, or wait "
        "and try again.",
    ),
    (
        (openai.AuthenticationError, openai.PermissionDeniedError),
        AuthenticationFailed,
        "{where} rejected the API key from {key_env} ({status}: {detail}). Check the key and that it may use "
        "{model}.",
    ),
    (
        openai.NotFoundError,
        RequestRejected,
        "The {role} role's model server has no model {model!r} (404: {detail}). Check `model` (for vLLM: a "
        "served model or LoRA name listed by /v1/models) and base_url.",
    ),
    (
        openai.InternalServerError,
        ServerError,
        "{where} failed with {status} ({detail}). The server may be overloaded or restarting; try again later.",
    ),
    (
        openai.APIStatusError,
        RequestRejected,
        "{where} refused the request ({status}: {detail}). The prompt may be too long for the model, or an "
        "option unsupported by this server.",
    ),
    (
        (openai.APIResponseValidationError, ValueError),
        MalformedResponse,
        "{where} sent a response that is not valid OpenAI JSON ({detail}). Is base_url an OpenAI-compatible "
        "/v1 endpoint?",
    ),
    (openai.APIError, ServerError, "{where} reported an error: {detail}"),
)


def _delta(chunk: Any) -> str:
    choices = getattr(chunk, "choices", None)
    if not choices:
        return ""
    delta = getattr(choices[0], "delta", None)
    return (getattr(delta, "content", None) or "") if delta is not None else ""


def _detail(exc: BaseException) -> str:
    """The server's own error message when it sent one, else the exception text (and its cause)."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        error = body["error"] if isinstance(body.get("error"), dict) else body
        if error.get("message"):
            return str(error["message"])[:300]
    text = str(exc) or type(exc).__name__
    cause = exc.__cause__ or exc.__context__
    if isinstance(exc, openai.APIConnectionError) and cause is not None and str(cause):
        text = f"{text}: {cause}"
    return text[:300]


def _server_wait(exc: BaseException) -> float | None:
    """Seconds the server asked us to wait (``retry-after-ms`` or ``retry-after``), if it said and it is sane."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if not headers:
        return None
    try:
        if "retry-after-ms" in headers:
            wait = float(headers["retry-after-ms"]) / 1000
        elif "retry-after" in headers:
            wait = float(headers["retry-after"])
        else:
            return None
    except ValueError:
        return None
    return wait if 0 <= wait <= MAX_SERVER_WAIT_S else None
