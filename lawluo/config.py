"""One settings object for the whole app, read from the environment.

Step 2 of the roadmap extends this into a YAML-backed, per-role model configuration; for now it
holds what the statute database, the citation checker and search need.

Environment variables (all optional):

- ``LAWLUO_ASSETS_DIR``: where the built assets live (default: ``assets/`` beside the package).
- ``LAWLUO_CACHE_DIR``: where search indexes are cached (default: ``<assets>/index``).
- ``LAWLUO_STATUTE_ENCODER`` / ``LAWLUO_CASE_ENCODER``: a sentence-transformers model (hub id or
  local path) that turns on dense retrieval for statutes / cases; unset means BM25 only.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Settings:
    assets_dir: Path = field(
        default=PROJECT_ROOT / "assets", metadata={"help": "Directory holding the built assets."}
    )
    cache_dir: Path | None = field(
        default=None, metadata={"help": "Directory for cached search indexes (default: <assets>/index)."}
    )
    statute_encoder: str | None = field(
        default=None, metadata={"help": "sentence-transformers model for dense statute search."}
    )
    case_encoder: str | None = field(
        default=None, metadata={"help": "sentence-transformers model for dense case search."}
    )

    def __post_init__(self) -> None:
        object.__setattr__(self, "assets_dir", Path(self.assets_dir))
        if self.cache_dir is None:
            object.__setattr__(self, "cache_dir", self.assets_dir / "index")
        else:
            object.__setattr__(self, "cache_dir", Path(self.cache_dir))

    @property
    def statutes_path(self) -> Path:
        return self.assets_dir / "statutes.sqlite"

    @property
    def cases_path(self) -> Path:
        return self.assets_dir / "cases.jsonl.gz"

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> Settings:
        env = os.environ if environ is None else environ
        kwargs: dict[str, object] = {}
        if env.get("LAWLUO_ASSETS_DIR"):
            kwargs["assets_dir"] = Path(env["LAWLUO_ASSETS_DIR"])
        if env.get("LAWLUO_CACHE_DIR"):
            kwargs["cache_dir"] = Path(env["LAWLUO_CACHE_DIR"])
        for key in ("statute_encoder", "case_encoder"):
            value = env.get(f"LAWLUO_{key.upper()}")
            if value:
                kwargs[key] = value
        return cls(**kwargs)
