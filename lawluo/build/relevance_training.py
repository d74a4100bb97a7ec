"""Fitting the statute hits' calibrated relevance (:mod:`lawluo.retrieval.relevance`): ``python -m lawluo build relevance``.

The app's searcher (as the settings configure it, without a relevance model) runs every evaluation row of
``assets/supervision.jsonl.gz`` (the LawBench dev questions, the lay sets) for its first :data:`DEPTH` hits; a hit is
labelled relevant when its (law, article) is one the question's reference cites. A sparse model is fitted on
the search without the encoder and, when the settings' encoder loads, a dense one on the search with it.

The shipped rerankers are trained on these same rows, so their hits here would be in-sample — too sure of
themselves, and a relevance fitted on them promises more than lay questions deliver (session 29: predicted
0.192 against 0.154 observed in the first 3 of the first fresh set). So each row's hits come from rerankers
refit without its fold (:data:`FOLDS` grouped folds, cross-fitting): out-of-fold hits, as on a new question.
Above the searcher: it never imports this module.
"""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

import numpy as np

from ..files import asset_summary, write_atomically
from ..law.database import StatuteDB
from ..retrieval.adapter_training import training_view
from ..retrieval.evaluation import grouped_folds, query_group
from ..retrieval.relevance import DENSE_FEATURES, FILENAME, SPARSE_FEATURES, Relevance, fit
from ..retrieval.rerank import FEATURES, FUSED_FEATURES, RerankerError, train
from ..retrieval.rerank_training import eval_queries, query_set
from ..retrieval.statutes import StatuteSearcher, _read_supervision

#: Hits per question the model is fitted on (what a page shows, with margin).
DEPTH = 10
#: Grouped folds of the cross-fitted rerankers (:func:`out_of_fold_rows`).
FOLDS = 5


def labelled_rows(searcher: StatuteSearcher, queries) -> tuple[np.ndarray, np.ndarray, bool]:
    """Features and labels of the first :data:`DEPTH` hits of each query, and whether the dense stage ran."""
    rows: list[list[float]] = []
    labels: list[int] = []
    dense = False
    for q in queries:
        hits, features, dense = searcher.ranked(q.question, DEPTH)
        rows += features
        labels += [int((h.article.law.key, h.article.number) in q.gold) for h in hits]
    return np.array(rows, dtype=np.float64), np.array(labels, dtype=int), dense


def out_of_fold_rows(searcher: StatuteSearcher, queries) -> tuple[np.ndarray, np.ndarray, bool]:
    """:func:`labelled_rows` of every query, each fold's searched with the reranker of the path the search
    takes (the fused one when the dense stage runs and it exists, else the sparse one) refit on the other
    folds; the searcher's own rerankers are put back after."""
    fused = searcher.dense is not None and searcher.fused_reranker is not None
    name = "fused_reranker" if fused else "reranker"
    shipped = getattr(searcher, name)
    if shipped is None or searcher.features is None:  # nothing learned from these rows: no fold needed
        return labelled_rows(searcher, queries)
    groups = len({query_group(q) for q in queries})
    if groups < 2:  # a set this small (tests) cannot be split: its hits stay in-sample
        return labelled_rows(searcher, queries)
    data = query_set(searcher, queries, fused)
    parts, ran = [], False
    try:
        for train_idx, test_idx in grouped_folds(queries, n_splits=min(FOLDS, groups)):
            try:
                model = train(
                    [data.features[i] for i in train_idx],
                    [data.labels[i] for i in train_idx],
                    names=FUSED_FEATURES if fused else FEATURES,
                )
            except RerankerError:  # no training query of the fold has a gold candidate (a tiny set)
                model = shipped
            setattr(searcher, name, model)
            rows, labels, ran = labelled_rows(searcher, [queries[i] for i in test_idx])
            parts.append((rows, labels))
    finally:
        setattr(searcher, name, shipped)
    return np.vstack([r for r, _ in parts]), np.concatenate([y for _, y in parts]), ran


def build_and_write(assets_dir: Path, settings) -> dict:
    t = time.perf_counter()
    searcher = StatuteSearcher.from_settings(settings, StatuteDB(settings.statutes_path))
    searcher.relevance = None
    searcher.lay_memory = (
        None  # its questions are among the rows: each would find itself (lawluo.retrieval.lay_memory)
    )
    supervision = _read_supervision(Path(assets_dir) / "supervision.jsonl.gz")
    queries = eval_queries(supervision)
    # with a query adapter, each question's vector from an adapter fitted without its fold (as the reranker's)
    dense_index = training_view(searcher.dense, searcher.db, supervision, queries, settings.cache_dir)
    searcher.dense = None
    rows, labels, _ = out_of_fold_rows(searcher, queries)
    sparse = fit(rows, labels, SPARSE_FEATURES)
    dense = None
    if dense_index is not None:
        searcher.dense = dense_index
        rows, labels, ran = out_of_fold_rows(searcher, queries)
        dense = fit(rows, labels, DENSE_FEATURES) if ran else None
    model = Relevance(
        sparse,
        dense,
        f"top {DEPTH} hits of the {len(queries)} eval rows of supervision.jsonl.gz, rerankers out of fold "
        f"({FOLDS} grouped folds)",
    )
    text = model.to_json()
    path = Path(assets_dir) / FILENAME
    write_atomically(path, text)
    data = text.encode("utf-8")
    return asset_summary(
        path,
        data,
        None,
        queries=len(queries),
        positives=int(labels.sum()),
        dense=dense is not None,
        sha256=hashlib.sha256(data).hexdigest(),
        seconds=round(time.perf_counter() - t, 1),
    )
