"""The LLM judge against the lawyers: MT-bench's S1 and S2 against every annotator's verdict, and the
judge's self-consistency with the answers swapped (with a warning when it flips)."""

from __future__ import annotations

import pandas as pd

from lawluo.i18n import Message, message
from lawluo.metrics.pairwise import MIN_JUDGE_CONSISTENCY

from .. import stats
from .auto import AutoMetrics, _qids, combined_judge_verdict
from .report import Report, Section, _rounded, _section, _set
from .specs import SPECS


def _judge(labels: pd.DataFrame, auto: AutoMetrics | None, report: Report, boot: stats.Bootstrap) -> Section:
    title = "LLM 裁判与律师 The LLM judge against the lawyers"
    keys = ["judge_s1", "judge_s2", "judge_consistency"]
    if not auto or not auto.judge:
        return _section(
            title,
            None,
            message(
                "stats.note.no_judge",
                file="pairwise.jsonl",
                command="`python -m lawluo evaluate --metrics pairwise`",
            ),
            keys,
        )
    if labels.empty:
        return Section(title, None, "", keys)
    judge, human, groups = [], [], []
    first_order: dict[str, tuple[str | None, str | None]] = {}
    for item_id, qid, a, b, verdict in zip(
        labels["item_id"],
        _qids(labels),
        labels["system_a"],
        labels["system_b"],
        labels["verdict"],
        strict=True,
    ):
        found = auto.judged(qid, a, b) if qid else None
        if found is None:
            continue
        first_order[item_id] = found
        judge.append(combined_judge_verdict(*found))  # compared with every annotator (MT-bench)
        human.append(verdict)
        groups.append(item_id)
    result = stats.judge_agreement(judge, human, groups=groups, boot=boot)
    orders = list(first_order.values())
    consistency = stats.judge_agreement(
        [o[0] for o in orders],
        [o[0] for o in orders],
        judge_swapped=[o[1] for o in orders],
        boot=stats.NO_BOOT,
    )
    rows = []
    for key, value, low, high, n in (
        ("judge_s1", result["agreement_with_tie"], result["agreement_with_tie_low"],
         result["agreement_with_tie_high"], result["n_with_tie"]),
        ("judge_s2", result["agreement_without_tie"], result["agreement_without_tie_low"],
         result["agreement_without_tie_high"], result["n_without_tie"]),
        ("judge_consistency", consistency["self_consistency"], consistency["self_consistency_low"],
         consistency["self_consistency_high"], consistency["n_consistency"]),
    ):  # fmt: skip
        rows.append({"measure": SPECS[key].title, "value": value, "low": low, "high": high, "n": n})
        if value is not None:
            _set(report, key, value, low, high, n)
    note = message("stats.note.judge", n=len(first_order), n_boot=boot.n_boot)
    if not first_order:
        note = message("stats.note.judge_none")
    warning = judge_warning(consistency["self_consistency"], consistency["n_consistency"])
    if warning is not None:
        note = message("stats.note.warning", warning=warning, note=note)
    return _section(title, _rounded(pd.DataFrame(rows)), note, keys)


def judge_warning(consistency: float | None, n: int) -> Message | None:
    """A plain warning when the judge flips with the order of the answers (self-consistency below
    :data:`~lawluo.metrics.pairwise.MIN_JUDGE_CONSISTENCY`): its verdicts are then not a measurement, whatever
    the figures beside them say. None otherwise."""
    if consistency is None or consistency >= MIN_JUDGE_CONSISTENCY:
        return None
    return message(
        "stats.note.judge_warning",
        share=f"{consistency:.0%}",
        n=n,
        least=f"{MIN_JUDGE_CONSISTENCY:.0%}",
        doc="docs/models.md",
    )
