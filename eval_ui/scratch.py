"""Folders for files an admin downloads (exports, statistics figures), removed once they are stale.

Gradio copies a file a handler returns into its own cache before serving it (and removes that copy
after the app's ``delete_cache`` time), so the folder the handler wrote is not needed once the handler
has returned; it cannot remove it itself, as Gradio reads the file after the return. Every new folder
is made under one private (0700) root per process, and folders there older than ``max_age_s`` are
removed then, so at most one export's worth of files outlives its download by more than that.

    folder = scratch_folder("lawluo-export-")     # a fresh 0700 folder; stale siblings removed
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path

#: Seconds a download folder is kept (Gradio has copied its files long before).
MAX_AGE_S = 600.0
_ROOT_PREFIX = f"lawluo-downloads-{os.getpid()}-"


def _root() -> Path:
    """This process's root of download folders (one per process, found again by its prefix)."""
    base = Path(tempfile.gettempdir())
    for entry in base.glob(f"{_ROOT_PREFIX}*"):
        if entry.is_dir() and entry.stat().st_uid == os.getuid():
            return entry
    return Path(tempfile.mkdtemp(prefix=_ROOT_PREFIX))


def scratch_folder(prefix: str, max_age_s: float = MAX_AGE_S, now: float | None = None) -> Path:
    """A new private folder for one download; folders older than ``max_age_s`` under the root go first."""
    root = _root()
    now = time.time() if now is None else now
    for entry in root.iterdir():
        try:
            if now - entry.stat().st_mtime > max_age_s:
                shutil.rmtree(entry, ignore_errors=True)
        except OSError:
            continue
    return Path(tempfile.mkdtemp(prefix=prefix, dir=root))
