"""Human-consistency statistics: lawyers' pairwise verdicts and scores against each other and the metrics.

Pure functions on plain Python sequences or pandas DataFrames; nothing here reads files or plots.
The library that defines a statistic computes it (scipy, statsmodels, ``krippendorff``); this module
cleans the input, encodes labels, handles the empty and degenerate cases (a result with ``n = 0``
and ``None`` values and a ``note``, never an exception) and names the outputs.

Pairwise verdicts are ``"A"`` (system_a's answer is better), ``"B"``, ``"tie"`` and ``"both_bad"``,
always in the item's un-swapped orientation. **both_bad counts as a tie everywhere**: neither answer
is preferred, so for a win rate it is half a win for each side (as the judge's draws are in
:mod:`lawluo.metrics.pairwise`, LawLuo §5.1), for Bradley–Terry half a win each, and for agreement
with a judge (who says only A / B / tie) it is "tie". ``None`` or NaN is a missing label and is
skipped (and counted); any other string is an error.

- Pairwise preferences: :func:`win_tie_loss`, :func:`pairwise_table`, :func:`bradley_terry`.
- Automatic metrics against humans (LegalHalBench §5.6): :func:`nhsr_agreement` and :func:`majority`
  (NHSR's per-statute verdict), :func:`correlation` (Rel, T_LC), :func:`judge_agreement`.
- Inter-annotator agreement: :func:`krippendorff_alpha` (with :func:`to_reliability_matrix`),
  :func:`fleiss_kappa`.
"""

from __future__ import annotations

import math
import warnings
from collections import Counter
from collections.abc import Sequence
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


def _flag(value: Any) -> bool | None:
    """A yes/no label (bool, numpy bool, 0 or 1), or None when missing."""
    if _missing(value):
        return None
    if isinstance(value, (bool, np.bool_)) or (
        isinstance(value, (int, float, np.number)) and value in (0, 1)
    ):
        return bool(value)
    raise ValueError(f"expected a bool label (or None), got {value!r}")


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


# --------------------------------------------------------------------------- pairwise preferences


