"""The systems' sections: win / tie / loss per pair, each system's win rate, the paired bootstrap test of
two systems (:func:`default_pair` chooses them) and Bradley–Terry ratings."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from lawluo.i18n import EN, message

from .. import stats
from ..stats.inputs import _scores, _verdicts
from .report import Report, Section, _needs, _records, _rounded, _section, _set
from .specs import SPECS


def _pairwise(labels: pd.DataFrame, report: Report, charts: dict, boot: stats.Bootstrap) -> Section:
    title = "胜/平/负 Win / tie / loss"
    note = message("stats.note.pairwise", n_boot=boot.n_boot)
    if labels.empty:
        return _section(title, None, note, ["win_rate"])
    table = stats.pairwise_table(labels, boot, group_col="item_id")
    table = table.rename(columns={"n_units": "items", "win_rate_low": "low", "win_rate_high": "high"})
    keep = ["system_a", "system_b", "n", "items", "A", "B", "tie", "both_bad", "win_rate", "low", "high"]
    table = table[keep]
    rows = table[table["n"] > 0]
    if len(rows):
        _set(report, "win_rate", _records(rows), n=int(rows["n"].sum()))
        charts["pairs"] = rows
    return _section(title, _rounded(table), note, ["win_rate"])


def _system_rates(labels: pd.DataFrame, report: Report, boot: stats.Bootstrap) -> Section:
    title = "各系统胜率 Each system's win rate"
    note = message("stats.note.system_rates")
    if labels.empty:
        return _section(title, None, note, ["system_win_rate"])
    units, names = pd.factorize(labels["item_id"])
    names = np.asarray(names, dtype=object)
    scores = _scores(_verdicts(labels["verdict"]))
    rows = []
    for system in report.systems:
        score, taken = stats.system_scores(labels, system, units, len(names), scores)
        kept = taken > 0
        r = stats.ratio_bootstrap(score[kept], taken[kept], boot, groups=list(names[kept]))
        rows.append(
            {"system": system, "n": int(taken.sum()), "items": int(kept.sum()), "win_rate": r["value"]}
            | {"low": r["low"], "high": r["high"]}
        )
    table = pd.DataFrame(rows, columns=["system", "n", "items", "win_rate", "low", "high"])
    table = table.sort_values(["win_rate", "system"], ascending=[False, True], ignore_index=True)
    scored = table[table["win_rate"].notna()]
    if len(scored):
        _set(report, "system_win_rate", _records(scored), n=int(scored["n"].sum()))
    return _section(title, _rounded(table), note, ["system_win_rate"])


def _paired(
    labels: pd.DataFrame, report: Report, compare: tuple[str, str] | None, boot: stats.Bootstrap
) -> Section:
    title = "配对自助检验 Paired bootstrap test"
    key = "paired_test"
    systems = report.systems
    if compare is not None:
        first, second = compare
        unknown = [s for s in compare if s not in systems]
        if unknown or first == second:
            why = (
                message("stats.why.no_labels", systems=", ".join(unknown))
                if unknown
                else message("stats.why.two_systems")
            )
            _needs(report, key, f"needs two different labelled systems ({why.text(EN)})")
            return _section(title, None, message("stats.note.paired_unavailable", why=why), [key])
    else:
        rates = report.statistics["system_win_rate"].value or []
        pair = default_pair(labels, {r["system"]: r["win_rate"] for r in rates})
        if pair is None:
            return Section(title, None, "", [key])
        first, second = pair
    r = stats.paired_bootstrap(labels, first, second, boot, group_col="item_id")
    table = pd.DataFrame(
        [
            {
                "first": first,
                "second": second,
                "win_rate_first": r["win_rate_first"],
                "win_rate_second": r["win_rate_second"],
                "difference": r["difference"],
                "low": r["low"],
                "high": r["high"],
                "p_value": r["p_value"],
                "items": r["n_items"],
                "met": r["met"],
            }
        ]
    )
    if r["p_value"] is not None:
        _set(report, key, r["difference"], r["low"], r["high"], r["n_items"], p_value=r["p_value"], first=first,
             second=second)  # fmt: skip
    else:
        _needs(report, key, "needs labels of both systems on at least 2 items")
    chosen = message("stats.chosen.admin" if compare else "stats.chosen.default")
    fields = {
        "first": first,
        "second": second,
        "chosen": chosen,
        "n_boot": boot.n_boot,
        "seed": boot.seed,
    }
    if r["note"]:
        note = message("stats.note.paired_more", **fields, more=r["note"])
    else:
        note = message("stats.note.paired", **fields)
    return _section(title, _rounded(table), note, [key])


def default_pair(labels: pd.DataFrame, win_rates: Mapping[str, float | None]) -> tuple[str, str] | None:
    """The two systems the paired test compares by default: of the pairs that met (an item comparing
    them directly), the one with the most such items; ties go to the higher win rates, then the names.
    Two systems that never met would be compared through different opponents, so they are never the
    default. The better of the two comes first. None without a labelled comparison.

    >>> labels = pd.DataFrame({"item_id": ["q1", "q2", "q3", "q4"], "system_a": ["x", "x", "y", "y"],
    ...                        "system_b": ["z", "z", "w", "w"], "verdict": ["A", "B", "A", "A"]})
    >>> default_pair(labels, {"y": 1.0, "x": 0.5, "z": 0.5, "w": 0.0})  # the two best, y and x, never met
    ('y', 'w')
    """
    if labels.empty:
        return None
    rate = {k: (v if v is not None else -1.0) for k, v in win_rates.items()}
    met = labels[labels["system_a"] != labels["system_b"]]
    pairs = (
        met.assign(pair=[tuple(sorted(p)) for p in zip(met["system_a"], met["system_b"], strict=True)])
        .groupby("pair")["item_id"]
        .nunique()
    )
    if pairs.empty:
        return None
    best = min(pairs.items(), key=lambda kv: (-kv[1], -sum(rate.get(s, -1.0) for s in kv[0]), kv[0]))[0]
    first, second = sorted(best, key=lambda s: (-rate.get(s, -1.0), s))
    return first, second


def _bradley_terry(labels: pd.DataFrame, report: Report, charts: dict, boot: stats.Bootstrap) -> Section:
    title = "Bradley–Terry"
    if labels.empty:
        return _section(title, None, None, ["bradley_terry"])
    table = stats.bradley_terry(labels, boot, group_col="item_id", components=True)
    note = table.attrs.get("note", "")
    fitted = table[table["rating"].notna()]
    if fitted.empty:
        _needs(report, "bradley_terry", f"{SPECS['bradley_terry'].needs} ({note})" if note else "")
        return _section(title, _rounded(table) if len(table) else None, None, ["bradley_terry"])
    rows = fitted[["component", "system", "elo", "elo_low", "elo_high", "n"]]
    _set(report, "bradley_terry", _records(rows), n=len(labels), components=table.attrs.get("components", 1))
    charts["ratings"] = fitted
    used = table.attrs.get("n_boot_used", 0)
    groups = table.attrs.get("components", 1)
    parts = [message("stats.note.bradley_terry", used=used, n_boot=boot.n_boot)]
    if groups > 1:
        parts.append(message("stats.note.bradley_terry_apart", groups=groups))
    if note:
        parts.append(message("stats.note.library", note=note))
    explain = parts[0]
    for part in parts[1:]:
        explain = message("stats.note.then", first=explain, then=part)
    return _section(title, _rounded(table), explain, ["bradley_terry"])
