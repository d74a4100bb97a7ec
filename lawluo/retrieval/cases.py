"""Case search for the Tree of Legal Clarifications: BM25 over the case bank's title, cause and facts,
fused with dense retrieval when ``LAWLUO_CASE_ENCODER`` names a sentence-transformers model."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .bm25 import BM25Index
from .casebank import Case, load_case_bank
from .query import QueryError, clean_query
from .shipped import SHIPPED_DIR, shipped_path


@dataclass(frozen=True)
class CaseHit:
    case: Case
    score: float

    def as_dict(self) -> dict:
        """The case's fields (its articles copied) and the score. Not ``dataclasses.asdict``: its deep copy
        of every field was a quarter of a batch question's CPU (60 candidate cases a question)."""
        articles = [dict(a) for a in self.case.articles]
        return {**vars(self.case), "articles": articles, "score": round(self.score, 4)}


class CaseSearcher:
    def __init__(
        self,
        cases: list[Case],
        index_dir: Path,
        dense=None,
        shipped: Path | None = None,
        background: bool = False,
    ):
        """``shipped``: the prebuilt index (:mod:`lawluo.retrieval.shipped`), used when it is of these cases;
        ``background``: an index that must be built is built in a thread, searches waiting for it."""
        if not cases:
            raise ValueError("the case bank is empty")
        self.cases = cases
        self.by_id = {c.id: c for c in cases}
        self.bm25 = BM25Index.load_or_build(
            Path(index_dir), [c.search_text for c in cases], shipped=shipped, background=background
        )
        self.dense = dense

    @classmethod
    def from_settings(cls, settings, background: bool = False) -> CaseSearcher:
        from ..agents.domains import load_domains

        cases = load_case_bank(settings.cases_path, load_domains(settings.domains_file))
        dense = None
        if settings.case_encoder:
            from .dense import DenseIndex

            dense = DenseIndex.load_or_build(
                settings.cache_dir / "cases-dense", [c.search_text for c in cases], settings.case_encoder
            )
        return cls(
            cases,
            settings.cache_dir / "cases-bm25",
            dense,
            shipped=shipped_path(settings.assets_dir / SHIPPED_DIR, "cases"),
            background=background,
        )

    def get(self, case_id: str) -> Case | None:
        """The case with this id (the ids a clarification tree's nodes cite), or ``None``."""
        return self.by_id.get(case_id)

    def search(self, query: str, k: int = 5) -> list[CaseHit]:
        query = clean_query(query)
        if k < 1:
            raise QueryError("k must be at least 1")
        ranking = self.bm25.search(query, max(k, 50) if self.dense else k)
        if self.dense is not None:
            from .fusion import reciprocal_rank_fusion

            ranking = reciprocal_rank_fusion([ranking, self.dense.search(query, 50)], k=k)
        return [CaseHit(self.cases[i], s) for i, s in ranking[:k]]
