"""Connections and transactions: a small pool of SQLite connections (WAL, ``synchronous=FULL``), one
``BEGIN IMMEDIATE`` transaction per write, and the migrations applied when the store opens.

A write the disk refuses (full, read-only, the lock held past :data:`BUSY_TIMEOUT_S`) raises
:class:`~eval_ui.store.errors.StoreWriteError`, whose message tells the annotator that nothing was saved.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Self

from lawluo.i18n import Message, message

from .errors import SchemaError, StoreError, StoreWriteError
from .schema import Migration

#: Seconds a write waits for SQLite's write lock before it is refused (:class:`StoreWriteError`).
BUSY_TIMEOUT_S = 60.0
#: Idle connections kept open for reuse (each holds a descriptor on the database and one on its -wal).
POOL_SIZE = 8


def _write_problem(exc: sqlite3.OperationalError) -> Message | None:
    """The annotator's message for a write SQLite refused because of the disk or the lock; None otherwise."""
    code = getattr(exc, "sqlite_errorcode", 0) & 0xFF  # the primary result code
    kept = message("annotate.store.kept")
    if code == sqlite3.SQLITE_FULL:
        return message("annotate.store.disk_full", kept=kept)
    if code in (sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN):
        return message("annotate.store.read_only", kept=kept)
    if code in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
        return message("annotate.store.busy", seconds=f"{BUSY_TIMEOUT_S:g}", kept=kept)
    if code == sqlite3.SQLITE_IOERR:
        return message("annotate.store.io_error", kept=kept)
    return None


class Connections:
    """The pool and transactions of an :class:`~eval_ui.store.AnnotationStore` (its base class).

    The store's ``__init__`` sets ``path``, ``_lock``, ``_idle``, ``_pid``, ``_closed`` and ``_clock``.
    """

    path: Path
    _lock: threading.Lock
    _idle: list[sqlite3.Connection]
    _pid: int
    _closed: bool
    _clock: Callable[[], float]

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
                    raise StoreWriteError(str(problem), message=problem) from exc
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

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
