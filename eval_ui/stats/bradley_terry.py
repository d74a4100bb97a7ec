"""Bradley–Terry ratings of the systems from pairwise labels, fitted for many bootstrap resamples at once.

A tie or both_bad is half a win for each side; ratings are reported on the Elo-like scale Chatbot Arena
uses (:data:`ELO_SCALE`, :data:`ELO_BASE`).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pandas as pd

from .bootstrap import DEFAULT_BOOT, Bootstrap, _boot_sums
from .inputs import _scores, _verdicts
from .pairwise import _pair_columns

#: Elo-like scale of a Bradley–Terry coefficient: 400 / ln 10 · β + 1000 (as Chatbot Arena reports).
ELO_SCALE = 400 / math.log(10)


ELO_BASE = 1000.0


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
    boot: Bootstrap = DEFAULT_BOOT,
    reference: str | None = None,
    group_col: str | None = None,
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
    ``numpy.random.default_rng(seed)`` (``n_boot = 0``: no CIs), or a ``boot.resampler`` over those items
    (used only with ``group_col``); every resample is fitted at once.
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
    >>> r = bradley_terry(labels, Bootstrap(200, seed=0))
    >>> r[["system", "n", "score", "rating", "elo"]].round(4).values.tolist()
    [['x', 4, 3.0, 0.5493, 1095.4243], ['y', 4, 1.0, -0.5493, 904.5757]]
    >>> r.attrs["n_comparisons"], r.attrs["n_boot_used"] < 200  # resamples where y never wins: skipped
    (4, True)
    """
    _pair_columns(df)
    if components:
        return bradley_terry_components(df, boot, reference, group_col)
    systems, i, j, s, cells, names = _comparisons(df, group_col)
    k, n = len(systems), len(s)
    if reference is not None and k and reference not in systems:
        raise ValueError(f"reference {reference!r} is not one of the systems {systems}")
    attrs = {"n_comparisons": n, "n_boot": boot.n_boot, "n_boot_used": 0, "seed": boot.seed}
    attrs |= {"confidence": boot.confidence, "reference": reference, "note": ""}
    if k < 2:
        empty = pd.DataFrame(columns=BT_COLUMNS)
        empty.attrs = attrs | {"note": "fewer than two systems compared"}
        return empty
    index = {name: pos for pos, name in enumerate(systems)}

    def normalise(beta: np.ndarray) -> np.ndarray:
        centre = beta.mean(axis=-1) if reference is None else beta[..., index[reference]]
        return beta - np.asarray(centre)[..., None]

    rows = pd.DataFrame({"system": systems})
    rows["n"] = np.bincount(i, minlength=k) + np.bincount(j, minlength=k)
    rows["score"] = np.bincount(i, weights=s, minlength=k) + np.bincount(j, weights=1 - s, minlength=k)
    rows["rating"] = rows["rating_low"] = rows["rating_high"] = np.nan
    _fit_ratings(rows, cells, names, boot if group_col else boot.own(), normalise, attrs)
    for column in ("", "_low", "_high"):
        rows[f"elo{column}"] = ELO_SCALE * rows[f"rating{column}"] + ELO_BASE
    rows = rows.sort_values(["rating", "system"], ascending=[False, True], ignore_index=True)[BT_COLUMNS]
    rows.attrs = attrs
    return rows


def _comparisons(
    df: pd.DataFrame, group_col: str | None
) -> tuple[list, np.ndarray, np.ndarray, np.ndarray, np.ndarray, list | None]:
    """The labelled comparisons of ``df`` (missing verdicts skipped): (sorted systems, each comparison's
    system_a and system_b positions, system_a's outcome, each unit's k × k score matrix flattened (units ×
    k²), the unit names — ``group_col``'s values, or None when each comparison is its own unit)."""
    all_scores = _scores(_verdicts(df["verdict"]))
    keep = ~np.isnan(all_scores)
    a = df["system_a"].to_numpy(dtype=object)[keep]
    b = df["system_b"].to_numpy(dtype=object)[keep]
    s = all_scores[keep]
    systems = sorted(set(a) | set(b))
    k, n = len(systems), len(s)
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
    return systems, i, j, s, cells.reshape(units, k * k), names


def _fit_ratings(
    rows: pd.DataFrame,
    cells: np.ndarray,
    names: list | None,
    boot: Bootstrap,
    normalise: Callable,
    attrs: dict,
) -> None:
    """Fill in the ratings of ``rows`` (one per system) and their intervals from the units' score matrices
    ``cells`` (units × k², :func:`_comparisons`), and ``attrs``' ``n_boot_used`` and ``note``: the fit of the
    data, then of every resample of the units (a resample without a finite fit is dropped)."""
    k = len(rows)
    beta = _bt_fit_many(cells.sum(axis=0).reshape(1, k, k))[0]
    if not np.isfinite(beta).all():
        attrs["note"] = (
            "no finite maximum-likelihood ratings: some group of systems never wins or ties against "
            "the others (Ford 1957), or the comparisons do not connect all systems"
        )
        return
    rows["rating"] = normalise(beta)
    sums, _ = _boot_sums(cells, names, boot)
    if sums is None:
        return
    draws = _bt_fit_many(sums.reshape(len(sums), k, k))
    draws = normalise(draws[np.isfinite(draws).all(axis=1)])
    attrs["n_boot_used"] = len(draws)
    if len(draws):
        tail = (1 - boot.confidence) / 2 * 100  # percentile intervals
        rows["rating_low"], rows["rating_high"] = np.percentile(draws, [tail, 100 - tail], axis=0)
    else:
        attrs["note"] = "no bootstrap resample had a finite maximum-likelihood fit; no CIs"


def bradley_terry_components(
    df: pd.DataFrame,
    boot: Bootstrap = DEFAULT_BOOT,
    reference: str | None = None,
    group_col: str | None = None,
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
    >>> r = bradley_terry_components(labels, Bootstrap(0))
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
    attrs = {
        "n_comparisons": len(kept),
        "n_boot": boot.n_boot,
        "seed": boot.seed,
        "confidence": boot.confidence,
    }
    attrs |= {"reference": reference, "components": len(order)}
    for raw_component, number in order.items():
        names = set(index[member == raw_component])
        rows = kept[kept["system_a"].isin(names)]
        ref = reference if reference in names else None
        part = bradley_terry(rows, boot, ref, group_col)
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
