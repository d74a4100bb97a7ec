"""Writing a file so that readers see the old file or the new one, never half of it.

    write_atomically(path, "text")          # or bytes
    write_gzip_lines(path, json_lines)      # a reproducible .jsonl.gz asset

The data goes to a temporary file in the same folder, is flushed and fsynced, and the temporary file
is renamed over ``path`` (an atomic replace on POSIX and Windows). On any error the temporary file
is removed and ``path`` is left as it was.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path


def write_atomically(path: str | Path, data: str | bytes) -> Path:
    """Write ``data`` (text as UTF-8) to ``path`` atomically; returns the path."""
    path = Path(path)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.chmod(tmp, 0o644)  # mkstemp makes it private; these are ordinary files meant to be read
        with os.fdopen(fd, "wb") as f:
            f.write(payload)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def write_gzip_lines(path: str | Path, lines: Iterable[str]) -> bytes:
    """Write ``lines`` (one newline after each) as gzip atomically to ``path``, byte-for-byte
    reproducibly (level 9, no file name, mtime 0: the same lines give the same bytes); returns the bytes."""
    payload = "".join(line + "\n" for line in lines).encode("utf-8")
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, compresslevel=9, mtime=0) as gz:
        gz.write(payload)
    write_atomically(path, buf.getvalue())
    return buf.getvalue()


def rebuild_section(command: str) -> list[str]:
    """The lines of an asset's PROVENANCE file that give the command rebuilding it (Markdown).

    >>> rebuild_section("python -m lawluo build cases")
    ['Rebuild (from the repository root, deterministic bytes):', '', '```', 'python -m lawluo build cases', '```', '']
    """
    return ["Rebuild (from the repository root, deterministic bytes):", "", "```", command, "```", ""]


def asset_summary(
    path: str | Path, asset: bytes, provenance: str | Path | None = None, **counts: object
) -> dict:
    """What ``python -m lawluo build`` prints for an asset it wrote: its path, its provenance file's
    (when given), the ``counts``, its size and sha256.

    >>> asset_summary("assets/x.gz", b"", "assets/x.md", items=0)["sha256"][:12]
    'e3b0c44298fc'
    """
    head = {"path": str(path)} | ({"provenance": str(provenance)} if provenance is not None else {})
    return head | counts | {"bytes": len(asset), "sha256": hashlib.sha256(asset).hexdigest()}


def write_npz(path: str | Path, **arrays) -> str:
    """Write ``arrays`` as an ``.npz`` file at ``path`` atomically (:func:`write_atomically`); returns the
    file's sha256 — the search's small asset files, read back by :func:`read_npz`."""
    import numpy as np

    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    data = buffer.getvalue()
    write_atomically(Path(path), data)
    return hashlib.sha256(data).hexdigest()


def read_npz(path: str | Path, names: Iterable[str]) -> tuple[dict, dict]:
    """The arrays ``names`` of the ``.npz`` file at ``path`` (read without pickles) and, when one of them is
    ``meta``, its JSON string decoded (else ``{}``) — the shape of the search's small asset files.

    Raises:
        ValueError: the file is missing or unreadable, is not a zip, lacks an array, holds a pickle, or its
            ``meta`` is not JSON (the message names the cause).
    """
    import json
    import zipfile

    import numpy as np

    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {name: np.asarray(data[name]) for name in names}
        meta = json.loads(str(arrays["meta"])) if "meta" in arrays else {}
    except (OSError, EOFError, KeyError, ValueError, TypeError, zipfile.BadZipFile) as exc:
        raise ValueError(str(exc) or type(exc).__name__) from None
    return arrays, meta
