"""What every command shares: the bad-input error, reading queries, and writing stdout."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator

MAX_TEXT_CHARS = 200_000


class UsageError(Exception):
    """Bad input: reported on stderr with exit status 2."""


class StdoutError(Exception):
    """Stdout cannot be written (a closed pipe, a full disk): reported with exit status 1."""


def describe(exc: OSError) -> str:
    """``No space left on device: out/summary.csv`` — an ``OSError`` as a person reads it."""
    what = exc.strerror or str(exc)
    return f"{what}: {exc.filename}" if exc.filename else what


def plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def read_jsonl_queries(path: str) -> Iterator[tuple[str, str]]:
    """(id, text) per line of a JSONL file; a bad line stops with a message naming it."""
    return iter([(rid, text) for rid, text, _row in read_jsonl_rows(path)])


def read_jsonl_rows(path: str) -> list[tuple[str, str, dict]]:
    """(id, text, the whole object) per line of a JSONL file; a bad line stops with a message naming it."""
    from ..jsonl import JSONLError, read_jsonl, report

    try:
        lines = read_jsonl(path)
    except JSONLError as exc:
        raise UsageError(str(exc)) from None
    bad = [
        f'{path}:{n}: expected an object with a "text" string, e.g. {{"id": "q1", "text": "…"}}'
        for n, obj in lines
        if not isinstance(obj.get("text"), str)
    ]
    if bad:
        raise UsageError(report(bad))
    rows = [(str(obj.get("id", n)), obj["text"], obj) for n, obj in lines]
    if not rows:
        raise UsageError(f"{path}: no queries in the file")
    return rows


def inputs(args: argparse.Namespace, positional: str) -> Iterator[tuple[str, str]]:
    value = getattr(args, positional)
    if args.input:
        if value is not None:
            raise UsageError(f"give either {positional.upper()} or --input, not both")
        return read_jsonl_queries(args.input)
    if value is None:
        raise UsageError(f"missing {positional.upper()} (or --input FILE.jsonl)")
    if value == "-":
        data = sys.stdin.buffer.read()
        if b"\x00" in data[:8192]:
            raise UsageError("stdin looks binary; pipe UTF-8 text")
        value = data.decode("utf-8", errors="replace")
    return iter([("0", value)])


def warn_cut(command: str, what: str, length: int, limit: int, verb: str) -> None:
    print(
        f"lawluo {command}: {what} has {length:,} characters; only the first {limit:,} are {verb}",
        file=sys.stderr,
    )


def write(text: str, flush: bool = False) -> None:
    """Text to stdout; a failed write raises :class:`StdoutError` (``main`` reports it)."""
    try:
        sys.stdout.write(text)
        if flush:
            sys.stdout.flush()
    except OSError as exc:
        raise StdoutError(describe(exc)) from None


def emit(obj: dict) -> None:
    write(json.dumps(obj, ensure_ascii=False) + "\n")


def command_line(args: argparse.Namespace) -> str:
    """The command that was run, quoted to be pasted again (written beside results)."""
    import shlex

    return "python -m lawluo " + " ".join(shlex.quote(a) for a in (args.argv or []))
