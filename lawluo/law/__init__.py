"""The statute database, law-name normalisation, citation extraction and citation checking."""

from __future__ import annotations

from functools import lru_cache

from .database import StatuteDB


@lru_cache(maxsize=1)
def default_db() -> StatuteDB:
    """The statute database of the configured assets directory, loaded once per process."""
    from ..config import Settings

    return StatuteDB(Settings.load().statutes_path)
