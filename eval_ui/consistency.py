"""The statistics tab's report: how the lawyers are doing, how well they agree, and the systems and metrics.

    report = report_from_store(store, source="raw", auto_hallucinated=..., auto=AutoMetrics.read([...]))
    report.sections                 # [Section(title, table, note, statistics, chart)], as the tab shows them
    report.statistics["judge_s1"]   # Statistic(value, low, high, n, needs): every statistic, value or None
    missing_statistics(report)      # the keys still without a value (each one's ``needs`` says why)

Everything is computed by :mod:`eval_ui.stats` on the current labels of the store. Every rate comes with
an interval: Wilson's for a proportion of independent units, a percentile bootstrap over **items**
(each item's labels resampled together) where an item contributes several labels.

- **Annotators** (always the raw labels): progress (assigned / done / skipped) and each annotator's
  agreement with the majority of the others on shared items, for the verdict and the statute
  labels — who drifts.
- **Systems** (raw or adjudicated labels, ``source``): win / tie / loss per pair; each system's win
  rate; a paired bootstrap test between two systems' win rates (``compare``; default: the pair compared
  directly on the most items, :func:`default_pair`);
  Bradley–Terry ratings.
- **Inter-annotator agreement** (always raw): Krippendorff's α (verdict, statute hallucinated, Rel,
  T_LC) and Fleiss' κ of the verdict; human–human agreement as MT-bench defines S1 (ties included)
  and S2 (ties excluded).
- **NHSR against the lawyers' majority**, per cited statute, counting only explicit 真实 / 有误 labels:
  an unlabelled statute and the migration's ``legacy_unticked`` are missing data, and the report says
  how many were left out and why. NHSR per system as the lawyers and as the checker see it.
- **The checker against the lawyers, per verdict** (:func:`eval_ui.stats.verdict_agreement`): for each
  of the checker's verdicts, how many labelled statutes it was given to, how often the lawyers' majority
  label agrees on hallucinated yes/no and on the verdict itself (their labels name verdicts:
  :data:`eval_ui.verdicts.CHECKER_LABEL`), and Cohen's κ one-vs-rest. It needs the checker's verdicts,
  not only its yes/no: ``auto_hallucinated`` may give either per statute.
- With the automatic results of ``python -m lawluo evaluate`` on the same answers (``details.jsonl``,
  ``pairwise.jsonl``; :class:`AutoMetrics`): Rel and T_LC against the mean human score, and the LLM
  judge against every annotator's verdict, MT-bench's S1 and S2, and its self-consistency. They are
  joined on the question id and system: an item's question id is its id without the
  ``:SYSTEM_A:SYSTEM_B`` suffix that ``python -m eval_ui import --answers`` (and the demo set) give it.

A statistic that cannot be computed yet has the value None and a ``needs`` saying what is missing
("needs an item labelled by 2 annotators"), never NaN or an exception; its section has no chart.
The statistics are in :data:`STATISTICS`, the one list the report, its JSON and the tab read.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from lawluo.i18n import EN, ZH, Message, message
from lawluo.law import verdicts as checker_verdicts
from lawluo.metrics.pairwise import MIN_JUDGE_CONSISTENCY

from . import stats
from .items import Item

if TYPE_CHECKING:
    from .store import AnnotationStore

#: Row numbers shown in tables are rounded to this many decimals.
DECIMALS = 3
#: Bootstrap resamples of every interval in the report.
N_BOOT = 1000
SOURCES = ("raw", "adjudicated")
LEGACY_UNTICKED = "legacy_unticked"
ADJUDICATED = "adjudicated"
#: What "not enough labels yet" says before each statistic's need (the CLI's and the tests' words; the tab
#: shows ``stats.not_yet`` in the page's language).
NOT_YET = "还不够 Not enough labels yet"

#: ``(item_id, side) -> {statute key: the checker's verdict}`` — a verdict code of :mod:`lawluo.law.verdicts`
#: (``"wrong_number"``), or only its hallucinated yes/no (``True``), which leaves the per-verdict table out.
AutoHallucinated = Callable[[str, str], Mapping[str, "str | bool"]]


@dataclass(frozen=True)
class StatisticSpec:
    key: str
    title: str
    needs: str  # what it needs, said when it has no value (a more precise reason may replace it)
    auto: bool = False  # needs the automatic results of `lawluo evaluate` (uploaded in the tab)


#: Every statistic of the report, in the order shown: the report's JSON has each one's value or None.
STATISTICS: tuple[StatisticSpec, ...] = (
    StatisticSpec("progress", "标注进度 Progress per annotator", "needs an annotator"),
    StatisticSpec(
        "annotator_agreement",
        "与其他标注者的一致率 Each annotator's agreement with the others (verdict)",
        "needs an item labelled by 2 annotators",
    ),
    StatisticSpec(
        "annotator_statute_agreement",
        "与其他标注者的一致率 Each annotator's agreement with the others (statutes)",
        "needs a cited statute labelled 真实/有误 by 2 annotators",
    ),
    StatisticSpec("win_rate", "胜率 Win rate per system pair", "needs a labelled item"),
    StatisticSpec("system_win_rate", "各系统胜率 Each system's win rate", "needs a labelled item"),
    StatisticSpec(
        "paired_test",
        "配对自助检验 Paired bootstrap test of two systems' win rates",
        "needs labelled items of 2 systems (at least 2 items)",
    ),
    StatisticSpec(
        "bradley_terry",
        "Bradley–Terry ratings",
        "needs labels on 2 systems in which each system wins or ties at least once",
    ),
    StatisticSpec(
        "alpha_verdict",
        "verdict: Krippendorff α (nominal)",
        "needs an item labelled by 2 annotators, and verdicts that differ somewhere",
    ),
    StatisticSpec(
        "kappa_verdict",
        "verdict: Fleiss κ",
        "needs an item labelled by 2 annotators, and verdicts that differ somewhere",
    ),
    StatisticSpec(
        "alpha_statutes",
        "statute hallucinated: Krippendorff α (nominal)",
        "needs a cited statute labelled 真实/有误 by 2 annotators, and statute labels that differ somewhere",
    ),
    StatisticSpec(
        "alpha_rel",
        "Rel: Krippendorff α (interval)",
        "needs an answer's Rel scored by 2 annotators, and scores that differ somewhere",
    ),
    StatisticSpec(
        "alpha_tlc",
        "T_LC: Krippendorff α (interval)",
        "needs an answer's T_LC scored by 2 annotators, and scores that differ somewhere",
    ),
    StatisticSpec(
        "human_s1",
        "human–human agreement, ties included (MT-bench S1)",
        "needs an item labelled by 2 annotators",
    ),
    StatisticSpec(
        "human_s2",
        "human–human agreement, ties excluded (MT-bench S2)",
        "needs an item on which 2 annotators both chose a side (not tie or both bad)",
    ),
    StatisticSpec(
        "nhsr_accuracy",
        "NHSR accuracy against the lawyers' majority",
        "needs a cited statute the checker knows, labelled 真实/有误 by a majority of its annotators",
    ),
    StatisticSpec(
        "nhsr_kappa",
        "NHSR: Cohen's κ against the lawyers' majority",
        "needs majority-labelled statutes where the checker or the lawyers give both answers (correct and wrong)",
    ),
    StatisticSpec(
        "verdict_agreement",
        "每种判定与律师的一致 The checker against the lawyers, per verdict",
        "needs a cited statute the checker gave a verdict, labelled 真实/有误 by a majority of its annotators",
    ),
    StatisticSpec(
        "nhsr_lawyers",
        "NHSR per system (lawyers' majority)",
        "needs a cited statute labelled 真实/有误 by a majority of its annotators",
    ),
    StatisticSpec(
        "rel_correlation",
        "Rel against the lawyers (Spearman)",
        "needs the automatic Rel of 3 labelled answers (upload details.jsonl) and scores that vary",
        auto=True,
    ),
    StatisticSpec(
        "tlc_correlation",
        "T_LC against the lawyers (Spearman)",
        "needs the automatic T_LC of 3 labelled answers (upload details.jsonl) and scores that vary",
        auto=True,
    ),
    StatisticSpec(
        "judge_s1",
        "LLM judge vs lawyers, ties included (MT-bench S1)",
        "needs the judge's verdict on a labelled item (upload pairwise.jsonl)",
        auto=True,
    ),
    StatisticSpec(
        "judge_s2",
        "LLM judge vs lawyers, ties excluded (MT-bench S2)",
        "needs a labelled item where the judge and a lawyer both chose a side (upload pairwise.jsonl)",
        auto=True,
    ),
    StatisticSpec(
        "judge_consistency",
        "LLM judge self-consistency (answers swapped)",
        "needs the judge's verdicts in both orders on a labelled item (upload pairwise.jsonl)",
        auto=True,
    ),
)
SPECS = {spec.key: spec for spec in STATISTICS}


@dataclass
class Statistic:
    """One statistic's value (a number, or rows for a per-annotator / per-system one) or None, and why not."""

    key: str
    title: str
    value: Any = None
    low: float | None = None
    high: float | None = None
    n: int = 0
    needs: str = ""
    auto: bool = False
    extra: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return {
            "title": self.title,
            "value": _plain(self.value),
            "low": _plain(self.low),
            "high": _plain(self.high),
            "n": int(self.n),
            "needs": "" if self.value is not None else self.needs,
            "auto": self.auto,
            **{k: _plain(v) for k, v in self.extra.items()},
        }


