"""The learned reranker (``lawluo/retrieval/rerank.py``) against the app's statute search, grouped CV.

    python benchmarks/retrieval_rerank.py [--folds 5] [--drop vote,names_law] [--ablations] [--save-rankings F]

Questions: the 465 ``eval: true`` rows of ``assets/supervision.jsonl.gz`` (LawBench dev scenario→statute
and consultations; gold = their canonical articles). On each of the grouped folds
(:func:`lawluo.retrieval.evaluation.grouped_folds`, a group never split) a LambdaMART model with the fixed
settings of ``rerank.PARAMS`` is trained on the other folds' questions and applied, through the app's own
``StatuteSearcher.search`` (lookups first), to the held-out fold; the tables pool the held-out folds.
Nothing is tuned on the held-out folds. ``--drop`` zeroes features (an ablation); ``--ablations`` runs
one ablation per feature and prints the pooled R@5 of each. ``--save-rankings F`` writes the held-out
reranked top 100 of every question (article positions, JSON ``{"ids", "rankings"}``), which
``benchmarks/retrieval_dense.py --rankings F`` reranks further with e5 under the same folds.

Also printed: the paired R@5 difference reranked − app with a bootstrap CI, the questions gained and lost,
p50 query latency of ``search(q, 5)`` with and without the reranker, and the training time.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import numpy as np
from _common import ROOT
from retrieval_votes import NAMES, R5, as_evaluation, load_rows, scored

from lawluo.config import load_settings
from lawluo.law import StatuteDB
from lawluo.retrieval.evaluation import bootstrap, grouped_folds, markdown_table
from lawluo.retrieval.rerank import FEATURES, train
from lawluo.retrieval.rerank_training import OutOfFold, eval_queries, query_set
from lawluo.retrieval.statutes import StatuteSearcher

DEPTH = 100


def keys(hits) -> list[tuple[str, int]]:
    return [(h.article.law.key, h.article.number) for h in hits]


def cross_validated(
    searcher, queries, data, folds, drop: set[str], extra=None, use_eval: bool = True, positions=None
) -> tuple[list, list[float], float]:
    """Held-out rankings (app path, reranked), latencies and the mean training seconds. ``extra``: a
    QuerySet of training questions added to every fold's training data; ``use_eval`` False trains on
    ``extra`` alone; ``positions``, a list as long as ``queries``, receives the rankings' article positions."""
    cols = [FEATURES.index(f) for f in drop]

    def masked(x: np.ndarray) -> np.ndarray:
        x = x.copy()
        x[:, cols] = 0.0
        return x

    rankings: list = [None] * len(queries)
    latency: list[float] = []
    train_s = []
    for tr, te in folds:
        t = time.perf_counter()
        xs = [masked(data.features[i]) for i in tr] if use_eval else []
        ys = [data.labels[i] for i in tr] if use_eval else []
        if extra is not None:
            xs += [masked(x) for x in extra.features]
            ys += list(extra.labels)
        model = train(xs, ys)
        train_s.append(time.perf_counter() - t)
        # a feature zeroed in training is never split on, so the held-out rows need no masking
        searcher.reranker = model
        for i in te:
            hits = searcher.search(queries[i].question, DEPTH)
            rankings[i] = keys(hits)
            if positions is not None:
                positions[i] = [h.article.index for h in hits]
            t = time.perf_counter()
            searcher.search(queries[i].question, 5)
            latency.append(1000 * (time.perf_counter() - t))
    searcher.reranker = None
    return rankings, latency, statistics.mean(train_s)


def parse_args() -> tuple[argparse.Namespace, set[str]]:
    """The command line, and the set of features to zero (checked against :data:`FEATURES`)."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--drop", default="", help="comma-separated features to zero (ablation)")
    parser.add_argument("--ablations", action="store_true", help="one run per dropped feature")
    parser.add_argument(
        "--save-rankings", help="write the held-out reranked rankings (article positions) here"
    )
    parser.add_argument(
        "--train",
        choices=("eval", "training", "both"),
        default="eval",
        help="eval: the other folds' eval rows; training: the training rows of supervision.jsonl.gz with"
        " out-of-fold features (rerank_training); both: the two together",
    )
    args = parser.parse_args()
    drop = {f for f in args.drop.split(",") if f}
    unknown = drop - set(FEATURES)
    if unknown:
        parser.error(f"unknown features {sorted(unknown)}; choose from {', '.join(FEATURES)}")
    return args, drop


def app_rankings(searcher, queries) -> tuple[list, list[float]]:
    """The app searcher's rankings of ``queries`` (top :data:`DEPTH`) and its ms per ``search(q, 5)``."""
    app_ms, app_rank = [], []
    for q in queries:
        app_rank.append(keys(searcher.search(q.question, DEPTH)))
        t = time.perf_counter()
        searcher.search(q.question, 5)
        app_ms.append(1000 * (time.perf_counter() - t))
    return app_rank, app_ms


