"""What the batch commands (``generate``, ``evaluate``) share: progress, concurrency warnings, settings."""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace

from ..config import Settings
from .common import plural


def show_progress(args: argparse.Namespace) -> bool:
    """Progress bars (on stderr) only for a person watching: not with --quiet, not into a file or pipe."""
    return not args.quiet and sys.stderr.isatty()


def warn_slots(command: str, role: str, backend, wanted: int) -> None:
    """Say so when the role's own ``concurrency`` keeps fewer calls in flight than ``--concurrency`` asks."""
    if backend.available and backend.concurrency < wanted:
        have, var = backend.concurrency, f"LAWLUO_{role.upper()}_CONCURRENCY"
        print(
            f"lawluo {command}: 注意：{role} 角色的模型最多同时发出 {have} 个请求（其 concurrency 设置），"
            f"--concurrency {wanted} 实际最多 {have} 个在途；请设 {var}={wanted} "
            f"(note: the {role} role's model allows {have} requests at once, its `concurrency` setting, "
            f"so --concurrency {wanted} keeps at most {have} in flight; set {var}={wanted} or "
            f"models.{role}.concurrency: {wanted} to use {wanted})",
            file=sys.stderr,
        )


def call_rate(calls: int, seconds: float) -> str:
    return f"{plural(calls, 'model call')} in {seconds:.1f} s ({calls / seconds if seconds > 0 else 0:.1f} calls/s)"


#: How long a batch command waits for a whole answer (a role's longer ``timeout`` wins): 1,024 tokens at
#: 2 tokens/s, a busy server's slowest stream.
WHOLE_ANSWER_TIMEOUT_S = 600.0
#: ``--stream`` of the batch commands (generate, evaluate), which turns :func:`batch_settings` off.
STREAM_HELP = (
    "stream each answer as the roles' settings say (default: whole answers, one response a call: "
    "less CPU per answer for this client, and Ctrl-C still stops at once)"
)


def batch_settings(settings: Settings, args: argparse.Namespace) -> Settings:
    """The settings a batch command's models use: whole answers, one response per call, unless ``--stream``.
    Nobody watches a batch's answers being written, and a streamed answer costs the client CPU per token
    (at concurrency 64 that left a fast server idle a quarter of the time: docs/results/evaluate_speed.md);
    Ctrl-C still stops at once (:func:`lawluo.llm.parallel.as_finished`)."""
    if args.stream:
        return settings
    return replace(settings, models=settings.models.whole_answers(WHOLE_ANSWER_TIMEOUT_S))
