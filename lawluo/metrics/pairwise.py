"""Pairwise win rate with a position-swapped judge (LegalHalBench A.6 and Fig. 8; LawLuo §5.1).

The judge sees a question, an optional reference answer and two answers A and B; it scores each on
helpfulness (0–4), relevance of the cited provisions (0–2) and completeness (0–2), and states a
preference A / B / tie (prompt ``metrics/pairwise``). Every pair is judged twice, the second time
with the answers swapped. The two verdicts, mapped back to the systems, decide the pair when they
agree; when they disagree (position bias, or one says tie) the pair is a **draw**.

A system pair's record is win / draw / loss of the first system; its win rate counts a draw as half
a win, ``(wins + draws / 2) / n``, with the standard error of that mean over the pairs; the judge's
**self-consistency** is the share of pairs whose two verdicts agree (MT-bench, Zheng et al. 2023
§3.3).

    outcome = judge_pair(judge, question, reference, answer_of_x, answer_of_y)   # PairOutcome
    summarise_pairs([outcome, …])   # {"win": 120, "draw": 60, "loss": 70, "win_rate": 0.6, …}
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field, field_validator

from .judge import ANSWER_BUDGET, QUESTION_BUDGET, REFERENCE_BUDGET, Judge, attempt, untrusted
from .registry import Metric

if TYPE_CHECKING:
    from .inputs import Inputs
    from .registry import EvalOptions, Run

NO_REFERENCE = "（无）"
#: Below this self-consistency (share of pairs judged the same in both orders) a judge's preferences are not a
#: measurement: the bench (lawluo/metrics/tree_bench/bench.py) reports no win rate and the statistics tab says so in plain
#: words (the 0.5B and 1.5B local models of issue 41 flipped with the order).
MIN_JUDGE_CONSISTENCY = 0.8
#: The judge's reason, in characters (the schema's bound; see PairVerdict.reason).
REASON_CHARS = 200


class AnswerScores(BaseModel):
    helpfulness: int = Field(ge=0, le=4)
    relevance: int = Field(ge=0, le=2)
    completeness: int = Field(ge=0, le=2)

    @property
    def total(self) -> int:
        return self.helpfulness + self.relevance + self.completeness


class PairVerdict(BaseModel):
    a: AnswerScores
    b: AnswerScores
    preference: Literal["A", "B", "tie"]
    # One sentence (the prompt asks for 一句话), bounded in the schema so that a llama.cpp server keeps the bound
    # in its JSON grammar (≤ GRAMMAR_MAX_REPEAT): unbounded, the 0.5B ran out of tokens inside its reason on 9 of
    # 120 verdicts and the verdict was lost. A longer reason from a server that ignores the bound is cut, not refused.
    reason: str = Field(default="", json_schema_extra={"maxLength": REASON_CHARS})

    @field_validator("reason", mode="before")
    @classmethod
    def _cut_reason(cls, value: object) -> object:
        if isinstance(value, str) and len(value) > REASON_CHARS:
            return value[:REASON_CHARS] + "…"
        return value


@dataclass
class PairOutcome:
    """The pair (first, second) judged in both orders; ``result`` is from the first answer's side."""

    result: str | None  # win | draw | loss | None (a verdict is missing)
    consistent: bool | None
    verdicts: list[dict] = field(default_factory=list)  # as shown: {"order", "preference", "a", "b", …}
    errors: list[str] = field(default_factory=list)

    def record(self, qid: str, first: str, second: str) -> PairRecord:
        """This outcome as the line of ``pairwise.jsonl`` for question ``qid`` and the two systems."""
        return PairRecord(
            qid, first, second, self.result, self.consistent, tuple(self.verdicts), tuple(self.errors)
        )

    def as_dict(self) -> dict:
        return {
            "result": self.result,
            "consistent": self.consistent,
            "verdicts": self.verdicts,
            "errors": self.errors,
        }


def preference_side(preference: str, first_is_a: bool) -> str:
    """The stated preference as seen by the first answer: win, loss or tie."""
    if preference == "tie":
        return "tie"
    return "win" if (preference == "A") == first_is_a else "loss"