def win_tie_loss(
    verdicts: Sequence[str | None], n_boot: int = 2000, seed: int = 0, confidence: float = 0.95
) -> dict[str, Any]:
    """Counts, shares and win rate of system A over system B, with percentile bootstrap CIs.

    ``verdicts`` are one system pair's labels ("A" = system_a wins, "B", "tie", "both_bad"; None is
    skipped and counted in ``missing``). ``win_share`` is the share of "A"; ``win_rate`` counts a
    tie **and a both_bad** as half a win, ``(A + (tie + both_bad) / 2) / n``, the convention of
    LawLuo §5.1 and of :mod:`lawluo.metrics.pairwise`. Both CIs are percentile bootstrap intervals
    of the mean over verdicts (Efron & Tibshirani 1993, *An Introduction to the Bootstrap*, ch. 13),
    computed by ``scipy.stats.bootstrap(method="percentile")`` with ``numpy.random.default_rng(seed)``
    and the same resamples for both; fewer than 2 verdicts, or ``n_boot = 0``, give no CI.

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
    if n >= 2 and n_boot > 0:
        from scipy.stats import bootstrap

        result = bootstrap(
            (wins, scores),
            lambda w, s, axis=-1: np.stack([w.mean(axis=axis), s.mean(axis=axis)]),
            paired=True,
            vectorized=True,
            n_resamples=n_boot,
            confidence_level=confidence,
            method="percentile",
            rng=np.random.default_rng(seed),
        )
        low, high = result.confidence_interval
        out["win_share_low"], out["win_rate_low"] = float(low[0]), float(low[1])
        out["win_share_high"], out["win_rate_high"] = float(high[0]), float(high[1])
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
    df: pd.DataFrame, n_boot: int = 2000, seed: int = 0, confidence: float = 0.95
) -> pd.DataFrame:
    """:func:`win_tie_loss` per unordered system pair of a labels table (columns system_a, system_b, verdict).

    Each pair appears once, as (first, second) in sorted name order; a row labelled the other way
    round has its verdict flipped (A ↔ B; tie and both_bad stay), so ``A`` counts the first system's
    wins. One row per pair with the pair's names and every key of :func:`win_tie_loss`.

    >>> labels = pd.DataFrame({"system_a": ["x", "y", "x", "y"], "system_b": ["y", "x", "y", "x"],
    ...                        "verdict": ["A", "A", "tie", "B"]})
    >>> t = pairwise_table(labels, n_boot=200)
    >>> t[["system_a", "system_b", "n", "A", "B", "tie", "win_rate"]].to_dict("records")
    [{'system_a': 'x', 'system_b': 'y', 'n': 4, 'A': 2, 'B': 1, 'tie': 1, 'win_rate': 0.625}]
    """
    _pair_columns(df)
    groups: dict[tuple[str, str], list[str | None]] = {}
    for a, b, verdict in zip(df["system_a"], df["system_b"], df["verdict"], strict=True):
        verdict = _verdict(verdict)
        if a <= b:
            groups.setdefault((a, b), []).append(verdict)
        else:
            groups.setdefault((b, a), []).append(None if verdict is None else FLIP[verdict])
    rows = [
        {"system_a": a, "system_b": b, **win_tie_loss(v, n_boot=n_boot, seed=seed, confidence=confidence)}
        for (a, b), v in sorted(groups.items())
    ]
    columns = ["system_a", "system_b", *win_tie_loss([]).keys()]
    return pd.DataFrame(rows, columns=columns)


def _bt_fit(i: np.ndarray, j: np.ndarray, s: np.ndarray, k: int) -> np.ndarray | None:
    """Bradley–Terry log-strengths β (β[0] = 0) by maximum likelihood, or None when no finite MLE exists.

    ``i``, ``j``: system indices of system_a and system_b per comparison; ``s``: system_a's score
    (1, 0 or 0.5). Comparisons are aggregated per ordered pair and fitted as a binomial GLM with
    logit link, no intercept, design +1 for system_a and −1 for system_b, proportions as outcome and
    counts as frequency weights (Agresti 2013, *Categorical Data Analysis*, 3rd ed., §11.6).
    """
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    # Ford (1957): the MLE is finite iff every split of the systems into two groups has each group
    # scoring against the other, i.e. the "scored against" digraph is strongly connected.
    scored = np.concatenate([i[s > 0], j[s < 1]]), np.concatenate([j[s > 0], i[s < 1]])
    graph = coo_matrix((np.ones(len(scored[0])), scored), shape=(k, k))
    if connected_components(graph, directed=True, connection="strong")[0] != 1:
        return None
    import statsmodels.api as sm

    pair = i * k + j
    counts = np.bincount(pair, minlength=k * k)
    totals = np.bincount(pair, weights=s, minlength=k * k)
    seen = np.flatnonzero(counts)
    X = np.zeros((len(seen), k))
    X[np.arange(len(seen)), seen // k] = 1.0
    X[np.arange(len(seen)), seen % k] = -1.0
    with warnings.catch_warnings():
        # One aggregated row per parameter leaves no residual degrees of freedom for the (unused) scale.
        warnings.simplefilter("ignore", RuntimeWarning)
        fit = sm.GLM(
            totals[seen] / counts[seen],
            X[:, 1:],
            family=sm.families.Binomial(),
            freq_weights=counts[seen].astype(float),
        ).fit()
    if not fit.converged or not np.all(np.isfinite(fit.params)):
        return None
    return np.concatenate([[0.0], np.asarray(fit.params)])


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
) -> pd.DataFrame:
    """Bradley–Terry ratings of the systems from pairwise labels (columns system_a, system_b, verdict).

    Model (Bradley & Terry 1952, *Biometrika* 39:324–345): P(a beats b) = 1 / (1 + exp(β_b − β_a)).
    A tie or both_bad is half a win for each side (the outcome 0.5; equivalent to counting it as one
    win plus one loss at half weight), missing verdicts are skipped. β is the maximum-likelihood fit
    of ``statsmodels`` GLM(Binomial, logit link) without intercept on the ±1 design matrix (the
    ``Logit`` model, which cannot take the fractional outcome of a tie); ratings are centred to mean 0,
    or set so that ``reference`` is 0. ``elo`` = 400 / ln 10 · rating + 1000. ``n`` is the system's
    comparisons, ``score`` its wins + ties / 2.

    CIs are percentile bootstrap intervals over comparisons resampled with replacement
    (``numpy.random.default_rng(seed)``; ``n_boot = 0``: no CIs). A resample with no finite MLE
    (Ford 1957: some group of systems never wins or ties against the rest) is skipped and
    ``attrs["n_boot_used"]`` says how many were kept; when many are skipped (few comparisons) the
    intervals are too narrow. With no finite MLE on the data itself every rating is NaN and
    ``attrs["note"]`` says why.

    Worked example: x beats y 3 times of 4, so P = 3/4 = 1 / (1 + e^−(β_x − β_y)), β_x − β_y = ln 3
    = 1.0986, centred ±0.5493; on the Elo scale 1000 ± 400 / ln 10 · 0.5493 = 1000 ± 95.4.

    >>> labels = pd.DataFrame({"system_a": ["x"] * 4, "system_b": ["y"] * 4,
    ...                        "verdict": ["A", "A", "A", "B"]})
    >>> r = bradley_terry(labels, n_boot=200)
    >>> r[["system", "n", "score", "rating", "elo"]].round(4).values.tolist()
    [['x', 4, 3.0, 0.5493, 1095.4243], ['y', 4, 1.0, -0.5493, 904.5757]]
    >>> r.attrs["n_comparisons"], r.attrs["n_boot_used"] < 200  # resamples where y never wins: skipped
    (4, True)
    """
    _check_confidence(confidence)
    _pair_columns(df)
    verdicts = [_verdict(v) for v in df["verdict"]]
    keep = np.array([v is not None for v in verdicts], dtype=bool)
    a = df["system_a"].to_numpy()[keep]
    b = df["system_b"].to_numpy()[keep]
    s = np.array([SCORE[v] for v in verdicts if v is not None], dtype=float)
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
    i = np.array([index[x] for x in a])
    j = np.array([index[x] for x in b])

    def normalise(beta: np.ndarray) -> np.ndarray:
        return beta - (beta.mean() if reference is None else beta[index[reference]])

    rows = pd.DataFrame({"system": systems})
    rows["n"] = np.bincount(i, minlength=k) + np.bincount(j, minlength=k)
    rows["score"] = np.bincount(i, weights=s, minlength=k) + np.bincount(j, weights=1 - s, minlength=k)
    rows["rating"] = rows["rating_low"] = rows["rating_high"] = np.nan
    beta = _bt_fit(i, j, s, k)
    if beta is None:
        attrs["note"] = (
            "no finite maximum-likelihood ratings: some group of systems never wins or ties against "
            "the others (Ford 1957), or the comparisons do not connect all systems"
        )
    else:
        rows["rating"] = normalise(beta)
        rng = np.random.default_rng(seed)
        draws = []
        for _ in range(n_boot):
            pick = rng.integers(0, n, size=n)
            fitted = _bt_fit(i[pick], j[pick], s[pick], k)
            if fitted is not None:
                draws.append(normalise(fitted))
        attrs["n_boot_used"] = len(draws)
        if draws:
            tail = (1 - confidence) / 2 * 100
            rows["rating_low"], rows["rating_high"] = np.percentile(draws, [tail, 100 - tail], axis=0)
        elif n_boot:
            attrs["note"] = "no bootstrap resample had a finite maximum-likelihood fit; no CIs"
    for column in ("", "_low", "_high"):
        rows[f"elo{column}"] = ELO_SCALE * rows[f"rating{column}"] + ELO_BASE
    rows = rows.sort_values(["rating", "system"], ascending=[False, True], ignore_index=True)[BT_COLUMNS]
    rows.attrs = attrs
    return rows


# --------------------------------------------------------------------------- metrics against humans


def majority(labels: Sequence[bool | None]) -> bool | None:
    """The majority of yes/no labels (None entries ignored); None when they split evenly or are empty.

    >>> majority([True, True, False]), majority([True, False]), majority([None, False]), majority([])
    (True, None, False, None)
    """
    flags = [f for f in map(_flag, labels) if f is not None]
    yes, no = sum(flags), len(flags) - sum(flags)
    return None if yes == no else yes > no


def nhsr_agreement(auto: Sequence[bool | None], human: Sequence[bool | None]) -> dict[str, Any]:
    """Agreement of NHSR's per-statute verdict (True = hallucinated) with the annotators' majority label.

    ``auto[i]`` and ``human[i]`` are the same cited statute; a pair where either is None (e.g. no
    majority, see :func:`majority`) is dropped and counted in ``dropped``. Returns ``accuracy``,
    Cohen's κ (Cohen 1960, *Educ. Psychol. Meas.* 20:37–46) computed by ``statsmodels``
    ``cohens_kappa`` on the 2×2 table, the table ``confusion[auto][human]`` and ``n``
    (LegalHalBench §5.6). κ is None when undefined (both raters constant and equal: chance agreement 1).

    Worked example: p_o = 3/4; marginals auto 2/4 yes, human 1/4 yes → p_e = .5·.25 + .5·.75 = .5;
    κ = (.75 − .5) / (1 − .5) = 0.5.

    >>> r = nhsr_agreement([True, True, False, False, None], [True, False, False, False, True])
    >>> r["n"], r["dropped"], r["accuracy"], round(r["kappa"], 6), r["confusion"]
    (4, 1, 0.75, 0.5, {True: {True: 1, False: 1}, False: {True: 0, False: 2}})
    """
    _same_length(auto, human, "auto and human")
    pairs = [(_flag(x), _flag(y)) for x, y in zip(auto, human, strict=True)]
    kept = [(x, y) for x, y in pairs if x is not None and y is not None]
    n = len(kept)
    confusion = {x: {y: sum(p == (x, y) for p in kept) for y in (True, False)} for x in (True, False)}
    out: dict[str, Any] = {"n": n, "dropped": len(pairs) - n, "accuracy": None, "kappa": None}
    out |= {"confusion": confusion, "note": ""}
    if not n:
        out["note"] = "no statute has both an automatic and a majority human label"
        return out
    out["accuracy"] = sum(x == y for x, y in kept) / n
    from statsmodels.stats.inter_rater import cohens_kappa

    table = np.array([[confusion[x][y] for y in (True, False)] for x in (True, False)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        kappa = float(cohens_kappa(table, return_results=False))
    if math.isfinite(kappa):
        out["kappa"] = kappa
    else:
        out["note"] = "Cohen's kappa is undefined: both sides give the same single label"
    return out


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


def judge_agreement(
    judge: Sequence[str | None],
    human: Sequence[str | None],
    judge_swapped: Sequence[str | None] | None = None,
) -> dict[str, Any]:
    """Agreement of an LLM judge's pairwise verdicts with human verdicts, and the judge's self-consistency.

    ``judge[i]`` and ``human[i]`` are verdicts ("A", "B", "tie"; both_bad counts as tie, None is
    missing and the pair is dropped) on the same item in the same orientation. To compare with every
    annotator rather than a majority, repeat the judge's verdict once per annotator. Following
    MT-bench (Zheng et al. 2023, §4.2): ``agreement_with_tie`` is the exact-match share over all
    pairs (``n_with_tie``); ``agreement_without_tie`` keeps only pairs where neither side says tie
    (``n_without_tie``). ``judge_swapped`` are the judge's verdicts with the answers shown in swapped
    order, already mapped back to the un-swapped orientation; ``self_consistency`` is the share of
    items whose two verdicts agree (Zheng et al. 2023 §3.3, "consistency"), over ``n_consistency``.
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
    judge_v = [_judged(v) for v in judge]
    human_v = [_judged(v) for v in human]
    pairs = [(j, h) for j, h in zip(judge_v, human_v, strict=True) if j is not None and h is not None]
    strict = [(j, h) for j, h in pairs if "tie" not in (j, h)]

    def share(kept: list[tuple[str, str]]) -> float | None:
        return sum(a == b for a, b in kept) / len(kept) if kept else None

    labels = ("A", "B", "tie")
    out: dict[str, Any] = {
        "n_with_tie": len(pairs),
        "agreement_with_tie": share(pairs),
        "n_without_tie": len(strict),
        "agreement_without_tie": share(strict),
        "dropped": len(judge_v) - len(pairs),
        "confusion": {j: {h: pairs.count((j, h)) for h in labels} for j in labels},
        "n_consistency": 0,
        "self_consistency": None,
    }
    if judge_swapped is not None:
        _same_length(judge, judge_swapped, "judge and judge_swapped")
        swapped = [_judged(v) for v in judge_swapped]
        both = [(j, s) for j, s in zip(judge_v, swapped, strict=True) if j is not None and s is not None]
        out["n_consistency"], out["self_consistency"] = len(both), share(both)
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


