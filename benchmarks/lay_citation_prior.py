"""An article-level prior from the lay training rows' citations (issue 39, session 37): a trial, not shipped.

    python benchmarks/lay_citation_prior.py          # ~3 min

The shipped search's first 30 hits for each question are reordered by ``relevance × (1 + w·log1p(c))``, where
``c`` is how many questions of the lay sets learned from (:data:`lawluo.retrieval.supervision.LAY_SETS`) cite the
article, for a few weights ``w`` (0: the hits ordered by relevance alone). R@10 on the development sets
(``retrieval_fresh.py --set dev``: train5–8, never learned from) and on fresh5–7 pooled (read before, so
development data too).
"""

from __future__ import annotations

import math
from collections import Counter

from _common import read_jsonl
from retrieval_fresh import DEV, fresh_set, gold_queries

from lawluo.config import load_settings
from lawluo.law import StatuteDB
from lawluo.retrieval.statutes import StatuteSearcher
from lawluo.retrieval.supervision import LAY_DIR, LAY_SETS

WEIGHTS = (0.0, 0.02, 0.05, 0.1, 0.2)
POOL = 30


def main() -> None:
    settings = load_settings(environ={})
    db = StatuteDB(settings.statutes_path)
    app = StatuteSearcher.from_settings(settings, db)
    cited: Counter[tuple[str, int]] = Counter()
    for name in LAY_SETS:
        for row in read_jsonl(LAY_DIR / name):
            for g in row["gold"]:
                if (key := db.resolve(g["law"]).key) is not None:
                    cited[(key, g["article"])] += 1
    sets = {
        "dev (train5–8)": gold_queries(fresh_set(DEV), db),
        "fresh5–7": [q for s in ("fresh5", "fresh6", "fresh7") for q in gold_queries(fresh_set(s), db)],
    }
    hits = {
        name: [
            [
                ((h.article.law.key, h.article.number), h.relevance or 0.0)
                for h in app.search(q.question, POOL)
            ]
            for q in queries
        ]
        for name, queries in sets.items()
    }
    print(
        f"{len(cited)} articles cited by the lay rows learned from; R@10 after reordering the first {POOL}:"
    )
    print("| w | " + " | ".join(f"{name} ({len(q)})" for name, q in sets.items()) + " |")
    print("|---" * (len(sets) + 1) + "|")
    for w in WEIGHTS:
        cells = []
        for name, queries in sets.items():
            found = 0
            for q, ranked in zip(queries, hits[name], strict=True):
                order = sorted(ranked, key=lambda h: -h[1] * (1 + w * math.log1p(cited[h[0]])))
                found += bool({key for key, _ in order[:10]} & q.gold)
            cells.append(f"{found / len(queries):.3f}")
        print(f"| {w} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