def combine(first_order: str, second_order: str) -> tuple[str, bool]:
    """Two verdicts (each win / loss / tie for the first answer) → the pair's result and consistency.

    >>> combine("win", "win"), combine("win", "loss"), combine("tie", "win"), combine("tie", "tie")
    (('win', True), ('draw', False), ('draw', False), ('draw', True))
    """
    if first_order == second_order:
        return ("draw" if first_order == "tie" else first_order), True
    return "draw", False


#: The two orders a pair is judged in: the first system's answer shown as A, then as B.
FIRST_AS_A, FIRST_AS_B = "first=A", "first=B"


@dataclass(frozen=True)
class PairRecord:
    """One line of ``pairwise.jsonl``: a question's answers of two systems judged in both orders. What the
    evaluator writes and what the statistics tab reads (``eval_ui``) — the one definition of the line.

    >>> row = {"id": "q1", "first": "s1", "second": "s2", "result": "win", "consistent": True,
    ...        "verdicts": [{"order": "first=A", "preference": "A"}, {"order": "first=B", "preference": "B"}],
    ...        "errors": []}
    >>> record = PairRecord.from_json(row)
    >>> record.preference(FIRST_AS_B), record.as_json() == row
    ('B', True)
    """

    id: str
    first: str
    second: str
    result: str | None  # win | draw | loss (from the first system's side) | None: an order failed
    consistent: bool | None
    verdicts: tuple[dict, ...] = ()  # per order: {"order", "preference", "first", "second", "reason"}
    errors: tuple[str, ...] = ()

    @staticmethod
    def is_one(row: Mapping[str, Any]) -> bool:
        """``row`` is a line of ``pairwise.jsonl`` (not of ``details.jsonl``)."""
        return "first" in row and "second" in row

    @classmethod
    def from_json(cls, row: Mapping[str, Any]) -> PairRecord:
        """The record of a decoded line; ``KeyError``/``TypeError`` for a line that is not one."""
        verdicts = tuple(dict(v) for v in row.get("verdicts") or ())
        return cls(
            str(row["id"]),
            str(row["first"]),
            str(row["second"]),
            row.get("result"),
            row.get("consistent"),
            verdicts,
            tuple(str(e) for e in row.get("errors") or ()),
        )

    def as_json(self) -> dict:
        return {
            "id": self.id,
            "first": self.first,
            "second": self.second,
            "result": self.result,
            "consistent": self.consistent,
            "verdicts": list(self.verdicts),
            "errors": list(self.errors),
        }

    def preference(self, order: str) -> str | None:
        """The judge's stated preference (A, B or tie as shown) in ``order`` (:data:`FIRST_AS_A` or
        :data:`FIRST_AS_B`), ``None`` when that order has no verdict."""
        return next((v.get("preference") for v in self.verdicts if v.get("order") == order), None)


def judge_pair(judge: Judge, question: str, reference: str | None, first: str, second: str) -> PairOutcome:
    """Judge ``first`` against ``second`` twice: first as A, then first as B."""
    shared = {
        "question": untrusted(question, QUESTION_BUDGET, "question"),
        "reference": untrusted(reference, REFERENCE_BUDGET, "reference answer")
        if reference
        else NO_REFERENCE,
    }
    first_q = untrusted(first, ANSWER_BUDGET, "answer")
    second_q = untrusted(second, ANSWER_BUDGET, "answer")
    sides, verdicts, errors = [], [], []
    for first_is_a in (True, False):
        a, b = (first_q, second_q) if first_is_a else (second_q, first_q)
        outcome = attempt(lambda a=a, b=b: judge.ask("metrics/pairwise", answer_a=a, answer_b=b, **shared))
        order = FIRST_AS_A if first_is_a else FIRST_AS_B
        if outcome.error:
            errors.append(f"{order}: {outcome.error}")
            continue
        verdict: PairVerdict = outcome.value
        sides.append(preference_side(verdict.preference, first_is_a))
        verdicts.append(verdict_row(verdict, first_is_a, order))
    return pair_outcome(sides, verdicts, errors)


def verdict_row(verdict: PairVerdict, first_is_a: bool, order: str) -> dict:
    """One order's verdict as recorded in the details: the scores of the first-shown and second-shown answer."""
    mine, theirs = (verdict.a, verdict.b) if first_is_a else (verdict.b, verdict.a)
    return {
        "order": order,
        "preference": verdict.preference,
        "first": mine.model_dump() | {"total": mine.total},
        "second": theirs.model_dump() | {"total": theirs.total},
        "reason": verdict.reason,
    }


