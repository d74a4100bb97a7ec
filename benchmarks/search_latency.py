"""Statute search latency over the whole database, and the time to load database + indexes.

    python benchmarks/search_latency.py [--lay]

Loading is timed in fresh subprocesses (cold imports included, index cache already built — the app's
start-up path); queries are the 500 questions of LawBench's scenario and consultation dev sets (``--lay``:
also the 224 everyday questions of the two frozen fresh sets, shorter).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

from _common import DATA, ROOT, percentile, read_jsonl

LOAD = """
import time; t = time.perf_counter()
from lawluo.config import Settings, load_settings
from lawluo.law import StatuteDB
from lawluo.retrieval.statutes import StatuteSearcher
from lawluo.retrieval.cases import CaseSearcher
s = load_settings(); db = StatuteDB(s.statutes_path); t_db = time.perf_counter() - t
StatuteSearcher.from_settings(s, db); CaseSearcher.from_settings(s)
print(f"{t_db:.3f} {time.perf_counter() - t:.3f}")
"""


def main() -> None:
    from lawluo.config import load_settings
    from lawluo.retrieval.statutes import StatuteSearcher

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lay", action="store_true", help="also time the fresh lay questions")
    args = parser.parse_args()
    StatuteSearcher.from_settings(load_settings())  # make sure the cache exists
    loads = []
    for _ in range(3):
        out = subprocess.run(
            [sys.executable, "-c", LOAD], cwd=ROOT, capture_output=True, text=True, check=True
        )
        loads.append(tuple(map(float, out.stdout.split())))
    print(
        "load (fresh process, imports included): statute DB "
        f"{statistics.median(x[0] for x in loads):.2f}s; DB + statute and case indexes "
        f"{statistics.median(x[1] for x in loads):.2f}s (median of 3: {[x[1] for x in loads]})"
    )
    searcher = StatuteSearcher.from_settings(load_settings())
    queries = [
        r["question"]
        for n in ("scenario_statute", "consult")
        for r in read_jsonl(DATA / "lawbench" / f"{n}.dev.jsonl")
    ]
    sets = {"LawBench dev": queries}
    if args.lay:
        sets["fresh lay"] = [
            json.loads(line)["question"]
            for name in ("fresh1", "fresh2")
            for line in (ROOT / "benchmarks" / "data" / f"lay_questions.{name}.jsonl").open(encoding="utf-8")
            if line.strip()
        ]
    searcher.search(queries[0], 5)
    for name, texts in sets.items():
        times = []
        for q in texts:
            t = time.perf_counter()
            searcher.search(q, 5)
            times.append((time.perf_counter() - t) * 1000)
        print(
            f"statute search over {len(searcher.db.articles)} articles, {len(texts)} {name} queries, k=5 "
            f"(dense {'on' if searcher.dense is not None else 'off'}, fused reranker "
            f"{'on' if searcher.fused_reranker is not None else 'off'}): p50 {percentile(times, 50):.1f} ms, "
            f"p90 {percentile(times, 90):.1f} ms, max {max(times):.1f} ms"
        )


if __name__ == "__main__":
    main()
