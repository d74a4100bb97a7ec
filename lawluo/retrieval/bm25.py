"""BM25 (Robertson & Zaragoza, 2009) over jieba tokens, stored compactly and verified by a fingerprint.

Tokenising 64,000 articles with jieba takes about a minute on two cores; loading the stored index takes
a fraction of a second. An index is kept as one compact file (:data:`FORMAT`, a deterministic ``.npz``):
the vocabulary, each document's length and, token by token, the documents that contain it (gaps
between document numbers, uint16 when they fit) with the term frequency (uint8 when it fits). The BM25
scores are recomputed from these at load, exactly as ``bm25s`` (Lucene variant, k1 = 1.5, b = 0.75)
computes them; ``tests/test_shipped_index.py`` checks the two agree to the last bit.

The file's ``meta`` holds the fingerprint (:func:`fingerprint`: a sha256 of the tokeniser version, an
extra key and every document's text) and the sha256 of the asset files it was built from. An index is
used only when its fingerprint is the one of the documents it is asked to search; otherwise it is
rebuilt (:func:`BM25Index.load_or_build`), in a background thread when asked, and cached.

Where an index comes from (:meth:`BM25Index.load_or_build`): the shipped file under ``assets/bm25/``
(committed, built by ``python -m lawluo build index``) → the cache (``cache_dir``, default
``assets/index/``, not committed) → a build, written to the cache.
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import math
import os
import threading
import zipfile
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..text import TOKENIZER_VERSION, tokenize

log = logging.getLogger(__name__)

FORMAT = "lawluo-bm25-v1"
#: bm25s' defaults, which every index of the project was built with (Lucene's BM25).
K1, B = 1.5, 0.75
#: The cache file inside an index directory.
CACHE_FILE = "index.npz"
_ZIP_DATE = (1980, 1, 1, 0, 0, 0)


def fingerprint(texts: Sequence[str], extra: str = "") -> str:
    digest = hashlib.sha256(f"{TOKENIZER_VERSION}|{extra}|{len(texts)}".encode())
    for text in texts:
        digest.update(text.encode("utf-8"))
        digest.update(b"\x00")
    return digest.hexdigest()


class IndexFileError(ValueError):
    """A stored index that cannot be used (unreadable, inconsistent, another format)."""


@dataclass(frozen=True)
class _Matrix:
    """bm25s' token-major (CSC) score matrix: the scores of token ``t`` are ``data[indptr[t]:indptr[t+1]]``
    for the documents ``indices[…]``."""

    vocab: dict[str, int]
    data: np.ndarray
    indices: np.ndarray
    indptr: np.ndarray


@dataclass(frozen=True)
class _Counts:
    """What an index is stored as: the sorted vocabulary, document lengths (tokens), and per token (in
    vocabulary order) its document frequency, then its documents (ascending) and term frequencies."""

    vocab: list[str]
    lengths: np.ndarray  # int64, one per document
    df: np.ndarray  # int64, one per token
    docs: np.ndarray  # integers, sum(df)
    tf: np.ndarray  # positive integers, sum(df)

    @classmethod
    def from_tokens(cls, corpus: Sequence[Sequence[str]]) -> _Counts:
        vocab = sorted({t for doc in corpus for t in doc})
        ids = {t: i for i, t in enumerate(vocab)}
        tok_parts, doc_parts, tf_parts = [], [], []
        for d, doc in enumerate(corpus):
            counts = Counter(ids[t] for t in doc)
            tok_parts.append(np.fromiter(counts.keys(), dtype=np.int64, count=len(counts)))
            tf_parts.append(np.fromiter(counts.values(), dtype=np.int64, count=len(counts)))
            doc_parts.append(np.full(len(counts), d, dtype=np.int64))
        empty = np.zeros(0, dtype=np.int64)
        tok = np.concatenate(tok_parts) if tok_parts else empty
        docs = np.concatenate(doc_parts) if doc_parts else empty
        tf = np.concatenate(tf_parts) if tf_parts else empty
        order = np.argsort(tok, kind="stable")  # by token, documents ascending within each
        return cls(
            vocab,
            np.array([len(doc) for doc in corpus], dtype=np.int64),
            np.bincount(tok, minlength=len(vocab)).astype(np.int64),
            docs[order],
            tf[order],
        )

    def matrix(self) -> _Matrix:
        """The scores, computed as bm25s 0.3 does (``bm25s.scoring``): idf with ``math.log`` in float64
        stored as float32; ``tfc = tf / (k1 * ((1 - b) + b * l_d / l_avg) + tf)`` in float64; their
        product stored as float32. (In place, one float64 array at a time: the same operations in the
        same order, so the same bits.)"""
        n = len(self.lengths)
        idf = np.array(
            [math.log(1 + (n - df + 0.5) / (df + 0.5)) for df in self.df.tolist()], dtype=np.float32
        )
        indptr = np.zeros(len(self.vocab) + 1, dtype=np.int64)
        np.cumsum(self.df, out=indptr[1:])
        data = np.empty(len(self.docs), dtype=np.float32)
        if n and len(self.docs):
            norm = K1 * ((1 - B) + B * self.lengths.astype(np.float64) / self.lengths.mean())
            x = norm[self.docs]  # float64
            x += self.tf  # k1 * (…) + tf
            np.divide(self.tf, x, out=x)  # tfc
            x *= idf[np.repeat(np.arange(len(self.vocab), dtype=np.int32), self.df)]
            data[:] = x
        return _Matrix(
            {t: i for i, t in enumerate(self.vocab)}, data, self.docs.astype(np.int32, copy=False), indptr
        )

    def arrays(self) -> dict[str, np.ndarray]:
        """The compact arrays: gaps between a token's documents (its first document as is)."""
        gaps = self.docs.copy()
        if len(gaps):
            starts = np.zeros(len(self.df), dtype=np.int64)
            np.cumsum(self.df[:-1], out=starts[1:])
            gaps[1:] -= self.docs[:-1]
            gaps[starts[self.df > 0]] = self.docs[starts[self.df > 0]]
        return {
            "lengths": self.lengths.astype(_unsigned(self.lengths)),
            "df": self.df.astype(np.uint32),
            "gaps": gaps.astype(_unsigned(gaps)),
            "tf": self.tf.astype(_unsigned(self.tf)),
        }

    @classmethod
    def from_arrays(cls, vocab: list[str], arrays: Mapping[str, np.ndarray]) -> _Counts:
        lengths = arrays["lengths"].astype(np.int64)
        df = arrays["df"].astype(np.int64)
        gaps, tf = arrays["gaps"], arrays["tf"]
        if len(df) != len(vocab) or int(df.sum()) != len(gaps) or len(tf) != len(gaps):
            raise IndexFileError("the index's arrays do not fit together")
        docs = np.cumsum(gaps, dtype=np.int64)  # then minus, per token, the running sum before its first
        starts = np.zeros(len(df), dtype=np.int64)
        np.cumsum(df[:-1], out=starts[1:])
        used = df > 0
        docs -= np.repeat(docs[starts[used]] - gaps[starts[used]], df[used])
        if len(docs) and (docs.min() < 0 or docs.max() >= len(lengths) or tf.min() < 1):
            raise IndexFileError("the index names documents it does not have")
        return cls(vocab, lengths, df, docs.astype(np.int32), tf)


