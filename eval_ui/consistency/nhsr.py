"""The statute checker against the lawyers: NHSR against their majority per cited statute, each checker verdict
against their majority label, and NHSR per system. Only explicit 真实 / 有误 labels count: an unlabelled
statute and the migration's ``legacy_unticked`` are missing data, and the report says how many were left out."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from lawluo.i18n import message
from lawluo.law import verdicts as checker_verdicts

from .. import stats
from .labels import _yes_no
from .report import Report, Section, _needs, _records, _rounded, _section, _set
from .specs import DECIMALS, LEGACY_UNTICKED, SPECS

#: ``(item_id, side) -> {statute key: the checker's verdict}`` — a verdict code of :mod:`lawluo.law.verdicts`
#: (``"wrong_number"``), or only its hallucinated yes/no (``True``), which leaves the per-verdict table out.
AutoHallucinated = Callable[[str, str], Mapping[str, "str | bool"]]


def _statute_majorities(statutes: pd.DataFrame, auto_hallucinated: AutoHallucinated | None) -> pd.DataFrame:
    """One row per cited statute (item, side, statute): explicit labels for and against, the majority,
    the majority's label (:func:`eval_ui.stats.majority_labels`), whether a legacy_unticked label was among
    its rows, and the checker's hallucinated yes/no and, when ``auto_hallucinated`` gives it, its verdict."""
    columns = [
        "item_id", "side", "statute", "system", "yes", "no", "legacy", "rows", "majority", "label", "checker",
        "checker_verdict",
    ]  # fmt: skip
    if statutes.empty:
        return pd.DataFrame(columns=columns)
    yes, no = _yes_no(statutes["hallucinated"])
    frame = pd.DataFrame(
        {
            "item_id": statutes["item_id"],
            "side": statutes["side"],
            "statute": statutes["statute"],
            "system": statutes["system"],
            "yes": yes.astype(int),
            "no": no.astype(int),
            "legacy": (statutes["label"] == LEGACY_UNTICKED) if "label" in statutes else False,
            "label": statutes["label"] if "label" in statutes else None,
        }
    )
    by_statute = frame.groupby(["item_id", "side", "statute"], sort=True)
    grouped = by_statute.agg(
        system=("system", "first"), yes=("yes", "sum"), no=("no", "sum"), legacy=("legacy", "any"),
        rows=("yes", "size"),
    ).reset_index()  # fmt: skip
    row = by_statute.ngroup()  # the row of grouped each label belongs to
    grouped["label"] = stats.majority_labels(frame["label"], row).reindex(range(len(grouped))).to_numpy()
    grouped["majority"] = np.where(
        grouped["yes"] > grouped["no"], True, np.where(grouped["no"] > grouped["yes"], False, None)
    )
    grouped["majority"] = grouped["majority"].astype(object)
    verdicts: dict[tuple[str, str], Mapping[str, str | bool]] = {}
    checker, checker_verdict = [], []
    keys = (grouped[c].to_numpy(dtype=object) for c in ("item_id", "side", "statute"))
    for item_id, side, statute in zip(*keys, strict=True):
        if auto_hallucinated is None:
            checker.append(None)
            checker_verdict.append(None)
            continue
        if (item_id, side) not in verdicts:
            verdicts[item_id, side] = auto_hallucinated(item_id, side) or {}
        flag, verdict = _checker_says(verdicts[item_id, side].get(statute))
        checker.append(flag)
        checker_verdict.append(verdict)
    grouped["checker"] = pd.Series(checker, dtype=object)
    grouped["checker_verdict"] = pd.Series(checker_verdict, dtype=object)
    return grouped[columns]


def _checker_says(found: str | bool | None) -> tuple[bool | None, str | None]:
    """(hallucinated, verdict) of what ``auto_hallucinated`` gave for one statute: a verdict code, or a yes/no.

    >>> _checker_says("amended_since"), _checker_says(True), _checker_says(None)
    ((False, 'amended_since'), (True, None), (None, None))
    """
    if found is None:
        return None, None
    if isinstance(found, str):
        if found not in checker_verdicts.BY_CODE:
            raise ValueError(f"the checker gave an unknown verdict {found[:40]!r}")
        return found in checker_verdicts.HALLUCINATED, found
    return bool(found), None


