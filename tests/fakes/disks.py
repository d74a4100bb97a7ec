"""Disks that fail: a small tmpfs (full after a few KB, or read-only) and a per-process file size limit.

    with tmpfs(tmp_path / "disk", size="64k") as disk:      # skips the test where mounting is refused
        fill(disk, leave=4096)                              # only one 4 KiB page left
    with tmpfs(tmp_path / "ro", readonly=True) as ro: …
    with file_size_limit(3000): …                           # writes past byte 3,000 of any file fail

``file_size_limit`` needs no privileges: it lowers ``RLIMIT_FSIZE`` for this process (Python ignores
``SIGXFSZ``, so a write that would pass the limit is cut short and the next one raises ``OSError``
``EFBIG`` — the same short write then error a full disk gives).
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


@contextmanager
def tmpfs(path: Path, size: str = "64k", readonly: bool = False) -> Iterator[Path]:
    """A tmpfs of ``size`` mounted at ``path`` (remounted read-only when ``readonly``); unmounted after."""
    path.mkdir(parents=True, exist_ok=True)
    if shutil.which("mount") is None:
        pytest.skip("no mount command: cannot make a small disk to fill")
    proc = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "lawluo-test", str(path)],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        pytest.skip(f"mounting a tmpfs is not permitted here ({proc.stderr.strip()}); needs root")
    try:
        if readonly:
            subprocess.run(["mount", "-o", "remount,ro", str(path)], check=True, capture_output=True)
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], capture_output=True)


def fill(disk: Path, leave: int) -> Path:
    """Fill ``disk`` with one file until about ``leave`` bytes are free (tmpfs counts whole pages)."""
    stat = os.statvfs(disk)
    free = stat.f_bavail * stat.f_frsize
    filler = disk / "filler"
    filler.write_bytes(b"\0" * max(0, free - leave))
    return filler


@contextmanager
def file_size_limit(limit: int) -> Iterator[None]:
    """Writes past byte ``limit`` of any file fail (``EFBIG``) while inside; the old limit after."""
    old = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, old[1]))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, old)
