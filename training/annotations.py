"""Pairwise labels of the annotation tool (``eval_ui``) as training rows: DPO preference pairs and labelled
answers for the reward model (re-exported by :mod:`training.data`).

    preference_rows("labels.csv", "annotations.sqlite")          # prompt / chosen / rejected (DPO)
    reward_rows_from_annotations("labels.csv", "items.jsonl")    # question, answer, label 1/0 (boss)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from training.shared_data import read_jsonl


# -- annotation labels (eval_ui.store.AnnotationStore.export / labels_frame) -------------------------
def read_annotation_labels(source) -> list[dict]:
    """The current labels of an annotation export: a ``.csv`` or ``.jsonl`` file written by
    ``AnnotationStore.export``, a ``labels_frame()`` DataFrame, or an iterable of such rows. Rows of
    edited-away versions (``current`` false) are dropped; every row needs ``item_id`` and ``verdict``."""
    import csv

    from eval_ui.verdicts import VERDICTS  # imported here: only the annotation converters need eval_ui

    if isinstance(source, str | Path):
        path = Path(source)
        if path.suffix == ".csv":
            with path.open(encoding="utf-8-sig", newline="") as f:
                rows = list(csv.DictReader(f))
        elif path.suffix == ".jsonl":
            rows = read_jsonl(path)
        else:
            raise ValueError(f"{path}: expected the .csv or .jsonl of an annotation export")
    elif hasattr(source, "to_dict"):
        rows = source.to_dict("records")
    else:
        rows = list(source)
    out = []
    for n, row in enumerate(rows, start=1):
        if not row.get("item_id") or row.get("verdict") not in VERDICTS:  # eval_ui/verdicts.py
            raise ValueError(
                f"label row {n}: needs an item_id and a verdict in {VERDICTS}, got {dict(row)!r:.200}"
            )
        if str(row.get("current", True)).strip().lower() in ("false", "0"):
            continue
        out.append(dict(row))
    return out


def item_verdicts(labels: Iterable[Mapping]) -> dict[str, str]:
    """Each item's verdict over its annotators: the verdict most of them gave, or ``"tie"`` when two
    verdicts have the same top count (the annotators disagree; no preference is read into it).

    >>> item_verdicts([{"item_id": "1", "verdict": v} for v in "AAB"] + [{"item_id": "2", "verdict": "A"},
    ...                {"item_id": "2", "verdict": "B"}, {"item_id": "3", "verdict": "both_bad"}])
    {'1': 'A', '2': 'tie', '3': 'both_bad'}
    """
    from collections import Counter

    votes: dict[str, Counter] = {}
    for row in labels:
        votes.setdefault(str(row["item_id"]), Counter())[row["verdict"]] += 1
    out = {}
    for item_id, counter in votes.items():
        (top, n), *rest = counter.most_common()
        out[item_id] = "tie" if rest and rest[0][1] == n else top
    return out


def annotation_items(source) -> Callable[[str], object]:
    """A lookup item id → ``eval_ui.items.Item`` (or None) over an ``AnnotationStore``, the store's
    ``.sqlite`` file, an items file (``.jsonl``/``.csv`` as ``eval_ui.items.read_items`` reads), a
    mapping id → Item, or an iterable of Items."""
    if hasattr(source, "item"):
        return source.item
    if isinstance(source, str | Path):
        path = Path(source)
        if path.suffix in (".sqlite", ".sqlite3", ".db"):
            from eval_ui.store import AnnotationStore

            return AnnotationStore(path).item
        from eval_ui.items import read_items

        source = read_items(path)
    if not isinstance(source, Mapping):
        source = {item.id: item for item in source}
    return source.get


def _labelled_items(labels, items) -> list[tuple[object, str]]:
    lookup = annotation_items(items)
    verdicts = item_verdicts(read_annotation_labels(labels))
    found = [(lookup(item_id), verdict) for item_id, verdict in verdicts.items()]
    missing = [item_id for (item, _), item_id in zip(found, verdicts, strict=True) if item is None]
    if missing:
        raise ValueError(f"{len(missing)} labelled item(s) not among the items: {', '.join(missing[:5])}")
    return found


def preference_rows(labels, items) -> list[dict]:
    """DPO pairs from pairwise labels (TRL's conversational preference format): for every item whose
    verdict (:func:`item_verdicts`) is ``A`` or ``B``, ``prompt`` = the question as a user message,
    ``chosen``/``rejected`` = the winner's/loser's answer as an assistant message. ``tie`` and
    ``both_bad`` carry no preference and are dropped. ``labels``: see :func:`read_annotation_labels`;
    ``items``: see :func:`annotation_items`."""
    rows = []
    for item, verdict in _labelled_items(labels, items):
        if verdict not in ("A", "B"):
            continue
        win, lose = (item.answer_a, item.answer_b) if verdict == "A" else (item.answer_b, item.answer_a)
        rows.append(
            {
                "prompt": [{"role": "user", "content": item.question}],
                "chosen": [{"role": "assistant", "content": win}],
                "rejected": [{"role": "assistant", "content": lose}],
                "id": item.id,
            }
        )
    return rows


def reward_rows_from_annotations(labels, items) -> list[dict]:
    """Labelled answers from pairwise labels: the winner of ``A``/``B`` is better (1) and the loser worse
    (0); with ``both_bad`` both answers are worse (0); ``tie`` items are dropped."""
    rows = []
    for item, verdict in _labelled_items(labels, items):
        if verdict == "tie":
            continue
        good = {"A": (1, 0), "B": (0, 1), "both_bad": (0, 0)}[verdict]
        for answer, label in zip((item.answer_a, item.answer_b), good, strict=True):
            rows.append(
                {
                    "question": item.question,
                    "answer": answer,
                    "label": label,
                    "kind": "answer",
                    "source": f"annotation:{item.id}",
                }
            )
    return rows
