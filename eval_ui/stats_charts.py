"""The statistics tab's charts: drawn only when there is something to plot, sized to be read as drawn.

- :func:`annotator_chart` — each annotator's agreement with the others, with 95% intervals (who drifts);
- :func:`win_rate_chart` — win / tie / loss shares per system pair and the win rate with its interval;
- :func:`rating_chart` — Bradley–Terry ratings (Elo scale) with their intervals;
- :func:`scatter_chart` — an automatic metric against the lawyers' mean score per answer.

Each returns the PNG's path, or None (and writes nothing) when there is nothing to draw: no chart is
ever an empty frame. A chart is :data:`WIDTH_IN` inches wide at :data:`DPI` (800 px) and grows with its
rows, so the tab shows it at its natural size, never scaled into a thumbnail or cropped. matplotlib's
object API (a ``Figure`` on the Agg canvas, no ``pyplot`` state) keeps concurrent requests apart; Chinese
names need a CJK font (:data:`lawluo.metrics.plots.CJK_FONTS`; Debian ``fonts-noto-cjk``).

Each chart's words (title, axes, legend) are the catalogue's ``stats.chart.*`` in ``lang`` (English by
default: the files of the report; the tab draws each chart in Chinese too and shows the page's).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pandas as pd

from lawluo.i18n import EN, text
from lawluo.metrics.plots import CJK_FONTS, COLOURS

WIDTH_IN = 8.0
DPI = 100
ROW_IN = 0.5  # inches per bar or point row (a pair of systems takes two lines)
MAX_ROWS = 40  # rows drawn at most (the busiest pairs / annotators); the table has them all
SERIES = {"verdict": "#1f77b4", "statutes": "#ff7f0e"}


@contextmanager
def _figure(height_in: float):
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    rc = {"font.sans-serif": [*CJK_FONTS, "DejaVu Sans"], "axes.unicode_minus": False, "font.size": 10}
    with matplotlib.rc_context(rc):
        fig = Figure(figsize=(WIDTH_IN, height_in), dpi=DPI, layout="constrained")
        FigureCanvasAgg(fig)
        yield fig


def _save(fig: Any, path: str | Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=DPI)
    return path


def _height(rows: int) -> float:
    return 1.6 + ROW_IN * rows


def annotator_chart(series: Mapping[str, pd.DataFrame], path: str | Path, lang: str = EN) -> Path | None:
    """Agreement with the others per annotator (rows of ``annotator, agreement, low, high, n``), one
    series per kind of label (``verdict``, ``statutes``); None when no series has a row."""
    series = {k: v[v["agreement"].notna()] for k, v in series.items() if v is not None and len(v)}
    series = {k: v for k, v in series.items() if len(v)}
    if not series:
        return None
    names = sorted(set().union(*(set(v["annotator"]) for v in series.values())))[:MAX_ROWS]
    y = {name: pos for pos, name in enumerate(names)}
    with _figure(_height(len(names))) as fig:
        ax = fig.add_subplot()
        offsets = {k: (i - (len(series) - 1) / 2) * 0.22 for i, k in enumerate(series)}
        for kind, rows in series.items():
            rows = rows[rows["annotator"].isin(y)]
            pos = [y[a] + offsets[kind] for a in rows["annotator"]]
            value = rows["agreement"].astype(float)
            err = [value - rows["low"].astype(float), rows["high"].astype(float) - value]
            ax.errorbar(value, pos, xerr=err, fmt="o", capsize=3, color=SERIES.get(kind),
                        label=f"{text(f'stats.chart.kind.{kind}', lang)} (n = {int(rows['n'].sum())})")  # fmt: skip
        ax.set_yticks(range(len(names)), [f"{n}" for n in names])
        ax.set_ylim(len(names) - 0.5, -0.5)
        ax.set_xlim(0, 1)
        ax.set_xlabel(text("stats.chart.annotators.x", lang))
        ax.set_title(text("stats.chart.annotators.title", lang))
        ax.grid(axis="x", alpha=0.3)
        ax.legend(loc="lower left", fontsize=8)
        return _save(fig, path)


def win_rate_chart(table: pd.DataFrame, path: str | Path, lang: str = EN) -> Path | None:
    """Stacked win / draw / loss shares per pair and the win rate with its interval; None without a pair.

    Rows: ``system_a, system_b, n, A, B, tie, both_bad, win_rate, low, high`` (:func:`eval_ui.stats.pairwise_table`).
    """
    rows = table[table["n"] > 0].sort_values("n", ascending=False).head(MAX_ROWS)
    if rows.empty:
        return None
    labels = [
        f"{a}\n{text('stats.chart.vs', lang)} {b} (n = {n})"
        for a, b, n in zip(rows["system_a"], rows["system_b"], rows["n"], strict=True)
    ]
    n = rows["n"].astype(float).to_numpy()
    shares = {
        "win": rows["A"].to_numpy() / n,
        "draw": (rows["tie"] + rows["both_bad"]).to_numpy() / n,
        "loss": rows["B"].to_numpy() / n,
    }
    with _figure(_height(len(rows))) as fig:
        ax = fig.add_subplot()
        left = [0.0] * len(rows)
        for outcome, share in shares.items():
            bars = ax.barh(
                range(len(rows)),
                share,
                left=left,
                color=COLOURS[outcome],
                height=0.5,
                label=text(f"stats.chart.{outcome}", lang),
            )
            for bar, value in zip(bars, share, strict=True):
                if value >= 0.08:
                    ax.text(bar.get_x() + bar.get_width() / 2, bar.get_y() + bar.get_height() / 2, f"{value:.0%}",
                            ha="center", va="center", color="white", fontsize=8)  # fmt: skip
            left = [a + b for a, b in zip(left, share, strict=True)]
        rate = rows["win_rate"].astype(float).to_numpy()
        low = rows["low"].astype(float).fillna(rows["win_rate"]).to_numpy()
        high = rows["high"].astype(float).fillna(rows["win_rate"]).to_numpy()
        below = [y + 0.36 for y in range(len(rows))]  # under each bar, clear of its percentages
        ax.errorbar(rate, below, xerr=[rate - low, high - rate], fmt="D", markersize=4, color="black", capsize=3,
                    linewidth=1, label=text("stats.chart.win_rate", lang))  # fmt: skip
        ax.set_yticks(range(len(rows)), labels)
        ax.set_ylim(len(rows) - 0.4, -0.5)
        ax.set_xlim(0, 1)
        ax.set_xlabel(text("stats.chart.pairs.x", lang))
        ax.set_title(text("stats.chart.pairs.title", lang))
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16 - 0.3 / len(rows)), ncols=4, fontsize=8)
        return _save(fig, path)


def rating_chart(table: pd.DataFrame, path: str | Path, lang: str = EN) -> Path | None:
    """Bradley–Terry ratings on the Elo scale with their intervals (rows ``system, elo, elo_low, elo_high``)."""
    rows = table[table["elo"].notna()].head(MAX_ROWS)
    if rows.empty:
        return None
    elo = rows["elo"].astype(float)
    low = rows["elo_low"].astype(float).fillna(elo)
    high = rows["elo_high"].astype(float).fillna(elo)
    with _figure(_height(len(rows))) as fig:
        ax = fig.add_subplot()
        ax.errorbar(elo, range(len(rows)), xerr=[elo - low, high - elo], fmt="o", capsize=3, color="#1f77b4")
        ax.axvline(1000, color="#b0b0b0", linewidth=1, linestyle="--")
        grouped = "component" in rows and rows["component"].nunique() > 1
        names = [
            f"{s} ({text('stats.chart.group', lang, group=c)})" if grouped else str(s)
            for s, c in zip(rows["system"], rows.get("component", rows["system"]), strict=True)
        ]
        ax.set_yticks(range(len(rows)), names)
        ax.set_ylim(len(rows) - 0.5, -0.5)
        ax.set_xlabel(text("stats.chart.ratings.x_groups" if grouped else "stats.chart.ratings.x", lang))
        ax.set_title(text("stats.chart.ratings.title", lang))
        ax.grid(axis="x", alpha=0.3)
        return _save(fig, path)


def scatter_chart(
    points: Mapping[str, Sequence[tuple[float, float]]], path: str | Path, lang: str = EN
) -> Path | None:
    """Automatic metric (x) against the lawyers' mean score (y) per answer, one series per metric."""
    points = {k: v for k, v in points.items() if v}
    if not points:
        return None
    with _figure(5.6) as fig:
        ax = fig.add_subplot()
        ax.plot([0, 10], [0, 10], color="#b0b0b0", linewidth=1, linestyle="--", zorder=0)
        for name, pts in points.items():
            xs, ys = zip(*pts, strict=True)
            ax.scatter(xs, ys, s=22, alpha=0.7, label=f"{name} (n = {len(pts)})")
        ax.set_xlim(-0.4, 10.4)
        ax.set_ylim(-0.4, 10.4)
        ax.set_aspect("equal")
        ax.set_xlabel(text("stats.chart.scatter.x", lang))
        ax.set_ylabel(text("stats.chart.scatter.y", lang))
        ax.set_title(text("stats.chart.scatter.title", lang))
        ax.legend(fontsize=8, loc="upper left")
        return _save(fig, path)
