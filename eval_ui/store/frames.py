"""The labels as tables for the statistics: one row per label (:data:`FRAME_COLUMNS`) or per statute
label (:data:`STATUTE_COLUMNS`), raw or with adjudications in place of the annotators' labels."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from eval_ui import human_scores, verdicts

from .errors import StoreError
from .records import shown_verdict
from .schema import LABEL_FIELDS

if TYPE_CHECKING:
    import pandas as pd

_ITEM_COLUMNS = (
    "annotator",
    "item_id",
    "source",
    "question",
    "system_a",
    "system_b",
    "verdict",
    "winner",
    "shown_order",
    "verdict_shown",
)
_ANSWER_COLUMNS = (
    "n_statutes_a", "n_labelled_a", "n_unlabelled_a", "n_hallucinated_a", "nhsr_a", "none_wrong_a",
    "hallucinated_a", "statutes_a",
    "n_statutes_b", "n_labelled_b", "n_unlabelled_b", "n_hallucinated_b", "nhsr_b", "none_wrong_b",
    "hallucinated_b", "statutes_b",
    "comment", "guideline_version", "seconds_spent", "version", "current", "legacy", "submission_id",
    "created_at", "updated_at", "replaced_at",
)  # fmt: skip
_OTHER_NUMBERS = ("nhsr_a", "nhsr_b", "seconds_spent", "created_at", "updated_at", "replaced_at")


def frame_columns() -> tuple[str, ...]:
    """The labels frame's columns: the item's, the human scores (``rel_a, tlc_a, rel_b, tlc_b``: every row of
    :data:`eval_ui.human_scores.HUMAN_SCORE_TABLE`, answer a then b), then each answer's statutes and the
    label's own."""
    return _ITEM_COLUMNS + human_scores.columns() + _ANSWER_COLUMNS


def numeric_columns() -> tuple[str, ...]:
    """The labels frame's columns of numbers (floats, NaN where missing): the human scores first."""
    return human_scores.columns() + _OTHER_NUMBERS


FRAME_COLUMNS = frame_columns()  # the shipped table's (for readers; the store itself calls frame_columns())
NUMERIC_COLUMNS = numeric_columns()
STATUTE_COLUMNS = (
    "annotator", "item_id", "side", "system", "statute", "label", "hallucinated", "error_kind",
    "legacy", "version", "current",
)  # fmt: skip
TIME_COLUMNS = ("created_at", "updated_at", "replaced_at")
#: The annotator name of the rows an adjudication puts in place of the annotators' (``source="adjudicated"``).
ADJUDICATED = "adjudicated"
SOURCES = ("raw", "adjudicated")


#: (item id, side ``a``/``b``) → the statute keys that answer cites (the citation checker's list).
Cited = Callable[[str, str], Sequence[str]]
_to_json = json.JSONEncoder(ensure_ascii=False).encode  # json.dumps without its per-call set-up


@functools.lru_cache(maxsize=4)
def _column_set(columns: tuple[str, ...]) -> frozenset[str]:
    return frozenset(columns)


