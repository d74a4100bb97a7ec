"""``training/`` is a package (issue 17, item 8): scripts run as ``python -m training.<script>`` from the
repository root and nothing edits ``sys.path``; every script that reads LawLuo's settings reads them from
its own ``--lawluo_config``, never from the process's defaults (item 3)."""

from __future__ import annotations

import importlib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from lawluo.law.database import StatuteDBError
from training import train_receptionist

from .conftest import ROOT
from .fakes.tiny_training import write_tiny_consultations, write_tiny_statutes

SYS_PATH_EDIT = re.compile(r"\bsys\.path\s*(\.\s*(insert|append|extend)\s*\(|\+?=)")


def test_no_file_of_training_or_tests_edits_sys_path():
    assert SYS_PATH_EDIT.search('sys.path.insert(0, str(ROOT / "training"))')
    assert SYS_PATH_EDIT.search("sys.path += [ROOT]") and SYS_PATH_EDIT.search("sys.path = [ROOT]")
    assert not SYS_PATH_EDIT.search("print(sys.path)")
    edits = [
        f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
        for folder in ("training", "tests")
        for path in sorted((ROOT / folder).rglob("*.py"))
        if path.resolve() != Path(__file__).resolve()  # the examples above
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if SYS_PATH_EDIT.search(line)
    ]
    assert edits == []


def test_every_training_module_imports_from_the_package():
    names = sorted(p.stem for p in (ROOT / "training").glob("*.py") if p.stem != "__init__")
    assert {"data", "arguments", "train_hipo", "train_rl", "train_receptionist"} <= set(names)
    for name in names:
        assert importlib.import_module(f"training.{name}").__name__ == f"training.{name}"


def test_a_script_runs_as_a_module_from_the_repository_root():
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [sys.executable, "-m", "training.train_receptionist", "--help"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "--lawluo_config" in done.stdout and "--data_dir" in done.stdout


def _settings_file(path: Path, assets_dir: Path) -> Path:
    path.write_text(f"assets_dir: {assets_dir}\n", encoding="utf-8")
    return path


def test_scripts_use_the_statute_database_in_the_assets_dir_of_their_lawluo_config(tmp_path):
    from training import train_hipo, train_rl

    other = write_tiny_statutes(tmp_path / "other-assets")  # other-assets/statutes.sqlite, 3 articles
    config = _settings_file(tmp_path / "other.yaml", other.parent)
    flags = ["--lawluo_config", str(config), "--output_dir", str(tmp_path / "out"), "--bf16", "false"]
    hipo_args = train_hipo.make_parser().parse_args_and_config(flags)[0]
    rl_args = train_rl.make_parser().parse_args_and_config(flags)[0]
    (receptionist_args,) = train_receptionist.make_parser().parse_args_into_dataclasses(flags[:2])
    for args in (hipo_args, rl_args, receptionist_args):
        assert args.statutes_path() == other, type(args).__name__
    assert train_hipo.HIPOArguments().statutes_path() == ROOT / "assets" / "statutes.sqlite"
    assert train_rl.RLArguments(lawluo_config=str(config), statutes="x.sqlite").statutes_path() == Path(
        "x.sqlite"
    )

    # The receptionist's weak labels check citations against that database: the tiny one labels the
    # answers citing its 劳动合同法, and a folder without a database fails, naming the folder's path.
    data = write_tiny_consultations(tmp_path / "data", n=4)
    cfg = train_receptionist.ReceptionistConfig(
        lawluo_config=str(config), data_dir=str(data), sources=["kinled_consult"], tune=False
    )
    weak = train_receptionist.build_weak_set(cfg, exclude=[])
    assert weak.labels == ["labor"] * 4
    assert weak.counts["kinled_consult"]["by_law"] == 4
    empty = _settings_file(tmp_path / "empty.yaml", tmp_path / "empty-assets")
    cfg = train_receptionist.ReceptionistConfig(
        lawluo_config=str(empty), data_dir=str(data), sources=["kinled_consult"], tune=False
    )
    with pytest.raises(StatuteDBError, match="empty-assets"):
        train_receptionist.build_weak_set(cfg, exclude=[])
