"""The annotators' sections: the overview, each annotator's progress and agreement with the others (who
drifts), and the agreement between annotators (always on the raw labels): Krippendorff's α and Fleiss' κ
of the verdicts, α of the statute labels and of each human score, MT-bench's S1 and S2 between two humans."""

from __future__ import annotations

import numpy as np
import pandas as pd

from lawluo.i18n import message

from .. import stats
from .human import score_alphas, score_names
from .labels import _explicit
from .report import Measure, Report, Section, _needs, _records, _rounded, _section, _set
from .specs import ADJUDICATED, spec


def inter_annotator_keys() -> list[str]:
    """The inter-annotator section's statistics, in the order of its table's rows (an α per human score).

    >>> inter_annotator_keys()[2:5]
    ['alpha_statutes', 'alpha_rel', 'alpha_tlc']
    """
    scores = [f"alpha_{key}" for key in score_names()]
    return ["alpha_verdict", "kappa_verdict", "alpha_statutes", *scores, "human_s1", "human_s2"]


INTER_ANNOTATOR_KEYS = inter_annotator_keys()  # the shipped table's (the report calls the function)


def _overview(labels: pd.DataFrame, raw: pd.DataFrame, source: str, n_adjudicated: int) -> Section:
    title = "概况 Overview"
    if raw.empty and labels.empty:
        return _section(title, None, message("stats.note.no_labels"))
    n_items = labels["item_id"].nunique() if len(labels) else 0
    annotators = raw["annotator"].nunique() if len(raw) else 0
    if source == ADJUDICATED:
        used = message("stats.note.used_adjudicated", n=n_adjudicated)
    else:
        used = message("stats.note.used_raw")
    note = message("stats.note.overview", labels=len(raw), annotators=annotators, items=n_items, used=used)
    return _section(title, None, note)


def _annotators(
    raw: pd.DataFrame, statutes: pd.DataFrame, progress: pd.DataFrame | None, report: Report, charts: dict
) -> Section:
    title = "标注者 Annotators: progress and agreement with the others"
    keys = ["progress", "annotator_agreement", "annotator_statute_agreement"]
    if progress is not None and len(progress):
        table = progress[["annotator", "role", "assigned", "done", "skipped"]].copy()
    else:
        names = sorted(set(raw["annotator"])) if len(raw) else []
        table = pd.DataFrame({"annotator": names})
    if len(raw):
        per = raw.groupby("annotator").agg(labels=("item_id", "size"), median_s=("seconds_spent", "median"))
        table = table.merge(per, how="outer", left_on="annotator", right_index=True)
    else:
        table = table.assign(labels=0, median_s=np.nan)
    table = table[table["annotator"] != ADJUDICATED]
    table["labels"] = table["labels"].fillna(0).astype(int)
    if len(table):
        rows = table[
            [c for c in ("annotator", "role", "assigned", "done", "skipped", "labels") if c in table]
        ]
        _set(report, "progress", _records(rows), n=len(table))
    verdicts = _agreement(raw.rename(columns={"item_id": "item"}), "verdict") if len(raw) else None
    statute_flags = _explicit(statutes)
    if len(statute_flags):
        statute_flags = statute_flags.assign(
            item=statute_flags["item_id"] + "|" + statute_flags["side"] + "|" + statute_flags["statute"]
        )
        flags = _agreement(statute_flags, "hallucinated")
    else:
        flags = None
    for key, found, prefix in (
        ("annotator_agreement", verdicts, "verdict"),
        ("annotator_statute_agreement", flags, "statutes"),
    ):
        columns = {
            "n": f"{prefix}_n",
            "agreement": f"{prefix}_agreement",
            "low": f"{prefix}_low",
            "high": f"{prefix}_high",
        }
        if found is None or not len(found):
            table = table.assign(**{c: np.nan for c in columns.values()})
            continue
        table = table.merge(
            found[["annotator", *columns]].rename(columns=columns), how="left", on="annotator"
        )
        scored = found[found["n"] > 0]
        if len(scored):
            rows = scored[["annotator", "n", "agree", "agreement", "low", "high", "split"]]
            _set(report, key, _records(rows), n=int(scored["n"].sum()))
            charts.setdefault("annotators", {})[prefix] = scored
    table = table.sort_values("annotator", ignore_index=True)
    counts = [c for c in ("assigned", "done", "skipped", "labels", "verdict_n", "statutes_n") if c in table]
    table = table.astype(dict.fromkeys(counts, "Int64"))  # counts stay integers beside missing values
    return _section(title, _rounded(table) if len(table) else None, message("stats.note.annotators"), keys)


