"""Similar past questions voting for articles (``lawluo/retrieval/votes.py``) against the app's statute search.

    python benchmarks/retrieval_votes.py [--folds 5]

Questions: the ``eval: true`` rows of ``assets/supervision.jsonl.gz`` (LawBench dev scenario→statute and
consultations; gold = their canonical articles); the vote index holds only the ``eval: false`` rows, whose
near duplicates of an evaluation question were already dropped when the asset was built. Three systems:

- (a) the app's ``StatuteSearcher`` without the learned reranker (top 100; the reranker is trained on these
  questions, see ``benchmarks/retrieval_rerank.py``);
- (b) the votes alone (the voted articles, best first);
- (c) the two fused: ``(1 - w) * score / top + w * vote`` (:func:`lawluo.retrieval.votes.fuse`).

``k_neighbours`` (and ``w`` for the fusion) are chosen by grouped cross-validation over the evaluation
rows: on each of the 5 folds (``grouped_folds``: a group never split) the setting with the best R@5 on the
other 4 folds (then MRR@10, then the smaller k and w) is applied to the held-out fold; the tables pool the
held-out folds. The setting that would be best on all questions is printed for information only.
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import time

import numpy as np
from _common import ROOT

from lawluo.config import load_settings
from lawluo.law import StatuteDB
from lawluo.retrieval.evaluation import (
    Evaluation,
    GoldQuery,
    bootstrap,
    first_rank,
    grouped_folds,
    markdown_table,
    metric_names,
    query_metrics,
)
from lawluo.retrieval.rerank_training import eval_queries
from lawluo.retrieval.statutes import StatuteSearcher
from lawluo.retrieval.supervision import without_lay
from lawluo.retrieval.votes import QuestionVotes, fuse, ranked_votes

DEPTH = 100
K_GRID = (5, 10, 20, 50, 100)
W_GRID = (0.0, 0.02, 0.05, *(round(0.1 * i, 1) for i in range(1, 11)))
NAMES = metric_names()
R5 = NAMES.index("R@5")
MRR = NAMES.index("MRR@10")


def load_rows() -> list[dict]:
    with gzip.open(ROOT / "assets" / "supervision.jsonl.gz", "rt", encoding="utf-8") as f:
        # the LawBench evaluation rows these scripts measure, without the lay sets that joined in session 35
        return without_lay(json.loads(line) for line in f if line.strip())


def print_paired(diff: np.ndarray, sources: list[str]) -> None:
    """One line per source and for all questions: the mean of the paired differences ``diff`` (one per
    question) with its 95% bootstrap CI, and how many questions gained and lost."""
    sources = np.asarray(sources)
    for name in [*sorted(set(sources)), "all"]:
        mask = np.ones(len(diff), bool) if name == "all" else sources == name
        m, lo, hi = bootstrap(diff[mask, None])[:, 0]
        gained, lost = int((diff[mask] > 0).sum()), int((diff[mask] < 0).sum())
        print(f"- {name} ({mask.sum()}): {m:+.3f} [{lo:+.3f}, {hi:+.3f}]; {gained} gained, {lost} lost")


def scored(queries: list[GoldQuery], rankings: list[list]) -> np.ndarray:
    return np.array(
        [[query_metrics(r[:DEPTH], q.gold)[n] for n in NAMES] for q, r in zip(queries, rankings, strict=True)]
    )


def as_evaluation(queries: list[GoldQuery], rankings: list[list], values: np.ndarray) -> Evaluation:
    ev = Evaluation((1, 5, 10, 100))
    ev.ids = [q.id for q in queries]
    ev.sources = [q.source for q in queries]
    ev.ranks = [first_rank(r, q.gold) for q, r in zip(queries, rankings, strict=True)]
    ev.values = values
    return ev


def cross_validate(queries, grid: dict, folds) -> tuple[np.ndarray, list]:
    """Pooled held-out metrics (queries × metrics) and the setting chosen on each fold."""
    out = np.zeros(next(iter(grid.values())).shape)
    chosen = []
    for train, test in folds:
        best = max(
            sorted(grid),  # smaller settings first: max keeps the first of equals
            key=lambda s: (round(grid[s][train, R5].mean(), 9), round(grid[s][train, MRR].mean(), 9)),
        )
        chosen.append(best)
        out[test] = grid[best][test]
    return out, chosen


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--folds", type=int, default=5)
    args = parser.parse_args()
    settings = load_settings()
    db = StatuteDB(settings.statutes_path)
    searcher = StatuteSearcher.from_settings(settings, db)
    searcher.reranker = None  # BM25 as measured here; the reranker is trained on these very questions
    searcher.fused_reranker = None
    rows = load_rows()
    queries = eval_queries(rows)
    t = time.perf_counter()
    votes = QuestionVotes(rows)
    build_s = time.perf_counter() - t
    eval_ids = {q.id for q in queries}
    print(
        f"vote index: {len(votes)} training questions in {build_s:.2f}s "
        f"({votes.skipped} rows not indexed, of which {len(eval_ids)} eval rows); {len(queries)} eval questions"
    )

    app_hits, app_ms, vote_ms = [], [], []
    per_k: dict[int, list[dict]] = {k: [] for k in K_GRID}
    for q in queries:
        t = time.perf_counter()
        hits = searcher.search(q.question, DEPTH)
        app_ms.append(1000 * (time.perf_counter() - t))
        app_hits.append([((h.article.law.key, h.article.number), h.score) for h in hits])
        for k in K_GRID:
            t = time.perf_counter()
            per_k[k].append(votes.votes(q.question, k))
            if k == 20:
                vote_ms.append(1000 * (time.perf_counter() - t))
    fuse_ms = []
    for h, v in zip(app_hits, per_k[20], strict=True):
        t = time.perf_counter()
        fuse(h, v, 0.5)
        fuse_ms.append(1000 * (time.perf_counter() - t))
    print(
        f"query p50: app search {statistics.median(app_ms):.1f} ms; votes (k=20) {statistics.median(vote_ms):.2f} ms;"
        f" fusion {statistics.median(fuse_ms):.2f} ms"
    )

    app_rank = [[key for key, _ in h] for h in app_hits]
    app_values = scored(queries, app_rank)
    vote_grid = {(k,): scored(queries, [ranked_votes(v) for v in per_k[k]]) for k in K_GRID}
    fused_rank = {
        (k, w): [fuse(h, v, w) for h, v in zip(app_hits, per_k[k], strict=True)]
        for k in K_GRID
        for w in W_GRID
    }
    fused_grid = {s: scored(queries, r) for s, r in fused_rank.items()}

    folds = grouped_folds(queries, n_splits=args.folds)
    vote_cv, vote_chosen = cross_validate(queries, vote_grid, folds)
    fused_cv, fused_chosen = cross_validate(queries, fused_grid, folds)
    print(
        f"\nsettings chosen on the training folds: votes k = {[s[0] for s in vote_chosen]}; "
        f"fused (k, w) = {fused_chosen}"
    )

    for title, values in (
        ("(a) app StatuteSearcher without the learned reranker", app_values),
        (f"(b) votes alone, k chosen per fold ({args.folds} grouped folds, held-out pooled)", vote_cv),
        (f"(c) fused, (k, w) chosen per fold ({args.folds} grouped folds, held-out pooled)", fused_cv),
    ):
        print(f"\n### {title}\n")
        print(markdown_table(as_evaluation(queries, app_rank, values).summary(), NAMES))

    print("\n### paired difference, fused (cross-validated) − app, R@5 [95% bootstrap CI over questions]\n")
    print_paired(fused_cv[:, R5] - app_values[:, R5], [q.source for q in queries])

    best = max(sorted(fused_grid), key=lambda s: (round(fused_grid[s][:, R5].mean(), 9),))
    print(
        f"\n(for information, not a result: the setting best on all questions is k={best[0]}, w={best[1]}, "
        f"R@5 {fused_grid[best][:, R5].mean():.3f} in-sample)"
    )


if __name__ == "__main__":
    main()
