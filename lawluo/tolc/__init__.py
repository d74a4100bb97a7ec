"""ToLC, the Tree of Legal Clarifications: yes/no legal elements proposed by a model or, without one, taken
from the domain's clarification material or similar cases, marked by the client, turned into the facts the
lawyer's answer rests on (LawLuo paper §3.2, Algorithm 1)."""

from __future__ import annotations

from .builder import DEFAULT_HEIGHT, DEFAULT_K, TreeBuilder
from .tree import MARKS, ROOT_ID, TREE_SOURCES, Node, Tree, statement_key

__all__ = [
    "DEFAULT_HEIGHT",
    "DEFAULT_K",
    "MARKS",
    "ROOT_ID",
    "TREE_SOURCES",
    "Node",
    "Tree",
    "TreeBuilder",
    "statement_key",
]
