"""Statute relevance, Rel 0–10 (LegalHalBench A.4).

For each statute an answer cites, after NHSR's check (:mod:`.nhsr`):

- a **non-hallucinated** statute (``verified``, ``amended_since`` — right when written — or
  ``no_content``: a real article named without content) — the judge rates how well the real article answers the question: 10 (directly
  applies), 5 (related, secondary) or 0 (irrelevant) (prompt ``metrics/relevance``);
- a **hallucinated** statute (wrong number, wrong content, repealed or outdated law, not found) —
  the judge rates whether the legal knowledge the answer states agrees with the reference statute,
  the real article the checker matched: 10 (agrees) or 0 (does not) (prompt ``metrics/consistency``).
  A hallucinated citation that matches no real article at all (a fabricated law or article, a repealed
  law whose content has no successor) gets 0 without a judge call: there is no knowledge to agree with.

An answer's Rel is the mean over its statutes; an answer that cites none has no Rel (``None``) and is
left out of its system's mean.

    metric = RelevanceMetric(judge)
    result = metric.score(question, statutes.citations)   # RelResult(score=7.5, statutes=[…])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field

from ..law.verdicts import NOT_HALLUCINATED
from .judge import QUESTION_BUDGET, STATUTES_BUDGET, Judge, attempt, untrusted
from .registry import Key, Metric, judged_columns

if TYPE_CHECKING:
    from .registry import Run

NON_HALLUCINATED = NOT_HALLUCINATED  # lawluo/law/verdicts.py


class RelevanceVerdict(BaseModel):
    score: Literal[0, 5, 10]
    reason: str = Field(default="", max_length=2000)


class ConsistencyVerdict(BaseModel):
    score: Literal[0, 10]
    reason: str = Field(default="", max_length=2000)


@dataclass
class RelResult:
    score: float | None = None
    statutes: list[dict] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {"score": self.score, "statutes": self.statutes, "errors": self.errors}


def _statute_text(article: dict) -> str:
    return f"《{article['law']}》{article['article_label']}：{article['text']}"


def _cited_text(citation: dict) -> str:
    quoted = citation.get("quoted") or "（回答未给出内容）"
    return f"《{citation['written'] or citation['law']}》{citation['article_label']}：{quoted}"


class RelevanceMetric:
    def __init__(self, judge: Judge) -> None:
        self.judge = judge

    def rate(self, question: str, citation: dict) -> dict:
        """One statute's Rel with the kind of rating and the judge's reason (or error)."""
        label = f"{citation['law']} {citation['article_label']}"
        matched = citation.get("matched")
        if citation["verdict"] in NON_HALLUCINATED and matched:
            outcome = attempt(
                lambda: self.judge.ask(
                    "metrics/relevance",
                    question=untrusted(question, QUESTION_BUDGET, "question"),
                    statute=untrusted(_statute_text(matched), STATUTES_BUDGET, "statute"),
                )
            )
            kind = "relevance"
        elif matched:
            outcome = attempt(
                lambda: self.judge.ask(
                    "metrics/consistency",
                    cited=untrusted(_cited_text(citation), STATUTES_BUDGET, "cited statute"),
                    reference=untrusted(_statute_text(matched), STATUTES_BUDGET, "reference statute"),
                )
            )
            kind = "consistency"
        else:
            return {
                "statute": label,
                "verdict": citation["verdict"],
                "kind": "no_reference",
                "score": 0,
                "reason": "no real statute matches this citation",
            }
        row = {"statute": label, "verdict": citation["verdict"], "kind": kind}
        if outcome.error:
            return {**row, "score": None, "error": outcome.error}
        return {**row, "score": outcome.value.score, "reason": outcome.value.reason}

    def score(self, question: str, citations: list[dict]) -> RelResult:
        rated = [self.rate(question, c) for c in citations]
        scores = [r["score"] for r in rated if r["score"] is not None]
        errors = [r["error"] for r in rated if r.get("error")]
        return RelResult(sum(scores) / len(scores) if scores else None, rated, errors)


class RelRun(Metric):
    """Rel in ``lawluo evaluate``: each answer's Rel over the statutes NHSR found in it."""

    def run(self, run: Run) -> dict[Key, dict]:
        metric = RelevanceMetric(run.judge)
        statutes = run.values["nhsr"]
        questions = run.inputs.references
        todo = [a for a in run.inputs.answers if statutes[(a.id, a.system)].citations]
        rated = run.map(
            lambda a: metric.score(questions[a.id].question, statutes[(a.id, a.system)].citations),
            todo,
            "rel",
        )
        out = {
            (a.id, a.system): {"score": None, "statutes": [], "errors": [], "note": "cites no statute"}
            for a in run.inputs.answers
        }
        for a, r in zip(todo, rated, strict=True):
            out[(a.id, a.system)] = r.as_dict()
        return out

    def summarise(self, values: Sequence[dict]) -> dict:
        return judged_columns("rel", values)

    def judge_errors(self, value: dict) -> int:
        return len(value.get("errors", []))


REL = RelRun()
