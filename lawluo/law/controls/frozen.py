"""Writing the controls and freezing them by ``SHA256SUMS``; refusing to replace frozen files that differ."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from .common import SUMS


def sha256(path: Path | str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def dumps(rows: list[dict]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows)


def read_sums(folder: Path) -> dict[str, str]:
    """``SHA256SUMS`` (``sha256sum`` format) as {file name: digest}; empty when there is none."""
    path = folder / SUMS
    if not path.is_file():
        return {}
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        parts = line.split()
        if len(parts) == 2:
            out[parts[1].lstrip("*")] = parts[0]
    return out


def write(folder: Path, files: dict[str, list[dict]], stats: dict, force: bool = False) -> dict[str, str]:
    """Write the controls and ``SHA256SUMS``; refuses to replace frozen files that differ unless ``force``.

    Returns {file name: sha256}. ``build_stats.json`` records what the build kept and dropped.
    """
    from ...files import write_atomically

    payloads = {name: dumps(rows).encode("utf-8") for name, rows in files.items()}
    digests = {name: hashlib.sha256(p).hexdigest() for name, p in payloads.items()}
    frozen = read_sums(folder)
    changed = [n for n in digests if n in frozen and frozen[n] != digests[n]]
    if changed and not force:
        raise FrozenError(
            f"{folder}: the frozen controls differ from this build ({', '.join(changed)}); they are not replaced "
            "(--force replaces them: say why in the README)"
        )
    for name, payload in payloads.items():
        write_atomically(folder / name, payload)
    write_atomically(
        folder / "build_stats.json", json.dumps(stats, ensure_ascii=False, indent=1, sort_keys=True) + "\n"
    )
    digests["build_stats.json"] = sha256(folder / "build_stats.json")
    write_atomically(folder / SUMS, "".join(f"{digests[n]}  {n}\n" for n in sorted(digests)))
    return digests


class FrozenError(RuntimeError):
    """A rebuild would change frozen controls."""
