"""The blind clarification sets that decided issue 42 item 3 stay as they were frozen, and every element a
committed run showed on them has its blind label (``benchmarks/data/README.md``)."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from lawluo.law.names import name_key
from lawluo.tolc.mining import STATUTE_FILE

DATA = Path(__file__).resolve().parents[1] / "benchmarks" / "data"
#: held-out set → sha256 when it was frozen, before anything ran on it.
FROZEN = {
    "heldout17": "efb4f432361bcef9e391bb3bc68e91decfdc43cb7db7f2ea3fa05b60de4ed58e",
    "heldout18": "f00406d0d1d8a71125e38161af1c198b04ac3d6744bda3d4b29379d73e8fa38b",
    "heldout19": "8bf948753b01bb4320916dac6adfbb3e7fe2a254d72a8b1e62d0958ea65c9b65",
    "heldout20": "cf13a8c8ce9089e667a47390acbb0c465ea59fea35740b504e46320f3be74da3",
    "heldout21": "01323cfff2fb925a967f4373a0b6bb1d46fa15bc13acb15816aae3809dc1ea99",
}


def rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.mark.parametrize("name", sorted(FROZEN))
def test_a_frozen_clarification_set_is_unchanged(name):
    path = DATA / f"clarification_questions.{name}.jsonl"
    assert hashlib.sha256(path.read_bytes()).hexdigest() == FROZEN[name]


@pytest.mark.parametrize("name", sorted(FROZEN))
def test_every_element_a_committed_run_showed_is_labelled(name):
    """An asked element has its relevance label; a pre-marked one (您已说明) its judged mark."""
    labels = {(r["id"], r["element"]) for r in rows(DATA / f"clarification_labels.{name}.jsonl")}
    premarks = DATA / f"clarification_premarks.{name}.jsonl"
    judged = {(r["id"], r["element"], r["mark"]) for r in rows(premarks)} if premarks.exists() else set()
    questions = {r["id"] for r in rows(DATA / f"clarification_questions.{name}.jsonl")}
    runs = sorted(DATA.glob(f"clarification_elements.{name}.*.jsonl"))
    assert runs
    for run in runs:
        shown = rows(run)
        assert {r["id"] for r in shown} == questions, run.name
        asked = [r for r in shown if r.get("mark", "unknown") == "unknown"]
        assert not [r for r in asked if (r["id"], r["element"]) not in labels], run.name
        marked = [r for r in shown if r.get("mark", "unknown") != "unknown"]
        assert not [r for r in marked if (r["id"], r["element"], r["mark"]) not in judged], run.name


def test_the_coverage_benchmark_counts_the_questions_whose_article_has_an_entry():
    done = subprocess.run(
        [sys.executable, str(DATA.parent / "clarification_coverage.py"), "--tail", "10000"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert re.fullmatch(r"\d+ articles have an entry \(lawluo/tolc/statute_elements\.yaml\)", lines[0])
    total = next(line for line in lines if line.startswith("all "))
    found = re.search(r"(\d+) questions: primary article covered (\d+) = .*the (\d+) uncovered", total)
    questions, covered, uncovered = map(int, found.groups())
    assert covered + uncovered == questions > 1000  # every labelled everyday question, counted once
    # no article it calls uncovered has an entry, however its law is written (a judicial interpretation's name quotes
    # 《中华人民共和国民法典》 in the material and says 民法典 in the lay sets)
    entries = yaml.safe_load(STATUTE_FILE.read_text(encoding="utf-8"))
    material = {
        (name_key(e["law"]), str(a)) for rows in entries.values() for e in rows for a in e["articles"]
    }
    listed = [re.fullmatch(r"\s+\d+ × (.+) (\S+)", line) for line in lines]
    uncovered_articles = {(name_key(m[1]), m[2]) for m in listed if m}
    assert uncovered_articles and not uncovered_articles & material