@dataclass
class Section:
    """A section of the report. ``note`` is its explanation in English (the JSON report, the command line);
    ``explain`` the same as a :class:`~lawluo.i18n.Message` the tab shows in the page's language."""

    title: str
    table: pd.DataFrame | None = None
    note: str = ""
    statistics: list[str] = field(default_factory=list)  # keys of the statistics it shows
    chart: Path | None = None
    explain: Message | None = None


@dataclass
class Report:
    sections: list[Section] = field(default_factory=list)
    figures: list[Path] = field(default_factory=list)
    n_labels: int = 0
    statistics: dict[str, Statistic] = field(default_factory=dict)
    source: str = "raw"
    n_adjudicated: int = 0
    systems: list[str] = field(default_factory=list)
    charts: dict[str, Path] = field(default_factory=dict)  # chart name (:data:`CHARTS`) → PNG
    charts_zh: dict[str, Path] = field(default_factory=dict)  # the same charts in Chinese (the tab)

    def section(self, title: str) -> Section:
        return next(s for s in self.sections if s.title == title)

    def to_json(self) -> dict:
        """The report as plain JSON: every statistic's value or None (and what it needs), every table."""
        return {
            "n_labels": self.n_labels,
            "source": self.source,
            "n_adjudicated": self.n_adjudicated,
            "systems": list(self.systems),
            "charts": {name: path.name for name, path in self.charts.items()},
            "statistics": {key: s.to_json() for key, s in self.statistics.items()},
            "missing": missing_statistics(self),
            "sections": [
                {
                    "title": s.title,
                    "note": s.note,
                    "statistics": list(s.statistics),
                    "chart": s.chart.name if s.chart else None,
                    "rows": [] if s.table is None else _records(s.table),
                }
                for s in self.sections
            ],
        }


