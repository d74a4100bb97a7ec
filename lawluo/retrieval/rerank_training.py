"""Training the statute reranker (:mod:`lawluo.retrieval.rerank`): its query sets and the shipped asset.

    python -m lawluo build reranker                             # build_and_write: assets/statute_reranker.json
    data = query_set(searcher, eval_queries(rows))              # features and labels of the eval questions
    folds = OutOfFold.build(db, settings.assets_dir)            # tokenises the articles once (~40 s)
    data, queries = folds.query_set(rows, n_folds=5)            # features of every training question

:func:`build_and_write` trains the shipped model on the evaluation rows of ``supervision.jsonl.gz``
(the leakage rule of :mod:`lawluo.retrieval.rerank`) and writes it with its provenance. This module
sits above the statute searcher, which applies a trained reranker and never imports this one.

**Leak-free features for the training questions** (issue 20, item 2).

The app's BM25 documents hold the training questions (expansions), its citation prior counts them, and
the vote index holds them: features of a training question computed against the app's index would see
the question itself in its gold article. Here the training questions are split into ``n_folds`` grouped
folds (a supervision ``group`` is never split; a training row grouped with an evaluation question is left
out altogether), and each fold's features are computed against a searcher whose expansions, citation
counts and vote index exclude that fold's questions and their near duplicates — an expansion question
is linked to a training row when more than half of the shorter one's character 6-grams are shared (the
rule of :mod:`lawluo.retrieval.expansions`). This is the cross-fitting of out-of-fold features
(Chernozhukov et al., 2018, "Double/debiased machine learning", §3).
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from ..files import asset_summary, rebuild_section, write_atomically
from ..law.database import StatuteDB
from ..text import tokenize
from .bm25 import BM25Index
from .evaluation import GoldQuery, grouped_folds
from .expansions import _grams, load_expansions
from .priors import law_counts
from .rerank import (
    DEPTH,
    FILENAME,
    FUSED_FEATURES,
    FUSED_FILENAME,
    PARAMS,
    PROVENANCE_FILENAME,
    REBUILD_COMMAND,
    ROUNDS,
    SEEDS,
    RerankerError,
    train,
)
from .shipped import SHIPPED_DIR
from .statutes import _POOL, StatuteSearcher, _read_supervision, index_expansions_path

Key = tuple[str, int]
NEAR = 0.5
log = logging.getLogger(__name__)


@dataclass
class QuerySet:
    """Per query: the candidates' positions, their feature matrix and their 0/1 labels."""

    candidates: list[list[tuple[int, float]]]
    features: list[np.ndarray]
    labels: list[np.ndarray]


def query_set(searcher, queries: Sequence, fused: bool = False) -> QuerySet:
    """Candidates (the searcher's top :data:`DEPTH`, before reranking), features and labels of ``queries``
    (:class:`~lawluo.retrieval.evaluation.GoldQuery`). The gold is read only for the labels. ``fused``: the
    fused reranker's — BM25's and e5's rankings fused
    (:meth:`~lawluo.retrieval.statutes.StatuteSearcher.fused_candidates`; ``searcher.dense`` must be set), with
    :data:`~lawluo.retrieval.rerank.FUSED_FEATURES`."""
    out = QuerySet([], [], [])
    articles = searcher.db.articles
    for q in queries:
        if fused:
            tokens = searcher.query_tokens(q.question)
            sparse = searcher._scores(tokens)
            found = searcher.dense.search(q.question, _POOL)
            first = searcher._top(sparse, _POOL)
            _, cands, matrix = searcher.fused_candidates(q.question, tokens, sparse, first, found)
        else:
            cands = searcher.candidates(searcher.ranking(q.question, _POOL), DEPTH)
            matrix = searcher.candidate_matrix(q.question, cands)
        out.candidates.append(cands)
        out.features.append(matrix)
        out.labels.append(
            np.array([float((articles[i].law.key, articles[i].number) in q.gold) for i, _ in cands])
        )
    return out


def eval_queries(rows: Iterable[Mapping]) -> list:
    """The ``eval: true`` rows of ``supervision.jsonl.gz`` as :class:`~lawluo.retrieval.evaluation.GoldQuery`."""
    return [
        GoldQuery(
            r["id"], r["question"], frozenset((a, n) for a, n in r["articles"]), r["source"], r["group"]
        )
        for r in rows
        if r.get("eval") is True
    ]