def _nhsr(statutes: pd.DataFrame, per: pd.DataFrame, checker: bool, report: Report) -> Section:
    title = "NHSR 与律师多数意见 NHSR against the lawyers' majority"
    keys = ["nhsr_accuracy", "nhsr_kappa"]
    if per.empty:
        return _section(title, None, message("stats.note.no_statutes"), keys)
    labelled = (per["yes"] + per["no"]) > 0
    legacy = ~labelled & per["legacy"].astype(bool)
    unlabelled = ~labelled & ~legacy
    split = labelled & per["majority"].isna()
    no_checker = labelled & per["majority"].notna() & per["checker"].isna()
    kept = per[per["majority"].notna() & per["checker"].notna()]
    result = stats.nhsr_agreement(kept["checker"].tolist(), kept["majority"].tolist())
    yes, no = _yes_no(statutes["hallucinated"])
    missing_rows = int((~yes & ~no).sum())
    c = result["confusion"]
    table = pd.DataFrame(
        [
            {
                "": "checker: hallucinated",
                "lawyers: hallucinated": c[True][True],
                "lawyers: correct": c[True][False],
            },
            {
                "": "checker: correct",
                "lawyers: hallucinated": c[False][True],
                "lawyers: correct": c[False][False],
            },
        ]
    )
    if result["accuracy"] is not None:
        _set(
            report,
            "nhsr_accuracy",
            result["accuracy"],
            result["accuracy_low"],
            result["accuracy_high"],
            result["n"],
        )
    if result["kappa"] is not None:
        _set(report, "nhsr_kappa", result["kappa"], result["kappa_low"], result["kappa_high"], result["n"])
    elif result["n"]:
        _needs(report, "nhsr_kappa", f"{SPECS['nhsr_kappa'].needs} ({result['note']})")
    if not checker:
        why = "needs the statute checker (the statute database is not loaded)"
        _needs(report, "nhsr_accuracy", why)
        _needs(report, "nhsr_kappa", why)

    def share(value: float | None, low: float | None, high: float | None) -> str:
        return "—" if value is None else f"{value:.3f} [{low:.3f}, {high:.3f}]"

    note = message(
        "stats.note.nhsr",
        n=result["n"],
        accuracy=share(result["accuracy"], result["accuracy_low"], result["accuracy_high"]),
        kappa=share(result["kappa"], result["kappa_low"], result["kappa_high"]),
        unlabelled=int(unlabelled.sum()),
        legacy=int(legacy.sum()),
        split=int(split.sum()),
        no_checker=int(no_checker.sum()),
        missing=missing_rows,
    )
    if result["note"]:
        note = message("stats.note.then", first=note, then=message("stats.note.library", note=result["note"]))
    report.statistics["nhsr_accuracy"].extra.update(
        unlabelled=int(unlabelled.sum()), legacy_unticked=int(legacy.sum()), split=int(split.sum()),
        no_checker=int(no_checker.sum()), missing_labels=missing_rows,
    )  # fmt: skip
    return _section(title, table, note, keys)


def _verdicts(per: pd.DataFrame, checker: bool, report: Report, boot: stats.Bootstrap) -> Section:
    """Each checker verdict against the lawyers' majority label (:func:`eval_ui.stats.verdict_agreement`)."""
    title = "每种判定与律师的一致 The checker against the lawyers, per verdict"
    key = "verdict_agreement"
    if not checker:
        _needs(report, key, "needs the statute checker (the statute database is not loaded)")
        return Section(title, None, "", [key])
    if per.empty:
        return Section(title, None, "", [key])
    if per["checker"].notna().any() and per["checker_verdict"].isna().all():
        _needs(report, key, "needs the checker's verdicts, not only its hallucinated yes/no")
        return Section(title, None, "", [key])
    items = per["item_id"].tolist()
    resampler = boot.resampler  # the report's items; a frame made by hand may have statutes of others
    if resampler is not None and not set(items) <= set(resampler.units):
        boot = boot.own()
    result = stats.verdict_agreement(per["checker_verdict"].tolist(), per["label"].tolist(), items, boot=boot)
    if result["n"]:
        _set(
            report,
            key,
            _records(pd.DataFrame(result["rows"])),
            n=result["n"],
            with_kind=result["n_with_kind"],
        )
    table = pd.DataFrame(  # shown: each share or κ with its interval in one cell
        [
            {
                "verdict": row["verdict"],
                "label": row["label"],
                "statutes": row["statutes"],
                "same hallucinated [95% CI]": _with_interval(row, "same_hallucinated"),
                "with_kind": row["with_kind"],
                "same verdict [95% CI]": _with_interval(row, "same_verdict"),
                "κ one-vs-rest [95% CI]": _with_interval(row, "kappa"),
            }
            for row in result["rows"]
        ]
    )
    note = message(
        "stats.note.verdicts", n=result["n"], n_with_kind=result["n_with_kind"], n_boot=boot.n_boot
    )
    return _section(title, table, note, [key])


def _with_interval(row: Mapping[str, Any], name: str) -> str:
    """``0.750 [0.301, 0.954]`` (an interval it lacks is left out); ``—`` without a value.

    >>> _with_interval({"kappa": 0.5, "kappa_low": 0.1, "kappa_high": None}, "kappa")
    '0.500'
    """
    value, low, high = row.get(name), row.get(f"{name}_low"), row.get(f"{name}_high")
    if value is None:
        return "—"
    interval = f" [{low:.{DECIMALS}f}, {high:.{DECIMALS}f}]" if low is not None and high is not None else ""
    return f"{value:.{DECIMALS}f}{interval}"


def _nhsr_systems(per: pd.DataFrame, report: Report) -> Section:
    title = "各系统 NHSR NHSR per system"
    key = "nhsr_lawyers"
    per = per[per["majority"].notna()]
    if per.empty:
        return Section(title, None, "", [key])
    rows = []
    for system, group in per.groupby("system", sort=True):
        correct = int((~group["majority"].astype(bool)).sum())
        low, high = stats.wilson_interval(correct, len(group))
        checked = group[group["checker"].notna()]
        auto_correct = int((~checked["checker"].astype(bool)).sum())
        auto_low, auto_high = stats.wilson_interval(auto_correct, len(checked))
        rows.append(
            {
                "system": system,
                "statutes": len(group),
                "nhsr_lawyers": correct / len(group),
                "low": low,
                "high": high,
            }
            | {
                "checked": len(checked),
                "nhsr_checker": auto_correct / len(checked) if len(checked) else None,
                "checker_low": auto_low,
                "checker_high": auto_high,
            }
        )
    table = pd.DataFrame(rows)
    _set(report, key, _records(table[["system", "statutes", "nhsr_lawyers", "low", "high"]]), n=len(per))
    return _section(title, _rounded(table), message("stats.note.nhsr_systems"), [key])