def _flat(
    row: Mapping[str, Any], cited: Callable[[str, str], list[str]], columns: tuple[str, ...] | None = None
) -> dict:
    """A label row (with its item's columns) as one row of :meth:`AnnotationStore.labels_frame`
    (``columns``: :func:`frame_columns`, passed by a caller that flattens many rows)."""
    columns = frame_columns() if columns is None else columns
    wanted = _column_set(columns)
    out = {k: row[k] for k in row.keys() if k in wanted}
    labels = json.loads(row["answer_labels"])
    out["current"] = bool(row["current"])
    out["legacy"] = bool(labels.get("legacy", False))
    out["winner"] = {"A": row["system_a"], "B": row["system_b"]}.get(row["verdict"], row["verdict"])
    out["verdict_shown"] = shown_verdict(row["verdict"], row["shown_order"] == "BA")
    for side in ("a", "b"):
        label = labels[side]
        statutes = label["statutes"]
        flags = {k: verdicts.STATUTE_HALLUCINATED.get(v) for k, v in statutes.items()}
        labelled = [k for k, flag in flags.items() if flag is not None]
        hallucinated = [k for k, flag in flags.items() if flag]
        unlabelled = [k for k in statutes if flags[k] is None]
        unlabelled += [k for k in cited(row["item_id"], side) if k not in statutes]
        for key in human_scores.keys():
            out[f"{key}_{side}"] = label.get(key)  # a label stored before a score was added lacks it
        out[f"n_statutes_{side}"] = len(labelled) + len(unlabelled)
        out[f"n_labelled_{side}"], out[f"n_unlabelled_{side}"] = len(labelled), len(unlabelled)
        out[f"n_hallucinated_{side}"] = len(hallucinated)
        out[f"nhsr_{side}"] = 1 - len(hallucinated) / len(labelled) if labelled else None
        out[f"none_wrong_{side}"] = bool(label.get("none_wrong", False))
        out[f"hallucinated_{side}"] = _to_json(hallucinated)
        out[f"statutes_{side}"] = _to_json(statutes)
    return {c: out.get(c) for c in columns}


def _adjudicated_row(row: Mapping[str, Any]) -> dict:
    """An adjudication as a label row of annotator :data:`ADJUDICATED` (for ``source="adjudicated"``)."""
    out = {k: row[k] for k in row.keys()}
    out.update(
        annotator=ADJUDICATED,
        shown_order="AB",
        comment=row["note"],
        guideline_version="",
        seconds_spent=None,
        submission_id=f"adjudication-{row['item_id']}-v{row['version']}",
    )
    return out


def _labels_frame(rows: list[dict]) -> pd.DataFrame:
    """:meth:`AnnotationStore.labels_frame` of its rows (:data:`FRAME_COLUMNS`, numbers as floats)."""
    import pandas as pd

    return pd.DataFrame(rows, columns=list(frame_columns())).astype({c: float for c in numeric_columns()})


def _statute_frame(rows: list[dict]) -> pd.DataFrame:
    """:meth:`AnnotationStore.statute_labels_frame` of its rows (:data:`STATUTE_COLUMNS`)."""
    import pandas as pd

    # object columns keep None as None (pandas 3 would make the missing labels NaN in a text column)
    frame = pd.DataFrame(rows, columns=list(STATUTE_COLUMNS), dtype=object)
    return frame.astype({"legacy": bool, "version": int, "current": bool})


