"""The annotation store: comparison items, annotators, assignments and lawyers' labels in one SQLite file.

    store = AnnotationStore(data_dir / "annotations.sqlite")  # assignment="overlap_first" (or "balanced")
    store.import_items(read_items("comparisons.jsonl"))       # all or nothing
    store.add_annotator("张律师")
    store.assign(overlap=2)                                     # every item to 2 lawyers, load balanced
    shown = store.next_item("张律师")                             # Assignment: .left / .right as shown
    label = LabelInput("left", left=AnswerLabel({"《民法典》第1079条": "wrong_number"}, rel=8))
    store.save_label("张律师", shown.item.id, label, submission_id)

**Labels are given as the annotator saw them.** :class:`LabelInput` carries ``verdict_shown``
(``left``/``right``/``tie``/``both_bad``) and the answer labels of the ``left`` and ``right`` answer;
the store knows the assignment's ``swapped`` bit and stores the verdict un-swapped (``A``/``B`` in
terms of ``system_a``/``system_b``), the answer labels under ``a``/``b``, and ``shown_order``
(``AB`` or ``BA``). The swap logic therefore lives in one place, and a UI cannot get it wrong;
:meth:`Assignment.unswap` and :meth:`Assignment.to_shown` expose the same mapping for display
(pre-filling the form when a lawyer goes back to edit a label).

**Per-statute labels.** Each cited statute is labelled with a code of
:data:`eval_ui.verdicts.STATUTE_LABELS` (``correct``, ``wrong``, ``wrong_number``…); a cited statute
without one is missing data, never "correct". ``AnswerLabel(none_wrong=True)`` ("none of these is
wrong", one click) records every statute the answer cites (``cited``, given by the service from the
citation checker) that has no label as ``correct``. Labels saved by the old tick-only form were
migrated (migration 2): a ticked statute is ``wrong``, an unticked one ``legacy_unticked`` (not a
judgement), and the label says ``legacy``. The codes are checked when a label is saved (the
``answer_labels`` JSON has no SQL constraint), so a new row of the table (``wrong_version``) needs no
migration: a store made before it opens and reads unchanged.

**Reservations** (``reserve_idle_s``): an assignment is a reservation, not ownership. One its annotator has
not touched for that long (no label saved, not shown by :meth:`AnnotationStore.next_item`, not skipped)
is stale, and :meth:`AnnotationStore.assign` gives it to an annotator of the pool who lacks the item
(a newcomer, or someone who has run out of work); saved labels are never taken away.

**Who may sign in** (``invitations``) and **the audit log** (``audit_log``): :meth:`AnnotationStore.invite`
and :meth:`AnnotationStore.uninvite` keep the Hugging Face accounts the admin let in;
every sign-up, invitation, role change, import, export and released reservation is appended to the audit
log (who, what, when, details as JSON), which SQLite triggers keep append-only.

**Secret draws**: without an explicit seed the position and left/right swap of a new assignment are an
HMAC of the store's own random secret (``meta.draw_secret``, made once by migration 3), so nobody who
knows the code can predict which answer is shown on which side.

**Serving order** (``assignment``): ``overlap_first`` serves first the items other annotators have
already labelled but that are still short of their k labels, so agreement can be measured after a
few labels each (Label Studio's ``show_overlap_first``, Argilla's task distribution); ``balanced``
serves each annotator's items in their own random order.

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

**Export.** One row per (item, annotator) (every version with ``current_only=False``) as CSV, JSONL
or Parquet; timestamps ISO 8601 in UTC (``2026-11-24T05:20:00+00:00``; Parquet: UTC timestamps),
text as UTF-8, lists as arrays. The CSV opens in Excel, so a text cell that would start a formula
(``=``, ``+``, ``-``, ``@``, tab, carriage return; OWASP "CSV injection") is written with a leading
apostrophe, and its lists are JSON text; the JSONL and Parquet exports are the data verbatim.
:meth:`AnnotationStore.export_all` writes every file into one folder (what the Hub push uploads).

**Adjudication.** An admin records the resolved label of an item the annotators disagree on
(:meth:`AnnotationStore.disagreements`, :meth:`AnnotationStore.adjudicate`) in its own table with its
history; it never changes an annotator's label. The frames and exports take ``source="adjudicated"``
to use it in place of the annotators' labels of that item.

**Idempotent saves.** Every save carries a client-made ``submission_id``; the same submission saved
twice (double click, retry after a timeout, a late retry after a newer edit) returns what the first
save recorded and writes nothing. Editing a label keeps the previous version in ``label_history``.

**Drafts.** What an annotator has marked and typed for an item and not saved yet is kept per annotator
and item (:meth:`AnnotationStore.save_draft`, as they type) and shown again with the item
(:meth:`AnnotationStore.draft`, after a reload); saving the label deletes it. A draft is validated as a
label is when kept and again when read back (at most :data:`MAX_DRAFT_BYTES`, known keys only, labels
from the form's choices), and one made before the label was saved again is never restored.

**Schema versions.** ``PRAGMA user_version`` counts the migrations applied; :data:`MIGRATIONS` are
applied in order in one transaction when the store opens, and a file written by newer code is refused.
To change the schema, append a function to :data:`MIGRATIONS`; never edit one that has shipped.

Annotators never see each other's labels: every per-annotator method takes the signed-in name and
returns only that annotator's data; :meth:`~AnnotationStore.labels_frame`,
:meth:`~AnnotationStore.disagreements` and :meth:`~AnnotationStore.export` are for the statistics and
adjudication views (admins, researchers).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import math
import os
import re
import secrets
import sqlite3
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from eval_ui import verdicts
from eval_ui.items import Item, item_problems
from lawluo.files import write_atomically
from lawluo.i18n import Message, message

if TYPE_CHECKING:
    import pandas as pd
    from huggingface_hub import CommitScheduler

logger = logging.getLogger(__name__)

STORE_FILENAME = "annotations.sqlite"
BUSY_TIMEOUT_S = 60.0
ROLES = ("annotator", "admin")
VERDICTS, SHOWN_VERDICTS = verdicts.VERDICTS, verdicts.SHOWN_VERDICTS  # eval_ui/verdicts.py
STATUSES = ("todo", "skipped", "done")
MAX_COMMENT = 5_000
MAX_NOTE = 2_000  # an adjudication's note
MAX_STATUTES = 200
MAX_KEY = 500
#: Idle connections kept open for reuse (each holds a descriptor on the database and one on its -wal).
POOL_SIZE = 8
#: How :meth:`AnnotationStore.next_item` orders an annotator's items (setting ``annotation_assignment``).
ASSIGNMENT_MODES = ("overlap_first", "balanced")
#: ``format`` of the answer_labels JSON a save writes (1: the old tick-only form, True/False per statute).
LABEL_FORMAT = 2
SIDES = {
    "left": "左侧回答 left answer",
    "right": "右侧回答 right answer",
    "a": "回答 A answer A",
    "b": "回答 B answer B",
}
#: What starts a formula in a spreadsheet cell (OWASP, CSV injection).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
#: What the audit log records (:meth:`AnnotationStore.audit_log`).
AUDIT_ACTIONS = ("signup", "invite", "uninvite", "role", "import", "export", "release")
MAX_AUDIT_DETAILS = 20_000
#: A view refreshes an assignment's ``seen_at`` at most this often (seconds): reloading a page is not a write.
VIEW_RESOLUTION_S = 60.0
#: A name that may be invited: a Hugging Face account's handle (letters, digits, ``-``, ``_``, ``.``).
INVITABLE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u2064\ufeff]")

Migration = Callable[[sqlite3.Connection], None]


class StoreError(ValueError):
    """A request the store refuses (bad label, unknown annotator, duplicate item…); the message says why.

    One an annotator may read on the page also has ``message``, a :class:`~lawluo.i18n.Message` the page
    renders in the reader's language (``str(exc)`` stays the text for the logs); None for the others."""

    def __init__(self, *args: object, message: Message | None = None) -> None:
        super().__init__(*args)
        self.message = message


class SchemaError(StoreError):
    """The file's schema cannot be used by this code (written by a newer version, or not a store)."""


class StoreWriteError(StoreError):
    """The disk refused a write (full, read-only, locked too long): nothing was saved; the message says so.

    The message is for the annotator as it is (``message``: in the reader's language on the page; ``str``:
    Chinese); the SQLite error is the ``__cause__``.
    """


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


def short_name(value: object, limit: int = 40) -> str:
    """``value`` quoted for a message: cut to ``limit`` characters, control and invisible characters
    escaped (``repr``), so a hostile name can neither flood nor garble what is shown.

    >>> print(short_name("a\\x00b"), short_name("x" * 50, limit=5))
    'a\\x00b' 'xxxxx'…
    """
    text = value if isinstance(value, str) else str(value)
    return repr(text[:limit]) + ("…" if len(text) > limit else "")


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


