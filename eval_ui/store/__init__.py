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

from .accounts import INVITABLE_NAME, ROLES
from .annotation_store import AnnotationStore
from .assignment import ASSIGNMENT_MODES, VIEW_RESOLUTION_S, Assignment
from .audit import AUDIT_ACTIONS, MAX_AUDIT_DETAILS
from .connection import BUSY_TIMEOUT_S, POOL_SIZE
from .drafts import MAX_DRAFT_BYTES, Draft
from .errors import SchemaError, StoreError, StoreWriteError, short_name
from .export import EXPORT_FORMATS, FORMULA_STARTS, iso_utc
from .frames import (
    ADJUDICATED,
    FRAME_COLUMNS,
    NUMERIC_COLUMNS,
    SOURCES,
    STATUTE_COLUMNS,
    TIME_COLUMNS,
    Cited,
)
from .hub import STORE_FILENAME, start_sync, write_hub_folder
from .records import (
    LABEL_FORMAT,
    MAX_COMMENT,
    MAX_KEY,
    MAX_NOTE,
    MAX_STATUTES,
    SHOWN_VERDICTS,
    SIDES,
    STATUSES,
    VERDICTS,
    AnswerLabel,
    LabelInput,
    SavedLabel,
    shown_verdict,
    unswap_verdict,
)
from .schema import ADJUDICATION_FIELDS, LABEL_FIELDS, MIGRATIONS, Migration

__all__ = [
    "ADJUDICATED",
    "ADJUDICATION_FIELDS",
    "ASSIGNMENT_MODES",
    "AUDIT_ACTIONS",
    "BUSY_TIMEOUT_S",
    "EXPORT_FORMATS",
    "FORMULA_STARTS",
    "FRAME_COLUMNS",
    "INVITABLE_NAME",
    "LABEL_FIELDS",
    "LABEL_FORMAT",
    "MAX_AUDIT_DETAILS",
    "MAX_COMMENT",
    "MAX_DRAFT_BYTES",
    "MAX_KEY",
    "MAX_NOTE",
    "MAX_STATUTES",
    "MIGRATIONS",
    "NUMERIC_COLUMNS",
    "POOL_SIZE",
    "ROLES",
    "SHOWN_VERDICTS",
    "SIDES",
    "SOURCES",
    "STATUSES",
    "STATUTE_COLUMNS",
    "STORE_FILENAME",
    "TIME_COLUMNS",
    "VERDICTS",
    "VIEW_RESOLUTION_S",
    "AnnotationStore",
    "AnswerLabel",
    "Assignment",
    "Cited",
    "Draft",
    "LabelInput",
    "Migration",
    "SavedLabel",
    "SchemaError",
    "StoreError",
    "StoreWriteError",
    "iso_utc",
    "short_name",
    "shown_verdict",
    "start_sync",
    "unswap_verdict",
    "write_hub_folder",
]
