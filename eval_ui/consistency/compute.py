"""The report itself: every statistic of :func:`~eval_ui.consistency.specs.statistics` on a store's (or
frames') current labels, section by section, one set of resampled items shared by every interval."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from lawluo.i18n import ZH

from .. import stats
from .annotators import _annotators, _inter_annotator, _overview
from .auto import AutoMetrics
from .human import _scores
from .judge import _judge
from .labels import _current
from .nhsr import AutoHallucinated, _nhsr, _nhsr_systems, _statute_majorities, _verdicts
from .report import Report, Statistic
from .specs import ADJUDICATED, N_BOOT, SOURCES, statistics
from .specs import charts as chart_specs
from .systems import _bradley_terry, _paired, _pairwise, _system_rates

if TYPE_CHECKING:
    from ..store import AnnotationStore


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
    """Every statistic of :func:`statistics` on the current labels.

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
    report.statistics = {s.key: Statistic(s.key, s.title, needs=s.needs, auto=s.auto) for s in statistics()}
    if "annotator" in labels.columns:
        report.n_adjudicated = int((labels["annotator"] == ADJUDICATED).sum())
    if len(labels):
        report.systems = sorted(set(labels["system_a"]) | set(labels["system_b"]))
    # One set of resampled items for every interval: the bootstrap of the whole experiment.
    items = pd.concat(
        [raw_labels.get("item_id", pd.Series(dtype=object)), labels.get("item_id", pd.Series(dtype=object))]
    )
    boot = stats.Bootstrap(n_boot, seed).shared(items)
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


def _draw(report: Report, charts: dict, folder: Path) -> None:
    """Draw the charts that have data (never an empty one) and attach each to its section: in English (the
    report's files), and in Chinese beside them (``<name>.zh.png``, :attr:`Report.charts_zh`: the tab shows
    the one of the page's language)."""
    from .. import stats_charts

    draw = {
        "annotators": stats_charts.annotator_chart,
        "pairs": stats_charts.win_rate_chart,
        "ratings": stats_charts.rating_chart,
        "scatter": stats_charts.scatter_chart,
    }
    for name, title, filename in chart_specs():
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