def missing_statistics(report: Report, include_auto: bool = True) -> list[str]:
    """The keys of the statistics still without a value (``report.statistics[key].needs`` says why).

    ``include_auto=False`` leaves out those that need uploaded automatic results (Rel, T_LC, judge).

    >>> missing_statistics(Report(statistics={"a": Statistic("a", "A", 0.5), "b": Statistic("b", "B")}))
    ['b']
    """
    return [key for key, s in report.statistics.items() if s.value is None and (include_auto or not s.auto)]


def _plain(value: Any) -> Any:
    """``value`` as JSON: NaN → None, numpy scalars → Python, rows → lists of plain dicts."""
    if isinstance(value, list):
        return [
            {k: _plain(v) for k, v in row.items()} if isinstance(row, dict) else _plain(row) for row in value
        ]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if value is pd.NA or value is pd.NaT:
        return None
    return value


def _records(table: pd.DataFrame) -> list[dict]:
    return [{str(k): _plain(v) for k, v in row.items()} for row in table.to_dict("records")]


# --------------------------------------------------------------------------- automatic results


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
            if isinstance(score, int | float) and not isinstance(score, bool) and math.isfinite(score):
                store[(qid, system)] = float(score)

    def judged(self, qid: str, system_a: str, system_b: str) -> tuple[str | None, str | None] | None:
        """The judge's two verdicts (shown first as A, shown first as B) on an item, in its orientation."""
        if (qid, system_a, system_b) in self.judge:
            return self.judge[(qid, system_a, system_b)]
        if (qid, system_b, system_a) in self.judge:
            flip = {"A": "B", "B": "A", "tie": "tie", None: None}
            first_a, first_b = self.judge[(qid, system_b, system_a)]
            return flip[first_a], flip[first_b]
        return None


def _first_view(preference: str | None, first_is_a: bool) -> str | None:
    """A judge's stated preference (A/B/tie as shown) as a verdict of "first is A": A, B or tie."""
    if preference not in ("A", "B", "tie"):
        return None
    if preference == "tie" or first_is_a:
        return preference
    return "A" if preference == "B" else "B"


def combined_judge_verdict(first_a: str | None, first_b: str | None) -> str | None:
    """The judge's verdict from its two orders: kept when both agree, a tie when they differ (MT-bench's
    conservative rule, Zheng et al. 2023 §3.4; LawLuo §5.1), the one given when the other is missing.

    >>> combined_judge_verdict("A", "A"), combined_judge_verdict("A", "B"), combined_judge_verdict(None, "B")
    ('A', 'tie', 'B')
    """
    if first_a is None or first_b is None:
        return first_a if first_b is None else first_b
    return first_a if first_a == first_b else "tie"


def question_id(item: Item) -> str | None:
    """The question id of an item made from answer files (``{qid}:{system_a}:{system_b}``), else None."""
    return _qid(item.id, item.system_a, item.system_b)


def _qid(item_id: str, system_a: str, system_b: str) -> str | None:
    suffix = f":{system_a}:{system_b}"
    return item_id[: -len(suffix)] if item_id.endswith(suffix) and len(item_id) > len(suffix) else None


# --------------------------------------------------------------------------- the report


