"""Writing the labelled questions' memories (:mod:`lawluo.retrieval.label_memory`) beside the statute vectors.

    python -m lawluo build case-kinds      # assets/statute_vectors/case_kinds.npz: their kinds of case
    python -m lawluo build lay-domains     # assets/statute_vectors/lay_domains.npz: their domains
    python -m lawluo build lay-memory      # assets/statute_vectors/lay_memory.npz: their articles

The questions are the everyday ones the statute search learns from (:data:`~lawluo.retrieval.supervision.LAY_SETS`:
fresh1–4, train1–4) and, for the kinds, the case search's two development sets; each file is checked against the
sha256 it was frozen with. A question's kind is its ``case_type``, its domain its ``domain``, its articles its gold
as the supervision reads them (:func:`~lawluo.retrieval.supervision.read_lay_pairs`: resolved in the database, a
question with none left out; :mod:`lawluo.retrieval.lay_memory`). Embedded with the
statute search's encoder and mapped by its query adapter. The held-out lay sets (fresh5 on) and the development sets
that nothing learns from (train5–8) are never among them. ``python -m lawluo build query-adapter`` rewrites the
three files: each is valid for one adapter only.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path

from ..agents import domain_vote
from ..files import asset_summary
from ..retrieval import case_kind, lay_memory
from ..retrieval.label_memory import build
from ..retrieval.supervision import LAY_DIR, LAY_SETS, read_frozen, read_lay_pairs

#: The files (in :data:`~lawluo.retrieval.supervision.LAY_DIR`) labelled with kinds of case → their sha256 when frozen.
KIND_SETS = {
    **LAY_SETS,
    "case_questions.dev.jsonl": "e06dd8528283f83c3bbd85bb162b203465e662283d56800558636627cf8d6c00",
    "case_questions.dev2.jsonl": "e386f96090c33c7ea9c9bf8f387ba2ff4c97297bdf1f2af03a66aa7a55451ae0",
}
#: The files labelled with domains: the everyday questions the statute search learns from (session 38's trial).
DOMAIN_SETS = dict(LAY_SETS)


def labelled_questions(
    folder: Path = LAY_DIR, sets: dict[str, str] = KIND_SETS, field: str = "case_type"
) -> tuple[list[str], list[str]]:
    """The questions of ``sets`` that carry a ``field`` (a non-empty string), and its values. A file whose bytes
    changed since it was frozen raises ``ValueError`` (:func:`~lawluo.retrieval.supervision.read_frozen`)."""
    questions, labels = [], []
    for name, sha256 in sets.items():
        for line in read_frozen(Path(folder) / name, sha256).decode("utf-8").splitlines():
            if not line.strip():
                continue
            row = json.loads(line)
            label, question = row.get(field), row.get("question")
            if isinstance(label, str) and label.strip() and isinstance(question, str) and question.strip():
                questions.append(question)
                labels.append(label.strip())
    return questions, labels


def write_memory(
    dense, path: Path, folder: Path = LAY_DIR, sets: dict[str, str] = KIND_SETS, field: str = "case_type"
) -> dict:
    """Embed the questions of ``sets`` labelled with ``field`` by ``dense`` (and its adapter) and write them to
    ``path``; the asset's summary."""
    questions, labels = labelled_questions(folder, sets, field)
    memory = build(questions, labels, dense)  # LabelMemoryError: no query adapter, no label
    path = Path(path)
    memory.save(path)
    return asset_summary(path, path.read_bytes(), None, questions=len(memory), labels=len(set(memory.labels)))


def write_lay_memory(dense, db, path: Path, folder: Path = LAY_DIR, sets: dict[str, str] = LAY_SETS) -> dict:
    """Embed the lay questions of ``sets`` that have gold articles in ``db`` by ``dense`` (and its adapter) and write
    their :class:`~lawluo.retrieval.lay_memory.ArticleMemory` to ``path``; the asset's summary."""
    pairs = read_lay_pairs(db, Counter(), folder, sets)
    memory = lay_memory.build([p.question for p in pairs], [p.articles for p in pairs], db, dense)
    path = Path(path)
    memory.save(path)
    articles = {a for arts in memory.articles for a in arts}
    return asset_summary(path, path.read_bytes(), None, questions=len(memory), articles=len(articles))


#: build target → (file name, labelled sets, field).
MEMORIES = {
    "case-kinds": (case_kind.FILENAME, KIND_SETS, "case_type"),
    "lay-domains": (domain_vote.FILENAME, DOMAIN_SETS, "domain"),
}


def build_and_write(settings, what: str) -> dict:
    """``build case-kinds``, ``lay-domains`` or ``lay-memory``: the file for the shipped statute vectors and query
    adapter."""
    from ..law.database import StatuteDB
    from ..retrieval.dense import load_statute_vectors, statute_vectors_dir

    t = time.perf_counter()
    db = StatuteDB(settings.statutes_path)
    dense = load_statute_vectors(settings, db)  # DenseEncoderUnavailable
    folder = statute_vectors_dir(settings)
    if what == "lay-memory":
        summary = write_lay_memory(dense, db, folder / lay_memory.FILENAME)
    else:
        filename, sets, field = MEMORIES[what]
        summary = write_memory(dense, folder / filename, sets=sets, field=field)
    return summary | {"seconds": round(time.perf_counter() - t, 1)}
