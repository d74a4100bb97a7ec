"""One settings object for the whole app: a YAML file plus environment overrides, validated at start-up.

    settings = load_settings("configs/hosted-openai.yaml")   # or $LAWLUO_CONFIG, or all defaults
    settings.models.lawyer.backend                          # "openai"

See :mod:`lawluo.config.loading` for the file format and the environment variables.
"""

from __future__ import annotations

from .loading import ENV_TOP_LEVEL, describe_settings, load_settings
from .settings import PROJECT_ROOT, ROLE_HELP, ROLES, ConfigError, ModelsConfig, RoleConfig, Settings

__all__ = [
    "ENV_TOP_LEVEL",
    "PROJECT_ROOT",
    "ROLES",
    "ROLE_HELP",
    "ConfigError",
    "ModelsConfig",
    "RoleConfig",
    "Settings",
    "describe_settings",
    "load_settings",
]
