"""The statistics' input, cleaned: verdicts, yes/no labels and numbers, with missing values made None.

A pairwise verdict is ``"A"`` (system_a's answer is better), ``"B"``, ``"tie"`` or ``"both_bad"``; ``None``
or NaN is a missing label (skipped and counted by the statistics); any other string is an error.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from eval_ui import verdicts

#: The verdicts (eval_ui/verdicts.py); FLIP: a verdict as seen from the other system (the pair read as
#: (system_b, system_a)); SCORE: system_a's Bradley–Terry outcome, half a win for tie and both_bad.
VERDICTS, FLIP, SCORE = verdicts.VERDICTS, verdicts.FLIP, verdicts.SCORE


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


def _judged(value: Any) -> str | None:
    """A verdict for judge agreement: A / B / tie (both_bad → tie), or None when missing."""
    verdict = _verdict(value)
    return "tie" if verdict == "both_bad" else verdict


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


def _objects(values: Iterable[Any]) -> np.ndarray:
    """``values`` as a 1-d object array (quickly, from a pandas column or a numpy array)."""
    if isinstance(values, pd.Series | pd.Index | np.ndarray):
        return np.asarray(
            values.to_numpy(dtype=object) if not isinstance(values, np.ndarray) else values, dtype=object
        )
    array = np.empty(len(values := list(values)), dtype=object)
    array[:] = values
    return array
