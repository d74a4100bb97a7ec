"""A learned linear map of the question's e5 vector, the article vectors left as they are (issue 39, item 3).

    adapter = fit(question_vectors, golds, article_vectors)    # golds: the article rows each question cites
    adapted = adapter.apply(question_vectors)                  # unit rows, searched against the same vectors
    adapter.save(folder / FILENAME); QueryAdapter.load(folder / FILENAME, fingerprint)

Fine-tuning e5 itself on the supervision's lay pairs hurt its top ranks (issue 39: 3,000 pairs, 38 minutes,
R@10 0.515 → 0.479), and every change to the document tower means re-embedding 55,950 articles (~85 minutes
here). A query-side adapter avoids both: the question's vector ``q`` becomes ``q' = (q + q·A) / ‖q + q·A‖``
with one ``d × d`` matrix ``A`` (384 × 384 for e5-small; ``A = 0`` is the encoder unchanged), trained while
the article vectors stay fixed — the linear query adapters of embedding search ("Embedding Adapters",
Chroma technical report, 2024), the asymmetric query-only tuning of Karpukhin et al. 2020 §5.2 reduced to
one layer. Applying it costs one 384 × 384 product per question.

**Loss.** For a batch of questions, the softmax over *every* article vector (55,950 rows: no sampled
negatives, so no false negatives drawn at random) at temperature ``tau``, and the log of the probability
mass on the question's cited articles (a question may cite several):
``L = −mean_i log Σ_{g ∈ gold_i} softmax_j(cos(q'_i, d_j) / tau)[g] + λ‖A‖²`` (the InfoNCE of van den Oord
et al. 2018 with all documents as negatives, multi-positive as in Khosla et al. 2020, Eq. 2).

**Skew.** The supervision's consultations cite a few family-law articles hundreds of times (民法典1079: 524
rows), which pulled everyday questions to them when e5 was fine-tuned. :func:`capped` keeps at most
``cap`` questions per cited article (seeded order), so a hub article teaches no more than any other.

**Held out.** Anything that scores with the adapter on the questions it was fitted on is over-confident:
:func:`cross_fit` gives each question the vector of an adapter fitted without its fold (grouped folds), which
the reranker and relevance builds use for their training questions (cross-fitting, Chernozhukov et al.
2018, §3).
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

#: The adapter file, beside the statute vectors it was fitted against (``assets/statute_vectors/``).
FILENAME = "query_adapter.npz"
FORMAT = 1

#: The fit's settings, chosen by the mean held-out-source R@10 of the dense stage alone over the four
#: families of ``bench retrieval --leave-source-out`` (``benchmarks/query_adapter_grid.py``).
CAP = 1
TAU = 0.02
EPOCHS = 4
LEARNING_RATE = 1e-3
WEIGHT_DECAY = 1e-3
BATCH = 64
SEED = 0


class AdapterError(ValueError):
    """An adapter file that cannot be used (unreadable, another format, fitted against other vectors)."""


@dataclass(frozen=True)
class QueryAdapter:
    """The matrix ``I + A`` (float32, ``d × d``) and what it was fitted against.

    >>> import numpy as np
    >>> a = QueryAdapter(np.array([[0.0, 1.0], [1.0, 0.0]], dtype=np.float32), "fp", 2)
    >>> [round(float(x), 2) for x in a.apply(np.array([[3.0, 4.0]], dtype=np.float32))[0]]
    [0.8, 0.6]
    """

    matrix: np.ndarray
    fingerprint: str
    questions: int

    def apply(self, vectors: np.ndarray) -> np.ndarray:
        """Unit rows ``normalise(vectors · matrix)`` (float32)."""
        import numpy as np

        out = np.asarray(vectors, dtype=np.float32) @ self.matrix
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return np.ascontiguousarray(out / np.maximum(norms, 1e-12), dtype=np.float32)

    def digest(self) -> str:
        """The sha256 of the matrix: what a file of vectors mapped by this adapter records, so that it is
        refused beside another adapter (:mod:`lawluo.retrieval.case_kind`)."""
        import hashlib

        import numpy as np

        return hashlib.sha256(np.ascontiguousarray(self.matrix, dtype=np.float32).tobytes()).hexdigest()

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the matrix and its metadata to ``path`` (``.npz``, no pickles), atomically."""
        import numpy as np

        from ..files import write_npz

        meta = json.dumps(
            {"format": FORMAT, "fingerprint": self.fingerprint, "questions": self.questions}, sort_keys=True
        )
        write_npz(path, matrix=self.matrix.astype(np.float32), meta=np.array(meta))

    @classmethod
    def load(cls, path: str | os.PathLike[str], fingerprint: str | None = None) -> QueryAdapter:
        """Read an adapter written by :meth:`save`; with ``fingerprint``, it must have been fitted against
        the vectors of that fingerprint (those in the folder beside it).

        Raises:
            AdapterError: the file is unreadable, of another format, or was fitted against other vectors.
        """
        import numpy as np

        from ..files import read_npz

        try:
            arrays, meta = read_npz(path, ("matrix", "meta"))
            matrix = np.asarray(arrays["matrix"], dtype=np.float32)
        except (ValueError, TypeError) as exc:
            raise AdapterError(f"{path}: 无法读取查询适配器 cannot read the query adapter: {exc}") from None
        if not isinstance(meta, dict) or meta.get("format") != FORMAT:
            raise AdapterError(f"{path}: 格式不符 not a format-{FORMAT} query adapter; rebuild it")
        if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1] or not np.isfinite(matrix).all():
            raise AdapterError(f"{path}: 矩阵无效 the matrix is not a finite square matrix; rebuild it")
        if fingerprint is not None and meta.get("fingerprint") != fingerprint:
            raise AdapterError(
                f"{path}: 适配器与向量不符 fitted against other statute vectors; run "
                "python -m lawluo build query-adapter"
            )
        return cls(matrix, str(meta.get("fingerprint")), int(meta.get("questions", 0)))


