"""The configured model of every role, created once per app from the settings.

Roles with identical settings share one backend instance, so that two roles on the same local model
load it once and two roles on the same server share one connection pool and one concurrency limit.
Creating :class:`LanguageModels` contacts nothing and loads nothing; ``status()`` says, without a
request, which roles can be used and why the others cannot.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Protocol

from .base import ChatBackend
from .registry import create_backend


class RoleModel(Protocol):
    """What a role's model setting gives (``lawluo.config.RoleConfig`` is one)."""

    backend: str
    options: object
    api_key: str | None


class ModelsTable(Protocol):
    """The role → model settings (``lawluo.config.ModelsConfig`` is one); the settings sit above this layer."""

    def items(self) -> Iterable[tuple[str, RoleModel]]: ...


@dataclass(frozen=True)
class RoleStatus:
    role: str
    backend: str
    description: str
    available: bool
    reason: str | None


class LanguageModels:
    """``models["lawyer"]`` → the lawyer's :class:`ChatBackend`; ``models.status()`` → one row per role."""

    def __init__(self, config: ModelsTable, factory: Callable[..., ChatBackend] = create_backend) -> None:
        shared: dict[tuple[str, str, str | None], ChatBackend] = {}
        self._backends: dict[str, ChatBackend] = {}
        for role, role_config in config.items():
            if role_config.backend == "none":  # each role explains its own missing model
                self._backends[role] = factory("none", role_config.options, role)
                continue
            key = (role_config.backend, repr(role_config.options), role_config.api_key)
            if key not in shared:
                shared[key] = factory(role_config.backend, role_config.options, role, role_config.api_key)
            self._backends[role] = shared[key]

    def __getitem__(self, role: str) -> ChatBackend:
        try:
            return self._backends[role]
        except KeyError:
            raise KeyError(f"no role {role!r}; roles: {', '.join(self._backends)}") from None

    def available(self, role: str) -> bool:
        return self[role].available

    def status(self) -> list[RoleStatus]:
        return [
            RoleStatus(role, backend.name, backend.describe(), reason is None, reason)
            for role, backend in self._backends.items()
            for reason in [backend.unavailable_reason()]
        ]
