"""Typed errors of the language-model layer. Every message is written for the person running LawLuo:
it says what went wrong and what to change, never only an HTTP status or a Python traceback.

``retryable`` marks the errors worth a second attempt (rate limits, 5xx, dropped connections,
timeouts, a garbled response body); the backends over HTTP (:mod:`.http`) retry exactly those, with backoff.
"""

from __future__ import annotations


class LLMError(Exception):
    """Base class: ``str(error)`` is a message a user can act on."""

    retryable = False


class ModelUnavailable(LLMError):
    """No model is configured for a role, or the configured one cannot be loaded on this machine."""


class RateLimited(LLMError):
    """HTTP 429: the server asks us to slow down."""

    retryable = True


class ServerError(LLMError):
    """HTTP 5xx from the model server."""

    retryable = True


class LLMConnectionError(LLMError):
    """The server could not be reached, or dropped the connection before answering."""

    retryable = True


class LLMTimeout(LLMError):
    """No (complete) answer within the configured timeout."""

    retryable = True


class MalformedResponse(LLMError):
    """The server answered with something that is not its API's response (an OpenAI chat completion, an
    Anthropic message or its events)."""

    retryable = True


class AuthenticationFailed(LLMError):
    """HTTP 401/403: the API key is missing, wrong or not allowed to use this model."""


class RequestRejected(LLMError):
    """HTTP 400/404/422: the server refused the request (unknown model, prompt too long, bad option)."""


class StreamInterrupted(LLMError):
    """A streamed answer broke off midway; ``partial`` holds the text received before the break."""

    def __init__(self, message: str, partial: str = "") -> None:
        super().__init__(message)
        self.partial = partial


class StructuredOutputError(LLMError):
    """The model did not produce JSON matching the requested schema, even after one corrective retry.

    ``raw`` is the model's last answer, so nothing the model said is lost.
    """

    def __init__(self, message: str, raw: str = "") -> None:
        super().__init__(message)
        self.raw = raw


class AnswerCut(StructuredOutputError):
    """The model's JSON answer stopped at ``max_tokens`` before it was complete (``finish_reason: length``).

    Not "invalid JSON": the model may have been writing it correctly. ``max_tokens`` is the limit of the
    call that was cut (a call may ask for fewer tokens than the role's setting); ``raw`` the text so far.
    """

    def __init__(self, message: str, raw: str = "", max_tokens: int | None = None) -> None:
        super().__init__(message, raw)
        self.max_tokens = max_tokens
