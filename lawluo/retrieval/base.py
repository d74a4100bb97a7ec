"""The one interface every text index implements, so statute and case search can swap or fuse them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol


class TextIndex(Protocol):
    """An index over a fixed list of documents, addressed by their position in that list."""

    def search(self, query: str, k: int) -> list[tuple[int, float]]:
        """Return up to ``k`` ``(document position, score)`` pairs, best first."""
        ...

    def __len__(self) -> int: ...


class Hit(Protocol):
    """A search result as the firm passes it on: a dict for the prompt, the page and the saved file."""

    def as_dict(self) -> dict: ...


class StatuteSearch(Protocol):
    """What the firm and the agents ask of statute search (:class:`~lawluo.retrieval.statutes.StatuteSearcher`
    is one; a test may pass a stub). A searcher may also offer ``lookup(query)`` (what the database says of a
    law or article it cannot give) and ``colloquial`` (lay words → statutory terms); callers ask with
    ``getattr``."""

    def search(self, query: str, k: int = 5) -> Sequence[Hit]: ...


class CaseSearch(Protocol):
    """What the firm asks of case search (:class:`~lawluo.retrieval.cases.CaseSearcher` is one)."""

    def search(self, query: str, k: int = 5) -> Sequence[Hit]: ...

    def similar(self, query: str, k: int, domain: str | None = None) -> Sequence[Hit]: ...

    def get(self, case_id: str) -> object | None: ...
