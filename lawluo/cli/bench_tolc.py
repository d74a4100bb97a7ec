"""``lawluo bench tolc``: ToLC against simulated clients: key facts recovered, answers compared."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..config import ROLES, Settings
from .common import UsageError, command_line, plural, write

#: The roles that can play the client or judge ``bench tolc`` (the boss may be a reward model, which cannot chat).
BENCH_CHAT_ROLES = tuple(role for role in ROLES if role != "boss")


def add_parser(subparsers) -> None:
    """Register ``bench tolc``, its options and :func:`run`."""
    tolc = subparsers.add_parser(
        "tolc",
        help="ToLC against simulated clients: key facts recovered, answer after clarification vs. at once",
        description=(
            "Cases from the multi-turn consultations of --data (lawluo/metrics/tree_bench/cases.py); the firm builds "
            "each tree with the configured clarifier, a simulated client (--client-role) answers it from the "
            "case's hidden facts, the judge (--judge-role) scores the key facts recovered and prefers one of "
            "the two answers. Prints a Markdown table; --json writes every case's detail."
        ),
    )
    tolc.add_argument("--data", default="../shared/data", help="the shared data (default ../shared/data)")
    tolc.add_argument(
        "--cases", help="JSONL cases written by --save-cases: run this fixed set instead of --data"
    )
    tolc.add_argument(
        "--save-cases", help="write the cases used (JSONL) here, to rerun the same set with --cases"
    )
    tolc.add_argument(
        "--cases-only",
        action="store_true",
        help="only build the cases (to --save-cases, else stdout); no model",
    )
    tolc.add_argument("--limit", type=int, default=20, help="cases to run (default 20; 0 = all)")
    tolc.add_argument("--seed", type=int, default=0, help="seed of the case sampling (default 0)")
    tolc.add_argument(
        "--client-role",
        choices=BENCH_CHAT_ROLES,
        default="judge",
        help="the role whose model plays the client (default judge; e.g. secretary to give it its own model)",
    )
    tolc.add_argument("--judge-role", choices=BENCH_CHAT_ROLES, default="judge", help="the judging role")
    tolc.add_argument(
        "--height", type=int, default=None, help="tree height (default: the settings' tolc_height)"
    )
    tolc.add_argument("--k", type=int, default=None, help="elements per node (default: the settings' tolc_k)")
    tolc.add_argument(
        "--no-answers",
        action="store_true",
        help="score the clarification only: no lawyer answers, no pairwise",
    )
    tolc.add_argument(
        "--judge-sample",
        help="hand-labelled answer sets the judge is checked against first (default "
        "benchmarks/data/tolc_judge_sample.jsonl, its cases beside it in *.cases.jsonl); below κ 0.6 the "
        "key-fact figures are not reported",
    )
    tolc.add_argument(
        "--no-judge-check",
        action="store_true",
        help="do not check the judge against the hand-labelled sample",
    )
    tolc.add_argument("--concurrency", type=int, default=1, help="cases run at once (default 1)")
    tolc.add_argument("--json", help="also write the summary and every case's detail here")
    tolc.add_argument("--quiet", action="store_true", help="no progress bar")
    tolc.set_defaults(func=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    """``bench tolc`` (lawluo/metrics/tree_bench/bench.py): cases, the firm on counted models, the table and ``--json``."""
    from ..files import write_atomically
    from ..metrics.tree_bench.cases import cases_jsonl, dialogue_cases, read_cases, sample
    from ..tolc.builder import MAX_HEIGHT, MAX_K

    bad_height = args.height is not None and not 2 <= args.height <= MAX_HEIGHT
    bad_k = args.k is not None and not 1 <= args.k <= MAX_K
    if not 0 <= args.limit <= 100_000 or not 1 <= args.concurrency <= 32 or bad_height or bad_k:
        raise UsageError(
            f"--limit 须在 0–100000，--concurrency 1–32，--height 2–{MAX_HEIGHT}，--k 1–{MAX_K} 之间 "
            f"(--limit 0–100000, --concurrency 1–32, --height 2–{MAX_HEIGHT}, --k 1–{MAX_K})"
        )
    limit = args.limit or None
    try:
        if args.cases:
            cases = read_cases(args.cases)[:limit]
            print(f"lawluo bench: {plural(len(cases), 'case')} from {args.cases}", file=sys.stderr)
        else:
            if not Path(args.data).is_dir():
                raise UsageError(
                    f"{args.data}: 找不到数据目录 no such directory (the shared data, e.g. ../shared/data)"
                )
            found, left_out = dialogue_cases(Path(args.data))
            cases = sample(found, limit, args.seed)
            print(
                f"lawluo bench: {plural(len(found), 'consultation')} with key facts ({left_out:,} without, left "
                f"out); {plural(len(cases), 'case')} drawn with seed {args.seed}",
                file=sys.stderr,
            )
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if args.save_cases:
        write_atomically(args.save_cases, cases_jsonl(cases))
        print(f"lawluo bench: wrote the cases to {args.save_cases}", file=sys.stderr)
    if args.cases_only:
        if not args.save_cases:
            write(cases_jsonl(cases))
        return 0
    return _bench_tolc(args, settings, cases, command_line(args))


def _bench_tolc(args: argparse.Namespace, settings: Settings, cases: list, command: str) -> int:
    from tqdm.auto import tqdm

    from ..files import write_atomically
    from ..firm import Firm
    from ..llm import LanguageModels, LLMError
    from ..metrics.judge import Judge
    from ..metrics.tree_bench.bench import CountedModels, TolcBench, markdown_table, summarise
    from ..metrics.tree_bench.simulated import SimulatedClient

    models = CountedModels(LanguageModels(settings.models))
    for what, role in (("the simulated client", args.client_role), ("the judge", args.judge_role)):
        reason = models[role].unavailable_reason()
        if reason:
            raise UsageError(
                f"{what} (--{what.split()[-1]}-role {role}) 需要语言模型 needs a model: {reason}"
            )
    firm = Firm.from_settings(settings, models=models)
    bench = TolcBench(
        firm,
        SimulatedClient(models[args.client_role]),
        Judge(models[args.judge_role]),
        answers=not args.no_answers,
        height=args.height,
        k=args.k,
    )
    check = None if args.no_judge_check else _judge_check(args, bench.judge)
    if not firm.tree_builder.uses_model:
        print(
            "lawluo bench: no clarifier model: every tree comes from the domain's material or similar cases "
            "(counted as fallbacks)",
            file=sys.stderr,
        )
    if not firm.lawyer.available and not args.no_answers:
        print(
            "lawluo bench: no lawyer model: both answers are the model-free grounded replies", file=sys.stderr
        )
    try:
        with tqdm(total=len(cases), desc="bench tolc", file=sys.stderr, disable=args.quiet) as bar:
            results = bench.run(cases, args.concurrency, on_done=bar.update)
    except LLMError as exc:  # no model, a rejected key: every case would fail the same way
        print(f"lawluo bench: stopped: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    summary = summarise(results, answers=not args.no_answers)
    if check is not None:
        summary["judge_check"] = check
    write(markdown_table(summary) + "\n")
    fb = summary["fallbacks"]
    print(
        f"lawluo bench: fallbacks — {fb['clarifier_cases']} tree(s) not all from the clarifier model, "
        f"{fb['client_failed_calls']} client repl(ies) unusable, {fb['judge_failed_cases']} case(s) the judge "
        "could not score"
        + (
            f", {fb['pair_failed_verdicts']} pairwise verdict(s) missing"
            if "pair_failed_verdicts" in fb
            else ""
        ),
        file=sys.stderr,
    )
    if args.json:
        figures = {
            "command": command,
            "client_role": args.client_role,
            "judge_role": args.judge_role,
            "models": {
                role: models[role].describe()
                for role in ("clarifier", "lawyer", args.client_role, args.judge_role)
            },
            "summary": summary,
            "cases": [r.as_dict() for r in results],
        }
        write_atomically(args.json, json.dumps(figures, ensure_ascii=False, indent=1) + "\n")
        print(f"lawluo bench: wrote {args.json}", file=sys.stderr)
    if summary["recovered"]["n"] == 0:
        print("lawluo bench: no case could be scored (see the fallbacks above)", file=sys.stderr)
        return 1
    return 0


def _judge_check(args: argparse.Namespace, judge) -> dict | None:
    """The judge against the hand-labelled sample (lawluo/metrics/tree_bench/judge_check.py), printed; None
    when the default sample is not there (an installed package without the repository's benchmarks)."""
    from ..llm import LLMError
    from ..metrics.tree_bench.judge_check import (
        DEFAULT_SAMPLE,
        MIN_FACT_JUDGE_KAPPA,
        check_judge,
        read_sample,
    )

    path = Path(args.judge_sample) if args.judge_sample else DEFAULT_SAMPLE
    if not args.judge_sample and not path.is_file():
        print(
            f"lawluo bench: {path} not found: the judge is not checked against hand labels", file=sys.stderr
        )
        return None
    try:
        sample = read_sample(path)
    except (OSError, ValueError) as exc:
        raise UsageError(
            f"--judge-sample: 标注样本无法读取 the labelled sample cannot be read: {exc}"
        ) from None
    try:
        check = check_judge(judge, sample)
    except LLMError as exc:  # no model, a rejected key: the cases would fail the same way
        raise UsageError(f"the judge could not be checked: {type(exc).__name__}: {exc}") from None
    figures = {k: "–" if check[k] is None else f"{check[k]:.3f}" for k in ("agreement", "kappa")}
    print(
        f"lawluo bench: the judge against {path.name}: agreement {figures['agreement']}, κ {figures['kappa']} "
        f"over {check['facts']} facts ({check['failed_rows']} replies unusable"
        + "".join(f", {n} {why}" for why, n in check["failed_why"].items())
        + ")"
        + (
            ""
            if check["trustworthy"]
            else f" — under κ {MIN_FACT_JUDGE_KAPPA:.2f}: no key-fact figure is reported"
        ),
        file=sys.stderr,
    )
    return check
