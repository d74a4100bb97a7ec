"""Adjudication: an admin records the resolved label of an item the annotators disagree on, in its own
table with its history; it never changes an annotator's label."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from eval_ui import verdicts
from lawluo.i18n import message

from .errors import StoreError
from .records import MAX_NOTE, SIDES, VERDICTS, AnswerLabel
from .schema import ADJUDICATION_FIELDS
from .validation import _answer_label, _answer_labels_json, _confirmed


def _adjudication_dict(row: Mapping[str, Any]) -> dict:
    out = {k: row[k] for k in ADJUDICATION_FIELDS.split(", ")}
    if "replaced_at" in row.keys():
        out["replaced_at"] = row["replaced_at"]
    out["answer_labels"] = json.loads(out["answer_labels"])
    return out


def _disagreement(labels: Sequence[tuple[str, str, dict]]) -> list[str]:
    """What (annotator, verdict, answer_labels) of one item disagree on; empty when they agree.

    >>> _disagreement([("张", "A", {"a": {"statutes": {"x": "correct"}}, "b": {"statutes": {}}}),
    ...                ("李", "tie", {"a": {"statutes": {"x": "wrong_number"}}, "b": {"statutes": {}}})])
    ['判断不同 verdicts differ: 张 A, 李 tie', '回答 A answer A: 法条 x 真实/有误不一 labelled both correct and wrong']
    """
    reasons = []
    if len({v for _, v, _ in labels}) > 1:
        reasons.append("判断不同 verdicts differ: " + ", ".join(f"{n} {v}" for n, v, _ in labels))
    for side in ("a", "b"):
        flags: dict[str, set[bool]] = {}
        for _, _, answer_labels in labels:
            for key, code in answer_labels[side]["statutes"].items():
                flag = verdicts.STATUTE_HALLUCINATED.get(code)
                if flag is not None:
                    flags.setdefault(key, set()).add(flag)
        reasons += [
            f"{SIDES[side]}: 法条 {key} 真实/有误不一 labelled both correct and wrong"
            for key, seen in flags.items()
            if len(seen) > 1
        ]
    return reasons


class AdjudicationMixin:
    """Disagreements and their resolutions (a part of :class:`~eval_ui.store.AnnotationStore`)."""

    def disagreements(self) -> list[dict]:
        """Items whose current labels (two or more) disagree on the verdict or on whether a statute is
        hallucinated, for an admin to adjudicate; oldest item first.

        Each: ``item_id``, ``question``, ``system_a``, ``system_b``, ``labels`` (``annotator``,
        ``verdict`` un-swapped, ``answer_labels`` under ``a``/``b``, ``comment``), ``adjudication``
        (:meth:`adjudication` or None) and ``reasons`` (what differs, Chinese and English). A statute
        one annotator left unlabelled (or ``legacy_unticked``) is missing data, not a disagreement.
        """
        with self._read() as con:
            rows = con.execute(
                "SELECT l.annotator, l.item_id, l.verdict, l.answer_labels, l.comment, "
                "i.question, i.system_a, i.system_b, i.created FROM labels l JOIN items i ON i.id = l.item_id "
                "WHERE l.item_id IN (SELECT item_id FROM labels GROUP BY item_id HAVING COUNT(*) >= 2) "
                "ORDER BY i.created, l.item_id, l.annotator"
            ).fetchall()
            adjudicated = {
                r["item_id"]: _adjudication_dict(r) for r in con.execute("SELECT * FROM adjudications")
            }
        by_item: dict[str, list] = {}
        for r in rows:
            by_item.setdefault(r["item_id"], []).append(r)
        out = []
        for item_id, labels in by_item.items():
            parsed = [(r["annotator"], r["verdict"], json.loads(r["answer_labels"])) for r in labels]
            reasons = _disagreement(parsed)
            if reasons:
                first = labels[0]
                out.append(
                    {
                        "item_id": item_id,
                        "question": first["question"],
                        "system_a": first["system_a"],
                        "system_b": first["system_b"],
                        "labels": [
                            {"annotator": n, "verdict": v, "answer_labels": al, "comment": r["comment"]}
                            for (n, v, al), r in zip(parsed, labels, strict=True)
                        ],
                        "adjudication": adjudicated.get(item_id),
                        "reasons": reasons,
                    }
                )
        return out

    def adjudicate(
        self, admin: str, item_id: str, verdict: str, a: AnswerLabel, b: AnswerLabel, note: str = ""
    ) -> dict:
        """Record the resolved label of an item (admins only); returns it as :meth:`adjudication` does.

        ``verdict`` is in the item's own orientation (``A``/``B``/``tie``/``both_bad``; nothing is
        swapped) and ``a``/``b`` label system_a's and system_b's answers (``none_wrong`` confirms the
        statutes :attr:`cited` lists). Kept in ``adjudications``, apart from the annotators' labels,
        which it never changes; a different resolution moves the previous one to
        ``adjudication_history``, an identical one writes nothing.
        """
        if self.role(admin) != "admin":
            raise StoreError(
                f"只有管理员可以裁定 only an admin may adjudicate; {admin!r} is not one",
                message=message("store.only_admin_adjudicates"),
            )
        problems: list[str] = []
        if verdict not in VERDICTS:
            problems.append(f"判断 verdict {verdict!r} is not one of {', '.join(VERDICTS)}")
        la, lb = _answer_label(a, "a", problems), _answer_label(b, "b", problems)
        if not isinstance(note, str) or len(note) > MAX_NOTE:
            problems.append(
                f"说明 note: 最多 {MAX_NOTE:,} 字 must be text of at most {MAX_NOTE:,} characters"
            )
        if problems:
            raise StoreError("没有保存 adjudication not saved: " + "; ".join(problems))
        cited = self._cited_pair(item_id, la, lb)
        answer_labels = _answer_labels_json(_confirmed(la, cited["a"]), _confirmed(lb, cited["b"]))
        now = self._clock()
        with self._write() as con:
            if con.execute("SELECT 1 FROM items WHERE id = ?", (item_id,)).fetchone() is None:
                raise StoreError(
                    f"没有保存 adjudication not saved: no item {item_id!r}",
                    message=message("store.no_item", item=str(item_id)),
                )
            current = con.execute("SELECT * FROM adjudications WHERE item_id = ?", (item_id,)).fetchone()
            if current is not None and (current["verdict"], current["answer_labels"], current["note"]) == (
                verdict,
                answer_labels,
                note,
            ):
                return _adjudication_dict(current)
            if current is not None:
                con.execute(
                    f"INSERT INTO adjudication_history ({ADJUDICATION_FIELDS}, replaced_at) "
                    f"SELECT {ADJUDICATION_FIELDS}, ? FROM adjudications WHERE item_id = ?",
                    (now, item_id),
                )
            con.execute(
                f"INSERT OR REPLACE INTO adjudications ({ADJUDICATION_FIELDS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    item_id, verdict, answer_labels, note, admin,
                    now if current is None else current["created_at"], now,
                    1 if current is None else current["version"] + 1,
                ),
            )  # fmt: skip
            row = con.execute("SELECT * FROM adjudications WHERE item_id = ?", (item_id,)).fetchone()
        return _adjudication_dict(row)

    def adjudication(self, item_id: str) -> dict | None:
        """The item's current adjudication (``answer_labels`` parsed), or None."""
        row = self._one("SELECT * FROM adjudications WHERE item_id = ?", (item_id,))
        return None if row is None else _adjudication_dict(row)

    def adjudication_history(self, item_id: str) -> list[dict]:
        """Earlier adjudications of the item, oldest first, each with ``replaced_at``."""
        rows = self._all("SELECT * FROM adjudication_history WHERE item_id = ? ORDER BY version", (item_id,))
        return [_adjudication_dict(r) for r in rows]
