"""``lawluo models``: the model each role uses, whether it answers (``--ping``); ``models local``."""

from __future__ import annotations

import argparse

from ..config import Settings
from .common import UsageError, emit


def add_parser(subparsers) -> None:
    """Register ``models [local]``, its options and :func:`run`."""
    models = subparsers.add_parser("models", help="show the model each role uses and whether it can be used")
    models.add_argument(
        "action",
        nargs="?",
        choices=["local"],
        help="local: build llama.cpp's llama-server once and serve a pinned small GGUF (docs/models.md)",
    )
    models.add_argument(
        "--ping",
        action="store_true",
        help="send one one-token request to each distinct usable backend, all at once, without retries",
    )
    models.add_argument(
        "--ping-timeout",
        type=float,
        default=10.0,
        help="seconds a ping waits for a model server (default 10)",
    )
    from ..llm.local_server import add_arguments as local_model_arguments

    local_model_arguments(models)
    models.set_defaults(func=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    """One row per role; with ``--ping`` each distinct backend (roles with the same backend, options and
    key share one) is pinged once, all at once, without retries, and its ``setup_notes()`` shown."""
    from functools import partial

    from ..llm import LanguageModels, gather

    if args.action == "local":  # build, assemble and serve the local model (lawluo/llm/local_server.py)
        from ..llm.local_server import LocalModelError, command, local_root

        try:
            return command(args, local_root(settings), emit)
        except LocalModelError as exc:
            raise UsageError(str(exc)) from None
    if not 0 < args.ping_timeout <= 600:
        raise UsageError(
            "--ping-timeout 须在 0–600 秒之间 (--ping-timeout must be between 0 and 600 seconds)"
        )
    models = LanguageModels(settings.models)
    statuses = models.status()
    probes: dict[int, dict] = {}
    if args.ping:
        backends = {id(models[s.role]): models[s.role] for s in statuses if s.available}
        results = gather([partial(_ping, backend, args.ping_timeout) for backend in backends.values()])
        probes = dict(zip(backends, results, strict=True))
    status = 0
    for row in statuses:
        out = {"role": row.role, "backend": row.backend, "model": row.description, "available": row.available}
        if row.reason:
            out["reason"] = row.reason
        probe = probes.get(id(models[row.role]))
        if probe is not None:
            out.update(probe)
            status = 1 if "error" in probe else status
        emit(out)
    return status


def _ping(backend, timeout: float) -> dict:
    """``{"ping_s", "error"?, "setup"?}`` for one backend: its ping (no retries) and what it chose for its server."""
    import time

    from ..llm import LLMError

    start = time.perf_counter()
    probe: dict = {}
    try:
        backend.ping(timeout)
    except LLMError as exc:
        probe["error"] = str(exc)
    probe = {"ping_s": round(time.perf_counter() - start, 3), **probe}
    try:
        notes = backend.setup_notes()
    except LLMError:
        notes = {}  # the ping's error already says why
    if notes:
        probe["setup"] = notes
    return probe
