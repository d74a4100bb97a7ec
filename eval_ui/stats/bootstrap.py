"""Bootstrap resampling: one set of resamples drawn once as an index matrix and shared, the options a statistic's
bootstrap takes (:class:`Bootstrap`), and the cluster bootstrap of a ratio (:func:`ratio_bootstrap`).

Resamples are counted per unit and evaluated with array operations (no Python loop per resample), so a
report on thousands of labels takes a fraction of a second.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from .inputs import _check_confidence, _objects, _same_length
from .intervals import _percentiles

#: Resample indices drawn at a time (memory stays near 8 bytes × this, whatever the data size).
CHUNK_ELEMENTS = 2_000_000


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


@dataclass(frozen=True)
class Bootstrap:
    """How a statistic draws its percentile bootstrap interval (Efron & Tibshirani 1993, ch. 13).

    ``n_boot`` resamples (0: no interval) from ``numpy.random.default_rng(seed)``, the interval at
    ``confidence`` (also the level of a statistic's Wilson intervals); ``resampler``: resamples of a
    report's items shared by every statistic that takes them (:class:`Resampler`, whose own ``n_boot`` and
    ``seed`` then decide the draws; :meth:`shared` makes one). A statistic whose units are not those items
    draws its own (:meth:`own`).

    >>> boot = Bootstrap(200, seed=1).shared(["q1", "q2", "q3"])
    >>> boot.resampler.counts.shape, boot.own().resampler is None, boot.own().n_boot
    ((200, 3), True, 200)
    >>> Bootstrap(confidence=1.5)
    Traceback (most recent call last):
    ...
    ValueError: confidence must be in (0, 1), got 1.5
    """

    n_boot: int = 1000
    seed: int = 0
    confidence: float = 0.95
    resampler: Resampler | None = None

    def __post_init__(self) -> None:
        _check_confidence(self.confidence)

    def shared(self, units: Iterable[Hashable]) -> Bootstrap:
        """These options with one set of resamples of ``units`` for every statistic (a :class:`Resampler`)."""
        return replace(self, resampler=Resampler(units, self.n_boot, self.seed))

    def own(self) -> Bootstrap:
        """These options without shared resamples: a statistic draws its own from ``n_boot`` and ``seed``."""
        return replace(self, resampler=None)


#: The statistics' default bootstrap options: 1,000 resamples, seed 0, 95% (:data:`PAIRWISE_BOOT`: the pairwise
#: win rates' 2,000; :data:`NO_BOOT`: α, whose interval is asked for).
DEFAULT_BOOT = Bootstrap()
PAIRWISE_BOOT = Bootstrap(2000)
NO_BOOT = Bootstrap(0)


def _boot_sums(
    values: Any, groups: Sequence[Hashable] | None, boot: Bootstrap
) -> tuple[np.ndarray | None, int]:
    """(resampled column sums or None, number of units): the units are ``groups`` (each row its own
    unit when None), resampled by ``boot.resampler`` (else drawn here from ``n_boot`` and ``seed``).
    None — no interval — with fewer than 2 units or no resamples."""
    n = len(values)
    groups = list(range(n)) if groups is None else list(groups)
    units = len(set(groups))
    resampler = boot.resampler
    if resampler is None:
        if units < 2 or boot.n_boot <= 0:
            return None, units
        resampler = Resampler(groups, boot.n_boot, boot.seed)
    elif units < 2 or resampler.n_boot <= 0:
        return None, units
    return resampler.sums(values, groups), units


def ratio_bootstrap(
    numerator: Sequence[float],
    denominator: Sequence[float],
    boot: Bootstrap = DEFAULT_BOOT,
    *,
    groups: Sequence[Hashable] | None = None,
) -> dict[str, Any]:
    """Σ numerator / Σ denominator over units, with a percentile bootstrap interval resampling the units.

    A unit is a cluster of observations that enter a resample together — an item with all its
    labels — so labels of one item (which are not independent) are never split: the cluster
    bootstrap of a ratio estimator (Davison & Hinkley 1997, *Bootstrap Methods and their
    Application*, §3.8; percentile interval, Efron & Tibshirani 1993, ch. 13). Resamples whose
    denominator is 0 are dropped (``n_boot_used``). Fewer than 2 units, or ``n_boot = 0``: no interval.
    A unit is a row, or with ``groups`` (one id per row) all the rows of a group; ``boot.resampler``
    (:class:`Resampler`, whose ``n_boot`` and ``seed`` then apply) shares its resamples with other statistics.

    Worked example: items with 1 of 2 and 3 of 3 labels agreeing → (1 + 3) / (2 + 3) = 0.8.

    >>> r = ratio_bootstrap([1, 3], [2, 3], Bootstrap(200, seed=0))
    >>> r["value"], r["n_units"], r["low"] <= 0.8 <= r["high"]
    (0.8, 2, True)
    >>> ratio_bootstrap([], [])["value"] is None
    True
    """
    _same_length(numerator, denominator, "numerator and denominator")
    values = np.column_stack([np.asarray(numerator, float), np.asarray(denominator, float)])
    total = values.sum(axis=0) if len(values) else np.zeros(2)
    out: dict[str, Any] = {"value": None, "low": None, "high": None, "n_units": 0}
    out |= {"n_boot": boot.n_boot, "n_boot_used": 0, "seed": boot.seed, "confidence": boot.confidence}
    if total[1] <= 0:
        out["n_units"] = len(set(groups)) if groups is not None else len(values)
        return out
    out["value"] = float(total[0] / total[1])
    sums, out["n_units"] = _boot_sums(values, groups, boot)
    if sums is not None:
        with np.errstate(invalid="ignore", divide="ignore"):
            draws = sums[:, 0] / sums[:, 1]
        out["n_boot_used"] = int(np.isfinite(draws).sum())
        out["low"], out["high"] = _percentiles(draws, boot.confidence)
    return out
