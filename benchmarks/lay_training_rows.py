"""Fresh lay questions as training rows of the fused statute reranker (issue 39, item 2: supervision that
does not skew), measured leave-one-set-out on the fresh lay sets 1–4 as development data.

    python benchmarks/lay_training_rows.py [--sets fresh1 fresh2 fresh3 fresh4] [--out FILE]

The shipped fused reranker (:mod:`lawluo.retrieval.rerank`) learns from the 465 LawBench evaluation rows
alone: scenario and consultation questions, not the everyday questions the app gets. The fresh lay sets are
everyday questions with articles labelled by one rule (``benchmarks/data/README.md``), spread evenly over the
16 domains — clean pairs without the hub skew of the consultations. Sets 1–4 have all been scored and read,
so they are development data; set 5 is kept unseen for the decision.

For each of ``--sets``, the reranker is retrained on the LawBench rows plus the *other* sets' questions, and
scored on the held-out set (so a set's figure never comes from a model that saw its questions); beside it the
LawBench rows alone (the shipped recipe, retrained the same way), the fresh rows alone, and no reranker. The
searcher is the one ``build reranker`` trains with: BM25 + priors + votes from every training row, e5 with the
query adapter fitted on every supervision row (no fresh question is in the supervision, so their features are
not in-sample), each LawBench row searched with the vector of an adapter fitted without its fold. Nothing is
written to ``assets/``. About 10 minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
from _common import command_line, emit_report
from reranker_training_data import app_and_bench, is_family, joined, lawbench_set
from retrieval_fresh import fresh_set, gold_queries

from lawluo.config import load_settings
from lawluo.law import StatuteDB
from lawluo.retrieval.evaluation import evaluate
from lawluo.retrieval.holdout import LeaveSourceOut
from lawluo.retrieval.holdout_split import read_rows
from lawluo.retrieval.rerank import FUSED_FEATURES, train
from lawluo.retrieval.rerank_training import query_set
from lawluo.retrieval.statutes import StatuteSearcher
from lawluo.retrieval.supervision import without_lay

SETS = ("fresh1", "fresh2", "fresh3", "fresh4")
CUTS = (1, 5, 10, 100)


def scores(searcher: StatuteSearcher, model, queries) -> tuple[np.ndarray, int]:
    """Per question R@1/5/10/100 of the searcher with ``model`` as its fused reranker, and the family
    intrusions (a 民法典 1040–1163 article in the first 3 of a question whose gold has none)."""
    searcher.fused_reranker = model
    ranked = {}

    def rank(q: str) -> list:
        ranked[q] = [(h.article.law.key, h.article.number) for h in searcher.search(q, 100)]
        return ranked[q]

    result = evaluate(queries, rank, CUTS)
    intrusions = sum(
        any(is_family(k) for k in ranked[q.question][:3])
        for q in queries
        if q.gold and not any(map(is_family, q.gold))
    )
    return result.values, intrusions


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sets", nargs="+", default=list(SETS), choices=SETS, help="development sets")
    parser.add_argument(
        "--adapter", action="store_true", help="also refit the query adapter with the fresh rows"
    )
    parser.add_argument("--out", help="also write the Markdown report here")
    args = parser.parse_args()
    t = time.perf_counter()
    progress = lambda message: print(message, file=sys.stderr, flush=True)  # noqa: E731
    settings = load_settings(environ={})
    db = StatuteDB(settings.statutes_path)
    rows = without_lay(read_rows(settings.assets_dir / "supervision.jsonl.gz"))  # the sets are added per fold
    _app, lso = app_and_bench(settings, db, rows, progress)
    if lso is None:
        return 2
    searcher = lso.sparse(rows)
    searcher.dense = base_dense = lso.adapted(rows, hub=True)  # as the app searches: adapter, hub offsets
    fresh = {name: [q for q in gold_queries(fresh_set(name), db) if q.gold] for name in args.sets}
    lawbench = lawbench_set(lso, searcher, rows)
    features = {name: query_set(searcher, qs, fused=True) for name, qs in fresh.items()}
    progress(
        f"features: LawBench {len(lawbench.labels)}, fresh {sum(len(qs) for qs in fresh.values())} "
        f"({time.perf_counter() - t:.0f} s)"
    )
    base = train(lawbench.features, lawbench.labels, names=FUSED_FEATURES)
    systems = {
        "no reranker": lambda held: None,
        "LawBench rows (shipped recipe)": lambda held: base,
        "fresh rows of the other sets": lambda held: train(
            *_xy(joined(*(features[n] for n in args.sets if n != held))), names=FUSED_FEATURES
        ),
        "LawBench rows + fresh rows of the other sets": lambda held: train(
            *_xy(joined(lawbench, *(features[n] for n in args.sets if n != held))), names=FUSED_FEATURES
        ),
    }
    if args.adapter:
        systems[ADAPTED] = lambda held: refit(
            lso, searcher, rows, [r for n in args.sets if n != held for r in as_rows(fresh[n])]
        )
    table: dict[str, dict[str, tuple[np.ndarray, int]]] = {s: {} for s in systems}
    for held in args.sets:
        for name, make in systems.items():
            searcher.dense = base_dense
            table[name][held] = scores(searcher, make(held), fresh[held])
            r10 = table[name][held][0][:, 2].mean()
            progress(f"{held} · {name}: R@10 {r10:.3f} ({time.perf_counter() - t:.0f} s)")
    lines = report(table, args.sets, time.perf_counter() - t)
    emit_report("\n".join(lines), args.out)
    return 0


ADAPTED = "LawBench rows + fresh rows of the other sets, query adapter refitted with them too"


def as_rows(queries) -> list[dict]:
    """Fresh questions as supervision rows (``eval: true``: in no expansion, vote index or hub reference)."""
    return [
        {
            "id": q.id,
            "question": q.question,
            "articles": [list(k) for k in sorted(q.gold)],
            "source": "lay",
            "group": q.id,
            "eval": True,
        }
        for q in queries
    ]


def refit(lso: LeaveSourceOut, searcher: StatuteSearcher, rows: list[dict], extra: list[dict]):
    """The shipped recipe with ``extra`` among the evaluation rows: the query adapter (and its hub offsets)
    fitted on them too, the reranker trained on every evaluation row, each searched with the vector of an
    adapter fitted without its fold. Leaves ``searcher.dense`` as that adapter's."""
    both = rows + extra
    searcher.dense = lso.adapted(both, hub=True)
    data = lawbench_set(lso, searcher, both)
    return train(data.features, data.labels, names=FUSED_FEATURES)


