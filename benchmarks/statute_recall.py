"""Statute recall@1/5/10 on LawBench's scenario→statute (3-2) and consultation (3-8) dev sets.

    python benchmarks/statute_recall.py [--baseline]

A question counts as a hit at k when one of the top-k articles is a statute its reference answer
cites. The reference's citations are read with the project's citation checker, so "the statute the
reference names" is (law, article number) as written **or**, when the quoted content belongs to
another article (an older version's numbering, a repealed law's successor, a wrong number), the
article the content really is. Questions whose reference cites no statute the database knows are
reported separately and count as misses in the "all questions" line.

``--baseline`` also runs plain BM25 over the article texts alone (no names, expansions, synonyms or
priors), the reference point the issue quotes.
"""

from __future__ import annotations

import argparse
import time

from _common import DATA, read_jsonl

from lawluo.config import Settings
from lawluo.law import StatuteDB
from lawluo.law.checker import CitationChecker
from lawluo.retrieval.bm25 import BM25Index
from lawluo.retrieval.statutes import StatuteSearcher

KS = (1, 5, 10)


def gold(checker: CitationChecker, reference: str) -> set[tuple[str, int]]:
    out = set()
    for c in checker.check(reference).citations:
        if c.citation.key:
            out.add((c.citation.key, c.citation.article))
        if c.matched is not None:
            out.add((c.matched.law.key, c.matched.number))
    return out


def evaluate(name: str, rows: list[dict], rank, checker) -> None:
    hits = dict.fromkeys(KS, 0)
    answerable = 0
    for row in rows:
        g = gold(checker, row["reference"])
        if not g:
            continue
        answerable += 1
        ranked = rank(row["question"])
        for k in KS:
            if any(key in g for key in ranked[:k]):
                hits[k] += 1
    line = "  ".join(f"R@{k}={hits[k] / answerable:.3f}" for k in KS)
    line_all = "  ".join(f"R@{k}={hits[k] / len(rows):.3f}" for k in KS)
    print(f"{name:<22} answerable {answerable}/{len(rows)}: {line}   | all {len(rows)}: {line_all}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--baseline", action="store_true")
    args = parser.parse_args()
    db = StatuteDB(Settings.load().statutes_path)
    checker = CitationChecker(db)
    t = time.perf_counter()
    searcher = StatuteSearcher.from_settings(Settings.load(), db)
    print(f"loaded statute index in {time.perf_counter() - t:.2f}s ({len(db.articles)} articles)")

    def lawluo_rank(q: str) -> list[tuple[str, int]]:
        return [(h.article.law.key, h.article.number) for h in searcher.search(q, max(KS))]

    plain = None
    if args.baseline:
        plain = BM25Index.build([a.text for a in db.articles])

    for name in ("scenario_statute", "consult"):
        rows = read_jsonl(DATA / "lawbench" / f"{name}.dev.jsonl")
        evaluate(f"{name} lawluo", rows, lawluo_rank, checker)
        if plain is not None:

            def plain_rank(q: str) -> list[tuple[str, int]]:
                return [(db.articles[i].law.key, db.articles[i].number) for i, _ in plain.search(q, max(KS))]

            evaluate(f"{name} plain BM25", rows, plain_rank, checker)


if __name__ == "__main__":
    main()
