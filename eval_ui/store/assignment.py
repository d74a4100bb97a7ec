"""Assignment: which annotator labels which item, in what order and with which answer on the left.

Assignments are reservations: one left untouched for ``reserve_idle_s`` is given to someone else. The
position and swap of an assignment are draws (:func:`_draw`), secret unless a seed is given.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import math
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from eval_ui.items import Item

from .errors import StoreError, short_name
from .items import _item_of
from .records import shown_verdict, unswap_verdict

logger = logging.getLogger("eval_ui.store")

#: How :meth:`AnnotationStore.next_item` orders an annotator's items (setting ``annotation_assignment``).
ASSIGNMENT_MODES = ("overlap_first", "balanced")
#: A view refreshes an assignment's ``seen_at`` at most this often (seconds): reloading a page is not a write.
VIEW_RESOLUTION_S = 60.0


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


def _pool(con: sqlite3.Connection, annotators: list[str] | None, overlap: int) -> list[str]:
    """Who :meth:`AssignmentMixin.assign` draws from: ``annotators`` (each registered), default every
    role-'annotator' annotator by name; :class:`StoreError` when they are fewer than ``overlap``."""
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
    return pool


def _holdings(con: sqlite3.Connection, stale_before: float) -> dict[str, dict[str, float | None]]:
    """item → holder → when the holder last touched it, if that is before ``stale_before`` and the
    assignment has no label and is not done (a stale reservation); None for a live one."""
    have: dict[str, dict[str, float | None]] = {}
    for r in con.execute(
        "SELECT s.item_id, s.annotator, s.status, MAX(s.updated_at, COALESCE(s.seen_at, 0)) AS touched, "
        "EXISTS (SELECT 1 FROM labels l WHERE l.annotator = s.annotator AND l.item_id = s.item_id) "
        "AS labelled FROM assignments s"
    ):
        stale = r["status"] != "done" and not r["labelled"] and r["touched"] < stale_before
        have.setdefault(r["item_id"], {})[r["annotator"]] = r["touched"] if stale else None
    return have


class AssignmentMixin:
    """Assigning, serving and skipping items (a part of :class:`~eval_ui.store.AnnotationStore`)."""

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
            pool = _pool(con, annotators, overlap)
            key: int | str = seed if seed is not None else self._secret(con)
            stale_before = now - self.reserve_idle_s if self.reserve_idle_s > 0 else -math.inf
            load = dict.fromkeys(pool, 0)
            for r in con.execute("SELECT annotator, COUNT(*) FROM assignments GROUP BY annotator"):
                load[r[0]] = r[1]
            have = _holdings(con, stale_before)
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
