"""An LLM judge's pairwise verdicts against the lawyers' (MT-bench S1 / S2), and its self-consistency."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from .bootstrap import DEFAULT_BOOT, Bootstrap, ratio_bootstrap
from .inputs import _judged, _same_length
from .intervals import wilson_interval


def _share(hits: Sequence[bool], groups: Sequence[Any] | None, boot: Bootstrap) -> tuple:
    """(share, low, high) of ``hits``: Wilson without ``groups``, else the cluster bootstrap over groups."""
    n = len(hits)
    if not n:
        return None, None, None
    if groups is None:
        return (sum(hits) / n, *wilson_interval(sum(hits), n, boot.confidence))
    r = ratio_bootstrap(np.asarray(hits, float), np.ones(n), boot, groups=groups)
    return r["value"], r["low"], r["high"]


def judge_agreement(
    judge: Sequence[str | None],
    human: Sequence[str | None],
    judge_swapped: Sequence[str | None] | None = None,
    *,
    groups: Sequence[Any] | None = None,
    boot: Bootstrap = DEFAULT_BOOT,
) -> dict[str, Any]:
    """Agreement of an LLM judge's pairwise verdicts with human verdicts (MT-bench S1 / S2), and its self-consistency.

    ``judge[i]`` and ``human[i]`` are verdicts ("A", "B", "tie"; both_bad counts as tie, None is
    missing and the pair is dropped) on the same item in the same orientation. To compare with every
    annotator rather than a majority, repeat the judge's verdict once per annotator (as MT-bench
    does) and pass the item ids as ``groups``. Following MT-bench (Zheng et al. 2023, §4.2, Table 2):
    **S1** ``agreement_with_tie`` is the exact-match share over all pairs (``n_with_tie``; chance
    1/3); **S2** ``agreement_without_tie`` keeps only pairs where neither side says tie
    (``n_without_tie``; chance 1/2). Their intervals are Wilson's (:func:`wilson_interval`), or with
    ``groups`` the percentile bootstrap over groups (:func:`ratio_bootstrap`: an item's pairs stay
    together; ``boot.resampler``: resamples shared with other statistics). ``judge_swapped`` are the
    judge's verdicts with the answers shown in swapped order, already mapped back to the un-swapped
    orientation; ``self_consistency`` is the share of items whose two verdicts agree (Zheng et al. 2023
    §3.3, "consistency"), over ``n_consistency``, Wilson interval.
    ``confusion[judge][human]`` counts the pairs kept with ties.

    Worked example: pairs (A,A) (B,A) (tie,B) (A,tie) (B,B): 2 of 5 match with ties; without ties
    (A,A) (B,A) (B,B) remain, 2 of 3 match. Swapped: A, A, tie, B, B → items 1, 3, 5 agree: 3/5.

    >>> r = judge_agreement(["A", "B", "tie", "A", "B"], ["A", "A", "B", "both_bad", "B"],
    ...                     judge_swapped=["A", "A", "tie", "B", "B"])
    >>> r["agreement_with_tie"], r["n_with_tie"], round(r["agreement_without_tie"], 4), r["n_without_tie"]
    (0.4, 5, 0.6667, 3)
    >>> r["self_consistency"], r["n_consistency"]
    (0.6, 5)
    """
    _same_length(judge, human, "judge and human")
    if groups is not None:
        _same_length(judge, groups, "judge and groups")
    judge_v = [_judged(v) for v in judge]
    human_v = [_judged(v) for v in human]
    unit = list(groups) if groups is not None else [None] * len(judge_v)
    pairs = [
        (j, h, g) for j, h, g in zip(judge_v, human_v, unit, strict=True) if j is not None and h is not None
    ]
    strict = [(j, h, g) for j, h, g in pairs if "tie" not in (j, h)]

    def share(kept: list[tuple[str, str, Any]]) -> tuple:
        hits = [a == b for a, b, _ in kept]
        return _share(hits, [g for *_, g in kept] if groups is not None else None, boot)

    labels = ("A", "B", "tie")
    seen = Counter((j, h) for j, h, _ in pairs)
    s1, s2 = share(pairs), share(strict)
    out: dict[str, Any] = {
        "n_with_tie": len(pairs),
        "agreement_with_tie": s1[0],
        "agreement_with_tie_low": s1[1],
        "agreement_with_tie_high": s1[2],
        "n_without_tie": len(strict),
        "agreement_without_tie": s2[0],
        "agreement_without_tie_low": s2[1],
        "agreement_without_tie_high": s2[2],
        "n_items": len({g for *_, g in pairs}) if groups is not None else len(pairs),
        "dropped": len(judge_v) - len(pairs),
        "confusion": {j: {h: seen[j, h] for h in labels} for j in labels},
        "n_consistency": 0,
        "self_consistency": None,
        "self_consistency_low": None,
        "self_consistency_high": None,
        "confidence": boot.confidence,
    }
    if judge_swapped is not None:
        _same_length(judge, judge_swapped, "judge and judge_swapped")
        out |= _self_consistency(judge_v, [_judged(v) for v in judge_swapped], boot.confidence)
    return out


def _self_consistency(
    judge: list[str | None], swapped: list[str | None], confidence: float
) -> dict[str, Any]:
    """How often the judge's verdict of an item stays the same with the answers swapped: ``n_consistency``
    (items with both verdicts) and, when there is one, ``self_consistency`` with its Wilson interval."""
    both = [j == s for j, s in zip(judge, swapped, strict=True) if j is not None and s is not None]
    if not both:
        return {"n_consistency": 0}
    low, high = wilson_interval(sum(both), len(both), confidence)
    return {
        "n_consistency": len(both),
        "self_consistency": sum(both) / len(both),
        "self_consistency_low": low,
        "self_consistency_high": high,
    }
