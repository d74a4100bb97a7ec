"""``lawluo chat``: ask one role's model a question; the answer streams to stdout."""

from __future__ import annotations

import argparse
import sys

from ..config import ROLES, Settings
from .common import MAX_TEXT_CHARS, UsageError, inputs, write


def add_parser(subparsers) -> None:
    """Register ``chat TEXT``, its options and :func:`run`."""
    chat = subparsers.add_parser("chat", help="ask one role's model a question; the answer streams to stdout")
    chat.add_argument("text", help="the question, or - to read stdin")
    chat.add_argument("--role", choices=ROLES, default="lawyer")
    chat.add_argument("--system", default=None, help="an optional system message")
    chat.set_defaults(func=run, input=None)


def run(args: argparse.Namespace, settings: Settings) -> int:
    """Stream one role's answer to TEXT to stdout; 1 when the model cannot be reached."""
    from ..llm import LanguageModels, LLMError, StreamInterrupted

    [(_, text)] = list(inputs(args, "text"))
    if not text.strip():
        raise UsageError("the question is empty")
    if len(text) > MAX_TEXT_CHARS:
        raise UsageError(f"the question has {len(text):,} characters; the limit is {MAX_TEXT_CHARS:,}")
    messages = [{"role": "system", "content": args.system}] if args.system else []
    messages.append({"role": "user", "content": text})
    try:
        for piece in LanguageModels(settings.models)[args.role].stream(messages):
            write(piece, flush=True)
    except StreamInterrupted as exc:
        print(f"\nlawluo chat: {exc}", file=sys.stderr)
        return 1
    except LLMError as exc:
        print(f"lawluo chat: {exc}", file=sys.stderr)
        return 1
    write("\n")
    return 0