class FramesMixin:
    """The tables of labels for statistics (a part of :class:`~eval_ui.store.AnnotationStore`)."""

    def annotator_progress(self) -> pd.DataFrame:
        """One row per annotator: ``annotator, role, assigned, done, skipped, first_label_at,
        last_label_at`` (Unix times of their first and latest label, NaN before any)."""
        import pandas as pd

        rows = self._all(
            """SELECT a.name AS annotator, a.role,
                      (SELECT COUNT(*) FROM assignments s WHERE s.annotator = a.name) AS assigned,
                      (SELECT COUNT(*) FROM assignments s WHERE s.annotator = a.name AND s.status = 'done') AS done,
                      (SELECT COUNT(*) FROM assignments s WHERE s.annotator = a.name AND s.status = 'skipped')
                          AS skipped,
                      (SELECT MIN(created_at) FROM labels l WHERE l.annotator = a.name) AS first_label_at,
                      (SELECT MAX(updated_at) FROM labels l WHERE l.annotator = a.name) AS last_label_at
               FROM annotators a ORDER BY a.name"""
        )
        columns = ["annotator", "role", "assigned", "done", "skipped", "first_label_at", "last_label_at"]
        frame = pd.DataFrame([tuple(r) for r in rows], columns=columns)
        return frame.astype({"first_label_at": float, "last_label_at": float})

    def _label_rows(self, current_only: bool, source: str = "raw", cited: Cited | None = None) -> list[dict]:
        """The rows of :meth:`labels_frame` as dicts (None where a value is missing)."""
        return self._label_rows_by_source(current_only, (source,), cited)[source]

    def _label_rows_by_source(
        self, current_only: bool, sources: Sequence[str], cited: Cited | None = None
    ) -> dict[str, list[dict]]:
        """The rows of :meth:`labels_frame` for each of ``sources``, read and flattened once."""
        for source in sources:
            if source not in SOURCES:
                raise StoreError(f"source {source!r} is not one of {', '.join(SOURCES)}")
        fields = ", ".join(f"l.{f}" for f in LABEL_FIELDS.split(", "))
        item = "i.source, i.question, i.system_a, i.system_b"
        query = f"SELECT {fields}, 1 AS current, NULL AS replaced_at, {item} FROM labels l JOIN items i ON i.id = l.item_id"
        if not current_only:
            query += (
                f" UNION ALL SELECT {fields}, 0 AS current, l.replaced_at, {item} "
                "FROM label_history l JOIN items i ON i.id = l.item_id"
            )
        adjudicated: list = []
        with self._read() as con:
            rows = con.execute(query + " ORDER BY annotator, item_id, version").fetchall()
            if ADJUDICATED in sources:
                adj = f"a.item_id, a.verdict, a.answer_labels, a.note, a.created_at, a.updated_at, a.version, {item}"
                adj_query = (
                    f"SELECT {adj}, 1 AS current, NULL AS replaced_at FROM adjudications a "
                    "JOIN items i ON i.id = a.item_id"
                )
                if not current_only:
                    adj_query += (
                        f" UNION ALL SELECT {adj}, 0 AS current, a.replaced_at FROM adjudication_history a "
                        "JOIN items i ON i.id = a.item_id"
                    )
                adjudicated = con.execute(adj_query + " ORDER BY item_id, version").fetchall()
        lookup, columns = self._cited_lookup(cited), frame_columns()
        flat = [_flat(r, lookup, columns) for r in rows]
        out = {}
        if "raw" in sources:
            out["raw"] = flat
        if ADJUDICATED in sources:
            resolved = {r["item_id"] for r in adjudicated}
            out[ADJUDICATED] = [f for f in flat if f["item_id"] not in resolved]
            out[ADJUDICATED] += [_flat(_adjudicated_row(r), lookup, columns) for r in adjudicated]
        return out

    def _cited_lookup(self, cited: Cited | None) -> Callable[[str, str], list[str]]:
        """``cited`` (else :attr:`cited`, else nothing is cited), remembered per (item, side) for one table."""
        function = cited if cited is not None else self.cited
        memo: dict[tuple[str, str], list[str]] = {}

        def lookup(item_id: str, side: str) -> list[str]:
            if function is None:
                return []
            if (item_id, side) not in memo:
                memo[item_id, side] = [str(k) for k in function(item_id, side)]
            return memo[item_id, side]

        return lookup

    def labels_frame(
        self, current_only: bool = True, source: str = "raw", cited: Cited | None = None
    ) -> pd.DataFrame:
        """One row per label (every version when ``current_only`` is False) with its item's columns.

        Columns (:data:`FRAME_COLUMNS`): the item (``system_a``, ``system_b``, ``question``…), the
        verdict un-swapped and as shown, ``winner`` (a system name, ``tie`` or ``both_bad``),
        each human score per answer (``rel_*``/``tlc_*``: :func:`frame_columns`); per answer the statutes: ``n_statutes_*`` (labelled or
        cited), ``n_labelled_*`` (labelled correct or wrong), ``n_unlabelled_*`` (cited but
        unlabelled, and ``legacy_unticked``), ``n_hallucinated_*``, ``nhsr_*`` (the share labelled
        correct among the labelled ones, NaN when none is; LegalHalBench's NHSR as judged by a
        lawyer), ``none_wrong_*``, and ``hallucinated_*`` (keys) / ``statutes_*`` (key → code) as
        JSON text; ``legacy`` (a label of the old tick-only form); times as Unix floats.

        ``cited`` (item id, side) → statute keys, default :attr:`cited`: the statutes counted as
        unlabelled when the label lacks them; without either only labelled statutes are counted.
        ``source="adjudicated"``: an item with an adjudication has one row, annotator
        ``"adjudicated"``, instead of its annotators' rows.
        """
        return _labels_frame(self._label_rows(current_only, source, cited))

    def _statute_rows(self, label_rows: list[dict], cited: Cited | None) -> list[dict]:
        """The rows of :meth:`statute_labels_frame` of ``label_rows`` (:meth:`_label_rows`)."""
        lookup = self._cited_lookup(cited)
        rows = []
        for r in label_rows:
            for side in ("a", "b"):
                labelled = json.loads(r[f"statutes_{side}"])
                keys = list(labelled) + [k for k in lookup(r["item_id"], side) if k not in labelled]
                for statute in keys:
                    code = labelled.get(statute)
                    rows.append(
                        {
                            "annotator": r["annotator"],
                            "item_id": r["item_id"],
                            "side": side,
                            "system": r[f"system_{side}"],
                            "statute": statute,
                            "label": code,
                            "hallucinated": verdicts.STATUTE_HALLUCINATED.get(code),
                            "error_kind": verdicts.STATUTE_ERROR_KIND.get(code),
                            "legacy": r["legacy"],
                            "version": r["version"],
                            "current": r["current"],
                        }
                    )
        return rows

    def statute_labels_frame(
        self, current_only: bool = True, source: str = "raw", cited: Cited | None = None
    ) -> pd.DataFrame:
        """One row per (label, answer side, statute), unlabelled cited statutes included.

        Columns (:data:`STATUTE_COLUMNS`): ``annotator, item_id, side, system, statute``, ``label``
        (a code of :data:`eval_ui.verdicts.STATUTE_LABEL_TABLE`, None when unlabelled),
        ``hallucinated`` (True/False; None when unlabelled or ``legacy_unticked``), ``error_kind``
        (``number``/``content``/``repealed``/``not_found`` or None), ``legacy``, ``version``,
        ``current``. ``cited`` (item id, side) → statute keys, default :attr:`cited`: statutes it lists
        that a label lacks are rows with label None; with neither, only labelled statutes appear.
        ``source`` as in :meth:`labels_frame`.
        """
        return _statute_frame(self._statute_rows(self._label_rows(current_only, source, cited), cited))

    def labelled_systems(self) -> list[str]:
        """The systems of the items that have a current label, sorted (what :meth:`labels_frame`'s
        ``system_a`` and ``system_b`` columns hold, without reading the labels)."""
        rows = self._all(
            "SELECT DISTINCT i.system_a, i.system_b FROM items i WHERE EXISTS "
            "(SELECT 1 FROM labels l WHERE l.item_id = i.id)"
        )
        return sorted({name for r in rows for name in (r[0], r[1])})

    def tables(
        self, current_only: bool = True, sources: Sequence[str] = ("raw",), cited: Cited | None = None
    ) -> dict[str, tuple[pd.DataFrame, pd.DataFrame]]:
        """``{source: (labels_frame, statute_labels_frame)}`` for each of ``sources``, from one read.

        The same frames as :meth:`labels_frame` and :meth:`statute_labels_frame` (the statistics tab
        needs both, raw and adjudicated): the labels are read and flattened once, not four times.
        """
        by_source = self._label_rows_by_source(current_only, tuple(dict.fromkeys(sources)), cited)
        return {
            source: (_labels_frame(rows), _statute_frame(self._statute_rows(rows, cited)))
            for source, rows in by_source.items()
        }