def report_from_store(
    store: AnnotationStore,
    source: str = "raw",
    auto_hallucinated: AutoHallucinated | None = None,
    auto: AutoMetrics | None = None,
    *,
    compare: tuple[str, str] | None = None,
    figures_dir: str | Path | None = None,
    n_boot: int = N_BOOT,
    seed: int = 0,
) -> Report:
    """:func:`human_consistency` on a store's current labels (``source`` "raw" or "adjudicated")."""
    if source not in SOURCES:
        raise ValueError(f"source must be one of {SOURCES}, got {source!r}")
    tables = store.tables(sources=("raw", source))  # one read of the labels for both
    raw, chosen = tables["raw"], tables[source]
    return human_consistency(
        *chosen,
        auto_hallucinated,
        auto,
        raw=raw,
        progress=store.annotator_progress(),
        source=source,
        compare=compare,
        figures_dir=figures_dir,
        n_boot=n_boot,
        seed=seed,
    )


def human_consistency(
    labels: pd.DataFrame,
    statute_labels: pd.DataFrame,
    auto_hallucinated: AutoHallucinated | None = None,
    auto: AutoMetrics | None = None,
    *,
    raw: tuple[pd.DataFrame, pd.DataFrame] | None = None,
    progress: pd.DataFrame | None = None,
    source: str = "raw",
    compare: tuple[str, str] | None = None,
    figures_dir: str | Path | None = None,
    n_boot: int = N_BOOT,
    seed: int = 0,
) -> Report:
    """Every statistic of :data:`STATISTICS` on the current labels.

    ``labels`` / ``statute_labels``: :meth:`AnnotationStore.labels_frame` and
    :meth:`~AnnotationStore.statute_labels_frame` of ``source`` ("raw", or "adjudicated": an
    adjudicated item is one row by ``"adjudicated"``); ``raw``: the raw pair when ``source`` is
    adjudicated (agreement between annotators always uses raw labels; default: the same frames);
    ``progress``: :meth:`AnnotationStore.annotator_progress`. ``auto_hallucinated(item_id, side)``
    gives the checker's hallucinated flag per statute key of an answer ('a' or 'b'); ``auto`` the
    uploaded results of ``lawluo evaluate``; ``compare`` the two systems of the paired test (default:
    :func:`default_pair`). Charts are written to ``figures_dir`` when given.
    """
    if source not in SOURCES:
        raise ValueError(f"source must be one of {SOURCES}, got {source!r}")
    same = raw is None or (raw[0] is labels and raw[1] is statute_labels)
    labels, statute_labels = _current(labels), _current(statute_labels)
    raw_labels, raw_statutes = (labels, statute_labels) if same else map(_current, raw)
    report = Report(n_labels=len(labels), source=source)
    report.statistics = {s.key: Statistic(s.key, s.title, needs=s.needs, auto=s.auto) for s in STATISTICS}
    if "annotator" in labels.columns:
        report.n_adjudicated = int((labels["annotator"] == ADJUDICATED).sum())
    if len(labels):
        report.systems = sorted(set(labels["system_a"]) | set(labels["system_b"]))
    # One set of resampled items for every interval: the bootstrap of the whole experiment.
    items = pd.concat(
        [raw_labels.get("item_id", pd.Series(dtype=object)), labels.get("item_id", pd.Series(dtype=object))]
    )
    boot = {"n_boot": n_boot, "seed": seed, "resampler": stats.Resampler(items, n_boot, seed)}
    majorities = _statute_majorities(statute_labels, auto_hallucinated)
    charts: dict[str, Any] = {}
    report.sections = [
        _overview(labels, raw_labels, source, report.n_adjudicated),
        _annotators(raw_labels, raw_statutes, progress, report, charts),
        _pairwise(labels, report, charts, boot),
        _system_rates(labels, report, boot),
        _paired(labels, report, compare, boot),
        _bradley_terry(labels, report, charts, boot),
        _inter_annotator(raw_labels, raw_statutes, report, boot),
        _nhsr(statute_labels, majorities, auto_hallucinated is not None, report),
        _verdicts(majorities, auto_hallucinated is not None, report, boot),
        _nhsr_systems(majorities, report),
        _scores(labels, auto, report, charts),
        _judge(labels, auto, report, boot),
    ]
    if figures_dir is not None and charts:
        _draw(report, charts, Path(figures_dir))
    return report


def _current(frame: pd.DataFrame) -> pd.DataFrame:
    """Only current rows (a frame with every version has ``current`` False on the older ones), text
    columns as Python objects: walking pandas' Arrow-backed text element by element is slow."""
    if "current" in frame.columns and len(frame):
        frame = frame[frame["current"].astype(bool)]
    text = {
        c: object
        for c in frame.columns
        if pd.api.types.is_string_dtype(frame[c]) and frame[c].dtype != object
    }
    return frame.astype(text).reset_index(drop=True)


