"""The judge of ``bench tolc``: which key facts the clarification recovered, and which answer is better.

**Recovered key facts** (LeCoDe's clarification recall, Yuan et al., arXiv:2505.19667 §4): the judge
reads a case's key facts and the elements the simulated client answered yes (confirmed) and no (denied),
and says of every fact whether those answers establish it (prompt ``tolc/bench_recovered``). A fact is
recovered or not; nothing confirmed or denied recovers nothing, without asking the judge. A reply that
is not valid JSON, or that leaves a fact out, is a judge failure: the case is not scored (never scored 0).

**Pairwise preference** (MT-bench, Zheng et al. 2023 §3.3; LegalHalBench A.6): the answer after
clarification against the answer at once, each judged twice with the positions swapped, knowing the
client's whole situation (prompt ``tolc/bench_pairwise``, the scores of ``metrics/pairwise``); the two
verdicts decide the pair when they agree, otherwise it is a draw (:func:`lawluo.metrics.pairwise.combine`).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Annotated, Literal

from pydantic import BaseModel, Field, create_model

from ...llm import LLMError
from ...prompts.untrusted import quote
from ..judge import ANSWER_BUDGET, FATAL, QUESTION_BUDGET, Judge, untrusted
from ..pairwise import PairOutcome, pair_outcome, preference_side, verdict_row
from .cases import BenchCase
from .simulated import render_facts

NONE_LISTED = "（无）"


class FactVerdict(BaseModel):
    id: str = Field(max_length=20)
    recovered: bool


class FactVerdicts(BaseModel):
    facts: list[FactVerdict] = Field(max_length=100)


@functools.lru_cache(maxsize=64)
def verdicts_for(ids: tuple[str, ...]) -> type[FactVerdicts]:
    """:class:`FactVerdicts` for a case whose facts are ``ids``: exactly one item per fact, each id one of
    them. The JSON schema says so (``enum``, ``minItems`` = ``maxItems``), so a llama.cpp server's grammar
    keeps a small model from stopping early: the 1.5B left out a fact in 14 of 60 replies of the sample
    (``bench tolc``'s judge check). Any order is accepted; a repeated id still leaves a fact out.

    >>> schema = verdicts_for(("f1", "f2")).model_json_schema()
    >>> facts = schema["properties"]["facts"]
    >>> facts["minItems"], facts["maxItems"], schema["$defs"]["Verdict"]["properties"]["id"]["enum"]
    (2, 2, ['f1', 'f2'])
    """
    verdict = create_model("Verdict", __base__=FactVerdict, id=(Literal[ids], ...))  # type: ignore[valid-type]
    bounded = Annotated[list[verdict], Field(min_length=len(ids), max_length=len(ids))]  # type: ignore[valid-type]
    return create_model("FactVerdicts", __base__=FactVerdicts, facts=(bounded, ...))


class JudgeFailed(LLMError):
    """The judge's reply could not be used (a fact left out); the message says what was wrong."""


def _listed(statements: Sequence[str]) -> str:
    return quote("\n".join(f"- {s}" for s in statements)) if statements else NONE_LISTED


def recovered_facts(
    judge: Judge, case: BenchCase, confirmed: Sequence[str], denied: Sequence[str]
) -> dict[str, bool]:
    """Fact id → recovered, for every fact of ``case``.

    Raises :class:`~lawluo.llm.errors.LLMError` (:class:`JudgeFailed` when the verdicts leave a fact out).
    With nothing confirmed or denied every fact is unrecovered and the judge is not asked."""
    if not confirmed and not denied:
        return {f.id: False for f in case.facts}
    reply = judge.ask(
        "tolc/bench_recovered",
        as_type=verdicts_for(tuple(f.id for f in case.facts)),
        facts=quote(render_facts(case)),
        confirmed=_listed(confirmed),
        denied=_listed(denied),
    )
    verdicts: dict[str, bool] = {}
    for item in reply.facts:
        verdicts.setdefault(item.id, item.recovered)
    missing = [f.id for f in case.facts if f.id not in verdicts]
    if missing:
        raise JudgeFailed(f"the judge gave no verdict for fact(s) {', '.join(missing)}")
    return {f.id: verdicts[f.id] for f in case.facts}


def prefer(judge: Judge, case: BenchCase, first: str, second: str) -> PairOutcome:
    """``first`` (the answer after clarification) against ``second`` (the answer at once), both orders.

    A missing answer (empty text) is not judged: the outcome has no result and says why."""
    if not first.strip() or not second.strip():
        which = "after clarification" if not first.strip() else "at once"
        return PairOutcome(None, None, errors=[f"no answer {which} to compare"])
    shared = {
        "question": untrusted(case.question, QUESTION_BUDGET, "question"),
        "situation": quote(render_facts(case)),
    }
    first_q, second_q = untrusted(first, ANSWER_BUDGET, "answer"), untrusted(second, ANSWER_BUDGET, "answer")
    sides, verdicts, errors = [], [], []
    for first_is_a in (True, False):
        a, b = (first_q, second_q) if first_is_a else (second_q, first_q)
        order = "first=A" if first_is_a else "first=B"
        try:
            verdict = judge.ask("tolc/bench_pairwise", answer_a=a, answer_b=b, **shared)
        except FATAL:
            raise
        except LLMError as exc:
            errors.append(f"{order}: {type(exc).__name__}: {exc}")
            continue
        sides.append(preference_side(verdict.preference, first_is_a))
        verdicts.append(verdict_row(verdict, first_is_a, order))
    return pair_outcome(sides, verdicts, errors)
