"""Dense retrieval: a sentence-transformers encoder and a faiss inner-product index over unit vectors.

Documents and queries are embedded by the same bi-encoder (Reimers & Gurevych 2019, "Sentence-BERT:
Sentence Embeddings using Siamese BERT-Networks", EMNLP) and L2-normalised, so the inner product that
an exact ``faiss.IndexFlatIP`` computes is the cosine similarity (Johnson, Douze & Jégou 2019,
"Billion-scale similarity search with GPUs", IEEE Trans. Big Data).

torch, sentence_transformers and faiss are imported inside the functions that need them: importing
sentence_transformers alone takes seconds, and the app imports this module at start-up.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

from ..files import write_atomically

if TYPE_CHECKING:
    from collections.abc import Callable

    import faiss
    import numpy as np
    from sentence_transformers import SentenceTransformer

    # A hub id or local directory, or an already-loaded model.
    EncoderLike: TypeAlias = str | os.PathLike[str] | SentenceTransformer

logger = logging.getLogger(__name__)

INDEX_FILE = "dense.faiss"
METADATA_FILE = "dense.json"
FORMAT_VERSION = 1


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
    ``(document position, cosine similarity)`` pairs, best first.
    """

    def __init__(self, index: faiss.Index, encoder: SentenceTransformer, encoder_name: str, fingerprint: str):
        self._index = index
        self._encoder = encoder
        self.encoder_name = encoder_name
        self.fingerprint = fingerprint

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

        vectors = _embed_documents(model, texts, batch_size)
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
        vector = _embed(self._encoder.encode_query, [query], batch_size=1, show_progress_bar=False)
        if vector.shape[1] != self.dimension:
            raise ValueError(
                f"The encoder makes {vector.shape[1]}-dimensional vectors but the index holds "
                f"{self.dimension}-dimensional ones (built with {self.encoder_name!r}); rebuild the index."
            )
        scores, positions = self._index.search(vector, min(k, len(self)))
        return [(int(i), float(s)) for i, s in zip(positions[0], scores[0], strict=True) if i >= 0]

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
        }
        index_tmp = directory / f"{INDEX_FILE}.tmp"
        faiss.write_index(self._index, str(index_tmp))
        os.replace(index_tmp, directory / INDEX_FILE)
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
        metadata = _read_metadata(directory / METADATA_FILE)
        model = load_encoder(encoder)
        index = faiss.read_index(str(directory / INDEX_FILE))
        if index.ntotal != metadata["count"] or index.d != metadata["dimension"]:
            raise ValueError(f"{directory}: the faiss index does not match {METADATA_FILE}; rebuild it.")
        model_dimension = _dimension(model)
        if model_dimension and model_dimension != index.d:
            raise ValueError(
                f"{directory} was built with {metadata['encoder']!r} ({index.d} dimensions), but the given "
                f"encoder makes {model_dimension}-dimensional vectors."
            )
        return cls(index, model, metadata["encoder"], metadata["fingerprint"])

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
                return cls.load(directory, model)
            except (OSError, ValueError, RuntimeError) as exc:  # faiss reports a corrupt file as RuntimeError
                logger.warning("Rebuilding the dense index in %s: %s", directory, exc)
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


def _embed_documents(model: SentenceTransformer, texts: list[str], batch_size: int) -> np.ndarray:
    import numpy as np

    if not texts:  # sentence-transformers returns shape (0,) for no input; faiss needs (0, dimension)
        return np.zeros((0, _dimension(model)), dtype=np.float32)
    return _embed(model.encode_document, texts, batch_size=batch_size, show_progress_bar=None)


def _dimension(model: SentenceTransformer) -> int:
    """The encoder's output size, 0 when it does not know; sentence-transformers 5.x and older call
    the method ``get_sentence_embedding_dimension``."""
    get = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
    return get() or 0


_METADATA_KEYS = ("encoder", "fingerprint", "count", "dimension")


def _read_metadata(path: Path) -> dict[str, Any]:
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
