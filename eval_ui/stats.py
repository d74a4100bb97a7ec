"""Human-consistency statistics: lawyers' pairwise verdicts and scores against each other and the metrics.

Pure functions on plain Python sequences or pandas DataFrames; nothing here reads files or plots.
The library that defines a statistic computes it where one does (scipy, statsmodels, ``krippendorff``);
this module cleans the input, encodes labels, handles the empty and degenerate cases (a result with
``n = 0`` and ``None`` values and a ``note``, never an exception) and names the outputs. Bootstrap
resamples are drawn once per statistic as an index matrix and evaluated with array operations (no
Python loop per resample), so a report on thousands of labels takes a fraction of a second.

Pairwise verdicts are ``"A"`` (system_a's answer is better), ``"B"``, ``"tie"`` and ``"both_bad"``,
always in the item's un-swapped orientation. **both_bad counts as a tie everywhere**: neither answer
is preferred, so for a win rate it is half a win for each side (as the judge's draws are in
:mod:`lawluo.metrics.pairwise`, LawLuo §5.1), for Bradley–Terry half a win each, and for agreement
with a judge (who says only A / B / tie) it is "tie". ``None`` or NaN is a missing label and is
skipped (and counted); any other string is an error.

- Intervals: :func:`wilson_interval` (a proportion), :func:`ratio_bootstrap` (a ratio of sums over
  units resampled with replacement: items, keeping each item's labels together).
- Pairwise preferences: :func:`win_tie_loss`, :func:`pairwise_table`, :func:`bradley_terry`,
  :func:`paired_bootstrap` (two systems' win rates, a paired test).
- Automatic metrics against humans (LegalHalBench §5.6): :func:`nhsr_agreement` and :func:`majority`
  (NHSR's per-statute verdict), :func:`verdict_agreement` and :func:`majority_labels` (each checker
  verdict against the lawyers' statute labels), :func:`correlation` (Rel, T_LC), :func:`judge_agreement`
  (MT-bench's S1 / S2).
- Inter-annotator agreement: :func:`krippendorff_alpha` (with :func:`to_reliability_matrix`),
  :func:`fleiss_kappa`, :func:`annotator_agreement` (each annotator against the majority of the
  others: who drifts), :func:`rater_pair_agreement` (human–human S1 / S2).
"""

from __future__ import annotations

import math
import warnings
from collections import Counter
from collections.abc import Hashable, Iterable, Sequence
from statistics import NormalDist
from typing import Any, Literal

import numpy as np
import pandas as pd

from eval_ui import verdicts

#: The verdicts (eval_ui/verdicts.py); FLIP: a verdict as seen from the other system (the pair read as
#: (system_b, system_a)); SCORE: system_a's Bradley–Terry outcome, half a win for tie and both_bad.
VERDICTS, FLIP, SCORE = verdicts.VERDICTS, verdicts.FLIP, verdicts.SCORE
#: Elo-like scale of a Bradley–Terry coefficient: 400 / ln 10 · β + 1000 (as Chatbot Arena reports).
ELO_SCALE = 400 / math.log(10)
ELO_BASE = 1000.0


# --------------------------------------------------------------------------- input cleaning


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA


def _verdict(value: Any) -> str | None:
    """A verdict string, or None when missing; anything else is an error."""
    if _missing(value):
        return None
    if value not in VERDICTS:
        raise ValueError(f"unknown verdict {value!r}; expected one of {VERDICTS} or None")
    return value


def _verdicts(values: Any) -> np.ndarray:
    """A column of verdicts as an object array (None where missing); anything not a verdict is an error.

    The vectorised :func:`_verdict`, for whole columns (pandas' Arrow-backed text is slow to walk in Python).
    """
    array = np.array(pd.Series(values, dtype=object).to_numpy(dtype=object), dtype=object, copy=True)
    missing = pd.isna(array)
    array[missing] = None
    bad = ~missing & ~pd.Series(array).isin(VERDICTS).to_numpy()
    if bad.any():
        raise ValueError(f"unknown verdict {array[bad][0]!r}; expected one of {VERDICTS} or None")
    return array


def _scores(verdicts: np.ndarray) -> np.ndarray:
    """System_a's outcome of each verdict (1, 0, ½; NaN where missing)."""
    return pd.Series(verdicts, dtype=object).map(SCORE).to_numpy(dtype=float)


def _flag(value: Any) -> bool | None:
    """A yes/no label (bool, numpy bool, 0 or 1), or None when missing."""
    if _missing(value):
        return None
    if isinstance(value, (bool, np.bool_)) or (
        isinstance(value, (int, float, np.number)) and value in (0, 1)
    ):
        return bool(value)
    raise ValueError(f"expected a bool label (or None), got {value!r}")


def _flags(values: Sequence[Any]) -> tuple[np.ndarray, np.ndarray]:
    """(flags, known) of yes/no labels: the vectorised :func:`_flag` (None / NaN are unknown)."""
    column = pd.Series(list(values), dtype=object)
    known = column.notna().to_numpy()
    valid = column.map(lambda v: isinstance(v, bool | np.bool_ | int | float | np.number) and v in (0, 1))
    bad = known & ~valid.to_numpy(dtype=bool)
    if bad.any():
        raise ValueError(f"expected a bool label (or None), got {column[bad].iloc[0]!r}")
    return column.where(known, False).astype(bool).to_numpy(), known


def _number(value: Any) -> float | None:
    if _missing(value):
        return None
    number = float(value)
    return None if math.isnan(number) else number


def _same_length(left: Sequence, right: Sequence, names: str) -> None:
    if len(left) != len(right):
        raise ValueError(f"{names} must have the same length, got {len(left)} and {len(right)}")


def _check_confidence(confidence: float) -> None:
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")


# --------------------------------------------------------------------------- intervals

#: Resample indices drawn at a time (memory stays near 8 bytes × this, whatever the data size).
CHUNK_ELEMENTS = 2_000_000


def _z(confidence: float) -> float:
    """The standard normal quantile of a two-sided ``confidence`` interval (1.95996… for 0.95)."""
    return NormalDist().inv_cdf(0.5 + confidence / 2)


def wilson_interval(successes: float, n: int, confidence: float = 0.95) -> tuple[float | None, float | None]:
    """The Wilson score interval of the proportion ``successes / n``; ``(None, None)`` when n = 0.

    Wilson (1927, *JASA* 22:209–212), which Brown, Cai & DasGupta (2001, *Statist. Sci.* 16:101–133)
    recommend over the Wald interval for small n and proportions near 0 or 1: with p̂ = x / n and z
    the normal quantile, centre (p̂ + z²/2n) / (1 + z²/n) and half-width
    z / (1 + z²/n) · √(p̂(1 − p̂)/n + z²/4n²); ``statsmodels``' ``proportion_confint(method="wilson")``.

    Worked example: 8 of 10 at 95% (z = 1.95996, z²/n = 0.38415): centre (0.8 + 0.19207) / 1.38415
    = 0.71674, half-width 1.41601 · √(0.016 + 0.0096036) = 0.22658 → (0.4902, 0.9433).

    >>> low, high = wilson_interval(8, 10)
    >>> round(low, 4), round(high, 4)
    (0.4902, 0.9433)
    >>> wilson_interval(0, 0)
    (None, None)
    """
    _check_confidence(confidence)
    if n <= 0:
        return None, None
    z, p = _z(confidence), successes / n
    shrink = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / shrink
    half = z / shrink * math.sqrt(max(p * (1 - p) / n + z * z / (4 * n * n), 0.0))
    return max(0.0, centre - half), min(1.0, centre + half)


def _draw_counts(n: int, n_boot: int, seed: int) -> np.ndarray:
    """How often each of ``n`` units is drawn in each of ``n_boot`` resamples with replacement: (n_boot, n).

    The resamples are ``numpy.random.default_rng(seed).integers(0, n, size=(n_boot, n))`` (the index
    matrix ``scipy.stats.bootstrap`` draws with the same generator), taken in chunks of about
    :data:`CHUNK_ELEMENTS` indices, each chunk's indices counted per resample with one ``bincount``.
    Kept as float32: counts are exact, and the products with it read half the memory of float64.
    """
    rng = np.random.default_rng(seed)
    out = np.empty((n_boot, n), dtype=np.float32)
    step = max(1, CHUNK_ELEMENTS // max(n, 1))
    for start in range(0, n_boot, step):
        size = min(step, n_boot - start)
        pick = rng.integers(0, n, size=(size, n))
        pick += np.arange(size)[:, None] * n
        out[start : start + size] = np.bincount(pick.ravel(), minlength=size * n).reshape(size, n)
    return out


def _resampled_sums(values: np.ndarray, n_boot: int, seed: int) -> np.ndarray:
    """Column sums of ``values`` (n units × m) in each of ``n_boot`` resamples of the units: (n_boot, m)."""
    values = np.asarray(values, dtype=np.float64).reshape(len(values), -1)
    counts = _draw_counts(len(values), n_boot, seed)
    return (counts @ values.astype(counts.dtype)).astype(np.float64)


class Resampler:
    """Bootstrap resamples of one set of units (a report's labelled items), drawn once and shared.

    Every interval computed with the same resampler comes from the same resampled data sets — the
    bootstrap of the whole experiment (Efron & Tibshirani 1993, ch. 6): a statistic on a subset of the
    items (one system pair, the statutes of some answers) takes, in each resample, the drawn items of
    its subset, every row of an item (its labels, its statutes) together. Statistics made of sums over
    items need only ``counts`` (n_boot × items: how often each item was drawn, :func:`_draw_counts`)
    times their per-item sums: one matrix product gives all resamples.

    >>> r = Resampler(["q1", "q2", "q3"], n_boot=5, seed=0)
    >>> sums = r.sums([[1.0], [2.0], [4.0], [8.0]], ["q1", "q2", "q3", "q3"])
    >>> sums.shape, bool((sums[:, 0] == r.counts @ [1.0, 2.0, 12.0]).all())
    ((5, 1), True)
    """

    def __init__(self, units: Iterable[Hashable], n_boot: int = 1000, seed: int = 0) -> None:
        self.units = pd.Index(pd.unique(_objects(units)))
        self.n_boot, self.seed = int(n_boot), seed
        self._counts: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.units)

    @property
    def counts(self) -> np.ndarray:
        if self._counts is None:
            self._counts = _draw_counts(len(self.units), self.n_boot, self.seed)
        return self._counts

    def positions(self, groups: Sequence[Hashable]) -> np.ndarray:
        """Each group's unit position; a group that is not a unit is an error."""
        groups = _objects(groups)
        found = self.units.get_indexer(groups)
        if (found < 0).any():
            raise ValueError(f"{groups[int(np.argmin(found))]!r} is not one of the resampled units")
        return found

    def sums(self, values: Any, groups: Sequence[Hashable]) -> np.ndarray:
        """Column sums of ``values`` (one row per group entry, m columns) in every resample: (n_boot, m)."""
        values = np.asarray(values, dtype=np.float64).reshape(len(groups), -1)
        where = self.positions(groups)
        totals = np.stack(
            [
                np.bincount(where, weights=values[:, c], minlength=len(self.units))
                for c in range(values.shape[1])
            ],
            axis=1,
        )
        return (self.counts @ totals.astype(self.counts.dtype)).astype(np.float64)


