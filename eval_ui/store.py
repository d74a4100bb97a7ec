"""The annotation store: comparison items, annotators, assignments and lawyers' labels in one SQLite file.

    store = AnnotationStore(data_dir / "annotations.sqlite")
    store.import_items(read_items("comparisons.jsonl"))       # all or nothing
    store.add_annotator("张律师")
    store.assign(overlap=2, seed=0)                             # every item to 2 lawyers, load balanced
    shown = store.next_item("张律师")                             # Assignment: .left / .right as shown
    store.save_label("张律师", shown.item.id, LabelInput("left", left=AnswerLabel(rel=8)), submission_id)

**Labels are given as the annotator saw them.** :class:`LabelInput` carries ``verdict_shown``
(``left``/``right``/``tie``/``both_bad``) and the answer labels of the ``left`` and ``right`` answer;
the store knows the assignment's ``swapped`` bit and stores the verdict un-swapped (``A``/``B`` in
terms of ``system_a``/``system_b``), the answer labels under ``a``/``b``, and ``shown_order``
(``AB`` or ``BA``). The swap logic therefore lives in one place, and a UI cannot get it wrong;
:meth:`Assignment.unswap` and :meth:`Assignment.to_shown` expose the same mapping for display
(pre-filling the form when a lawyer goes back to edit a label).

**Durability.** WAL journal with ``synchronous=FULL``: :meth:`AnnotationStore.save_label` returns
only after the commit has been fsynced, so a label acknowledged as saved survives the process being
killed and (as far as SQLite and the disk guarantee) power loss — "all state an annotator cannot
afford to lose is written to disk before the UI says saved" (DESIGN.md). Every write is one
``BEGIN IMMEDIATE`` transaction on a connection checked out of a small pool for that one operation
and returned after it (at most :data:`POOL_SIZE` are kept open, so a server's worker threads coming and
going leave no connections behind); a writer waits up to :data:`BUSY_TIMEOUT_S` for the write lock,
which is plenty for 16 concurrent annotators. A write the disk refuses (full, read-only, the lock held
past the timeout) raises :class:`StoreWriteError`, whose message tells the annotator in Chinese and
English that nothing was saved and that what they typed is still in the form.

**Export.** The CSV opens in Excel, so a text cell that would start a formula (``=``, ``+``, ``-``,
``@``, tab, carriage return; OWASP "CSV injection") is written with a leading apostrophe; the JSONL
export is the data verbatim.

**Idempotent saves.** Every save carries a client-made ``submission_id``; the same submission saved
twice (double click, retry after a timeout, a late retry after a newer edit) returns what the first
save recorded and writes nothing. Editing a label keeps the previous version in ``label_history``.

**Schema versions.** ``PRAGMA user_version`` counts the migrations applied; :data:`MIGRATIONS` are
applied in order in one transaction when the store opens, and a file written by newer code is refused.
To change the schema, append a function to :data:`MIGRATIONS`; never edit one that has shipped.

Annotators never see each other's labels: every per-annotator method takes the signed-in name and
returns only that annotator's data; :meth:`~AnnotationStore.labels_frame` and
:meth:`~AnnotationStore.export` are for the statistics tab (admins, researchers).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import sqlite3
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from eval_ui import verdicts
from eval_ui.items import Item, item_problems
from lawluo.files import write_atomically

if TYPE_CHECKING:
    import pandas as pd
    from huggingface_hub import CommitScheduler

STORE_FILENAME = "annotations.sqlite"
BUSY_TIMEOUT_S = 60.0
ROLES = ("annotator", "admin")
VERDICTS, SHOWN_VERDICTS = verdicts.VERDICTS, verdicts.SHOWN_VERDICTS  # eval_ui/verdicts.py
STATUSES = ("todo", "skipped", "done")
MAX_COMMENT = 5_000
MAX_STATUTES = 200
MAX_KEY = 500
#: Idle connections kept open for reuse (each holds a descriptor on the database and one on its -wal).
POOL_SIZE = 8
#: What starts a formula in a spreadsheet cell (OWASP, CSV injection).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")

Migration = Callable[[sqlite3.Connection], None]


class StoreError(ValueError):
    """A request the store refuses (bad label, unknown annotator, duplicate item…); the message says why."""


class SchemaError(StoreError):
    """The file's schema cannot be used by this code (written by a newer version, or not a store)."""


class StoreWriteError(StoreError):
    """The disk refused a write (full, read-only, locked too long): nothing was saved; the message says so.

    The message is for the annotator as it is (Chinese and English); the SQLite error is the ``__cause__``.
    """


_KEPT = "你填写的内容都还在页面上，没有丢失。Everything you typed is still in the form; nothing is lost."


def _write_problem(exc: sqlite3.OperationalError) -> str | None:
    """The annotator's message for a write SQLite refused because of the disk or the lock; None otherwise."""
    code = getattr(exc, "sqlite_errorcode", 0) & 0xFF  # the primary result code
    if code == sqlite3.SQLITE_FULL:
        what = (
            "服务器磁盘已满，标注库写不进去；请管理员腾出空间后再点一次。"
            " The server's disk is full, so the annotation store cannot write; once an admin has freed "
            "some space, press the button again."
        )
    elif code in (sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN):
        what = (
            "标注库现在只读（文件或磁盘不可写）；请告诉管理员。"
            " The annotation store is read-only (its file or disk cannot be written); tell an admin."
        )
    elif code in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
        what = (
            f"标注库忙了 {BUSY_TIMEOUT_S:g} 秒仍未空出，请稍后再点一次。"
            f" The annotation store stayed busy for over {BUSY_TIMEOUT_S:g} s; press the button again in a moment."
        )
    elif code == sqlite3.SQLITE_IOERR:
        what = "写入磁盘出错；请告诉管理员。 Writing to the disk failed (an I/O error); tell an admin."
    else:
        return None
    return f"没有保存 NOT saved: {what} {_KEPT}"


