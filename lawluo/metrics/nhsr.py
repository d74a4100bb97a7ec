"""NHSR, the Non-Hallucinated Statute Rate of an answer and of a system (LegalHalBench §3.3, A.2–A.3).

Each statute an answer cites is extracted, matched to the most similar real statute and checked on
its name, number and content by :class:`~lawluo.law.checker.CitationChecker` (the verdicts and
thresholds are documented there). NHSR is the share of content-bearing citations that are not
hallucinated (:mod:`lawluo.law.verdicts`: ``verified`` or ``amended_since``). Extraction is rule-based; for an answer in which the rules find no citation although
it plainly refers to statutes (a 《…》 title, a 第…条, a 法律依据 section), the judge lists the statutes
with the extraction prompt of A.2 (``metrics/extract_statutes``) and each is checked the same way.

A system's figure pools its answers' citations (``nhsr`` = non-hallucinated / content-bearing
statutes, the paper's definition); ``nhsr_macro`` averages the per-answer rates of the answers that have
any. The verdict breakdown (how many wrong numbers, repealed laws, fabrications…) is kept, which the
paper does not report and users want; so is each citation's ``content_kind`` (how the checker read it:
quoted, paraphrased, applied to facts, number only — :mod:`lawluo.law.content_kinds`), in
``details.jsonl`` and, one row per citation, in ``citations.csv`` (:func:`citation_rows`).

    metric = NHSRMetric(checker, judge)          # judge=None: rules only
    statutes = metric.score(answer)               # AnswerStatutes
    summary = summarise_nhsr([statutes, …])
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from lawluo.law.checker import CitationChecker
from lawluo.law.verdicts import CONTENT_BEARING, HALLUCINATED, counts, nhsr

from .judge import ANSWER_BUDGET, Judge, untrusted
from .registry import Key, Metric

if TYPE_CHECKING:
    from .registry import Run

#: Signs that an answer refers to statutes although the rules extracted none.
STATUTE_HINT = re.compile(
    r"《[^》\n]{2,40}》|第[零〇一二三四五六七八九十百千万两\d]{1,8}条|法律依据|司法解释"
)
MAX_TEXT_CHARS = 200_000


class ExtractedStatute(BaseModel):
    """One statute as the judge lists it (A.2)."""

    law: str = Field(max_length=200)
    article: str = Field(default="", max_length=40)
    content: str = Field(default="", max_length=3000)


@dataclass
class AnswerStatutes:
    """The checked citations of one answer."""

    citations: list[dict] = field(default_factory=list)  # Checked.as_dict() per citation
    extracted_by: str = "rules"  # rules | judge
    note: str = ""
    error: str | None = None

    @property
    def counts(self) -> dict[str, int]:
        return counts(c["verdict"] for c in self.citations)

    @property
    def checked(self) -> int:
        """Citations that carry content, the denominator of NHSR."""
        return sum(c["verdict"] in CONTENT_BEARING for c in self.citations)

    @property
    def non_hallucinated(self) -> int:
        """Content-bearing citations that are not hallucinated, the numerator of NHSR."""
        return sum(
            c["verdict"] in CONTENT_BEARING and c["verdict"] not in HALLUCINATED for c in self.citations
        )

    @property
    def nhsr(self) -> float | None:
        return nhsr(c["verdict"] for c in self.citations)

    def as_dict(self) -> dict:
        return {
            "nhsr": self.nhsr,
            "checked": self.checked,
            "counts": self.counts,
            "extracted_by": self.extracted_by,
            "note": self.note,
            "error": self.error,
            "citations": self.citations,
        }


class NHSRMetric:
    """Checks the statutes of answers; the judge (optional) extracts them when the rules find none."""

    def __init__(self, checker: CitationChecker, judge: Judge | None = None) -> None:
        self.checker = checker
        self.judge = judge if judge is not None and judge.available else None

    def check_rules(self, answer: str, as_of: str | None = None) -> AnswerStatutes:
        """Rule-based extraction and checking, as of the day ``as_of`` (today's law without one); no model
        call."""
        text = answer[:MAX_TEXT_CHARS]
        result = self.checker.check(text, as_of=as_of)
        note = f"checked the first {MAX_TEXT_CHARS:,} characters" if len(answer) > MAX_TEXT_CHARS else ""
        return AnswerStatutes([c.as_dict() for c in result.citations], "rules", note)

    def needs_judge(self, answer: str, statutes: AnswerStatutes) -> bool:
        """The rules found nothing, yet the answer refers to statutes: the A.2 fallback applies."""
        return not statutes.citations and STATUTE_HINT.search(answer) is not None

    def extract_with_judge(self, answer: str, as_of: str | None = None) -> AnswerStatutes:
        """A.2: the judge lists the statutes; each is written out canonically and checked."""
        assert self.judge is not None
        listed = self.judge.ask(
            "metrics/extract_statutes",
            answer=untrusted(answer, ANSWER_BUDGET, "answer"),
        )
        citations, unnumbered = [], 0
        for statute in listed:
            article = statute.article.strip()
            if not statute.law.strip() or not article:
                unnumbered += 1
                continue
            law = statute.law.strip().strip("《》")
            text = f"《{law}》{article if article.endswith('条') else article + '条'}"
            if statute.content.strip():
                text += f"规定：“{statute.content.strip()}”"
            found = self.checker.check(text, as_of=as_of).citations
            if found:
                citations.append({**found[0].as_dict(), "span": None})
            else:
                unnumbered += 1
        note = f"{unnumbered} statute(s) named without a usable article number" if unnumbered else ""
        return AnswerStatutes(citations, "judge", note)

    def score(self, answer: str, as_of: str | None = None) -> AnswerStatutes:
        statutes = self.check_rules(answer, as_of)
        if self.judge is not None and self.needs_judge(answer, statutes):
            from lawluo.llm import LLMError

            try:
                return self.extract_with_judge(answer, as_of)
            except LLMError as exc:
                statutes.error = f"judge extraction failed ({type(exc).__name__}: {exc}); rules found none"
        return statutes


def summarise_nhsr(answers: list[AnswerStatutes]) -> dict:
    """A system's NHSR from its answers' checked citations.

    >>> a = AnswerStatutes([{"verdict": "verified"}, {"verdict": "wrong_number"}])
    >>> b = AnswerStatutes([{"verdict": "verified"}, {"verdict": "no_content"}])
    >>> s = summarise_nhsr([a, b, AnswerStatutes()])
    >>> s["nhsr"], s["nhsr_macro"], s["statutes"], s["answers_with_statutes"]
    (0.6666666666666666, 0.75, 3, 2)
    """
    codes = [c["verdict"] for answer in answers for c in answer.citations]
    totals = counts(codes)
    checked = sum(a.checked for a in answers)
    rates = [a.nhsr for a in answers if a.nhsr is not None]
    return {
        "nhsr": nhsr(codes),
        "nhsr_macro": sum(rates) / len(rates) if rates else None,
        "statutes": checked,
        "answers_with_statutes": len(rates),
        "extracted_by_judge": sum(a.extracted_by == "judge" for a in answers),
        **{f"n_{verdict}": n for verdict, n in totals.items()},
    }


#: The columns of ``citations.csv`` (:func:`citation_rows`), one row per checked citation.
CITATION_COLUMNS = (
    "id", "system", "n", "law", "article_label", "written", "verdict", "content_kind", "hallucinated",
    "content_bearing", "matched_law", "matched_article", "matched_version", "score", "extracted_by",
)  # fmt: skip
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _cell(value: object) -> object:
    """Text from an answer as a spreadsheet shows it, never as a formula (OWASP "CSV injection")."""
    return f"'{value}" if isinstance(value, str) and value.startswith(_FORMULA_START) else value


def citation_rows(details: Sequence[dict]) -> list[dict]:
    """One row per checked citation of the evaluator's ``details`` (an answer's ``nhsr`` is
    :meth:`AnswerStatutes.as_dict`): which answer, the citation as resolved and as written, its verdict,
    how the checker read it (``content_kind``: :mod:`lawluo.law.content_kinds`), whether it is
    hallucinated and bears content (:mod:`lawluo.law.verdicts`), and the article it matched. Text taken
    from an answer that would start a spreadsheet formula gets a leading ``'``.

    >>> cit = {"law": "中华人民共和国民法典", "article_label": "第一千零七十九条", "verdict": "amended_since",
    ...        "content_kind": "quoted", "matched": {"law": "中华人民共和国民法典", "article_label": "第一千零七十九条"}}
    >>> [row] = citation_rows([{"id": "q1", "system": "S", "nhsr": {"citations": [cit], "extracted_by": "rules"}}])
    >>> row["n"], row["verdict"], row["content_kind"], row["hallucinated"], row["content_bearing"]
    (1, 'amended_since', 'quoted', False, True)
    """
    rows = []
    for detail in details:
        statutes = detail.get("nhsr") or {}
        for n, cit in enumerate(statutes.get("citations") or [], start=1):
            verdict = cit.get("verdict")
            matched = cit.get("matched") or {}
            row = {
                "id": detail.get("id"),
                "system": detail.get("system"),
                "n": n,
                "law": cit.get("law"),
                "article_label": cit.get("article_label"),
                "written": cit.get("written"),
                "verdict": verdict,
                "content_kind": cit.get("content_kind") or "",
                "hallucinated": verdict in HALLUCINATED,
                "content_bearing": verdict in CONTENT_BEARING,
                "matched_law": matched.get("law"),
                "matched_article": matched.get("article_label"),
                "matched_version": matched.get("version"),
                "score": matched.get("score"),
                "extracted_by": statutes.get("extracted_by"),
            }
            rows.append({k: _cell(v) for k, v in row.items()})
    return rows


class NHSRRun(Metric):
    """NHSR in ``lawluo evaluate``: each answer's checked statutes (Rel reads them too)."""

    def run(self, run: Run) -> dict[Key, AnswerStatutes]:
        answers = run.inputs.answers
        metric = NHSRMetric(run.checker, run.judge)
        # The rules are CPU-bound Python (one thread is as fast as several); the judge's A.2 fallback
        # for answers the rules found nothing in runs concurrently afterwards.
        ruled = run.map(lambda a: metric.check_rules(a.text, a.as_of), answers, "nhsr", threads=1)
        out = {(a.id, a.system): s for a, s in zip(answers, ruled, strict=True)}
        if metric.judge is not None:
            fallback = [a for a, s in zip(answers, ruled, strict=True) if metric.needs_judge(a.text, s)]
            for a, s in zip(
                fallback,
                run.map(lambda a: metric.score(a.text, a.as_of), fallback, "nhsr (judge)"),
                strict=True,
            ):
                out[(a.id, a.system)] = s
        return out

    def detail(self, value: AnswerStatutes) -> dict:
        return value.as_dict()

    def summarise(self, values: Sequence[AnswerStatutes]) -> dict:
        return summarise_nhsr(list(values))


NHSR = NHSRRun()
