"""``python -m lawluo``: statute and case search, citation checking, and asset building.

    python -m lawluo search statutes "试用期 解除劳动合同" -k 5
    python -m lawluo search statutes --input queries.jsonl          # {"text", "id"?} per line
    python -m lawluo search cases "醉酒驾驶机动车" -k 3
    python -m lawluo check "根据《民法典》第1079条规定：“……”"
    echo "…" | python -m lawluo check -
    python -m lawluo check --input answers.jsonl
    python -m lawluo classify "公司拖欠工资怎么办？"                # the receptionist's domain routing
    python -m lawluo classify --input questions.jsonl            # {"text", "id"?} per line; - reads stdin
    python -m lawluo build all --data ../shared/data               # rebuild assets/ from the sources
    python -m lawluo --config configs/vllm.yaml models --ping      # which model each role uses; is it up?
    python -m lawluo models local                                  # build llama-server, serve a small GGUF
    python -m lawluo --config configs/vllm.yaml chat --role lawyer "试用期可以不交社保吗？"
    python -m lawluo consult --script consultation.json [--save state.json] [--resume state.json]
    python -m lawluo evaluate --answers A.jsonl --references R.jsonl --metrics nhsr,rouge_l --out DIR
    python -m lawluo --config configs/hosted-openai.yaml evaluate … --metrics all --versus LawLuo
    python -m lawluo --config configs/vllm.yaml generate --questions Q.jsonl --system LawLuo --out A.jsonl
    python -m lawluo bench retrieval --input Q.jsonl [--k 100] [--json OUT.json]   # R@k, MRR, nDCG, CIs
    python -m lawluo bench retrieval --leave-source-out [--sources disc,kinled] [--out report.md]
    python -m lawluo --config configs/vllm.yaml bench tolc --limit 20 --json tolc.json  # ToLC, simulated clients
    python -m lawluo bench checker [--controls DIR] [--json] [--out FILE]  # checker false alarms, recall

Every result is one JSON object per line on stdout (``chat`` streams plain text, ``bench`` prints a
table). Errors go to stderr with exit status 2 (bad input or settings) or 1 (missing assets, a model
that cannot be reached, a file or stdout that cannot be written: a full disk, a read-only folder, a
closed pipe), one message that says what to do, never a traceback. ``--config`` (or ``$LAWLUO_CONFIG``) names the settings file.
"""

from __future__ import annotations

import argparse
import logging
import sys

from ..config import ConfigError, load_settings
from . import bench, build, chat, check, classify, consult, evaluate, generate, models, search
from .common import MAX_TEXT_CHARS, StdoutError, UsageError, write
from .runner import detach_stdout, run_command

__all__ = ["COMMANDS", "MAX_TEXT_CHARS", "StdoutError", "UsageError", "build_parser", "main"]

#: The commands, one module each (``add_parser(subparsers)`` registers it with ``func=run``), in the order
#: ``--help`` lists them: a new command is a new module and a line here.
COMMANDS = (search, check, classify, build, models, chat, consult, evaluate, generate, bench)


def build_parser() -> argparse.ArgumentParser:
    """The ``python -m lawluo`` parser: ``--config`` and one subparser per module of :data:`COMMANDS`."""
    parser = argparse.ArgumentParser(prog="python -m lawluo", description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", help="settings file (YAML; default $LAWLUO_CONFIG, see configs/)")
    sub = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command of ``argv`` (default ``sys.argv[1:]``) with the settings of ``--config``; its exit status."""
    logging.basicConfig(level=logging.WARNING, format="lawluo: %(message)s")
    parser = build_parser()
    args = parser.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    try:
        settings = load_settings(args.config)
    except ConfigError as exc:
        print(f"lawluo: {exc}", file=sys.stderr)
        return 2
    try:
        status = run_command(args, settings)
        write("", flush=True)  # a full stdout shows at the last flush: report it here, not at exit
    except StdoutError as exc:
        detach_stdout()
        print(f"lawluo {args.command}: cannot write to stdout: {exc}", file=sys.stderr)
        return 1
    return status
