"""Drafts: what an annotator has marked and typed for an item and not saved yet, kept as they type and
shown again after a reload; validated as a label is, when kept and again when read back."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from typing import Any

from .. import human_scores
from .errors import StoreError, short_name
from .records import MAX_COMMENT, AnswerLabel
from .validation import _answer_label

logger = logging.getLogger("eval_ui.store")

#: 5,000-character comment of 3-byte characters) is about 25 KB.
MAX_DRAFT_BYTES = 64_000
_DRAFT_KEYS = {"a", "b", "comment"}


def _answer_keys() -> set[str]:
    """The keys of each answer in a stored draft: ``statutes`` and every human score's (``rel``, ``tlc``)."""
    return {"statutes", *human_scores.keys()}


@dataclass(frozen=True)
class Draft:
    """What an annotator has marked and typed for an item and not saved yet, as they saw it (left/right):
    the same fields as a :class:`LabelInput` without a verdict, validated by the same rules."""

    left: AnswerLabel = field(default_factory=AnswerLabel)
    right: AnswerLabel = field(default_factory=AnswerLabel)
    comment: str = ""

    def is_empty(self) -> bool:
        return not (
            self.comment.strip()
            or any(
                s.statutes or any(v is not None for v in s.scores.values()) for s in (self.left, self.right)
            )
        )


def _draft_json(draft: Draft, swapped: bool) -> str:
    """The stored JSON of ``draft`` (the item's orientation, ``a``/``b``); StoreError lists every problem."""
    problems: list[str] = []
    if not isinstance(draft, Draft):
        raise StoreError(f"expected a Draft, got {type(draft).__name__}")
    left, right = (_answer_label(draft.left, "left", problems), _answer_label(draft.right, "right", problems))
    if not isinstance(draft.comment, str) or len(draft.comment) > MAX_COMMENT:
        problems.append(
            f"备注 comment: 最多 {MAX_COMMENT:,} 字 must be text of at most {MAX_COMMENT:,} characters"
        )
    if problems:
        raise StoreError("草稿没有保存 draft not kept: " + "; ".join(problems))
    a, b = (right, left) if swapped else (left, right)
    keys = _answer_keys()
    data = {
        "a": {k: a[k] for k in keys},
        "b": {k: b[k] for k in keys},
        "comment": draft.comment,
    }
    text = json.dumps(data, ensure_ascii=False, sort_keys=True)
    if len(text.encode("utf-8")) > MAX_DRAFT_BYTES:
        raise StoreError(f"草稿太大 draft not kept: over {MAX_DRAFT_BYTES:,} bytes")
    return text


def _draft_from_json(text: object) -> dict:
    """A stored draft read back and validated as an upload is (ValueError when it is not one): at most
    :data:`MAX_DRAFT_BYTES`, exactly the known keys, statute labels only from the form's choices, scores
    0–10, a comment within :data:`MAX_COMMENT`. Returns ``{"a": {statutes, rel, tlc}, "b": …, "comment"}`` (a key per human score).

    >>> _draft_from_json('{"a": {"statutes": {"《民法典》第1条": "correct"}, "rel": 7, "tlc": null},'
    ...                  ' "b": {"statutes": {}, "rel": null, "tlc": null}, "comment": "再看看"}')["a"]["rel"]
    7
    >>> _draft_from_json('{"a": {"statutes": {"x": "yes"}, "rel": null, "tlc": null},'
    ...                  ' "b": {"statutes": {}, "rel": null, "tlc": null}, "comment": ""}')
    Traceback (most recent call last):
    ...
    ValueError: 回答 A answer A: 法条 x 的标注 'yes' 不是 真实/有误 之一 the label of statute x is 'yes', not one of correct, wrong, wrong_number, wrong_content, wrong_repealed, wrong_not_found, wrong_version
    """
    if not isinstance(text, str) or len(text.encode("utf-8")) > MAX_DRAFT_BYTES:
        raise ValueError(f"a draft is JSON text of at most {MAX_DRAFT_BYTES:,} bytes")
    data = json.loads(text)
    if not isinstance(data, dict) or set(data) != _DRAFT_KEYS:
        raise ValueError(f"a draft has exactly the keys {sorted(_DRAFT_KEYS)}")
    problems: list[str] = []
    out: dict[str, Any] = {}
    keys = _answer_keys()
    for side in ("a", "b"):
        answer = data[side]
        if not isinstance(answer, dict) or set(answer) != keys:
            raise ValueError(f"a draft's answer {side} has exactly the keys {sorted(keys)}")
        scores = {k: v for k, v in answer.items() if k != "statutes"}
        parsed = _answer_label(AnswerLabel(answer["statutes"], scores=scores), side, problems)
        out[side] = {k: parsed.get(k) for k in keys}
    if not isinstance(data["comment"], str) or len(data["comment"]) > MAX_COMMENT:
        problems.append(f"the comment is not text of at most {MAX_COMMENT:,} characters")
    if problems:
        raise ValueError("; ".join(problems))
    out["comment"] = data["comment"]
    return out


class DraftsMixin:
    """Keeping and reading drafts (a part of :class:`~eval_ui.store.AnnotationStore`)."""

    def save_draft(self, annotator: str, item_id: str, draft: Draft, base_version: int) -> bool:
        """Keep ``draft`` (as ``annotator`` sees the item) as their draft of the item, replacing any other;
        an empty draft deletes it. ``base_version``: the version of their label the form was showing (0:
        none). Returns False, keeping nothing, when that is no longer the current version (the label was
        saved meanwhile: the draft is stale). Validated as a label is (StoreError); only an annotator the
        item is assigned to, or an admin, has a draft of it. Committed to disk before it returns.
        """
        if isinstance(base_version, bool) or not isinstance(base_version, int) or base_version < 0:
            raise StoreError(
                f"草稿没有保存 draft not kept: base_version must be a version number, got {base_version!r}"
            )
        with self._write() as con:
            swapped = self._swapped(con, annotator, item_id)
            text = _draft_json(draft, swapped)
            row = con.execute(
                "SELECT version FROM labels WHERE annotator = ? AND item_id = ?", (annotator, item_id)
            ).fetchone()
            if (row[0] if row is not None else 0) != base_version:
                return False
            if draft.is_empty():
                con.execute("DELETE FROM drafts WHERE annotator = ? AND item_id = ?", (annotator, item_id))
                return True
            con.execute(
                "INSERT OR REPLACE INTO drafts (annotator, item_id, base_version, data, updated_at) "
                "VALUES (?, ?, ?, ?, ?)",
                (annotator, item_id, base_version, text, self._clock()),
            )
        return True

    def draft(self, annotator: str, item_id: str) -> dict | None:
        """``annotator``'s draft of the item (``{"a": {statutes, rel, tlc}, "b": …, "comment", "updated_at"}``,
        the item's own orientation), or None: none kept, or one made on a label version that is no longer
        current, or one that does not pass :func:`_draft_from_json` (logged, never shown)."""
        with self._read() as con:
            row = con.execute(
                "SELECT d.base_version, d.data, d.updated_at, l.version FROM drafts d LEFT JOIN labels l "
                "ON l.annotator = d.annotator AND l.item_id = d.item_id WHERE d.annotator = ? AND d.item_id = ?",
                (annotator, item_id),
            ).fetchone()
        if row is None or row["base_version"] != (row["version"] or 0):
            return None
        try:
            data = _draft_from_json(row["data"])
        except ValueError as exc:
            logger.warning(
                "a draft of %s by %s was not restored: %s", short_name(item_id), short_name(annotator), exc
            )
            return None
        return data | {"updated_at": row["updated_at"]}