def _spreadsheet_safe(value: object) -> object:
    """``value`` with a leading apostrophe when it is text a spreadsheet would run as a formula.

    >>> print(_spreadsheet_safe('=HYPERLINK("https://evil.example")'))
    '=HYPERLINK("https://evil.example")
    >>> _spreadsheet_safe("理由充分"), _spreadsheet_safe(-1.5)
    ('理由充分', -1.5)
    """
    return "'" + value if isinstance(value, str) and value.startswith(FORMULA_STARTS) else value


def _schema_1(con: sqlite3.Connection) -> None:
    """Migration 1: the full schema (items, annotators, assignments, labels, history, submissions)."""
    for statement in (
        """CREATE TABLE items (
            id TEXT PRIMARY KEY,
            question TEXT NOT NULL,
            answer_a TEXT NOT NULL,
            answer_b TEXT NOT NULL,
            system_a TEXT NOT NULL,
            system_b TEXT NOT NULL,
            reference TEXT NOT NULL DEFAULT '',
            statutes TEXT NOT NULL DEFAULT '[]',
            source TEXT NOT NULL DEFAULT '',
            created REAL NOT NULL)""",
        """CREATE TABLE annotators (
            name TEXT PRIMARY KEY,
            role TEXT NOT NULL CHECK (role IN ('annotator', 'admin')),
            created REAL NOT NULL)""",
        """CREATE TABLE assignments (
            annotator TEXT NOT NULL REFERENCES annotators(name),
            item_id TEXT NOT NULL REFERENCES items(id),
            position INTEGER NOT NULL,
            swapped INTEGER NOT NULL CHECK (swapped IN (0, 1)),
            status TEXT NOT NULL DEFAULT 'todo' CHECK (status IN ('todo', 'skipped', 'done')),
            assigned_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            PRIMARY KEY (annotator, item_id))""",
        "CREATE INDEX assignments_queue ON assignments (annotator, status, position)",
        "CREATE INDEX assignments_item ON assignments (item_id)",
        f"""CREATE TABLE labels (
            annotator TEXT NOT NULL REFERENCES annotators(name),
            item_id TEXT NOT NULL REFERENCES items(id),
            verdict TEXT NOT NULL {verdicts.sql_check("verdict")},
            shown_order TEXT NOT NULL CHECK (shown_order IN ('AB', 'BA')),
            answer_labels TEXT NOT NULL,
            comment TEXT NOT NULL DEFAULT '',
            guideline_version TEXT NOT NULL DEFAULT '',
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            seconds_spent REAL,
            version INTEGER NOT NULL,
            submission_id TEXT NOT NULL UNIQUE,
            PRIMARY KEY (annotator, item_id))""",
        """CREATE TABLE label_history (
            annotator TEXT NOT NULL,
            item_id TEXT NOT NULL,
            verdict TEXT NOT NULL,
            shown_order TEXT NOT NULL,
            answer_labels TEXT NOT NULL,
            comment TEXT NOT NULL,
            guideline_version TEXT NOT NULL,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            seconds_spent REAL,
            version INTEGER NOT NULL,
            submission_id TEXT NOT NULL,
            replaced_at REAL NOT NULL,
            PRIMARY KEY (annotator, item_id, version))""",
        # Every submission id ever accepted, and the label version it produced (or found unchanged):
        # what makes a retried or double-clicked save idempotent even after a later edit.
        """CREATE TABLE submissions (
            submission_id TEXT PRIMARY KEY,
            annotator TEXT NOT NULL,
            item_id TEXT NOT NULL,
            version INTEGER NOT NULL,
            payload_hash TEXT NOT NULL,
            received_at REAL NOT NULL)""",
    ):
        con.execute(statement)


MIGRATIONS: tuple[Migration, ...] = (_schema_1,)


@dataclass(frozen=True)
class AnswerLabel:
    """An annotator's labels of one answer: which cited statutes are hallucinated, Rel and T_LC (0–10).

    ``statutes`` maps a statute as cited (``《民法典》第1079条``) to ``True`` when it is hallucinated
    (wrong name, number or content; LegalHalBench's NHSR criterion) and ``False`` when it is right.
    """

    statutes: Mapping[str, bool] = field(default_factory=dict)
    rel: float | None = None
    tlc: float | None = None


@dataclass(frozen=True)
class LabelInput:
    """One submission as the annotator saw it: the verdict and the labels of the left and right answer."""

    verdict_shown: str
    left: AnswerLabel = field(default_factory=AnswerLabel)
    right: AnswerLabel = field(default_factory=AnswerLabel)
    comment: str = ""
    guideline_version: str = ""
    seconds_spent: float | None = None


@dataclass(frozen=True)
class SavedLabel:
    """What :meth:`AnnotationStore.save_label` recorded.

    ``changed`` is False when the submission repeated the current label (no new version);
    ``duplicate`` is True when ``submission_id`` had been saved before (nothing was written).
    """

    annotator: str
    item_id: str
    verdict: str
    version: int
    submission_id: str
    changed: bool
    duplicate: bool


def unswap_verdict(verdict_shown: str, swapped: bool) -> str:
    """The stored verdict (``A``/``B``/``tie``/``both_bad``) of a verdict given as shown.

    >>> unswap_verdict("left", swapped=True)    # B was shown on the left
    'B'
    >>> unswap_verdict("left", swapped=False), unswap_verdict("tie", swapped=True)
    ('A', 'tie')
    """
    if verdict_shown not in SHOWN_VERDICTS:
        raise StoreError(f"verdict {verdict_shown!r} is not one of {', '.join(SHOWN_VERDICTS)}")
    return verdicts.unswap(verdict_shown, swapped)


