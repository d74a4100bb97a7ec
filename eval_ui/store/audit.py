"""The audit log: one row per sign-up, invitation, role change, import, export and released reservation
(who, what, when, details as JSON), kept append-only by SQLite triggers (migration 3)."""

from __future__ import annotations

import json
import sqlite3

from .errors import StoreError

#: What the audit log records (:meth:`AnnotationStore.audit_log`).
AUDIT_ACTIONS = ("signup", "invite", "uninvite", "role", "import", "export", "release")
MAX_AUDIT_DETAILS = 20_000


class AuditMixin:
    """Writing and reading the audit log (a part of :class:`~eval_ui.store.AnnotationStore`)."""

    def _audit(self, con: sqlite3.Connection, actor: str, action: str, subject: str, details: dict) -> None:
        """Append one row to the audit log, inside the caller's write transaction."""
        if action not in AUDIT_ACTIONS:
            raise StoreError(f"audit action {action!r} is not one of {', '.join(AUDIT_ACTIONS)}")
        text = json.dumps(details, ensure_ascii=False, sort_keys=True, default=str)
        if len(text) > MAX_AUDIT_DETAILS:
            text = json.dumps({"truncated": text[:MAX_AUDIT_DETAILS]}, ensure_ascii=False)
        con.execute(
            "INSERT INTO audit_log (at, actor, action, subject, details) VALUES (?, ?, ?, ?, ?)",
            (self._clock(), str(actor)[:200], action, str(subject)[:200], text),
        )

    def record(self, actor: str, action: str, subject: str = "", details: dict | None = None) -> None:
        """Append one row to the audit log in its own transaction (for what is not a write: an export)."""
        with self._write() as con:
            self._audit(con, actor, action, subject, details or {})

    def audit_log(self, limit: int = 100) -> list[dict]:
        """The newest ``limit`` rows of the audit log, newest first: ``id, at`` (Unix time), ``actor,
        action, subject, details`` (a dict). The log is append-only: the store has no way to change or
        remove a row, and SQLite triggers refuse UPDATE and DELETE on it."""
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise StoreError(f"limit must be a positive integer, got {limit!r}")
        rows = self._all("SELECT * FROM audit_log ORDER BY id DESC LIMIT ?", (limit,))
        return [{**dict(r), "details": json.loads(r["details"])} for r in rows]
