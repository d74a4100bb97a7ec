"""Leave-source-out statute retrieval (issue 39, item 1): how the search does on a source it never learned from.

    python -m lawluo bench retrieval --leave-source-out --out docs/results/retrieval_leave_source_out.md
    python -m lawluo bench retrieval --leave-source-out --sources disc,kinled --max-queries 300 --json f.json

    bench = LeaveSourceOut(db, rows, load_sourced_expansions(path), colloquial_path)   # tokenises once (~1 min)
    results = bench.run(FAMILIES)                   # per held-out family, every learned part refit; then pooled
    print(report_markdown(results, command))

**Families.** A source of training questions is a *family* (:data:`FAMILIES`): lawyer-llama
(``lawyer_llama_*`` rows; expansion sources ``legal_counsel_with_article_v2``,
``legal_counsel_multi_turn_with_article_v2``, ``zixun_gpt4.dev``), KINLED (``kinled_*``; ``consult_995``,
``exam_985``, ``judicial_interp_4382``, ``term_qa_3125``), DISC (``disc``) and LawBench (``lawbench_*``, the
evaluation rows; ``cail``, LawBench's criminal facts).

**One held-out family F** (:func:`split`). The test questions are a seeded sample of F's rows (whole
``group`` s, one query per row), each with the citation ``根据《…》第…条`` taken out of the question as the
expansions builder takes it out (:mod:`lawluo.retrieval.expansions`: a KINLED interpretation question names
its article, which a lookup would find without any search). Training data is every row of another family
that is not a near duplicate of any of F's questions — more than half of the shorter text's character
6-grams shared (:func:`~lawluo.retrieval.rerank_training.near_duplicates`) — and the expansions without
F's sources and without the near duplicates of F's questions. Refit from the training data only:

- the law prior (:func:`lawluo.retrieval.priors.law_counts` of the training rows);
- the reranker's popularity and vote features (citation counts and the vote index of the training rows);
- the reranker (:func:`~lawluo.retrieval.rerank.train`): on the evaluation rows left in the training data
  (the shipped model's recipe, :mod:`lawluo.retrieval.rerank_training`): for F ≠ LawBench the LawBench rows
  and the fresh lay questions (``lawluo_lay``, in no family), for F = LawBench the lay questions alone; with
  no evaluation row left (supervision built before the lay questions joined) it is trained on a seeded
  sample of the other families' training rows with out-of-fold features (5 grouped folds; a fold's questions and their near duplicates are left
  out of the votes, citation counts and law prior its features are computed with — cross-fitting,
  Chernozhukov et al., 2018, §3);
- the expansions in the index (BM25 rebuilt per family from the article tokens and the kept questions,
  and with them the per-article citation prior), for the system that uses them;
- the mined colloquial terms (:func:`lawluo.retrieval.colloquial.mine` of the training rows).

- the query adapter (system ``fused+reranker+adapter``, :mod:`lawluo.retrieval.query_adapter`), fitted on the
  training rows, its reranker's training questions searched with cross-fitted vectors.

Not refit: the hand-written colloquial term list, the level weights and the weights of the priors, and the
dense encoder (multilingual e5, trained by others, not by this project: the ``dense`` index passed in,
``--encoder``, is used without the shipped query adapter, which learned from every family).

**Systems.** ``sparse``: BM25 over article text, law name and chapter, with the priors and the law prior
and no reranker; ``sparse+reranker``: the same, reranked by the refit model; ``sparse+mined colloquial``:
``sparse`` with the colloquial terms mined from the training rows added to the hand-written ones;
``sparse+e5`` and ``sparse+reranker+e5``: with the e5 first stage fused by reciprocal rank (when an encoder
is given; the last was the app's default until session 29); ``fused+reranker``: BM25 and e5 fused first, then
the fused top 100 reordered by a reranker with e5 features (:data:`~lawluo.retrieval.rerank.FUSED_FEATURES`),
refit as the reranker is (the app's default since session 29); ``expansions``: the old default, expansions in the index with
their citation prior, no law prior, no reranker; ``plain``: BM25 over the article text alone. Metrics of :mod:`lawluo.retrieval.evaluation`
(R@k, MRR@10 with percentile bootstrap intervals over queries) per family and pooled over every held-out
query, and the paired difference of R@10 against ``sparse`` (:func:`paired_difference`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

from ..text import tokenize
from . import colloquial, priors
from .adapter_training import QuestionVectors, cross_fitted, fit_hub_offsets, fit_rows
from .bm25 import BM25Index, top_k
from .evaluation import SEED, GoldQuery, evaluate, grouped_folds
from .holdout_report import (  # noqa: F401  (re-exported: the report)
    NOT_REFIT,
    R10,
    FamilyResult,
    describe,
    figures,
    macro_bootstrap,
    paired_difference,
    pooled,
    report_markdown,
    table,
)
from .holdout_split import (  # noqa: F401  (re-exported: what is held out)
    DENSE_SYSTEMS,
    FAMILIES,
    FOLDS,
    KS,
    MAX_QUERIES,
    METRICS,
    RERANKER_QUERIES,
    SYSTEMS,
    Family,
    HoldoutError,
    Key,
    Split,
    families,
    load_sourced_expansions,
    query_text,
    read_rows,
    sample_groups,
    split,
)
from .rerank import FEATURES, FUSED_FEATURES, Reranker, train
from .rerank_training import (
    QuerySet,
    eval_queries,
    near_duplicates,
    query_set,
    training_queries,
)
from .statutes import StatuteSearcher


class LeaveSourceOut:
    """The article tokens (once), the fixed indexes, and the per-family searchers of the bench."""

    def __init__(
        self,
        db,
        rows: Sequence[Mapping],
        expansions: Mapping[Key, Sequence[tuple[str, str]]],
        colloquial_path: Path | None,
        dense=None,
        progress: Callable[[str], None] = lambda message: None,
        query_vectors_dir: Path | None = None,
    ):
        self.db = db
        self.rows = [dict(r) for r in rows]
        self.expansions = {k: list(v) for k, v in expansions.items()}
        self.colloquial_path = colloquial_path
        # the encoder's own vectors: a shipped query adapter learned from every family, the held-out one too
        # (and its hub offsets, measured with that adapter against every family's questions)
        if getattr(dense, "adapter", None) is not None or getattr(dense, "hub_offsets", None) is not None:
            dense = dense.with_adapter(None).with_hub_offsets(None)
        self.dense = dense
        self.progress = progress
        #: the adapter system's question vectors (embedded once) and article vectors, when the index has them
        self.question_vectors = None
        self.article_vectors = None
        if dense is not None and hasattr(dense, "embed_queries"):
            self.question_vectors = QuestionVectors(dense, query_vectors_dir)
            self.article_vectors = dense.vectors()
        t = time.perf_counter()
        memo: dict[str, list[str]] = {}

        def tokens(text: str) -> list[str]:
            if text not in memo:
                memo[text] = tokenize(text)
            return memo[text]

        text_tokens = [tokenize(a.text) for a in db.articles]
        self.shares = colloquial.token_shares(  # for colloquial.mine, from the tokens at hand
            toks for a, toks in zip(db.articles, text_tokens, strict=True) if a.law.is_current
        )
        # what statute_documents(db, {}) indexes: short name, chapter and text (jieba never joins across lines)
        self.article_tokens = [
            tokens(a.law.key) + tokens(a.chapter or "") + toks
            for a, toks in zip(db.articles, text_tokens, strict=True)
        ]
        self.article_index = BM25Index.from_tokens(self.article_tokens, keep_counts=False)
        self.plain_index = BM25Index.from_tokens(text_tokens, keep_counts=False)
        del text_tokens
        self.question_tokens = {q: tokenize(q) for v in self.expansions.values() for q, _ in v}
        self.progress(
            f"{len(db.articles):,} articles and {len(self.question_tokens):,} expansion questions tokenised, "
            f"indexes built in {time.perf_counter() - t:.0f} s"
        )

    def known(self, key: Key) -> bool:
        return self.db.find_article(key[0], key[1]) is not None

    def sparse(self, training: Sequence[Mapping]) -> StatuteSearcher:
        """The app's default searcher with its learned parts from ``training``: the law prior and the
        reranker's feature tables (citation counts, votes); no reranker yet."""
        searcher = StatuteSearcher(
            self.db,
            None,
            colloquial_path=self.colloquial_path,
            expansions={},
            bm25=self.article_index,
            law_counts=priors.law_counts(training),
        )
        searcher.attach_features(list(training))
        return searcher

    def with_expansions(self, expansions: Mapping[Key, list[str]]) -> StatuteSearcher:
        """The old default: the articles indexed with ``expansions`` (current versions only, as
        :func:`~lawluo.retrieval.statutes.statute_documents`), their citation prior, no law prior."""
        docs = []
        for a, toks in zip(self.db.articles, self.article_tokens, strict=True):
            extra = expansions.get((a.law.key, a.number), []) if a.law.is_current else []
            docs.append(toks + [t for q in extra for t in self.question_tokens[q]])
        return StatuteSearcher(
            self.db,
            None,
            colloquial_path=self.colloquial_path,
            expansions=dict(expansions),
            bm25=BM25Index.from_tokens(docs, keep_counts=False),
        )

    def plain(self, question: str, depth: int) -> list[Key]:
        arts = self.db.articles
        return [
            (arts[i].law.key, arts[i].number)
            for i, _ in top_k(self.plain_index.scores(tokenize(question)), depth)
        ]

    def adapted(self, training: Sequence[Mapping], hub: bool = False):
        """The dense index with a query adapter fitted on ``training`` only; ``hub``: and hub offsets measured
        against ``training``'s questions (:meth:`hub_reduced`)."""
        adapter = fit_rows(self.dense, self.db, training, self.question_vectors, self.article_vectors)
        dense = self.dense.with_adapter(adapter)
        return self.hub_reduced(dense, training) if hub else dense

    def hub_reduced(self, adapted, training: Sequence[Mapping]):
        """``adapted`` (a view with its query adapter) with hub offsets measured against ``training``'s
        questions mapped by that adapter (:mod:`lawluo.retrieval.hubness`)."""
        offsets = fit_hub_offsets(adapted, training, self.question_vectors, self.article_vectors)
        return adapted.with_hub_offsets(offsets)

    def train_reranker(
        self,
        part: Split,
        searcher: StatuteSearcher,
        cap: int,
        seed: int,
        fused: bool = False,
        adapt: bool = False,
        hub: bool = False,
    ) -> tuple[Reranker | None, str]:
        """The reranker refit without ``part``'s family, and a sentence saying how it was trained; ``fused``:
        the fused candidates' (``searcher.dense`` set); ``adapt``: ``searcher.dense`` carries a query adapter
        fitted on ``part``'s training rows, and each training question is searched with the vector of an
        adapter fitted without its fold."""
        queries = eval_queries(part.training)
        if queries:
            dense = searcher.dense
            if adapt:
                known = cross_fitted(
                    self.dense, self.db, part.training, queries, self.question_vectors, self.article_vectors
                )
                searcher.dense = dense.with_adapter(dense.adapter, known)
            try:
                data = query_set(searcher, queries, fused)
            finally:
                searcher.dense = dense
            kinds = sorted({"LawBench" if q.source.startswith("lawbench") else "lay" for q in queries})
            how = f"trained on the {len(queries)} evaluation rows ({' and '.join(kinds)}) left in the training data"
        else:
            data, n = self.out_of_fold_set(part.training, cap, seed, fused, adapt, hub)
            if not n:
                return None, "not measurable: no training question"
            how = (
                f"trained on {n} questions sampled from the other families' training rows, features out of "
                f"fold ({FOLDS} grouped folds; a fold's questions and their near duplicates left out of its "
                "votes, citation counts and law prior)"
            )
        try:
            return train(data.features, data.labels, names=FUSED_FEATURES if fused else FEATURES), how
        except Exception as exc:  # noqa: BLE001 — no usable query (RerankerError) or LightGBM's refusal: said in the report
            return None, f"not measurable: {type(exc).__name__}: {exc}"

    def out_of_fold_set(
        self,
        training: Sequence[Mapping],
        cap: int,
        seed: int,
        fused: bool = False,
        adapt: bool = False,
        hub: bool = False,
    ) -> tuple[QuerySet, int]:
        """Features and labels of a sample of ``cap`` training questions, each fold's computed by a searcher
        refit without that fold's questions and their near duplicates (``fused``: of the fused candidates;
        ``adapt``: with a query adapter refit without them too; ``hub``: and hub offsets measured without
        them)."""
        queries = [
            GoldQuery(q.id, query_text(q.question), q.gold, q.source, q.group)
            for q in training_queries(training)
            if q.gold
        ]
        queries = sample_groups(queries, cap, f"{seed}:reranker")
        out = QuerySet([], [], [])
        n_groups = len({q.group or q.id for q in queries})
        if n_groups < FOLDS:
            return out, 0
        for _, test in grouped_folds(queries, n_splits=FOLDS, seed=seed):
            fold = [queries[i] for i in test]
            held = {q.id for q in fold}
            near = set().union(
                *near_duplicates([q.question for q in fold], [r["question"] for r in training])
            )
            kept = [r for j, r in enumerate(training) if str(r.get("id")) not in held and j not in near]
            searcher = self.sparse(kept)
            searcher.dense = (self.adapted(kept, hub) if adapt else self.dense) if fused else None
            part = query_set(searcher, fold, fused)
            out.candidates += part.candidates
            out.features += part.features
            out.labels += part.labels
        return out, len(queries)

    def run_family(
        self,
        family: Family,
        max_queries: int = MAX_QUERIES,
        seed: int = SEED,
        depth: int = 100,
        reranker_queries: int = RERANKER_QUERIES,
    ) -> FamilyResult:
        """Every system of :data:`SYSTEMS` on ``family``'s held-out questions, its learned parts refit."""
        t = time.perf_counter()
        part = split(family, self.rows, self.expansions, max_queries, seed, self.known)
        self.progress(
            f"{family.name}: {len(part.test)} of {part.held_rows} questions tested; training: "
            f"{len(part.training):,} rows ({len(part.near_rows)} near duplicates dropped), "
            f"{sum(map(len, part.expansions.values())):,} expansion questions ({part.expansions_dropped['source']:,} "
            f"of its sources and {part.expansions_dropped['near']:,} near duplicates dropped)"
        )
        sparse = self.sparse(part.training)
        model, how = self.train_reranker(part, sparse, reranker_queries, seed)
        self.progress(f"{family.name}: reranker {how} ({time.perf_counter() - t:.0f} s)")

        def searched(searcher: StatuteSearcher, reranker) -> Callable[[str], list[Key]]:
            def rank(question: str) -> list[Key]:
                searcher.reranker = reranker
                return [(h.article.law.key, h.article.number) for h in searcher.search(question, depth)]

            return rank

        ks = tuple(k for k in KS if k <= depth)
        evaluations = {"sparse": evaluate(part.test, searched(sparse, None), ks)}
        if model is not None:
            evaluations["sparse+reranker"] = evaluate(part.test, searched(sparse, model), ks)
        hand = sparse.colloquial
        sparse.colloquial = {**colloquial.mine(part.training, self.db, self.shares), **hand}
        evaluations["sparse+mined colloquial"] = evaluate(part.test, searched(sparse, None), ks)
        sparse.colloquial = hand
        if self.dense is not None:
            sparse.dense = self.dense
            evaluations["sparse+e5"] = evaluate(part.test, searched(sparse, None), ks)
            if model is not None:
                evaluations["sparse+reranker+e5"] = evaluate(part.test, searched(sparse, model), ks)
            sparse.fused_reranker, how_fused = self.train_reranker(part, sparse, reranker_queries, seed, True)
            self.progress(f"{family.name}: fused reranker {how_fused} ({time.perf_counter() - t:.0f} s)")
            if sparse.fused_reranker is not None:
                evaluations["fused+reranker"] = evaluate(part.test, searched(sparse, None), ks)
            if self.question_vectors is not None:
                adapted = sparse.dense = self.adapted(part.training)
                sparse.fused_reranker, how_adapted = self.train_reranker(
                    part, sparse, reranker_queries, seed, True, adapt=True
                )
                self.progress(
                    f"{family.name}: query adapter and its fused reranker ({how_adapted}; "
                    f"{time.perf_counter() - t:.0f} s)"
                )
                if sparse.fused_reranker is not None:
                    evaluations["fused+reranker+adapter"] = evaluate(part.test, searched(sparse, None), ks)
                sparse.dense = self.hub_reduced(adapted, part.training)  # the same adapter, not refitted
                sparse.fused_reranker, how_hub = self.train_reranker(
                    part, sparse, reranker_queries, seed, True, adapt=True, hub=True
                )
                self.progress(
                    f"{family.name}: with hub offsets too, and its fused reranker ({how_hub}; "
                    f"{time.perf_counter() - t:.0f} s)"
                )
                if sparse.fused_reranker is not None:
                    evaluations["fused+reranker+adapter+hub"] = evaluate(
                        part.test, searched(sparse, None), ks
                    )
            sparse.dense = sparse.fused_reranker = None
        evaluations["expansions"] = evaluate(
            part.test, searched(self.with_expansions(part.expansions), None), ks
        )
        evaluations["plain"] = evaluate(part.test, lambda q: self.plain(q, depth), ks)
        seconds = time.perf_counter() - t
        self.progress(f"{family.name}: done in {seconds:.0f} s")
        return FamilyResult(family.name, evaluations, part, how, seconds)

    def run(self, chosen: Iterable[Family], **kwargs) -> list[FamilyResult]:
        """One :class:`FamilyResult` per family of ``chosen``, then the pooled one (when there are several)."""
        results = [self.run_family(f, **kwargs) for f in chosen]
        if len(results) > 1:
            results.append(pooled(results))
        return results
