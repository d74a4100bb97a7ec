"""Reciprocal rank fusion: combine the rankings of several indexes (BM25, dense) into one."""

from __future__ import annotations

from collections.abc import Sequence

from lawluo.retrieval.base import TextIndex


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[tuple[int, float]]],
    k: int,
    c: int = 60,
    weights: Sequence[float] | None = None,
) -> list[tuple[int, float]]:
    """Fuse ranked lists of ``(document position, score)`` pairs by reciprocal rank.

    Each document scores ``sum_i weights[i] / (c + rank_i(d))`` over the rankings ``i`` that contain it,
    where ``rank_i(d)`` counts from 1; the original scores are ignored, so scales that do not compare
    (BM25 against cosine) need no calibration. Cormack, Clarke & Büttcher 2009, "Reciprocal Rank Fusion
    outperforms Condorcet and individual Rank Learning Methods", SIGIR, section 2 (where ``c`` is called
    ``k`` and set to 60).

    Args:
        rankings: one list per retriever, best first. A document listed twice in one ranking counts at
            its better rank.
        k: how many fused results to return.
        c: the constant that damps the weight of the top ranks.
        weights: one weight per ranking (default: all 1).

    Returns:
        Up to ``k`` ``(document position, fused score)`` pairs, best first; equal scores are ordered by
        document position, so the result is deterministic.

    Example:
        BM25 ranks documents 3, 1, 2 and the dense index ranks 1, 4; with ``c = 60``::

            doc 1: 1/(60+2) + 1/(60+1) = 0.016129 + 0.016393 = 0.032522
            doc 3: 1/(60+1)                                   = 0.016393
            doc 4: 1/(60+2)                                   = 0.016129
            doc 2: 1/(60+3)                                   = 0.015873

        >>> fused = reciprocal_rank_fusion([[(3, 9.1), (1, 7.4), (2, 2.0)], [(1, 0.83), (4, 0.80)]], k=3)
        >>> [(doc, round(score, 6)) for doc, score in fused]
        [(1, 0.032522), (3, 0.016393), (4, 0.016129)]
    """
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}.")
    if c < 0:
        raise ValueError(f"c must be non-negative, got {c}.")
    if weights is None:
        weights = [1.0] * len(rankings)
    if len(weights) != len(rankings):
        raise ValueError(
            f"Got {len(weights)} weights for {len(rankings)} rankings; give one weight per ranking."
        )
    scores: dict[int, float] = {}
    for ranking, weight in zip(rankings, weights, strict=True):
        for doc, rank in _best_ranks(ranking).items():
            scores[doc] = scores.get(doc, 0.0) + weight / (c + rank)
    fused = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
    return fused[:k]


def _best_ranks(ranking: Sequence[tuple[int, float]]) -> dict[int, int]:
    """Map each document to its first (best) 1-based rank in ``ranking``."""
    ranks: dict[int, int] = {}
    for rank, (doc, _score) in enumerate(ranking, start=1):
        ranks.setdefault(doc, rank)
    return ranks


class FusedIndex:
    """A ``TextIndex`` that searches several indexes over the same documents and fuses their hits with
    :func:`reciprocal_rank_fusion`.

    Args:
        indexes: the indexes to fuse, all over the same list of documents.
        weights: one weight per index (default: all 1).
        depth: how many hits to take from each index; a search for more than ``depth`` results takes
            ``k`` from each instead.
    """

    def __init__(self, indexes: Sequence[TextIndex], weights: Sequence[float] | None = None, depth: int = 50):
        if not indexes:
            raise ValueError("FusedIndex needs at least one index.")
        sizes = {len(index) for index in indexes}
        if len(sizes) != 1:
            raise ValueError(f"FusedIndex needs indexes over the same documents; got sizes {sorted(sizes)}.")
        if weights is not None and len(weights) != len(indexes):
            raise ValueError(f"Got {len(weights)} weights for {len(indexes)} indexes.")
        if depth < 1:
            raise ValueError(f"depth must be at least 1, got {depth}.")
        self.indexes = list(indexes)
        self.weights = None if weights is None else list(weights)
        self.depth = depth

    def __len__(self) -> int:
        return len(self.indexes[0])

    def search(self, query: str, k: int) -> list[tuple[int, float]]:
        """Return up to ``k`` ``(document position, fused score)`` pairs, best first."""
        if k < 1:
            raise ValueError(f"k must be at least 1, got {k}.")
        depth = max(self.depth, k)
        rankings = [index.search(query, depth) for index in self.indexes]
        return reciprocal_rank_fusion(rankings, k, weights=self.weights)


def rerank(
    ranking: Sequence[int], similarity: dict[int, float], depth: int, weight: float, c: int = 60
) -> list[int]:
    """Rerank the top ``depth`` of a sparse ``ranking`` (document positions, best first) with dense similarities.

    Each candidate of the top ``depth`` that has a similarity scores ``1 / (c + r_sparse) + weight / (c +
    r_dense)``, reciprocal rank fusion (Cormack, Clarke & Büttcher 2009, SIGIR, §2) of its sparse rank and
    its rank by similarity among those candidates; they are sorted by that score (ties: sparse order) into
    the slots they held. Candidates without a similarity (no vector) keep their slot, and so does
    everything below ``depth``; ``weight = 0`` returns ``ranking`` unchanged.

    Example: sparse order 7, 3, 9, 4; the dense model prefers 9, then 3, and has no vector for 3's
    neighbour 7. With ``depth = 3``, ``weight = 1``, ``c = 60``, document 3 scores 1/62 + 1/62 = 0.03226 and
    9 scores 1/63 + 1/61 = 0.03227, so 9 moves above 3; 7 and 4 stay::

        >>> rerank([7, 3, 9, 4], {3: 0.5, 9: 0.8}, depth=3, weight=1.0)
        [7, 9, 3, 4]
    """
    if depth < 0 or weight < 0:
        raise ValueError(f"depth and weight must be non-negative, got {depth} and {weight}.")
    ranking = list(ranking)
    head = ranking[:depth]
    slots = [i for i, doc in enumerate(head) if doc in similarity]
    if weight == 0 or len(slots) < 2:
        return ranking
    by_dense = sorted(slots, key=lambda i: (-similarity[head[i]], i))
    dense_rank = {i: r for r, i in enumerate(by_dense, start=1)}
    fused = sorted(slots, key=lambda i: (-(1 / (c + i + 1) + weight / (c + dense_rank[i])), i))
    out = list(head)
    for slot, source in zip(slots, fused, strict=True):
        out[slot] = head[source]
    return out + ranking[depth:]
