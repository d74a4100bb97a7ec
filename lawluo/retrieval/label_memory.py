"""Labelled questions that vote for their label by their nearness to an asked one (issue 39, sessions 38–39).

    memory = build(questions, labels, statute_searcher.dense)      # embedded with the search's encoder and adapter
    memory.save(path); memory = LabelMemory.load(path, dense.fingerprint, dense.adapter.digest())
    memory.shares(dense.query_vector(question))  # {'labor': 0.81, 'other': 0.19}: the k nearest, each with its cosine
    memory.read(dense.query_vector(question))    # 'labor': the label with the largest share

Two readers use it: the kind of case a question is about (:mod:`lawluo.retrieval.case_kind`, a check on the similar
cases shown) and the domain the nearest everyday questions were labelled with (:mod:`lawluo.agents.domain_vote`, mixed
into the receptionist's routing). The vectors are the statute search's (e5 mapped by its query adapter), so the asked
question is embedded once for the search and every reader.

**File.** An ``.npz`` beside the statute vectors: the questions' adapted vectors (float32, unit rows) and, in a JSON
string, their labels, the fingerprint of the statute vectors and the digest of the query adapter. Read without
pickles; a file for other vectors or another adapter, or malformed, is refused (:class:`LabelMemoryError`) and its
reader logs it and steps aside.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import numpy as np

from ..files import read_npz, write_npz

log = logging.getLogger(__name__)
T = TypeVar("T")

FORMAT = 2  # 1 (session 38) named the labels "kinds"
#: Nearest labelled questions that vote (chosen on development data in session 38: 3, 5 and 10 tried).
K = 5
#: A bound on what a file may hold: more questions than this is not a file this module wrote.
MAX_QUESTIONS = 200_000
MAX_LABEL_CHARS = 100


class LabelMemoryError(ValueError):
    """A memory file that cannot be used; the message is in Chinese and English and names the command that rebuilds it."""


@dataclass(frozen=True)
class LabelMemory:
    """Labelled questions' unit vectors (``n × d``) and the label of each.

    >>> m = LabelMemory(np.array([[1.0, 0.0], [0.0, 1.0], [0.6, 0.8]], np.float32), ("盗窃罪", "民间借贷纠纷", "民间借贷纠纷"))
    >>> m.read(np.array([0.0, 1.0], np.float32), k=2), m.read(np.array([1.0, 0.0], np.float32), k=1)
    ('民间借贷纠纷', '盗窃罪')
    >>> {label: round(share, 3) for label, share in m.shares(np.array([0.0, 1.0], np.float32), k=2).items()}
    {'民间借贷纠纷': 1.0}
    """

    vectors: np.ndarray
    labels: tuple[str, ...]
    fingerprint: str = ""
    adapter: str = ""

    def __len__(self) -> int:
        return len(self.labels)

    def votes(self, vector: np.ndarray, k: int = K) -> dict[str, float]:
        """The labels of the ``k`` stored questions nearest ``vector`` (a unit query vector), each with the summed
        cosine of its questions, in the order of their nearest question. ``{}`` for an empty memory."""
        if not len(self):
            return {}
        sims = self.vectors @ np.asarray(vector, dtype=np.float32).reshape(-1)
        k = min(k, len(sims))
        nearest = np.argpartition(-sims, k - 1)[:k]
        nearest = nearest[np.argsort(-sims[nearest], kind="stable")]
        votes: dict[str, float] = {}
        for j in nearest.tolist():
            votes[self.labels[j]] = votes.get(self.labels[j], 0.0) + float(sims[j])
        return votes

    def shares(self, vector: np.ndarray, k: int = K) -> dict[str, float]:
        """:meth:`votes` as shares that sum to 1 (cosines below 0 count 0); ``{}`` when nothing votes."""
        votes = {label: max(v, 0.0) for label, v in self.votes(vector, k).items()}
        total = sum(votes.values())
        return {label: v / total for label, v in votes.items()} if total > 0 else {}

    def read(self, vector: np.ndarray, k: int = K) -> str:
        """The label of the largest vote; ties go to the label named by the nearer question. ``""`` for an empty
        memory."""
        votes = self.votes(vector, k)
        return (
            max(votes, key=votes.__getitem__) if votes else ""
        )  # the first of the best: nearest-first order

    def save(self, path: Path) -> str:
        """Write the memory (``.npz``, no pickles) atomically; returns the file's sha256."""
        meta = {
            "format": FORMAT,
            "fingerprint": self.fingerprint,
            "adapter": self.adapter,
            "labels": list(self.labels),
        }
        return write_memory_file(path, self.vectors, meta)

    @classmethod
    def load(
        cls, path: Path, fingerprint: str | None = None, adapter: str | None = None, rebuild: str = ""
    ) -> LabelMemory:
        """Read a memory written by :meth:`save`; with ``fingerprint`` and ``adapter``, it must have been built
        for those statute vectors and that query adapter. ``rebuild`` is the command named in the error.

        Raises:
            LabelMemoryError: unreadable, another format, for other vectors or adapter, or malformed.
        """
        vectors, meta = read_memory(path, FORMAT, fingerprint, adapter, rebuild)
        labels = meta.get("labels")
        if not (
            isinstance(labels, list)
            and all(isinstance(x, str) and 0 < len(x) <= MAX_LABEL_CHARS for x in labels)
            and len(vectors) == len(labels)
        ):
            raise LabelMemoryError(f"{path}: 内容不合法 the vectors and labels do not match{_run(rebuild)}")
        return cls(vectors, tuple(labels), str(meta.get("fingerprint", "")), str(meta.get("adapter", "")))


