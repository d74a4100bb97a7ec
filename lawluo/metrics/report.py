"""Writing an evaluation's results: per-system summary (CSV, Markdown, JSON), per-item details (JSONL),
pairwise results and charts (PNG).

    out/
      summary.csv  summary.md  summary.json   one row per system (+ pairwise and per-turn tables)
      details.jsonl                          one line per answer: every metric with its evidence
      citations.csv                          one line per cited statute: verdict, content_kind… (NHSR only)
      pairwise.csv  pairwise.jsonl           per system pair / per question and pair (pairwise only)
      win_rate.png  score_over_turns.png     charts (pairwise / score only)

A run's files are written all or nothing: each goes first into a hidden temporary folder inside
``out/`` (flushed and fsynced), and only when every one is complete are they renamed into place —
the details and charts first, the summaries last, after an earlier run's summaries are removed — so
a full disk or a crash never leaves half a file, nor a summary beside details it does not describe.
When writing fails the temporary folder is removed, an earlier run's files are left as they were,
and the ``OSError`` is raised.
"""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

from . import registry
from .nhsr import CITATION_COLUMNS, citation_rows
from .plots import turns_chart, win_rate_chart
from .registry import Results

PAIR_COLUMNS = (
    ("first", "System", "{}"),
    ("second", "Versus", "{}"),
    ("win", "Win", "{}"),
    ("draw", "Draw", "{}"),
    ("loss", "Loss", "{}"),
    ("win_rate", "Win rate (draw = ½)", "{:.3f}"),
    ("win_rate_se", "± SE", "{:.3f}"),
    ("consistency", "Judge self-consistency", "{:.3f}"),
    ("failed", "Not judged", "{}"),
)


def markdown_table(rows: Sequence[dict], columns: Sequence[tuple[str, str, str]] | None = None) -> str:
    """A GitHub Markdown table of the columns some row has; a missing value is shown as –. The columns
    are (key, heading, number format); by default the summary's, from the metric registry."""
    columns = registry.summary_columns() if columns is None else columns
    shown = [c for c in columns if any(c[0] in r for r in rows)]
    lines = ["| " + " | ".join(h for _, h, _ in shown) + " |", "|" + "|".join("---" for _ in shown) + "|"]
    for row in rows:
        cells = []
        for key, _, fmt in shown:
            value = row.get(key)
            text = "–" if value is None else fmt.format(value)
            cells.append(text.replace("|", "\\|"))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def render_markdown(results: Results, command: str | None = None) -> str:
    parts = ["# Evaluation results", ""]
    if command:
        parts += ["Made with:", "", "```bash", command, "```", ""]
    parts += [f"Metrics: {', '.join(results.metrics)}.", "", markdown_table(results.summary), ""]
    if results.pairs:
        parts += ["## Pairwise", "", markdown_table(results.pairs, PAIR_COLUMNS), ""]
    if results.turns:
        width = max(len(v) for v in results.turns.values())
        rows = [
            {"system": s, **{f"t{t + 1}": v for t, v in enumerate(means)}}
            for s, means in results.turns.items()
        ]
        cols = (("system", "System", "{}"), *((f"t{t + 1}", f"Turn {t + 1}", "{:.2f}") for t in range(width)))
        parts += ["## Score by turn", "", markdown_table(rows, cols), ""]
    if results.notes:
        parts += ["## Notes", "", *(f"- {n}" for n in results.notes), ""]
    parts += ["Seconds per metric: " + ", ".join(f"{k} {v}" for k, v in results.seconds.items()), ""]
    return "\n".join(parts)


def _csv(rows: Sequence[dict], columns: Sequence[str] | None = None) -> str:
    keys = list(dict.fromkeys(k for r in rows for k in r)) if columns is None else list(columns)
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=keys, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


def _jsonl(rows: Sequence[dict]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


SUMMARY_FILES = ("summary.csv", "summary.md", "summary.json")
#: The other files a run may write. A new run's files replace all of an earlier run's, not some.
OTHER_FILES = (
    "details.jsonl", "citations.csv", "pairwise.csv", "pairwise.jsonl", "win_rate.png", "score_over_turns.png",
)  # fmt: skip


def write_results(results: Results, out_dir: str | Path, command: str | None = None) -> list[Path]:
    """Write every output file of ``results`` under ``out_dir``, all or none; returns the paths written."""
    out = Path(out_dir)
    made = [p for p in (out, *out.parents) if not p.exists()]
    out.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=out, prefix=".lawluo-evaluate-"))
    try:
        names = _write_all(results, staging, command)
        for name in SUMMARY_FILES + OTHER_FILES:
            (out / name).unlink(missing_ok=True)
        for name in sorted(names, key=lambda n: n in SUMMARY_FILES):  # the summaries last
            os.replace(staging / name, out / name)
        _fsync_folder(out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        for folder in made:  # the folders this call made, innermost first, if they are still empty
            try:
                folder.rmdir()
            except OSError:
                break
        raise
    shutil.rmtree(staging, ignore_errors=True)
    return [out / name for name in names]


def _fsync_folder(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_all(results: Results, folder: Path, command: str | None) -> list[str]:
    """Every output file into ``folder``, each fsynced; their names."""
    written: list[str] = []

    def put(name: str, text: str) -> None:
        (folder / name).write_text(text, encoding="utf-8")
        written.append(name)

    put("summary.csv", _csv(results.summary))
    put("summary.md", render_markdown(results, command))
    summary = {
        "command": command,
        "metrics": list(results.metrics),
        "summary": results.summary,
        "pairwise": results.pairs,
        "score_by_turn": results.turns,
        "notes": results.notes,
        "seconds": results.seconds,
    }
    put("summary.json", json.dumps(summary, ensure_ascii=False, indent=2) + "\n")
    put("details.jsonl", _jsonl(results.details))
    if "nhsr" in results.metrics:
        put("citations.csv", _csv(citation_rows(results.details), CITATION_COLUMNS))
    if results.pairs:
        put("pairwise.csv", _csv(results.pairs))
        put("pairwise.jsonl", _jsonl(results.pair_details))
        written.append(win_rate_chart(results.pairs, folder / "win_rate.png").name)
    if results.turns:
        written.append(turns_chart(results.turns, folder / "score_over_turns.png").name)
    for name in written:  # on the disk, charts included, before any file is renamed into place
        with open(folder / name, "rb+") as f:
            os.fsync(f.fileno())
    return written