@dataclass(frozen=True)
class AnswerLabel:
    """An annotator's labels of one answer: each cited statute's label, Rel and T_LC (0–10).

    ``statutes`` maps a statute as cited (``《民法典》第1079条``) to a code of
    :data:`eval_ui.verdicts.STATUTE_LABELS`: ``correct``, or ``wrong`` / ``wrong_number`` /
    ``wrong_content`` / ``wrong_repealed`` / ``wrong_not_found`` / ``wrong_version`` (hallucinated:
    LegalHalBench's NHSR criterion). A cited statute absent from it is unlabelled (missing data). ``none_wrong``: the
    annotator confirmed "none of these is wrong" (这些都没问题); every cited statute without a label is
    then recorded as ``correct`` (and a statute labelled wrong contradicts it: refused).
    """

    statutes: Mapping[str, str] = field(default_factory=dict)
    rel: float | None = None
    tlc: float | None = None
    none_wrong: bool = False


@dataclass(frozen=True)
class LabelInput:
    """One submission as the annotator saw it: the verdict and the labels of the left and right answer."""

    verdict_shown: str
    left: AnswerLabel = field(default_factory=AnswerLabel)
    right: AnswerLabel = field(default_factory=AnswerLabel)
    comment: str = ""
    guideline_version: str = ""
    seconds_spent: float | None = None


#: A draft's stored JSON is at most this many bytes: a full form (60 statute labels, four scores, a
#: 5,000-character comment of 3-byte characters) is about 25 KB.
MAX_DRAFT_BYTES = 64_000
_DRAFT_KEYS = {"a", "b", "comment"}
_DRAFT_ANSWER_KEYS = {"statutes", "rel", "tlc"}


@dataclass(frozen=True)
class Draft:
    """What an annotator has marked and typed for an item and not saved yet, as they saw it (left/right):
    the same fields as a :class:`LabelInput` without a verdict, validated by the same rules."""

    left: AnswerLabel = field(default_factory=AnswerLabel)
    right: AnswerLabel = field(default_factory=AnswerLabel)
    comment: str = ""

    def is_empty(self) -> bool:
        return not (
            self.comment.strip()
            or any(s.statutes or s.rel is not None or s.tlc is not None for s in (self.left, self.right))
        )


def _draft_json(draft: Draft, swapped: bool) -> str:
    """The stored JSON of ``draft`` (the item's orientation, ``a``/``b``); StoreError lists every problem."""
    problems: list[str] = []
    if not isinstance(draft, Draft):
        raise StoreError(f"expected a Draft, got {type(draft).__name__}")
    left, right = (_answer_label(draft.left, "left", problems), _answer_label(draft.right, "right", problems))
    if not isinstance(draft.comment, str) or len(draft.comment) > MAX_COMMENT:
        problems.append(
            f"备注 comment: 最多 {MAX_COMMENT:,} 字 must be text of at most {MAX_COMMENT:,} characters"
        )
    if problems:
        raise StoreError("草稿没有保存 draft not kept: " + "; ".join(problems))
    a, b = (right, left) if swapped else (left, right)
    data = {
        "a": {k: a[k] for k in _DRAFT_ANSWER_KEYS},
        "b": {k: b[k] for k in _DRAFT_ANSWER_KEYS},
        "comment": draft.comment,
    }
    text = json.dumps(data, ensure_ascii=False, sort_keys=True)
    if len(text.encode("utf-8")) > MAX_DRAFT_BYTES:
        raise StoreError(f"草稿太大 draft not kept: over {MAX_DRAFT_BYTES:,} bytes")
    return text


def _draft_from_json(text: object) -> dict:
    """A stored draft read back and validated as an upload is (ValueError when it is not one): at most
    :data:`MAX_DRAFT_BYTES`, exactly the known keys, statute labels only from the form's choices, scores
    0–10, a comment within :data:`MAX_COMMENT`. Returns ``{"a": {statutes, rel, tlc}, "b": …, "comment"}``.

    >>> _draft_from_json('{"a": {"statutes": {"《民法典》第1条": "correct"}, "rel": 7, "tlc": null},'
    ...                  ' "b": {"statutes": {}, "rel": null, "tlc": null}, "comment": "再看看"}')["a"]["rel"]
    7
    >>> _draft_from_json('{"a": {"statutes": {"x": "yes"}, "rel": null, "tlc": null},'
    ...                  ' "b": {"statutes": {}, "rel": null, "tlc": null}, "comment": ""}')
    Traceback (most recent call last):
    ...
    ValueError: 回答 A answer A: 法条 x 的标注 'yes' 不是 真实/有误 之一 the label of statute x is 'yes', not one of correct, wrong, wrong_number, wrong_content, wrong_repealed, wrong_not_found, wrong_version
    """
    if not isinstance(text, str) or len(text.encode("utf-8")) > MAX_DRAFT_BYTES:
        raise ValueError(f"a draft is JSON text of at most {MAX_DRAFT_BYTES:,} bytes")
    data = json.loads(text)
    if not isinstance(data, dict) or set(data) != _DRAFT_KEYS:
        raise ValueError(f"a draft has exactly the keys {sorted(_DRAFT_KEYS)}")
    problems: list[str] = []
    out: dict[str, Any] = {}
    for side in ("a", "b"):
        answer = data[side]
        if not isinstance(answer, dict) or set(answer) != _DRAFT_ANSWER_KEYS:
            raise ValueError(f"a draft's answer {side} has exactly the keys {sorted(_DRAFT_ANSWER_KEYS)}")
        parsed = _answer_label(AnswerLabel(answer["statutes"], answer["rel"], answer["tlc"]), side, problems)
        out[side] = {k: parsed.get(k) for k in _DRAFT_ANSWER_KEYS}
    if not isinstance(data["comment"], str) or len(data["comment"]) > MAX_COMMENT:
        problems.append(f"the comment is not text of at most {MAX_COMMENT:,} characters")
    if problems:
        raise ValueError("; ".join(problems))
    out["comment"] = data["comment"]
    return out


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
        problems.append(
            f"{what} 须为 0–10 的数字或留空 must be a number from 0 to 10 or empty, got {value!r}"
        )
        return None
    return int(value) if float(value).is_integer() else float(value)


def _answer_label(label: object, side: str, problems: list[str]) -> dict:
    """``label`` as the JSON-ready dict stored per answer; every problem is appended to ``problems``.

    ``side`` (``left``, ``right``, ``a``, ``b``) names the answer in the messages, in Chinese and English.
    """
    where = SIDES[side]
    if not isinstance(label, AnswerLabel):
        problems.append(f"{where}: expected an AnswerLabel, got {type(label).__name__}")
        return {}
    statutes = label.statutes
    if not isinstance(statutes, Mapping) or len(statutes) > MAX_STATUTES:
        problems.append(
            f"{where}: 法条标注须是至多 {MAX_STATUTES} 条的 法条→标注 对应 "
            f"statutes must map at most {MAX_STATUTES} cited statutes to a label"
        )
        statutes = {}
    codes = ", ".join(verdicts.STATUTE_LABELS)
    for key, value in statutes.items():
        if not isinstance(key, str) or not key.strip() or len(key) > MAX_KEY:
            problems.append(
                f"{where}: 法条 {key!r} 须为不超过 {MAX_KEY} 字的非空文本 "
                f"statute {key!r} must be a non-empty string of at most {MAX_KEY} characters"
            )
        if isinstance(value, bool):
            problems.append(
                f"{where}: 法条 {key} 的标注 {value!r} 是旧版的是/否勾选，请选 真实 或 有误 "
                f"the label of statute {key} is {value!r} (the old tick); give one of {codes}"
            )
        elif value not in verdicts.STATUTE_LABELS:
            problems.append(
                f"{where}: 法条 {key} 的标注 {value!r} 不是 真实/有误 之一 "
                f"the label of statute {key} is {value!r}, not one of {codes}"
            )
        elif label.none_wrong is True and verdicts.STATUTE_HALLUCINATED[value]:
            problems.append(
                f"{where}: 已确认“这些都没问题”，但法条 {key} 标为 {verdicts.STATUTE_NAMES[value]} "
                f'"none of these is wrong" was confirmed, yet statute {key} is labelled {value}'
            )
    if not isinstance(label.none_wrong, bool):
        problems.append(f"{where}: none_wrong must be True or False, got {label.none_wrong!r}")
    return {
        "statutes": {k: statutes[k] for k in sorted(statutes, key=str)},
        "rel": _score(label.rel, f"{where}: Rel", problems),
        "tlc": _score(label.tlc, f"{where}: T_LC", problems),
        "none_wrong": label.none_wrong is True,
    }


def _confirmed(label: dict, cited: Sequence[str]) -> dict:
    """``label`` (a validated answer label) with every statute of ``cited`` it lacks recorded as
    ``correct`` when the annotator confirmed "none of these is wrong"; unchanged otherwise."""
    if not label.get("none_wrong"):
        return label
    statutes = {**{k: "correct" for k in cited}, **label["statutes"]}
    return {**label, "statutes": {k: statutes[k] for k in sorted(statutes)}}


def _answer_labels_json(a: dict, b: dict) -> str:
    """The stored answer_labels of a new save (current :data:`LABEL_FORMAT`)."""
    return json.dumps({"a": a, "b": b, "format": LABEL_FORMAT}, ensure_ascii=False, sort_keys=True)


