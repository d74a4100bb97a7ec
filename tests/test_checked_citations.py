"""The citation checker against citations from LawBench answers whose verdicts were decided by hand.

Each line of ``fixtures/checked_citations.jsonl`` is one real citation taken from
``consult_predictions.dev.jsonl`` (answers of 14 systems) or ``consult.dev.jsonl`` (reference answers):
an excerpt of the answer, the law and article cited, the verdict decided by reading the excerpt and the
article texts of every version in the database (for repealed laws, the Civil Code article that replaced
it), and ``why``. The hand verdict is the expected value. Four entries carry ``known_miss``: the checker
disagrees with the hand verdict there for a reason recorded in the line (a heavy rewording, an inverted
rule), and the test is a strict xfail, so it fails the day the checker starts agreeing.

``matched_article`` is the article the content really belongs to: another article of the same law for
``wrong_number``, the successor's article for ``repealed``, the older version's article for
``outdated_version``. For those three verdicts ``null`` is a claim too (no article carries the content,
e.g. a repealed law quoted with text that no Civil Code article has), so it is compared as well.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from lawluo.law.checker import VERDICTS, CitationChecker
from lawluo.law.database import StatuteDB

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "checked_citations.jsonl"
STATUTES = ROOT / "assets" / "statutes.sqlite"
WITH_MATCHED = ("wrong_number", "repealed", "outdated_version", "amended_since")


def _load() -> list[dict]:
    with FIXTURE.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


ENTRIES = _load()


def _entry_id(e: dict) -> str:
    return f"{e['source']}/{e['id']}/{e['law']}/{e['article']}" + (f"@{e['as_of']}" if e.get("as_of") else "")


@pytest.fixture(scope="module")
def hand_checker() -> CitationChecker:
    if not STATUTES.exists():
        pytest.skip(f"statute database not built at {STATUTES}")
    return CitationChecker(StatuteDB(STATUTES))


def test_fixture_is_large_and_covers_every_verdict():
    assert len(ENTRIES) >= 40
    counts = Counter(e["verdict"] for e in ENTRIES)
    assert set(counts) <= set(VERDICTS), f"unknown verdicts: {set(counts) - set(VERDICTS)}"
    missing = [v for v in VERDICTS if counts[v] == 0]
    assert not missing, f"no hand-checked entry for {missing}"
    ids = [_entry_id(e) for e in ENTRIES]
    assert len(ids) == len(set(ids)), "entry ids (source/id/law/article) must be unique"
    for e in ENTRIES:
        assert e["source"] in ("consult_predictions", "consult")
        assert (e["system"] == "reference") == (e["source"] == "consult")
        assert isinstance(e["article"], int) and e["article"] > 0
        assert e["text"] and e["why"]
        if e["verdict"] not in WITH_MATCHED:
            assert e["matched_article"] is None


def _param(entry: dict):
    """Entries the checker is known to get wrong stay in the fixture with the hand verdict, as strict
    xfails: the reason is recorded, and the test fails loudly the day the checker starts agreeing."""
    marks = [pytest.mark.xfail(reason=entry["known_miss"], strict=True)] if entry.get("known_miss") else []
    return pytest.param(entry, id=_entry_id(entry), marks=marks)


@pytest.mark.parametrize("entry", [_param(e) for e in ENTRIES])
def test_checker_agrees_with_hand_verdict(hand_checker, entry):
    result = hand_checker.check(entry["text"], as_of=entry.get("as_of"))  # the day it was written, if known
    found = [
        c
        for c in result.citations
        if c.citation.law == entry["law"] and c.citation.article == entry["article"]
    ]
    if not found:
        extracted = [(c.citation.law, c.citation.article, c.verdict) for c in result.citations]
        pytest.fail(
            f"no citation of {entry['law']} art. {entry['article']} extracted from the excerpt; "
            f"extracted: {extracted}\nhand verdict {entry['verdict']}: {entry['why']}"
        )
    checked = found[0]
    matched = checked.matched.number if checked.matched is not None else None
    got = (checked.verdict, matched if entry["verdict"] in WITH_MATCHED else None)
    want = (entry["verdict"], entry["matched_article"] if entry["verdict"] in WITH_MATCHED else None)
    detail = (
        f"checker: {checked.verdict} (matched {matched}, score {checked.score}, kind "
        f"{checked.citation.content_kind}, note {checked.note!r}, content {checked.citation.quoted!r})\n"
        f"hand: {entry['verdict']} (matched {entry['matched_article']}): {entry['why']}"
    )
    assert got == want, detail