def shown_verdict(verdict: str, swapped: bool) -> str:
    """The inverse of :func:`unswap_verdict`: ``left``/``right``/``tie``/``both_bad`` as shown.

    >>> shown_verdict("B", swapped=True)
    'left'
    """
    if verdict not in VERDICTS:
        raise StoreError(f"verdict {verdict!r} is not one of {', '.join(VERDICTS)}")
    return verdicts.as_shown(verdict, swapped)


@dataclass(frozen=True)
class Assignment:
    """An item as one annotator is shown it: ``left``/``right`` are the answers in the order shown."""

    annotator: str
    item: Item
    swapped: bool
    position: int
    status: str

    @property
    def left(self) -> str:
        return self.item.answer_b if self.swapped else self.item.answer_a

    @property
    def right(self) -> str:
        return self.item.answer_a if self.swapped else self.item.answer_b

    @property
    def shown_order(self) -> str:
        return "BA" if self.swapped else "AB"

    def unswap(self, verdict_shown: str) -> str:
        """The stored verdict of ``verdict_shown`` (``left`` is ``B`` when the item is swapped)."""
        return unswap_verdict(verdict_shown, self.swapped)

    def to_shown(self, verdict: str) -> str:
        """The verdict as this annotator saw it, for pre-filling the form when editing."""
        return shown_verdict(verdict, self.swapped)


def _score(value: object, what: str, problems: list[str]) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not (0 <= value <= 10):
        problems.append(f"{what} must be a number from 0 to 10 or empty, got {value!r}")
        return None
    return int(value) if float(value).is_integer() else float(value)


def _answer_label(label: object, side: str, problems: list[str]) -> dict:
    if not isinstance(label, AnswerLabel):
        problems.append(f"{side}: expected an AnswerLabel, got {type(label).__name__}")
        return {}
    statutes = label.statutes
    if not isinstance(statutes, Mapping) or len(statutes) > MAX_STATUTES:
        problems.append(f"{side}: statutes must map at most {MAX_STATUTES} cited statutes to True/False")
        statutes = {}
    for key, value in statutes.items():
        if not isinstance(key, str) or not key.strip() or len(key) > MAX_KEY:
            problems.append(
                f"{side}: statute {key!r} must be a non-empty string of at most {MAX_KEY} characters"
            )
        if not isinstance(value, bool):
            problems.append(
                f"{side}: statute {key!r} must be marked True (hallucinated) or False, got {value!r}"
            )
    return {
        "statutes": {k: statutes[k] for k in sorted(statutes, key=str)},
        "rel": _score(label.rel, f"{side}: Rel", problems),
        "tlc": _score(label.tlc, f"{side}: T_LC", problems),
    }


def _validated(label: LabelInput, submission_id: str) -> tuple[dict, dict]:
    """(left, right) answer labels as JSON-ready dicts; StoreError lists every problem of ``label``."""
    problems: list[str] = []
    if not isinstance(label, LabelInput):
        raise StoreError(f"expected a LabelInput, got {type(label).__name__}")
    if label.verdict_shown not in SHOWN_VERDICTS:
        problems.append(f"verdict {label.verdict_shown!r} is not one of {', '.join(SHOWN_VERDICTS)}")
    left = _answer_label(label.left, "left answer", problems)
    right = _answer_label(label.right, "right answer", problems)
    if not isinstance(label.comment, str) or len(label.comment) > MAX_COMMENT:
        problems.append(f"comment must be text of at most {MAX_COMMENT:,} characters")
    if not isinstance(label.guideline_version, str) or len(label.guideline_version) > 100:
        problems.append("guideline_version must be a string of at most 100 characters")
    s = label.seconds_spent
    if s is not None and (isinstance(s, bool) or not isinstance(s, int | float) or not (0 <= s < math.inf)):
        problems.append(f"seconds_spent must be a non-negative number or empty, got {s!r}")
    if not isinstance(submission_id, str) or not submission_id.strip() or len(submission_id) > 200:
        problems.append("submission_id must be a non-empty string of at most 200 characters")
    if problems:
        raise StoreError("label not saved: " + "; ".join(problems))
    return left, right


