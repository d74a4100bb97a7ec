"""Charts of evaluation results as PNG files, for the evaluator's output and the statistics tab.

- :func:`win_rate_chart` — one horizontal bar per system pair, split into win / draw / loss of the
  first system (LawLuo Fig. 6);
- :func:`turns_chart` — the mean single-answer score at each turn of a dialogue, one line per
  system (LawLuo Fig. 7);
- :func:`scatter_chart` — an automatic metric against the lawyers' mean score per answer
  (LegalHalBench §5.6), for the statistics tab.

matplotlib's non-interactive Agg backend is used, so the charts render on a server without a
display; system names and labels in Chinese need a CJK font (Noto Sans CJK, WenQuanYi or SimHei;
Debian: ``apt-get install fonts-noto-cjk``) and fall back to DejaVu Sans, which draws boxes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

CJK_FONTS = ["Noto Sans CJK SC", "Noto Sans CJK JP", "Noto Serif CJK SC", "WenQuanYi Zen Hei", "SimHei"]
COLOURS = {"win": "#2e7d32", "draw": "#b0b0b0", "loss": "#c62828"}


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams["font.sans-serif"] = [*CJK_FONTS, "DejaVu Sans"]
    plt.rcParams["axes.unicode_minus"] = False
    return plt


def win_rate_chart(pairs: Sequence[Mapping], path: str | Path, title: str = "Pairwise win rate") -> Path:
    """Stacked win / draw / loss shares per pair (rows with ``first, second, win, draw, loss``)."""
    plt = _pyplot()
    rows = [p for p in pairs if (p.get("win", 0) + p.get("draw", 0) + p.get("loss", 0)) > 0]
    fig, ax = plt.subplots(figsize=(8, 0.5 * max(len(rows), 1) + 1.5))
    labels = [f"{p['first']} vs {p['second']}" for p in rows]
    left = [0.0] * len(rows)
    for outcome in ("win", "draw", "loss"):
        shares = [p[outcome] / (p["win"] + p["draw"] + p["loss"]) for p in rows]
        bars = ax.barh(labels, shares, left=left, color=COLOURS[outcome], label=outcome)
        for bar, share in zip(bars, shares, strict=True):
            if share >= 0.06:
                ax.text(
                    bar.get_x() + bar.get_width() / 2,
                    bar.get_y() + bar.get_height() / 2,
                    f"{share:.0%}",
                    ha="center",
                    va="center",
                    color="white",
                    fontsize=8,
                )
        left = [a + b for a, b in zip(left, shares, strict=True)]
    ax.set_xlim(0, 1)
    ax.invert_yaxis()
    ax.set_xlabel("share of questions (first system's view)")
    ax.set_title(title)
    ax.legend(loc="lower right", ncols=3, fontsize=8)
    if not rows:
        ax.text(0.5, 0.5, "no judged pairs", ha="center", va="center", transform=ax.transAxes)
    return _save(fig, plt, path)


def turns_chart(
    turns: Mapping[str, Sequence[float | None]], path: str | Path, title: str = "Answer quality over turns"
) -> Path:
    """Mean score per turn, one line per system (missing turns are gaps)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4))
    for system, means in turns.items():
        xs = [t + 1 for t, v in enumerate(means) if v is not None]
        ys = [v for v in means if v is not None]
        if ys:
            ax.plot(xs, ys, marker="o", label=system)
    ax.set_xlabel("turn")
    ax.set_ylabel("mean score (1–10)")
    ax.set_ylim(0, 10.5)
    ax.set_title(title)
    if ax.lines:
        ax.legend(fontsize=8)
        ax.xaxis.get_major_locator().set_params(integer=True)
    else:
        ax.text(0.5, 0.5, "no scored turns", ha="center", va="center", transform=ax.transAxes)
    return _save(fig, plt, path)


def scatter_chart(
    points: Mapping[str, Sequence[tuple[float, float]]],
    path: str | Path,
    xlabel: str = "automatic metric",
    ylabel: str = "mean human score",
    title: str = "Automatic metric against lawyers",
    limits: tuple[float, float] = (0, 10),
) -> Path:
    """One scatter per series (e.g. Rel, T_LC): x the metric, y the annotators' mean, with the diagonal."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(5.5, 5))
    low, high = limits
    pad = (high - low) * 0.04
    ax.plot([low, high], [low, high], color="#b0b0b0", linewidth=1, linestyle="--", zorder=0)
    for name, pts in points.items():
        if pts:
            xs, ys = zip(*pts, strict=True)
            ax.scatter(xs, ys, s=22, alpha=0.7, label=f"{name} (n={len(pts)})")
    ax.set_xlim(low - pad, high + pad)
    ax.set_ylim(low - pad, high + pad)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    if ax.collections:
        ax.legend(fontsize=8, loc="upper left")
    else:
        ax.text(0.5, 0.5, "no answers with both scores", ha="center", va="center", transform=ax.transAxes)
    return _save(fig, plt, path)


def _save(fig, plt, path: str | Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