def capped(golds: Sequence[Sequence[int]], cap: int = CAP, seed: int = SEED) -> list[int]:
    """Indices of the questions kept when each cited article keeps at most ``cap`` of them (0: no cap).

    Questions are visited in a seeded random order; one is kept while any of its articles is under the cap.
    Questions without a cited article are never kept.

    >>> kept = capped([[7], [7], [7], [8], []], cap=2, seed=0)   # two of the three questions on article 7
    >>> len(kept), 3 in kept, 4 in kept
    (3, True, False)
    """
    import numpy as np

    seen: Counter[int] = Counter()
    kept = []
    for i in np.random.default_rng(seed).permutation(len(golds)).tolist():
        gold = list(golds[i])
        if not gold or (cap and all(seen[g] >= cap for g in gold)):
            continue
        seen.update(gold)
        kept.append(i)
    return sorted(kept)


def fit(
    question_vectors: np.ndarray,
    golds: Sequence[Sequence[int]],
    article_vectors: np.ndarray,
    fingerprint: str = "",
    cap: int = CAP,
    tau: float = TAU,
    epochs: int = EPOCHS,
    learning_rate: float = LEARNING_RATE,
    weight_decay: float = WEIGHT_DECAY,
    batch: int = BATCH,
    seed: int = SEED,
) -> QueryAdapter:
    """Fit ``A`` (module docstring) on the questions ``question_vectors`` (unit rows), each citing the rows
    ``golds[i]`` of ``article_vectors`` (unit rows; an empty list: the question is not used). Seeded and
    single-threaded in its order of batches, so the same inputs give the same matrix on one machine.

    Raises:
        ValueError: no question cites an article, or the dimensions differ.
    """
    import numpy as np
    import torch

    questions = np.asarray(question_vectors, dtype=np.float32)
    articles = np.asarray(article_vectors, dtype=np.float32)
    if questions.ndim != 2 or articles.ndim != 2 or questions.shape[1] != articles.shape[1]:
        raise ValueError(
            f"question vectors {questions.shape} and article vectors {articles.shape} must share a dimension"
        )
    kept = capped(golds, cap, seed)
    if not kept:
        raise ValueError("no question cites an article with a vector: nothing to fit the adapter on")
    d = questions.shape[1]
    generator = torch.Generator().manual_seed(seed)
    q_all = torch.from_numpy(questions)
    docs = torch.from_numpy(articles)
    eye = torch.eye(d)
    a = torch.zeros(d, d, requires_grad=True)
    optimiser = torch.optim.AdamW([a], lr=learning_rate, weight_decay=0.0)
    order = torch.tensor(kept)
    for _ in range(epochs):
        for chunk in order[torch.randperm(len(order), generator=generator)].split(batch):
            q = q_all[chunk] @ (eye + a)
            logits = (q / q.norm(dim=1, keepdim=True)) @ docs.T / tau
            positive = torch.stack(
                [torch.logsumexp(logits[j, list(golds[i])], 0) for j, i in enumerate(chunk.tolist())]
            )
            loss = (torch.logsumexp(logits, 1) - positive).mean() + weight_decay * (a**2).sum()
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
    matrix = (eye + a.detach()).numpy().astype(np.float32)
    return QueryAdapter(matrix, fingerprint, len(kept))


def cross_fit(
    question_vectors: np.ndarray,
    golds: Sequence[Sequence[int]],
    article_vectors: np.ndarray,
    folds: Sequence[tuple[Sequence[int], Sequence[int]]],
    **kwargs,
) -> np.ndarray:
    """Each question's adapted vector from an adapter fitted on the other folds' questions only; ``folds``
    are (train indices, test indices) pairs, e.g. :func:`lawluo.retrieval.evaluation.grouped_folds`'s.
    A question in no fold, or in a fold whose complement cites nothing, keeps its own vector."""
    import numpy as np

    questions = np.asarray(question_vectors, dtype=np.float32)
    out = questions.copy()
    for train, test in folds:
        train = set(np.asarray(train).tolist())
        train_golds = [golds[i] if i in train else [] for i in range(len(golds))]
        if not any(train_golds):
            continue
        test = np.asarray(test, dtype=np.int64)
        out[test] = fit(questions, train_golds, article_vectors, **kwargs).apply(questions[test])
    return out
