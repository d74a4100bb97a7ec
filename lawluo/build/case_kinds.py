"""Writing the labelled questions' kinds of case (:mod:`lawluo.retrieval.case_kind`): ``python -m lawluo build case-kinds``.

The questions are the everyday ones the statute search learns from (:data:`~lawluo.retrieval.supervision.LAY_SETS`:
fresh1–4, train1–4) and the case search's two development sets, each file checked against the sha256 it was frozen
with; a question's kind is its ``case_type``. Embedded with the statute search's encoder and mapped by its query
adapter, written beside the statute vectors (``assets/statute_vectors/case_kinds.npz``). The held-out lay sets
(fresh5 on) and the development sets that nothing learns from (train5–8) are never among them. ``python -m lawluo
build query-adapter`` rewrites the file too: it is valid for one adapter only.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from ..files import asset_summary
from ..retrieval.case_kind import FILENAME, build
from ..retrieval.supervision import LAY_DIR, LAY_SETS, read_frozen

#: The labelled files (in :data:`~lawluo.retrieval.supervision.LAY_DIR`) → their sha256 when frozen.
KIND_SETS = {
    **LAY_SETS,
    "case_questions.dev.jsonl": "e06dd8528283f83c3bbd85bb162b203465e662283d56800558636627cf8d6c00",
    "case_questions.dev2.jsonl": "e386f96090c33c7ea9c9bf8f387ba2ff4c97297bdf1f2af03a66aa7a55451ae0",
}


def labelled_questions(
    folder: Path = LAY_DIR, sets: dict[str, str] = KIND_SETS
) -> tuple[list[str], list[str]]:
    """The questions of ``sets`` that carry a ``case_type``, and those types. A file whose bytes changed since
    it was frozen raises ``ValueError`` (:func:`~lawluo.retrieval.supervision.read_frozen`)."""
    questions, kinds = [], []
    for name, sha256 in sets.items():
        for line in read_frozen(Path(folder) / name, sha256).decode("utf-8").splitlines():
            if not line.strip():
                continue
            row = json.loads(line)
            kind, question = row.get("case_type"), row.get("question")
            if isinstance(kind, str) and kind.strip() and isinstance(question, str) and question.strip():
                questions.append(question)
                kinds.append(kind.strip())
    return questions, kinds


def write_case_kinds(
    dense, directory: Path, folder: Path = LAY_DIR, sets: dict[str, str] = KIND_SETS
) -> dict:
    """Embed the labelled questions with ``dense`` (and its adapter) and write ``case_kinds.npz`` in ``directory``."""
    questions, kinds = labelled_questions(folder, sets)
    memory = build(questions, kinds, dense)
    path = Path(directory) / FILENAME
    memory.save(path)
    return asset_summary(path, path.read_bytes(), None, questions=len(memory), kinds=len(set(memory.kinds)))


def build_and_write(settings) -> dict:
    """``build case-kinds``: the file for the shipped statute vectors and query adapter."""
    from ..law.database import StatuteDB
    from ..retrieval.dense import load_statute_vectors, statute_vectors_dir

    t = time.perf_counter()
    dense = load_statute_vectors(settings, StatuteDB(settings.statutes_path))  # DenseEncoderUnavailable
    summary = write_case_kinds(dense, statute_vectors_dir(settings))  # CaseKindError: no query adapter
    return summary | {"seconds": round(time.perf_counter() - t, 1)}
