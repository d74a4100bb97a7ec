"""The store's tables: :data:`MIGRATIONS`, applied in order (``PRAGMA user_version`` counts them).

To change the schema, append a function to :data:`MIGRATIONS`; never edit one that has shipped.
"""

from __future__ import annotations

import json
import secrets
import sqlite3
from collections.abc import Callable
from typing import Any

from eval_ui import verdicts

from .records import LABEL_FORMAT

Migration = Callable[[sqlite3.Connection], None]

#: The columns of a label (``labels`` and ``label_history``, which adds ``replaced_at``).
LABEL_FIELDS = (
    "annotator, item_id, verdict, shown_order, answer_labels, comment, guideline_version, "
    "created_at, updated_at, seconds_spent, version, submission_id"
)
#: The columns of an adjudication (``adjudications`` and ``adjudication_history``).
ADJUDICATION_FIELDS = "item_id, verdict, answer_labels, note, admin, created_at, updated_at, version"


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


def _legacy_labels(text: str) -> str:
    """A label's answer_labels JSON of the old tick-only form in the current shape (see :func:`_schema_2`).

    >>> _legacy_labels('{"a": {"statutes": {"x": true, "y": false}, "rel": 3, "tlc": null}, '
    ...                '"b": {"statutes": {}, "rel": null, "tlc": null}}')
    '{"a": {"none_wrong": false, "rel": 3, "statutes": {"x": "wrong", "y": "legacy_unticked"}, "tlc": null}, "b": {"none_wrong": false, "rel": null, "statutes": {}, "tlc": null}, "format": 2, "legacy": true}'
    """
    old = json.loads(text)
    if isinstance(old, dict) and "format" in old:
        return text  # already in the current shape
    new: dict[str, Any] = {"format": LABEL_FORMAT, "legacy": True}
    for side in ("a", "b"):
        label = old.get(side) if isinstance(old, dict) else None
        label = label if isinstance(label, dict) else {}
        statutes = label.get("statutes") if isinstance(label.get("statutes"), dict) else {}
        new[side] = {
            "statutes": {
                str(k): "wrong" if v is True else verdicts.LEGACY_UNTICKED for k, v in statutes.items()
            },
            "rel": label.get("rel"),
            "tlc": label.get("tlc"),
            "none_wrong": False,
        }
    return json.dumps(new, ensure_ascii=False, sort_keys=True)


def _schema_2(con: sqlite3.Connection) -> None:
    """Migration 2: explicit per-statute labels, adjudications, an index of labels by item.

    The old form only had a tick per statute for "hallucinated", so an unticked statute was stored as
    ``False`` and counted as correct although nobody may have judged it. Every label and every
    version in ``label_history`` is rewritten: ``True`` → ``wrong``, ``False`` → ``legacy_unticked``
    (missing data), and the label is marked ``"legacy": true``. Nothing else changes (verdicts,
    scores, comments, versions, submission ids).
    """
    for table, key in (("labels", "annotator, item_id"), ("label_history", "annotator, item_id, version")):
        names = key.split(", ")
        rows = con.execute(f"SELECT {key}, answer_labels FROM {table}").fetchall()
        for row in rows:
            new = _legacy_labels(row[-1])
            if new != row[-1]:
                where = " AND ".join(f"{n} = ?" for n in names)
                con.execute(f"UPDATE {table} SET answer_labels = ? WHERE {where}", (new, *row[:-1]))
    for statement in (
        "CREATE INDEX labels_item ON labels (item_id)",
        f"""CREATE TABLE adjudications (
            item_id TEXT PRIMARY KEY REFERENCES items(id),
            verdict TEXT NOT NULL {verdicts.sql_check("verdict")},
            answer_labels TEXT NOT NULL,
            note TEXT NOT NULL DEFAULT '',
            admin TEXT NOT NULL,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            version INTEGER NOT NULL)""",
        """CREATE TABLE adjudication_history (
            item_id TEXT NOT NULL,
            verdict TEXT NOT NULL,
            answer_labels TEXT NOT NULL,
            note TEXT NOT NULL,
            admin TEXT NOT NULL,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            version INTEGER NOT NULL,
            replaced_at REAL NOT NULL,
            PRIMARY KEY (item_id, version))""",
    ):
        con.execute(statement)


def _schema_3(con: sqlite3.Connection) -> None:
    """Migration 3: invitations, the append-only audit log, the store's secret, reservations.

    - ``invitations``: who may sign in with Hugging Face and as what (see :meth:`AnnotationStore.invite`).
    - ``audit_log``: one row per sign-up, invitation, role change, import, export and released reservation;
      two triggers make SQLite refuse any UPDATE or DELETE of it.
    - ``meta``: ``draw_secret``, 32 random bytes made once per store, the key of the position and swap
      draws when no explicit seed is given (:func:`_draw`). Assignments that exist keep their draws.
    - ``assignments.seen_at``: when the item was last shown to its annotator (NULL: never), so that an
      untouched reservation can be released (:meth:`AnnotationStore.assign`).
    - ``annotators.joined_via``: how the annotator first got in (``invitation``, ``org:NAME``,
      ``users_file``, ``admins_setting``, ``cli``; empty for annotators registered before this migration).
    """
    for statement in (
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
        """CREATE TABLE invitations (
            name TEXT PRIMARY KEY,
            role TEXT NOT NULL CHECK (role IN ('annotator', 'admin')),
            invited_by TEXT NOT NULL,
            invited_at REAL NOT NULL)""",
        """CREATE TABLE audit_log (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            at REAL NOT NULL,
            actor TEXT NOT NULL,
            action TEXT NOT NULL,
            subject TEXT NOT NULL DEFAULT '',
            details TEXT NOT NULL DEFAULT '{}')""",
        """CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
           BEGIN SELECT RAISE(ABORT, 'audit_log is append-only: rows cannot be changed'); END""",
        """CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
           BEGIN SELECT RAISE(ABORT, 'audit_log is append-only: rows cannot be deleted'); END""",
        "ALTER TABLE assignments ADD COLUMN seen_at REAL",
        "ALTER TABLE annotators ADD COLUMN joined_via TEXT NOT NULL DEFAULT ''",
    ):
        con.execute(statement)
    con.execute("INSERT INTO meta (key, value) VALUES ('draw_secret', ?)", (secrets.token_hex(32),))


def _schema_4(con: sqlite3.Connection) -> None:
    """Schema 4: ``drafts``, what an annotator has marked and typed for an item and not saved yet (one
    row per annotator and item, replaced as they type, deleted when the label is saved; see
    :meth:`AnnotationStore.save_draft`). ``base_version`` is the version of their label the form showed
    (0: none): a draft older than the label saved since is never restored."""
    con.execute(
        """CREATE TABLE drafts (
            annotator TEXT NOT NULL,
            item_id TEXT NOT NULL REFERENCES items(id),
            base_version INTEGER NOT NULL,
            data TEXT NOT NULL,
            updated_at REAL NOT NULL,
            PRIMARY KEY (annotator, item_id))"""
    )


MIGRATIONS: tuple[Migration, ...] = (_schema_1, _schema_2, _schema_3, _schema_4)
