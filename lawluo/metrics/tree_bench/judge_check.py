"""The key-fact judge of ``bench tolc`` against hand labels, before its figures are believed (issue 41 item 6).

A judge that says "recovered" of everything (or of nothing) makes any clarification look good (or bad). So
``bench tolc`` first asks its judge about a fixed, hand-labelled sample and prints how far it agrees, beside
the key-fact figures; below :data:`MIN_FACT_JUDGE_KAPPA` it reports no key-fact figure at all, as the
pairwise rows do for a judge that flips with the order.

The sample (``benchmarks/data/tolc_judge_sample.jsonl``, its README says who labelled it and how) is two
files: the cases (:func:`~.cases.read_cases`' format, ``*.cases.jsonl``) and one row per set of answers::

    {"case_id": "lawyer_llama-mt-0368", "part": "tree", "confirmed": ["…？"], "denied": ["…？"],
     "recovered": {"f1": true, "f2": false}, "note": "…"}

Every row with something confirmed or denied is put to the judge exactly as the bench does
(:func:`~.judge.recovered_facts`); rows with nothing answered are left out (the bench does not ask the judge
about them either). Agreement is the share of facts on which judge and label agree, with Cohen's κ (chance
corrected: a judge that always says false scores 0 whatever the labels' balance).
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError
from sklearn.metrics import cohen_kappa_score

from ...jsonl import JSONLError, read_jsonl
from ...llm import LLMError
from ..judge import FATAL, Judge
from .cases import BenchCase, read_cases
from .judge import recovered_facts

log = logging.getLogger(__name__)

DEFAULT_SAMPLE = Path(__file__).resolve().parents[3] / "benchmarks" / "data" / "tolc_judge_sample.jsonl"
#: Below this κ with the hand labels the bench prints no key-fact figure ("substantial" agreement in Landis
#: and Koch's reading of κ begins at 0.61).
MIN_FACT_JUDGE_KAPPA = 0.6


class SampleRow(BaseModel):
    """One set of yes/no answers to a case's elements and, for each key fact, whether they recover it."""

    case_id: str = Field(min_length=1, max_length=100)
    part: str = Field(default="", max_length=40)
    confirmed: list[str] = Field(default=[], max_length=100)
    denied: list[str] = Field(default=[], max_length=100)
    recovered: dict[str, bool]
    note: str = Field(default="", max_length=2_000)


@dataclass
class SampleItem:
    case: BenchCase
    row: SampleRow


def cases_path(sample: Path) -> Path:
    """The cases file beside a sample: ``x.jsonl`` → ``x.cases.jsonl``."""
    return sample.with_name(sample.name.removesuffix(".jsonl") + ".cases.jsonl")


def read_sample(path: str | Path) -> list[SampleItem]:
    """The rows of ``path`` joined to their cases; :class:`ValueError` naming every bad line."""
    path = Path(path)
    cases = {c.id: c for c in read_cases(cases_path(path))}
    try:
        rows = read_jsonl(path)
    except JSONLError as exc:
        raise ValueError(str(exc)) from None
    items, errors = [], []
    for n, obj in rows:
        try:
            row = SampleRow.model_validate(obj)
        except ValidationError as exc:
            errors.append(f"{path}:{n}: {exc.errors()[0]['msg']}")
            continue
        case = cases.get(row.case_id)
        if case is None:
            errors.append(f"{path}:{n}: case {row.case_id!r} is not in {cases_path(path).name}")
        elif set(row.recovered) != {f.id for f in case.facts}:
            errors.append(f"{path}:{n}: the labels do not name each of the case's facts once")
        else:
            items.append(SampleItem(case, row))
    if errors:
        raise ValueError("\n".join(errors[:20]))
    if not items:
        raise ValueError(f"{path}: no labelled row")
    return items


def agreement_kappa(labels: list[bool], verdicts: list[bool]) -> float | None:
    """Cohen's κ of the judge's verdicts against the labels; None when nothing was compared.

    A judge that says one thing throughout agrees by chance only: κ 0, not undefined. Both sides saying the
    same one thing throughout is full agreement.

    >>> agreement_kappa([True, False, True], [True, True, True]), agreement_kappa([True, True], [True, True])
    (0.0, 1.0)
    """
    if len(set(labels)) > 1 or len(set(verdicts)) > 1:
        return float(cohen_kappa_score(labels, verdicts))
    if labels:
        return 1.0 if labels[0] == verdicts[0] else 0.0
    return None


def check_judge(judge: Judge, sample: list[SampleItem]) -> dict[str, Any]:
    """The judge's verdicts on every answered row of ``sample`` against its labels.

    Returns ``rows`` (asked), ``facts`` (compared), ``agreement``, ``kappa`` (None when nothing was
    compared), ``labelled_true``/``judged_true`` (facts), ``failed_rows`` (unusable replies: left out),
    ``failed_why`` (their error types, counted) and ``trustworthy`` (κ ≥ :data:`MIN_FACT_JUDGE_KAPPA`). A fatal
    model error (no model, a rejected key) is raised.
    """
    labels: list[bool] = []
    verdicts: list[bool] = []
    asked = 0
    failed: Counter[str] = Counter()
    for item in sample:
        row = item.row
        if not row.confirmed and not row.denied:
            continue
        asked += 1
        try:
            said = recovered_facts(judge, item.case, row.confirmed, row.denied)
        except FATAL:
            raise
        except LLMError as exc:
            failed[type(exc).__name__] += 1
            log.warning("key-fact judge, sample case %s: reply unusable: %.300s", item.case.id, exc)
            continue
        for fact in item.case.facts:
            labels.append(row.recovered[fact.id])
            verdicts.append(said[fact.id])
    agree = sum(a == b for a, b in zip(labels, verdicts, strict=True))
    kappa = agreement_kappa(labels, verdicts)
    return {
        "rows": asked,
        "facts": len(labels),
        "agreement": agree / len(labels) if labels else None,
        "kappa": kappa,
        "labelled_true": sum(labels),
        "judged_true": sum(verdicts),
        "failed_rows": sum(failed.values()),
        "failed_why": dict(failed.most_common()),
        "trustworthy": kappa is not None and kappa >= MIN_FACT_JUDGE_KAPPA,
    }