def build_and_write(assets_dir: Path, settings) -> dict:
    """Train the shipped models on every evaluation row and write :data:`~lawluo.retrieval.rerank.FILENAME`,
    and :data:`~lawluo.retrieval.rerank.FUSED_FILENAME` when the settings' encoder and its statute vectors
    are there (``python -m lawluo build statute-vectors``; else it is left as it is, and the summary says
    why), with their provenance."""
    t = time.perf_counter()
    rows = _read_supervision(Path(assets_dir) / "supervision.jsonl.gz")
    queries = eval_queries(rows)
    if not queries:
        raise RerankerError(
            "supervision.jsonl.gz 中没有评测问题 no eval rows to train on; run: python -m lawluo build supervision"
        )
    # the first stage as the app runs it (statute_expansions, the law prior), without a reranker or encoder
    searcher = StatuteSearcher(
        StatuteDB(settings.statutes_path),
        settings.cache_dir / "statutes-bm25",
        index_expansions_path(replace(settings, assets_dir=Path(assets_dir))),
        Path(assets_dir) / "colloquial_terms.tsv",
        shipped_dir=Path(assets_dir) / SHIPPED_DIR,
        law_counts=law_counts(rows),
    )
    searcher.attach_features(rows)
    data = query_set(searcher, queries)
    model = train(data.features, data.labels)
    trained_on = f"{len(queries)} eval rows of supervision.jsonl.gz"
    path = Path(assets_dir) / FILENAME
    text = model.to_json(trained_on=trained_on, depth=DEPTH)
    write_atomically(path, text)
    shas = {FILENAME: hashlib.sha256(text.encode("utf-8")).hexdigest()}
    fused = _fused_model(searcher, rows, queries, settings)
    if isinstance(fused, str):
        log.warning("%s", fused)
    else:
        fused_text = fused.to_json(trained_on=trained_on, depth=DEPTH)
        write_atomically(Path(assets_dir) / FUSED_FILENAME, fused_text)
        shas[FUSED_FILENAME] = hashlib.sha256(fused_text.encode("utf-8")).hexdigest()
    write_atomically(Path(assets_dir) / PROVENANCE_FILENAME, provenance_markdown(len(queries), shas))
    return asset_summary(
        path,
        text.encode("utf-8"),
        Path(assets_dir) / PROVENANCE_FILENAME,
        queries=len(queries),
        fused=fused if isinstance(fused, str) else f"{FUSED_FILENAME} ({len(fused.roots)} trees)",
        seconds=round(time.perf_counter() - t, 1),
    )


def _fused_model(searcher: StatuteSearcher, rows: Sequence[Mapping], queries: Sequence, settings):
    """The fused reranker trained on ``queries`` with the settings' statute vectors (and their query
    adapter, each query's vector cross-fitted: :func:`~lawluo.retrieval.adapter_training.training_view`), or
    why it cannot be."""
    from .adapter_training import training_view
    from .dense import DenseEncoderUnavailable, load_statute_vectors

    if not settings.statute_encoder:
        return "no statute_encoder set: the fused reranker is not rebuilt"
    try:
        searcher.dense = load_statute_vectors(settings, searcher.db)
    except (DenseEncoderUnavailable, OSError, ValueError, RuntimeError) as exc:
        return f"the fused reranker is not rebuilt: {exc}"
    searcher.dense = training_view(searcher.dense, searcher.db, rows, queries, settings.cache_dir)
    data = query_set(searcher, queries, fused=True)
    return train(data.features, data.labels, names=FUSED_FEATURES)


def provenance_markdown(queries: int, shas: Mapping[str, str]) -> str:
    return "\n".join(
        [
            f"# {FILENAME}, {FUSED_FILENAME} — learned rerankers over the statute searcher's top {DEPTH}",
            "",
            "LightGBM LambdaMART models (`lawluo/retrieval/rerank.py`: features, fixed settings, leakage rule),",
            "one per seed, flattened to JSON node arrays that the app evaluates with numpy: `format`, `features`,",
            "`trained_on`, `depth`, `n_models`, `roots`, `nodes` (`feature`, `threshold`, `left`, `right`, `value`).",
            f"`{FILENAME}` reorders BM25's top {DEPTH} (used without the dense stage); `{FUSED_FILENAME}` reorders",
            f"the top {DEPTH} of BM25 and e5 fused by reciprocal rank, with the e5 features of `FUSED_FEATURES`",
            "(built when the statute vectors are there; used whenever the dense stage runs). With the query adapter",
            "(`statute_vectors/query_adapter.npz`), each training question's e5 vector is the one an adapter fitted",
            "without its fold gives (5 grouped folds, `lawluo/retrieval/adapter_training.py`): the adapter is fitted",
            "on these rows too, and the reranker must not learn from cosines it made in-sample.",
            "",
            *rebuild_section(REBUILD_COMMAND),
            f"- trained on the {queries} evaluation rows (`eval: true`) of `supervision.jsonl.gz`: LawBench dev",
            "  scenario→statute (3-2) and consultations (3-8), and the everyday questions of the lay sets",
            "  (fresh 1–4, train 1–4; `lawluo_lay`), which are never in the expansions nor in the vote index, so",
            "  their features carry no copy of the question. **Figures of this model on those rows are in-sample**;",
            "  the headlines are held out: `python -m lawluo bench retrieval --leave-source-out` and fresh5–7",
            "  (`benchmarks/retrieval_fresh.py`).",
            f"- settings: {json.dumps(PARAMS, sort_keys=True)}, {ROUNDS} rounds, seeds {list(SEEDS)} (mean)",
            *(f"- sha256 of `{name}`: `{sha}`" for name, sha in shas.items()),
            "",
        ]
    )