def _unsigned(values: np.ndarray):
    top = int(values.max()) if len(values) else 0
    for dtype in (np.uint8, np.uint16, np.uint32):
        if top <= np.iinfo(dtype).max:
            return dtype
    return np.uint64


def write_index_file(path: Path, counts: _Counts, meta: dict) -> None:
    """Write ``counts`` and ``meta`` as a ``.npz`` whose bytes depend on nothing else (fixed member order
    and dates), atomically."""
    path = Path(path)
    members = {
        "meta": json.dumps({"format": FORMAT, **meta}, ensure_ascii=False, sort_keys=True).encode(),
        "vocab": json.dumps(counts.vocab, ensure_ascii=False).encode(),
    }
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        with zipfile.ZipFile(tmp, "w") as zf:
            items = [(k, np.frombuffer(v, dtype=np.uint8)) for k, v in members.items()]
            for name, array in items + list(counts.arrays().items()):
                buf = io.BytesIO()
                np.lib.format.write_array(buf, np.ascontiguousarray(array), allow_pickle=False)
                info = zipfile.ZipInfo(f"{name}.npy", date_time=_ZIP_DATE)
                info.compress_type = zipfile.ZIP_DEFLATED
                info.create_system = 0
                info.external_attr = 0o644 << 16
                zf.writestr(info, buf.getvalue(), compresslevel=9)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def read_meta(path: Path) -> dict | None:
    """The ``meta`` of a stored index, or None when there is none or it cannot be read."""
    try:
        with np.load(path, allow_pickle=False) as z:
            meta = json.loads(z["meta"].tobytes().decode("utf-8"))
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, UnicodeDecodeError):
        return None
    return meta if isinstance(meta, dict) and meta.get("format") == FORMAT else None


