"""The automatic results of ``python -m lawluo evaluate`` (:class:`AutoMetrics`) and how they join the labels:
by question id and system, the judge's verdicts turned to the item's orientation."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from lawluo.metrics.pairwise import FIRST_AS_A, FIRST_AS_B, PairRecord

from .. import human_scores
from ..items import Item


@dataclass
class AutoMetrics:
    """Automatic results per (question id, system) and judge verdicts per (question id, first, second).

    ``scores``: for each human score's key (:data:`eval_ui.human_scores.HUMAN_SCORE_TABLE`) the automatic
    metric of that row (``details.jsonl``'s ``"rel": {"score": …}``) per (question id, system); each is also an
    attribute (``auto.rel``).
    """

    scores: dict[str, dict[tuple[str, str], float]] = field(default_factory=dict)
    judge: dict[tuple[str, str, str], tuple[str | None, str | None]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for key in human_scores.keys():
            self.scores.setdefault(key, {})

    def __getattr__(self, name: str) -> dict[tuple[str, str], float]:
        scores = self.__dict__.get("scores") or {}
        if name in scores:
            return scores[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __bool__(self) -> bool:
        return bool(any(self.scores.values()) or self.judge)

    @classmethod
    def read(cls, paths: Iterable[str | Path]) -> AutoMetrics:
        """Read ``details.jsonl`` and ``pairwise.jsonl`` files written by ``python -m lawluo evaluate``.

        Raises ``ValueError`` naming the file and line of anything that is not such a row.
        """
        auto = cls()
        for path in paths:
            path = Path(path)
            with path.open(encoding="utf-8") as f:
                for n, line in enumerate(f, start=1):
                    if not line.strip():
                        continue
                    try:
                        row = json.loads(line)
                        auto._add(row)
                    except (ValueError, TypeError, KeyError, AttributeError) as exc:
                        raise ValueError(
                            f"{path.name}:{n}: not a row of lawluo evaluate's details.jsonl or pairwise.jsonl ({exc})"
                        ) from exc
        return auto

    def _add(self, row: Mapping[str, Any]) -> None:
        qid = str(row["id"])
        if PairRecord.is_one(row):  # a line of pairwise.jsonl, as lawluo.metrics.pairwise writes it
            record = PairRecord.from_json(row)
            self.judge[(record.id, record.first, record.second)] = (
                _first_view(record.preference(FIRST_AS_A), first_is_a=True),
                _first_view(record.preference(FIRST_AS_B), first_is_a=False),
            )
            return
        system = str(row["system"])
        for human in human_scores.table():
            value = row.get(human.metric)
            score = value.get("score") if isinstance(value, Mapping) else None
            if isinstance(score, int | float) and not isinstance(score, bool) and math.isfinite(score):
                self.scores.setdefault(human.key, {})[(qid, system)] = float(score)

    def judged(self, qid: str, system_a: str, system_b: str) -> tuple[str | None, str | None] | None:
        """The judge's two verdicts (shown first as A, shown first as B) on an item, in its orientation."""
        if (qid, system_a, system_b) in self.judge:
            return self.judge[(qid, system_a, system_b)]
        if (qid, system_b, system_a) in self.judge:
            flip = {"A": "B", "B": "A", "tie": "tie", None: None}
            first_a, first_b = self.judge[(qid, system_b, system_a)]
            return flip[first_a], flip[first_b]
        return None


def _first_view(preference: str | None, first_is_a: bool) -> str | None:
    """A judge's stated preference (A/B/tie as shown) as a verdict of "first is A": A, B or tie."""
    if preference not in ("A", "B", "tie"):
        return None
    if preference == "tie" or first_is_a:
        return preference
    return "A" if preference == "B" else "B"


def combined_judge_verdict(first_a: str | None, first_b: str | None) -> str | None:
    """The judge's verdict from its two orders: kept when both agree, a tie when they differ (MT-bench's
    conservative rule, Zheng et al. 2023 §3.4; LawLuo §5.1), the one given when the other is missing.

    >>> combined_judge_verdict("A", "A"), combined_judge_verdict("A", "B"), combined_judge_verdict(None, "B")
    ('A', 'tie', 'B')
    """
    if first_a is None or first_b is None:
        return first_a if first_b is None else first_b
    return first_a if first_a == first_b else "tie"


def question_id(item: Item) -> str | None:
    """The question id of an item made from answer files (``{qid}:{system_a}:{system_b}``), else None."""
    return _qid(item.id, item.system_a, item.system_b)


def _qid(item_id: str, system_a: str, system_b: str) -> str | None:
    suffix = f":{system_a}:{system_b}"
    return item_id[: -len(suffix)] if item_id.endswith(suffix) and len(item_id) > len(suffix) else None


def _qids(labels: pd.DataFrame) -> list[str | None]:
    return [
        _qid(i, a, b)
        for i, a, b in zip(labels["item_id"], labels["system_a"], labels["system_b"], strict=True)
    ]