def _rounded(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.round(DECIMALS)


def _set(
    report: Report, key: str, value: Any, low: Any = None, high: Any = None, n: int = 0, **extra: Any
) -> None:
    """Give statistic ``key`` its value (None keeps it missing), interval, size and any extra fields."""
    s = report.statistics[key]
    s.value = None if value is None or (isinstance(value, float) and not math.isfinite(value)) else value
    s.low, s.high, s.n = low, high, int(n)
    s.extra.update(extra)


def _section(
    title: str, table: pd.DataFrame | None, explain: Message | None, keys: list[str] | None = None
) -> Section:
    """A section whose note is ``explain`` (English in ``note``, the message itself for the tab)."""
    return Section(title, table, explain.text(EN) if explain else "", list(keys or []), explain=explain)


#: The report's sections, by title: the key of each title in the page's language (``lawluo/strings/admin.yaml``).
SECTION_KEYS: dict[str, str] = {
    "概况 Overview": "stats.section.overview",
    "标注者 Annotators: progress and agreement with the others": "stats.section.annotators",
    "胜/平/负 Win / tie / loss": "stats.section.pairwise",
    "各系统胜率 Each system's win rate": "stats.section.system_rates",
    "配对自助检验 Paired bootstrap test": "stats.section.paired",
    "Bradley–Terry": "stats.section.bradley_terry",
    "标注者一致性 Inter-annotator agreement": "stats.section.inter_annotator",
    "NHSR 与律师多数意见 NHSR against the lawyers' majority": "stats.section.nhsr",
    "每种判定与律师的一致 The checker against the lawyers, per verdict": "stats.section.verdicts",
    "各系统 NHSR NHSR per system": "stats.section.nhsr_systems",
    "Rel / T_LC 与律师评分 Rel and T_LC against the lawyers": "stats.section.scores",
    "LLM 裁判与律师 The LLM judge against the lawyers": "stats.section.judge",
}
#: What a statistic may need besides its own ``needs`` (:data:`STATISTICS`): the phrase, its key.
NEEDS_PHRASES: dict[str, str] = {
    "needs two different labelled systems": "stats.needs.two_systems",
    "needs labels of both systems on at least 2 items": "stats.needs.both_systems",
    "needs the statute checker (the statute database is not loaded)": "stats.needs.checker",
    "needs the checker's verdicts, not only its hallucinated yes/no": "stats.needs.checker_verdicts",
}


def _needs(report: Report, key: str, reason: str) -> None:
    """A more precise reason why ``key`` has no value yet (kept only while it has none)."""
    if reason:
        report.statistics[key].needs = reason


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


# --------------------------------------------------------------------------- annotators


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


def _explicit(statutes: pd.DataFrame) -> pd.DataFrame:
    """Statute rows with an explicit label (hallucinated True or False): unlabelled and legacy rows are missing."""
    if statutes.empty or "hallucinated" not in statutes.columns:
        return statutes.iloc[0:0]
    yes, no = _yes_no(statutes["hallucinated"])
    out = statutes[yes | no].copy()
    out["hallucinated"] = yes[yes | no]
    return out


def _yes_no(flags: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """(labelled hallucinated, labelled correct) per statute row; None / NaN (unlabelled, legacy) is neither."""
    values = flags.to_numpy(dtype=object)
    return values == True, values == False  # noqa: E712 - elementwise on an object array: None is neither


# --------------------------------------------------------------------------- systems


def _pairwise(labels: pd.DataFrame, report: Report, charts: dict, boot: dict) -> Section:
    title = "胜/平/负 Win / tie / loss"
    note = message("stats.note.pairwise", n_boot=boot["n_boot"])
    if labels.empty:
        return _section(title, None, note, ["win_rate"])
    table = stats.pairwise_table(labels, group_col="item_id", **boot)
    table = table.rename(columns={"n_units": "items", "win_rate_low": "low", "win_rate_high": "high"})
    keep = ["system_a", "system_b", "n", "items", "A", "B", "tie", "both_bad", "win_rate", "low", "high"]
    table = table[keep]
    rows = table[table["n"] > 0]
    if len(rows):
        _set(report, "win_rate", _records(rows), n=int(rows["n"].sum()))
        charts["pairs"] = rows
    return _section(title, _rounded(table), note, ["win_rate"])


def _system_rates(labels: pd.DataFrame, report: Report, boot: dict) -> Section:
    title = "各系统胜率 Each system's win rate"
    note = message("stats.note.system_rates")
    if labels.empty:
        return _section(title, None, note, ["system_win_rate"])
    units, names = pd.factorize(labels["item_id"])
    names = np.asarray(names, dtype=object)
    scores = stats._scores(stats._verdicts(labels["verdict"]))
    rows = []
    for system in report.systems:
        score, taken = stats.system_scores(labels, system, units, len(names), scores)
        kept = taken > 0
        r = stats.ratio_bootstrap(score[kept], taken[kept], groups=list(names[kept]), **boot)
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


def _paired(labels: pd.DataFrame, report: Report, compare: tuple[str, str] | None, boot: dict) -> Section:
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
    r = stats.paired_bootstrap(labels, first, second, group_col="item_id", **boot)
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
        "n_boot": boot["n_boot"],
        "seed": boot["seed"],
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


def _bradley_terry(labels: pd.DataFrame, report: Report, charts: dict, boot: dict) -> Section:
    title = "Bradley–Terry"
    if labels.empty:
        return _section(title, None, None, ["bradley_terry"])
    table = stats.bradley_terry(labels, group_col="item_id", components=True, **boot)
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
    parts = [message("stats.note.bradley_terry", used=used, n_boot=boot["n_boot"])]
    if groups > 1:
        parts.append(message("stats.note.bradley_terry_apart", groups=groups))
    if note:
        parts.append(message("stats.note.library", note=note))
    explain = parts[0]
    for part in parts[1:]:
        explain = message("stats.note.then", first=explain, then=part)
    return _section(title, _rounded(table), explain, ["bradley_terry"])


# --------------------------------------------------------------------------- agreement between annotators


def _inter_annotator(raw: pd.DataFrame, statutes: pd.DataFrame, report: Report, boot: dict) -> Section:
    title = "标注者一致性 Inter-annotator agreement"
    keys = [
        "alpha_verdict",
        "kappa_verdict",
        "alpha_statutes",
        "alpha_rel",
        "alpha_tlc",
        "human_s1",
        "human_s2",
    ]
    rows = []

    def row(key: str, value: Any, low: Any, high: Any, n: int, note: str) -> None:
        rows.append(
            {
                "measure": SPECS[key].title,
                "value": value,
                "low": low,
                "high": high,
                "n_items": n,
                "note": note,
            }
        )
        if value is not None:
            _set(report, key, value, low, high, n)
        elif note:
            _needs(report, key, f"{SPECS[key].needs} ({note})")

    if raw.empty:
        return _section(title, None, message("stats.note.raw_only"), keys)
    verdicts = raw.rename(columns={"item_id": "item"})
    alpha = stats.krippendorff_alpha_long(verdicts, "verdict", "nominal", **boot)
    row(
        "alpha_verdict",
        alpha["alpha"],
        alpha["alpha_low"],
        alpha["alpha_high"],
        alpha["n_items"],
        alpha["note"],
    )
    kappa = stats.fleiss_kappa(verdicts, "verdict")
    row(
        "kappa_verdict",
        kappa["kappa"],
        None,
        None,
        kappa["n_items_used"],
        kappa["note"] if kappa["kappa"] is None else "",
    )
    flags = _explicit(statutes)
    if len(flags):
        per_statute = pd.DataFrame(
            {
                "annotator": flags["annotator"],
                "item": flags["item_id"] + "|" + flags["side"] + "|" + flags["statute"],
                "value": flags["hallucinated"],
                "item_id": flags["item_id"],
            }
        )
        alpha = stats.krippendorff_alpha_long(per_statute, "value", "nominal", group_col="item_id", **boot)
        note = alpha["note"] if alpha["n_items"] else (
            f"correct/wrong labels were given on {per_statute['item'].nunique()} cited statute(s), each by one "
            "annotator only: none is labelled by two or more"
        )  # fmt: skip
    else:
        alpha, note = (
            {"alpha": None, "alpha_low": None, "alpha_high": None, "n_items": 0},
            "no annotator labelled a cited statute correct or wrong (unlabelled statutes are missing data)",
        )
    row("alpha_statutes", alpha["alpha"], alpha["alpha_low"], alpha["alpha_high"], alpha["n_items"], note)
    for score in ("rel", "tlc"):
        long = pd.concat(
            [
                pd.DataFrame(
                    {"annotator": raw["annotator"], "item": raw["item_id"] + "|" + side}
                    | {"value": raw[f"{score}_{side}"], "item_id": raw["item_id"]}
                )
                for side in ("a", "b")
            ],
            ignore_index=True,
        )
        alpha = stats.krippendorff_alpha_long(long, "value", "interval", group_col="item_id", **boot)
        row(
            f"alpha_{score}",
            alpha["alpha"],
            alpha["alpha_low"],
            alpha["alpha_high"],
            alpha["n_items"],
            _score_note(long["value"], long["item"], SCORE_NAMES[score])
            if not alpha["n_items"]
            else alpha["note"],
        )
    pairs = stats.rater_pair_agreement(verdicts, "verdict", **boot)
    for key, suffix in (("human_s1", "with_tie"), ("human_s2", "without_tie")):
        value = pairs[f"agreement_{suffix}"]
        row(key, value, pairs[f"agreement_{suffix}_low"], pairs[f"agreement_{suffix}_high"], pairs["n_items"],
            "" if value is not None else pairs["note"])  # fmt: skip
    table = pd.DataFrame(rows, columns=["measure", "value", "low", "high", "n_items", "note"])
    return _section(
        title, _rounded(table), message("stats.note.inter_annotator", n_boot=boot["n_boot"]), keys
    )


# --------------------------------------------------------------------------- NHSR


SCORE_NAMES = {"rel": "Rel", "tlc": "T_LC"}


def _score_note(values: pd.Series, answers: pd.Series, name: str) -> str:
    """Why no answer has two annotators' ``name`` scores (the real cause: scores are optional, so items
    labelled by two annotators say nothing about scores).

    >>> _score_note(pd.Series([None, None]), pd.Series(["q1|a", "q1|a"]), "Rel")
    'no annotator gave Rel scores (they are optional in the form)'
    >>> _score_note(pd.Series([5.0, None, 7.0]), pd.Series(["q1|a", "q1|a", "q2|b"]), "T_LC")
    'T_LC scores were given on 2 answers, each by one annotator only: none is scored by two or more'
    """
    scored = answers[values.notna()]
    if scored.empty:
        return f"no annotator gave {name} scores (they are optional in the form)"
    return (
        f"{name} scores were given on {scored.nunique()} answer{'s' * (scored.nunique() != 1)}, each by one "
        "annotator only: none is scored by two or more"
    )


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


def _verdicts(per: pd.DataFrame, checker: bool, report: Report, boot: dict) -> Section:
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
    resampler = boot["resampler"]  # the report's items; a frame made by hand may have statutes of others
    if resampler is not None and not set(items) <= set(resampler.units):
        resampler = None
    result = stats.verdict_agreement(
        per["checker_verdict"].tolist(),
        per["label"].tolist(),
        items,
        n_boot=boot["n_boot"],
        seed=boot["seed"],
        resampler=resampler,
    )
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
        "stats.note.verdicts", n=result["n"], n_with_kind=result["n_with_kind"], n_boot=boot["n_boot"]
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


# --------------------------------------------------------------------------- automatic metrics


def _qids(labels: pd.DataFrame) -> list[str | None]:
    return [
        _qid(i, a, b)
        for i, a, b in zip(labels["item_id"], labels["system_a"], labels["system_b"], strict=True)
    ]


def _scores(labels: pd.DataFrame, auto: AutoMetrics | None, report: Report, charts: dict) -> Section:
    title = "Rel / T_LC 与律师评分 Rel and T_LC against the lawyers"
    keys = ["rel_correlation", "tlc_correlation"]
    if not auto or not (auto.rel or auto.tlc):
        return _section(
            title,
            None,
            message(
                "stats.note.no_auto_scores",
                file="details.jsonl",
                command="`python -m lawluo evaluate --metrics rel,tlc`",
            ),
            keys,
        )
    if labels.empty:
        return Section(title, None, "", keys)
    qids = _qids(labels)
    parts = []
    for side in ("a", "b"):
        parts.append(
            pd.DataFrame(
                {"qid": qids, "item_id": labels["item_id"], "system": labels[f"system_{side}"]}
                | {"rel": labels[f"rel_{side}"], "tlc": labels[f"tlc_{side}"]}
            )
        )
    answers = (
        pd.concat(parts, ignore_index=True)
        .groupby(["item_id", "qid", "system"], dropna=False)[["rel", "tlc"]]
        .mean()
        .reset_index()
    )
    rows, scatter = [], {}
    for name, values, key in (("Rel", auto.rel, "rel_correlation"), ("T_LC", auto.tlc, "tlc_correlation")):
        column = "rel" if name == "Rel" else "tlc"
        keys = zip(
            answers["qid"].to_numpy(dtype=object), answers["system"].to_numpy(dtype=object), strict=True
        )
        machine = [values.get(key) for key in keys]
        human = [None if pd.isna(v) else float(v) for v in answers[column]]
        result = stats.correlation(machine, human)
        points = [(m, h) for m, h in zip(machine, human, strict=True) if m is not None and h is not None]
        if points:
            scatter[name] = points
        keep = ["n", "spearman", "spearman_low", "spearman_high", "pearson", "pearson_low", "pearson_high"]
        rows.append({"measure": name, **{k: result.get(k) for k in keep}, "note": result.get("note", "")})
        if result["spearman"] is not None:
            _set(report, key, result["spearman"], result["spearman_low"], result["spearman_high"], result["n"],
                 pearson=result["pearson"], pearson_low=result["pearson_low"], pearson_high=result["pearson_high"])  # fmt: skip
        elif result["note"]:
            _needs(report, key, f"{SPECS[key].needs} ({result['note']})")
    if scatter:
        charts["scatter"] = scatter
    return _section(title, _rounded(pd.DataFrame(rows)), message("stats.note.scores"), keys)


def _judge(labels: pd.DataFrame, auto: AutoMetrics | None, report: Report, boot: dict) -> Section:
    title = "LLM 裁判与律师 The LLM judge against the lawyers"
    keys = ["judge_s1", "judge_s2", "judge_consistency"]
    if not auto or not auto.judge:
        return _section(
            title,
            None,
            message(
                "stats.note.no_judge",
                file="pairwise.jsonl",
                command="`python -m lawluo evaluate --metrics pairwise`",
            ),
            keys,
        )
    if labels.empty:
        return Section(title, None, "", keys)
    judge, human, groups = [], [], []
    first_order: dict[str, tuple[str | None, str | None]] = {}
    for item_id, qid, a, b, verdict in zip(
        labels["item_id"],
        _qids(labels),
        labels["system_a"],
        labels["system_b"],
        labels["verdict"],
        strict=True,
    ):
        found = auto.judged(qid, a, b) if qid else None
        if found is None:
            continue
        first_order[item_id] = found
        judge.append(combined_judge_verdict(*found))  # compared with every annotator (MT-bench)
        human.append(verdict)
        groups.append(item_id)
    result = stats.judge_agreement(judge, human, groups=groups, **boot)
    orders = list(first_order.values())
    consistency = stats.judge_agreement(
        [o[0] for o in orders], [o[0] for o in orders], judge_swapped=[o[1] for o in orders], n_boot=0
    )
    rows = []
    for key, value, low, high, n in (
        ("judge_s1", result["agreement_with_tie"], result["agreement_with_tie_low"],
         result["agreement_with_tie_high"], result["n_with_tie"]),
        ("judge_s2", result["agreement_without_tie"], result["agreement_without_tie_low"],
         result["agreement_without_tie_high"], result["n_without_tie"]),
        ("judge_consistency", consistency["self_consistency"], consistency["self_consistency_low"],
         consistency["self_consistency_high"], consistency["n_consistency"]),
    ):  # fmt: skip
        rows.append({"measure": SPECS[key].title, "value": value, "low": low, "high": high, "n": n})
        if value is not None:
            _set(report, key, value, low, high, n)
    note = message("stats.note.judge", n=len(first_order), n_boot=boot["n_boot"])
    if not first_order:
        note = message("stats.note.judge_none")
    warning = judge_warning(consistency["self_consistency"], consistency["n_consistency"])
    if warning is not None:
        note = message("stats.note.warning", warning=warning, note=note)
    return _section(title, _rounded(pd.DataFrame(rows)), note, keys)


def judge_warning(consistency: float | None, n: int) -> Message | None:
    """A plain warning when the judge flips with the order of the answers (self-consistency below
    :data:`~lawluo.metrics.pairwise.MIN_JUDGE_CONSISTENCY`): its verdicts are then not a measurement, whatever
    the figures beside them say. None otherwise."""
    if consistency is None or consistency >= MIN_JUDGE_CONSISTENCY:
        return None
    return message(
        "stats.note.judge_warning",
        share=f"{consistency:.0%}",
        n=n,
        least=f"{MIN_JUDGE_CONSISTENCY:.0%}",
        doc="docs/models.md",
    )


# --------------------------------------------------------------------------- charts


#: The report's charts: name, the title of its section, its file (drawn by :mod:`eval_ui.stats_charts`).
CHARTS: tuple[tuple[str, str, str], ...] = (
    ("annotators", "标注者 Annotators: progress and agreement with the others", "annotator_agreement.png"),
    ("pairs", "胜/平/负 Win / tie / loss", "human_win_rate.png"),
    ("ratings", "Bradley–Terry", "bradley_terry.png"),
    ("scatter", "Rel / T_LC 与律师评分 Rel and T_LC against the lawyers", "auto_vs_human.png"),
)


def _draw(report: Report, charts: dict, folder: Path) -> None:
    """Draw the charts that have data (never an empty one) and attach each to its section: in English (the
    report's files), and in Chinese beside them (``<name>.zh.png``, :attr:`Report.charts_zh`: the tab shows
    the one of the page's language)."""
    from . import stats_charts

    draw = {
        "annotators": stats_charts.annotator_chart,
        "pairs": stats_charts.win_rate_chart,
        "ratings": stats_charts.rating_chart,
        "scatter": stats_charts.scatter_chart,
    }
    for name, title, filename in CHARTS:
        if name not in charts:
            continue
        path = draw[name](charts[name], folder / filename)
        if path is None:
            continue
        report.figures.append(path)
        report.charts[name] = path
        report.charts_zh[name] = draw[name](charts[name], folder / f"{Path(filename).stem}.zh.png", lang=ZH)
        section = next((s for s in report.sections if s.title == title), None)
        if section is not None:
            section.chart = path