def _validated(label: LabelInput, submission_id: str) -> tuple[dict, dict]:
    """(left, right) answer labels as JSON-ready dicts; StoreError lists every problem of ``label``."""
    problems: list[str] = []
    if not isinstance(label, LabelInput):
        raise StoreError(f"expected a LabelInput, got {type(label).__name__}")
    if label.verdict_shown not in SHOWN_VERDICTS:
        problems.append(f"判断 verdict {label.verdict_shown!r} is not one of {', '.join(SHOWN_VERDICTS)}")
    left = _answer_label(label.left, "left", problems)
    right = _answer_label(label.right, "right", problems)
    if not isinstance(label.comment, str) or len(label.comment) > MAX_COMMENT:
        problems.append(
            f"备注 comment: 最多 {MAX_COMMENT:,} 字 must be text of at most {MAX_COMMENT:,} characters"
        )
    if not isinstance(label.guideline_version, str) or len(label.guideline_version) > 100:
        problems.append("guideline_version must be a string of at most 100 characters")
    s = label.seconds_spent
    if s is not None and (isinstance(s, bool) or not isinstance(s, int | float) or not (0 <= s < math.inf)):
        problems.append(f"seconds_spent must be a non-negative number or empty, got {s!r}")
    if not isinstance(submission_id, str) or not submission_id.strip() or len(submission_id) > 200:
        problems.append("submission_id must be a non-empty string of at most 200 characters")
    if problems:
        raise StoreError("没有保存 label not saved: " + "; ".join(problems))
    return left, right


def _stored(left: dict, right: dict, swapped: bool, cited: Mapping[str, Sequence[str]]) -> str:
    """The answer_labels JSON of a save: the labels of ``left``/``right`` under ``a``/``b``."""
    a, b = (right, left) if swapped else (left, right)
    return _answer_labels_json(_confirmed(a, cited["a"]), _confirmed(b, cited["b"]))


def _payload_hash(verdict: str, answer_labels: str, comment: str, guideline_version: str) -> str:
    payload = json.dumps([verdict, answer_labels, comment, guideline_version], ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def _draw(seed: int | str, *parts: str) -> int:
    """A reproducible 64-bit number of ``seed`` and ``parts`` (position and swap bit of an assignment).

    An integer seed (the setting ``annotation_seed``, for reproducible tests) is hashed with the parts,
    so anyone who knows it can compute every draw; a text seed is a secret key (the store's
    ``draw_secret``) and the draw its HMAC-SHA256 (RFC 2104), unpredictable without the key.

    >>> _draw(0, "张律师", "q1") == _draw(0, "张律师", "q1") != _draw(1, "张律师", "q1")
    True
    """
    message = "\x1f".join(parts).encode("utf-8")
    if isinstance(seed, str):
        digest = hmac.new(seed.encode("utf-8"), message, hashlib.sha256).digest()
    else:
        digest = hashlib.sha256("\x1f".join([str(seed), *parts]).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big")


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
    "n_statutes_a", "n_labelled_a", "n_unlabelled_a", "n_hallucinated_a", "nhsr_a", "none_wrong_a",
    "hallucinated_a", "statutes_a",
    "n_statutes_b", "n_labelled_b", "n_unlabelled_b", "n_hallucinated_b", "nhsr_b", "none_wrong_b",
    "hallucinated_b", "statutes_b",
    "comment", "guideline_version", "seconds_spent", "version", "current", "legacy", "submission_id",
    "created_at", "updated_at", "replaced_at",
)  # fmt: skip
NUMERIC_COLUMNS = (
    "rel_a", "tlc_a", "rel_b", "tlc_b", "nhsr_a", "nhsr_b", "seconds_spent",
    "created_at", "updated_at", "replaced_at",
)  # fmt: skip
STATUTE_COLUMNS = (
    "annotator", "item_id", "side", "system", "statute", "label", "hallucinated", "error_kind",
    "legacy", "version", "current",
)  # fmt: skip
TIME_COLUMNS = ("created_at", "updated_at", "replaced_at")
#: The annotator name of the rows an adjudication puts in place of the annotators' (``source="adjudicated"``).
ADJUDICATED = "adjudicated"
SOURCES = ("raw", "adjudicated")
#: What :meth:`AnnotationStore.export` writes.
EXPORT_FORMATS = ("csv", "jsonl", "parquet")


Cited = Callable[[str, str], Sequence[str]]
_FRAME_SET = frozenset(FRAME_COLUMNS)
_to_json = json.JSONEncoder(ensure_ascii=False).encode  # json.dumps without its per-call set-up
ADJUDICATION_FIELDS = "item_id, verdict, answer_labels, note, admin, created_at, updated_at, version"


def _flat(row: Mapping[str, Any], cited: Callable[[str, str], list[str]]) -> dict:
    """A label row (with its item's columns) as one row of :meth:`AnnotationStore.labels_frame`."""
    out = {k: row[k] for k in row.keys() if k in _FRAME_SET}
    labels = json.loads(row["answer_labels"])
    out["current"] = bool(row["current"])
    out["legacy"] = bool(labels.get("legacy", False))
    out["winner"] = {"A": row["system_a"], "B": row["system_b"]}.get(row["verdict"], row["verdict"])
    out["verdict_shown"] = shown_verdict(row["verdict"], row["shown_order"] == "BA")
    for side in ("a", "b"):
        label = labels[side]
        statutes = label["statutes"]
        flags = {k: verdicts.STATUTE_HALLUCINATED.get(v) for k, v in statutes.items()}
        labelled = [k for k, flag in flags.items() if flag is not None]
        hallucinated = [k for k, flag in flags.items() if flag]
        unlabelled = [k for k in statutes if flags[k] is None]
        unlabelled += [k for k in cited(row["item_id"], side) if k not in statutes]
        out[f"rel_{side}"], out[f"tlc_{side}"] = label["rel"], label["tlc"]
        out[f"n_statutes_{side}"] = len(labelled) + len(unlabelled)
        out[f"n_labelled_{side}"], out[f"n_unlabelled_{side}"] = len(labelled), len(unlabelled)
        out[f"n_hallucinated_{side}"] = len(hallucinated)
        out[f"nhsr_{side}"] = 1 - len(hallucinated) / len(labelled) if labelled else None
        out[f"none_wrong_{side}"] = bool(label.get("none_wrong", False))
        out[f"hallucinated_{side}"] = _to_json(hallucinated)
        out[f"statutes_{side}"] = _to_json(statutes)
    return {c: out.get(c) for c in FRAME_COLUMNS}


def _adjudication_dict(row: Mapping[str, Any]) -> dict:
    out = {k: row[k] for k in ADJUDICATION_FIELDS.split(", ")}
    if "replaced_at" in row.keys():
        out["replaced_at"] = row["replaced_at"]
    out["answer_labels"] = json.loads(out["answer_labels"])
    return out


def _adjudicated_row(row: Mapping[str, Any]) -> dict:
    """An adjudication as a label row of annotator :data:`ADJUDICATED` (for ``source="adjudicated"``)."""
    out = {k: row[k] for k in row.keys()}
    out.update(
        annotator=ADJUDICATED,
        shown_order="AB",
        comment=row["note"],
        guideline_version="",
        seconds_spent=None,
        submission_id=f"adjudication-{row['item_id']}-v{row['version']}",
    )
    return out


def _disagreement(labels: Sequence[tuple[str, str, dict]]) -> list[str]:
    """What (annotator, verdict, answer_labels) of one item disagree on; empty when they agree.

    >>> _disagreement([("张", "A", {"a": {"statutes": {"x": "correct"}}, "b": {"statutes": {}}}),
    ...                ("李", "tie", {"a": {"statutes": {"x": "wrong_number"}}, "b": {"statutes": {}}})])
    ['判断不同 verdicts differ: 张 A, 李 tie', '回答 A answer A: 法条 x 真实/有误不一 labelled both correct and wrong']
    """
    reasons = []
    if len({v for _, v, _ in labels}) > 1:
        reasons.append("判断不同 verdicts differ: " + ", ".join(f"{n} {v}" for n, v, _ in labels))
    for side in ("a", "b"):
        flags: dict[str, set[bool]] = {}
        for _, _, answer_labels in labels:
            for key, code in answer_labels[side]["statutes"].items():
                flag = verdicts.STATUTE_HALLUCINATED.get(code)
                if flag is not None:
                    flags.setdefault(key, set()).add(flag)
        reasons += [
            f"{SIDES[side]}: 法条 {key} 真实/有误不一 labelled both correct and wrong"
            for key, seen in flags.items()
            if len(seen) > 1
        ]
    return reasons


def _jsonable(row: Mapping[str, Any]) -> dict:
    """An export row for JSON: datetimes as ISO 8601 (UTC, with the offset)."""
    return {k: v.isoformat() if isinstance(v, datetime) else v for k, v in row.items()}


def _csv_cell(value: object) -> object:
    """An export value in a CSV cell: ISO times, lists as JSON text, None empty."""
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, list | dict):
        return json.dumps(value, ensure_ascii=False)
    return value


def _parquet_bytes(rows: list[dict], schema) -> bytes:
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pylist(rows, schema=schema)
    buffer = io.BytesIO()
    pq.write_table(table, buffer)
    return buffer.getvalue()