def print_ablations(searcher, queries, data, folds, extra, use_eval: bool, app_values) -> None:
    """Pooled held-out R@5 with every feature, then without each feature in turn (per source)."""
    base, _, _ = cross_validated(searcher, queries, data, folds, set(), extra, use_eval)
    print(f"\nablations (pooled held-out R@5; app {app_values[:, R5].mean():.3f})")
    print(f"- all features: {scored(queries, base)[:, R5].mean():.3f}")
    for f in FEATURES:
        r, _, _ = cross_validated(searcher, queries, data, folds, {f}, extra, use_eval)
        v = scored(queries, r)
        src = np.array([q.source for q in queries])
        per = ", ".join(f"{s} {v[src == s, R5].mean():.3f}" for s in sorted(set(src)))
        print(f"- without {f}: {v[:, R5].mean():.3f} ({per})")


def print_paired_differences(queries, rer_values, app_values) -> None:
    """Reranked minus app, per metric and source, with 95% bootstrap intervals over questions."""
    print("\n### paired difference, reranked (cross-validated) − app [95% bootstrap CI over questions]\n")
    sources = np.array([q.source for q in queries])
    for metric in ("R@1", "R@5", "MRR@10"):
        j = NAMES.index(metric)
        diff = rer_values[:, j] - app_values[:, j]
        for name in [*sorted(set(sources)), "all"]:
            mask = np.ones(len(queries), bool) if name == "all" else sources == name
            m, lo, hi = bootstrap(diff[mask, None])[:, 0]
            extra = ""
            if metric != "MRR@10":
                extra = f"; {int((diff[mask] > 0).sum())} gained, {int((diff[mask] < 0).sum())} lost"
            print(f"- {metric} {name} ({mask.sum()}): {m:+.3f} [{lo:+.3f}, {hi:+.3f}]{extra}")


def main() -> None:
    args, drop = parse_args()
    settings = load_settings()
    db = StatuteDB(settings.statutes_path)
    searcher = StatuteSearcher.from_settings(settings, db)
    searcher.reranker = None  # the app as it was before the reranker, whatever the assets hold
    searcher.fused_reranker = None
    rows = load_rows()
    t = time.perf_counter()
    searcher.attach_features(rows)
    attach_s = time.perf_counter() - t
    queries = eval_queries(rows)
    t = time.perf_counter()
    data = query_set(searcher, queries)
    feat_s = time.perf_counter() - t
    print(
        f"{len(queries)} eval questions; feature tables {attach_s:.2f}s; features of all candidates {feat_s:.1f}s;"
        f" gold in the top {DEPTH} for {sum(y.max() > 0 for y in data.labels if len(y))} questions"
    )

    extra = None
    if args.train != "eval":
        t = time.perf_counter()
        extra, tq = OutOfFold.build(db, settings.assets_dir).query_set(rows)
        print(
            f"training rows: {len(tq)} questions, out-of-fold features in {time.perf_counter() - t:.1f}s;"
            f" gold in the top {DEPTH} for {sum(len(y) > 0 and y.max() > 0 for y in extra.labels)}"
        )
    use_eval = args.train != "training"

    app_rank, app_ms = app_rankings(searcher, queries)
    app_values = scored(queries, app_rank)
    folds = grouped_folds(queries, n_splits=args.folds)

    if args.ablations:
        print_ablations(searcher, queries, data, folds, extra, use_eval, app_values)
        return

    positions: list = [None] * len(queries)
    rer_rank, rer_ms, train_s = cross_validated(
        searcher, queries, data, folds, drop, extra, use_eval, positions
    )
    if args.save_rankings:
        Path(args.save_rankings).write_text(
            json.dumps({"ids": [q.id for q in queries], "rankings": positions}), encoding="utf-8"
        )
    rer_values = scored(queries, rer_rank)
    print(
        f"query p50 search(q, 5): app {statistics.median(app_ms):.1f} ms; reranked {statistics.median(rer_ms):.1f} ms;"
        f" training one fold {train_s:.2f}s"
    )
    dropped = f", features zeroed: {sorted(drop)}" if drop else ""
    for title, ranks, values in (
        ("(a) app StatuteSearcher as it is", app_rank, app_values),
        (
            f"(b) reranked (trained on: {args.train}), {args.folds} grouped folds, held-out pooled{dropped}",
            rer_rank,
            rer_values,
        ),
    ):
        print(f"\n### {title}\n")
        print(markdown_table(as_evaluation(queries, ranks, values).summary(), NAMES))

    print_paired_differences(queries, rer_values, app_values)
    print(f"\n(data: {ROOT / 'assets' / 'supervision.jsonl.gz'})")


if __name__ == "__main__":
    main()
