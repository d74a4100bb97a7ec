"""The statute checker against the lawyers (LegalHalBench §5.6): NHSR's per-statute verdict against the
annotators' majority (:func:`nhsr_agreement`, :func:`majority`) and each checker verdict against the
lawyers' statute labels (:func:`verdict_agreement`, :func:`majority_labels`).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from eval_ui import verdicts

from .bootstrap import DEFAULT_BOOT, Bootstrap, _boot_sums
from .inputs import _check_confidence, _flag, _flags, _objects, _same_length
from .intervals import _percentiles, _z, wilson_interval


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
    boot: Bootstrap = DEFAULT_BOOT,
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

    Intervals (``boot.confidence``): Wilson's for the shares without ``groups``, else a percentile bootstrap over the
    groups (an item's statutes resampled together; ``boot.resampler``: the report's shared one); κ always by
    the bootstrap (its statutes, or their groups). A value that cannot be computed is None.

    Worked example: six statutes, the lawyers' sixth label ``wrong`` (no kind). ``wrong_number`` was
    given twice; the lawyers agree on hallucinated both times, on the kind once of once (the ``wrong``
    left out). Its κ over the five statutes with a kind: checker yes 1, lawyers yes 2, both 1:
    p_o = 4/5, p_e = (1·2 + 4·3)/25 = 0.56, κ = (0.8 − 0.56)/(1 − 0.56) = 0.545.

    >>> r = verdict_agreement(
    ...     ["verified", "verified", "wrong_number", "no_content", "not_found", "wrong_number"],
    ...     ["correct", "wrong_number", "wrong_number", "correct", "wrong_not_found", "wrong"], boot=Bootstrap(200))
    >>> row = r["rows"][1]
    >>> row["verdict"], row["label"], row["statutes"], row["same_hallucinated"], row["with_kind"], row["same_verdict"]
    ('wrong_number', 'wrong_number', 2, 1.0, 1, 1.0)
    >>> round(row["kappa"], 3), r["rows"][0]["same_verdict"], r["n"], r["n_with_kind"]
    (0.545, 0.5, 6, 5)
    """
    from lawluo.law import verdicts as checked  # the checker's verdict table

    auto_a, human_a, units_a = _labelled_statutes(checker, lawyers, groups, checked.VERDICTS)
    if groups is None:
        boot = boot.own()  # its units are groups: each statute is its own unit here
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
    draws, _ = _boot_sums(values, list(units_a), boot)
    sums = _VerdictSums(values.sum(axis=0), draws, units_a, groups is not None, boot.confidence)
    rows = [
        sums.row(row.code, label, mine, kind, base=8 * i)
        for i, (row, label, mine) in enumerate(zip(checked.VERDICT_TABLE, labels, given, strict=True))
    ]
    return {
        "rows": rows,
        "n": len(auto_a),
        "n_with_kind": int(kind.sum()),
        "dropped": len(checker) - len(auto_a),
    }


def _labelled_statutes(
    checker: Sequence[str | None],
    lawyers: Sequence[str | None],
    groups: Sequence[Hashable] | None,
    known_verdicts: Sequence[str],
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(checker verdicts, lawyers' labels, units) of the statutes where both say something (a label that is a
    judgement: not ``legacy_unticked``); the units are ``groups``, else each statute's position. An unknown
    verdict or label, or sequences of different lengths, are an error."""
    _same_length(checker, lawyers, "checker and lawyers")
    if groups is not None:
        _same_length(checker, groups, "checker and groups")
    auto_a, human_a = _objects(checker), _objects(lawyers)
    known = ~(pd.isna(auto_a) | pd.isna(human_a))
    bad = known & ~pd.Series(auto_a).isin(known_verdicts).to_numpy()
    if bad.any():
        raise ValueError(f"unknown checker verdict {auto_a[bad][0]!r}; expected one of {known_verdicts}")
    bad = known & ~pd.Series(human_a).isin(verdicts.STATUTE_CODES).to_numpy()
    if bad.any():
        raise ValueError(
            f"unknown statute label {human_a[bad][0]!r}; expected one of {verdicts.STATUTE_CODES}"
        )
    keep = known & pd.Series(human_a).map(verdicts.STATUTE_HALLUCINATED).notna().to_numpy()  # not legacy
    units = np.flatnonzero(keep) if groups is None else _objects(groups)[keep]
    return auto_a[keep], human_a[keep], units


@dataclass
class _VerdictSums:
    """:func:`verdict_agreement`'s eight sums per verdict over the statutes (``totals``) and in each resample
    (``draws``, None without resamples), read as one row per verdict. ``units``: each statute's unit;
    ``grouped``: the units are groups (bootstrap intervals for the shares, else Wilson's)."""

    totals: np.ndarray
    draws: np.ndarray | None
    units: np.ndarray
    grouped: bool
    confidence: float

    def share(self, k: int, subset: np.ndarray) -> tuple[float | None, float | None, float | None]:
        """(share, low, high) of sums ``k`` (hits) over ``k + 1`` (statutes), ``subset`` the statutes counted."""
        hits, n = self.totals[k], self.totals[k + 1]
        if not n:
            return None, None, None
        if not self.grouped:
            return float(hits / n), *wilson_interval(hits, int(n), self.confidence)
        if self.draws is None or len(set(self.units[subset])) < 2:
            return float(hits / n), None, None
        with np.errstate(invalid="ignore", divide="ignore"):
            return float(hits / n), *_percentiles(self.draws[:, k] / self.draws[:, k + 1], self.confidence)

    def kappa(self, k: int, kind: np.ndarray) -> tuple[float | None, float | None, float | None]:
        """(κ, low, high) of sums ``k`` … ``k + 3`` (:func:`_kappa_from_sums`) over the statutes with a kind."""
        kappa = float(_kappa_from_sums(self.totals[k : k + 4]))
        if not math.isfinite(kappa):
            return None, None, None
        if self.draws is None or len(set(self.units[kind])) < 2:
            return kappa, None, None
        return kappa, *_percentiles(_kappa_from_sums(self.draws[:, k : k + 4]), self.confidence)

    def row(self, code: str, label: str | None, mine: np.ndarray, kind: np.ndarray, base: int) -> dict:
        """The row of verdict ``code`` (``mine``: the statutes given it; its sums start at ``base``)."""
        hallucinated, agreed = self.share(base, mine), self.share(base + 2, mine & kind)
        kappa, low, high = self.kappa(base + 4, kind)
        return {
            "verdict": code,
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