def iso_utc(timestamp: float | None) -> str | None:
    """A Unix time as ISO 8601 in UTC with its offset, to the second (how exports write times).

    >>> iso_utc(1795497600.4), iso_utc(None)
    ('2026-11-24T05:20:00+00:00', None)
    """
    if timestamp is None or (isinstance(timestamp, float) and math.isnan(timestamp)):
        return None
    return datetime.fromtimestamp(timestamp, tz=UTC).isoformat(timespec="seconds")


def _statute_array(statutes: Mapping[str, str]) -> list[dict]:
    """A label's statute → code mapping as the exports write it: ``[{"statute": …, "label": …}]``.

    An array of records rather than an object keyed by statute, so every row has the same columns
    (a ``datasets`` feature ``[{"statute": string, "label": string}]``).
    """
    return [{"statute": k, "label": v} for k, v in statutes.items()]


def _arrow_schema(kind: str):
    """The Parquet schema of an export (``labels`` or ``statute_labels``): explicit, so empty lists and
    all-null columns still have their types."""
    import pyarrow as pa

    text, number, count, flag = pa.string(), pa.float64(), pa.int64(), pa.bool_()
    stamp = pa.timestamp("s", tz="UTC")
    if kind == "statute_labels":
        special = {"hallucinated": flag, "legacy": flag, "version": count, "current": flag}
        return pa.schema([(c, special.get(c, text)) for c in STATUTE_COLUMNS])
    types: dict[str, Any] = {}
    for c in FRAME_COLUMNS:
        if c in TIME_COLUMNS:
            types[c] = stamp
        elif c in NUMERIC_COLUMNS:
            types[c] = number
        elif c.startswith("n_") or c == "version":
            types[c] = count
        elif c.startswith("none_wrong") or c in ("current", "legacy"):
            types[c] = flag
        elif c.startswith("hallucinated_"):
            types[c] = pa.list_(text)
        elif c.startswith("statutes_"):
            types[c] = pa.list_(pa.struct([("statute", text), ("label", text)]))
        else:
            types[c] = text
    return pa.schema(list(types.items()))


def _labels_frame(rows: list[dict]) -> pd.DataFrame:
    """:meth:`AnnotationStore.labels_frame` of its rows (:data:`FRAME_COLUMNS`, numbers as floats)."""
    import pandas as pd

    return pd.DataFrame(rows, columns=list(FRAME_COLUMNS)).astype({c: float for c in NUMERIC_COLUMNS})


def _statute_frame(rows: list[dict]) -> pd.DataFrame:
    """:meth:`AnnotationStore.statute_labels_frame` of its rows (:data:`STATUTE_COLUMNS`)."""
    import pandas as pd

    # object columns keep None as None (pandas 3 would make the missing labels NaN in a text column)
    frame = pd.DataFrame(rows, columns=list(STATUTE_COLUMNS), dtype=object)
    return frame.astype({"legacy": bool, "version": int, "current": bool})


