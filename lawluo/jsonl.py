"""Reading JSON Lines files that people hand us, and appending to them so that a crash or a full disk
loses at most the record being written.

    rows = read_jsonl("answers.jsonl")           # [(line number, object), …]
    note = drop_partial_last_line("answers.jsonl")   # a line cut off by a crash: dropped, said in note
    with JSONLAppender("answers.jsonl") as out:
        out.append({"id": "q1", "answer": "…"})  # one whole line, fsynced, or nothing

A missing file, a binary file, text that is not UTF-8, a line that is not JSON or not an object
raises :class:`JSONLError` whose message names the file and line; nothing is returned half-read.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from types import TracebackType


class JSONLError(ValueError):
    """A file that cannot be read as JSON Lines; the message names the file and line."""


def read_jsonl(path: str | Path, max_errors: int = 20) -> list[tuple[int, dict]]:
    """(line number, object) for every non-blank line; all bad lines (up to ``max_errors``) in one error."""
    p = Path(path)
    if not p.is_file():
        raise JSONLError(f"{path}: no such file")
    return _parse(path, p.read_bytes(), max_errors)


def _parse(path: str | Path, raw: bytes, max_errors: int = 20) -> list[tuple[int, dict]]:
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


def _partial_last_line(raw: bytes) -> int | None:
    """Where the last line starts if it is cut off: no newline after it and not a JSON object.

    A record appended by :class:`JSONLAppender` ends with a newline, and no proper prefix of a JSON
    object is itself a JSON object, so this is exactly the shape a write stopped part-way leaves (a
    last line that is a whole object without its newline is kept).

    >>> _partial_last_line(b'{"id": 1}\\n{"id": 2, "ans')
    10
    >>> _partial_last_line(b'{"id": 1}\\n{"id": 2}') is None
    True
    """
    start = raw.rfind(b"\n") + 1
    tail = raw[start:]
    if not tail.strip():
        return None
    try:
        if isinstance(json.loads(tail.decode("utf-8-sig" if start == 0 else "utf-8")), dict):
            return None
    except (UnicodeDecodeError, json.JSONDecodeError):
        pass
    return start


def drop_partial_last_line(path: str | Path) -> str | None:
    """Truncate a last line cut off by a crash or a full disk; a message saying what was dropped, or None.

    The lines before it must read cleanly: a bad line elsewhere raises :class:`JSONLError` (naming
    ``file:line``) and the file is not changed.
    """
    p = Path(path)
    if not p.is_file():
        return None
    raw = p.read_bytes()
    start = _partial_last_line(raw)
    if start is None:
        return None
    _parse(path, raw[:start])
    with open(p, "r+b") as f:
        f.truncate(start)
        f.flush()
        os.fsync(f.fileno())
    line = raw.count(b"\n", 0, start) + 1
    return (
        f"{path}:{line}: dropped an incomplete last line ({len(raw) - start:,} bytes, "
        "cut off by a crash or a full disk)"
    )


class JSONLAppender:
    """Appends one JSON object per line, each record whole or not at all (thread-safe).

    Each record is written as one line, flushed and fsynced before :meth:`append` returns. When a
    write fails part-way (``ENOSPC``, ``EIO``, ``EFBIG``…) the bytes already written are truncated
    off again and the ``OSError`` is raised: the file ends with the last complete record. (Should the
    truncation fail too, :func:`drop_partial_last_line` drops the cut-off line on the next run.)
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        self._lock = threading.Lock()
        size = os.fstat(self._fd).st_size
        # A last record without its newline (a file edited by hand) gets one before the next record.
        self._newline = size > 0 and os.pread(self._fd, 1, size - 1) != b"\n"

    def append(self, obj: dict) -> None:
        data = (json.dumps(obj, ensure_ascii=False) + "\n").encode("utf-8")
        with self._lock:
            if self._newline:
                data = b"\n" + data
            start = os.lseek(self._fd, 0, os.SEEK_END)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(self._fd, view) :]
                os.fsync(self._fd)
            except OSError:
                try:
                    os.ftruncate(self._fd, start)
                except OSError:
                    pass  # the next run drops the cut-off line
                raise
            self._newline = False

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> JSONLAppender:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
