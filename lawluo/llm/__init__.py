"""Language models behind one interface: chat messages in; text, a stream of text, or validated JSON out.

    from lawluo.config import Settings, load_settings
    from lawluo.llm import LanguageModels

    models = LanguageModels(load_settings().models)
    lawyer = models["lawyer"]
    if lawyer.available:
        print(lawyer.chat([{"role": "user", "content": "试用期可以不交社保吗？"}]))
    else:
        print(lawyer.unavailable_reason())     # says exactly what to set

Backends (:mod:`.registry`): ``openai`` (any OpenAI-compatible server), ``anthropic`` (Anthropic's Messages
API; both on the shared plumbing of :mod:`.http`), ``transformers`` (a local model,
optional LoRA adapter and 4/8-bit quantisation), ``reward_model`` (the boss's scorer, not a chat model)
and ``none``. Importing this package imports neither openai nor torch; a backend's library is imported
when a role using it is created.
"""

from __future__ import annotations

from .answer import ChatAnswer, ChatStream, Finish, cut_at
from .base import GENERATION_KEYS, ChatBackend, validate_messages
from .budget import BudgetExceeded, Deadline
from .cancel import Cancelled, CancelToken
from .errors import (
    AnswerCut,
    AuthenticationFailed,
    LLMConnectionError,
    LLMError,
    LLMTimeout,
    MalformedResponse,
    ModelUnavailable,
    RateLimited,
    RequestRejected,
    ServerError,
    StreamInterrupted,
    StructuredOutputError,
)
from .models import LanguageModels, RoleStatus
from .parallel import gather
from .registry import BACKENDS, create_backend

__all__ = [
    "BACKENDS",
    "GENERATION_KEYS",
    "AnswerCut",
    "AuthenticationFailed",
    "BudgetExceeded",
    "CancelToken",
    "Cancelled",
    "ChatAnswer",
    "ChatBackend",
    "ChatStream",
    "Deadline",
    "Finish",
    "LLMConnectionError",
    "LLMError",
    "LLMTimeout",
    "LanguageModels",
    "MalformedResponse",
    "ModelUnavailable",
    "RateLimited",
    "RequestRejected",
    "RoleStatus",
    "ServerError",
    "StreamInterrupted",
    "StructuredOutputError",
    "create_backend",
    "cut_at",
    "gather",
    "validate_messages",
]