def beside(settings, dense, filename: str) -> Path | None:
    """The memory file ``filename`` beside the statute vectors of ``dense`` (the search's dense index), or ``None``
    when there is no dense index, no query adapter (the memory lives in its space) or no such file."""
    if dense is None or getattr(dense, "adapter", None) is None:
        return None
    from .dense import statute_vectors_dir

    path = statute_vectors_dir(settings) / filename
    return path if path.exists() else None


def load_beside(
    enabled: object, settings, dense, filename: str, load: Callable[[Path], T], without: str
) -> T | None:
    """``load(path)`` of the memory file ``filename`` beside the statute vectors of ``dense`` (:func:`beside`), or
    ``None`` when the setting that turns it on is off (``enabled`` falsy), there is no such file, or it cannot be used:
    then ``without`` (what goes on without it) is logged with why, and the caller steps aside."""
    path = beside(settings, dense, filename) if enabled else None
    if path is None:
        return None
    try:
        return load(path)
    except LabelMemoryError as exc:
        log.warning("%s: %s", without, exc)
        return None


def write_memory_file(path: Path, vectors: np.ndarray, meta: dict) -> str:
    """Write a memory's ``vectors`` (float32) and ``meta`` (JSON) as an ``.npz`` (no pickles), atomically; its sha256."""
    return write_npz(
        path,
        vectors=np.asarray(vectors, dtype=np.float32),
        meta=np.array(json.dumps(meta, ensure_ascii=False, sort_keys=True)),
    )


def _run(rebuild: str) -> str:
    return f"; run {rebuild}" if rebuild else ""


def read_memory(
    path: Path, format: int, fingerprint: str | None, adapter: str | None, rebuild: str = ""
) -> tuple[np.ndarray, dict]:
    """The question vectors (read-only, finite, ``n × d``, n ≤ :data:`MAX_QUESTIONS`) and the decoded ``meta`` of a
    memory file of ``format``; with ``fingerprint`` and ``adapter``, built for those statute vectors and that query
    adapter. What else the meta holds is the caller's to check.

    Raises:
        LabelMemoryError: unreadable, another format, for other vectors or adapter, or malformed vectors.
    """
    run = _run(rebuild)
    try:
        arrays, meta = read_npz(path, ("vectors", "meta"))
        vectors = np.asarray(arrays["vectors"], dtype=np.float32)
    except (ValueError, TypeError) as exc:
        raise LabelMemoryError(f"{path}: 无法读取 cannot read the labelled questions: {exc}{run}") from None
    if not isinstance(meta, dict) or meta.get("format") != format:
        raise LabelMemoryError(f"{path}: 格式不符 not a format-{format} file of labelled questions{run}")
    if (fingerprint is not None and meta.get("fingerprint") != fingerprint) or (
        adapter is not None and meta.get("adapter") != adapter
    ):
        raise LabelMemoryError(
            f"{path}: 与法条向量或查询适配器不符 built for other statute vectors or another query adapter{run}"
        )
    if vectors.ndim != 2 or len(vectors) > MAX_QUESTIONS or not np.isfinite(vectors).all():
        raise LabelMemoryError(f"{path}: 内容不合法 the question vectors are malformed{run}")
    vectors.setflags(write=False)
    return vectors, meta


def require_adapter(dense) -> None:
    """A memory lives in the query adapter's space: :class:`LabelMemoryError` when ``dense`` has no adapter."""
    if dense.adapter is None:
        raise LabelMemoryError(
            "没有查询适配器 the labelled questions need the query adapter; run python -m lawluo build query-adapter"
        )


def build(questions: Sequence[str], labels: Sequence[str], dense) -> LabelMemory:
    """The memory of ``questions`` and their ``labels`` (a question without a label is left out), embedded by
    ``dense`` and mapped by its query adapter (the space the statute search embeds a question in).

    Raises:
        LabelMemoryError: ``dense`` has no query adapter, or no question has a label.
    """
    require_adapter(dense)
    keep = [i for i, label in enumerate(labels) if isinstance(label, str) and label.strip()]
    if not keep:
        raise LabelMemoryError("没有带标注的问题 no question carries a label")
    vectors = dense.adapter.apply(dense.embed_queries([questions[i] for i in keep]))
    return LabelMemory(
        np.ascontiguousarray(vectors, dtype=np.float32),
        tuple(labels[i].strip()[:MAX_LABEL_CHARS] for i in keep),
        dense.fingerprint,
        dense.adapter.digest(),
    )