def _agreement(long: pd.DataFrame, value_col: str) -> pd.DataFrame:
    return stats.annotator_agreement(long[["annotator", "item", value_col]], value_col)


def _inter_annotator(
    raw: pd.DataFrame, statutes: pd.DataFrame, report: Report, boot: stats.Bootstrap
) -> Section:
    """Agreement between the annotators on the raw labels: one row per statistic of :func:`inter_annotator_keys`."""
    title = "标注者一致性 Inter-annotator agreement"
    keys = inter_annotator_keys()
    if raw.empty:
        return _section(title, None, message("stats.note.raw_only"), keys)
    verdicts = raw.rename(columns={"item_id": "item"})
    found = [
        *_verdict_reliability(verdicts, boot),
        _statute_alpha(statutes, boot),
        *score_alphas(raw, boot),
        *_human_pairs(verdicts, boot),
    ]
    rows = [_agreement_row(report, measure) for measure in found]
    table = pd.DataFrame(rows, columns=["measure", "value", "low", "high", "n_items", "note"])
    return _section(title, _rounded(table), message("stats.note.inter_annotator", n_boot=boot.n_boot), keys)


def _agreement_row(report: Report, measure: Measure) -> dict:
    """The table row of ``measure``; its statistic gets the value, or a more precise need from the note."""
    key, value, low, high, n, note = measure
    if value is not None:
        _set(report, key, value, low, high, n)
    elif note:
        _needs(report, key, f"{spec(key).needs} ({note})")
    return {"measure": spec(key).title, "value": value, "low": low, "high": high, "n_items": n, "note": note}


def _verdict_reliability(verdicts: pd.DataFrame, boot: stats.Bootstrap) -> list[Measure]:
    """Krippendorff's α (nominal) and Fleiss' κ of the verdicts (``item``: the item id)."""
    alpha = stats.krippendorff_alpha_long(verdicts, "verdict", "nominal", boot=boot)
    kappa = stats.fleiss_kappa(verdicts, "verdict")
    return [
        Measure("alpha_verdict", alpha["alpha"], alpha["alpha_low"], alpha["alpha_high"], alpha["n_items"],
                alpha["note"]),
        Measure("kappa_verdict", kappa["kappa"], None, None, kappa["n_items_used"],
                kappa["note"] if kappa["kappa"] is None else ""),
    ]  # fmt: skip


def _statute_alpha(statutes: pd.DataFrame, boot: stats.Bootstrap) -> Measure:
    """Krippendorff's α (nominal) of the explicit statute labels (hallucinated or not), each cited statute a unit,
    the statutes of an item resampled together."""
    flags = _explicit(statutes)
    if not len(flags):
        why = "no annotator labelled a cited statute correct or wrong (unlabelled statutes are missing data)"
        return Measure("alpha_statutes", None, None, None, 0, why)
    per_statute = pd.DataFrame(
        {
            "annotator": flags["annotator"],
            "item": flags["item_id"] + "|" + flags["side"] + "|" + flags["statute"],
            "value": flags["hallucinated"],
            "item_id": flags["item_id"],
        }
    )
    alpha = stats.krippendorff_alpha_long(per_statute, "value", "nominal", group_col="item_id", boot=boot)
    note = alpha["note"] if alpha["n_items"] else (
        f"correct/wrong labels were given on {per_statute['item'].nunique()} cited statute(s), each by one "
        "annotator only: none is labelled by two or more"
    )  # fmt: skip
    return Measure(
        "alpha_statutes", alpha["alpha"], alpha["alpha_low"], alpha["alpha_high"], alpha["n_items"], note
    )


def _human_pairs(verdicts: pd.DataFrame, boot: stats.Bootstrap) -> list[Measure]:
    """Human–human agreement on the verdicts, MT-bench's S1 (ties included) and S2 (ties excluded)."""
    pairs = stats.rater_pair_agreement(verdicts, "verdict", boot=boot)
    found = []
    for key, suffix in (("human_s1", "with_tie"), ("human_s2", "without_tie")):
        value = pairs[f"agreement_{suffix}"]
        found.append(
            Measure(key, value, pairs[f"agreement_{suffix}_low"], pairs[f"agreement_{suffix}_high"],
                    pairs["n_items"], "" if value is not None else pairs["note"])
        )  # fmt: skip
    return found
