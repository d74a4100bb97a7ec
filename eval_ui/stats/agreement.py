"""Agreement between the annotators: Fleiss' κ, each annotator against the majority of the others (who
drifts), and human–human agreement as MT-bench reports it (S1 / S2)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np
import pandas as pd

from .bootstrap import DEFAULT_BOOT, Bootstrap, ratio_bootstrap
from .inputs import _check_confidence, _judged
from .intervals import wilson_interval


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
    boot: Bootstrap = DEFAULT_BOOT,
) -> dict[str, Any]:
    """Agreement between two humans on the same item, as MT-bench reports it (S1 with ties, S2 without).

    Every pair of different annotators of an item is one comparison (Zheng et al. 2023, §4.2 and
    Table 2, "human–human" agreement: the baseline the judge is read against). Verdicts are A / B /
    tie, both_bad counting as tie. **S1** ``agreement_with_tie``: the share of pairs that agree;
    **S2** ``agreement_without_tie``: the same over the pairs where neither says tie. From per-item
    counts (a of A, b of B, t of tie; m = a + b + t): agreeing pairs C(a,2) + C(b,2) + C(t,2) of
    C(m,2), and C(a,2) + C(b,2) of C(a+b,2) without ties. Intervals: percentile bootstrap over items
    (:func:`ratio_bootstrap`; with a ``boot.resampler`` over the items, its resamples).

    Worked example: q1 A, A, B → 1 of 3 pairs agree; q2 A, tie → 0 of 1; S1 = 1/4. Without ties q1
    gives 1 of 3, q2 none: S2 = 1/3.

    >>> long = pd.DataFrame({"annotator": ["u1", "u2", "u3", "u1", "u2"], "item": ["q1"] * 3 + ["q2"] * 2,
    ...                      "verdict": ["A", "A", "B", "A", "tie"]})
    >>> r = rater_pair_agreement(long, boot=Bootstrap(100))
    >>> r["agreement_with_tie"], r["n_with_tie"], round(r["agreement_without_tie"], 4), r["n_without_tie"]
    (0.25, 4, 0.3333, 3)
    """
    frame = df_long.assign(**{value_col: [_judged(v) for v in df_long[value_col]]})
    labelled, code, item, counts = _value_counts(frame, value_col, annotator_col, item_col)
    out: dict[str, Any] = {"n_items": 0, "confidence": boot.confidence, "note": ""}
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
            groups = [item_ids[i] for i in np.flatnonzero(keep)]
            r = ratio_bootstrap(hits[keep], total[keep], boot, groups=groups)
            out[f"agreement_{key}"] = r["value"]
            out[f"agreement_{key}_low"], out[f"agreement_{key}_high"] = r["low"], r["high"]
    if out["agreement_without_tie"] is None:
        out["note"] = "no two annotators gave an item decisive (non-tie) verdicts"
    return out