def _objects(values: Iterable[Any]) -> np.ndarray:
    """``values`` as a 1-d object array (quickly, from a pandas column or a numpy array)."""
    if isinstance(values, pd.Series | pd.Index | np.ndarray):
        return np.asarray(
            values.to_numpy(dtype=object) if not isinstance(values, np.ndarray) else values, dtype=object
        )
    array = np.empty(len(values := list(values)), dtype=object)
    array[:] = values
    return array


def _boot_sums(
    values: Any, groups: Sequence[Hashable] | None, n_boot: int, seed: int, resampler: Resampler | None
) -> tuple[np.ndarray | None, int]:
    """(resampled column sums or None, number of units): the units are ``groups`` (each row its own
    unit when None), resampled by ``resampler`` (else drawn here from ``n_boot`` and ``seed``).
    None — no interval — with fewer than 2 units or no resamples."""
    n = len(values)
    groups = list(range(n)) if groups is None else list(groups)
    units = len(set(groups))
    if resampler is None:
        if units < 2 or n_boot <= 0:
            return None, units
        resampler = Resampler(groups, n_boot, seed)
    elif units < 2 or resampler.n_boot <= 0:
        return None, units
    return resampler.sums(values, groups), units


def _percentiles(draws: np.ndarray, confidence: float) -> tuple[float | None, float | None]:
    """The percentile interval of the finite bootstrap draws (Efron & Tibshirani 1993, ch. 13)."""
    kept = draws[np.isfinite(draws)]
    if not kept.size:
        return None, None
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(kept, [tail, 100 - tail])
    return float(low), float(high)


def ratio_bootstrap(
    numerator: Sequence[float],
    denominator: Sequence[float],
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    *,
    groups: Sequence[Hashable] | None = None,
    resampler: Resampler | None = None,
) -> dict[str, Any]:
    """Σ numerator / Σ denominator over units, with a percentile bootstrap interval resampling the units.

    A unit is a cluster of observations that enter a resample together — an item with all its
    labels — so labels of one item (which are not independent) are never split: the cluster
    bootstrap of a ratio estimator (Davison & Hinkley 1997, *Bootstrap Methods and their
    Application*, §3.8; percentile interval, Efron & Tibshirani 1993, ch. 13). Resamples whose
    denominator is 0 are dropped (``n_boot_used``). Fewer than 2 units, or ``n_boot = 0``: no interval.
    A unit is a row, or with ``groups`` (one id per row) all the rows of a group; a ``resampler``
    (:class:`Resampler`, whose ``n_boot`` and ``seed`` then apply) shares its resamples with other statistics.

    Worked example: items with 1 of 2 and 3 of 3 labels agreeing → (1 + 3) / (2 + 3) = 0.8.

    >>> r = ratio_bootstrap([1, 3], [2, 3], n_boot=200, seed=0)
    >>> r["value"], r["n_units"], r["low"] <= 0.8 <= r["high"]
    (0.8, 2, True)
    >>> ratio_bootstrap([], [])["value"] is None
    True
    """
    _check_confidence(confidence)
    _same_length(numerator, denominator, "numerator and denominator")
    values = np.column_stack([np.asarray(numerator, float), np.asarray(denominator, float)])
    total = values.sum(axis=0) if len(values) else np.zeros(2)
    out: dict[str, Any] = {"value": None, "low": None, "high": None, "n_units": 0}
    out |= {"n_boot": n_boot, "n_boot_used": 0, "seed": seed, "confidence": confidence}
    if total[1] <= 0:
        out["n_units"] = len(set(groups)) if groups is not None else len(values)
        return out
    out["value"] = float(total[0] / total[1])
    sums, out["n_units"] = _boot_sums(values, groups, n_boot, seed, resampler)
    if sums is not None:
        with np.errstate(invalid="ignore", divide="ignore"):
            draws = sums[:, 0] / sums[:, 1]
        out["n_boot_used"] = int(np.isfinite(draws).sum())
        out["low"], out["high"] = _percentiles(draws, confidence)
    return out


# --------------------------------------------------------------------------- pairwise preferences


def win_tie_loss(
    verdicts: Sequence[str | None],
    n_boot: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
    groups: Sequence[Hashable] | None = None,
    resampler: Resampler | None = None,
) -> dict[str, Any]:
    """Counts, shares and win rate of system A over system B, with percentile bootstrap CIs.

    ``verdicts`` are one system pair's labels ("A" = system_a wins, "B", "tie", "both_bad"; None is
    skipped and counted in ``missing``). ``win_share`` is the share of "A"; ``win_rate`` counts a
    tie **and a both_bad** as half a win, ``(A + (tie + both_bad) / 2) / n``, the convention of
    LawLuo §5.1 and of :mod:`lawluo.metrics.pairwise`. Both CIs are percentile bootstrap intervals
    (Efron & Tibshirani 1993, *An Introduction to the Bootstrap*, ch. 13) from the same resamples,
    ``numpy.random.default_rng(seed)``: of the verdicts (the resamples ``scipy.stats.bootstrap``
    draws), or, with ``groups`` (one item id per verdict), of the groups, every verdict of an item
    kept together (:func:`ratio_bootstrap`) — several annotators' labels of one item are not
    independent; a ``resampler`` over the items shares its resamples with other statistics. Fewer
    than 2 units, or ``n_boot = 0``, give no CI.

    Worked example: 2 A, 1 B, 1 tie, 1 both_bad → win share 2/5 = 0.4, win rate (2 + 2/2)/5 = 0.6.

    >>> r = win_tie_loss(["A", "A", "B", "tie", "both_bad", None], n_boot=1000, seed=0)
    >>> r["n"], r["missing"], r["A"], r["B"], r["tie"], r["both_bad"], r["win_share"], r["win_rate"]
    (5, 1, 2, 1, 1, 1, 0.4, 0.6)
    >>> round(r["win_rate_low"], 2), round(r["win_rate_high"], 2)
    (0.3, 0.9)
    >>> win_tie_loss([])["win_rate"] is None
    True
    """
    _check_confidence(confidence)
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
    sums, out["n_units"] = _boot_sums(values, kept_groups, n_boot, seed, resampler)
    if sums is not None:
        with np.errstate(invalid="ignore", divide="ignore"):  # a resample without this pair's items: dropped
            shares, rates = sums[:, 0] / sums[:, 2], sums[:, 1] / sums[:, 2]
        out["win_share_low"], out["win_share_high"] = _percentiles(shares, confidence)
        out["win_rate_low"], out["win_rate_high"] = _percentiles(rates, confidence)
    out |= {"confidence": confidence, "n_boot": n_boot, "seed": seed}
    return out


def _pair_columns(df: pd.DataFrame) -> None:
    missing = {"system_a", "system_b", "verdict"} - set(df.columns)
    if missing:
        raise ValueError(f"labels need columns system_a, system_b, verdict; missing {sorted(missing)}")
    same = df["system_a"] == df["system_b"]
    if same.any():
        raise ValueError(f"{int(same.sum())} rows compare a system with itself")


