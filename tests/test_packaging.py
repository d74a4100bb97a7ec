"""LawLuo installed, not run from a checkout: the wheel holds the tables and templates the library reads,
and the package imports nothing of the training scripts (``lawluo build clarifications`` once failed
installed, importing ``training.weak_labels``; issue 44)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow  # builds a wheel


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel of a copy of the project (so that setuptools' build/ and egg-info are not left in the tree)."""
    source, out = tmp_path_factory.mktemp("source"), tmp_path_factory.mktemp("wheel")
    for name in ("pyproject.toml", "requirements.txt", "README.md"):
        shutil.copy2(ROOT / name, source / name)
    for package in ("lawluo", "eval_ui"):
        shutil.copytree(ROOT / package, source / package, ignore=shutil.ignore_patterns("__pycache__"))
    pip = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q"]
    subprocess.run([*pip, "-w", str(out), str(source)], check=True, capture_output=True, timeout=600)
    (found,) = out.glob("lawluo-*.whl")
    return found


def test_the_wheel_holds_every_data_file_of_the_packages(wheel):
    tracked = subprocess.run(
        ["git", "ls-files", "lawluo", "eval_ui"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    data = {name for name in tracked if not name.endswith(".py")}
    assert data, "the packages hold tables and templates"
    assert data <= set(zipfile.ZipFile(wheel).namelist())


def test_the_installed_package_builds_its_clarification_command_without_the_checkout(wheel, tmp_path):
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    code = (
        "import sys, lawluo, lawluo.tolc.mining, lawluo.domains\n"
        "assert lawluo.__file__.startswith(sys.argv[1]), lawluo.__file__\n"
        "assert not any(m == 'training' or m.startswith('training.') for m in sys.modules)\n"
        "print(len(lawluo.domains.PACKAGED))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"PYTHONPATH": str(site)}
    done = subprocess.run(
        [sys.executable, "-c", code, str(site)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    helped = subprocess.run(
        [sys.executable, "-m", "lawluo", "build", "--help"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert helped.returncode == 0 and "clarifications" in helped.stdout, helped.stderr[-2000:]
