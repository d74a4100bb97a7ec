"""Statute search: which articles answer a client's question.

Scoring (measured on LawBench's scenario→statute and consultation dev sets by
``benchmarks/statute_recall.py``):

1. BM25 over each article's text, its law's short name and chapter heading, and the questions that
   training consultations answered with it (:mod:`lawluo.retrieval.expansions`, doc2query-style);
2. the query is tokenised with jieba and extended with statutory terms for colloquial words
   (``assets/colloquial_terms.tsv``: 开车 → 驾驶 机动车, 辞退 → 解除 劳动合同, …);
3. priors: laws above regulations (level), current versions above superseded ones, repealed laws
   halved, and articles that consultations cite often slightly boosted (log of the expansion count);
4. versions collapsed: one hit per (law, article number), the best-scoring version kept;
5. with a sentence-transformers encoder configured, dense retrieval over the article texts is fused
   with the BM25 ranking by reciprocal rank fusion.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..law.database import Article, StatuteDB
from .bm25 import BM25Index
from .expansions import load_expansions
from .tokenize import tokenize

log = logging.getLogger(__name__)

LEVEL_WEIGHT = {"宪法": 1.0, "法律": 1.0, "司法解释": 0.9, "行政法规": 0.85, "部门规章": 0.8, "其他": 0.7}
SUPERSEDED_WEIGHT = 0.97
REPEALED_WEIGHT = 0.5
CITATION_PRIOR = 0.1
MAX_QUERY_CHARS = 2000
_POOL = 300


class QueryError(ValueError):
    """A query that cannot be searched; the message says why and what to do."""


def clean_query(query: object) -> str:
    if not isinstance(query, str):
        raise QueryError("the query must be text")
    query = query.strip()
    if not query:
        raise QueryError("empty query: type a question or a few words, e.g. 试用期 解除劳动合同")
    return query[:MAX_QUERY_CHARS]


def load_colloquial(path: Path) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    if not Path(path).exists():
        return out
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if line.startswith("#") or "\t" not in line:
            continue
        word, terms = line.split("\t", 1)
        out[word.strip()] = terms.split()
    return out


@dataclass(frozen=True)
class StatuteHit:
    article: Article
    score: float

    def as_dict(self) -> dict:
        a = self.article
        return {
            "law": a.law.name,
            "article": a.number,
            "article_label": a.label,
            "version": a.law.version,
            "current": a.law.is_current,
            "in_force": a.law.in_force,
            "level": a.law.level,
            "text": a.text,
            "score": round(self.score, 4),
        }


def _document(article: Article, questions: list[str]) -> str:
    short = article.law.key
    return "\n".join([short, article.chapter or "", article.text, *questions])


class StatuteSearcher:
    """Search over every article of the statute database."""

    def __init__(
        self,
        db: StatuteDB,
        index_dir: Path,
        expansions_path: Path | None = None,
        colloquial_path: Path | None = None,
        dense=None,
    ):
        self.db = db
        expansions = load_expansions(expansions_path) if expansions_path else {}
        texts = [
            _document(a, expansions.get((a.law.key, a.number), []) if a.law.is_current else [])
            for a in db.articles
        ]
        self.bm25 = BM25Index.load_or_build(Path(index_dir), texts, extra=db.meta.get("source_sha256", ""))
        self.colloquial = load_colloquial(colloquial_path) if colloquial_path else {}
        self.dense = dense
        counts = {key: len(qs) for key, qs in expansions.items()}
        self._weight = np.array(
            [
                LEVEL_WEIGHT.get(a.law.level, 0.8)
                * (1.0 if a.law.is_current else SUPERSEDED_WEIGHT)
                * (1.0 if a.law.in_force else REPEALED_WEIGHT)
                * (
                    1.0
                    + CITATION_PRIOR
                    * math.log1p(counts.get((a.law.key, a.number), 0) if a.law.is_current else 0)
                )
                for a in db.articles
            ],
            dtype=np.float32,
        )
        groups: dict[tuple[str, int, int], int] = {}
        self._group = np.array(
            [groups.setdefault((a.law.key, a.number, a.suffix), len(groups)) for a in db.articles],
            dtype=np.int64,
        )

    @classmethod
    def from_settings(cls, settings, db: StatuteDB | None = None) -> StatuteSearcher:
        db = db or StatuteDB(settings.statutes_path)
        dense = None
        if settings.statute_encoder:
            from .dense import DenseIndex

            dense = DenseIndex.load_or_build(
                settings.cache_dir / "statutes-dense", [a.text for a in db.articles], settings.statute_encoder
            )
        return cls(
            db,
            settings.cache_dir / "statutes-bm25",
            settings.assets_dir / "statute_expansions.jsonl.gz",
            settings.assets_dir / "colloquial_terms.tsv",
            dense=dense,
        )

    def query_tokens(self, query: str) -> list[str]:
        tokens = tokenize(query)
        for word, terms in self.colloquial.items():
            if word in query:
                tokens.extend(terms)
        return tokens

    def scores(self, query: str) -> np.ndarray:
        return self.bm25.scores(self.query_tokens(query)) * self._weight

    def search(self, query: str, k: int = 5) -> list[StatuteHit]:
        """The ``k`` best articles for ``query``, one version per (law, article)."""
        query = clean_query(query)
        if k < 1:
            raise QueryError("k must be at least 1")
        scores = self.scores(query)
        pool = min(len(scores), max(_POOL, 4 * k))
        idx = np.argpartition(-scores, pool - 1)[:pool]
        ranking = [
            (int(i), float(scores[i])) for i in idx[np.argsort(-scores[idx], kind="stable")] if scores[i] > 0
        ]
        if self.dense is not None:
            from .fusion import reciprocal_rank_fusion

            ranking = reciprocal_rank_fusion([ranking, self.dense.search(query, pool)], k=pool)
        hits: list[StatuteHit] = []
        seen: set[int] = set()
        for i, score in ranking:
            group = int(self._group[i])
            if group in seen:
                continue
            seen.add(group)
            hits.append(StatuteHit(self.db.articles[i], score))
            if len(hits) == k:
                break
        return hits
