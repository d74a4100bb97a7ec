"""Pairwise preferences: win / tie / loss of a system pair, the table of every pair, and the paired
bootstrap test of two systems' win rates.

**both_bad counts as a tie everywhere**: neither answer is preferred, so for a win rate it is half a win
for each side (as the judge's draws are in :mod:`lawluo.metrics.pairwise`, LawLuo §5.1). Verdicts are
always in the item's un-swapped orientation.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from .bootstrap import PAIRWISE_BOOT, Bootstrap, _boot_sums
from .inputs import FLIP, SCORE, VERDICTS, _same_length, _scores, _verdict, _verdicts
from .intervals import _percentiles


def win_tie_loss(
    verdicts: Sequence[str | None],
    boot: Bootstrap = PAIRWISE_BOOT,
    groups: Sequence[Hashable] | None = None,
) -> dict[str, Any]:
    """Counts, shares and win rate of system A over system B, with percentile bootstrap CIs.

    ``verdicts`` are one system pair's labels ("A" = system_a wins, "B", "tie", "both_bad"; None is
    skipped and counted in ``missing``). ``win_share`` is the share of "A"; ``win_rate`` counts a
    tie **and a both_bad** as half a win, ``(A + (tie + both_bad) / 2) / n``, the convention of
    LawLuo §5.1 and of :mod:`lawluo.metrics.pairwise`. Both CIs are percentile bootstrap intervals
    (Efron & Tibshirani 1993, *An Introduction to the Bootstrap*, ch. 13) from the same resamples,
    ``numpy.random.default_rng(seed)``: of the verdicts (the resamples ``scipy.stats.bootstrap``
    draws), or, with ``groups`` (one item id per verdict), of the groups, every verdict of an item
    kept together (:func:`~eval_ui.stats.bootstrap.ratio_bootstrap`) — several annotators' labels of one
    item are not independent; a ``boot.resampler`` over the items shares its resamples with other
    statistics. Fewer than 2 units, or ``n_boot = 0``, give no CI.

    Worked example: 2 A, 1 B, 1 tie, 1 both_bad → win share 2/5 = 0.4, win rate (2 + 2/2)/5 = 0.6.

    >>> r = win_tie_loss(["A", "A", "B", "tie", "both_bad", None], Bootstrap(1000, seed=0))
    >>> r["n"], r["missing"], r["A"], r["B"], r["tie"], r["both_bad"], r["win_share"], r["win_rate"]
    (5, 1, 2, 1, 1, 1, 0.4, 0.6)
    >>> round(r["win_rate_low"], 2), round(r["win_rate_high"], 2)
    (0.3, 0.9)
    >>> win_tie_loss([])["win_rate"] is None
    True
    """
    clean = [_verdict(v) for v in verdicts]
    if groups is not None:
        _same_length(clean, groups, "verdicts and groups")
    keep = [v is not None for v in clean]
    kept = [v for v in clean if v is not None]
    n = len(kept)
    counts = Counter(kept)
    out: dict[str, Any] = {"n": n, "missing": len(clean) - n}
    out |= {v: counts[v] for v in VERDICTS}
    out |= {f"share_{v}": (counts[v] / n if n else None) for v in VERDICTS}
    wins = np.array([v == "A" for v in kept], dtype=float)
    scores = np.array([SCORE[v] for v in kept], dtype=float)
    out["win_share"] = float(wins.mean()) if n else None
    out["win_rate"] = float(scores.mean()) if n else None
    out |= dict.fromkeys(("win_share_low", "win_share_high", "win_rate_low", "win_rate_high"))
    kept_groups = None if groups is None else [g for g, k in zip(groups, keep, strict=True) if k]
    values = np.column_stack([wins, scores, np.ones(n)])
    sums, out["n_units"] = _boot_sums(values, kept_groups, boot)
    if sums is not None:
        with np.errstate(invalid="ignore", divide="ignore"):  # a resample without this pair's items: dropped
            shares, rates = sums[:, 0] / sums[:, 2], sums[:, 1] / sums[:, 2]
        out["win_share_low"], out["win_share_high"] = _percentiles(shares, boot.confidence)
        out["win_rate_low"], out["win_rate_high"] = _percentiles(rates, boot.confidence)
    out |= {"confidence": boot.confidence, "n_boot": boot.n_boot, "seed": boot.seed}
    return out


def _pair_columns(df: pd.DataFrame) -> None:
    missing = {"system_a", "system_b", "verdict"} - set(df.columns)
    if missing:
        raise ValueError(f"labels need columns system_a, system_b, verdict; missing {sorted(missing)}")
    same = df["system_a"] == df["system_b"]
    if same.any():
        raise ValueError(f"{int(same.sum())} rows compare a system with itself")


def pairwise_table(
    df: pd.DataFrame, boot: Bootstrap = PAIRWISE_BOOT, group_col: str | None = None
) -> pd.DataFrame:
    """:func:`win_tie_loss` per unordered system pair of a labels table (columns system_a, system_b, verdict).

    Each pair appears once, as (first, second) in sorted name order; a row labelled the other way
    round has its verdict flipped (A ↔ B; tie and both_bad stay), so ``A`` counts the first system's
    wins. ``group_col`` (e.g. ``item_id``) makes the bootstrap resample items, not labels (with a
    ``boot.resampler`` over those items, the same resamples for every pair; without ``group_col`` the
    resampler is not used). One row per pair with the pair's names and every key of :func:`win_tie_loss`.

    >>> labels = pd.DataFrame({"system_a": ["x", "y", "x", "y"], "system_b": ["y", "x", "y", "x"],
    ...                        "verdict": ["A", "A", "tie", "B"]})
    >>> t = pairwise_table(labels, Bootstrap(200))
    >>> t[["system_a", "system_b", "n", "A", "B", "tie", "win_rate"]].to_dict("records")
    [{'system_a': 'x', 'system_b': 'y', 'n': 4, 'A': 2, 'B': 1, 'tie': 1, 'win_rate': 0.625}]
    """
    _pair_columns(df)
    a = df["system_a"].to_numpy(dtype=object)
    b = df["system_b"].to_numpy(dtype=object)
    verdicts = _verdicts(df["verdict"])
    swap = np.array([x > y for x, y in zip(a, b, strict=True)], dtype=bool)
    flipped = pd.Series(verdicts, dtype=object).map(FLIP).to_numpy(dtype=object)
    verdicts = np.where(swap, flipped, verdicts)
    first, second = np.where(swap, b, a), np.where(swap, a, b)
    units = df[group_col].to_numpy(dtype=object) if group_col is not None else np.arange(len(df))
    groups: dict[tuple[str, str], tuple[list[str | None], list[Any]]] = {}
    if len(df):
        for key, rows in pd.Series(range(len(df))).groupby([first, second], sort=True).groups.items():
            groups[key] = ([None if pd.isna(v) else v for v in verdicts[rows]], list(units[rows]))
    per_pair = boot if group_col else boot.own()
    rows = [
        {"system_a": a, "system_b": b, **win_tie_loss(v, per_pair, groups=u if group_col else None)}
        for (a, b), (v, u) in sorted(groups.items())
    ]
    columns = ["system_a", "system_b", *win_tie_loss([]).keys()]
    return pd.DataFrame(rows, columns=columns)


def system_scores(
    df: pd.DataFrame, system: str, units: np.ndarray, n_units: int, scores: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Per unit (``units``: a unit code per row of ``df``): ``system``'s score (a win 1, a tie ½) and
    its number of comparisons; ``scores``: system_a's outcome per row, when already computed."""
    if scores is None:
        scores = _scores(_verdicts(df["verdict"]))
    is_a = (df["system_a"] == system).to_numpy() & ~np.isnan(scores)
    is_b = (df["system_b"] == system).to_numpy() & ~np.isnan(scores)
    points = np.where(is_a, scores, 0.0) + np.where(is_b, 1 - np.nan_to_num(scores), 0.0)
    taken = (is_a | is_b).astype(float)
    return (
        np.bincount(units, weights=points, minlength=n_units),
        np.bincount(units, weights=taken, minlength=n_units),
    )


