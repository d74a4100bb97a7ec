"""Hubness reduction for the dense first stage (issue 39: everyday questions drifting to family-law hubs).

    offsets = hub_offsets(article_vectors, question_vectors, beta=0.5)     # one number per article row
    dense = dense.with_hub_offsets(offsets)                                # search ranks by cos − offset
    python -m lawluo build query-adapter                                   # writes both beside the vectors

In a high-dimensional embedding space some documents are near to many queries whatever they ask ("hubs";
Radovanović, Nanopoulos & Ivanović, 2010, "Hubs in Space", JMLR 11). Here e5 puts 民法典 1127 (the order of
inheritance), 1084 and 1091 in the first three of everyday questions about loans, neighbours or deposits.
Cross-domain similarity local scaling (CSLS; Conneau, Lample, Ranzato, Denoyer & Jégou, 2018, "Word
Translation Without Parallel Data", ICLR, §2.3) discounts each document by how close it is to queries in
general: ``r(a)`` is the mean cosine of article ``a`` to its ``k`` nearest reference questions, and the
search ranks by ``cos(q, a) − beta · r(a)`` (CSLS is ``2·cos − r(a) − r(q)``; ``r(q)`` is the same for
every article of one question, so it does not change the ranking). The reference questions need no label:
the supervision's training questions (never an evaluation row), mapped like a query (with the adapter).

Computing ``r`` takes one pass of article × question similarities in blocks (~15 s for 55,950 articles and
5,300 questions on 2 cores); a search reads raw cosines for a wider pool (:data:`POOL`) and reorders it.
"""

from __future__ import annotations

import logging
import os
import zipfile
from pathlib import Path

import numpy as np

from ..files import write_npz

#: Nearest reference questions whose mean cosine is an article's hubness (CSLS's K).
K = 10
#: How much of the hubness is taken off (chosen on fresh lay sets 1–3 as development data: 0, 0.3, 0.5, 0.7;
#: docs/results/hubness.md).
BETA = 0.3
#: Raw cosine candidates read before the offsets reorder them. For the search's pool of 300 this gives the
#: exact ranking over every article for 95.8 % of the fresh lay questions, mean overlap 0.9999
#: (``python benchmarks/hubness_grid.py``).
POOL = 1000
FILENAME = "hub_offsets.npz"
BLOCK = 4096


log = logging.getLogger(__name__)


class HubnessError(ValueError):
    """A hub-offsets file that cannot be used; the message is in Chinese and English."""


def hubness(article_vectors: np.ndarray, reference_vectors: np.ndarray, k: int = K) -> np.ndarray:
    """Each article's mean cosine to its ``k`` nearest reference vectors (unit rows both), float32.

    >>> a = np.array([[1.0, 0.0], [0.0, 1.0]], dtype=np.float32)
    >>> q = np.array([[1.0, 0.0], [0.8, 0.6], [0.6, 0.8]], dtype=np.float32)
    >>> [round(float(x), 2) for x in hubness(a, q, k=2)]
    [0.9, 0.7]
    """
    if len(reference_vectors) == 0:
        raise HubnessError("没有参照问题 no reference questions to measure hubness against")
    k = min(k, len(reference_vectors))
    out = np.empty(len(article_vectors), dtype=np.float32)
    reference = np.ascontiguousarray(reference_vectors, dtype=np.float32).T
    for start in range(0, len(article_vectors), BLOCK):
        sims = np.asarray(article_vectors[start : start + BLOCK], dtype=np.float32) @ reference
        out[start : start + BLOCK] = -np.partition(-sims, k - 1, axis=1)[:, :k].mean(axis=1)
    return out


def hub_offsets(
    article_vectors: np.ndarray, reference_vectors: np.ndarray, beta: float = BETA, k: int = K
) -> np.ndarray:
    """What the search takes off each article's cosine: ``beta ·`` :func:`hubness`."""
    return (beta * hubness(article_vectors, reference_vectors, k)).astype(np.float32)


def save(path: Path, offsets: np.ndarray, fingerprint: str, beta: float, k: int, reference: str) -> str:
    """Write the offsets with what they were computed for; returns the file's sha256."""
    return write_npz(
        path,
        offsets=np.asarray(offsets, dtype=np.float32),
        fingerprint=np.array(fingerprint),
        beta=np.array(beta, dtype=np.float64),
        k=np.array(k, dtype=np.int64),
        reference=np.array(reference),
    )


def load(path: Path, fingerprint: str, rows: int) -> np.ndarray:
    """The offsets saved at ``path`` for the vectors of ``fingerprint`` (``rows`` of them).

    Raises:
        HubnessError: unreadable, for other vectors, or not ``rows`` finite numbers in [0, 1].
    """
    try:
        with np.load(path, allow_pickle=False) as data:
            offsets = np.asarray(data["offsets"], dtype=np.float32)
            saved = str(data["fingerprint"])
    except (OSError, KeyError, ValueError, EOFError, zipfile.BadZipFile) as exc:
        raise HubnessError(f"{path}: 无法读取 unreadable hub offsets: {exc}") from None
    if saved != fingerprint:
        raise HubnessError(
            f"{path}: 与法条向量不符 computed for other vectors; run: python -m lawluo build query-adapter"
        )
    if offsets.shape != (rows,) or not np.all(np.isfinite(offsets)) or offsets.min() < 0 or offsets.max() > 1:
        raise HubnessError(f"{path}: 数值不合法 not {rows} offsets in [0, 1]")
    offsets.setflags(write=False)
    return offsets


def load_beside(directory: str | os.PathLike[str], fingerprint: str, rows: int) -> np.ndarray | None:
    """The offsets saved beside the vectors of ``fingerprint`` in ``directory`` (what the app searches with);
    None (logged) when there are none or they cannot be used."""
    path = Path(directory) / FILENAME
    if not path.exists():
        return None
    try:
        return load(path, fingerprint, rows)
    except HubnessError as exc:
        log.warning("Searching without hubness reduction: %s", exc)
        return None
