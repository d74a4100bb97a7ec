"""The ``none`` backend: the ordinary state of a role nobody has configured.

Every call raises :class:`~lawluo.llm.errors.ModelUnavailable` with the settings to change; the app
asks :attr:`ChatBackend.available` first and degrades (see DESIGN.md, "Backends and modes").
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .base import ChatBackend

HOW_TO_CONFIGURE = (
    "Choose a config with --config or LAWLUO_CONFIG (examples in configs/), or set "
    "LAWLUO_{ROLE}_BACKEND=openai, LAWLUO_{ROLE}_MODEL=<model> and OPENAI_API_KEY "
    "(plus OPENAI_BASE_URL for DeepSeek, Qwen or a vLLM server). See README, 'Language models'."
)


class NoModel(ChatBackend):
    name = "none"

    def unavailable_reason(self) -> str:
        how = HOW_TO_CONFIGURE.replace("{ROLE}", self.role.upper())
        return f"No language model is configured for the {self.role} role. {how}"

    def describe(self) -> str:
        return "none (no model configured)"

    def _chat(self, messages: list[dict[str, str]], gen: dict[str, Any]) -> str:  # pragma: no cover
        raise AssertionError("unreachable: ChatBackend checks availability first")

    def _stream(
        self, messages: list[dict[str, str]], gen: dict[str, Any]
    ) -> Iterator[str]:  # pragma: no cover
        raise AssertionError("unreachable: ChatBackend checks availability first")
