"""A metric's scores (Rel, T_LC) against the mean human scores: Pearson and Spearman with their intervals."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .inputs import _check_confidence, _number, _same_length
from .intervals import _fisher_interval


def correlation(
    auto: Sequence[float | None], human: Sequence[float | None], confidence: float = 0.95
) -> dict[str, Any]:
    """Pearson and Spearman correlation of a metric (Rel, T_LC) with mean human scores, with CIs and p-values.

    Pairs where either side is None or NaN are dropped (``dropped``); ``n`` is what remains.
    Pearson r, its two-sided p-value and CI come from ``scipy.stats.pearsonr`` (CI by Fisher's z,
    SE 1 / √(n − 3)); Spearman ρ and p from ``scipy.stats.spearmanr``, its CI by Fisher's z with the
    Bonett & Wright (2000, *Psychometrika* 65:23–28) SE √((1 + ρ²/2) / (n − 3)). With n = 3
    the intervals are the whole range (−1, 1). Values are None, with a ``note``, when n < 3 or a
    side is constant. LegalHalBench §5.6 reports these for Rel and T_LC.

    Worked example (n = 4): x = 1, 2, 3, 4 and y = 1, 3, 2, 4. Ranks equal values, so ρ = r =
    1 − 6·Σd²/(n(n² − 1)) = 1 − 6·2/60 = 0.8; Spearman CI: atanh(.8) = 1.0986, SE = √(1.32/1) = 1.1489,
    1.0986 ± 1.96·1.1489 → tanh(−1.1532, 3.3504) = (−0.8188, 0.9975).

    >>> r = correlation([1, 2, 3, 4, None], [1, 3, 2, 4, 5])
    >>> r["n"], r["dropped"], round(r["pearson"], 4), round(r["spearman"], 4)
    (4, 1, 0.8, 0.8)
    >>> round(r["spearman_low"], 4), round(r["spearman_high"], 4)
    (-0.8188, 0.9975)
    >>> correlation([1, 2], [2, 1])["pearson"] is None
    True
    """
    _check_confidence(confidence)
    _same_length(auto, human, "auto and human")
    pairs = [(_number(x), _number(y)) for x, y in zip(auto, human, strict=True)]
    kept = [(x, y) for x, y in pairs if x is not None and y is not None]
    n = len(kept)
    keys = ("pearson", "pearson_p", "pearson_low", "pearson_high")
    keys += ("spearman", "spearman_p", "spearman_low", "spearman_high")
    out: dict[str, Any] = {"n": n, "dropped": len(pairs) - n, **dict.fromkeys(keys), "note": ""}
    out["confidence"] = confidence
    if n < 3:
        out["note"] = f"a correlation needs at least 3 pairs, got {n}"
        return out
    x, y = np.array(kept, dtype=float).T
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        out["note"] = "one side is constant: the correlation is undefined"
        return out
    from scipy.stats import pearsonr, spearmanr

    pearson = pearsonr(x, y)
    low, high = pearson.confidence_interval(confidence_level=confidence)
    out |= {"pearson": float(pearson.statistic), "pearson_p": float(pearson.pvalue)}
    out |= {"pearson_low": float(low), "pearson_high": float(high)}
    spearman = spearmanr(x, y)
    rho = float(spearman.statistic)
    se = math.sqrt((1 + rho**2 / 2) / (n - 3)) if n > 3 else math.inf
    low, high = _fisher_interval(rho, se, confidence)
    out |= {"spearman": rho, "spearman_p": float(spearman.pvalue), "spearman_low": low, "spearman_high": high}
    if n == 3:
        out["note"] = "n = 3: the confidence intervals span (-1, 1)"
    return out
