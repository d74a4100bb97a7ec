"""Admins' download folders (exports, statistics) do not pile up: issue 38 found them never removed."""

from __future__ import annotations

import os
import stat
import time

from eval_ui.scratch import scratch_folder


def test_a_new_download_folder_removes_the_stale_ones_and_keeps_the_fresh():
    old = scratch_folder("lawluo-export-")
    (old / "labels.csv").write_text("a,b\n", encoding="utf-8")
    past = time.time() - 3600
    os.utime(old, (past, past))
    fresh = scratch_folder("lawluo-stats-")
    newer = scratch_folder("lawluo-labels-")
    assert not old.exists() and fresh.is_dir() and newer.is_dir()
    assert fresh.parent == newer.parent  # one root per process
    assert stat.S_IMODE(newer.stat().st_mode) == 0o700