def training_queries(rows: Sequence[Mapping]) -> list:
    """Training rows (``eval: false``) as GoldQuery, without those grouped with an evaluation question."""
    eval_groups = {r.get("group") for r in rows if r.get("eval") is True}
    out = []
    for r in rows:
        if r.get("eval") is not False or r.get("group") in eval_groups:
            continue
        arts = r.get("articles")
        q = r.get("question")
        if not isinstance(q, str) or not q.strip() or not isinstance(arts, list):
            continue
        gold = frozenset((a[0], a[1]) for a in arts if isinstance(a, list) and len(a) == 2)
        out.append(GoldQuery(str(r.get("id")), q, gold, str(r.get("source", "")), str(r.get("group"))))
    return out


def near_duplicates(
    questions: Sequence[str], others: Sequence[str], threshold: float = NEAR
) -> list[set[int]]:
    """For each of ``questions``, the positions in ``others`` sharing more than ``threshold`` of the shorter
    one's character 6-grams."""
    index: dict[str, list[int]] = defaultdict(list)
    other_grams = [_grams(o) for o in others]
    for j, grams in enumerate(other_grams):
        for g in grams:
            index[g].append(j)
    out = []
    for q in questions:
        grams = _grams(q)
        overlap: dict[int, int] = defaultdict(int)
        for g in grams:
            for j in index.get(g, ()):
                overlap[j] += 1
        out.append(
            {j for j, c in overlap.items() if c / max(1, min(len(grams), len(other_grams[j]))) > threshold}
        )
    return out


class OutOfFold:
    """The database, its article tokens and the expansions, ready to build one BM25 index per fold."""

    def __init__(self, db, expansions: Mapping[Key, list[str]], colloquial_path: Path | None):
        self.db = db
        self.expansions = {k: list(v) for k, v in expansions.items()}
        self.colloquial_path = colloquial_path
        self.article_tokens = [tokenize("\n".join([a.law.key, a.chapter or "", a.text])) for a in db.articles]
        self.expansion_tokens = {k: [tokenize(q) for q in v] for k, v in self.expansions.items()}

    @classmethod
    def build(cls, db, assets_dir: Path) -> OutOfFold:
        assets_dir = Path(assets_dir)
        return cls(
            db,
            load_expansions(assets_dir / "statute_expansions.jsonl.gz"),
            assets_dir / "colloquial_terms.tsv",
        )

    def searcher(self, excluded: set[tuple[Key, int]], rows: Sequence[Mapping]):
        """A searcher whose expansions leave out the (article, question position) pairs in ``excluded`` and whose
        citation counts and votes come from ``rows``."""
        kept = {k: [i for i in range(len(v)) if (k, i) not in excluded] for k, v in self.expansions.items()}
        docs = []
        for a, toks in zip(self.db.articles, self.article_tokens, strict=True):
            key = (a.law.key, a.number)
            extra = (
                [t for i in kept.get(key, []) for t in self.expansion_tokens[key][i]]
                if a.law.is_current
                else []
            )
            docs.append(toks + extra)
        searcher = StatuteSearcher(
            self.db,
            None,
            colloquial_path=self.colloquial_path,
            expansions={k: [self.expansions[k][i] for i in v] for k, v in kept.items() if v},
            bm25=BM25Index.from_tokens(docs, keep_counts=False),
        )
        searcher.attach_features(list(rows))
        return searcher

    def query_set(self, rows: Sequence[Mapping], n_folds: int = 5, seed: int = 0) -> tuple[QuerySet, list]:
        """Features of every training question, each computed with its own fold held out of the searcher."""
        queries = training_queries(rows)
        folds = grouped_folds(queries, n_splits=n_folds, seed=seed)
        flat = [(k, i) for k, v in self.expansions.items() for i in range(len(v))]
        links = near_duplicates([self.expansions[k][i] for k, i in flat], [q.question for q in queries])
        fold_of = np.empty(len(queries), dtype=np.int64)
        for f, (_, test) in enumerate(folds):
            fold_of[test] = f
        out = QuerySet([], [], [])
        ordered = []
        for f, (_, test) in enumerate(folds):
            held = {q.id for q in (queries[i] for i in test)}
            excluded = {flat[j] for j, linked in enumerate(links) if any(fold_of[x] == f for x in linked)}
            kept_rows = [r for r in rows if str(r.get("id")) not in held]
            part = query_set(self.searcher(excluded, kept_rows), [queries[i] for i in test])
            out.candidates += part.candidates
            out.features += part.features
            out.labels += part.labels
            ordered += [queries[i] for i in test]
        return out, ordered