def report(table: dict[str, dict[str, tuple[np.ndarray, int]]], sets: list[str], seconds: float) -> list[str]:
    """The Markdown report: one row per system, the pooled figures and the paired R@10 of each system that
    adds fresh rows against the LawBench rows alone."""
    header = " | ".join(sets)
    lines = [
        "# Fresh lay questions as training rows of the fused reranker (issue 39, item 2)",
        "",
        f"Made by `{command_line()}` in {seconds / 60:.1f} min, no model. Each set is scored by "
        "a reranker that never saw its questions (leave one set out); the sets are development data (scored and "
        "read before), so a change chosen here is decided on fresh5. Cells: R@5 / R@10 / R@100, strict rule; "
        "pooled: every held-out question once; intrusions: questions without a family-law gold article that get "
        "one of 民法典 1040–1163 in their first 3.",
        "",
        f"| reranker trained on | {header} | pooled R@1 / R@5 / R@10 / R@100 / MRR@10 / nDCG@10 | intrusions |",
        "|---|" + "---|" * (len(sets) + 2),
    ]
    for name, cells in table.items():
        pooled = np.concatenate([cells[s][0] for s in sets]).mean(axis=0)
        row = [
            f"{v[0][:, 1].mean():.3f} / {v[0][:, 2].mean():.3f} / {v[0][:, 3].mean():.3f}"
            for v in (cells[s] for s in sets)
        ]
        lines.append(
            f"| {name} | {' | '.join(row)} | {' / '.join(f'{x:.3f}' for x in pooled)} | "
            f"{sum(cells[s][1] for s in sets)} |"
        )
    lines.append("")
    shipped = np.concatenate([table["LawBench rows (shipped recipe)"][s][0][:, 2] for s in sets])
    rng = np.random.default_rng(0)
    for name in [n for n in table if n.startswith("LawBench rows +")]:
        diff = np.concatenate([table[name][s][0][:, 2] for s in sets]) - shipped
        draws = rng.integers(0, len(diff), (1000, len(diff)))
        boot = diff[draws].mean(axis=1)
        lines.append(
            f"- Paired R@10, {name} − LawBench rows, pooled over {len(diff)} questions: {diff.mean():+.3f} "
            f"[{np.percentile(boot, 2.5):+.3f}, {np.percentile(boot, 97.5):+.3f}] (95 % bootstrap, 1,000 "
            f"resamples, seed 0; {int((diff > 0).sum())} gained, {int((diff < 0).sum())} lost)."
        )
    return lines


def _xy(data):
    return data.features, data.labels


if __name__ == "__main__":
    raise SystemExit(main())
