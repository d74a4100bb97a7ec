"""Reading JSON Lines files that people hand us: every problem is reported with its line number.

    rows = read_jsonl("answers.jsonl")           # [(line number, object), …]

A missing file, a binary file, text that is not UTF-8, a line that is not JSON or not an object
raises :class:`JSONLError` whose message names the file and line; nothing is returned half-read.
"""

from __future__ import annotations

import json
from pathlib import Path


class JSONLError(ValueError):
    """A file that cannot be read as JSON Lines; the message names the file and line."""


def read_jsonl(path: str | Path, max_errors: int = 20) -> list[tuple[int, dict]]:
    """(line number, object) for every non-blank line; all bad lines (up to ``max_errors``) in one error."""
    p = Path(path)
    if not p.is_file():
        raise JSONLError(f"{path}: no such file")
    raw = p.read_bytes()
    if b"\x00" in raw[:8192]:
        raise JSONLError(
            f"{path}: looks like a binary file; expected JSON Lines text (one JSON object per line)"
        )
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise JSONLError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    rows, errors = [], []
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            errors.append(f"{path}:{n}: not valid JSON ({exc.msg})")
            continue
        if not isinstance(obj, dict):
            errors.append(f"{path}:{n}: expected a JSON object, got {type(obj).__name__}")
            continue
        rows.append((n, obj))
    if errors:
        raise JSONLError(report(errors, max_errors))
    return rows


def report(errors: list[str], max_errors: int = 20) -> str:
    """Several problems as one message, the first ``max_errors`` of them listed."""
    shown = errors[:max_errors]
    more = f"\n… and {len(errors) - len(shown)} more" if len(errors) > len(shown) else ""
    return f"{len(errors)} bad line(s); nothing was processed:\n" + "\n".join(shown) + more
