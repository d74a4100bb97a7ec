"""The citation checker's verdicts: one table of rows, read by every consumer.

The checker (:mod:`lawluo.law.checker`) gives each cited statute one verdict. Whether a verdict is a
hallucination, whether it enters NHSR's denominator, how the app's badge shows it, how the secretary
names it to its model, how the evaluator's table heads its column and which of the lawyers' labels names it
are columns of the same row. A new verdict is three things: its row here, the rule that gives it
(:mod:`lawluo.law.checker_rules`: a function marked ``@gives("<code>")`` in its stage's tuple) and its
badge and tooltip (``statute.verdict.<code>``, ``statute.verdict_tip.<code>`` in
``lawluo/strings/statutes.yaml``). ``tests/test_verdicts.py`` fails when a consumer does not cover a row
or a row has no rule.

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
    #: the lawyers' statute label that names it (``eval_ui/verdicts.py``: 真实 ``correct``, or the error's kind)
    lawyer_label: str


VERDICT_TABLE: tuple[Verdict, ...] = (
    Verdict(
        code="verified",
        hallucinated=False,
        content_bearing=True,
        badge="ok",
        label_zh="条文存在·内容相符",
        report_zh="核实无误",
        label_en="Verified",
        meaning="law in force, article exists, content agrees",
        lawyer_label="correct",
    ),
    Verdict(
        code="wrong_number",
        hallucinated=True,
        content_bearing=True,
        badge="warn",
        label_zh="条号错误",
        report_zh="条号有误",
        label_en="Wrong no.",
        meaning="the content belongs to another article of this law",
        lawyer_label="wrong_number",
    ),
    Verdict(
        code="content_mismatch",
        hallucinated=True,
        content_bearing=True,
        badge="bad",
        label_zh="内容不符",
        report_zh="内容与条文不符",
        label_en="Wrong content",
        meaning="the article exists but says something else",
        lawyer_label="wrong_content",
    ),
    Verdict(
        code="not_found",
        hallucinated=True,
        content_bearing=True,
        badge="bad",
        label_zh="查无此条",
        report_zh="未找到该法条",
        label_en="Not found",
        meaning="no such law, or no such article",
        lawyer_label="wrong_not_found",
    ),
    Verdict(
        code="repealed",
        hallucinated=True,
        content_bearing=True,
        badge="bad",
        label_zh="已废止",
        report_zh="已废止",
        label_en="Repealed",
        meaning="the law has been repealed",
        lawyer_label="wrong_repealed",
    ),
    Verdict(
        code="outdated_version",
        hallucinated=True,
        content_bearing=True,
        badge="warn",
        label_zh="旧版本",
        report_zh="引用的是旧版本",
        label_en="Outdated",
        meaning="matches only an older version of the law",
        lawyer_label="wrong_version",
    ),
    Verdict(
        code="amended_since",
        hallucinated=False,
        content_bearing=True,
        badge="warn",
        label_zh="已修订",
        report_zh="引用时有效，此后已修订",
        label_en="Amended since",
        meaning="agrees with the version in force on the date given; the article has been amended since",
        lawyer_label="correct",
    ),
    Verdict(
        code="no_content",
        hallucinated=False,
        content_bearing=False,
        badge="none",
        label_zh="条文存在·未引内容",
        report_zh="条文存在，未核对内容",
        label_en="No content",
        meaning="name and number only: nothing to check the content against",
        lawyer_label="correct",
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
