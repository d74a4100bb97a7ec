"""Similar past questions vote for the articles they cited (issue 20, item 2; not wired into the app).

    votes = QuestionVotes.from_asset(Path("assets/supervision.jsonl.gz"))
    v = votes.votes("离婚后孩子抚养费怎么算", k_neighbours=20)        # {("民法典", 1085): 1.0, …}
    hits = [((h.article.law.key, h.article.number), h.score) for h in searcher.search(q, 100)]
    ranked = fuse(hits, v, weight=0.5)                              # [("民法典", 1085), …]

A BM25 index (the project's :class:`~lawluo.retrieval.bm25.BM25Index`, jieba tokens) over the questions
of the **training** rows of ``assets/supervision.jsonl.gz`` (``eval: false``; an evaluation question is
never indexed). For a query, the ``k`` most similar past questions are found; each votes for every
article its answer cited with its BM25 score divided by the best neighbour's (so the nearest votes 1);
an article's vote is the sum over neighbours, divided by the largest sum (the best-voted article has 1).
This is a k-nearest-neighbour classifier over articles (the "similar questions" signal of FAQ retrieval).

:func:`fuse` re-ranks a searcher's hits with the votes: ``(1 - weight) * score / top score + weight *
vote`` over the union of both lists; ties are broken by (law, number), so the order is deterministic.
CPU only, no download; the index is built in memory (about a second for 5,000 questions).
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from ..text import tokenize
from .bm25 import BM25Index, top_k
from .query import clean_query

Key = tuple[str, int]
#: Default neighbours and fusion weight; the benchmark chooses them by grouped cross-validation.
K_NEIGHBOURS = 20
WEIGHT = 0.5


class VotesDataError(ValueError):
    """A supervision file that cannot be read; the message is in Chinese and English."""


def _articles(value: object) -> list[Key] | None:
    """The ``[[law, number], …]`` of a row as keys, or None when malformed (hostile input is skipped)."""
    if not isinstance(value, list):
        return None
    out: list[Key] = []
    for a in value:
        if (
            not isinstance(a, (list, tuple))
            or len(a) != 2
            or not isinstance(a[0], str)
            or not a[0].strip()
            or not isinstance(a[1], int)
            or isinstance(a[1], bool)
            or a[1] < 1
        ):
            return None
        key = (a[0], a[1])
        if key not in out:
            out.append(key)
    return out


def training_questions(rows: Iterable[Mapping]) -> tuple[list[str], list[list[Key]], int]:
    """The questions of the training rows (``eval: false``), the articles each cited, and how many rows
    were skipped (evaluation rows, malformed rows)."""
    questions: list[str] = []
    articles: list[list[Key]] = []
    skipped = 0
    for row in rows:
        if not isinstance(row, Mapping) or row.get("eval") is not False:
            # evaluation rows (and rows that do not say they are training rows) are never indexed
            skipped += 1
            continue
        question = row.get("question")
        keys = _articles(row.get("articles"))
        # (a question without an indexable word stays: it never matches; tokenising 5k questions here
        # to drop it would cost 2 s at every start, cached index or not)
        if not isinstance(question, str) or not question.strip() or not keys:
            skipped += 1
            continue
        questions.append(question)
        articles.append(keys)
    return questions, articles, skipped


class QuestionVotes:
    """Past questions (training rows only) and the articles each one cited."""

    def __init__(self, rows: Iterable[Mapping], index_dir: Path | None = None, shipped: Path | None = None):
        """Index the training rows of ``rows``; with ``index_dir`` the BM25 index is cached there (rebuilt
        when the questions change, as the statute index is), or read from ``shipped`` when that prebuilt
        index is of these questions."""
        questions, articles, self.skipped = training_questions(rows)
        if not questions:
            raise VotesDataError("没有可用的训练问题 no training questions (rows with eval false) to index")
        self.questions = questions
        self.articles = articles
        self.index = (
            BM25Index.load_or_build(index_dir, questions, shipped=shipped)
            if index_dir
            else BM25Index.build(questions)
        )

    @classmethod
    def from_asset(cls, path: Path) -> QuestionVotes:
        """Read ``supervision.jsonl.gz`` (or plain JSONL); unreadable lines are skipped and counted."""
        path = Path(path)
        try:
            raw = path.read_bytes()
            text = (gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw).decode("utf-8")
        except (OSError, EOFError, UnicodeDecodeError, gzip.BadGzipFile) as exc:
            raise VotesDataError(f"无法读取监督数据 cannot read the supervision file {path}: {exc}") from None
        rows: list[object] = []
        bad = 0
        for line in text.splitlines():
            if not line.strip():
                continue
            try:
                rows.append(json.loads(line))
            except ValueError:
                bad += 1
        votes = cls(rows)
        votes.skipped += bad
        return votes

    def __len__(self) -> int:
        return len(self.questions)

    def neighbours(self, query: str, k_neighbours: int = K_NEIGHBOURS) -> list[tuple[int, float]]:
        """The ``k`` most similar past questions: (row position, BM25 score), best first."""
        query = clean_query(query)
        if k_neighbours < 1:
            raise ValueError("k_neighbours must be at least 1")
        scores = self.index.scores(tokenize(query))
        found = top_k(scores, k_neighbours)
        # equal scores: the earlier row first, whatever argpartition did
        return sorted(found, key=lambda p: (-p[1], p[0]))

    def votes(self, query: str, k_neighbours: int = K_NEIGHBOURS) -> dict[Key, float]:
        """{(law, number): vote in (0, 1]} from the ``k`` nearest past questions (empty when none matches)."""
        found = self.neighbours(query, k_neighbours)
        if not found:
            return {}
        top = found[0][1]
        total: dict[Key, float] = {}
        for i, score in found:
            for key in self.articles[i]:
                total[key] = total.get(key, 0.0) + score / top
        best = max(total.values())
        return {key: v / best for key, v in total.items()}


def ranked_votes(votes: Mapping[Key, float]) -> list[Key]:
    """The voted articles, best first (ties by law and number)."""
    return [key for key, _ in sorted(votes.items(), key=lambda kv: (-kv[1], kv[0]))]


def fuse(hits: Sequence[tuple[Key, float]], votes: Mapping[Key, float], weight: float = WEIGHT) -> list[Key]:
    """Re-rank a searcher's ``(key, score)`` hits (best first) with article votes.

    Each candidate (in the hits or the votes) scores ``(1 - weight) * score / best score + weight *
    vote``, 0 for what a list lacks; ``weight`` 0 keeps the searcher's order, 1 the votes' order (the
    searcher's hits the votes miss follow in their order).
    """
    if not 0.0 <= weight <= 1.0:
        raise ValueError("weight must be between 0 and 1")
    top = max((s for _, s in hits), default=0.0)
    base: dict[Key, float] = {}
    order: dict[Key, int] = {}
    for rank, (key, score) in enumerate(hits):
        if key not in base:
            base[key] = score / top if top > 0 else 0.0
            order[key] = rank
    n = len(hits)
    candidates = set(base) | set(votes)
    fused = {k: (1.0 - weight) * base.get(k, 0.0) + weight * votes.get(k, 0.0) for k in candidates}
    return sorted(candidates, key=lambda k: (-round(fused[k], 12), order.get(k, n), k))
