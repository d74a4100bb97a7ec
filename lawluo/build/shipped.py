"""Build the prebuilt BM25 indexes of :mod:`lawluo.retrieval.shipped`: ``python -m lawluo build index``.

    build_shipped(settings)                  # assets/bm25/*.npz, {name: {documents, bytes, fingerprint}}
    index_documents(settings)["statutes"]    # (documents, fingerprint extra, source files)

The documents of each index are read from the settings' assets exactly as the app reads them, so a file
built here matches the fingerprint the app computes at start. Above the searchers: they never import it.
"""

from __future__ import annotations

import logging
from pathlib import Path

from ..data_sources import file_sha256
from ..domains import load_domains
from ..law.database import StatuteDB
from ..retrieval.bm25 import BM25Index, fingerprint
from ..retrieval.casebank import load_case_bank
from ..retrieval.expansions import load_expansions
from ..retrieval.shipped import SHIPPED_DIR, shipped_path
from ..retrieval.statutes import (
    _read_supervision,
    index_expansions_path,
    statute_documents,
    statute_index_key,
)
from ..retrieval.votes import training_questions
from ..tolc.material import FILENAME as MATERIAL
from ..tolc.material import load_material

log = logging.getLogger(__name__)


def index_documents(settings, db=None) -> dict[str, tuple[list[str], str, dict[str, Path]]]:
    """name → (documents, fingerprint extra, source files) of every index the app loads, read from the
    settings' assets exactly as the app reads them (an index whose asset is missing is left out)."""
    assets = Path(settings.assets_dir)
    db = db or StatuteDB(settings.statutes_path)
    expansions_path = index_expansions_path(settings)  # None unless statute_expansions is on
    expansions = load_expansions(expansions_path) if expansions_path else {}  # ({} when the file is missing)
    out = {
        "statutes": (
            statute_documents(db, expansions),
            statute_index_key(db),
            {"statutes.sqlite": Path(settings.statutes_path)}
            | ({expansions_path.name: expansions_path} if expansions and expansions_path.exists() else {}),
        )
    }
    if Path(settings.cases_path).exists():
        out["cases"] = (
            [c.search_text for c in load_case_bank(settings.cases_path, load_domains(settings.domains_file))],
            "",
            {"cases.jsonl.gz": Path(settings.cases_path), "domains": Path(settings.domains_file)},
        )
    if (assets / MATERIAL).exists():
        out["clarifications"] = (
            [i.text for i in load_material(assets / MATERIAL)],
            "",
            {MATERIAL: assets / MATERIAL},
        )
    supervision = assets / "supervision.jsonl.gz"
    if supervision.exists():
        out["statute-votes"] = (
            training_questions(_read_supervision(supervision))[0],
            "",
            {"supervision.jsonl.gz": supervision},
        )
    return out


def source_hashes(sources: dict[str, Path]) -> dict[str, str]:
    return {name: file_sha256(path) for name, path in sorted(sources.items())}


def build_shipped(settings, folder: Path | None = None) -> dict[str, dict]:
    """Build every index from the settings' assets into ``folder`` (default ``assets_dir/bm25``); returns
    name → {documents, bytes, fingerprint}."""
    folder = Path(folder) if folder else Path(settings.assets_dir) / SHIPPED_DIR
    summary = {}
    for name, (texts, extra, sources) in index_documents(settings).items():
        path = shipped_path(folder, name)
        fp = fingerprint(texts, extra)
        log.info("building the %s index (%d documents)", name, len(texts))
        BM25Index.build(texts).save(path, fp, source_hashes(sources))
        summary[name] = {"documents": len(texts), "bytes": path.stat().st_size, "fingerprint": fp}
    return summary
