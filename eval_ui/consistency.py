"""The statistics tab's report: how well lawyers agree with each other and with the automatic metrics.

    auto = AutoMetrics.read(["out/details.jsonl", "out/pairwise.jsonl"])   # optional, from `lawluo evaluate`
    report = human_consistency(store.labels_frame(), store.statute_labels_frame(), items, statutes, auto)
    report.sections   # [Section(title, table, note)], as the tab shows them; report.figures: PNG paths

Everything is computed by :mod:`eval_ui.stats` on the current labels of the store:

- win / tie / loss per system pair (bootstrap CIs) and Bradley–Terry ratings (bootstrap CIs);
- inter-annotator agreement: Krippendorff's α (nominal: the verdict and each statute's hallucinated
  label; interval: Rel and T_LC) and Fleiss' κ of the verdict;
- NHSR against the annotators' majority, per cited statute: the checker's verdict (computed here,
  the same rules as ``lawluo evaluate``'s NHSR) against the majority of the hallucinated labels;
- Rel and T_LC against the mean human score per answer, and the LLM judge against each annotator's
  verdict, when the automatic results of ``python -m lawluo evaluate --metrics rel,tlc,pairwise`` on the
  same answers are given (``details.jsonl``, ``pairwise.jsonl``). They are joined on the question id and
  system: an item's question id is its id without the ``:SYSTEM_A:SYSTEM_B`` suffix that
  ``python -m eval_ui import --answers`` (and the demo set) give it; other items are not matched.

A statistic that cannot be computed (no labels, one annotator, constant scores) is a section with a
note saying why, never NaN or an exception.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from . import stats
from .items import Item

#: Row numbers shown in tables are rounded to this many decimals.
DECIMALS = 3


@dataclass
class Section:
    title: str
    table: pd.DataFrame | None = None
    note: str = ""


@dataclass
class Report:
    sections: list[Section] = field(default_factory=list)
    figures: list[Path] = field(default_factory=list)
    n_labels: int = 0

    def section(self, title: str) -> Section:
        return next(s for s in self.sections if s.title == title)


@dataclass
class AutoMetrics:
    """Automatic results per (question id, system) and judge verdicts per (question id, first, second)."""

    rel: dict[tuple[str, str], float] = field(default_factory=dict)
    tlc: dict[tuple[str, str], float] = field(default_factory=dict)
    judge: dict[tuple[str, str, str], tuple[str | None, str | None]] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.rel or self.tlc or self.judge)

    @classmethod
    def read(cls, paths: Iterable[str | Path]) -> AutoMetrics:
        """Read ``details.jsonl`` and ``pairwise.jsonl`` files written by ``python -m lawluo evaluate``.

        Raises ``ValueError`` naming the file and line of anything that is not such a row.
        """
        auto = cls()
        for path in paths:
            path = Path(path)
            with path.open(encoding="utf-8") as f:
                for n, line in enumerate(f, start=1):
                    if not line.strip():
                        continue
                    try:
                        row = json.loads(line)
                        auto._add(row)
                    except (json.JSONDecodeError, TypeError, KeyError, AttributeError) as exc:
                        raise ValueError(
                            f"{path.name}:{n}: not a row of lawluo evaluate's details.jsonl or pairwise.jsonl ({exc})"
                        ) from exc
        return auto

    def _add(self, row: Mapping[str, Any]) -> None:
        qid = str(row["id"])
        if "first" in row and "second" in row:
            by_order = {v.get("order"): v.get("preference") for v in row.get("verdicts") or []}
            self.judge[(qid, str(row["first"]), str(row["second"]))] = (
                _first_view(by_order.get("first=A"), first_is_a=True),
                _first_view(by_order.get("first=B"), first_is_a=False),
            )
            return
        system = str(row["system"])
        for name, store in (("rel", self.rel), ("tlc", self.tlc)):
            value = row.get(name)
            score = value.get("score") if isinstance(value, Mapping) else None
            if isinstance(score, int | float):
                store[(qid, system)] = float(score)


def _first_view(preference: str | None, first_is_a: bool) -> str | None:
    """A judge's stated preference (A/B/tie as shown) as a verdict of "first is A": A, B or tie."""
    if preference not in ("A", "B", "tie"):
        return None
    if preference == "tie" or first_is_a:
        return preference
    return "A" if preference == "B" else "B"