def read_index_file(path: Path) -> tuple[_Counts, dict]:
    """The counts and meta of a stored index; :class:`IndexFileError` when it cannot be used."""
    try:
        with np.load(path, allow_pickle=False) as z:
            meta = json.loads(z["meta"].tobytes().decode("utf-8"))
            vocab = json.loads(z["vocab"].tobytes().decode("utf-8"))
            arrays = {k: z[k] for k in ("lengths", "df", "gaps", "tf")}
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, UnicodeDecodeError) as exc:
        raise IndexFileError(f"unreadable index {path}: {exc}") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise IndexFileError(f"{path} is not a {FORMAT} index")
    if not isinstance(vocab, list) or not all(isinstance(t, str) for t in vocab):
        raise IndexFileError(f"{path}: the vocabulary is not a list of tokens")
    if meta.get("size") != len(arrays["lengths"]):
        raise IndexFileError(f"{path}: its size does not match its documents")
    return _Counts.from_arrays(vocab, arrays), meta


class BM25Index:
    """A :class:`~lawluo.retrieval.base.TextIndex` over a fixed list of documents.

    An index being built in the background (:meth:`load_or_build` with ``background=True``) answers
    ``len`` at once; the first search waits until it is built.
    """

    def __init__(self, matrix: _Matrix | None, size: int, *, counts: _Counts | None = None):
        self._matrix = matrix
        self._size = size
        self.counts = counts
        self._ready = threading.Event()
        self._error: BaseException | None = None
        if matrix is not None:
            self._ready.set()

    def __len__(self) -> int:
        return self._size

    @classmethod
    def from_tokens(cls, corpus: Sequence[Sequence[str]], keep_counts: bool = True) -> BM25Index:
        """The index of already-tokenised documents; ``keep_counts`` keeps what :meth:`save` writes."""
        counts = _Counts.from_tokens(corpus)
        return cls(counts.matrix(), len(corpus), counts=counts if keep_counts else None)

    @classmethod
    def build(cls, texts: Sequence[str]) -> BM25Index:
        return cls.from_tokens([tokenize(t) for t in texts])

    @classmethod
    def load(cls, path: Path) -> tuple[BM25Index, dict]:
        """The index stored in ``path`` and its meta (:class:`IndexFileError` when unusable)."""
        counts, meta = read_index_file(path)
        return cls(counts.matrix(), len(counts.lengths)), meta

    def save(self, path: Path, fp: str, sources: Mapping[str, str] | None = None) -> None:
        """Store the index in ``path`` (a file) with its fingerprint and the sha256 of its sources."""
        if self.counts is None:
            raise ValueError("this index keeps no counts to save")
        write_index_file(
            path, self.counts, {"fingerprint": fp, "size": self._size, "sources": dict(sources or {})}
        )

    @staticmethod
    def cached_fingerprint(directory: Path) -> str | None:
        meta = read_meta(Path(directory) / CACHE_FILE)
        return meta.get("fingerprint") if meta else None

    @classmethod
    def load_or_build(
        cls,
        directory: Path,
        texts: Sequence[str],
        extra: str = "",
        *,
        shipped: Path | None = None,
        background: bool = False,
    ) -> BM25Index:
        """The index of ``texts``: the ``shipped`` file or the cache in ``directory`` when their fingerprint
        is the one of these texts, else built (in a thread when ``background``) and cached in ``directory``.
        Why a stored index is not used is logged."""
        fp = fingerprint(texts, extra)
        cache = Path(directory) / CACHE_FILE
        for path in (shipped, cache):
            if path is None or not Path(path).exists():
                continue
            meta = read_meta(path)
            if meta is None:
                log.warning("index %s unreadable; not used", path)
                continue
            if meta.get("fingerprint") != fp:
                log.warning(
                    "index %s was built from other documents (fingerprint %.12s, the documents' %.12s); "
                    "not used — `python -m lawluo build index` rebuilds the shipped one",
                    path,
                    meta.get("fingerprint"),
                    fp,
                )
                continue
            try:
                index, _ = cls.load(path)
            except IndexFileError as exc:
                log.warning("%s; not used", exc)
                continue
            log.info("index %s loaded (%d documents)", path, len(index))
            return index
        if shipped is not None and not Path(shipped).exists():
            log.warning("no shipped index %s", shipped)

        def build() -> BM25Index:
            log.warning("building BM25 index in %s for %d documents (one-off)", directory, len(texts))
            index = cls.build(texts)
            try:
                index.save(cache, fp)
            except OSError as exc:  # read-only assets (e.g. some Spaces): keep the index in memory
                log.warning("could not cache index in %s: %s", directory, exc)
            index.counts = None  # only saving needs them
            return index

        if not background:
            return build()
        return cls.in_background(build, len(texts))

    @classmethod
    def in_background(cls, build: Callable[[], BM25Index], size: int) -> BM25Index:
        """An index of ``size`` documents that ``build`` makes in a daemon thread; searches wait for it."""
        index = cls(None, size)

        def run() -> None:
            try:
                built = build()
                index._matrix, index.counts = built._matrix, built.counts
            except BaseException as exc:  # noqa: BLE001 — re-raised to every search
                index._error = exc
                log.error("building the BM25 index failed: %s", exc)
            finally:
                index._ready.set()

        threading.Thread(target=run, name="bm25-build", daemon=True).start()
        return index

    @property
    def ready(self) -> bool:
        """False while the index is being built in the background."""
        return self._ready.is_set()

    def matrix(self) -> _Matrix:
        """The score matrix (waits for a background build)."""
        self._ready.wait()
        if self._error is not None:
            raise RuntimeError(f"the search index could not be built: {self._error}") from self._error
        return self._matrix

    @property
    def vocabulary(self) -> Mapping[str, int]:
        return self.matrix().vocab

    def document_frequency(self, token: str) -> int:
        """How many documents contain ``token`` (0 for an unknown token)."""
        m = self.matrix()
        t = m.vocab.get(token)
        return 0 if t is None else int(m.indptr[t + 1] - m.indptr[t])

    def scores(self, tokens: list[str]) -> np.ndarray:
        """BM25 score of every document for already-tokenised query terms (a repeated term counts again),
        summed term by term in query order as bm25s does."""
        scores = np.zeros(self._size, dtype=np.float32)
        if not tokens:
            return scores
        m = self.matrix()
        for token in tokens:
            t = m.vocab.get(token)
            if t is not None:
                start, end = m.indptr[t], m.indptr[t + 1]
                np.add.at(scores, m.indices[start:end], m.data[start:end])
        return scores

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