def _payload_hash(verdict: str, answer_labels: str, comment: str, guideline_version: str) -> str:
    payload = json.dumps([verdict, answer_labels, comment, guideline_version], ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def _draw(seed: int, *parts: str) -> int:
    """A reproducible 64-bit number of ``seed`` and ``parts`` (position and swap bit of an assignment)."""
    key = "\x1f".join([str(seed), *parts]).encode("utf-8")
    return int.from_bytes(hashlib.sha256(key).digest()[:8], "big")


def _item_of(row: Mapping[str, Any]) -> Item:
    return Item(
        id=row["id"],
        question=row["question"],
        answer_a=row["answer_a"],
        answer_b=row["answer_b"],
        system_a=row["system_a"],
        system_b=row["system_b"],
        reference=row["reference"],
        statutes=tuple(json.loads(row["statutes"])),
        source=row["source"],
    )


def _label_dict(row: Mapping[str, Any]) -> dict:
    out = {k: row[k] for k in row.keys()}
    out["answer_labels"] = json.loads(out["answer_labels"])
    out["verdict_shown"] = shown_verdict(out["verdict"], out["shown_order"] == "BA")
    return out


LABEL_FIELDS = (
    "annotator, item_id, verdict, shown_order, answer_labels, comment, guideline_version, "
    "created_at, updated_at, seconds_spent, version, submission_id"
)
FRAME_COLUMNS = (
    "annotator", "item_id", "source", "question", "system_a", "system_b",
    "verdict", "winner", "shown_order", "verdict_shown",
    "rel_a", "tlc_a", "rel_b", "tlc_b",
    "n_statutes_a", "n_hallucinated_a", "nhsr_a", "hallucinated_a", "statutes_a",
    "n_statutes_b", "n_hallucinated_b", "nhsr_b", "hallucinated_b", "statutes_b",
    "comment", "guideline_version", "seconds_spent", "version", "current", "submission_id",
    "created_at", "updated_at", "replaced_at",
)  # fmt: skip
NUMERIC_COLUMNS = ("rel_a", "tlc_a", "rel_b", "tlc_b", "nhsr_a", "nhsr_b", "seconds_spent", "replaced_at")
STATUTE_COLUMNS = ("annotator", "item_id", "side", "system", "statute", "hallucinated", "version", "current")


class AnnotationStore:
    """Items, annotators, assignments and labels in one SQLite file (WAL, ``synchronous=FULL``).

    Safe to share between threads (every operation checks a connection out of a pool and returns it;
    at most :data:`POOL_SIZE` idle ones stay open, however many threads have used the store) and to
    open from several processes at once (each process opens its own ``AnnotationStore``).
    ``migrations`` exists for tests of the upgrade path; the app always uses :data:`MIGRATIONS`.
    """

    def __init__(self, path: str | Path, migrations: Sequence[Migration] = MIGRATIONS) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._idle: list[sqlite3.Connection] = []  # connections of process ``_pid`` nobody is using
        self._pid = os.getpid()
        self._closed = False
        try:
            self._migrate(tuple(migrations))
        except BaseException:
            self.close()
            raise

    # -- connections and transactions ---------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        try:
            con = sqlite3.connect(
                self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
            )
            con.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
            mode = con.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        except sqlite3.DatabaseError as exc:
            raise SchemaError(f"{self.path}: cannot be opened as an annotation store ({exc})") from exc
        if str(mode).lower() != "wal":
            con.close()
            raise StoreError(
                f"{self.path}: SQLite refused WAL mode (got {mode!r}); is it on a network drive?"
            )
        con.execute("PRAGMA synchronous = FULL")
        con.execute("PRAGMA foreign_keys = ON")
        con.row_factory = sqlite3.Row
        return con

    @contextmanager
    def _connection(self) -> Iterator[sqlite3.Connection]:
        """A connection for one operation, from the pool (or a new one), returned to it afterwards.

        Nothing is tied to the calling thread, so threads that come and go (a server's worker
        threads) leave no connection behind; beyond :data:`POOL_SIZE` idle ones, returned connections
        are closed. After ``fork`` the parent's connections are neither used nor closed (SQLite
        connections must not cross a fork): the child opens its own.
        """
        with self._lock:
            if self._closed:
                raise StoreError(f"{self.path}: the store is closed")
            if self._pid != os.getpid():
                self._idle, self._pid = [], os.getpid()
            con = self._idle.pop() if self._idle else None
        if con is None:
            con = self._connect()
        try:
            yield con
        finally:
            self._return(con)

    def _return(self, con: sqlite3.Connection) -> None:
        if con.in_transaction:  # a caller's transaction left open: never hand it to the next one
            try:
                con.execute("ROLLBACK")
            except sqlite3.Error:
                con.close()
                return
        with self._lock:
            if not self._closed and self._pid == os.getpid() and len(self._idle) < POOL_SIZE:
                self._idle.append(con)
                return
        con.close()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One ``BEGIN IMMEDIATE`` transaction, committed (and fsynced) before the block's caller goes on.

        A write the disk refuses raises :class:`StoreWriteError` (see :func:`_write_problem`), after
        the transaction is rolled back: nothing of it is saved.
        """
        with self._connection() as con:
            try:
                con.execute("BEGIN IMMEDIATE")
                yield con
                con.execute("COMMIT")
            except BaseException as exc:
                if con.in_transaction:
                    try:
                        con.execute("ROLLBACK")
                    except sqlite3.Error:
                        pass  # _return closes a connection still in a transaction
                problem = _write_problem(exc) if isinstance(exc, sqlite3.OperationalError) else None
                if problem is not None:
                    raise StoreWriteError(problem) from exc
                raise

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        """A read transaction: several queries see one consistent snapshot."""
        with self._connection() as con:
            con.execute("BEGIN")
            try:
                yield con
            finally:
                if con.in_transaction:
                    con.execute("COMMIT")

    def _migrate(self, migrations: tuple[Migration, ...]) -> None:
        """Apply the migrations the file lacks, in one transaction; an up-to-date file is only read
        (so a store on a full or read-only disk still opens, to read and export)."""
        try:
            if self._one("PRAGMA user_version")[0] == len(migrations):
                return
            with self._write() as con:
                version = con.execute("PRAGMA user_version").fetchone()[0]
                if version > len(migrations):
                    raise SchemaError(
                        f"{self.path}: schema version {version} was written by a newer LawLuo; this code knows "
                        f"versions up to {len(migrations)}. Upgrade LawLuo or open another file."
                    )
                for number, migration in enumerate(migrations[version:], start=version + 1):
                    migration(con)
                    con.execute(f"PRAGMA user_version = {number}")
        except sqlite3.DatabaseError as exc:
            raise SchemaError(f"{self.path}: cannot be opened as an annotation store ({exc})") from exc

    def _one(self, sql: str, params: Sequence[Any] = ()) -> sqlite3.Row | None:
        """The first row of one query (on a pooled connection)."""
        with self._connection() as con:
            return con.execute(sql, params).fetchone()

    def _all(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        """Every row of one query (fetched before the connection goes back to the pool)."""
        with self._connection() as con:
            return con.execute(sql, params).fetchall()

    def schema_version(self) -> int:
        with self._connection() as con:
            return con.execute("PRAGMA user_version").fetchone()[0]

    def close(self) -> None:
        """Close the idle connections; one in use is closed when its operation ends. Final.

        Connections inherited through ``fork`` belong to the parent and are left alone.
        """
        with self._lock:
            self._closed = True
            idle = self._idle if self._pid == os.getpid() else []
            self._idle = []
        for con in idle:
            con.close()

    def __enter__(self) -> AnnotationStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- items and annotators -------------------------------------------------------------------

    def import_items(self, items: Sequence[Item]) -> int:
        """Add ``items`` in one transaction; any invalid item or id already present imports nothing."""
        problems, seen = [], set()
        for n, item in enumerate(items):
            if not isinstance(item, Item):
                problems.append(f"item {n}: expected an Item, got {type(item).__name__}")
                continue
            problems.extend(f"item {item.id!r}: {p}" for p in item_problems(item))
            if item.id in seen:
                problems.append(f"item {item.id!r} appears twice in the import")
            seen.add(item.id)
        if problems:
            raise StoreError(f"nothing imported; {len(problems)} problem(s): " + "; ".join(problems[:20]))
        now = time.time()
        with self._write() as con:
            ids = list(seen)
            present = []
            for start in range(0, len(ids), 500):
                chunk = ids[start : start + 500]
                marks = ",".join("?" * len(chunk))
                present += [r[0] for r in con.execute(f"SELECT id FROM items WHERE id IN ({marks})", chunk)]
            if present:
                shown = ", ".join(map(repr, sorted(present)[:20]))
                raise StoreError(
                    f"nothing imported: {len(present)} item id(s) already in the store: {shown}"
                    + (" …" if len(present) > 20 else "")
                )
            con.executemany(
                "INSERT INTO items (id, question, answer_a, answer_b, system_a, system_b, reference, "
                "statutes, source, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        i.id, i.question, i.answer_a, i.answer_b, i.system_a, i.system_b, i.reference,
                        json.dumps(list(i.statutes), ensure_ascii=False), i.source, now,
                    )
                    for i in items
                ],
            )  # fmt: skip
        return len(items)

    def item(self, item_id: str) -> Item | None:
        row = self._one("SELECT * FROM items WHERE id = ?", (item_id,))
        return None if row is None else _item_of(row)

    def item_count(self) -> int:
        return self._one("SELECT COUNT(*) FROM items")[0]

    def add_annotator(self, name: str, role: str = "annotator") -> str:
        """Register ``name`` (idempotent); returns the role in effect.

        An existing annotator keeps their role, so calling this at every sign-in never demotes an
        admin; use :meth:`set_role` to change a role.
        """
        name = self._check_name(name)
        if role not in ROLES:
            raise StoreError(f"role {role!r} is not one of {', '.join(ROLES)}")
        with self._write() as con:
            con.execute(
                "INSERT OR IGNORE INTO annotators (name, role, created) VALUES (?, ?, ?)",
                (name, role, time.time()),
            )
            return con.execute("SELECT role FROM annotators WHERE name = ?", (name,)).fetchone()[0]

    def set_role(self, name: str, role: str) -> None:
        if role not in ROLES:
            raise StoreError(f"role {role!r} is not one of {', '.join(ROLES)}")
        with self._write() as con:
            if con.execute("UPDATE annotators SET role = ? WHERE name = ?", (role, name)).rowcount == 0:
                raise StoreError(f"no annotator named {name!r}")

    def annotators(self) -> list[dict]:
        """Every annotator with role, creation time and how many items are assigned and done."""
        rows = self._all(
            """SELECT a.name, a.role, a.created,
                      COUNT(s.item_id) AS assigned,
                      COALESCE(SUM(s.status = 'done'), 0) AS done
               FROM annotators a LEFT JOIN assignments s ON s.annotator = a.name
               GROUP BY a.name ORDER BY a.name"""
        )
        return [dict(r) for r in rows]

    def role(self, name: str) -> str | None:
        row = self._one("SELECT role FROM annotators WHERE name = ?", (name,))
        return None if row is None else row[0]

    def check_admin(self, name: str) -> None:
        """Raise :class:`StoreError` unless ``name`` is an admin (guard for the statistics views)."""
        if self.role(name) != "admin":
            raise StoreError(f"{name!r} is not an admin; only admins see everyone's labels")

    @staticmethod
    def _check_name(name: object) -> str:
        if not isinstance(name, str) or not name.strip() or len(name.strip()) > 100:
            raise StoreError(
                f"annotator name must be a non-empty string of at most 100 characters, got {name!r}"
            )
        return name.strip()

    # -- assignment -----------------------------------------------------------------------------

    def assign(self, overlap: int, seed: int = 0, annotators: list[str] | None = None) -> int:
        """Top every item up to ``overlap`` distinct annotators; returns the number of new assignments.

        Items are visited in an order drawn from ``seed``; each takes the annotators of the pool
        (default: every role-'annotator' annotator) with the fewest assignments, ties broken by a
        hash of (seed, annotator, item), so loads stay within one of each other. Existing
        assignments are never removed and an annotator never gets an item twice. Each new
        assignment's ``position`` (serving order) and ``swapped`` bit (left/right order) come from
        the same hash: random per annotator, stable across restarts.
        """
        if isinstance(overlap, bool) or not isinstance(overlap, int) or overlap < 1:
            raise StoreError(f"overlap must be a positive integer, got {overlap!r}")
        now = time.time()
        with self._write() as con:
            known = {r["name"]: r["role"] for r in con.execute("SELECT name, role FROM annotators")}
            if annotators is None:
                pool = sorted(n for n, r in known.items() if r == "annotator")
            else:
                pool = list(dict.fromkeys(annotators))
                unknown = [n for n in pool if n not in known]
                if unknown:
                    raise StoreError(f"unknown annotator(s): {', '.join(map(repr, unknown))}; add them first")
            if overlap > len(pool):
                raise StoreError(
                    f"overlap {overlap} needs at least {overlap} annotators; there are {len(pool)}"
                    + (f" ({', '.join(pool)})" if pool else "")
                )
            load = dict.fromkeys(pool, 0)
            for r in con.execute("SELECT annotator, COUNT(*) FROM assignments GROUP BY annotator"):
                if r[0] in load:
                    load[r[0]] = r[1]
            have: dict[str, set[str]] = {}
            for r in con.execute("SELECT item_id, annotator FROM assignments"):
                have.setdefault(r[0], set()).add(r[1])
            item_ids = sorted(
                (r[0] for r in con.execute("SELECT id FROM items")), key=lambda i: _draw(seed, i)
            )
            new = []
            for item_id in item_ids:
                taken = have.get(item_id, set())
                need = overlap - len(taken)
                if need <= 0:
                    continue
                draws = {a: _draw(seed, a, item_id) for a in pool if a not in taken}
                for a in sorted(draws, key=lambda a: (load[a], draws[a]))[:need]:
                    new.append((a, item_id, draws[a] >> 1, draws[a] & 1, now, now))
                    load[a] += 1
            con.executemany(
                "INSERT INTO assignments (annotator, item_id, position, swapped, status, assigned_at, updated_at) "
                "VALUES (?, ?, ?, ?, 'todo', ?, ?)",
                new,
            )
        return len(new)

    def _assignment_of(self, row: Mapping[str, Any]) -> Assignment:
        return Assignment(
            row["annotator"], _item_of(row), bool(row["swapped"]), row["position"], row["status"]
        )

    def next_item(self, annotator: str) -> Assignment | None:
        """The annotator's next item: the first 'todo' by position, else the least recently skipped one."""
        query = (
            "SELECT s.annotator, s.swapped, s.position, s.status, i.* FROM assignments s "
            "JOIN items i ON i.id = s.item_id WHERE s.annotator = ? AND s.status = ? "
        )
        with self._read() as con:
            row = con.execute(
                query + "ORDER BY s.position, s.item_id LIMIT 1", (annotator, "todo")
            ).fetchone()
            if row is None:
                row = con.execute(
                    query + "ORDER BY s.updated_at, s.position, s.item_id LIMIT 1", (annotator, "skipped")
                ).fetchone()
        return None if row is None else self._assignment_of(row)

    def assignment(self, annotator: str, item_id: str) -> Assignment:
        """The item as ``annotator`` sees it (to edit a label); an admin may open any item, unswapped."""
        row = self._one(
            "SELECT s.annotator, s.swapped, s.position, s.status, i.* FROM assignments s "
            "JOIN items i ON i.id = s.item_id WHERE s.annotator = ? AND s.item_id = ?",
            (annotator, item_id),
        )
        if row is not None:
            return self._assignment_of(row)
        item = self.item(item_id)
        if item is None:
            raise StoreError(f"no item {item_id!r}")
        if self.role(annotator) != "admin":
            raise StoreError(f"item {item_id!r} is not assigned to {annotator!r}")
        return Assignment(annotator, item, False, -1, "unassigned")

    def skip(self, annotator: str, item_id: str) -> None:
        """Put the item back (served again only when no 'todo' item is left); a done item stays done."""
        with self._write() as con:
            row = con.execute(
                "SELECT status FROM assignments WHERE annotator = ? AND item_id = ?", (annotator, item_id)
            ).fetchone()
            if row is None:
                raise StoreError(f"item {item_id!r} is not assigned to {annotator!r}")
            if row[0] != "done":
                con.execute(
                    "UPDATE assignments SET status = 'skipped', updated_at = ? WHERE annotator = ? AND item_id = ?",
                    (time.time(), annotator, item_id),
                )

    # -- labels ---------------------------------------------------------------------------------

    def save_label(self, annotator: str, item_id: str, label: LabelInput, submission_id: str) -> SavedLabel:
        """Validate, store and commit ``label`` (as shown to ``annotator``); idempotent on ``submission_id``.

        The verdict and answer labels are un-swapped with the assignment's ``swapped`` bit (an admin
        labelling an item not assigned to them saw it unswapped). A label equal to the current one
        creates no new version; a different one moves the current version to ``label_history``.
        The assignment is marked done. Returns only after the commit is on disk.
        """
        left, right = _validated(label, submission_id)
        with self._write() as con:
            seen = con.execute(
                "SELECT * FROM submissions WHERE submission_id = ?", (submission_id,)
            ).fetchone()
            if seen is not None:
                return self._repeat(con, seen, annotator, item_id, label, left, right)
            swapped = self._swapped(con, annotator, item_id)
            verdict = unswap_verdict(label.verdict_shown, swapped)
            a, b = (right, left) if swapped else (left, right)
            answer_labels = json.dumps({"a": a, "b": b}, ensure_ascii=False, sort_keys=True)
            payload = _payload_hash(verdict, answer_labels, label.comment, label.guideline_version)
            now = time.time()
            current = con.execute(
                "SELECT * FROM labels WHERE annotator = ? AND item_id = ?", (annotator, item_id)
            ).fetchone()
            changed = current is None or payload != _payload_hash(
                current["verdict"], current["answer_labels"], current["comment"], current["guideline_version"]
            )
            version = 1 if current is None else current["version"] + int(changed)
            if current is not None and changed:
                con.execute(
                    f"INSERT INTO label_history ({LABEL_FIELDS}, replaced_at) "
                    f"SELECT {LABEL_FIELDS}, ? FROM labels WHERE annotator = ? AND item_id = ?",
                    (now, annotator, item_id),
                )
            if changed:
                con.execute(
                    f"INSERT OR REPLACE INTO labels ({LABEL_FIELDS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        annotator, item_id, verdict, "BA" if swapped else "AB", answer_labels, label.comment,
                        label.guideline_version, now if current is None else current["created_at"], now,
                        label.seconds_spent, version, submission_id,
                    ),
                )  # fmt: skip
            con.execute(
                "INSERT INTO submissions (submission_id, annotator, item_id, version, payload_hash, received_at) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (submission_id, annotator, item_id, version, payload, now),
            )
            con.execute(
                "UPDATE assignments SET status = 'done', updated_at = ? WHERE annotator = ? AND item_id = ?",
                (now, annotator, item_id),
            )
        return SavedLabel(annotator, item_id, verdict, version, submission_id, changed, duplicate=False)

    def _swapped(self, con: sqlite3.Connection, annotator: str, item_id: str) -> bool:
        row = con.execute(
            "SELECT swapped FROM assignments WHERE annotator = ? AND item_id = ?", (annotator, item_id)
        ).fetchone()
        if row is not None:
            return bool(row[0])
        if con.execute("SELECT 1 FROM items WHERE id = ?", (item_id,)).fetchone() is None:
            raise StoreError(f"label not saved: no item {item_id!r}")
        role = con.execute("SELECT role FROM annotators WHERE name = ?", (annotator,)).fetchone()
        if role is None or role[0] != "admin":
            raise StoreError(f"label not saved: item {item_id!r} is not assigned to {annotator!r}")
        return False

    def _repeat(
        self,
        con: sqlite3.Connection,
        seen: Mapping[str, Any],
        annotator: str,
        item_id: str,
        label: LabelInput,
        left: dict,
        right: dict,
    ) -> SavedLabel:
        """The answer to a submission id already saved: what it recorded, if it is the same submission."""
        sid = seen["submission_id"]
        if (seen["annotator"], seen["item_id"]) != (annotator, item_id):
            raise StoreError(
                f"submission id {sid!r} was already used for another label; make a new one per save"
            )
        swapped = self._swapped(con, annotator, item_id)
        verdict = unswap_verdict(label.verdict_shown, swapped)
        a, b = (right, left) if swapped else (left, right)
        answer_labels = json.dumps({"a": a, "b": b}, ensure_ascii=False, sort_keys=True)
        if (
            _payload_hash(verdict, answer_labels, label.comment, label.guideline_version)
            != seen["payload_hash"]
        ):
            raise StoreError(
                f"submission id {sid!r} was already saved with a different label; nothing changed"
            )
        return SavedLabel(annotator, item_id, verdict, seen["version"], sid, changed=False, duplicate=True)

    def submission(self, submission_id: str) -> dict | None:
        """What a submission id produced (annotator, item, version), or None if it was never saved."""
        row = self._one("SELECT * FROM submissions WHERE submission_id = ?", (submission_id,))
        return None if row is None else dict(row)

    def label(self, annotator: str, item_id: str) -> dict | None:
        """``annotator``'s current label of the item (``answer_labels`` parsed, ``verdict_shown`` added)."""
        row = self._one(
            f"SELECT {LABEL_FIELDS} FROM labels WHERE annotator = ? AND item_id = ?", (annotator, item_id)
        )
        return None if row is None else _label_dict(row)

    def history(self, annotator: str, item_id: str) -> list[dict]:
        """Earlier versions of ``annotator``'s label of the item, oldest first, each with ``replaced_at``."""
        rows = self._all(
            f"SELECT {LABEL_FIELDS}, replaced_at FROM label_history WHERE annotator = ? AND item_id = ? "
            "ORDER BY version",
            (annotator, item_id),
        )
        return [_label_dict(r) for r in rows]

    def done_items(self, annotator: str) -> list[str]:
        """Ids of the items ``annotator`` has labelled, in the order first labelled (to go back and edit)."""
        rows = self._all(
            "SELECT item_id FROM labels WHERE annotator = ? ORDER BY created_at, item_id", (annotator,)
        )
        return [r[0] for r in rows]

    def progress(self, annotator: str) -> tuple[int, int]:
        """(done, assigned) for ``annotator``."""
        row = self._one(
            "SELECT COALESCE(SUM(status = 'done'), 0), COUNT(*) FROM assignments WHERE annotator = ?",
            (annotator,),
        )
        return int(row[0]), int(row[1])

    # -- tables for statistics, export and backups ---------------------------------------------

    def _label_rows(self, current_only: bool) -> list[dict]:
        fields = ", ".join(f"l.{f}" for f in LABEL_FIELDS.split(", "))
        item = "i.source, i.question, i.system_a, i.system_b"
        query = f"SELECT {fields}, 1 AS current, NULL AS replaced_at, {item} FROM labels l JOIN items i ON i.id = l.item_id"
        if not current_only:
            query += (
                f" UNION ALL SELECT {fields}, 0 AS current, l.replaced_at, {item} "
                "FROM label_history l JOIN items i ON i.id = l.item_id"
            )
        with self._read() as con:
            rows = con.execute(query + " ORDER BY annotator, item_id, version").fetchall()
        return [self._flat(r) for r in rows]

    @staticmethod
    def _flat(row: Mapping[str, Any]) -> dict:
        out = {k: row[k] for k in row.keys() if k in FRAME_COLUMNS}
        labels = json.loads(row["answer_labels"])
        out["current"] = bool(row["current"])
        out["winner"] = {"A": row["system_a"], "B": row["system_b"]}.get(row["verdict"], row["verdict"])
        out["verdict_shown"] = shown_verdict(row["verdict"], row["shown_order"] == "BA")
        for side in ("a", "b"):
            statutes = labels[side]["statutes"]
            hallucinated = [k for k, v in statutes.items() if v]
            out[f"rel_{side}"], out[f"tlc_{side}"] = labels[side]["rel"], labels[side]["tlc"]
            out[f"n_statutes_{side}"], out[f"n_hallucinated_{side}"] = len(statutes), len(hallucinated)
            out[f"nhsr_{side}"] = 1 - len(hallucinated) / len(statutes) if statutes else None
            out[f"hallucinated_{side}"] = json.dumps(hallucinated, ensure_ascii=False)
            out[f"statutes_{side}"] = json.dumps(statutes, ensure_ascii=False)
        return {c: out.get(c) for c in FRAME_COLUMNS}

    def labels_frame(self, current_only: bool = True) -> pd.DataFrame:
        """One row per label (every version when ``current_only`` is False) with its item's columns.

        Columns (:data:`FRAME_COLUMNS`): the item (``system_a``, ``system_b``, ``question``…), the
        verdict un-swapped and as shown, ``winner`` (a system name, ``tie`` or ``both_bad``),
        ``rel_*``/``tlc_*`` per answer, ``n_statutes_*``/``n_hallucinated_*``/``nhsr_*`` (the share
        of cited statutes the annotator marked right; NaN when none was cited; LegalHalBench's NHSR
        as judged by a lawyer), and ``hallucinated_*``/``statutes_*`` as JSON text.
        """
        import pandas as pd

        frame = pd.DataFrame(self._label_rows(current_only), columns=list(FRAME_COLUMNS))
        return frame.astype({c: float for c in NUMERIC_COLUMNS})

    def statute_labels_frame(self, current_only: bool = True) -> pd.DataFrame:
        """One row per (label, answer side, cited statute) with ``hallucinated`` True/False."""
        import pandas as pd

        rows = []
        for r in self._label_rows(current_only):
            for side in ("a", "b"):
                for statute, hallucinated in json.loads(r[f"statutes_{side}"]).items():
                    system = r[f"system_{side}"]
                    rows.append(
                        (
                            r["annotator"],
                            r["item_id"],
                            side,
                            system,
                            statute,
                            hallucinated,
                            r["version"],
                            r["current"],
                        )
                    )
        return pd.DataFrame(rows, columns=list(STATUTE_COLUMNS))

    def export(self, path: str | Path, fmt: str = "csv", current_only: bool = True) -> int:
        """Write the labels table (:meth:`labels_frame`) as CSV or JSONL, atomically; returns the row count."""
        if fmt not in ("csv", "jsonl"):
            raise StoreError(f"export format {fmt!r} is not csv or jsonl")
        rows = self._label_rows(current_only)
        if fmt == "csv":
            # No text cell may start a formula, and CRLF rows (RFC 4180) make a cell holding a line
            # break or a carriage return quoted, so it cannot split a row.
            frame = self.labels_frame(current_only).map(_spreadsheet_safe)
            text = frame.to_csv(index=False, lineterminator="\r\n")
            data = text.encode("utf-8-sig")  # the BOM makes Excel read Chinese text correctly
        else:
            data = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode("utf-8")
        write_atomically(path, data)
        return len(rows)

    def snapshot(self, dest: str | Path) -> Path:
        """A consistent copy of the database (SQLite backup API) at ``dest``, written then renamed."""
        dest = Path(dest)
        dest.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".tmp")
        os.close(fd)
        try:
            target = sqlite3.connect(tmp)
            try:
                with self._connection() as con:
                    con.backup(target)
                target.execute("PRAGMA journal_mode = DELETE")
            finally:
                target.close()
            os.replace(tmp, dest)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return dest