def question_id(item: Item) -> str | None:
    """The question id of an item made from answer files (``{qid}:{system_a}:{system_b}``), else None."""
    suffix = f":{item.system_a}:{item.system_b}"
    return item.id[: -len(suffix)] if item.id.endswith(suffix) and len(item.id) > len(suffix) else None


def _rounded(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.round(DECIMALS)


def _summary_row(name: str, result: Mapping[str, Any], keys: Sequence[str]) -> dict:
    return {"measure": name, **{k: result.get(k) for k in keys}, "note": result.get("note", "")}


def human_consistency(
    labels: pd.DataFrame,
    statute_labels: pd.DataFrame,
    items: Mapping[str, Item],
    auto_hallucinated: Callable[[str, str], Mapping[str, bool]],
    auto: AutoMetrics | None = None,
    figures_dir: str | Path | None = None,
    n_boot: int = 1000,
    seed: int = 0,
) -> Report:
    """Every statistic of the module docstring on the current ``labels`` (:meth:`AnnotationStore.labels_frame`).

    ``statute_labels`` is :meth:`AnnotationStore.statute_labels_frame`; ``items`` maps item ids to items;
    ``auto_hallucinated(item_id, side)`` gives the checker's hallucinated flag per statute key of an
    answer ('a' or 'b'). Charts are written to ``figures_dir`` when given.
    """
    report = Report(n_labels=len(labels))
    if labels.empty:
        report.sections.append(Section("标注 Labels", note="还没有标注 No labels yet: nothing to compute."))
        return report
    report.sections.append(_pairwise(labels, n_boot, seed))
    report.sections.append(_bradley_terry(labels, n_boot, seed))
    report.sections.append(_inter_annotator(labels, statute_labels))
    report.sections.append(_nhsr(statute_labels, auto_hallucinated))
    scatter: dict[str, list[tuple[float, float]]] = {}
    report.sections.append(_scores(labels, items, auto, scatter))
    report.sections.append(_judge(labels, items, auto))
    if figures_dir is not None:
        from lawluo.metrics.plots import scatter_chart, win_rate_chart

        folder = Path(figures_dir)
        table = report.section("胜/平/负 Win / tie / loss").table
        rows = [
            {"first": r.system_a, "second": r.system_b, "win": r.A, "draw": r.tie + r.both_bad, "loss": r.B}
            for r in (table.itertuples() if table is not None else [])
        ]
        report.figures.append(
            win_rate_chart(rows, folder / "human_win_rate.png", "Lawyers' pairwise verdicts")
        )
        report.figures.append(scatter_chart(scatter, folder / "auto_vs_human.png"))
    return report


def _pairwise(labels: pd.DataFrame, n_boot: int, seed: int) -> Section:
    table = stats.pairwise_table(labels, n_boot=n_boot, seed=seed)
    keep = [
        "system_a",
        "system_b",
        "n",
        "A",
        "B",
        "tie",
        "both_bad",
        "win_rate",
        "win_rate_low",
        "win_rate_high",
    ]
    note = (
        "A = the first system's answer was better, B = the second's; a tie or both-bad counts as half a win "
        f"(win_rate). {int(n_boot)} bootstrap resamples, 95% percentile intervals."
    )
    return Section("胜/平/负 Win / tie / loss", _rounded(table[keep]), note)


def _bradley_terry(labels: pd.DataFrame, n_boot: int, seed: int) -> Section:
    table = stats.bradley_terry(labels, n_boot=n_boot, seed=seed)
    note = table.attrs.get("note", "")
    if not note:
        note = f"Elo scale 1000 ± 400/ln 10 · β; CIs from {table.attrs.get('n_boot_used', 0)} usable bootstrap fits."
    if table.empty:
        return Section("Bradley–Terry", None, note)
    return Section("Bradley–Terry", _rounded(table), note)


def _inter_annotator(labels: pd.DataFrame, statute_labels: pd.DataFrame) -> Section:
    rows = []
    verdicts = labels.rename(columns={"item_id": "item"})
    matrix = stats.to_reliability_matrix(verdicts, "verdict")
    alpha = stats.krippendorff_alpha(matrix, "nominal")
    rows.append(
        _summary_row(
            "verdict: Krippendorff α (nominal)", alpha | {"value": alpha["alpha"]}, ["value", "n_items"]
        )
    )
    kappa = stats.fleiss_kappa(verdicts, "verdict")
    rows.append(
        _summary_row(
            "verdict: Fleiss κ",
            kappa | {"value": kappa["kappa"], "n_items": kappa["n_items_used"]},
            ["value", "n_items"],
        )
    )
    if not statute_labels.empty:
        per_statute = statute_labels.assign(
            item=statute_labels["item_id"] + "|" + statute_labels["side"] + "|" + statute_labels["statute"],
            value=statute_labels["hallucinated"].map({True: "yes", False: "no"}),
        )
        alpha = stats.krippendorff_alpha(stats.to_reliability_matrix(per_statute, "value"), "nominal")
        rows.append(
            _summary_row(
                "statute hallucinated: Krippendorff α (nominal)",
                alpha | {"value": alpha["alpha"]},
                ["value", "n_items"],
            )
        )
    for score in ("rel", "tlc"):
        long = pd.concat(
            [
                labels[["annotator", "item_id", f"{score}_{side}"]]
                .rename(columns={f"{score}_{side}": "value"})
                .assign(item=labels["item_id"] + "|" + side)
                for side in ("a", "b")
            ],
            ignore_index=True,
        )
        alpha = stats.krippendorff_alpha(stats.to_reliability_matrix(long, "value"), "interval")
        name = "Rel" if score == "rel" else "T_LC"
        rows.append(
            _summary_row(
                f"{name}: Krippendorff α (interval)", alpha | {"value": alpha["alpha"]}, ["value", "n_items"]
            )
        )
    table = pd.DataFrame(rows, columns=["measure", "value", "n_items", "note"])
    return Section(
        "标注者一致性 Inter-annotator agreement",
        _rounded(table),
        "n_items: items (or answers, statutes) labelled by two or more annotators.",
    )


def _nhsr(
    statute_labels: pd.DataFrame, auto_hallucinated: Callable[[str, str], Mapping[str, bool]]
) -> Section:
    title = "NHSR 与律师多数意见 NHSR against the lawyers' majority"
    if statute_labels.empty:
        return Section(title, None, "没有带法条的标注 No labelled answer cites a statute.")
    auto, human, keys = [], [], []
    for (item_id, side, statute), group in statute_labels.groupby(["item_id", "side", "statute"], sort=True):
        auto.append(auto_hallucinated(item_id, side).get(statute))
        human.append(stats.majority(group["hallucinated"].tolist()))
        keys.append((item_id, side, statute))
    result = stats.nhsr_agreement(auto, human)
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
    accuracy = "—" if result["accuracy"] is None else f"{result['accuracy']:.3f}"
    kappa = "—" if result["kappa"] is None else f"{result['kappa']:.3f}"
    note = (
        f"accuracy {accuracy}, Cohen's κ {kappa} over {result['n']} cited statutes "
        f"({result['dropped']} without a majority or a checker verdict left out). {result['note']}"
    ).strip()
    return Section(title, table, note)


def _answers(labels: pd.DataFrame, items: Mapping[str, Item]) -> pd.DataFrame:
    """One row per labelled answer: question id, system, mean human Rel and T_LC."""
    rows = []
    for side in ("a", "b"):
        part = labels[["item_id", f"system_{side}", f"rel_{side}", f"tlc_{side}"]]
        part.columns = ["item_id", "system", "rel", "tlc"]
        rows.append(part)
    answers = pd.concat(rows, ignore_index=True)
    answers["qid"] = answers["item_id"].map(lambda i: question_id(items[i]) if i in items else None)
    return answers.groupby(["item_id", "qid", "system"], dropna=False)[["rel", "tlc"]].mean().reset_index()


def _scores(
    labels: pd.DataFrame, items: Mapping[str, Item], auto: AutoMetrics | None, scatter: dict
) -> Section:
    title = "Rel / T_LC 与律师评分 Rel and T_LC against the lawyers"
    if not auto or not (auto.rel or auto.tlc):
        return Section(
            title,
            None,
            "没有自动评分 No automatic Rel / T_LC: upload the details.jsonl of `python -m lawluo evaluate --metrics rel,tlc` on these answers.",
        )
    answers = _answers(labels, items)
    rows = []
    for name, values in (("Rel", auto.rel), ("T_LC", auto.tlc)):
        column = "rel" if name == "Rel" else "tlc"
        machine = [values.get((q, s)) for q, s in zip(answers["qid"], answers["system"], strict=True)]
        human = [None if pd.isna(v) else float(v) for v in answers[column]]
        result = stats.correlation(machine, human)
        scatter[name] = [
            (m, h) for m, h in zip(machine, human, strict=True) if m is not None and h is not None
        ]
        keys = ["n", "spearman", "spearman_low", "spearman_high", "pearson", "pearson_low", "pearson_high"]
        rows.append(_summary_row(name, result, keys))
    table = pd.DataFrame(rows)
    return Section(
        title,
        _rounded(table),
        "Per answer: the metric against the mean of the annotators' scores; Fisher-z 95% intervals.",
    )


def _judge(labels: pd.DataFrame, items: Mapping[str, Item], auto: AutoMetrics | None) -> Section:
    title = "LLM 裁判与律师 The LLM judge against the lawyers"
    if not auto or not auto.judge:
        return Section(
            title,
            None,
            "没有裁判结果 No judge verdicts: upload the pairwise.jsonl of `python -m lawluo evaluate --metrics pairwise` on these answers.",
        )
    judge, human, swapped = [], [], []
    counted: set[str] = set()
    judge_items, swap_items = [], []
    by_item = defaultdict(list)
    for item_id, verdict in zip(labels["item_id"], labels["verdict"], strict=True):
        by_item[item_id].append(verdict)
    for item_id, verdicts in by_item.items():
        item = items.get(item_id)
        qid = question_id(item) if item else None
        found = _judged(auto, qid, item) if qid else None
        if found is None:
            continue
        first_a, first_b = found
        for v in verdicts:  # compared with every annotator (MT-bench)
            judge.append(first_a)
            human.append(v)
            swapped.append(first_b)
        if item_id not in counted:
            counted.add(item_id)
            judge_items.append(first_a)
            swap_items.append(first_b)
    result = stats.judge_agreement(judge, human)
    consistency = stats.judge_agreement(judge_items, judge_items, judge_swapped=swap_items)
    table = pd.DataFrame(
        [
            {
                "measure": "agreement with ties",
                "value": result["agreement_with_tie"],
                "n": result["n_with_tie"],
            },
            {
                "measure": "agreement without ties",
                "value": result["agreement_without_tie"],
                "n": result["n_without_tie"],
            },
            {
                "measure": "judge self-consistency (swapped order)",
                "value": consistency["self_consistency"],
                "n": consistency["n_consistency"],
            },
        ]
    )
    note = f"{len(counted)} items matched a judged pair; the judge's verdict is compared with each annotator's (MT-bench §4.2)."
    if not counted:
        note = "没有匹配的条目 No labelled item matched a judged pair (question id and systems)."
    return Section(title, _rounded(table), note)


def _judged(auto: AutoMetrics, qid: str, item: Item) -> tuple[str | None, str | None] | None:
    """The judge's two verdicts on the item in its own orientation (A = system_a better)."""
    a, b = item.system_a, item.system_b
    if (qid, a, b) in auto.judge:
        return auto.judge[(qid, a, b)]
    if (qid, b, a) in auto.judge:
        flip = {"A": "B", "B": "A", "tie": "tie", None: None}
        first_a, first_b = auto.judge[(qid, b, a)]
        return flip[first_a], flip[first_b]
    return None
