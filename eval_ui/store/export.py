"""Exports people can load: the labels and statute labels as CSV, JSONL or Parquet (times ISO 8601 in
UTC; the CSV safe to open in Excel), the adjudications as JSONL, and a consistent copy of the database."""

from __future__ import annotations

import json
import logging
import math
import os
import sqlite3
import tempfile
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from lawluo.files import write_atomically

from .adjudication import _adjudication_dict
from .errors import StoreError, short_name
from .frames import STATUTE_COLUMNS, TIME_COLUMNS, Cited, frame_columns, numeric_columns

logger = logging.getLogger("eval_ui.store")

#: What starts a formula in a spreadsheet cell (OWASP, CSV injection).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
#: What :meth:`AnnotationStore.export` writes.
EXPORT_FORMATS = ("csv", "jsonl", "parquet")


def _spreadsheet_safe(value: object) -> object:
    """``value`` with a leading apostrophe when it is text a spreadsheet would run as a formula.

    >>> print(_spreadsheet_safe('=HYPERLINK("https://evil.example")'))
    '=HYPERLINK("https://evil.example")
    >>> _spreadsheet_safe("理由充分"), _spreadsheet_safe(-1.5)
    ('理由充分', -1.5)
    """
    return "'" + value if isinstance(value, str) and value.startswith(FORMULA_STARTS) else value


def _jsonable(row: Mapping[str, Any]) -> dict:
    """An export row for JSON: datetimes as ISO 8601 (UTC, with the offset)."""
    return {k: v.isoformat() if isinstance(v, datetime) else v for k, v in row.items()}


def _csv_cell(value: object) -> object:
    """An export value in a CSV cell: ISO times, lists as JSON text, None empty."""
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, list | dict):
        return json.dumps(value, ensure_ascii=False)
    return value


def _parquet_bytes(rows: list[dict], schema) -> bytes:
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pylist(rows, schema=schema)
    buffer = io.BytesIO()
    pq.write_table(table, buffer)
    return buffer.getvalue()


def iso_utc(timestamp: float | None) -> str | None:
    """A Unix time as ISO 8601 in UTC with its offset, to the second (how exports write times).

    >>> iso_utc(1795497600.4), iso_utc(None)
    ('2026-11-24T05:20:00+00:00', None)
    """
    if timestamp is None or (isinstance(timestamp, float) and math.isnan(timestamp)):
        return None
    return datetime.fromtimestamp(timestamp, tz=UTC).isoformat(timespec="seconds")


def _statute_array(statutes: Mapping[str, str]) -> list[dict]:
    """A label's statute → code mapping as the exports write it: ``[{"statute": …, "label": …}]``.

    An array of records rather than an object keyed by statute, so every row has the same columns
    (a ``datasets`` feature ``[{"statute": string, "label": string}]``).
    """
    return [{"statute": k, "label": v} for k, v in statutes.items()]


def _arrow_schema(kind: str):
    """The Parquet schema of an export (``labels`` or ``statute_labels``): explicit, so empty lists and
    all-null columns still have their types."""
    import pyarrow as pa

    text, number, count, flag = pa.string(), pa.float64(), pa.int64(), pa.bool_()
    stamp = pa.timestamp("s", tz="UTC")
    if kind == "statute_labels":
        special = {"hallucinated": flag, "legacy": flag, "version": count, "current": flag}
        return pa.schema([(c, special.get(c, text)) for c in STATUTE_COLUMNS])
    types: dict[str, Any] = {}
    numbers = numeric_columns()
    for c in frame_columns():
        if c in TIME_COLUMNS:
            types[c] = stamp
        elif c in numbers:
            types[c] = number
        elif c.startswith("n_") or c == "version":
            types[c] = count
        elif c.startswith("none_wrong") or c in ("current", "legacy"):
            types[c] = flag
        elif c.startswith("hallucinated_"):
            types[c] = pa.list_(text)
        elif c.startswith("statutes_"):
            types[c] = pa.list_(pa.struct([("statute", text), ("label", text)]))
        else:
            types[c] = text
    return pa.schema(list(types.items()))


