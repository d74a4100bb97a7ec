"""Saving and reading labels: a save is validated, un-swapped, idempotent on its ``submission_id`` and
committed to disk before it returns; an edit keeps the previous version in ``label_history``."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from typing import Any

from lawluo.i18n import message

from .errors import StoreError, short_name
from .records import LabelInput, SavedLabel, shown_verdict, unswap_verdict
from .schema import LABEL_FIELDS
from .validation import _payload_hash, _stored, _validated


def _label_dict(row: Mapping[str, Any]) -> dict:
    out = {k: row[k] for k in row.keys()}
    out["answer_labels"] = json.loads(out["answer_labels"])
    out["verdict_shown"] = shown_verdict(out["verdict"], out["shown_order"] == "BA")
    return out


class LabelsMixin:
    """Saving and reading labels (a part of :class:`~eval_ui.store.AnnotationStore`)."""

    def save_label(self, annotator: str, item_id: str, label: LabelInput, submission_id: str) -> SavedLabel:
        """Validate, store and commit ``label`` (as shown to ``annotator``); idempotent on ``submission_id``.

        The verdict and answer labels are un-swapped with the assignment's ``swapped`` bit (an admin
        labelling an item not assigned to them saw it unswapped). A label equal to the current one
        creates no new version; a different one moves the current version to ``label_history``.
        The assignment is marked done. Returns only after the commit is on disk. With ``none_wrong``
        on a side, the statutes :attr:`cited` lists for it and the label lacks are stored as ``correct``.
        """
        left, right = _validated(label, submission_id)
        cited = self._cited_pair(item_id, left, right)
        with self._write() as con:
            seen = con.execute(
                "SELECT * FROM submissions WHERE submission_id = ?", (submission_id,)
            ).fetchone()
            if seen is not None:
                return self._repeat(con, seen, annotator, item_id, label, left, right, cited)
            swapped = self._swapped(con, annotator, item_id)
            verdict = unswap_verdict(label.verdict_shown, swapped)
            answer_labels = _stored(left, right, swapped, cited)
            payload = _payload_hash(verdict, answer_labels, label.comment, label.guideline_version)
            now = self._clock()
            current = con.execute(
                "SELECT * FROM labels WHERE annotator = ? AND item_id = ?", (annotator, item_id)
            ).fetchone()
            changed = current is None or payload != _payload_hash(
                current["verdict"], current["answer_labels"], current["comment"], current["guideline_version"]
            )
            version = 1 if current is None else current["version"] + int(changed)
            if current is not None and changed:
                con.execute(
                    f"INSERT INTO label_history ({LABEL_FIELDS}, replaced_at) "
                    f"SELECT {LABEL_FIELDS}, ? FROM labels WHERE annotator = ? AND item_id = ?",
                    (now, annotator, item_id),
                )
            if changed:
                con.execute(
                    f"INSERT OR REPLACE INTO labels ({LABEL_FIELDS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        annotator, item_id, verdict, "BA" if swapped else "AB", answer_labels, label.comment,
                        label.guideline_version, now if current is None else current["created_at"], now,
                        label.seconds_spent, version, submission_id,
                    ),
                )  # fmt: skip
            con.execute(
                "INSERT INTO submissions (submission_id, annotator, item_id, version, payload_hash, received_at) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (submission_id, annotator, item_id, version, payload, now),
            )
            con.execute(
                "UPDATE assignments SET status = 'done', updated_at = ? WHERE annotator = ? AND item_id = ?",
                (now, annotator, item_id),
            )
            con.execute("DELETE FROM drafts WHERE annotator = ? AND item_id = ?", (annotator, item_id))
        return SavedLabel(annotator, item_id, verdict, version, submission_id, changed, duplicate=False)

    def _cited_keys(self, item_id: str, side: str) -> list[str]:
        """The statutes answer ``side`` of the item cites, per :attr:`cited` (empty without it)."""
        if self.cited is None:
            return []
        return [str(k) for k in self.cited(item_id, side)]

    def _cited_pair(self, item_id: str, *labels: dict) -> dict[str, list[str]]:
        """{'a': keys, 'b': keys} when a label confirms "none wrong" (the only save that needs them)."""
        if not any(label.get("none_wrong") for label in labels):
            return {"a": [], "b": []}
        return {side: self._cited_keys(item_id, side) for side in ("a", "b")}

    def _swapped(self, con: sqlite3.Connection, annotator: str, item_id: str) -> bool:
        row = con.execute(
            "SELECT swapped FROM assignments WHERE annotator = ? AND item_id = ?", (annotator, item_id)
        ).fetchone()
        if row is not None:
            return bool(row[0])
        if con.execute("SELECT 1 FROM items WHERE id = ?", (item_id,)).fetchone() is None:
            raise StoreError(f"label not saved: no item {item_id!r}")
        role = con.execute("SELECT role FROM annotators WHERE name = ?", (annotator,)).fetchone()
        if role is None or role[0] != "admin":
            raise StoreError(
                f"label not saved: item {short_name(item_id)} is not assigned to {short_name(annotator)} "
                "(an item left untouched for long is given to someone else) "
                "这一条没有分配给你，或因长时间未处理已转给别人",
                message=message("annotate.store.not_assigned"),
            )
        return False

    def _repeat(
        self,
        con: sqlite3.Connection,
        seen: Mapping[str, Any],
        annotator: str,
        item_id: str,
        label: LabelInput,
        left: dict,
        right: dict,
        cited: dict[str, list[str]],
    ) -> SavedLabel:
        """The answer to a submission id already saved: what it recorded, if it is the same submission."""
        sid = seen["submission_id"]
        if (seen["annotator"], seen["item_id"]) != (annotator, item_id):
            raise StoreError(
                f"submission id {sid!r} was already used for another label; make a new one per save"
            )
        swapped = self._swapped(con, annotator, item_id)
        verdict = unswap_verdict(label.verdict_shown, swapped)
        answer_labels = _stored(left, right, swapped, cited)
        if (
            _payload_hash(verdict, answer_labels, label.comment, label.guideline_version)
            != seen["payload_hash"]
        ):
            raise StoreError(
                f"submission id {sid!r} was already saved with a different label; nothing changed"
            )
        return SavedLabel(annotator, item_id, verdict, seen["version"], sid, changed=False, duplicate=True)

    def submission(self, submission_id: str) -> dict | None:
        """What a submission id produced (annotator, item, version), or None if it was never saved."""
        row = self._one("SELECT * FROM submissions WHERE submission_id = ?", (submission_id,))
        return None if row is None else dict(row)

    def label(self, annotator: str, item_id: str) -> dict | None:
        """``annotator``'s current label of the item (``answer_labels`` parsed, ``verdict_shown`` added)."""
        row = self._one(
            f"SELECT {LABEL_FIELDS} FROM labels WHERE annotator = ? AND item_id = ?", (annotator, item_id)
        )
        return None if row is None else _label_dict(row)

    def history(self, annotator: str, item_id: str) -> list[dict]:
        """Earlier versions of ``annotator``'s label of the item, oldest first, each with ``replaced_at``."""
        rows = self._all(
            f"SELECT {LABEL_FIELDS}, replaced_at FROM label_history WHERE annotator = ? AND item_id = ? "
            "ORDER BY version",
            (annotator, item_id),
        )
        return [_label_dict(r) for r in rows]

    def done_items(self, annotator: str) -> list[str]:
        """Ids of the items ``annotator`` has labelled, in the order first labelled (to go back and edit)."""
        rows = self._all(
            "SELECT item_id FROM labels WHERE annotator = ? ORDER BY created_at, item_id", (annotator,)
        )
        return [r[0] for r in rows]

    def progress(self, annotator: str) -> tuple[int, int]:
        """(done, assigned) for ``annotator``."""
        row = self._one(
            "SELECT COALESCE(SUM(status = 'done'), 0), COUNT(*) FROM assignments WHERE annotator = ?",
            (annotator,),
        )
        return int(row[0]), int(row[1])
