"""The one interface every text index implements, so statute and case search can swap or fuse them."""

from __future__ import annotations

from typing import Protocol


class TextIndex(Protocol):
    """An index over a fixed list of documents, addressed by their position in that list."""

    def search(self, query: str, k: int) -> list[tuple[int, float]]:
        """Return up to ``k`` ``(document position, score)`` pairs, best first."""
        ...

    def __len__(self) -> int: ...