def pair_outcome(sides: list, verdicts: list[dict], errors: list[str]) -> PairOutcome:
    """Both orders' sides combined (MT-bench's conservative rule), or no result when an order failed."""
    if len(sides) < 2:
        return PairOutcome(None, None, verdicts, errors)
    result, consistent = combine(*sides)
    return PairOutcome(result, consistent, verdicts, errors)


def summarise_pairs(outcomes: list[PairOutcome]) -> dict:
    """Win / draw / loss of the first system, win rate (draw = ½) with its standard error, consistency.

    >>> o = [PairOutcome("win", True), PairOutcome("win", True), PairOutcome("draw", False),
    ...      PairOutcome("loss", True), PairOutcome(None, None)]
    >>> s = summarise_pairs(o)
    >>> s["win"], s["draw"], s["loss"], s["n"], s["win_rate"], round(s["win_rate_se"], 4), s["consistency"]
    (2, 1, 1, 4, 0.625, 0.2394, 0.75)
    """
    judged = [o for o in outcomes if o.result is not None]
    n = len(judged)
    counts = {r: sum(o.result == r for o in judged) for r in ("win", "draw", "loss")}
    values = [{"win": 1.0, "draw": 0.5, "loss": 0.0}[o.result] for o in judged]
    rate = sum(values) / n if n else None
    # Standard error of the mean of per-pair values (sample standard deviation / √n).
    se = math.sqrt(sum((v - rate) ** 2 for v in values) / (n - 1) / n) if n > 1 else None
    return {
        **counts,
        "n": n,
        "failed": len(outcomes) - n,
        "win_rate": rate,
        "win_rate_se": se,
        "consistency": sum(bool(o.consistent) for o in judged) / n if n else None,
    }


def system_pairs(systems: Sequence[str], options: EvalOptions) -> list[tuple[str, str]]:
    """The system pairs to compare: ``--pairs``, else ``--versus`` against every other system, else the
    two systems there are; ``ValueError`` when it cannot tell."""
    if options.pairs:
        unknown = sorted({s for pair in options.pairs for s in pair} - set(systems))
        if unknown:
            raise ValueError(f"--pairs names system(s) not in the answers: {', '.join(unknown)}")
        return list(options.pairs)
    if options.versus:
        if options.versus not in systems:
            raise ValueError(
                f"--versus {options.versus!r} is not a system in the answers ({', '.join(systems)})"
            )
        return [(options.versus, s) for s in systems if s != options.versus]
    if len(systems) == 2:
        return [(systems[0], systems[1])]
    raise ValueError(
        f"pairwise needs the pairs to compare: the answers have {len(systems)} systems; "
        "give --pairs A:B[,C:D…] or --versus SYSTEM"
    )


class PairwiseRun(Metric):
    """The pairwise comparison in ``lawluo evaluate``: no value per answer; its results are the
    ``Results.pairs`` table (per system pair) and ``Results.pair_details`` (per question and pair)."""

    def check(self, inputs: Inputs, options: EvalOptions) -> None:
        system_pairs(inputs.systems, options)

    def run(self, run: Run) -> dict:
        inputs, results = run.inputs, run.results
        pairs = system_pairs(inputs.systems, run.options)
        text = {(a.id, a.system): a.text for a in inputs.answers}
        jobs = [
            (qid, first, second)
            for first, second in pairs
            for qid in inputs.references
            if (qid, first) in text and (qid, second) in text
        ]

        def judge(job: tuple[str, str, str]) -> PairOutcome:
            qid, first, second = job
            ref = inputs.references[qid]
            return judge_pair(run.judge, ref.question, ref.reference, text[(qid, first)], text[(qid, second)])

        outcomes = run.map(judge, jobs, "pairwise")
        by_pair: dict[tuple[str, str], list[PairOutcome]] = {}
        for (qid, first, second), outcome in zip(jobs, outcomes, strict=True):
            by_pair.setdefault((first, second), []).append(outcome)
            results.pair_details.append(outcome.record(qid, first, second).as_json())
        results.pairs = [
            {"first": first, "second": second, **summarise_pairs(by_pair.get((first, second), []))}
            for first, second in pairs
        ]
        return {}  # no value per answer


PAIRWISE = PairwiseRun()
