"""Confidence intervals from formulas: Wilson's for a proportion, Fisher's z for a correlation, and the
percentile interval of bootstrap draws."""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np

from .inputs import _check_confidence


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


def _fisher_interval(r: float, se: float, confidence: float) -> tuple[float, float]:
    """tanh(atanh(r) ± z·se): the Fisher (1921) z-transform interval of a correlation."""
    if abs(r) >= 1:
        return r, r
    if math.isinf(se):
        return -1.0, 1.0
    from scipy.stats import norm

    z, half = math.atanh(r), norm.ppf(0.5 + confidence / 2) * se
    return math.tanh(z - half), math.tanh(z + half)


def _percentiles(draws: np.ndarray, confidence: float) -> tuple[float | None, float | None]:
    """The percentile interval of the finite bootstrap draws (Efron & Tibshirani 1993, ch. 13)."""
    kept = draws[np.isfinite(draws)]
    if not kept.size:
        return None, None
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(kept, [tail, 100 - tail])
    return float(low), float(high)