def krippendorff_alpha(table: pd.DataFrame, level: Literal["nominal", "interval"]) -> dict[str, Any]:
    """Krippendorff's α of a reliability matrix (index annotator, columns item, NaN = not labelled).

    Build the matrix from long labels with :func:`to_reliability_matrix`. ``level`` "nominal" (e.g.
    verdicts, hallucinated yes/no: any labels, encoded to integer codes for the ``krippendorff``
    package) or "interval" (Rel, T_LC scores: numbers). Computed by ``krippendorff.alpha``
    (Krippendorff 2011, "Computing Krippendorff's Alpha-Reliability", coincidence-matrix form). Only items
    labelled by at least two annotators are pairable (``n_items``, ``n_pairable`` values). α is None
    with a ``note`` when nothing is pairable or the pairable values are all the same (no variation,
    α undefined).

    Worked example (nominal): two coders label 4 items 0 0 1 1 and 0 1 1 1. Coincidences: o₀₀ = 2,
    o₀₁ = o₁₀ = 1, o₁₁ = 4; n₀ = 3, n₁ = 5, n = 8; α = 1 − (n − 1)·(o₀₁ + o₁₀) / (2·n₀·n₁)
    = 1 − 7·2/30 = 0.5333.

    >>> m = pd.DataFrame([["no", "no", "yes", "yes"], ["no", "yes", "yes", "yes"]],
    ...                  index=["u1", "u2"], columns=[1, 2, 3, 4])
    >>> r = krippendorff_alpha(m, "nominal")
    >>> round(r["alpha"], 4), r["n_items"], r["n_pairable"], r["n_annotators"]
    (0.5333, 4, 8, 2)
    """
    if level not in ("nominal", "interval"):
        raise ValueError(f"level must be 'nominal' or 'interval', got {level!r}")
    present = table.notna()
    pairable = present.sum(axis=0) >= 2
    values = table.loc[:, pairable]
    out: dict[str, Any] = {
        "alpha": None,
        "level": level,
        "n_items": int(pairable.sum()),
        "n_pairable": int(present.loc[:, pairable].to_numpy().sum()),
        "n_annotators": int(present.any(axis=1).sum()),
        "note": "",
    }
    if not out["n_items"]:
        out["note"] = "no item is labelled by two or more annotators"
        return out
    distinct = pd.unique(values.stack().dropna().to_numpy())
    if len(distinct) < 2:
        out["note"] = "all pairable labels are equal: alpha is undefined without variation"
        return out
    if level == "nominal":
        codes = {value: code for code, value in enumerate(distinct)}
        data = values.apply(lambda col: col.map(codes)).to_numpy(dtype=float)
    else:
        try:
            data = values.apply(pd.to_numeric).to_numpy(dtype=float)
        except (TypeError, ValueError) as error:
            raise ValueError(f"interval alpha needs numeric scores: {error}") from error
    import krippendorff

    out["alpha"] = float(krippendorff.alpha(reliability_data=data, level_of_measurement=level))
    return out


