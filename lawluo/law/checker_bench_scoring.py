"""Scoring ``bench checker``: each expected citation of a control row gets one verdict from the checker's
citations that match it (:func:`given_verdict`); the checker's other citations are kept apart (:func:`score_row`)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .verdicts import CONTENT_BEARING, HALLUCINATED

if TYPE_CHECKING:
    pass

#: The verdicts a control row may expect: the checker's table (``verdicts.VERDICTS``) at the time the
#: controls were frozen. An older checker that lacks one of them still runs (it never gives it).
CONTROL_VERDICTS = (
    "verified",
    "wrong_number",
    "content_mismatch",
    "not_found",
    "repealed",
    "outdated_version",
    "amended_since",
    "no_content",
)


def given_verdict(matched: Iterable[dict]) -> str | None:
    """One verdict for an expected citation from the checker's citations that match it.

    >>> given_verdict([{"verdict": "no_content"}, {"verdict": "verified"}])
    'verified'
    >>> given_verdict([{"verdict": "verified"}, {"verdict": "wrong_number"}]), given_verdict([])
    ('wrong_number', None)
    """
    verdicts = [m["verdict"] for m in matched]
    if not verdicts:
        return None
    for pick in (lambda v: v in HALLUCINATED, lambda v: v in CONTENT_BEARING):
        hit = next((v for v in verdicts if pick(v)), None)
        if hit is not None:
            return hit
    return verdicts[0]


@dataclass
class Scored:
    """One expected citation with the verdict it was given (``None``: the extractor missed it)."""

    row: str
    control: str
    group: str  # style (negative) or corruption kind (positive)
    key: str
    article: int
    suffix: int
    expected: str  # the verdict it should get
    given: str | None
    span: tuple[int, int] | None
    note: str = ""

    @property
    def alarm(self) -> bool:
        return self.given in HALLUCINATED


@dataclass
class Unexpected:
    """A checker citation that matches no expected or excluded citation of its row."""

    row: str
    control: str
    group: str
    key: str | None
    article: int
    suffix: int
    verdict: str
    span: tuple[int, int]


def score_row(row: dict, found: list[dict]) -> tuple[list[Scored], list[Unexpected], list[str]]:
    """The row's expected citations with their verdicts; the checker's other citations; the verdicts of
    the excluded ones (real citations the controls do not score, e.g. a law the database lacks)."""
    group = row.get("kind") if row["control"] == "positive" else row["style"]
    by_ident: dict[tuple, list[dict]] = defaultdict(list)
    for f in found:
        by_ident[(f["key"], f["article"], f["suffix"])].append(f)
    scored = []
    for cit in row["citations"]:
        ident = (cit["key"], cit["article"], cit["suffix"])
        matched = by_ident.get(ident, [])
        given = given_verdict(matched)
        first = next((m for m in matched if m["verdict"] == given), None)
        scored.append(
            Scored(
                row["id"],
                row["control"],
                group,
                cit["key"],
                cit["article"],
                cit["suffix"],
                cit["verdict"],
                given,
                tuple(first["span"]) if first else None,
                first["note"] if first else "",
            )
        )
    known = {(c["key"], c["article"], c["suffix"]) for c in row["citations"]}
    excluded_idents = {(_excluded_key(e), e["article"], e["suffix"]) for e in row.get("excluded", [])}
    unexpected, excluded_verdicts = [], []
    for f in found:
        ident = (f["key"], f["article"], f["suffix"])
        if ident in known:
            continue
        if ident in excluded_idents or (None, f["article"], f["suffix"]) in excluded_idents:
            excluded_verdicts.append(f["verdict"])
            continue
        unexpected.append(
            Unexpected(
                row["id"],
                row["control"],
                group,
                f["key"],
                f["article"],
                f["suffix"],
                f["verdict"],
                tuple(f["span"]),
            )
        )
    return scored, unexpected, excluded_verdicts


def _excluded_key(entry: dict) -> str | None:
    from .names import name_key, split_part

    return entry.get("key") or split_part(name_key(entry.get("law", "")))[0]
