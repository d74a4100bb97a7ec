"""BM25 (Robertson & Zaragoza, 2009) over jieba tokens, built once and cached on disk with ``bm25s``.

Tokenising 64,000 articles with jieba takes tens of seconds; loading the saved sparse matrix takes a
fraction of one. An index directory holds bm25s' arrays plus ``fingerprint.json``; the fingerprint
(a hash of the documents and the tokeniser version) decides whether a cached index can be reused.
"""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from .tokenize import TOKENIZER_VERSION, tokenize

log = logging.getLogger(__name__)


def fingerprint(texts: Sequence[str], extra: str = "") -> str:
    digest = hashlib.sha256(f"{TOKENIZER_VERSION}|{extra}|{len(texts)}".encode())
    for text in texts:
        digest.update(text.encode("utf-8"))
        digest.update(b"\x00")
    return digest.hexdigest()


class BM25Index:
    """A :class:`~lawluo.retrieval.base.TextIndex` over a fixed list of documents."""

    def __init__(self, model, size: int):
        self._model = model
        self._size = size

    def __len__(self) -> int:
        return self._size

    @classmethod
    def build(cls, texts: Sequence[str]) -> BM25Index:
        import bm25s

        model = bm25s.BM25()
        model.index([tokenize(t) for t in texts], show_progress=False)
        return cls(model, len(texts))

    def save(self, directory: Path, fp: str) -> None:
        directory = Path(directory)
        tmp = directory.with_name(directory.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        self._model.save(str(tmp), show_progress=False)
        (tmp / "fingerprint.json").write_text(json.dumps({"fingerprint": fp, "size": self._size}))
        shutil.rmtree(directory, ignore_errors=True)
        tmp.rename(directory)

    @classmethod
    def load(cls, directory: Path) -> BM25Index:
        import bm25s

        meta = json.loads((Path(directory) / "fingerprint.json").read_text())
        model = bm25s.BM25.load(str(directory), show_progress=False, mmap=False)
        return cls(model, meta["size"])

    @staticmethod
    def cached_fingerprint(directory: Path) -> str | None:
        try:
            return json.loads((Path(directory) / "fingerprint.json").read_text())["fingerprint"]
        except (OSError, ValueError, KeyError):
            return None

    @classmethod
    def load_or_build(cls, directory: Path, texts: Sequence[str], extra: str = "") -> BM25Index:
        """Load the cached index if it was built from these texts; otherwise build and cache it."""
        fp = fingerprint(texts, extra)
        if cls.cached_fingerprint(directory) == fp:
            try:
                return cls.load(directory)
            except (OSError, ValueError) as exc:
                log.warning("cached index %s unreadable (%s); rebuilding", directory, exc)
        log.warning("building BM25 index in %s for %d documents (one-off)", directory, len(texts))
        index = cls.build(texts)
        try:
            index.save(directory, fp)
        except OSError as exc:  # read-only assets (e.g. some Spaces): keep the index in memory
            log.warning("could not cache index in %s: %s", directory, exc)
        return index

    def scores(self, tokens: list[str]) -> np.ndarray:
        """BM25 score of every document for already-tokenised query terms."""
        if not tokens:
            return np.zeros(self._size, dtype=np.float32)
        return np.asarray(self._model.get_scores(tokens), dtype=np.float32)

    def search(self, query: str, k: int) -> list[tuple[int, float]]:
        if not query or not query.strip():
            raise ValueError("empty query: type a few words to search for")
        return top_k(self.scores(tokenize(query)), k)


def top_k(scores: np.ndarray, k: int) -> list[tuple[int, float]]:
    """Positions and values of the ``k`` largest positive scores, best first."""
    k = min(k, len(scores))
    if k <= 0:
        return []
    idx = np.argpartition(-scores, k - 1)[:k]
    idx = idx[np.argsort(-scores[idx], kind="stable")]
    return [(int(i), float(scores[i])) for i in idx if scores[i] > 0]