def fleiss_kappa(
    df_long: pd.DataFrame, value_col: str, *, annotator_col: str = "annotator", item_col: str = "item"
) -> dict[str, Any]:
    """Fleiss' κ of nominal labels in long format (one row per annotator × item).

    Fleiss' κ (Fleiss 1971, *Psychol. Bull.* 76:378–382) needs the same number of raters per item,
    so only the items with exactly the modal number of raters (among items with two or more; the
    larger count when two are equally common) are used; ``n_items_used`` of ``n_items`` and
    ``raters_per_item`` say which, and ``note`` repeats it. Labels are counted per item by
    ``statsmodels.stats.inter_rater.aggregate_raters`` and κ computed by its ``fleiss_kappa``. κ is
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
    categories = list(pd.unique(used[value_col]))
    codes = {value: code for code, value in enumerate(categories)}
    per_item = used.groupby(item_col, sort=True)[value_col].agg(lambda col: [codes[v] for v in col])
    out |= {"n_items_used": int(per_item.size), "raters_per_item": int(k), "categories": categories}
    out["note"] = f"used {per_item.size} of {raters.size} items: those with exactly {k} raters"
    if len(categories) < 2:
        out["note"] += "; every label is the same category, so kappa is undefined"
        return out
    from statsmodels.stats.inter_rater import aggregate_raters
    from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss_kappa

    table, _ = aggregate_raters(np.array(per_item.tolist()), n_cat=len(categories))
    out["kappa"] = float(sm_fleiss_kappa(table, method="fleiss"))
    return out
