"""Statute retrieval on LawBench's scenario→statute (3-2) and consultation (3-8) dev sets.

    python benchmarks/statute_recall.py [--baseline] [--out docs/results/statute_recall.md]

Metrics come from :mod:`lawluo.retrieval.evaluation` (R@1/5/10/100, MRR@10, nDCG@10, bootstrap 95%
intervals over questions). A question's gold articles are read from its reference answer with the
project's citation checker, by two rules:

- **strict** (the headline): the (law, article number) the reference names, as written;
- **lenient**: those, **or**, when the quoted content belongs to another article (an older version's
  numbering, a repealed law's successor, a wrong number), the article the content really is — the
  rule this benchmark used alone before.

The app's searcher is run without and, when ``assets/statute_reranker.json`` exists, with the learned
reranker (``lawluo/retrieval/rerank.py``). That reranker is trained on these very questions, so its lines
here are in-sample; ``benchmarks/retrieval_rerank.py`` gives its grouped cross-validated figures.

Questions whose reference cites no statute the database knows are left out of the table and counted;
the "all questions" line counts them as misses. Nothing is tuned here, so the grouped 5-fold split
(questions with the same text in one fold) only shows how much R@5 varies between test folds; later
steps that tune use the same folds.

``--baseline`` also runs plain BM25 over the article texts alone (no names, expansions, synonyms or
priors), the reference point the issue quotes.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
from _common import DATA, command_line, read_jsonl

from lawluo.config import load_settings
from lawluo.law import StatuteDB
from lawluo.law.checker import CitationChecker
from lawluo.retrieval.bm25 import BM25Index
from lawluo.retrieval.evaluation import GoldQuery, evaluate, grouped_folds, markdown_table
from lawluo.retrieval.statutes import StatuteSearcher

DEPTH = 100
SETS = ("scenario_statute", "consult")


def gold(checker: CitationChecker, reference: str, lenient: bool) -> frozenset[tuple[str, int]]:
    out = set()
    for c in checker.check(reference).citations:
        if c.citation.key:
            out.add((c.citation.key, c.citation.article))
        if lenient and c.matched is not None:
            out.add((c.matched.law.key, c.matched.number))
    return frozenset(out)


def queries(checker: CitationChecker, lenient: bool) -> list[GoldQuery]:
    out = []
    for name in SETS:
        for i, row in enumerate(read_jsonl(DATA / "lawbench" / f"{name}.dev.jsonl")):
            g = gold(checker, row["reference"], lenient)
            out.append(GoldQuery(f"{name}:{i}", row["question"], g, name, group=row["question"].strip()))
    return out


def report(title: str, qs: list[GoldQuery], rank, lines: list[str]) -> None:
    result = evaluate(qs, rank)
    summary = result.summary()
    lines += [f"### {title}", "", markdown_table(summary, result.names), ""]
    totals = {name: sum(q.source == name for q in qs) for name in SETS}
    all_line = "; ".join(
        f"{name} {block['queries']}/{totals[name]} answerable, over all {totals[name]}: "
        + " / ".join(f"{block[f'R@{k}']['mean'] * block['queries'] / totals[name]:.3f}" for k in (1, 5, 10))
        for name, block in summary["by_source"].items()
    )
    lines += [f"R@1 / R@5 / R@10 counting unanswerable questions as misses — {all_line}", ""]
    folds = grouped_folds(qs)
    order = {q.id: j for j, q in enumerate(qs)}
    scored = np.array([order[i] for i in result.ids])
    r5 = result.values[:, result.names.index("R@5")]
    for name in SETS:
        per_fold = []
        for _, test in folds:
            mask = np.isin(scored, test) & (np.array(result.sources) == name)
            per_fold.append(r5[mask].mean())
        lines += [
            f"{name}: R@5 on the 5 grouped test folds "
            + ", ".join(f"{v:.3f}" for v in per_fold)
            + f" (mean {np.mean(per_fold):.3f}, sd {np.std(per_fold, ddof=1):.3f})",
        ]
    lines.append("")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--baseline", action="store_true")
    parser.add_argument("--out", help="also write the report (Markdown, with this command) here")
    args = parser.parse_args()
    settings = load_settings()
    db = StatuteDB(settings.statutes_path)
    checker = CitationChecker(db)
    t = time.perf_counter()
    searcher = StatuteSearcher.from_settings(settings, db)
    print(
        f"loaded statute index in {time.perf_counter() - t:.2f}s ({len(db.articles)} articles)",
        file=sys.stderr,
    )

    reranker, fused_reranker = searcher.reranker, searcher.fused_reranker

    def lawluo_rank(q: str, rerank: bool = False) -> list[tuple[str, int]]:
        searcher.reranker = reranker if rerank else None
        searcher.fused_reranker = fused_reranker if rerank else None
        return [(h.article.law.key, h.article.number) for h in searcher.search(q, DEPTH)]

    systems = [("LawLuo (BM25 ranking, no reranker)", lawluo_rank)]
    if reranker is not None:
        systems.append(
            (
                "LawLuo + the shipped reranker — IN-SAMPLE: it was trained on these questions; its"
                " cross-validated figures are in docs/results/retrieval_rerank.md",
                lambda q: lawluo_rank(q, rerank=True),
            )
        )
    if args.baseline:
        plain = BM25Index.build([a.text for a in db.articles])

        def plain_rank(q: str) -> list[tuple[str, int]]:
            return [(db.articles[i].law.key, db.articles[i].number) for i, _ in plain.search(q, DEPTH)]

        systems.append(("plain BM25", plain_rank))

    command = command_line()
    lines = [
        "# Statute retrieval on the LawBench dev sets (scenario→statute 3-2, consultations 3-8)",
        "",
        f"Made by `{command}` (no model; 95% percentile bootstrap intervals over questions, 1,000 resamples,"
        " seed 0). R@k: a gold article among the first k.",
        "",
    ]
    for rule, lenient in (
        ("strict rule (headline): the article the reference names", False),
        ("lenient rule: or the article whose content the reference quotes", True),
    ):
        qs = queries(checker, lenient)
        for system, rank in systems:
            report(f"{system}, {rule}", qs, rank, lines)
    text = "\n".join(lines)
    print(text)
    if args.out:
        from lawluo.files import write_atomically

        write_atomically(args.out, text)


if __name__ == "__main__":
    main()