def paired_bootstrap(
    df: pd.DataFrame,
    first: str,
    second: str,
    boot: Bootstrap = PAIRWISE_BOOT,
    group_col: str | None = "item_id",
) -> dict[str, Any]:
    """Paired bootstrap test of two systems' win rates: the difference, its CI and a two-sided p-value.

    A system's win rate is its score over every comparison it took part in (a win 1, a tie or
    both_bad ½, as in :func:`win_tie_loss`), read from its side of each label (columns system_a,
    system_b, verdict). The units resampled are ``group_col`` (items: every label of an item enters a
    resample together, and an item comparing the two systems counts for both in the same resample —
    the pairing); without that column each label is a unit. The CI is the percentile interval of the
    resampled differences d*; the p-value of "no difference" is (1 + #{|d* − d| ≥ |d|}) / (1 + B), the
    bootstrap distribution shifted to the null (Efron & Tibshirani 1993, §16.4; +1 as in Davison &
    Hinkley 1997, eq. 4.11; the "paired bootstrap test" of Koehn 2004 and Berg-Kirkpatrick et al.
    2012). Seeded with ``numpy.random.default_rng(seed)``; resamples in which either system has no
    comparison are dropped (``n_boot_used``); a ``boot.resampler`` over the items shares its resamples
    with the report's other statistics. When the two never met, their rates are against
    different opponents: read the difference with that in mind (``note``).

    Worked example: q1 x beats y, q2 x ties z, q3 y beats z, one label each: x scores 1 + ½ of 2
    comparisons = 0.75, y 0 + 1 of 2 = 0.5; the difference is 0.25.

    >>> labels = pd.DataFrame({"item_id": ["q1", "q2", "q3"], "system_a": ["x", "x", "y"],
    ...                        "system_b": ["y", "z", "z"], "verdict": ["A", "tie", "A"]})
    >>> r = paired_bootstrap(labels, "x", "y", Bootstrap(500, seed=0))
    >>> r["win_rate_first"], r["win_rate_second"], r["difference"], r["n_items"]
    (0.75, 0.5, 0.25, 3)
    >>> 0 < r["p_value"] <= 1 and r["low"] <= 0.25 <= r["high"]
    True
    """
    _pair_columns(df)
    if first == second:
        raise ValueError(f"compare two different systems, got {first!r} twice")
    out: dict[str, Any] = {"first": first, "second": second, "n_items": 0, "n_first": 0, "n_second": 0}
    keys = ("win_rate_first", "win_rate_second", "difference", "low", "high", "p_value")
    out |= dict.fromkeys(keys) | {"n_boot": boot.n_boot, "n_boot_used": 0, "seed": boot.seed}
    out |= {"confidence": boot.confidence, "met": 0, "note": ""}
    involved = df[df["system_a"].isin([first, second]) | df["system_b"].isin([first, second])]
    names = None
    if group_col is not None and group_col in involved.columns:
        units, names = pd.factorize(involved[group_col].to_numpy())
        names = list(names)
    else:
        units, boot = np.arange(len(involved)), boot.own()
    n_units = int(units.max()) + 1 if len(units) else 0
    scores = _scores(_verdicts(involved["verdict"]))
    score_1, taken_1 = system_scores(involved, first, units, n_units, scores)
    score_2, taken_2 = system_scores(involved, second, units, n_units, scores)
    out["n_items"] = int(((taken_1 > 0) | (taken_2 > 0)).sum())
    out["n_first"], out["n_second"] = int(taken_1.sum()), int(taken_2.sum())
    out["met"] = int(((taken_1 > 0) & (taken_2 > 0)).sum())
    missing = [name for name, taken in ((first, taken_1), (second, taken_2)) if not taken.sum()]
    if missing:
        out["note"] = f"no labelled comparison of {', '.join(missing)}"
        return out
    rate_1, rate_2 = score_1.sum() / taken_1.sum(), score_2.sum() / taken_2.sum()
    d = float(rate_1 - rate_2)
    out |= {"win_rate_first": float(rate_1), "win_rate_second": float(rate_2), "difference": d}
    if not out["met"]:
        out["note"] = (
            "the two systems were never compared with each other: their win rates are against other systems"
        )
    values = np.column_stack([score_1, taken_1, score_2, taken_2])
    return out | _difference_test(values, names, d, boot, out["note"])


def _difference_test(
    values: np.ndarray, names: list | None, d: float, boot: Bootstrap, note: str
) -> dict[str, Any]:
    """The paired test's resampled part: ``low``, ``high``, ``p_value`` and ``n_boot_used`` of the difference
    ``d`` of two win rates, from per-unit (score, comparisons) of each system (``values``, 4 columns);
    only ``note`` (with why added) when there are fewer than 2 units or no resamples."""
    sums, _ = _boot_sums(values, names, boot)
    if sums is None:
        return {"note": (note + "; " if note else "") + "a test needs at least 2 labelled items"}
    with np.errstate(invalid="ignore", divide="ignore"):
        draws = sums[:, 0] / sums[:, 1] - sums[:, 2] / sums[:, 3]
    draws = draws[np.isfinite(draws)]
    if not len(draws):
        return {"n_boot_used": 0}
    low, high = _percentiles(draws, boot.confidence)
    extreme = np.abs(draws - d) >= abs(d) - 1e-12
    p_value = float((1 + extreme.sum()) / (1 + len(draws)))
    return {"n_boot_used": len(draws), "low": low, "high": high, "p_value": p_value}
