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
- the reranker (:func:`~lawluo.retrieval.rerank.train`): for F ≠ LawBench on the LawBench evaluation rows
  left in the training data (the shipped model's recipe, :mod:`lawluo.retrieval.rerank_training`); for
  F = LawBench no such row is left, so it is trained on a seeded sample of the other families' training
  rows with out-of-fold features (5 grouped folds; a fold's questions and their near duplicates are left
  out of the votes, citation counts and law prior its features are computed with — cross-fitting,
  Chernozhukov et al., 2018, §3);
- the expansions in the index (BM25 rebuilt per family from the article tokens and the kept questions,
  and with them the per-article citation prior), for the system that uses them;
- the mined colloquial terms (:func:`lawluo.retrieval.colloquial.mine` of the training rows).

Not refit: the hand-written colloquial term list, the level weights and the weights of the priors, and the
dense encoder (multilingual e5, trained by others, not by this project: the ``dense`` index passed in,
``--encoder``, is used as it is).

**Systems.** ``sparse``: BM25 over article text, law name and chapter, with the priors and the law prior
and no reranker; ``sparse+reranker``: the same, reranked by the refit model; ``sparse+mined colloquial``:
``sparse`` with the colloquial terms mined from the training rows added to the hand-written ones;
``sparse+e5`` and ``sparse+reranker+e5``: with the e5 first stage fused by reciprocal rank (when an encoder
is given; the last is the app's default); ``expansions``: the old default, expansions in the index with
their citation prior, no law prior, no reranker; ``plain``: BM25 over the article text alone. Metrics of :mod:`lawluo.retrieval.evaluation`
(R@k, MRR@10 with percentile bootstrap intervals over queries) per family and pooled over every held-out
query, and the paired difference of R@10 against ``sparse`` (:func:`paired_difference`).
"""

from __future__ import annotations

import gzip
import json
import random
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import colloquial, priors
from .bm25 import BM25Index, top_k
from .evaluation import RESAMPLES, SEED, Evaluation, GoldQuery, bootstrap, evaluate, grouped_folds
from .expansions import _CITED_IN_QUESTION
from .rerank import Reranker, train
from .rerank_training import QuerySet, eval_queries, near_duplicates, query_set, training_queries
from .statutes import StatuteSearcher
from .tokenize import tokenize

Key = tuple[str, int]
#: The cut-offs reported (the evaluation's nDCG@10 is kept in the JSON, not in the tables).
KS = (1, 5, 10, 100)
METRICS = ("R@1", "R@5", "R@10", "R@100", "MRR@10")
SYSTEMS = (
    "sparse",
    "sparse+reranker",
    "sparse+mined colloquial",
    "sparse+e5",
    "sparse+reranker+e5",
    "expansions",
    "plain",
)
#: The systems run only when an encoder is given (``--encoder``); left out of the tables otherwise.
DENSE_SYSTEMS = ("sparse+e5", "sparse+reranker+e5")
#: Test questions per family by default: 0, all of them (5,726 questions: about 5 minutes on two busy cores).
MAX_QUERIES = 0
#: Training questions of the out-of-fold reranker when LawBench is held out.
RERANKER_QUERIES = 600
FOLDS = 5


class HoldoutError(ValueError):
    """Input the bench cannot use (an unknown family, an unreadable file); the message is in Chinese and English."""


@dataclass(frozen=True)
class Family:
    """A source of questions: its supervision sources (``prefix`` or ``prefix_*``) and its expansion sources."""

    name: str
    prefix: str
    expansion_sources: tuple[str, ...]

    def owns(self, source: str) -> bool:
        return source == self.prefix or source.startswith(self.prefix + "_")


FAMILIES = (
    Family(
        "lawyer-llama",
        "lawyer_llama",
        ("legal_counsel_with_article_v2", "legal_counsel_multi_turn_with_article_v2", "zixun_gpt4.dev"),
    ),
    Family("kinled", "kinled", ("consult_995", "exam_985", "judicial_interp_4382", "term_qa_3125")),
    Family("disc", "disc", ("disc",)),
    Family("lawbench", "lawbench", ("cail",)),
)


def families(names: str | Sequence[str] | None) -> list[Family]:
    """The families named (a comma-separated string or a list; None or empty: all), in :data:`FAMILIES` order."""
    if names is None:
        return list(FAMILIES)
    wanted = [n.strip() for n in (names.split(",") if isinstance(names, str) else names) if n.strip()]
    if not wanted:
        return list(FAMILIES)
    known = {f.name: f for f in FAMILIES}
    unknown = [n for n in wanted if n not in known]
    if unknown:
        raise HoldoutError(
            f"未知来源 unknown source(s) {', '.join(unknown)}; choose from: {', '.join(known)}"
        )
    return [f for f in FAMILIES if f.name in wanted]


def read_rows(path: Path) -> list[dict]:
    """The rows of ``supervision.jsonl.gz`` (gzip or plain JSONL); :class:`HoldoutError` when it cannot be read."""
    path = Path(path)
    if not path.exists():
        raise HoldoutError(
            f"{path}: 没有监督数据 no supervision file; build it: python -m lawluo build supervision --data DIR"
        )
    try:
        raw = path.read_bytes()
        text = (gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw).decode("utf-8")
        rows = [json.loads(line) for line in text.splitlines() if line.strip()]
    except (OSError, EOFError, UnicodeDecodeError, ValueError) as exc:
        raise HoldoutError(f"{path}: 无法读取监督数据 cannot read the supervision file: {exc}") from None
    rows = [r for r in rows if isinstance(r, dict) and isinstance(r.get("question"), str)]
    if not rows:
        raise HoldoutError(f"{path}: 监督数据为空 the supervision file holds no question")
    return rows


def load_sourced_expansions(path: Path) -> dict[Key, list[tuple[str, str]]]:
    """(law, number) → [(question, expansion source), …] of ``statute_expansions.jsonl.gz`` ({} when absent)."""
    path = Path(path)
    if not path.exists():
        return {}
    out: dict[Key, list[tuple[str, str]]] = {}
    try:
        with gzip.open(path, "rt", encoding="utf-8") as f:
            for line in f:
                row = json.loads(line)
                out[(row["law"], int(row["article"]))] = list(
                    zip(row["questions"], row["sources"], strict=True)
                )
    except (OSError, EOFError, UnicodeDecodeError, ValueError, KeyError, TypeError) as exc:
        raise HoldoutError(f"{path}: 无法读取扩展问题 cannot read the expansions: {exc}") from None
    return out


def query_text(question: str) -> str:
    """The question without a ``根据《…》第…条`` citation (kept whole when nothing else would remain).

    >>> query_text("根据《中华人民共和国商标法》第六条，未注册的商品能卖吗？")
    '未注册的商品能卖吗？'
    """
    stripped = _CITED_IN_QUESTION.sub("", question).strip()
    return stripped or question


def _gold(row: Mapping) -> frozenset[Key]:
    return frozenset(
        (a[0], a[1])
        for a in row.get("articles") or ()
        if isinstance(a, list | tuple) and len(a) == 2 and isinstance(a[0], str) and isinstance(a[1], int)
    )


@dataclass
class Split:
    """One held-out family: its sampled test questions and the training data left without it."""

    family: Family
    test: list[GoldQuery]
    held_rows: int
    training: list[dict]
    near_rows: list[str]
    expansions: dict[Key, list[str]]
    expansions_dropped: dict[str, int]


def split(
    family: Family,
    rows: Sequence[Mapping],
    expansions: Mapping[Key, Sequence[tuple[str, str]]],
    max_queries: int = MAX_QUERIES,
    seed: int = SEED,
    known: Callable[[Key], bool] | None = None,
) -> Split:
    """Hold ``family`` out of ``rows`` and ``expansions``.

    The test set is a seeded sample of ``max_queries`` of the family's rows (0: all), taken group by group;
    its gold keeps the articles ``known`` accepts (all when None). Every row of the family is held out of
    training, and so is every other row whose question is a near duplicate of one of the family's; the
    expansions lose the family's sources and the near duplicates of its questions.
    """
    held = [r for r in rows if family.owns(str(r.get("source", "")))]
    if not held:
        raise HoldoutError(
            f"来源 {family.name} 没有问题 the supervision rows hold no question of {family.name}"
        )
    held_text = [query_text(r["question"]) for r in held]
    others = [r for r in rows if not family.owns(str(r.get("source", "")))]
    near = set().union(*near_duplicates(held_text, [r["question"] for r in others]))
    training = [r for j, r in enumerate(others) if j not in near]
    flat = [(k, q, s) for k, v in expansions.items() for q, s in v]
    kept_flat = [(k, q) for k, q, s in flat if s not in family.expansion_sources]
    near_exp = set().union(*near_duplicates(held_text, [q for _, q in kept_flat]))
    kept: dict[Key, list[str]] = {}
    for j, (k, q) in enumerate(kept_flat):
        if j not in near_exp:
            kept.setdefault(k, []).append(q)
    test = [
        GoldQuery(
            str(r.get("id")),
            text,
            frozenset(g for g in _gold(r) if known is None or known(g)),
            str(r.get("source", "")),
            str(r.get("group", r.get("id"))),
        )
        for r, text in zip(held, held_text, strict=True)
    ]
    return Split(
        family,
        sample_groups(test, max_queries, f"{seed}:{family.name}"),
        len(held),
        training,
        sorted(str(others[j].get("id")) for j in near),
        kept,
        {"source": len(flat) - len(kept_flat), "near": len(near_exp)},
    )


def sample_groups(queries: Sequence[GoldQuery], n: int, seed: int | str) -> list[GoldQuery]:
    """``n`` of ``queries`` (all when ``n`` is 0 or more than there are), drawn group by group in a seeded
    order and kept in their original order."""
    if n <= 0 or n >= len(queries):
        return list(queries)
    groups = sorted({q.group or q.id for q in queries})
    random.Random(str(seed)).shuffle(groups)
    rank = {g: i for i, g in enumerate(groups)}
    order = sorted(range(len(queries)), key=lambda i: (rank[queries[i].group or queries[i].id], i))
    return [queries[i] for i in sorted(order[:n])]


def paired_difference(
    a: np.ndarray, b: np.ndarray, resamples: int = RESAMPLES, seed: int = SEED
) -> dict[str, float]:
    """Mean of ``a - b`` over the same queries, with a percentile bootstrap 95% interval drawn from the
    pairs (Efron & Tibshirani, 1993, ch. 13: both systems see the same resampled queries).

    >>> d = paired_difference(np.array([1.0, 1, 1, 0]), np.array([1.0, 0, 1, 0]))
    >>> d["mean"], d["lo"] <= 0.25 <= d["hi"]
    (0.25, True)
    """
    diff = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    mean, lo, hi = bootstrap(diff.reshape(-1, 1), resamples, seed)[:, 0]
    return {"mean": float(mean), "lo": float(lo), "hi": float(hi)}


@dataclass
class FamilyResult:
    """The figures of one held-out family (or of all pooled: ``split`` is None)."""

    name: str
    evaluations: dict[str, Evaluation]
    split: Split | None = None
    reranker: str = ""
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)
    #: The pooled result's families, for :meth:`macro_summary`.
    parts: list[FamilyResult] = field(default_factory=list)

    def values(self, system: str) -> np.ndarray:
        """(queries × :data:`METRICS`) of ``system``."""
        ev = self.evaluations[system]
        return ev.values[:, [ev.names.index(m) for m in METRICS]]

    def summary(self) -> dict:
        """Per system: queries, each metric's mean and interval, and R@10 minus ``sparse``'s (paired)."""
        if not hasattr(self, "_summary"):
            out = {}
            sparse = self.values("sparse")[:, R10] if "sparse" in self.evaluations else None
            for system, ev in self.evaluations.items():
                block = ev.summary()["overall"]
                entry = {"queries": block["queries"], **{m: block[m] for m in (*METRICS, "nDCG@10")}}
                if sparse is not None and system != "sparse":
                    entry["R@10 vs sparse"] = paired_difference(self.values(system)[:, R10], sparse)
                out[system] = entry
            self._summary = out
        return self._summary

    def macro_summary(self) -> dict:
        """The pooled result's systems as the mean of the family means (each family weighted once), with
        intervals of a bootstrap stratified by family (:func:`macro_bootstrap`)."""
        out: dict = {}
        for system in self.evaluations:
            stats = macro_bootstrap([p.values(system) for p in self.parts])
            entry: dict = {"families": len(self.parts)}
            for j, m in enumerate(METRICS):
                entry[m] = {"mean": float(stats[0, j]), "lo": float(stats[1, j]), "hi": float(stats[2, j])}
            if system != "sparse" and "sparse" in self.evaluations:
                diff = [
                    (p.values(system)[:, R10] - p.values("sparse")[:, R10]).reshape(-1, 1) for p in self.parts
                ]
                d = macro_bootstrap(diff)[:, 0]
                entry["R@10 vs sparse"] = {"mean": float(d[0]), "lo": float(d[1]), "hi": float(d[2])}
            out[system] = entry
        return out


R10 = METRICS.index("R@10")


def macro_bootstrap(blocks: Sequence[np.ndarray], resamples: int = RESAMPLES, seed: int = SEED) -> np.ndarray:
    """The mean over ``blocks`` (each queries × metrics) of their column means, and its percentile 95 %
    interval from a bootstrap that resamples each block's queries within the block (a stratified
    bootstrap, Efron & Tibshirani, 1993, ch. 13): an array (3, metrics) of mean, low, high.

    >>> macro_bootstrap([np.ones((3, 1)), np.zeros((50, 1))]).tolist()
    [[0.5], [0.5], [0.5]]
    """
    rng = np.random.default_rng(seed)
    width = blocks[0].shape[1]
    point = np.zeros(width)
    means = np.zeros((resamples, width))
    for block in blocks:
        block = np.asarray(block, dtype=np.float64)
        point += block.mean(axis=0)
        # 100 resamples at a time: the index matrix of a block of 3,000 queries stays small
        for start in range(0, resamples, 100):
            idx = rng.integers(0, len(block), size=(min(100, resamples - start), len(block)))
            means[start : start + len(idx)] += block[idx].mean(axis=1)
    lo, hi = np.percentile(means / len(blocks), [2.5, 97.5], axis=0)
    return np.vstack([point / len(blocks), lo, hi])


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
    ):
        self.db = db
        self.rows = [dict(r) for r in rows]
        self.expansions = {k: list(v) for k, v in expansions.items()}
        self.colloquial_path = colloquial_path
        self.dense = dense
        self.progress = progress
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

    def train_reranker(
        self, part: Split, searcher: StatuteSearcher, cap: int, seed: int
    ) -> tuple[Reranker | None, str]:
        """The reranker refit without ``part``'s family, and a sentence saying how it was trained."""
        queries = eval_queries(part.training)
        if queries:
            data = query_set(searcher, queries)
            how = f"trained on the {len(queries)} LawBench evaluation rows left in the training data"
        else:
            data, n = self.out_of_fold_set(part.training, cap, seed)
            if not n:
                return None, "not measurable: no training question"
            how = (
                f"trained on {n} questions sampled from the other families' training rows, features out of "
                f"fold ({FOLDS} grouped folds; a fold's questions and their near duplicates left out of its "
                "votes, citation counts and law prior)"
            )
        try:
            return train(data.features, data.labels), how
        except Exception as exc:  # noqa: BLE001 — no usable query (RerankerError) or LightGBM's refusal: said in the report
            return None, f"not measurable: {type(exc).__name__}: {exc}"

    def out_of_fold_set(self, training: Sequence[Mapping], cap: int, seed: int) -> tuple[QuerySet, int]:
        """Features and labels of a sample of ``cap`` training questions, each fold's computed by a searcher
        refit without that fold's questions and their near duplicates."""
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
            part = query_set(self.sparse(kept), fold)
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
            sparse.dense = None
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


def pooled(results: Sequence[FamilyResult]) -> FamilyResult:
    """Every held-out query of ``results`` in one evaluation per system (a system some family lacks is left out)."""
    systems = [s for s in SYSTEMS if all(s in r.evaluations for r in results)]
    evaluations = {}
    for system in systems:
        parts = [r.evaluations[system] for r in results]
        ev = Evaluation(parts[0].ks)
        for p in parts:
            ev.ids += p.ids
            ev.sources += p.sources
            ev.ranks += p.ranks
            ev.unscorable += p.unscorable
        ev.values = np.vstack([p.values for p in parts])
        evaluations[system] = ev
    ran = {s for r in results for s in r.evaluations}
    missing = [s for s in SYSTEMS if s not in systems and (s in ran or s not in DENSE_SYSTEMS)]
    notes = [f"{s}: not measurable for every family, left out of the pool" for s in missing]
    return FamilyResult("all held-out", evaluations, notes=notes, parts=list(results))


def _cell(m: Mapping) -> str:
    return f"{m['mean']:.3f} [{m['lo']:.3f}, {m['hi']:.3f}]"


def _delta(m: Mapping) -> str:
    return f"{m['mean']:+.3f} [{m['lo']:+.3f}, {m['hi']:+.3f}]"


def table(result: FamilyResult, macro: bool = False) -> str:
    """One row per system: queries, the metrics of :data:`METRICS` and R@10 minus ``sparse``'s, with CIs;
    ``macro``: the pooled result's mean over families (:meth:`FamilyResult.macro_summary`)."""
    summary = result.macro_summary() if macro else result.summary()
    count = "families" if macro else "queries"
    lines = [
        f"| system | {count} | " + " | ".join(METRICS) + " | ΔR@10 vs sparse |",
        "|" + "---|" * (len(METRICS) + 3),
    ]
    for system in SYSTEMS:
        if system not in summary and system in DENSE_SYSTEMS:
            continue
        if system not in summary:
            lines.append(f"| {system} | — | " + " | ".join("not measurable" for _ in METRICS) + " | — |")
            continue
        s = summary[system]
        delta = _delta(s["R@10 vs sparse"]) if "R@10 vs sparse" in s else "—"
        cells = " | ".join(_cell(s[m]) for m in METRICS)
        lines.append(f"| {system} | {s[count]} | {cells} | {delta} |")
    return "\n".join(lines)


def describe(result: FamilyResult) -> list[str]:
    """What a family's test and training data were, as Markdown bullet lines."""
    part = result.split
    if part is None:
        queries = result.evaluations["sparse"].values.shape[0]
        return [
            f"- every held-out question of the families above, each counted once ({queries} questions)",
            *(f"- {n}" for n in result.notes),
        ]
    unscorable = len(result.evaluations["sparse"].unscorable)
    return [
        (
            f"- test: all {part.held_rows} of the family's questions"
            if len(part.test) == part.held_rows
            else f"- test: {len(part.test)} of the family's {part.held_rows} questions (seeded sample by group)"
        )
        + (f", {unscorable} without a gold article the database knows left out" if unscorable else ""),
        f"- training rows: {len(part.training):,} ({len(part.near_rows)} rows of other families dropped as near "
        "duplicates of the family's questions)",
        f"- expansions: {sum(map(len, part.expansions.values())):,} questions kept "
        f"({part.expansions_dropped['source']:,} of the family's sources and "
        f"{part.expansions_dropped['near']:,} near duplicates dropped)",
        f"- reranker: {result.reranker}",
    ]


NOT_REFIT = (
    "Refit per held-out family from its training data only: the law prior, the reranker's citation counts "
    "and vote index, the reranker itself, and (system `expansions`) the expansions in the BM25 index with "
    "their citation prior. Not refit: the hand-written colloquial term list, the level weights and the "
    "priors' weights. The dense encoder (multilingual e5) is not trained by this project, so nothing of it "
    "can be held out; it is not part of these runs unless a dense index is passed in."
)


def report_markdown(results: Sequence[FamilyResult], command: str, seconds: float | None = None) -> str:
    """The whole report: the command, what was held out and refit, a table per family and the pooled one."""
    lines = [
        "# Statute retrieval, leave one source out (issue 39, item 1)",
        "",
        f"Made by `{command}`" + (f" in {seconds / 60:.1f} min" if seconds else "") + ". "
        "Each family of training questions in turn is held out: its questions (a `根据《…》第…条` citation "
        "taken out) are the test set, and every learned part is rebuilt without them and without their near "
        "duplicates (more than half of the shorter text's character 6-grams shared). 95 % percentile "
        "bootstrap intervals over questions (1,000 resamples, seed 0); ΔR@10 is paired, against `sparse`.",
        "",
        NOT_REFIT,
        "",
        "Systems: `sparse` — BM25 over article text, law name and chapter, priors and the law prior, no "
        "reranker (the app's default); `sparse+reranker` — the same reranked by the refit LambdaMART model; "
        "`expansions` — the old default: doc2query expansions in the index, their citation prior, no law "
        "prior, no reranker; `plain` — BM25 over the article text alone.",
        "",
    ]
    for result in results:
        if result.split is not None:
            lines += [f"## Held out: {result.name}", "", *describe(result), "", table(result), ""]
            continue
        lines += [
            "## All held-out families",
            "",
            "Mean over the families, each weighted once (intervals: bootstrap resampling each family's "
            "questions within the family):",
            "",
            table(result, macro=True),
            "",
            "Every held-out question pooled, each counted once (the mix of families follows `--max-queries`):",
            "",
            *describe(result),
            "",
            table(result),
            "",
        ]
    return "\n".join(lines)


def figures(results: Sequence[FamilyResult], command: str, settings: Mapping) -> dict:
    """The figures of a run as one JSON-ready object."""
    out: dict = {"command": command, "settings": dict(settings), "metrics": list(METRICS), "families": {}}
    for r in results:
        entry: dict = {"systems": r.summary(), "notes": r.notes}
        if r.split is not None:
            entry |= {
                "test_queries": len(r.split.test),
                "family_rows": r.split.held_rows,
                "training_rows": len(r.split.training),
                "near_duplicate_rows_dropped": r.split.near_rows,
                "expansion_questions_kept": sum(map(len, r.split.expansions.values())),
                "expansion_questions_dropped": r.split.expansions_dropped,
                "reranker": r.reranker,
                "seconds": round(r.seconds, 1),
                "per_query": {
                    s: [{"id": i, "rank": k} for i, k in zip(ev.ids, ev.ranks, strict=True)]
                    for s, ev in r.evaluations.items()
                },
            }
            out["families"][r.name] = entry
        else:
            out["pooled"] = entry | {"mean_over_families": r.macro_summary()}
    out["not_refit"] = NOT_REFIT
    return out
