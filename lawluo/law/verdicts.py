"""The citation checker's verdicts: one table of rows, read by every consumer.

The checker (:mod:`lawluo.law.checker`) gives each cited statute one verdict. Whether a verdict is a
hallucination, whether it enters NHSR's denominator, how the app's badge shows it, how the secretary
names it to its model and how the evaluator's table heads its column are columns of the same row, so
a new verdict is one row here (and the checker's rule that produces it). ``tests/test_verdicts.py``
fails when a consumer does not cover a row.

NHSR — the Non-Hallucinated Statute Rate of LegalHalBench §3.3 — is computed here and nowhere else
(:func:`nhsr`): the share of content-bearing citations that are not hallucinated (``verified``, or
``amended_since``: right for the date the text was written, amended since).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Verdict:
    code: str
    #: the citation is a hallucination: wrong name, number, content or version (LegalHalBench §3.3)
    hallucinated: bool
    #: the citation says what the article provides, so NHSR can judge it (its denominator)
    content_bearing: bool
    badge: str  # the app's badge colour class: ok, warn, bad, none
    label_zh: str  # the badge's Chinese label: what was checked (条文存在·内容相符), never "applies to you"
    report_zh: str  # how the secretary's model reads it
    label_en: str  # the evaluator's column heading (``n_<code>``)
    meaning: str  # one line, for help texts and tooltips


VERDICT_TABLE: tuple[Verdict, ...] = (
    Verdict(
        "verified",
        False,
        True,
        "ok",
        "条文存在·内容相符",
        "核实无误",
        "Verified",
        "law in force, article exists, content agrees",
    ),
    Verdict(
        "wrong_number",
        True,
        True,
        "warn",
        "条号错误",
        "条号有误",
        "Wrong no.",
        "the content belongs to another article of this law",
    ),
    Verdict(
        "content_mismatch",
        True,
        True,
        "bad",
        "内容不符",
        "内容与条文不符",
        "Wrong content",
        "the article exists but says something else",
    ),
    Verdict(
        "not_found",
        True,
        True,
        "bad",
        "查无此条",
        "未找到该法条",
        "Not found",
        "no such law, or no such article",
    ),
    Verdict("repealed", True, True, "bad", "已废止", "已废止", "Repealed", "the law has been repealed"),
    Verdict(
        "outdated_version",
        True,
        True,
        "warn",
        "旧版本",
        "引用的是旧版本",
        "Outdated",
        "matches only an older version of the law",
    ),
    Verdict(
        "amended_since",
        False,
        True,
        "warn",
        "已修订",
        "引用时有效，此后已修订",
        "Amended since",
        "agrees with the version in force on the date given; the article has been amended since",
    ),
    Verdict(
        "no_content",
        False,
        False,
        "none",
        "条文存在·未引内容",
        "条文存在，未核对内容",
        "No content",
        "name and number only: nothing to check the content against",
    ),
)

VERDICTS: tuple[str, ...] = tuple(v.code for v in VERDICT_TABLE)
BY_CODE: dict[str, Verdict] = {v.code: v for v in VERDICT_TABLE}
HALLUCINATED: frozenset[str] = frozenset(v.code for v in VERDICT_TABLE if v.hallucinated)
NOT_HALLUCINATED: frozenset[str] = frozenset(v.code for v in VERDICT_TABLE if not v.hallucinated)
CONTENT_BEARING: frozenset[str] = frozenset(v.code for v in VERDICT_TABLE if v.content_bearing)


def verdict(code: str) -> Verdict:
    """The row of ``code``; ``KeyError`` naming the valid codes for anything else."""
    try:
        return BY_CODE[code]
    except KeyError:
        raise KeyError(f"unknown verdict {code!r}; valid: {', '.join(VERDICTS)}") from None


def nhsr(codes: Iterable[str]) -> float | None:
    """The share of content-bearing verdicts that are not hallucinated; ``None`` when none bears content.

    >>> nhsr(["verified", "wrong_number", "no_content"]), nhsr(["no_content"])
    (0.5, None)
    >>> nhsr(["verified", "amended_since", "repealed", "content_mismatch"])
    0.5
    """
    bearing = [code for code in codes if code in CONTENT_BEARING]
    return sum(code not in HALLUCINATED for code in bearing) / len(bearing) if bearing else None


def counts(codes: Iterable[str]) -> dict[str, int]:
    """How often each verdict occurs, every verdict listed in the table's order.

    >>> counts(["verified", "verified", "repealed"])["verified"]
    2
    """
    out = dict.fromkeys(VERDICTS, 0)
    for code in codes:
        out[code] += 1
    return out
