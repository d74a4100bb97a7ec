"""``lawluo evaluate``: score systems' answers (NHSR, ROUGE-L, METEOR, BERTScore, judge metrics)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from ..config import Settings
from ..metrics import registry as metric_registry
from .batch import STREAM_HELP, batch_settings, call_rate, show_progress, warn_slots
from .common import UsageError, command_line, emit


def add_parser(subparsers) -> None:
    """Register ``evaluate``, its options and :func:`run`."""
    evaluate = subparsers.add_parser(
        "evaluate",
        help="score systems' answers: NHSR, ROUGE-L, METEOR, BERTScore, judge metrics",
        epilog=metric_registry.metrics_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    evaluate.add_argument(
        "--answers", required=True, help='JSONL: {"id", "system", "answer"} (or "turns") per line'
    )
    evaluate.add_argument(
        "--references", required=True, help='JSONL: {"id", "question", "reference", "statutes"?}'
    )
    evaluate.add_argument(
        "--metrics", default=metric_registry.DEFAULT_GROUP, help=metric_registry.metrics_help()
    )
    evaluate.add_argument(
        "--out", required=True, help="directory for summary.{csv,md,json}, details.jsonl, charts"
    )
    evaluate.add_argument("--pairs", help="pairwise: SYSTEM_A:SYSTEM_B[,…] (results from A's side)")
    evaluate.add_argument("--versus", help="pairwise: this system against every other system")
    evaluate.add_argument("--concurrency", type=int, default=8, help="judge calls in flight (default 8)")
    evaluate.add_argument(
        "--cache",
        default=str(
            Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "lawluo" / "judge_cache.sqlite"
        ),
        help="SQLite file caching judge calls (default ~/.cache/lawluo/judge_cache.sqlite)",
    )
    evaluate.add_argument("--no-cache", action="store_true", help="do not read or write the judge cache")
    evaluate.add_argument(
        "--bertscore-model", default="bert-base-chinese", help="encoder for BERTScore (hub id or path)"
    )
    evaluate.add_argument(
        "--bertscore-layers", type=int, default=None, help="BERTScore layer (default: the model's)"
    )
    evaluate.add_argument(
        "--limit", type=int, default=None, help="only the first N questions of the references"
    )
    evaluate.add_argument(
        "--quiet", action="store_true", help="no progress bars (drawn only when stderr is a terminal)"
    )
    evaluate.add_argument("--stream", action="store_true", help=STREAM_HELP)
    evaluate.set_defaults(func=run)


def _judge(settings: Settings, args: argparse.Namespace):
    """The judge role's model wrapped in the on-disk cache (unless --no-cache)."""
    from ..llm import LanguageModels
    from ..metrics.cache import CachedBackend, JudgeCache
    from ..metrics.judge import Judge

    backend = LanguageModels(settings.models)["judge"]
    if backend.available and not args.no_cache:
        backend = CachedBackend(backend, JudgeCache(args.cache))
    return Judge(backend)


def _pairs(text: str | None) -> tuple[tuple[str, str], ...] | None:
    if not text:
        return None
    pairs = []
    for part in text.split(","):
        first, sep, second = part.partition(":")
        if not sep or not first.strip() or not second.strip():
            raise UsageError(f"--pairs: {part!r} is not SYSTEM_A:SYSTEM_B")
        pairs.append((first.strip(), second.strip()))
    return tuple(pairs)


def run(args: argparse.Namespace, settings: Settings) -> int:
    """Score the answers, write the results to ``--out``, and print one JSON line per system and metric."""
    from ..jsonl import JSONLError
    from ..law.checker import CitationChecker
    from ..law.database import StatuteDB
    from ..metrics.evaluate import Evaluator
    from ..metrics.inputs import load_inputs
    from ..metrics.registry import EvalOptions
    from ..metrics.report import markdown_table, write_results

    try:
        metrics = metric_registry.parse_metrics(args.metrics)
        options = EvalOptions(
            metrics=metrics,
            concurrency=args.concurrency,
            pairs=_pairs(args.pairs),
            versus=args.versus,
            bertscore_model=args.bertscore_model,
            bertscore_layers=args.bertscore_layers,
            progress=show_progress(args),
        )
        inputs = load_inputs(args.answers, args.references)
    except (ValueError, JSONLError) as exc:
        raise UsageError(str(exc)) from None
    if args.limit:
        keep = set(list(inputs.references)[: args.limit])
        inputs.answers = [a for a in inputs.answers if a.id in keep]
        inputs.references = {k: v for k, v in inputs.references.items() if k in keep}
    judge = (
        _judge(batch_settings(settings, args), args)
        if any(metric_registry.spec(m).uses_judge for m in metrics)
        else None
    )
    if judge is not None:
        warn_slots("evaluate", "judge", judge.backend, args.concurrency)
    evaluator = Evaluator(CitationChecker(StatuteDB(settings.statutes_path)), judge, options)
    try:
        evaluator.check(inputs)  # e.g. pairwise's pairs, before any work
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    print(
        f"lawluo evaluate: {len(inputs.answers):,} answers of {len(inputs.systems)} system(s) to "
        f"{len(inputs.references):,} questions; metrics: {', '.join(metrics)}",
        file=sys.stderr,
    )
    results = evaluator.run(inputs)
    command = command_line(args)
    try:
        written, write_error = write_results(results, args.out, command), None
    except OSError as exc:  # nothing was written; the scores still go to stdout below
        written, write_error = [], exc
    for row in results.summary:
        emit(row)
    print(markdown_table(results.summary), file=sys.stderr)
    for note in results.notes:
        print(f"lawluo evaluate: note: {note}", file=sys.stderr)
    cache = judge.cache if judge is not None else None
    if cache is not None:
        rate = cache.hit_rate
        print(
            f"lawluo evaluate: judge cache {cache.path}: {cache.hits} hits, {cache.misses} calls"
            + (f" (hit rate {rate:.1%})" if rate is not None else ""),
            file=sys.stderr,
        )
    if evaluator.judge is not None:  # the time of the metrics that asked the judge
        seconds = sum(t for m, t in results.seconds.items() if metric_registry.spec(m).uses_judge)
        print(f"lawluo evaluate: judge: {call_rate(judge.backend.sent, seconds)}", file=sys.stderr)
    if write_error is not None:
        print(
            f"lawluo evaluate: cannot write the results to {args.out}: {write_error.strerror or write_error}; "
            "no result file there was written or changed — run the same command again once it can be"
            + (" (the judge's answers are cached)" if cache is not None else ""),
            file=sys.stderr,
        )
        return 1
    print(f"lawluo evaluate: wrote {', '.join(p.name for p in written)} to {args.out}", file=sys.stderr)
    return 1 if results.failed else 0
