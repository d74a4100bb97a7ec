"""Legal claim truthfulness, T_LC 0–10 (LegalHalBench A.5).

The judge first lists the legal claims and suggestions an answer makes (prompt
``metrics/extract_claims``, at most :data:`MAX_CLAIMS`), then rates each claim against the
reference statutes on the paper's scale 0 / 1 / 3 / 4 / 5 (prompt ``metrics/judge_claim``); the
rating is doubled to 0–10 and averaged over the claims. An answer without legal claims has no T_LC
(``None``). The reference statutes are the ``statutes`` of the reference file, else the real
articles the reference answer cites (see :func:`lawluo.metrics.references.reference_statutes`).

    metric = TruthfulnessMetric(judge)
    result = metric.score(question, answer, ["《劳动合同法》第八十二条：用人单位自用工之日起…"])
    result.score        # e.g. 8.0 for claims rated 5, 3 → (10 + 6) / 2
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field

from .judge import ANSWER_BUDGET, QUESTION_BUDGET, STATUTES_BUDGET, Judge, attempt, untrusted
from .references import reference_statutes
from .registry import Key, Metric, judged_columns

if TYPE_CHECKING:
    from .registry import Run

MAX_CLAIMS = 10
CLAIM_CHARS = 500
NO_STATUTES = "（没有参考法条，请根据现行中国法律判断）"


class ClaimVerdict(BaseModel):
    score: Literal[0, 1, 3, 4, 5]
    reason: str = Field(default="", max_length=2000)


@dataclass
class TLCResult:
    score: float | None = None
    claims: list[dict] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {"score": self.score, "claims": self.claims, "errors": self.errors}


class TruthfulnessMetric:
    def __init__(self, judge: Judge, max_claims: int = MAX_CLAIMS) -> None:
        self.judge = judge
        self.max_claims = max_claims

    def claims(self, question: str, answer: str) -> list[str]:
        listed = self.judge.ask(
            "metrics/extract_claims",
            question=untrusted(question, QUESTION_BUDGET, "question"),
            answer=untrusted(answer, ANSWER_BUDGET, "answer"),
            max_claims=self.max_claims,
        )
        claims = [" ".join(c.split())[:CLAIM_CHARS] for c in listed if c and c.strip()]
        return list(dict.fromkeys(claims))[: self.max_claims]

    def score(self, question: str, answer: str, statutes: list[str]) -> TLCResult:
        extracted = attempt(lambda: self.claims(question, answer))
        if extracted.error:
            return TLCResult(None, [], [f"claim extraction: {extracted.error}"])
        reference = "\n".join(statutes) if statutes else NO_STATUTES
        rated = []
        for claim in extracted.value:
            outcome = attempt(
                lambda claim=claim: self.judge.ask(
                    "metrics/judge_claim",
                    question=untrusted(question, QUESTION_BUDGET, "question"),
                    claim=untrusted(claim, CLAIM_CHARS, "claim"),
                    statutes=untrusted(reference, STATUTES_BUDGET, "statutes"),
                )
            )
            if outcome.error:
                rated.append({"claim": claim, "score": None, "error": outcome.error})
            else:
                # The paper's 0–5 rating, doubled to the 0–10 scale of T_LC.
                rated.append(
                    {
                        "claim": claim,
                        "rating": outcome.value.score,
                        "score": 2 * outcome.value.score,
                        "reason": outcome.value.reason,
                    }
                )
        scores = [r["score"] for r in rated if r["score"] is not None]
        errors = [r["error"] for r in rated if r.get("error")]
        return TLCResult(sum(scores) / len(scores) if scores else None, rated, errors)


class TLCRun(Metric):
    """T_LC in ``lawluo evaluate``: each answer's claims judged against its question's reference statutes."""

    def run(self, run: Run) -> dict[Key, dict]:
        metric = TruthfulnessMetric(run.judge)
        references = run.inputs.references
        statutes = {qid: reference_statutes(run.checker, ref) for qid, ref in references.items()}
        rated = run.map(
            lambda a: metric.score(references[a.id].question, a.text, statutes[a.id]),
            run.inputs.answers,
            "tlc",
        )
        return {(a.id, a.system): r.as_dict() for a, r in zip(run.inputs.answers, rated, strict=True)}

    def summarise(self, values: Sequence[dict]) -> dict:
        return judged_columns("tlc", values)

    def judge_errors(self, value: dict) -> int:
        return len(value.get("errors", []))


TLC = TLCRun()
