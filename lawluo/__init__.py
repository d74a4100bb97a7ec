"""LawLuo: a Chinese law firm run by LLM agents, and tools that check legal answers against real statutes."""

from __future__ import annotations

__version__ = "0.1.0"