class AnnotationStore:
    """Items, annotators, assignments and labels in one SQLite file (WAL, ``synchronous=FULL``).

    Safe to share between threads (every operation checks a connection out of a pool and returns it;
    at most :data:`POOL_SIZE` idle ones stay open, however many threads have used the store) and to
    open from several processes at once (each process opens its own ``AnnotationStore``).
    ``migrations`` exists for tests of the upgrade path; the app always uses :data:`MIGRATIONS`.

    ``reserve_idle_s``: an assignment its annotator has not touched (no label, not shown, not skipped) for
    that many seconds is a stale reservation that :meth:`assign` may give to someone else (0: never).
    ``clock`` (seconds since the epoch, default :func:`time.time`) is every timestamp the store writes;
    tests pass a fake one.

    ``assignment`` (:data:`ASSIGNMENT_MODES`) is the serving order of :meth:`next_item`. ``cited``
    (item id, side ``a``/``b``) → the statute keys that answer cites: the citation checker's list, given
    by :class:`eval_ui.service.AnnotationService`; the store itself has no checker. It is what "none of
    these is wrong" confirms and what the frames list as unlabelled; without it only labelled statutes
    are known.
    """

    def __init__(
        self,
        path: str | Path,
        migrations: Sequence[Migration] = MIGRATIONS,
        *,
        assignment: str = "overlap_first",
        cited: Callable[[str, str], Sequence[str]] | None = None,
        reserve_idle_s: float = 0.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if assignment not in ASSIGNMENT_MODES:
            raise StoreError(
                f"分配方式 assignment {assignment!r} is not one of {', '.join(ASSIGNMENT_MODES)}"
            )
        if isinstance(reserve_idle_s, bool) or not (0 <= reserve_idle_s < math.inf):
            raise StoreError(f"reserve_idle_s must be a number of seconds >= 0, got {reserve_idle_s!r}")
        self.assignment_mode, self.cited = assignment, cited
        self.reserve_idle_s, self._clock = float(reserve_idle_s), clock
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

    def __enter__(self) -> AnnotationStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- items and annotators -------------------------------------------------------------------

    def import_items(self, items: Sequence[Item], *, actor: str | None = None, source: str = "") -> int:
        """Add ``items`` in one transaction; any invalid item or id already present imports nothing.

        With ``actor`` (who imports: an admin's name, ``cli:…``) the import is written to the audit log in
        the same transaction, with the count, the first ids and ``source`` (a file name).
        """
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
        now = self._clock()
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
            if actor is not None:
                details = {"count": len(items), "first_ids": [i.id for i in items[:20]], "source": source}
                self._audit(con, actor, "import", "", details)
        return len(items)

    def item(self, item_id: str) -> Item | None:
        row = self._one("SELECT * FROM items WHERE id = ?", (item_id,))
        return None if row is None else _item_of(row)

    def item_count(self) -> int:
        return self._one("SELECT COUNT(*) FROM items")[0]

    def add_annotator(self, name: str, role: str = "annotator", *, by: str = "", via: str = "") -> str:
        """Register ``name`` (idempotent); returns the role in effect.

        An existing annotator keeps their role, so calling this at every sign-in never demotes an
        admin; use :meth:`set_role` to change a role. A new registration is written to the audit log
        (action ``signup``; ``by``: who registered them, default themselves; ``via``: how they got in,
        also kept as ``joined_via``).
        """
        name = self._check_name(name)
        if role not in ROLES:
            raise StoreError(
                f"role {role!r} is not one of {', '.join(ROLES)}",
                message=message("store.role_invalid", roles=", ".join(ROLES)),
            )
        with self._write() as con:
            added = con.execute(
                "INSERT OR IGNORE INTO annotators (name, role, created, joined_via) VALUES (?, ?, ?, ?)",
                (name, role, self._clock(), via),
            ).rowcount
            if added:
                self._audit(con, by or name, "signup", name, {"role": role, "via": via})
            return con.execute("SELECT role FROM annotators WHERE name = ?", (name,)).fetchone()[0]

    def set_role(self, name: str, role: str, *, by: str = "", reason: str = "") -> None:
        """Change a registered annotator's role (audit log: ``role``, from and to, ``by`` and ``reason``)."""
        if role not in ROLES:
            raise StoreError(
                f"role {role!r} is not one of {', '.join(ROLES)}",
                message=message("store.role_invalid", roles=", ".join(ROLES)),
            )
        with self._write() as con:
            row = con.execute("SELECT role FROM annotators WHERE name = ?", (name,)).fetchone()
            if row is None:
                raise StoreError(f"no annotator named {short_name(name)}")
            if row[0] != role:
                con.execute("UPDATE annotators SET role = ? WHERE name = ?", (role, name))
                details = {"from": row[0], "to": role, "reason": reason}
                self._audit(con, by or "system", "role", name, details)

    def annotators(self) -> list[dict]:
        """Every annotator with role, creation time, how they joined (``joined_via``) and how many items
        are assigned and done."""
        rows = self._all(
            """SELECT a.name, a.role, a.created, a.joined_via,
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
        """``name`` stripped; refused unless a non-empty string of at most 100 characters without control
        or invisible characters (the message quotes at most 40 of them)."""
        if (
            not isinstance(name, str)
            or not name.strip()
            or len(name.strip()) > 100
            or _CONTROL.search(name.strip())
        ):
            raise StoreError(
                "名字须为 1–100 个字符、不含控制字符 a name must be 1 to 100 characters without control "
                f"characters, got {short_name(name)}",
                message=message("store.name_invalid"),
            )
        return name.strip()

    # -- invitations and the audit log ----------------------------------------------------------

    @classmethod
    def _check_invitable(cls, name: object) -> str:
        """``name`` as a Hugging Face account handle (:data:`INVITABLE_NAME`), else :class:`StoreError`."""
        name = cls._check_name(name)
        if not INVITABLE_NAME.fullmatch(name):
            raise StoreError(
                "只能邀请 Hugging Face 用户名（字母、数字、- _ .） only a Hugging Face username can be invited "
                f"(letters, digits, '-', '_', '.'), got {short_name(name)}",
                message=message("store.not_invitable", name=short_name(name)),
            )
        return name

    def invite(self, name: str, role: str = "annotator", *, by: str) -> dict:
        """Let the Hugging Face account ``name`` sign in as ``role``; returns the invitation.

        Inviting again with another role changes the invitation's role (the role in effect changes at the
        account's next request). Written to the audit log (``invite``, with the previous role if any).
        """
        name = self._check_invitable(name)
        if role not in ROLES:
            raise StoreError(
                f"role {role!r} is not one of {', '.join(ROLES)}",
                message=message("store.role_invalid", roles=", ".join(ROLES)),
            )
        now = self._clock()
        with self._write() as con:
            old = con.execute("SELECT role FROM invitations WHERE name = ?", (name,)).fetchone()
            if old is None or old[0] != role:
                con.execute(
                    "INSERT OR REPLACE INTO invitations (name, role, invited_by, invited_at) VALUES (?, ?, ?, ?)",
                    (name, role, by, now),
                )
                self._audit(con, by, "invite", name, {"role": role, "previous_role": old and old[0]})
            row = con.execute("SELECT * FROM invitations WHERE name = ?", (name,)).fetchone()
        return dict(row)

    def uninvite(self, name: str, *, by: str) -> int:
        """Withdraw ``name``'s invitation and release their reservations without a label at once (their
        labels stay); returns how many were released. :class:`StoreError` when there is no invitation."""
        name = self._check_name(name)
        with self._write() as con:
            row = con.execute("SELECT role FROM invitations WHERE name = ?", (name,)).fetchone()
            if row is None:
                raise StoreError(
                    f"没有这个邀请 no invitation for {short_name(name)}",
                    message=message("store.no_invitation", name=short_name(name)),
                )
            con.execute("DELETE FROM invitations WHERE name = ?", (name,))
            released = con.execute(
                "DELETE FROM assignments WHERE annotator = ? AND status != 'done' AND NOT EXISTS "
                "(SELECT 1 FROM labels l WHERE l.annotator = assignments.annotator "
                "AND l.item_id = assignments.item_id)",
                (name,),
            ).rowcount
            self._audit(con, by, "uninvite", name, {"role": row[0], "released": released})
        return released

    def invitation(self, name: str) -> str | None:
        """The role ``name`` is invited as, or None."""
        row = self._one("SELECT role FROM invitations WHERE name = ?", (name,))
        return None if row is None else row[0]

    def invitations(self) -> list[dict]:
        """Every invitation (``name, role, invited_by, invited_at``), by name."""
        return [dict(r) for r in self._all("SELECT * FROM invitations ORDER BY name")]

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

    def draw_secret(self) -> str:
        """The store's secret key of the position and swap draws (made once, by migration 3)."""
        return self._one("SELECT value FROM meta WHERE key = 'draw_secret'")[0]

    # -- assignment -----------------------------------------------------------------------------

    def assign(self, overlap: int, seed: int | None = None, annotators: list[str] | None = None) -> int:
        """Top every item up to ``overlap`` distinct annotators; returns the number of new assignments.

        Items are visited in an order drawn from ``seed``; each takes the annotators of the pool
        (default: every role-'annotator' annotator) with the fewest assignments, ties broken by a
        draw of (seed, annotator, item), so loads stay within one of each other. An annotator never
        gets an item twice. Each new assignment's ``position`` (serving order) and ``swapped`` bit
        (left/right order) come from the same draw: random per annotator, stable across restarts.
        ``seed`` None (the default) is the store's secret (:meth:`draw_secret`), so nobody can work
        out which answer is shown on which side; an integer seed makes the draws reproducible (tests).

        **Assignments are reservations.** One its annotator has not touched for :attr:`reserve_idle_s`
        (no label saved, not shown by :meth:`next_item` or skipped since; 0: never) is stale. When an
        item is full (``overlap`` holders) but some of its reservations are stale and someone in the
        pool does not hold it, the stale reservation of the most loaded holder (the least recently
        touched first) is released (deleted) and the item given to the least loaded such annotator.
        Labels are never touched: a done or labelled assignment is never stale. Each top-up that
        releases anything writes one ``release`` row to the audit log.
        """
        if isinstance(overlap, bool) or not isinstance(overlap, int) or overlap < 1:
            raise StoreError(f"overlap must be a positive integer, got {overlap!r}")
        now = self._clock()
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
            key: int | str = seed if seed is not None else self._secret(con)
            stale_before = now - self.reserve_idle_s if self.reserve_idle_s > 0 else -math.inf
            load = dict.fromkeys(pool, 0)
            for r in con.execute("SELECT annotator, COUNT(*) FROM assignments GROUP BY annotator"):
                load[r[0]] = r[1]
            have: dict[str, dict[str, float | None]] = {}  # item → holder → when last touched if stale
            for r in con.execute(
                "SELECT s.item_id, s.annotator, s.status, MAX(s.updated_at, COALESCE(s.seen_at, 0)) AS touched, "
                "EXISTS (SELECT 1 FROM labels l WHERE l.annotator = s.annotator AND l.item_id = s.item_id) "
                "AS labelled FROM assignments s"
            ):
                stale = r["status"] != "done" and not r["labelled"] and r["touched"] < stale_before
                have.setdefault(r["item_id"], {})[r["annotator"]] = r["touched"] if stale else None
            item_ids = sorted(
                (r[0] for r in con.execute("SELECT id FROM items")), key=lambda i: _draw(key, i)
            )
            new, released = [], []
            for item_id in item_ids:
                holders = have.get(item_id, {})
                stale = [a for a, touched in holders.items() if touched is not None]
                if len(holders) >= overlap and not stale:
                    continue  # full, every reservation live: nothing to draw
                draws = {a: _draw(key, a, item_id) for a in pool if a not in holders}
                order = sorted(draws, key=lambda a: (load[a], draws[a]))
                take = order[: max(0, overlap - len(holders))]
                if stale and len(order) > len(take):
                    stale.sort(key=lambda a: (-load[a], holders[a], a))
                    room = max(0, overlap - (len(holders) - len(stale)) - len(take))
                    for old, newcomer in zip(stale[:room], order[len(take) :], strict=False):
                        released.append((old, item_id))
                        load[old] -= 1
                        take.append(newcomer)
                for a in take:
                    new.append((a, item_id, draws[a] >> 1, draws[a] & 1, now, now))
                    load[a] += 1
            if released:
                con.executemany("DELETE FROM assignments WHERE annotator = ? AND item_id = ?", released)
                details = {
                    "count": len(released),
                    "idle_s": self.reserve_idle_s,
                    "released": [list(pair) for pair in released[:200]],
                }
                self._audit(con, "system", "release", "", details)
            con.executemany(
                "INSERT INTO assignments (annotator, item_id, position, swapped, status, assigned_at, updated_at) "
                "VALUES (?, ?, ?, ?, 'todo', ?, ?)",
                new,
            )
        return len(new)

    @staticmethod
    def _secret(con: sqlite3.Connection) -> str:
        return con.execute("SELECT value FROM meta WHERE key = 'draw_secret'").fetchone()[0]

    def _assignment_of(self, row: Mapping[str, Any]) -> Assignment:
        return Assignment(
            row["annotator"], _item_of(row), bool(row["swapped"]), row["position"], row["status"]
        )

    def next_item(self, annotator: str) -> Assignment | None:
        """The annotator's next item: a 'todo' one, else the least recently skipped one.

        Among the 'todo' items, ``balanced`` serves them by the annotator's own random ``position``.
        ``overlap_first`` serves first the items with the most labels by other annotators that still
        have fewer than their k (the item's number of assignments); ties, and items nobody else has
        labelled yet, go in one order shared by every annotator (the lowest ``position`` drawn for the
        item, then the annotator's own), so annotators who start at the same time start on the same
        items. Both are deterministic for the assignment seed.

        Serving an item records that it was shown (``seen_at``, at most once a minute): a reservation
        its annotator looks at is not stale (:meth:`assign`). When the disk refuses that write the item
        is served all the same.
        """
        query = (
            "SELECT s.annotator, s.swapped, s.position, s.status, s.seen_at, i.* FROM assignments s "
            "JOIN items i ON i.id = s.item_id WHERE s.annotator = ? AND s.status = ? "
        )
        if self.assignment_mode == "overlap_first":
            order = """ORDER BY (
                    SELECT CASE WHEN n < (SELECT COUNT(*) FROM assignments t WHERE t.item_id = s.item_id)
                                THEN n ELSE 0 END
                    FROM (SELECT COUNT(*) AS n FROM labels l
                          WHERE l.item_id = s.item_id AND l.annotator != s.annotator)
                ) DESC,
                (SELECT MIN(t.position) FROM assignments t WHERE t.item_id = s.item_id),
                s.position, s.item_id LIMIT 1"""
        else:
            order = "ORDER BY s.position, s.item_id LIMIT 1"
        with self._read() as con:
            row = con.execute(query + order, (annotator, "todo")).fetchone()
            if row is None:
                row = con.execute(
                    query + "ORDER BY s.updated_at, s.position, s.item_id LIMIT 1", (annotator, "skipped")
                ).fetchone()
        if row is None:
            return None
        self._seen(annotator, row["id"], row["seen_at"])
        return self._assignment_of(row)

    def _seen(self, annotator: str, item_id: str, seen_at: float | None) -> None:
        """Record that ``item_id`` was shown to ``annotator`` now (unless it was within the last minute)."""
        now = self._clock()
        if seen_at is not None and 0 <= now - seen_at < VIEW_RESOLUTION_S:
            return
        try:
            with self._write() as con:
                con.execute(
                    "UPDATE assignments SET seen_at = ? WHERE annotator = ? AND item_id = ?",
                    (now, annotator, item_id),
                )
        except (StoreError, sqlite3.Error) as exc:  # the item is shown anyway; its reservation ages
            logger.warning("could not record that %s was shown: %s", short_name(item_id), exc)

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
                    (self._clock(), annotator, item_id),
                )

    # -- labels ---------------------------------------------------------------------------------

    def save_label(self, annotator: str, item_id: str, label: LabelInput, submission_id: str) -> SavedLabel:
        """Validate, store and commit ``label`` (as shown to ``annotator``); idempotent on ``submission_id``.

        The verdict and answer labels are un-swapped with the assignment's ``swapped`` bit (an admin
        labelling an item not assigned to them saw it unswapped). A label equal to the current one
        creates no new version; a different one moves the current version to ``label_history``.
        The assignment is marked done. Returns only after the commit is on disk. With ``none_wrong``
        on a side, the statutes :attr:`cited` lists for it and the label lacks are stored as ``correct``.
        """
        left, right = _validated(label, submission_id)
        cited = self._cited_pair(item_id, left, right)
        with self._write() as con:
            seen = con.execute(
                "SELECT * FROM submissions WHERE submission_id = ?", (submission_id,)
            ).fetchone()
            if seen is not None:
                return self._repeat(con, seen, annotator, item_id, label, left, right, cited)
            swapped = self._swapped(con, annotator, item_id)
            verdict = unswap_verdict(label.verdict_shown, swapped)
            answer_labels = _stored(left, right, swapped, cited)
            payload = _payload_hash(verdict, answer_labels, label.comment, label.guideline_version)
            now = self._clock()
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
            con.execute("DELETE FROM drafts WHERE annotator = ? AND item_id = ?", (annotator, item_id))
        return SavedLabel(annotator, item_id, verdict, version, submission_id, changed, duplicate=False)

    def _cited_keys(self, item_id: str, side: str) -> list[str]:
        """The statutes answer ``side`` of the item cites, per :attr:`cited` (empty without it)."""
        if self.cited is None:
            return []
        return [str(k) for k in self.cited(item_id, side)]

    def _cited_pair(self, item_id: str, *labels: dict) -> dict[str, list[str]]:
        """{'a': keys, 'b': keys} when a label confirms "none wrong" (the only save that needs them)."""
        if not any(label.get("none_wrong") for label in labels):
            return {"a": [], "b": []}
        return {side: self._cited_keys(item_id, side) for side in ("a", "b")}

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
            raise StoreError(
                f"label not saved: item {short_name(item_id)} is not assigned to {short_name(annotator)} "
                "(an item left untouched for long is given to someone else) "
                "这一条没有分配给你，或因长时间未处理已转给别人",
                message=message("annotate.store.not_assigned"),
            )
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
        cited: dict[str, list[str]],
    ) -> SavedLabel:
        """The answer to a submission id already saved: what it recorded, if it is the same submission."""
        sid = seen["submission_id"]
        if (seen["annotator"], seen["item_id"]) != (annotator, item_id):
            raise StoreError(
                f"submission id {sid!r} was already used for another label; make a new one per save"
            )
        swapped = self._swapped(con, annotator, item_id)
        verdict = unswap_verdict(label.verdict_shown, swapped)
        answer_labels = _stored(left, right, swapped, cited)
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

    # -- drafts ---------------------------------------------------------------------------------

    def save_draft(self, annotator: str, item_id: str, draft: Draft, base_version: int) -> bool:
        """Keep ``draft`` (as ``annotator`` sees the item) as their draft of the item, replacing any other;
        an empty draft deletes it. ``base_version``: the version of their label the form was showing (0:
        none). Returns False, keeping nothing, when that is no longer the current version (the label was
        saved meanwhile: the draft is stale). Validated as a label is (StoreError); only an annotator the
        item is assigned to, or an admin, has a draft of it. Committed to disk before it returns.
        """
        if isinstance(base_version, bool) or not isinstance(base_version, int) or base_version < 0:
            raise StoreError(
                f"草稿没有保存 draft not kept: base_version must be a version number, got {base_version!r}"
            )
        with self._write() as con:
            swapped = self._swapped(con, annotator, item_id)
            text = _draft_json(draft, swapped)
            row = con.execute(
                "SELECT version FROM labels WHERE annotator = ? AND item_id = ?", (annotator, item_id)
            ).fetchone()
            if (row[0] if row is not None else 0) != base_version:
                return False
            if draft.is_empty():
                con.execute("DELETE FROM drafts WHERE annotator = ? AND item_id = ?", (annotator, item_id))
                return True
            con.execute(
                "INSERT OR REPLACE INTO drafts (annotator, item_id, base_version, data, updated_at) "
                "VALUES (?, ?, ?, ?, ?)",
                (annotator, item_id, base_version, text, self._clock()),
            )
        return True

    def draft(self, annotator: str, item_id: str) -> dict | None:
        """``annotator``'s draft of the item (``{"a": {statutes, rel, tlc}, "b": …, "comment", "updated_at"}``,
        the item's own orientation), or None: none kept, or one made on a label version that is no longer
        current, or one that does not pass :func:`_draft_from_json` (logged, never shown)."""
        with self._read() as con:
            row = con.execute(
                "SELECT d.base_version, d.data, d.updated_at, l.version FROM drafts d LEFT JOIN labels l "
                "ON l.annotator = d.annotator AND l.item_id = d.item_id WHERE d.annotator = ? AND d.item_id = ?",
                (annotator, item_id),
            ).fetchone()
        if row is None or row["base_version"] != (row["version"] or 0):
            return None
        try:
            data = _draft_from_json(row["data"])
        except ValueError as exc:
            logger.warning(
                "a draft of %s by %s was not restored: %s", short_name(item_id), short_name(annotator), exc
            )
            return None
        return data | {"updated_at": row["updated_at"]}

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

    # -- adjudication (admins) ------------------------------------------------------------------

    def disagreements(self) -> list[dict]:
        """Items whose current labels (two or more) disagree on the verdict or on whether a statute is
        hallucinated, for an admin to adjudicate; oldest item first.

        Each: ``item_id``, ``question``, ``system_a``, ``system_b``, ``labels`` (``annotator``,
        ``verdict`` un-swapped, ``answer_labels`` under ``a``/``b``, ``comment``), ``adjudication``
        (:meth:`adjudication` or None) and ``reasons`` (what differs, Chinese and English). A statute
        one annotator left unlabelled (or ``legacy_unticked``) is missing data, not a disagreement.
        """
        with self._read() as con:
            rows = con.execute(
                "SELECT l.annotator, l.item_id, l.verdict, l.answer_labels, l.comment, "
                "i.question, i.system_a, i.system_b, i.created FROM labels l JOIN items i ON i.id = l.item_id "
                "WHERE l.item_id IN (SELECT item_id FROM labels GROUP BY item_id HAVING COUNT(*) >= 2) "
                "ORDER BY i.created, l.item_id, l.annotator"
            ).fetchall()
            adjudicated = {
                r["item_id"]: _adjudication_dict(r) for r in con.execute("SELECT * FROM adjudications")
            }
        by_item: dict[str, list] = {}
        for r in rows:
            by_item.setdefault(r["item_id"], []).append(r)
        out = []
        for item_id, labels in by_item.items():
            parsed = [(r["annotator"], r["verdict"], json.loads(r["answer_labels"])) for r in labels]
            reasons = _disagreement(parsed)
            if reasons:
                first = labels[0]
                out.append(
                    {
                        "item_id": item_id,
                        "question": first["question"],
                        "system_a": first["system_a"],
                        "system_b": first["system_b"],
                        "labels": [
                            {"annotator": n, "verdict": v, "answer_labels": al, "comment": r["comment"]}
                            for (n, v, al), r in zip(parsed, labels, strict=True)
                        ],
                        "adjudication": adjudicated.get(item_id),
                        "reasons": reasons,
                    }
                )
        return out

    def adjudicate(
        self, admin: str, item_id: str, verdict: str, a: AnswerLabel, b: AnswerLabel, note: str = ""
    ) -> dict:
        """Record the resolved label of an item (admins only); returns it as :meth:`adjudication` does.

        ``verdict`` is in the item's own orientation (``A``/``B``/``tie``/``both_bad``; nothing is
        swapped) and ``a``/``b`` label system_a's and system_b's answers (``none_wrong`` confirms the
        statutes :attr:`cited` lists). Kept in ``adjudications``, apart from the annotators' labels,
        which it never changes; a different resolution moves the previous one to
        ``adjudication_history``, an identical one writes nothing.
        """
        if self.role(admin) != "admin":
            raise StoreError(
                f"只有管理员可以裁定 only an admin may adjudicate; {admin!r} is not one",
                message=message("store.only_admin_adjudicates"),
            )
        problems: list[str] = []
        if verdict not in VERDICTS:
            problems.append(f"判断 verdict {verdict!r} is not one of {', '.join(VERDICTS)}")
        la, lb = _answer_label(a, "a", problems), _answer_label(b, "b", problems)
        if not isinstance(note, str) or len(note) > MAX_NOTE:
            problems.append(
                f"说明 note: 最多 {MAX_NOTE:,} 字 must be text of at most {MAX_NOTE:,} characters"
            )
        if problems:
            raise StoreError("没有保存 adjudication not saved: " + "; ".join(problems))
        cited = self._cited_pair(item_id, la, lb)
        answer_labels = _answer_labels_json(_confirmed(la, cited["a"]), _confirmed(lb, cited["b"]))
        now = self._clock()
        with self._write() as con:
            if con.execute("SELECT 1 FROM items WHERE id = ?", (item_id,)).fetchone() is None:
                raise StoreError(
                    f"没有保存 adjudication not saved: no item {item_id!r}",
                    message=message("store.no_item", item=str(item_id)),
                )
            current = con.execute("SELECT * FROM adjudications WHERE item_id = ?", (item_id,)).fetchone()
            if current is not None and (current["verdict"], current["answer_labels"], current["note"]) == (
                verdict,
                answer_labels,
                note,
            ):
                return _adjudication_dict(current)
            if current is not None:
                con.execute(
                    f"INSERT INTO adjudication_history ({ADJUDICATION_FIELDS}, replaced_at) "
                    f"SELECT {ADJUDICATION_FIELDS}, ? FROM adjudications WHERE item_id = ?",
                    (now, item_id),
                )
            con.execute(
                f"INSERT OR REPLACE INTO adjudications ({ADJUDICATION_FIELDS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    item_id, verdict, answer_labels, note, admin,
                    now if current is None else current["created_at"], now,
                    1 if current is None else current["version"] + 1,
                ),
            )  # fmt: skip
            row = con.execute("SELECT * FROM adjudications WHERE item_id = ?", (item_id,)).fetchone()
        return _adjudication_dict(row)

    def adjudication(self, item_id: str) -> dict | None:
        """The item's current adjudication (``answer_labels`` parsed), or None."""
        row = self._one("SELECT * FROM adjudications WHERE item_id = ?", (item_id,))
        return None if row is None else _adjudication_dict(row)

    def adjudication_history(self, item_id: str) -> list[dict]:
        """Earlier adjudications of the item, oldest first, each with ``replaced_at``."""
        rows = self._all("SELECT * FROM adjudication_history WHERE item_id = ? ORDER BY version", (item_id,))
        return [_adjudication_dict(r) for r in rows]

    # -- tables for statistics, export and backups ---------------------------------------------

    def annotator_progress(self) -> pd.DataFrame:
        """One row per annotator: ``annotator, role, assigned, done, skipped, first_label_at,
        last_label_at`` (Unix times of their first and latest label, NaN before any)."""
        import pandas as pd

        rows = self._all(
            """SELECT a.name AS annotator, a.role,
                      (SELECT COUNT(*) FROM assignments s WHERE s.annotator = a.name) AS assigned,
                      (SELECT COUNT(*) FROM assignments s WHERE s.annotator = a.name AND s.status = 'done') AS done,
                      (SELECT COUNT(*) FROM assignments s WHERE s.annotator = a.name AND s.status = 'skipped')
                          AS skipped,
                      (SELECT MIN(created_at) FROM labels l WHERE l.annotator = a.name) AS first_label_at,
                      (SELECT MAX(updated_at) FROM labels l WHERE l.annotator = a.name) AS last_label_at
               FROM annotators a ORDER BY a.name"""
        )
        columns = ["annotator", "role", "assigned", "done", "skipped", "first_label_at", "last_label_at"]
        frame = pd.DataFrame([tuple(r) for r in rows], columns=columns)
        return frame.astype({"first_label_at": float, "last_label_at": float})

    def _label_rows(self, current_only: bool, source: str = "raw", cited: Cited | None = None) -> list[dict]:
        """The rows of :meth:`labels_frame` as dicts (None where a value is missing)."""
        return self._label_rows_by_source(current_only, (source,), cited)[source]

    def _label_rows_by_source(
        self, current_only: bool, sources: Sequence[str], cited: Cited | None = None
    ) -> dict[str, list[dict]]:
        """The rows of :meth:`labels_frame` for each of ``sources``, read and flattened once."""
        for source in sources:
            if source not in SOURCES:
                raise StoreError(f"source {source!r} is not one of {', '.join(SOURCES)}")
        fields = ", ".join(f"l.{f}" for f in LABEL_FIELDS.split(", "))
        item = "i.source, i.question, i.system_a, i.system_b"
        query = f"SELECT {fields}, 1 AS current, NULL AS replaced_at, {item} FROM labels l JOIN items i ON i.id = l.item_id"
        if not current_only:
            query += (
                f" UNION ALL SELECT {fields}, 0 AS current, l.replaced_at, {item} "
                "FROM label_history l JOIN items i ON i.id = l.item_id"
            )
        adjudicated: list = []
        with self._read() as con:
            rows = con.execute(query + " ORDER BY annotator, item_id, version").fetchall()
            if ADJUDICATED in sources:
                adj = f"a.item_id, a.verdict, a.answer_labels, a.note, a.created_at, a.updated_at, a.version, {item}"
                adj_query = (
                    f"SELECT {adj}, 1 AS current, NULL AS replaced_at FROM adjudications a "
                    "JOIN items i ON i.id = a.item_id"
                )
                if not current_only:
                    adj_query += (
                        f" UNION ALL SELECT {adj}, 0 AS current, a.replaced_at FROM adjudication_history a "
                        "JOIN items i ON i.id = a.item_id"
                    )
                adjudicated = con.execute(adj_query + " ORDER BY item_id, version").fetchall()
        lookup = self._cited_lookup(cited)
        flat = [_flat(r, lookup) for r in rows]
        out = {}
        if "raw" in sources:
            out["raw"] = flat
        if ADJUDICATED in sources:
            resolved = {r["item_id"] for r in adjudicated}
            out[ADJUDICATED] = [f for f in flat if f["item_id"] not in resolved]
            out[ADJUDICATED] += [_flat(_adjudicated_row(r), lookup) for r in adjudicated]
        return out

    def _cited_lookup(self, cited: Cited | None) -> Callable[[str, str], list[str]]:
        """``cited`` (else :attr:`cited`, else nothing is cited), remembered per (item, side) for one table."""
        function = cited if cited is not None else self.cited
        memo: dict[tuple[str, str], list[str]] = {}

        def lookup(item_id: str, side: str) -> list[str]:
            if function is None:
                return []
            if (item_id, side) not in memo:
                memo[item_id, side] = [str(k) for k in function(item_id, side)]
            return memo[item_id, side]

        return lookup

    def labels_frame(
        self, current_only: bool = True, source: str = "raw", cited: Cited | None = None
    ) -> pd.DataFrame:
        """One row per label (every version when ``current_only`` is False) with its item's columns.

        Columns (:data:`FRAME_COLUMNS`): the item (``system_a``, ``system_b``, ``question``…), the
        verdict un-swapped and as shown, ``winner`` (a system name, ``tie`` or ``both_bad``),
        ``rel_*``/``tlc_*`` per answer; per answer the statutes: ``n_statutes_*`` (labelled or
        cited), ``n_labelled_*`` (labelled correct or wrong), ``n_unlabelled_*`` (cited but
        unlabelled, and ``legacy_unticked``), ``n_hallucinated_*``, ``nhsr_*`` (the share labelled
        correct among the labelled ones, NaN when none is; LegalHalBench's NHSR as judged by a
        lawyer), ``none_wrong_*``, and ``hallucinated_*`` (keys) / ``statutes_*`` (key → code) as
        JSON text; ``legacy`` (a label of the old tick-only form); times as Unix floats.

        ``cited`` (item id, side) → statute keys, default :attr:`cited`: the statutes counted as
        unlabelled when the label lacks them; without either only labelled statutes are counted.
        ``source="adjudicated"``: an item with an adjudication has one row, annotator
        ``"adjudicated"``, instead of its annotators' rows.
        """
        return _labels_frame(self._label_rows(current_only, source, cited))

    def _statute_rows(self, label_rows: list[dict], cited: Cited | None) -> list[dict]:
        """The rows of :meth:`statute_labels_frame` of ``label_rows`` (:meth:`_label_rows`)."""
        lookup = self._cited_lookup(cited)
        rows = []
        for r in label_rows:
            for side in ("a", "b"):
                labelled = json.loads(r[f"statutes_{side}"])
                keys = list(labelled) + [k for k in lookup(r["item_id"], side) if k not in labelled]
                for statute in keys:
                    code = labelled.get(statute)
                    rows.append(
                        {
                            "annotator": r["annotator"],
                            "item_id": r["item_id"],
                            "side": side,
                            "system": r[f"system_{side}"],
                            "statute": statute,
                            "label": code,
                            "hallucinated": verdicts.STATUTE_HALLUCINATED.get(code),
                            "error_kind": verdicts.STATUTE_ERROR_KIND.get(code),
                            "legacy": r["legacy"],
                            "version": r["version"],
                            "current": r["current"],
                        }
                    )
        return rows

    def statute_labels_frame(
        self, current_only: bool = True, source: str = "raw", cited: Cited | None = None
    ) -> pd.DataFrame:
        """One row per (label, answer side, statute), unlabelled cited statutes included.

        Columns (:data:`STATUTE_COLUMNS`): ``annotator, item_id, side, system, statute``, ``label``
        (a code of :data:`eval_ui.verdicts.STATUTE_LABEL_TABLE`, None when unlabelled),
        ``hallucinated`` (True/False; None when unlabelled or ``legacy_unticked``), ``error_kind``
        (``number``/``content``/``repealed``/``not_found`` or None), ``legacy``, ``version``,
        ``current``. ``cited`` (item id, side) → statute keys, default :attr:`cited`: statutes it lists
        that a label lacks are rows with label None; with neither, only labelled statutes appear.
        ``source`` as in :meth:`labels_frame`.
        """
        return _statute_frame(self._statute_rows(self._label_rows(current_only, source, cited), cited))

    def labelled_systems(self) -> list[str]:
        """The systems of the items that have a current label, sorted (what :meth:`labels_frame`'s
        ``system_a`` and ``system_b`` columns hold, without reading the labels)."""
        rows = self._all(
            "SELECT DISTINCT i.system_a, i.system_b FROM items i WHERE EXISTS "
            "(SELECT 1 FROM labels l WHERE l.item_id = i.id)"
        )
        return sorted({name for r in rows for name in (r[0], r[1])})

    def tables(
        self, current_only: bool = True, sources: Sequence[str] = ("raw",), cited: Cited | None = None
    ) -> dict[str, tuple[pd.DataFrame, pd.DataFrame]]:
        """``{source: (labels_frame, statute_labels_frame)}`` for each of ``sources``, from one read.

        The same frames as :meth:`labels_frame` and :meth:`statute_labels_frame` (the statistics tab
        needs both, raw and adjudicated): the labels are read and flattened once, not four times.
        """
        by_source = self._label_rows_by_source(current_only, tuple(dict.fromkeys(sources)), cited)
        return {
            source: (_labels_frame(rows), _statute_frame(self._statute_rows(rows, cited)))
            for source, rows in by_source.items()
        }

    def _export_rows(self, kind: str, current_only: bool, source: str, cited: Cited | None) -> list[dict]:
        """Rows of an export: labels with times as datetimes and lists as lists; or statute rows."""
        if kind == "statute_labels":
            return self._statute_rows(self._label_rows(current_only, source, cited), cited)
        out = []
        for r in self._label_rows(current_only, source, cited):
            row = dict(r)
            for c in TIME_COLUMNS:
                row[c] = None if r[c] is None else datetime.fromtimestamp(r[c], tz=UTC).replace(microsecond=0)
            for side in ("a", "b"):
                row[f"hallucinated_{side}"] = json.loads(r[f"hallucinated_{side}"])
                row[f"statutes_{side}"] = _statute_array(json.loads(r[f"statutes_{side}"]))
            out.append(row)
        return out

    def export(
        self,
        path: str | Path,
        fmt: str = "csv",
        current_only: bool = True,
        source: str = "raw",
        *,
        kind: str = "labels",
        cited: Cited | None = None,
        actor: str | None = None,
    ) -> int:
        """Write the labels (``kind="labels"``: one row per item and annotator, :meth:`labels_frame`'s
        columns) or the statute labels (``kind="statute_labels"``: :meth:`statute_labels_frame`) as
        CSV, JSONL or Parquet, atomically; returns the row count.

        Times are ISO 8601 in UTC with the offset (``2026-11-24T05:20:00+00:00``; Parquet: a UTC
        timestamp column); ``hallucinated_*`` are arrays of statute keys and ``statutes_*`` arrays of
        ``{"statute", "label"}`` (a label's own statutes; unlabelled ones are in the statute table).
        JSONL is UTF-8 without ``\\u`` escapes; the CSV has a BOM for Excel, its arrays as JSON text and
        no cell that starts a formula (OWASP); the Parquet loads with
        ``datasets.load_dataset("parquet", data_files=path)``.
        """
        if fmt not in EXPORT_FORMATS:
            raise StoreError(f"export format {fmt!r} is not one of {', '.join(EXPORT_FORMATS)}")
        if kind not in ("labels", "statute_labels"):
            raise StoreError(f"export kind {kind!r} is not labels or statute_labels")
        rows = self._export_rows(kind, current_only, source, cited)
        columns = STATUTE_COLUMNS if kind == "statute_labels" else FRAME_COLUMNS
        if fmt == "parquet":
            data = _parquet_bytes(rows, _arrow_schema(kind))
        elif fmt == "jsonl":
            data = "".join(json.dumps(_jsonable(r), ensure_ascii=False) + "\n" for r in rows).encode("utf-8")
        else:
            import pandas as pd

            cells = [{c: _csv_cell(r[c]) for c in columns} for r in rows]
            # No text cell may start a formula, and CRLF rows (RFC 4180) make a cell holding a line
            # break or a carriage return quoted, so it cannot split a row.
            frame = pd.DataFrame(cells, columns=list(columns)).map(_spreadsheet_safe)
            text = frame.to_csv(index=False, lineterminator="\r\n")
            data = text.encode("utf-8-sig")  # the BOM makes Excel read Chinese text correctly
        write_atomically(path, data)
        if actor is not None:
            details = {
                "format": fmt,
                "kind": kind,
                "source": source,
                "history": not current_only,
                "rows": len(rows),
            }
            self._record_export(actor, details)
        return len(rows)

    def _record_export(self, actor: str, details: dict) -> None:
        """Log an export (:meth:`record`); a disk that refuses the row does not stop the export, which
        must work on a full or read-only disk too: the server log says it was not recorded."""
        try:
            self.record(actor, "export", "", details)
        except (StoreError, sqlite3.Error) as exc:
            logger.error("an export by %s was not written to the audit log: %s", short_name(actor), exc)

    def export_adjudications(self, path: str | Path) -> int:
        """Every current adjudication as JSONL (UTF-8, ISO 8601 UTC times, answer_labels as objects)."""
        rows = self._all(
            "SELECT a.*, i.question, i.system_a, i.system_b FROM adjudications a "
            "JOIN items i ON i.id = a.item_id ORDER BY a.item_id"
        )
        lines = []
        for r in rows:
            row = _adjudication_dict(r) | {k: r[k] for k in ("question", "system_a", "system_b")}
            row["winner"] = {"A": r["system_a"], "B": r["system_b"]}.get(r["verdict"], r["verdict"])
            for c in ("created_at", "updated_at"):
                row[c] = iso_utc(row[c])
            lines.append(json.dumps(row, ensure_ascii=False) + "\n")
        write_atomically(path, "".join(lines).encode("utf-8"))
        return len(rows)

    def export_all(
        self, folder: str | Path, current_only: bool = True, *, actor: str | None = None
    ) -> list[Path]:
        """Write every export into ``folder``: ``labels.{csv,jsonl,parquet}``,
        ``statute_labels.{csv,jsonl,parquet}`` and ``adjudications.jsonl`` (the annotators' raw labels;
        adjudications in their own file). Returns the paths written. With ``actor`` one ``export`` row
        goes to the audit log (the scheduled Hub backup passes none: it would fill the log)."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        paths = []
        for kind in ("labels", "statute_labels"):
            for fmt in EXPORT_FORMATS:
                path = folder / f"{kind}.{fmt}"
                self.export(path, fmt, current_only, kind=kind)
                paths.append(path)
        path = folder / "adjudications.jsonl"
        self.export_adjudications(path)
        if actor is not None:
            files = [p.name for p in [*paths, path]]
            self._record_export(actor, {"kind": "all", "files": files, "history": not current_only})
        return [*paths, path]

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


def write_hub_folder(db: str | Path, folder: str | Path, cited: Cited | None = None) -> list[Path]:
    """What the Hub push uploads, written into ``folder``: a snapshot of the database ``db`` (SQLite's
    backup API, never the live file) and every export of :meth:`AnnotationStore.export_all` (``cited``:
    as the store's, for the unlabelled statutes); nothing when ``db`` does not exist yet. Returns the
    paths written."""
    db, folder = Path(db), Path(folder)
    if not db.exists():
        return []
    store = AnnotationStore(db, cited=cited)
    try:
        return [store.snapshot(folder / db.name), *store.export_all(folder)]
    finally:
        store.close()


def start_sync(
    data_dir: str | Path,
    repo_id: str | None,
    every_minutes: float = 10,
    token: str | None = None,
    cited: Cited | None = None,
) -> CommitScheduler | None:
    """Back the store up to a private Hugging Face dataset repo every ``every_minutes``; None without a repo.

    The live database is never uploaded while it is being written: before each scheduled commit
    :func:`write_hub_folder` takes a snapshot with SQLite's backup API and writes the exports (CSV,
    JSONL, Parquet; ``cited`` lists each answer's statutes, as the app's store has them) into
    ``data_dir/hub_snapshot/``, and only that folder is uploaded
    (``huggingface_hub.CommitScheduler``, which skips unchanged files).
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
            write_hub_folder(db, folder, cited)
            return super().push_to_hub()

    return SnapshotScheduler(
        repo_id=repo_id,
        repo_type="dataset",
        folder_path=folder,
        every=every_minutes,
        token=token,
        private=True,
        ignore_patterns=["*.tmp", ".*.tmp"],
    )
