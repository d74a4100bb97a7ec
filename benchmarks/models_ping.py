"""How long ``python -m lawluo models --ping`` takes when the model server is down or hung.

    python benchmarks/models_ping.py [--ping-timeout 10] [--hang 3]

Five roles use one OpenAI-compatible backend with the default options (timeout 60 s, max_retries 3,
backoff 1 s), as in issue 21, where the ping took 48 s with the server down.

1. Server down (a loopback port nobody listens on): the whole command as a subprocess (interpreter
   start and imports included), and the ping phase alone in this process (``models --ping`` minus
   ``models``). Target: about one connect
   attempt, far below one retry's backoff (1 s). For contrast, the earlier way: every role's
   ``chat(max_tokens=1)`` with the configured retries.
2. Server hung (the fake server says nothing for a while): the ping phase with ``--ping-timeout``
   of ``--hang`` seconds. Target: ≈ ``--hang`` s, one request.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import ROOT  # also puts the repository root on sys.path (lawluo, tests.fakes)

from lawluo.cli import main as lawluo_main
from lawluo.config import load_settings
from lawluo.llm import LanguageModels, LLMError, gather
from tests.fakes.openai_server import FakeOpenAIServer, Fault

ROLES = ("lawyer", "clarifier", "secretary", "judge", "boss")


def write_config(folder: Path, base_url: str) -> Path:
    lines = ["models:"] + [
        f"  {role}: {{backend: openai, model: gemma-3-270m, base_url: '{base_url}'}}" for role in ROLES
    ]
    path = folder / "five_roles.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def in_process(config: Path, *extra: str) -> tuple[float, int]:
    """Seconds ``models --ping`` takes beyond ``models`` (loading the settings), and its exit status."""

    def run(*args: str) -> tuple[float, int]:
        start = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()):
            status = lawluo_main(["--config", str(config), "models", *args])
        return time.perf_counter() - start, status

    run()  # warm: imports and the domain table
    listing = min(run()[0] for _ in range(3))
    seconds, status = run("--ping", *extra)
    return seconds - listing, status


def earlier_way(config: Path) -> float:
    """Each role's one-token chat with the configured retries, all at once (the code before this change)."""
    models = LanguageModels(load_settings(config, environ=dict(os.environ)).models)
    start = time.perf_counter()

    def ping(role: str) -> None:
        try:
            models[role].chat([{"role": "user", "content": "ping"}], max_tokens=1)
        except LLMError:
            pass

    gather([lambda r=r: ping(r) for r in ROLES])
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ping-timeout", type=float, default=10.0)
    parser.add_argument("--hang", type=float, default=3.0, help="ping timeout against the hung server")
    args = parser.parse_args()
    os.environ.setdefault("OPENAI_API_KEY", "bench")
    with tempfile.TemporaryDirectory() as tmp:
        config = write_config(Path(tmp), f"http://127.0.0.1:{closed_port()}/v1")
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "lawluo", "--config", str(config), "models", "--ping",
             "--ping-timeout", str(args.ping_timeout)],
            cwd=ROOT, capture_output=True, text=True, check=False,
        )  # fmt: skip
        whole = time.perf_counter() - start
        errors = sum('"error"' in line for line in done.stdout.splitlines())
        print(
            f"server down, whole command:  {whole:6.2f} s (exit {done.returncode}, {errors}/5 rows with an error)"
        )
        seconds, status = in_process(config, "--ping-timeout", str(args.ping_timeout))
        print(f"server down, ping phase:     {seconds:6.2f} s (exit {status})")
        print(
            f"server down, earlier way:    {earlier_way(config):6.2f} s (5 roles, 3 retries each, backoff 1 s)"
        )

        with FakeOpenAIServer() as server:
            server.script(*[Fault.hang(args.hang * 4)] * 5)
            config = write_config(Path(tmp), server.url)
            seconds, status = in_process(config, "--ping-timeout", str(args.hang))
            print(
                f"server hung, ping phase:     {seconds:6.2f} s with --ping-timeout {args.hang:g} "
                f"(exit {status}, {len(server.requests)} request(s))"
            )


if __name__ == "__main__":
    main()
