"""The statute database, law-name normalisation, citation extraction and citation checking."""

from __future__ import annotations

from .database import StatuteDB

__all__ = ["StatuteDB"]
