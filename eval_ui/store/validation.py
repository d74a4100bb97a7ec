"""Checking a label before it is stored: every problem listed, in Chinese and English (a
:class:`~eval_ui.store.errors.StoreError`), and the validated label as the JSON the store keeps."""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence

from eval_ui import human_scores, verdicts

from .errors import StoreError
from .records import (
    LABEL_FORMAT,
    MAX_COMMENT,
    MAX_KEY,
    MAX_STATUTES,
    SHOWN_VERDICTS,
    SIDES,
    AnswerLabel,
    LabelInput,
)


def _score(
    value: object, what: str, problems: list[str], score_range: tuple[int, int] = (0, 10)
) -> float | None:
    """``value`` as stored (an integer when it is one), None when empty; a problem when out of ``score_range``."""
    low, high = score_range
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not (low <= value <= high):
        problems.append(
            f"{what} 须为 {low}–{high} 的数字或留空 must be a number from {low} to {high} or empty, got {value!r}"
        )
        return None
    return int(value) if float(value).is_integer() else float(value)


def _answer_label(label: object, side: str, problems: list[str]) -> dict:
    """``label`` as the JSON-ready dict stored per answer; every problem is appended to ``problems``.

    ``side`` (``left``, ``right``, ``a``, ``b``) names the answer in the messages, in Chinese and English.
    """
    where = SIDES[side]
    if not isinstance(label, AnswerLabel):
        problems.append(f"{where}: expected an AnswerLabel, got {type(label).__name__}")
        return {}
    statutes = label.statutes
    if not isinstance(statutes, Mapping) or len(statutes) > MAX_STATUTES:
        problems.append(
            f"{where}: 法条标注须是至多 {MAX_STATUTES} 条的 法条→标注 对应 "
            f"statutes must map at most {MAX_STATUTES} cited statutes to a label"
        )
        statutes = {}
    codes = ", ".join(verdicts.STATUTE_LABELS)
    for key, value in statutes.items():
        if not isinstance(key, str) or not key.strip() or len(key) > MAX_KEY:
            problems.append(
                f"{where}: 法条 {key!r} 须为不超过 {MAX_KEY} 字的非空文本 "
                f"statute {key!r} must be a non-empty string of at most {MAX_KEY} characters"
            )
        if isinstance(value, bool):
            problems.append(
                f"{where}: 法条 {key} 的标注 {value!r} 是旧版的是/否勾选，请选 真实 或 有误 "
                f"the label of statute {key} is {value!r} (the old tick); give one of {codes}"
            )
        elif value not in verdicts.STATUTE_LABELS:
            problems.append(
                f"{where}: 法条 {key} 的标注 {value!r} 不是 真实/有误 之一 "
                f"the label of statute {key} is {value!r}, not one of {codes}"
            )
        elif label.none_wrong is True and verdicts.STATUTE_HALLUCINATED[value]:
            problems.append(
                f"{where}: 已确认“这些都没问题”，但法条 {key} 标为 {verdicts.STATUTE_NAMES[value]} "
                f'"none of these is wrong" was confirmed, yet statute {key} is labelled {value}'
            )
    if not isinstance(label.none_wrong, bool):
        problems.append(f"{where}: none_wrong must be True or False, got {label.none_wrong!r}")
    scores = {
        s.key: _score(label.scores.get(s.key), f"{where}: {s.name}", problems, s.range)
        for s in human_scores.table()
    }
    return {
        "statutes": {k: statutes[k] for k in sorted(statutes, key=str)},
        **scores,
        "none_wrong": label.none_wrong is True,
    }


def _confirmed(label: dict, cited: Sequence[str]) -> dict:
    """``label`` (a validated answer label) with every statute of ``cited`` it lacks recorded as
    ``correct`` when the annotator confirmed "none of these is wrong"; unchanged otherwise."""
    if not label.get("none_wrong"):
        return label
    statutes = {**{k: "correct" for k in cited}, **label["statutes"]}
    return {**label, "statutes": {k: statutes[k] for k in sorted(statutes)}}


def _answer_labels_json(a: dict, b: dict) -> str:
    """The stored answer_labels of a new save (current :data:`LABEL_FORMAT`)."""
    return json.dumps({"a": a, "b": b, "format": LABEL_FORMAT}, ensure_ascii=False, sort_keys=True)


def _validated(label: LabelInput, submission_id: str) -> tuple[dict, dict]:
    """(left, right) answer labels as JSON-ready dicts; StoreError lists every problem of ``label``."""
    problems: list[str] = []
    if not isinstance(label, LabelInput):
        raise StoreError(f"expected a LabelInput, got {type(label).__name__}")
    if label.verdict_shown not in SHOWN_VERDICTS:
        problems.append(f"判断 verdict {label.verdict_shown!r} is not one of {', '.join(SHOWN_VERDICTS)}")
    left = _answer_label(label.left, "left", problems)
    right = _answer_label(label.right, "right", problems)
    if not isinstance(label.comment, str) or len(label.comment) > MAX_COMMENT:
        problems.append(
            f"备注 comment: 最多 {MAX_COMMENT:,} 字 must be text of at most {MAX_COMMENT:,} characters"
        )
    if not isinstance(label.guideline_version, str) or len(label.guideline_version) > 100:
        problems.append("guideline_version must be a string of at most 100 characters")
    s = label.seconds_spent
    if s is not None and (isinstance(s, bool) or not isinstance(s, int | float) or not (0 <= s < math.inf)):
        problems.append(f"seconds_spent must be a non-negative number or empty, got {s!r}")
    if not isinstance(submission_id, str) or not submission_id.strip() or len(submission_id) > 200:
        problems.append("submission_id must be a non-empty string of at most 200 characters")
    if problems:
        raise StoreError("没有保存 label not saved: " + "; ".join(problems))
    return left, right


def _stored(left: dict, right: dict, swapped: bool, cited: Mapping[str, Sequence[str]]) -> str:
    """The answer_labels JSON of a save: the labels of ``left``/``right`` under ``a``/``b``."""
    a, b = (right, left) if swapped else (left, right)
    return _answer_labels_json(_confirmed(a, cited["a"]), _confirmed(b, cited["b"]))


def _payload_hash(verdict: str, answer_labels: str, comment: str, guideline_version: str) -> str:
    payload = json.dumps([verdict, answer_labels, comment, guideline_version], ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()
