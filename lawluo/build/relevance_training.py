"""Fitting the statute hits' calibrated relevance (:mod:`lawluo.retrieval.relevance`): ``python -m lawluo build relevance``.

The app's searcher (as the settings configure it, without a relevance model) runs every evaluation row of
``assets/supervision.jsonl.gz`` (the LawBench dev questions, which no other learned part of the default
search is built from) for its first :data:`DEPTH` hits; a hit is labelled relevant when its (law, article)
is one the question's reference cites. A sparse model is fitted on the search without the encoder and,
when the settings' encoder loads, a dense one on the search with it. Above the searcher: it never imports
this module.
"""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

import numpy as np

from ..files import asset_summary, write_atomically
from ..law.database import StatuteDB
from ..retrieval.relevance import DENSE_FEATURES, FILENAME, SPARSE_FEATURES, Relevance, fit
from ..retrieval.rerank_training import eval_queries
from ..retrieval.statutes import StatuteSearcher, _read_supervision

#: Hits per question the model is fitted on (what a page shows, with margin).
DEPTH = 10


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


def build_and_write(assets_dir: Path, settings) -> dict:
    t = time.perf_counter()
    searcher = StatuteSearcher.from_settings(settings, StatuteDB(settings.statutes_path))
    searcher.relevance = None
    queries = eval_queries(_read_supervision(Path(assets_dir) / "supervision.jsonl.gz"))
    dense_index, searcher.dense = searcher.dense, None
    rows, labels, _ = labelled_rows(searcher, queries)
    sparse = fit(rows, labels, SPARSE_FEATURES)
    dense = None
    if dense_index is not None:
        searcher.dense = dense_index
        rows, labels, ran = labelled_rows(searcher, queries)
        dense = fit(rows, labels, DENSE_FEATURES) if ran else None
    model = Relevance(
        sparse, dense, f"top {DEPTH} hits of the {len(queries)} eval rows of supervision.jsonl.gz"
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