def pairwise_table(
    df: pd.DataFrame,
    n_boot: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
    group_col: str | None = None,
    resampler: Resampler | None = None,
) -> pd.DataFrame:
    """:func:`win_tie_loss` per unordered system pair of a labels table (columns system_a, system_b, verdict).

    Each pair appears once, as (first, second) in sorted name order; a row labelled the other way
    round has its verdict flipped (A ↔ B; tie and both_bad stay), so ``A`` counts the first system's
    wins. ``group_col`` (e.g. ``item_id``) makes the bootstrap resample items, not labels (with a
    ``resampler`` over those items, the same resamples for every pair). One row per
    pair with the pair's names and every key of :func:`win_tie_loss`.

    >>> labels = pd.DataFrame({"system_a": ["x", "y", "x", "y"], "system_b": ["y", "x", "y", "x"],
    ...                        "verdict": ["A", "A", "tie", "B"]})
    >>> t = pairwise_table(labels, n_boot=200)
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
    rows = [
        {
            "system_a": a,
            "system_b": b,
            **win_tie_loss(
                v,
                n_boot=n_boot,
                seed=seed,
                confidence=confidence,
                groups=u if group_col else None,
                resampler=resampler if group_col else None,
            ),
        }
        for (a, b), (v, u) in sorted(groups.items())
    ]
    columns = ["system_a", "system_b", *win_tie_loss([]).keys()]
    return pd.DataFrame(rows, columns=columns)


def _strongly_connected(scored: np.ndarray) -> np.ndarray:
    """For each digraph ``scored[b]`` (k × k booleans), whether every node reaches every other node.

    Reachability by repeated squaring of (A + I): after ⌈log₂ k⌉ squarings every path of up to k
    steps is covered.
    """
    k = scored.shape[-1]
    reach = (scored | np.eye(k, dtype=bool)).astype(np.float64)
    for _ in range(max(1, math.ceil(math.log2(k)))):
        reach = np.minimum(reach @ reach, 1.0)
    return (reach > 0).all(axis=(-2, -1))


def _bt_fit_many(wins: np.ndarray, iterations: int = 100, tol: float = 1e-10) -> np.ndarray:
    """Bradley–Terry log-strengths of many data sets at once: β (B, k), β[:, 0] = 0; NaN rows where no finite MLE.

    ``wins[b, i, j]`` is system i's score against system j in data set b (a win 1, a tie ½), so
    ``wins[b, i, j] + wins[b, j, i]`` is the number of their comparisons. Ford (1957): the MLE is
    finite iff the digraph "i scored against j" is strongly connected; other data sets are NaN
    without fitting. The rest are fitted by Newton's method on the concave log-likelihood
    Σ_ij w_ij log σ(β_i − β_j) (the logistic regression of Agresti 2013, *Categorical Data
    Analysis*, 3rd ed., §11.6; gradient Σ_j (w_ij − n_ij p_ij), Hessian from n_ij p_ij (1 − p_ij)),
    with step halving so the likelihood never decreases, all data sets in one batched linear solve
    per step. A data set still moving after ``iterations`` steps is NaN.
    """
    count, k = wins.shape[0], wins.shape[-1]
    beta = np.full((count, k), np.nan)
    ok = _strongly_connected(wins > 0)
    if not ok.any():
        return beta
    w = wins[ok]
    n = w + np.swapaxes(w, 1, 2)

    def loglik(x: np.ndarray) -> np.ndarray:
        return -(w * np.logaddexp(0.0, x[:, None, :] - x[:, :, None])).sum(axis=(1, 2))

    b = np.zeros((len(w), k))
    current = loglik(b)
    moving = np.ones(len(w), dtype=bool)
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(b[:, None, :] - b[:, :, None]))  # p[i, j] = P(i beats j)
        grad = (w - n * p).sum(axis=2)
        v = n * p * (1.0 - p)
        hess = -v
        idx = np.arange(k)
        hess[:, idx, idx] = v.sum(axis=2)
        step = np.zeros_like(b)
        try:
            step[:, 1:] = np.linalg.solve(hess[:, 1:, 1:], grad[:, 1:, None])[..., 0]
        except np.linalg.LinAlgError:  # a numerically singular system: least squares, one by one
            for r in range(len(b)):
                step[r, 1:] = np.linalg.lstsq(hess[r, 1:, 1:], grad[r, 1:], rcond=None)[0]
        scale = np.ones(len(b))
        for _ in range(60):
            trial = b + scale[:, None] * step
            value = loglik(trial)
            worse = ~(value >= current - 1e-12 * np.abs(current))
            if not worse.any():
                break
            scale[worse] /= 2
        b, current = trial, value
        moving = np.abs(scale[:, None] * step).max(axis=1) > tol
        if not moving.any():
            break
    b[moving | ~np.isfinite(b).all(axis=1)] = np.nan
    beta[ok] = b
    return beta


BT_COLUMNS = [
    "system",
    "n",
    "score",
    "rating",
    "rating_low",
    "rating_high",
    "elo",
    "elo_low",
    "elo_high",
]


def bradley_terry(
    df: pd.DataFrame,
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    reference: str | None = None,
    group_col: str | None = None,
    resampler: Resampler | None = None,
    components: bool = False,
) -> pd.DataFrame:
    """Bradley–Terry ratings of the systems from pairwise labels (columns system_a, system_b, verdict).

    Model (Bradley & Terry 1952, *Biometrika* 39:324–345): P(a beats b) = 1 / (1 + exp(β_b − β_a)).
    A tie or both_bad is half a win for each side (the outcome 0.5; equivalent to counting it as one
    win plus one loss at half weight), missing verdicts are skipped. β is the maximum-likelihood fit
    (:func:`_bt_fit_many`: the logistic regression without intercept on the ±1 design that
    ``statsmodels``' ``Logit`` fits when each tie is one win plus one loss; the tests check both
    agree); ratings are centred to mean 0, or set so that ``reference`` is 0.
    ``elo`` = 400 / ln 10 · rating + 1000. ``n`` is the system's comparisons, ``score`` its wins + ties / 2.

    CIs are percentile bootstrap intervals over comparisons resampled with replacement — or over
    ``group_col`` (items, all labels of an item together) when given — with
    ``numpy.random.default_rng(seed)`` (``n_boot = 0``: no CIs), or a ``resampler`` over those items;
    every resample is fitted at once.
    A resample with no finite MLE (Ford 1957: some group of systems never wins or ties against the
    rest) is skipped and ``attrs["n_boot_used"]`` says how many were kept; when many are skipped (few
    comparisons) the intervals are too narrow. With no finite MLE on the data itself every rating
    is NaN and ``attrs["note"]`` says why.

    ``components=True``: systems never compared with each other, directly or through others, have no
    common scale; each connected set of systems (a ``component``, numbered from 1 in the order of its
    first system's name)
    is then fitted on its own — centred within itself — instead of the whole being left without a
    finite MLE (:func:`bradley_terry_components`).

    Worked example: x beats y 3 times of 4, so P = 3/4 = 1 / (1 + e^−(β_x − β_y)), β_x − β_y = ln 3
    = 1.0986, centred ±0.5493; on the Elo scale 1000 ± 400 / ln 10 · 0.5493 = 1000 ± 95.4.

    >>> labels = pd.DataFrame({"system_a": ["x", "x", "x", "y"], "system_b": ["y", "y", "y", "x"],
    ...                        "verdict": ["A", "A", "B", "B"]})
    >>> r = bradley_terry(labels, n_boot=200, seed=0)
    >>> r[["system", "n", "score", "rating", "elo"]].round(4).values.tolist()
    [['x', 4, 3.0, 0.5493, 1095.4243], ['y', 4, 1.0, -0.5493, 904.5757]]
    >>> r.attrs["n_comparisons"], r.attrs["n_boot_used"] < 200  # resamples where y never wins: skipped
    (4, True)
    """
    _check_confidence(confidence)
    _pair_columns(df)
    if components:
        return bradley_terry_components(df, n_boot, seed, confidence, reference, group_col, resampler)
    all_scores = _scores(_verdicts(df["verdict"]))
    keep = ~np.isnan(all_scores)
    a = df["system_a"].to_numpy(dtype=object)[keep]
    b = df["system_b"].to_numpy(dtype=object)[keep]
    s = all_scores[keep]
    systems = sorted(set(a) | set(b))
    k, n = len(systems), len(s)
    if reference is not None and k and reference not in systems:
        raise ValueError(f"reference {reference!r} is not one of the systems {systems}")
    attrs = {"n_comparisons": n, "n_boot": n_boot, "n_boot_used": 0, "seed": seed}
    attrs |= {"confidence": confidence, "reference": reference, "note": ""}
    if k < 2:
        empty = pd.DataFrame(columns=BT_COLUMNS)
        empty.attrs = attrs | {"note": "fewer than two systems compared"}
        return empty
    index = {name: pos for pos, name in enumerate(systems)}
    i = pd.Index(systems).get_indexer(a)
    j = pd.Index(systems).get_indexer(b)
    # Each unit's (comparison's, or item's) contribution to the k × k score matrix, flattened.
    if group_col is not None:
        unit, names = pd.factorize(df[group_col].to_numpy()[keep])
        names = list(names)
    else:
        unit, names = np.arange(n), None
    units = int(unit.max()) + 1 if n else 0
    cells = np.bincount(unit * k * k + i * k + j, weights=s, minlength=units * k * k)
    cells += np.bincount(unit * k * k + j * k + i, weights=1 - s, minlength=units * k * k)
    cells = cells.reshape(units, k * k)

    def normalise(beta: np.ndarray) -> np.ndarray:
        centre = beta.mean(axis=-1) if reference is None else beta[..., index[reference]]
        return beta - np.asarray(centre)[..., None]

    rows = pd.DataFrame({"system": systems})
    rows["n"] = np.bincount(i, minlength=k) + np.bincount(j, minlength=k)
    rows["score"] = np.bincount(i, weights=s, minlength=k) + np.bincount(j, weights=1 - s, minlength=k)
    rows["rating"] = rows["rating_low"] = rows["rating_high"] = np.nan
    beta = _bt_fit_many(cells.sum(axis=0).reshape(1, k, k))[0]
    if not np.isfinite(beta).all():
        attrs["note"] = (
            "no finite maximum-likelihood ratings: some group of systems never wins or ties against "
            "the others (Ford 1957), or the comparisons do not connect all systems"
        )
    else:
        rows["rating"] = normalise(beta)
        sums, _ = _boot_sums(cells, names, n_boot, seed, resampler if group_col else None)
        if sums is not None:
            draws = _bt_fit_many(sums.reshape(len(sums), k, k))
            draws = normalise(draws[np.isfinite(draws).all(axis=1)])
            attrs["n_boot_used"] = len(draws)
            if len(draws):
                tail = (1 - confidence) / 2 * 100  # percentile intervals
                rows["rating_low"], rows["rating_high"] = np.percentile(draws, [tail, 100 - tail], axis=0)
            else:
                attrs["note"] = "no bootstrap resample had a finite maximum-likelihood fit; no CIs"
    for column in ("", "_low", "_high"):
        rows[f"elo{column}"] = ELO_SCALE * rows[f"rating{column}"] + ELO_BASE
    rows = rows.sort_values(["rating", "system"], ascending=[False, True], ignore_index=True)[BT_COLUMNS]
    rows.attrs = attrs
    return rows


def bradley_terry_components(
    df: pd.DataFrame,
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    reference: str | None = None,
    group_col: str | None = None,
    resampler: Resampler | None = None,
) -> pd.DataFrame:
    """:func:`bradley_terry` of each connected set of systems on its own, with a ``component`` column.

    Two systems are connected when they were compared, directly or through other systems (the
    weakly connected components of the comparison graph: ``scipy.sparse.csgraph``). Ratings of
    different components have no common scale (the model only identifies differences within one), so
    each is centred within its component; ``reference`` centres the component it belongs to.
    ``attrs``: ``components`` (how many), ``n_comparisons``, ``n_boot_used`` (the fewest of any
    component) and a ``note`` naming the components without a finite fit.

    >>> labels = pd.DataFrame({"system_a": ["x", "y", "z", "w"], "system_b": ["y", "x", "w", "z"],
    ...                        "verdict": ["A", "A", "A", "tie"]})
    >>> r = bradley_terry_components(labels, n_boot=0)
    >>> r[["component", "system", "rating"]].round(4).values.tolist()
    [[1, 'z', 0.5493], [1, 'w', -0.5493], [2, 'x', 0.0], [2, 'y', 0.0]]
    """
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    verdicts = _verdicts(df["verdict"])
    kept = df[pd.notna(verdicts)]
    systems = sorted(set(kept["system_a"]) | set(kept["system_b"]))
    index = pd.Index(systems)
    i, j = index.get_indexer(kept["system_a"]), index.get_indexer(kept["system_b"])
    graph = coo_matrix((np.ones(len(i)), (i, j)), shape=(len(systems), len(systems)))
    _, member = connected_components(graph, directed=False) if systems else (0, np.zeros(0, dtype=int))
    order = {c: n + 1 for n, c in enumerate(dict.fromkeys(member))}  # in order of the first system's name
    parts, notes, used = [], [], []
    attrs = {"n_comparisons": len(kept), "n_boot": n_boot, "seed": seed, "confidence": confidence}
    attrs |= {"reference": reference, "components": len(order)}
    for raw_component, number in order.items():
        names = set(index[member == raw_component])
        rows = kept[kept["system_a"].isin(names)]
        ref = reference if reference in names else None
        part = bradley_terry(rows, n_boot, seed, confidence, ref, group_col, resampler)
        if part.attrs.get("note"):
            notes.append(f"component {number}: {part.attrs['note']}")
        used.append(part.attrs.get("n_boot_used", 0))
        parts.append(part.assign(component=number))
    columns = ["component", *BT_COLUMNS]
    table = pd.concat(parts, ignore_index=True)[columns] if parts else pd.DataFrame(columns=columns)
    table.attrs = attrs | {"n_boot_used": min(used) if used else 0, "note": "; ".join(notes)}
    if not systems:
        table.attrs["note"] = "fewer than two systems compared"
    return table


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
    n_boot: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
    group_col: str | None = "item_id",
    resampler: Resampler | None = None,
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
    comparison are dropped (``n_boot_used``); a ``resampler`` over the items shares its resamples with
    the report's other statistics. When the two never met, their rates are against
    different opponents: read the difference with that in mind (``note``).

    Worked example: q1 x beats y, q2 x ties z, q3 y beats z, one label each: x scores 1 + ½ of 2
    comparisons = 0.75, y 0 + 1 of 2 = 0.5; the difference is 0.25.

    >>> labels = pd.DataFrame({"item_id": ["q1", "q2", "q3"], "system_a": ["x", "x", "y"],
    ...                        "system_b": ["y", "z", "z"], "verdict": ["A", "tie", "A"]})
    >>> r = paired_bootstrap(labels, "x", "y", n_boot=500, seed=0)
    >>> r["win_rate_first"], r["win_rate_second"], r["difference"], r["n_items"]
    (0.75, 0.5, 0.25, 3)
    >>> 0 < r["p_value"] <= 1 and r["low"] <= 0.25 <= r["high"]
    True
    """
    _check_confidence(confidence)
    _pair_columns(df)
    if first == second:
        raise ValueError(f"compare two different systems, got {first!r} twice")
    out: dict[str, Any] = {"first": first, "second": second, "n_items": 0, "n_first": 0, "n_second": 0}
    keys = ("win_rate_first", "win_rate_second", "difference", "low", "high", "p_value")
    out |= dict.fromkeys(keys) | {"n_boot": n_boot, "n_boot_used": 0, "seed": seed}
    out |= {"confidence": confidence, "met": 0, "note": ""}
    involved = df[df["system_a"].isin([first, second]) | df["system_b"].isin([first, second])]
    names = None
    if group_col is not None and group_col in involved.columns:
        units, names = pd.factorize(involved[group_col].to_numpy())
        names = list(names)
    else:
        units, resampler = np.arange(len(involved)), None
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
    sums, _ = _boot_sums(values, names, n_boot, seed, resampler)
    if sums is None:
        out["note"] = (out["note"] + "; " if out["note"] else "") + "a test needs at least 2 labelled items"
        return out
    with np.errstate(invalid="ignore", divide="ignore"):
        draws = sums[:, 0] / sums[:, 1] - sums[:, 2] / sums[:, 3]
    draws = draws[np.isfinite(draws)]
    out["n_boot_used"] = len(draws)
    if not len(draws):
        return out
    out["low"], out["high"] = _percentiles(draws, confidence)
    extreme = np.abs(draws - d) >= abs(d) - 1e-12
    out["p_value"] = float((1 + extreme.sum()) / (1 + len(draws)))
    return out


# --------------------------------------------------------------------------- metrics against humans


def majority(labels: Sequence[bool | None]) -> bool | None:
    """The majority of yes/no labels (None entries ignored); None when they split evenly or are empty.

    >>> majority([True, True, False]), majority([True, False]), majority([None, False]), majority([])
    (True, None, False, None)
    """
    flags = [f for f in map(_flag, labels) if f is not None]
    yes, no = sum(flags), len(flags) - sum(flags)
    return None if yes == no else yes > no


def nhsr_agreement(
    auto: Sequence[bool | None], human: Sequence[bool | None], confidence: float = 0.95
) -> dict[str, Any]:
    """Agreement of NHSR's per-statute verdict (True = hallucinated) with the annotators' majority label.

    ``auto[i]`` and ``human[i]`` are the same cited statute; a pair where either is None (e.g. no
    majority, see :func:`majority`, or no explicit label at all) is dropped and counted in
    ``dropped``. Returns ``accuracy`` with its Wilson interval (:func:`wilson_interval`), Cohen's κ
    (Cohen 1960, *Educ. Psychol. Meas.* 20:37–46) computed by ``statsmodels`` ``cohens_kappa`` on the
    2×2 table, with the interval κ ± z·SE from its asymptotic standard error (Fleiss, Cohen & Everitt
    1969, *Psychol. Bull.* 72:323–327), the table ``confusion[auto][human]`` and ``n``
    (LegalHalBench §5.6). κ is None when undefined (both raters constant and equal: chance agreement 1).

    Worked example: p_o = 3/4; marginals auto 2/4 yes, human 1/4 yes → p_e = .5·.25 + .5·.75 = .5;
    κ = (.75 − .5) / (1 − .5) = 0.5.

    >>> r = nhsr_agreement([True, True, False, False, None], [True, False, False, False, True])
    >>> r["n"], r["dropped"], r["accuracy"], round(r["kappa"], 6), r["confusion"]
    (4, 1, 0.75, 0.5, {True: {True: 1, False: 1}, False: {True: 0, False: 2}})
    >>> round(r["accuracy_low"], 4), round(r["accuracy_high"], 4)
    (0.3006, 0.9544)
    """
    _check_confidence(confidence)
    _same_length(auto, human, "auto and human")
    x, known_x = _flags(auto)
    y, known_y = _flags(human)
    both = known_x & known_y
    x, y = x[both], y[both]
    n = int(both.sum())
    confusion = {a: {b: int(((x == a) & (y == b)).sum()) for b in (True, False)} for a in (True, False)}
    out: dict[str, Any] = {"n": n, "dropped": len(both) - n, "accuracy": None, "kappa": None}
    out |= dict.fromkeys(("accuracy_low", "accuracy_high", "kappa_low", "kappa_high"))
    out |= {"confusion": confusion, "note": "", "confidence": confidence}
    if not n:
        out["note"] = "no statute has both an automatic and a majority human label"
        return out
    agree = int((x == y).sum())
    out["accuracy"] = agree / n
    out["accuracy_low"], out["accuracy_high"] = wilson_interval(agree, n, confidence)
    from statsmodels.stats.inter_rater import cohens_kappa

    table = np.array([[confusion[x][y] for y in (True, False)] for x in (True, False)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        result = cohens_kappa(table)
    kappa = float(result.kappa)
    if math.isfinite(kappa):
        out["kappa"] = kappa
        half = _z(confidence) * float(result.std_kappa)
        if math.isfinite(half):
            out["kappa_low"], out["kappa_high"] = max(-1.0, kappa - half), min(1.0, kappa + half)
    else:
        out["note"] = "Cohen's kappa is undefined: both sides give the same single label"
    return out


def majority_label(codes: Sequence[str | None]) -> str | None:
    """The lawyers' label of one cited statute, from their statute labels (codes of
    :data:`eval_ui.verdicts.STATUTE_LABEL_TABLE`; None, NaN and ``legacy_unticked`` are no judgement).

    First the yes/no majority (:func:`majority` of the labels' hallucinated flags); None when it splits.
    Then, among the labels on that side that name a kind (not ``wrong``), the one given most often: that
    label when no other is given as often, else ``wrong`` (hallucinated, kind not agreed). On the correct
    side every label is ``correct``. :func:`majority_labels` does this for many statutes at once.

    >>> majority_label(["wrong_number", "wrong", "correct"]), majority_label(["wrong", "wrong", "correct"])
    ('wrong_number', 'wrong')
    >>> majority_label(["wrong_number", "wrong_content"]), majority_label(["correct", None, "legacy_unticked"])
    ('wrong', 'correct')
    >>> majority_label(["correct", "wrong_number"]), majority_label([])
    (None, None)
    """
    found = majority_labels(codes, [0] * len(codes))
    return found.iloc[0] if len(found) else None


def majority_labels(codes: Sequence[str | None], groups: Sequence[Hashable]) -> pd.Series:
    """:func:`majority_label` of the codes of each group (a cited statute), indexed by the sorted groups;
    a group none of whose codes is a judgement gets None. Counted as one (groups × labels) table.

    >>> majority_labels(["wrong", "wrong_number", "correct", None], ["s1", "s1", "s2", "s3"]).to_dict()
    {'s1': 'wrong_number', 's2': 'correct', 's3': None}
    """
    codes_a, groups_a = _objects(codes), _objects(groups)
    _same_length(codes_a, groups_a, "codes and groups")
    table = verdicts.STATUTE_CODES
    index = pd.Series(codes_a, dtype=object).map({c: i for i, c in enumerate(table)})
    unknown = pd.notna(codes_a) & index.isna().to_numpy()
    if unknown.any():
        raise ValueError(f"unknown statute label {codes_a[unknown][0]!r}; expected one of {table}")
    where, units = pd.factorize(groups_a, sort=True)
    counts = np.zeros((len(units), len(table)))
    known = index.notna().to_numpy()
    np.add.at(counts, (where[known], index[known].to_numpy(dtype=int)), 1)
    flag = [verdicts.STATUTE_HALLUCINATED[c] for c in table]
    named = np.array([bool(verdicts.STATUTE_CHECKER_VERDICTS[c]) for c in table])
    wrong, right = np.array([f is True for f in flag]), np.array([f is False for f in flag])
    yes, no = counts[:, wrong].sum(axis=1), counts[:, right].sum(axis=1)
    side = np.where((yes > no)[:, None], wrong & named, np.where((no > yes)[:, None], right & named, False))
    kinds = counts * side  # the labels with a kind on the majority's side
    top = kinds.argmax(axis=1)
    ranked = np.sort(kinds, axis=1)
    agreed = ranked[:, -1] > (ranked[:, -2] if len(table) > 1 else 0)
    out = np.where(agreed, np.array(table, dtype=object)[top], "wrong").astype(object)
    out[yes == no] = None
    return pd.Series(out, index=units, dtype=object)


def verdict_agreement(
    checker: Sequence[str | None],
    lawyers: Sequence[str | None],
    groups: Sequence[Hashable] | None = None,
    *,
    n_boot: int = 1000,
    seed: int = 0,
    resampler: Resampler | None = None,
    confidence: float = 0.95,
) -> dict[str, Any]:
    """The checker's verdicts against the lawyers' statute labels, per verdict (issue 40).

    ``checker[i]`` is the checker's verdict of a cited statute (a code of :mod:`lawluo.law.verdicts`),
    ``lawyers[i]`` the lawyers' label of it (a code of :data:`eval_ui.verdicts.STATUTE_LABEL_TABLE`, e.g.
    their :func:`majority_label`); a statute where either is missing (None, NaN, ``legacy_unticked``) is
    dropped. A label *agrees* with a verdict when it names it (:data:`eval_ui.verdicts.CHECKER_LABEL`:
    ``correct`` names ``verified``, ``amended_since`` and ``no_content``; ``wrong_number`` names
    ``wrong_number``…). One row per checker verdict, in the verdict table's order:

    - ``statutes``: how many statutes the checker gave this verdict; ``same_hallucinated`` (with ``_low``,
      ``_high``): the share where the lawyers' label has the verdict's hallucinated yes/no — ``wrong``, a
      label without a kind, agrees with every hallucinated verdict;
    - ``with_kind``: those whose label names a kind (``wrong`` left out); ``same_verdict``: the share
      where the label agrees with the verdict exactly;
    - ``kappa``: Cohen's κ (Cohen 1960) one-vs-rest over every statute whose label names a kind: the
      checker "says" the verdict's label (``label``) or not, the lawyers say it or not. The two raters
      are compared in the lawyers' categories, so the verdicts one label names (``verified``,
      ``amended_since``, ``no_content`` are all ``correct``) share one κ.

    Intervals (95%): Wilson's for the shares without ``groups``, else a percentile bootstrap over the
    groups (an item's statutes resampled together; ``resampler``: the report's shared one); κ always by
    the bootstrap (its statutes, or their groups). A value that cannot be computed is None.

    Worked example: six statutes, the lawyers' sixth label ``wrong`` (no kind). ``wrong_number`` was
    given twice; the lawyers agree on hallucinated both times, on the kind once of once (the ``wrong``
    left out). Its κ over the five statutes with a kind: checker yes 1, lawyers yes 2, both 1:
    p_o = 4/5, p_e = (1·2 + 4·3)/25 = 0.56, κ = (0.8 − 0.56)/(1 − 0.56) = 0.545.

    >>> r = verdict_agreement(
    ...     ["verified", "verified", "wrong_number", "no_content", "not_found", "wrong_number"],
    ...     ["correct", "wrong_number", "wrong_number", "correct", "wrong_not_found", "wrong"], n_boot=200)
    >>> row = r["rows"][1]
    >>> row["verdict"], row["label"], row["statutes"], row["same_hallucinated"], row["with_kind"], row["same_verdict"]
    ('wrong_number', 'wrong_number', 2, 1.0, 1, 1.0)
    >>> round(row["kappa"], 3), r["rows"][0]["same_verdict"], r["n"], r["n_with_kind"]
    (0.545, 0.5, 6, 5)
    """
    from lawluo.law import verdicts as checked  # the checker's verdict table

    _check_confidence(confidence)
    _same_length(checker, lawyers, "checker and lawyers")
    if groups is not None:
        _same_length(checker, groups, "checker and groups")
    if groups is None:
        resampler = None  # its units are groups: each statute is its own unit here
    auto_a, human_a = _objects(checker), _objects(lawyers)
    known = ~(pd.isna(auto_a) | pd.isna(human_a))
    bad = known & ~pd.Series(auto_a).isin(checked.VERDICTS).to_numpy()
    if bad.any():
        raise ValueError(f"unknown checker verdict {auto_a[bad][0]!r}; expected one of {checked.VERDICTS}")
    bad = known & ~pd.Series(human_a).isin(verdicts.STATUTE_CODES).to_numpy()
    if bad.any():
        raise ValueError(
            f"unknown statute label {human_a[bad][0]!r}; expected one of {verdicts.STATUTE_CODES}"
        )
    keep = known & pd.Series(human_a).map(verdicts.STATUTE_HALLUCINATED).notna().to_numpy()  # not legacy
    auto_a, human_a = auto_a[keep], human_a[keep]
    units_a = np.flatnonzero(keep) if groups is None else _objects(groups)[keep]
    auto_label = pd.Series(auto_a, dtype=object).map(verdicts.CHECKER_LABEL).to_numpy(dtype=object)
    flag = pd.Series(human_a, dtype=object).map(verdicts.STATUTE_HALLUCINATED).to_numpy(dtype=bool)
    kind = (
        pd.Series(human_a, dtype=object).map(verdicts.STATUTE_CHECKER_VERDICTS).map(bool).to_numpy(dtype=bool)
    )
    # Per verdict, eight sums over the statutes — the coarse and the exact share's numerator and denominator,
    # then κ's (x, y, x·y, n) — resampled together, in one pass over the units.
    labels = [verdicts.CHECKER_LABEL.get(row.code) for row in checked.VERDICT_TABLE]
    given = [auto_a == row.code for row in checked.VERDICT_TABLE]
    columns = []
    for row, label, mine in zip(checked.VERDICT_TABLE, labels, given, strict=True):
        x, y = kind & (auto_label == label), kind & (human_a == label)
        columns += [mine & (flag == row.hallucinated), mine, mine & y, mine & kind, x, y, x & y, kind]
    values = np.column_stack(columns).astype(float)
    totals = values.sum(axis=0)
    draws, _ = _boot_sums(values, list(units_a), n_boot, seed, resampler)

    def share(k: int, subset: np.ndarray) -> tuple[float | None, float | None, float | None]:
        hits, n = totals[k], totals[k + 1]
        if not n:
            return None, None, None
        if groups is None:
            return float(hits / n), *wilson_interval(hits, int(n), confidence)
        if draws is None or len(set(units_a[subset])) < 2:
            return float(hits / n), None, None
        with np.errstate(invalid="ignore", divide="ignore"):
            return float(hits / n), *_percentiles(draws[:, k] / draws[:, k + 1], confidence)

    rows = []
    for i, (row, label, mine) in enumerate(zip(checked.VERDICT_TABLE, labels, given, strict=True)):
        base = 8 * i
        hallucinated, agreed = share(base, mine), share(base + 2, mine & kind)
        kappa = float(_kappa_from_sums(totals[base + 4 : base + 8]))
        low = high = None
        if not math.isfinite(kappa):
            kappa = None
        elif draws is not None and len(set(units_a[kind])) >= 2:
            low, high = _percentiles(_kappa_from_sums(draws[:, base + 4 : base + 8]), confidence)
        rows.append(
            {
                "verdict": row.code,
                "label": label,
                "statutes": int(mine.sum()),
                "same_hallucinated": hallucinated[0],
                "same_hallucinated_low": hallucinated[1],
                "same_hallucinated_high": hallucinated[2],
                "with_kind": int((mine & kind).sum()),
                "same_verdict": agreed[0],
                "same_verdict_low": agreed[1],
                "same_verdict_high": agreed[2],
                "kappa": kappa,
                "kappa_low": low,
                "kappa_high": high,
            }
        )
    return {
        "rows": rows,
        "n": len(auto_a),
        "n_with_kind": int(kind.sum()),
        "dropped": len(checker) - len(auto_a),
    }


def _kappa_from_sums(sums: np.ndarray) -> np.ndarray:
    """Cohen's κ = (p_o − p_e)/(1 − p_e) of 2×2 tables given as sums over the units of (x, y, x·y, 1) — the
    raters' yes counts, their joint yes count, n: p_o = (n − x − y + 2·xy)/n, p_e = (x·y + (n − x)(n − y))/n²;
    NaN where undefined (p_e = 1: both raters constant and equal, or n = 0). Vectorised over resamples."""
    x, y, both, n = (sums[..., k] for k in range(4))
    with np.errstate(divide="ignore", invalid="ignore"):
        observed = (n - x - y + 2 * both) / n
        chance = (x * y + (n - x) * (n - y)) / (n * n)
        kappa = (observed - chance) / (1 - chance)
    return np.where(np.isclose(chance, 1.0) | (n == 0), np.nan, kappa)


def _fisher_interval(r: float, se: float, confidence: float) -> tuple[float, float]:
    """tanh(atanh(r) ± z·se): the Fisher (1921) z-transform interval of a correlation."""
    if abs(r) >= 1:
        return r, r
    if math.isinf(se):
        return -1.0, 1.0
    from scipy.stats import norm

    z, half = math.atanh(r), norm.ppf(0.5 + confidence / 2) * se
    return math.tanh(z - half), math.tanh(z + half)


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


def _judged(value: Any) -> str | None:
    """A verdict for judge agreement: A / B / tie (both_bad → tie), or None when missing."""
    verdict = _verdict(value)
    return "tie" if verdict == "both_bad" else verdict


def _share(
    hits: Sequence[bool],
    groups: Sequence[Any] | None,
    n_boot: int,
    seed: int,
    confidence: float,
    resampler: Resampler | None = None,
) -> tuple:
    """(share, low, high) of ``hits``: Wilson without ``groups``, else the cluster bootstrap over groups."""
    n = len(hits)
    if not n:
        return None, None, None
    if groups is None:
        return (sum(hits) / n, *wilson_interval(sum(hits), n, confidence))
    r = ratio_bootstrap(
        np.asarray(hits, float),
        np.ones(n),
        n_boot=n_boot,
        seed=seed,
        confidence=confidence,
        groups=groups,
        resampler=resampler,
    )
    return r["value"], r["low"], r["high"]


def judge_agreement(
    judge: Sequence[str | None],
    human: Sequence[str | None],
    judge_swapped: Sequence[str | None] | None = None,
    *,
    groups: Sequence[Any] | None = None,
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    resampler: Resampler | None = None,
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
    together; ``resampler``: resamples shared with other statistics). ``judge_swapped`` are the judge's verdicts with the answers shown in swapped order,
    already mapped back to the un-swapped orientation; ``self_consistency`` is the share of items whose
    two verdicts agree (Zheng et al. 2023 §3.3, "consistency"), over ``n_consistency``, Wilson interval.
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
    _check_confidence(confidence)
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
    boot = {"n_boot": n_boot, "seed": seed, "confidence": confidence, "resampler": resampler}

    def share(kept: list[tuple[str, str, Any]]) -> tuple:
        hits = [a == b for a, b, _ in kept]
        return _share(hits, [g for *_, g in kept] if groups is not None else None, **boot)

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
        "confidence": confidence,
    }
    if judge_swapped is not None:
        _same_length(judge, judge_swapped, "judge and judge_swapped")
        swapped = [_judged(v) for v in judge_swapped]
        both = [j == s for j, s in zip(judge_v, swapped, strict=True) if j is not None and s is not None]
        out["n_consistency"] = len(both)
        if both:
            out["self_consistency"] = sum(both) / len(both)
            low, high = wilson_interval(sum(both), len(both), confidence)
            out["self_consistency_low"], out["self_consistency_high"] = low, high
    return out


# --------------------------------------------------------------------------- inter-annotator agreement


def to_reliability_matrix(
    df: pd.DataFrame, value_col: str, *, annotator_col: str = "annotator", item_col: str = "item"
) -> pd.DataFrame:
    """Long labels (one row per annotator × item) → the reliability matrix: index annotator, columns item.

    Cells an annotator did not label (or labelled None / NaN) are NaN. Two labels by one annotator
    for one item are an error (keep the latest before calling). The layout is Krippendorff's
    reliability data matrix (Krippendorff 2011, "Computing Krippendorff's Alpha-Reliability").

    >>> long = pd.DataFrame({"annotator": ["u1", "u1", "u2"], "item": [1, 2, 1],
    ...                      "verdict": ["A", "tie", "A"]})
    >>> to_reliability_matrix(long, "verdict").to_dict("index")
    {'u1': {1: 'A', 2: 'tie'}, 'u2': {1: 'A', 2: nan}}
    """
    columns = [annotator_col, item_col, value_col]
    missing = set(columns) - set(df.columns)
    if missing:
        raise ValueError(f"labels need columns {columns}; missing {sorted(missing)}")
    labelled = df.loc[df[value_col].notna(), columns]
    twice = labelled.duplicated([annotator_col, item_col])
    if twice.any():
        first = labelled.loc[twice, [annotator_col, item_col]].iloc[0].tolist()
        raise ValueError(f"{int(twice.sum())} repeated (annotator, item) labels, e.g. {first}")
    matrix = labelled.pivot(index=annotator_col, columns=item_col, values=value_col)
    matrix.index.name, matrix.columns.name = None, None
    return matrix


def _unit_counts(data: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(distinct values v, counts n[u, c] of value v[c] in unit u) of a matrix annotators × units (NaN: none)."""
    present = ~np.isnan(data)
    values = np.unique(data[present])
    unit = np.broadcast_to(np.arange(data.shape[1]), data.shape)[present]
    code = np.searchsorted(values, data[present])
    counts = np.bincount(unit * len(values) + code, minlength=data.shape[1] * len(values))
    return values, counts.reshape(data.shape[1], len(values)).astype(np.float64)


def _alpha_bootstrap(
    data: np.ndarray,
    level: str,
    groups: Sequence[Hashable],
    n_boot: int,
    seed: int,
    confidence: float,
    resampler: Resampler | None,
) -> tuple[float | None, float | None, int]:
    """Percentile interval of Krippendorff's α over units resampled with replacement (by ``groups``).

    α = 1 − (n − 1) · Σ_u D_u / Σ_ck n_c n_k δ²_ck, where D_u = Σ_ck n_uc n_uk δ²_ck / (m_u − 1) is
    unit u's share of the observed coincidences (Krippendorff 2011, §"coincidence matrix"), n_c the
    pairable values of category c and δ² the metric (nominal: 1 when c ≠ k; interval: (c − k)²).
    Every term is a sum over units, so all resamples come from one product (:func:`_boot_sums`);
    ``groups`` names each unit's resampling group (its item: the statutes of an item stay together).
    Returns (low, high, resamples used); resamples without variation are dropped.
    """
    values, counts = _unit_counts(data)
    m = counts.sum(axis=1)
    if level == "nominal":
        delta = 1.0 - np.eye(len(values))
    else:
        delta = (values[:, None] - values[None, :]) ** 2
    observed = ((counts @ delta) * counts).sum(axis=1) / (m - 1)
    sums, _ = _boot_sums(np.column_stack([observed, counts]), groups, n_boot, seed, resampler)
    if sums is None:
        return None, None, 0
    n_c = sums[:, 1:]
    expected = np.einsum("bc,ck,bk->b", n_c, delta, n_c)
    with np.errstate(invalid="ignore", divide="ignore"):
        draws = 1.0 - (n_c.sum(axis=1) - 1.0) * sums[:, 0] / expected
    draws[expected <= 0] = np.nan
    low, high = _percentiles(draws, confidence)
    return low, high, int(np.isfinite(draws).sum())


def krippendorff_alpha(
    table: pd.DataFrame,
    level: Literal["nominal", "interval"],
    n_boot: int = 0,
    seed: int = 0,
    confidence: float = 0.95,
    *,
    unit_groups: Sequence[Hashable] | None = None,
    resampler: Resampler | None = None,
) -> dict[str, Any]:
    """Krippendorff's α of a reliability matrix (index annotator, columns item, NaN = not labelled).

    Build the matrix from long labels with :func:`to_reliability_matrix` (or call
    :func:`krippendorff_alpha_long`, which skips the matrix of labels). ``level`` "nominal" (e.g.
    verdicts, hallucinated yes/no: any labels, encoded to integer codes for the ``krippendorff``
    package) or "interval" (Rel, T_LC scores: numbers). Computed by ``krippendorff.alpha``
    (Krippendorff 2011, "Computing Krippendorff's Alpha-Reliability", coincidence-matrix form). Only items
    labelled by at least two annotators are pairable (``n_items``, ``n_pairable`` values). α is None
    with a ``note`` when nothing is pairable or the pairable values are all the same (no variation,
    α undefined). With ``n_boot`` > 0 (or a ``resampler``), ``alpha_low`` / ``alpha_high`` are the
    percentile bootstrap interval over the columns (:func:`_alpha_bootstrap`; ``unit_groups`` — one
    id per column — resamples columns of one group together; Hayes & Krippendorff 2007 resample
    pairs of values instead).

    Worked example (nominal): two coders label 4 items 0 0 1 1 and 0 1 1 1. Coincidences: o₀₀ = 2,
    o₀₁ = o₁₀ = 1, o₁₁ = 4; n₀ = 3, n₁ = 5, n = 8; α = 1 − (n − 1)·(o₀₁ + o₁₀) / (2·n₀·n₁)
    = 1 − 7·2/30 = 0.5333.

    >>> m = pd.DataFrame([["no", "no", "yes", "yes"], ["no", "yes", "yes", "yes"]],
    ...                  index=["u1", "u2"], columns=[1, 2, 3, 4])
    >>> r = krippendorff_alpha(m, "nominal", n_boot=200)
    >>> round(r["alpha"], 4), r["n_items"], r["n_pairable"], r["n_annotators"]
    (0.5333, 4, 8, 2)
    >>> r["alpha_low"] <= r["alpha"] <= r["alpha_high"]
    True
    """
    mask = table.notna().to_numpy(dtype=bool)
    cells = table.to_numpy(dtype=object)[mask]
    rows, cols = np.nonzero(mask)
    groups = _objects(table.columns if unit_groups is None else unit_groups)
    return _alpha(
        rows, cols, cells, table.shape, level, groups,
        n_boot=n_boot, seed=seed, confidence=confidence, resampler=resampler,
    )  # fmt: skip


def krippendorff_alpha_long(
    df_long: pd.DataFrame,
    value_col: str,
    level: Literal["nominal", "interval"],
    *,
    annotator_col: str = "annotator",
    item_col: str = "item",
    group_col: str | None = None,
    n_boot: int = 0,
    seed: int = 0,
    confidence: float = 0.95,
    resampler: Resampler | None = None,
) -> dict[str, Any]:
    """:func:`krippendorff_alpha` of long labels (one row per annotator × item), without building a table.

    The same α, interval and counts as ``krippendorff_alpha(to_reliability_matrix(df_long, value_col), …)``;
    ``group_col`` names each row's resampling group (e.g. the item of a statute: the statutes of an
    item are resampled together). Two labels by one annotator for one item are an error.

    >>> long = pd.DataFrame({"annotator": ["u1", "u2"] * 4, "item": [1, 1, 2, 2, 3, 3, 4, 4],
    ...                      "label": ["no", "no", "no", "yes", "yes", "yes", "yes", "yes"]})
    >>> round(krippendorff_alpha_long(long, "label", "nominal")["alpha"], 4)
    0.5333
    """
    columns = [annotator_col, item_col, value_col] + ([group_col] if group_col else [])
    missing = set(columns) - set(df_long.columns)
    if missing:
        raise ValueError(f"labels need columns {columns}; missing {sorted(missing)}")
    labelled = df_long.loc[df_long[value_col].notna(), columns]
    twice = labelled.duplicated([annotator_col, item_col])
    if twice.any():
        first = labelled.loc[twice, [annotator_col, item_col]].iloc[0].tolist()
        raise ValueError(f"{int(twice.sum())} repeated (annotator, item) labels, e.g. {first}")
    rows, annotators = pd.factorize(labelled[annotator_col])
    cols, items = pd.factorize(labelled[item_col])
    if group_col:
        first_group = pd.Series(labelled[group_col].to_numpy(dtype=object)).groupby(cols).first()
        groups = first_group.reindex(range(len(items))).to_numpy(dtype=object)
    else:
        groups = np.asarray(items.to_numpy(dtype=object), dtype=object)
    cells = labelled[value_col].to_numpy(dtype=object)
    shape = (len(annotators), len(items))
    return _alpha(
        rows, cols, cells, shape, level, groups,
        n_boot=n_boot, seed=seed, confidence=confidence, resampler=resampler,
    )  # fmt: skip


def _alpha(
    rows: np.ndarray,
    cols: np.ndarray,
    cells: np.ndarray,
    shape: tuple[int, int],
    level: str,
    groups: np.ndarray,
    *,
    n_boot: int,
    seed: int,
    confidence: float,
    resampler: Resampler | None,
) -> dict[str, Any]:
    """α of the labels ``cells`` at (annotator ``rows``, item ``cols``) of a matrix of ``shape``."""
    _check_confidence(confidence)
    if level not in ("nominal", "interval"):
        raise ValueError(f"level must be 'nominal' or 'interval', got {level!r}")
    per_item = np.bincount(cols, minlength=shape[1]) if len(cols) else np.zeros(shape[1], dtype=int)
    pairable = per_item >= 2
    keep = pairable[cols] if len(cols) else np.zeros(0, dtype=bool)
    out: dict[str, Any] = {
        "alpha": None,
        "alpha_low": None,
        "alpha_high": None,
        "level": level,
        "n_items": int(pairable.sum()),
        "n_pairable": int(keep.sum()),
        "n_annotators": len(np.unique(rows)),
        "n_boot": resampler.n_boot if resampler is not None else n_boot,
        "n_boot_used": 0,
        "confidence": confidence,
        "note": "",
    }
    if not out["n_items"]:
        out["note"] = "no item is labelled by two or more annotators"
        return out
    kept = pd.Series(cells[keep], dtype=object)
    if level == "nominal":
        codes, distinct = pd.factorize(kept)
        numbers = codes.astype(float)
    else:
        try:
            numbers = pd.to_numeric(kept).to_numpy(dtype=float)
        except (TypeError, ValueError) as error:
            raise ValueError(f"interval alpha needs numeric scores: {error}") from error
        distinct = np.unique(numbers)
    if len(distinct) < 2:
        out["note"] = "all pairable labels are equal: alpha is undefined without variation"
        return out
    columns = np.flatnonzero(pairable)
    position = np.full(shape[1], -1)
    position[columns] = np.arange(len(columns))
    data = np.full((shape[0], len(columns)), np.nan)
    data[rows[keep], position[cols[keep]]] = numbers
    import krippendorff

    out["alpha"] = float(krippendorff.alpha(reliability_data=data, level_of_measurement=level))
    if out["n_items"] >= 2 and (n_boot > 0 or resampler is not None):
        out["alpha_low"], out["alpha_high"], out["n_boot_used"] = _alpha_bootstrap(
            data, level, groups[columns], n_boot, seed, confidence, resampler
        )
    return out


def fleiss_kappa(
    df_long: pd.DataFrame, value_col: str, *, annotator_col: str = "annotator", item_col: str = "item"
) -> dict[str, Any]:
    """Fleiss' κ of nominal labels in long format (one row per annotator × item).

    Fleiss' κ (Fleiss 1971, *Psychol. Bull.* 76:378–382) needs the same number of raters per item,
    so only the items with exactly the modal number of raters (among items with two or more; the
    larger count when two are equally common) are used; ``n_items_used`` of ``n_items`` and
    ``raters_per_item`` say which, and ``note`` repeats it. Labels are counted per item and category
    (the table ``statsmodels.stats.inter_rater.aggregate_raters`` makes) and κ computed by its
    ``fleiss_kappa``. κ is
    None with a ``note`` when nothing is usable or every used label is the same category.

    Worked example: 3 items × 3 raters, counts (yes, no) = (3, 0), (2, 1), (0, 3). P_i = (Σ n_ij² − 3)
    / 6 = 1, 1/3, 1 → P̄ = 7/9; p_yes = 5/9, p_no = 4/9 → P_e = 41/81; κ = (63 − 41) / (81 − 41) = 0.55.
    The fourth item has only 2 raters and is left out.

    >>> long = pd.DataFrame({"annotator": ["u1", "u2", "u3"] * 3 + ["u1", "u2"], "item": [1] * 3
    ...                      + [2] * 3 + [3] * 3 + [4] * 2, "label": list("yyy" "yyn" "nnn" "yn")})
    >>> r = fleiss_kappa(long, "label")
    >>> round(r["kappa"], 4), r["n_items_used"], r["n_items"], r["raters_per_item"]
    (0.55, 3, 4, 3)
    """
    columns = [annotator_col, item_col, value_col]
    missing = set(columns) - set(df_long.columns)
    if missing:
        raise ValueError(f"labels need columns {columns}; missing {sorted(missing)}")
    labelled = df_long.loc[df_long[value_col].notna(), columns]
    if labelled.duplicated([annotator_col, item_col]).any():
        raise ValueError("repeated (annotator, item) labels; keep one per annotator and item")
    raters = labelled.groupby(item_col, sort=True)[value_col].count()
    out: dict[str, Any] = {"kappa": None, "n_items_used": 0, "n_items": int(raters.size)}
    out |= {"raters_per_item": None, "categories": [], "note": ""}
    counts = Counter(raters[raters >= 2])
    if not counts:
        out["note"] = "no item is labelled by two or more annotators"
        return out
    k = max(counts, key=lambda c: (counts[c], c))
    used = labelled[labelled[item_col].isin(raters.index[raters == k])]
    codes, categories = pd.factorize(used[value_col])
    categories = list(categories)
    item, items = pd.factorize(used[item_col])
    out |= {"n_items_used": len(items), "raters_per_item": int(k), "categories": categories}
    out["note"] = f"used {len(items)} of {raters.size} items: those with exactly {k} raters"
    if len(categories) < 2:
        out["note"] += "; every label is the same category, so kappa is undefined"
        return out
    from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss_kappa

    # items × categories counts: what statsmodels' aggregate_raters makes of the raters' codes
    size = len(items) * len(categories)
    table = np.bincount(item * len(categories) + codes, minlength=size).reshape(len(items), -1)
    out["kappa"] = float(sm_fleiss_kappa(table, method="fleiss"))
    return out


def _value_counts(df: pd.DataFrame, value_col: str, annotator_col: str, item_col: str):
    """Labelled rows (one per annotator and item), their value codes, item codes and per-item counts."""
    columns = [annotator_col, item_col, value_col]
    missing = set(columns) - set(df.columns)
    if missing:
        raise ValueError(f"labels need columns {columns}; missing {sorted(missing)}")
    labelled = df.loc[df[value_col].notna(), columns]
    if labelled.duplicated([annotator_col, item_col]).any():
        raise ValueError("repeated (annotator, item) labels; keep one per annotator and item")
    code, categories = pd.factorize(labelled[value_col])
    item, _ = pd.factorize(labelled[item_col])
    k = max(len(categories), 1)
    counts = np.bincount(item * k + code, minlength=(item.max() + 1 if len(item) else 0) * k)
    return labelled, code, item, counts.reshape(-1, k)


def annotator_agreement(
    df_long: pd.DataFrame,
    value_col: str,
    *,
    annotator_col: str = "annotator",
    item_col: str = "item",
    confidence: float = 0.95,
) -> pd.DataFrame:
    """Each annotator's agreement with the majority of the *other* annotators on the items they share.

    For every label of an item someone else also labelled, the others' labels of that item are
    counted; when one value has more votes than any other (a plurality; with one other annotator, that
    annotator's label) the label agrees with it or not; when the others split evenly the item is left
    out (``split``). ``agreement`` = agree / n with its Wilson interval (:func:`wilson_interval`). An
    annotator well below the rest "drifts" (the agreement-with-the-other-raters check of crowdsourced
    labelling, e.g. Snow et al. 2008, EMNLP, §3; the per-rater analogue of Fleiss' κ's pairwise view).
    One row per annotator: ``annotator, shared`` (items also labelled by someone else), ``n, agree,
    agreement, low, high, split``.

    Worked example: q1 (u1 A, u2 A, u3 B) and q2 (u1 A, u2 A). u1: on q1 the others say A and B
    (split, left out), on q2 u2 says A: 1 of 1. u2 likewise. u3: on q1 the others say A, A: 0 of 1.

    >>> long = pd.DataFrame({"annotator": ["u1", "u2", "u3", "u1", "u2"], "item": ["q1"] * 3 + ["q2"] * 2,
    ...                      "verdict": ["A", "A", "B", "A", "A"]})
    >>> annotator_agreement(long, "verdict")[["annotator", "shared", "n", "agree", "split"]].values.tolist()
    [['u1', 2, 1, 1, 1], ['u2', 2, 1, 1, 1], ['u3', 1, 1, 0, 0]]
    """
    _check_confidence(confidence)
    columns = ["annotator", "shared", "n", "agree", "agreement", "low", "high", "split"]
    labelled, code, item, counts = _value_counts(df_long, value_col, annotator_col, item_col)
    if not len(labelled):
        return pd.DataFrame(columns=columns)
    others = counts[item].copy()
    others[np.arange(len(code)), code] -= 1
    total = others.sum(axis=1)
    top = others.max(axis=1)
    clear = (total > 0) & ((others == top[:, None]).sum(axis=1) == 1)
    agree = clear & (others.argmax(axis=1) == code)
    frame = pd.DataFrame(
        {
            "annotator": labelled[annotator_col].to_numpy(),
            "shared": total > 0,
            "n": clear,
            "agree": agree,
            "split": (total > 0) & ~clear,
        }
    )
    rows = frame.groupby("annotator", sort=True).sum().reset_index()
    for column in ("shared", "n", "agree", "split"):
        rows[column] = rows[column].astype(int)
    intervals = [wilson_interval(a, n, confidence) for a, n in zip(rows["agree"], rows["n"], strict=True)]
    rows["agreement"] = [a / n if n else None for a, n in zip(rows["agree"], rows["n"], strict=True)]
    rows["low"] = [low for low, _ in intervals]
    rows["high"] = [high for _, high in intervals]
    return rows[columns]


def rater_pair_agreement(
    df_long: pd.DataFrame,
    value_col: str = "verdict",
    *,
    annotator_col: str = "annotator",
    item_col: str = "item",
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    resampler: Resampler | None = None,
) -> dict[str, Any]:
    """Agreement between two humans on the same item, as MT-bench reports it (S1 with ties, S2 without).

    Every pair of different annotators of an item is one comparison (Zheng et al. 2023, §4.2 and
    Table 2, "human–human" agreement: the baseline the judge is read against). Verdicts are A / B /
    tie, both_bad counting as tie. **S1** ``agreement_with_tie``: the share of pairs that agree;
    **S2** ``agreement_without_tie``: the same over the pairs where neither says tie. From per-item
    counts (a of A, b of B, t of tie; m = a + b + t): agreeing pairs C(a,2) + C(b,2) + C(t,2) of
    C(m,2), and C(a,2) + C(b,2) of C(a+b,2) without ties. Intervals: percentile bootstrap over items
    (:func:`ratio_bootstrap`; with a ``resampler`` over the items, its resamples).

    Worked example: q1 A, A, B → 1 of 3 pairs agree; q2 A, tie → 0 of 1; S1 = 1/4. Without ties q1
    gives 1 of 3, q2 none: S2 = 1/3.

    >>> long = pd.DataFrame({"annotator": ["u1", "u2", "u3", "u1", "u2"], "item": ["q1"] * 3 + ["q2"] * 2,
    ...                      "verdict": ["A", "A", "B", "A", "tie"]})
    >>> r = rater_pair_agreement(long, n_boot=100)
    >>> r["agreement_with_tie"], r["n_with_tie"], round(r["agreement_without_tie"], 4), r["n_without_tie"]
    (0.25, 4, 0.3333, 3)
    """
    _check_confidence(confidence)
    frame = df_long.assign(**{value_col: [_judged(v) for v in df_long[value_col]]})
    labelled, code, item, counts = _value_counts(frame, value_col, annotator_col, item_col)
    out: dict[str, Any] = {"n_items": 0, "confidence": confidence, "note": ""}
    for key in ("with_tie", "without_tie"):
        out |= {f"n_{key}": 0, f"agreement_{key}": None, f"agreement_{key}_low": None}
        out[f"agreement_{key}_high"] = None
    if not len(labelled):
        out["note"] = "no item is labelled by two or more annotators"
        return out
    categories = list(pd.factorize(labelled[value_col])[1])
    item_ids = list(pd.factorize(labelled[item_col])[1])
    full = np.zeros((len(counts), 3))
    for c, name in enumerate(categories):
        full[:, ("A", "B", "tie").index(name)] = counts[:, c]

    def pairs(x: np.ndarray) -> np.ndarray:
        return x * (x - 1) / 2

    m = full.sum(axis=1)
    decisive = full[:, 0] + full[:, 1]
    agree_all, agree_decisive = pairs(full).sum(axis=1), pairs(full[:, :2]).sum(axis=1)
    out["n_items"] = int((m >= 2).sum())
    if not out["n_items"]:
        out["note"] = "no item is labelled by two or more annotators"
        return out
    for key, hits, total in (
        ("with_tie", agree_all, pairs(m)),
        ("without_tie", agree_decisive, pairs(decisive)),
    ):
        keep = total > 0
        out[f"n_{key}"] = int(total.sum())
        if keep.any():
            r = ratio_bootstrap(
                hits[keep],
                total[keep],
                n_boot=n_boot,
                seed=seed,
                confidence=confidence,
                groups=[item_ids[i] for i in np.flatnonzero(keep)],
                resampler=resampler,
            )
            out[f"agreement_{key}"] = r["value"]
            out[f"agreement_{key}_low"], out[f"agreement_{key}_high"] = r["low"], r["high"]
    if out["agreement_without_tie"] is None:
        out["note"] = "no two annotators gave an item decisive (non-tie) verdicts"
    return out