class ExportMixin:
    """Exports and snapshots (a part of :class:`~eval_ui.store.AnnotationStore`)."""

    def _export_rows(self, kind: str, current_only: bool, source: str, cited: Cited | None) -> list[dict]:
        """Rows of an export: labels with times as datetimes and lists as lists; or statute rows."""
        if kind == "statute_labels":
            return self._statute_rows(self._label_rows(current_only, source, cited), cited)
        out = []
        for r in self._label_rows(current_only, source, cited):
            row = dict(r)
            for c in TIME_COLUMNS:
                row[c] = None if r[c] is None else datetime.fromtimestamp(r[c], tz=UTC).replace(microsecond=0)
            for side in ("a", "b"):
                row[f"hallucinated_{side}"] = json.loads(r[f"hallucinated_{side}"])
                row[f"statutes_{side}"] = _statute_array(json.loads(r[f"statutes_{side}"]))
            out.append(row)
        return out

    def export(
        self,
        path: str | Path,
        fmt: str = "csv",
        current_only: bool = True,
        source: str = "raw",
        *,
        kind: str = "labels",
        cited: Cited | None = None,
        actor: str | None = None,
    ) -> int:
        """Write the labels (``kind="labels"``: one row per item and annotator, :meth:`labels_frame`'s
        columns) or the statute labels (``kind="statute_labels"``: :meth:`statute_labels_frame`) as
        CSV, JSONL or Parquet, atomically; returns the row count.

        Times are ISO 8601 in UTC with the offset (``2026-11-24T05:20:00+00:00``; Parquet: a UTC
        timestamp column); ``hallucinated_*`` are arrays of statute keys and ``statutes_*`` arrays of
        ``{"statute", "label"}`` (a label's own statutes; unlabelled ones are in the statute table).
        JSONL is UTF-8 without ``\\u`` escapes; the CSV has a BOM for Excel, its arrays as JSON text and
        no cell that starts a formula (OWASP); the Parquet loads with
        ``datasets.load_dataset("parquet", data_files=path)``.
        """
        if fmt not in EXPORT_FORMATS:
            raise StoreError(f"export format {fmt!r} is not one of {', '.join(EXPORT_FORMATS)}")
        if kind not in ("labels", "statute_labels"):
            raise StoreError(f"export kind {kind!r} is not labels or statute_labels")
        rows = self._export_rows(kind, current_only, source, cited)
        columns = STATUTE_COLUMNS if kind == "statute_labels" else frame_columns()
        if fmt == "parquet":
            data = _parquet_bytes(rows, _arrow_schema(kind))
        elif fmt == "jsonl":
            data = "".join(json.dumps(_jsonable(r), ensure_ascii=False) + "\n" for r in rows).encode("utf-8")
        else:
            import pandas as pd

            cells = [{c: _csv_cell(r[c]) for c in columns} for r in rows]
            # No text cell may start a formula, and CRLF rows (RFC 4180) make a cell holding a line
            # break or a carriage return quoted, so it cannot split a row.
            frame = pd.DataFrame(cells, columns=list(columns)).map(_spreadsheet_safe)
            text = frame.to_csv(index=False, lineterminator="\r\n")
            data = text.encode("utf-8-sig")  # the BOM makes Excel read Chinese text correctly
        write_atomically(path, data)
        if actor is not None:
            details = {
                "format": fmt,
                "kind": kind,
                "source": source,
                "history": not current_only,
                "rows": len(rows),
            }
            self._record_export(actor, details)
        return len(rows)

    def _record_export(self, actor: str, details: dict) -> None:
        """Log an export (:meth:`record`); a disk that refuses the row does not stop the export, which
        must work on a full or read-only disk too: the server log says it was not recorded."""
        try:
            self.record(actor, "export", "", details)
        except (StoreError, sqlite3.Error) as exc:
            logger.error("an export by %s was not written to the audit log: %s", short_name(actor), exc)

    def export_adjudications(self, path: str | Path) -> int:
        """Every current adjudication as JSONL (UTF-8, ISO 8601 UTC times, answer_labels as objects)."""
        rows = self._all(
            "SELECT a.*, i.question, i.system_a, i.system_b FROM adjudications a "
            "JOIN items i ON i.id = a.item_id ORDER BY a.item_id"
        )
        lines = []
        for r in rows:
            row = _adjudication_dict(r) | {k: r[k] for k in ("question", "system_a", "system_b")}
            row["winner"] = {"A": r["system_a"], "B": r["system_b"]}.get(r["verdict"], r["verdict"])
            for c in ("created_at", "updated_at"):
                row[c] = iso_utc(row[c])
            lines.append(json.dumps(row, ensure_ascii=False) + "\n")
        write_atomically(path, "".join(lines).encode("utf-8"))
        return len(rows)

    def export_all(
        self, folder: str | Path, current_only: bool = True, *, actor: str | None = None
    ) -> list[Path]:
        """Write every export into ``folder``: ``labels.{csv,jsonl,parquet}``,
        ``statute_labels.{csv,jsonl,parquet}`` and ``adjudications.jsonl`` (the annotators' raw labels;
        adjudications in their own file). Returns the paths written. With ``actor`` one ``export`` row
        goes to the audit log (the scheduled Hub backup passes none: it would fill the log)."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        paths = []
        for kind in ("labels", "statute_labels"):
            for fmt in EXPORT_FORMATS:
                path = folder / f"{kind}.{fmt}"
                self.export(path, fmt, current_only, kind=kind)
                paths.append(path)
        path = folder / "adjudications.jsonl"
        self.export_adjudications(path)
        if actor is not None:
            files = [p.name for p in [*paths, path]]
            self._record_export(actor, {"kind": "all", "files": files, "history": not current_only})
        return [*paths, path]

    def snapshot(self, dest: str | Path) -> Path:
        """A consistent copy of the database (SQLite backup API) at ``dest``, written then renamed."""
        dest = Path(dest)
        dest.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".tmp")
        os.close(fd)
        try:
            target = sqlite3.connect(tmp)
            try:
                with self._connection() as con:
                    con.backup(target)
                target.execute("PRAGMA journal_mode = DELETE")
            finally:
                target.close()
            os.replace(tmp, dest)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return dest
