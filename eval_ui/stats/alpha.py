"""Krippendorff's α of the annotators' labels (nominal: verdicts, statute labels; interval: Rel, T_LC),
from a reliability matrix or from long labels, with a cluster bootstrap interval."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd

from .bootstrap import NO_BOOT, Bootstrap, _boot_sums
from .inputs import _objects
from .intervals import _percentiles


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
    boot: Bootstrap,
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
    sums, _ = _boot_sums(np.column_stack([observed, counts]), groups, boot)
    if sums is None:
        return None, None, 0
    n_c = sums[:, 1:]
    expected = np.einsum("bc,ck,bk->b", n_c, delta, n_c)
    with np.errstate(invalid="ignore", divide="ignore"):
        draws = 1.0 - (n_c.sum(axis=1) - 1.0) * sums[:, 0] / expected
    draws[expected <= 0] = np.nan
    low, high = _percentiles(draws, boot.confidence)
    return low, high, int(np.isfinite(draws).sum())


def krippendorff_alpha(
    table: pd.DataFrame,
    level: Literal["nominal", "interval"],
    boot: Bootstrap = NO_BOOT,
    *,
    unit_groups: Sequence[Hashable] | None = None,
) -> dict[str, Any]:
    """Krippendorff's α of a reliability matrix (index annotator, columns item, NaN = not labelled).

    Build the matrix from long labels with :func:`to_reliability_matrix` (or call
    :func:`krippendorff_alpha_long`, which skips the matrix of labels). ``level`` "nominal" (e.g.
    verdicts, hallucinated yes/no: any labels, encoded to integer codes for the ``krippendorff``
    package) or "interval" (Rel, T_LC scores: numbers). Computed by ``krippendorff.alpha``
    (Krippendorff 2011, "Computing Krippendorff's Alpha-Reliability", coincidence-matrix form). Only items
    labelled by at least two annotators are pairable (``n_items``, ``n_pairable`` values). α is None
    with a ``note`` when nothing is pairable or the pairable values are all the same (no variation,
    α undefined). With ``boot.n_boot`` > 0 (or a ``boot.resampler``), ``alpha_low`` / ``alpha_high`` are the
    percentile bootstrap interval over the columns (:func:`_alpha_bootstrap`; ``unit_groups`` — one
    id per column — resamples columns of one group together; Hayes & Krippendorff 2007 resample
    pairs of values instead).

    Worked example (nominal): two coders label 4 items 0 0 1 1 and 0 1 1 1. Coincidences: o₀₀ = 2,
    o₀₁ = o₁₀ = 1, o₁₁ = 4; n₀ = 3, n₁ = 5, n = 8; α = 1 − (n − 1)·(o₀₁ + o₁₀) / (2·n₀·n₁)
    = 1 − 7·2/30 = 0.5333.

    >>> m = pd.DataFrame([["no", "no", "yes", "yes"], ["no", "yes", "yes", "yes"]],
    ...                  index=["u1", "u2"], columns=[1, 2, 3, 4])
    >>> r = krippendorff_alpha(m, "nominal", Bootstrap(200))
    >>> round(r["alpha"], 4), r["n_items"], r["n_pairable"], r["n_annotators"]
    (0.5333, 4, 8, 2)
    >>> r["alpha_low"] <= r["alpha"] <= r["alpha_high"]
    True
    """
    mask = table.notna().to_numpy(dtype=bool)
    cells = table.to_numpy(dtype=object)[mask]
    rows, cols = np.nonzero(mask)
    groups = _objects(table.columns if unit_groups is None else unit_groups)
    return _alpha(rows, cols, cells, table.shape, level, groups, boot)


def krippendorff_alpha_long(
    df_long: pd.DataFrame,
    value_col: str,
    level: Literal["nominal", "interval"],
    *,
    annotator_col: str = "annotator",
    item_col: str = "item",
    group_col: str | None = None,
    boot: Bootstrap = NO_BOOT,
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
    return _alpha(rows, cols, cells, shape, level, groups, boot)


def _alpha(
    rows: np.ndarray,
    cols: np.ndarray,
    cells: np.ndarray,
    shape: tuple[int, int],
    level: str,
    groups: np.ndarray,
    boot: Bootstrap,
) -> dict[str, Any]:
    """α of the labels ``cells`` at (annotator ``rows``, item ``cols``) of a matrix of ``shape``."""
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
        "n_boot": boot.resampler.n_boot if boot.resampler is not None else boot.n_boot,
        "n_boot_used": 0,
        "confidence": boot.confidence,
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
    if out["n_items"] >= 2 and (boot.n_boot > 0 or boot.resampler is not None):
        out["alpha_low"], out["alpha_high"], out["n_boot_used"] = _alpha_bootstrap(
            data, level, groups[columns], boot
        )
    return out
