"""The registry of chat backends: a name in the settings → its options dataclass and its class.

Unknown names fail when the settings load, with the list below; so does a backend named for a role it
does not serve (``reward_model`` scores answers and is for the boss only, see :func:`backends_for`). A
backend class is imported only when a role uses it, so a no-model start never imports openai, torch or
transformers.

To add a backend: write ``lawluo/llm/<name>_backend.py`` with a :class:`~lawluo.llm.base.ChatBackend`
subclass (for a provider over HTTP, a :class:`~lawluo.llm.http.HttpChatBackend`, which brings retries, time
limits, the stream watchdog and typed errors: ``anthropic_backend.py`` is the example), add its options to
:mod:`lawluo.llm.options`, and add one :class:`BackendSpec` here.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .options import AnthropicOptions, NoModelOptions, OpenAIOptions, RewardModelOptions, TransformersOptions

if TYPE_CHECKING:
    from .base import ChatBackend


@dataclass(frozen=True)
class BackendSpec:
    name: str
    options: type
    target: str  # "module:Class", imported on first use
    summary: str
    roles: tuple[str, ...] | None = None  # the roles that may use it; None: every role

    def load_class(self) -> type[ChatBackend]:
        module, _, cls = self.target.partition(":")
        return getattr(importlib.import_module(module), cls)


BACKENDS: dict[str, BackendSpec] = {
    spec.name: spec
    for spec in (
        BackendSpec(
            "none", NoModelOptions, "lawluo.llm.no_model:NoModel", "no model: calls explain what to set"
        ),
        BackendSpec(
            "openai",
            OpenAIOptions,
            "lawluo.llm.openai_backend:OpenAIBackend",
            "any OpenAI-compatible server: OpenAI, DeepSeek, Qwen/DashScope, vLLM, Ollama",
        ),
        BackendSpec(
            "transformers",
            TransformersOptions,
            "lawluo.llm.transformers_backend:TransformersBackend",
            "a local causal LM (+ optional PEFT adapter, 4/8-bit with bitsandbytes on CUDA)",
        ),
        BackendSpec(
            "reward_model",
            RewardModelOptions,
            "lawluo.llm.reward_backend:RewardModelBackend",
            "a local reward model (sequence classifier, one output) that scores answers; cannot chat",
            roles=("boss",),
        ),
        # last: the lists of valid names in error messages keep their beginning
        BackendSpec(
            "anthropic",
            AnthropicOptions,
            "lawluo.llm.anthropic_backend:AnthropicBackend",
            "Anthropic's Messages API (Claude), key from ANTHROPIC_API_KEY",
        ),
    )
}


def backends_for(role: str) -> list[str]:
    """The names of the backends ``role`` may use, in registry order."""
    return [name for name, spec in BACKENDS.items() if spec.roles is None or role in spec.roles]


def create_backend(backend: str, options: object, role: str, api_key: str | None = None) -> ChatBackend:
    """An instance of the named backend for ``role``; nothing is loaded or contacted yet."""
    return BACKENDS[backend].load_class()(options, role=role, api_key=api_key)
