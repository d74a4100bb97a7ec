"""The report's parts — :class:`Report`, its :class:`Section` s and :class:`Statistic` s — their JSON, and
the helpers every section uses to fill them in."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from lawluo.i18n import EN, Message

from .specs import DECIMALS


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


class Measure(NamedTuple):
    """One statistic as a section's table shows it: its key, value (None when it has none), interval, the
    items it counts and, without a value, why (the library's note)."""

    key: str
    value: Any
    low: Any
    high: Any
    n: int
    note: str


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


def _needs(report: Report, key: str, reason: str) -> None:
    """A more precise reason why ``key`` has no value yet (kept only while it has none)."""
    if reason:
        report.statistics[key].needs = reason
