"""The comparison items in the store: imported all or nothing, read back as :class:`~eval_ui.items.Item`."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from eval_ui.items import Item, item_problems

from .errors import StoreError


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


class ItemsMixin:
    """Importing and reading items (a part of :class:`~eval_ui.store.AnnotationStore`)."""

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