def start_sync(
    data_dir: str | Path, repo_id: str | None, every_minutes: float = 10, token: str | None = None
) -> CommitScheduler | None:
    """Back the store up to a private Hugging Face dataset repo every ``every_minutes``; None without a repo.

    The live database is never uploaded while it is being written: before each scheduled commit a
    snapshot is taken with SQLite's backup API into ``data_dir/hub_snapshot/`` and only that folder
    is uploaded (``huggingface_hub.CommitScheduler``, which skips unchanged files).
    """
    if not repo_id:
        return None
    from huggingface_hub import CommitScheduler

    data_dir = Path(data_dir)
    folder = data_dir / "hub_snapshot"
    folder.mkdir(parents=True, exist_ok=True)
    db = data_dir / STORE_FILENAME

    class SnapshotScheduler(CommitScheduler):
        def push_to_hub(self):  # runs in the scheduler's thread, one at a time
            if db.exists():
                store = AnnotationStore(db)
                try:
                    store.snapshot(folder / STORE_FILENAME)
                finally:
                    store.close()
            return super().push_to_hub()

    return SnapshotScheduler(
        repo_id=repo_id,
        repo_type="dataset",
        folder_path=folder,
        every=every_minutes,
        token=token,
        private=True,
        ignore_patterns=["*.tmp"],
    )
