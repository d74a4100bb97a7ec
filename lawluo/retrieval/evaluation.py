"""One retrieval evaluation: ranks of gold articles, R@k, MRR@10 and nDCG@10, bootstrap CIs, grouped folds.

    queries = [GoldQuery("q1", "试用期被辞退怎么办", frozenset({("劳动合同法", 39)}), source="consult")]
    result = evaluate(queries, lambda q: [(h.article.law.key, h.article.number) for h in searcher.search(q, 100)])
    result.summary()["overall"]["R@5"]      # {"mean": …, "lo": …, "hi": …}
    for train, test in grouped_folds(queries, n_splits=5): …   # tune on train, report on test

A query's ``gold`` is a set of (law key, article number) pairs, any of which answers it (binary
relevance). Metrics per query, from the ranked list of (law, number) pairs the search returns:

- ``R@k`` (k = 1, 5, 10, 100): 1 when a gold article is among the first k, else 0 — the "hit rate" or
  success@k of ``benchmarks/statute_recall.py``, not the fraction of the gold set found.
- ``MRR@10``: 1 / rank of the first gold article when that rank is ≤ 10, else 0 (Voorhees, TREC-8 QA).
- ``nDCG@10``: DCG = Σ 1/log2(i + 1) over the positions i ≤ 10 holding a gold article (each gold
  article counted once), divided by the ideal DCG of min(|gold|, 10) gold articles at the top
  (Järvelin & Kekäläinen 2002, binary gains).

Each is averaged over queries, overall and per ``source``, with a percentile bootstrap 95% interval
over queries (Efron & Tibshirani 1993, ch. 13): 1,000 resamples, seeded, one matrix operation.
Queries without gold cannot be scored: they are counted (``unscorable``) and left out of the means.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

Key = tuple[str, int]
#: Cut-offs of R@k; MRR and nDCG are cut at :data:`DEPTH`.
KS = (1, 5, 10, 100)
DEPTH = 10
RESAMPLES = 1000
SEED = 0


@dataclass(frozen=True)
class GoldQuery:
    """A question and the articles that answer it; ``group`` keeps near duplicates in one fold."""

    id: str
    question: str
    gold: frozenset[Key]
    source: str = ""
    group: str | None = None


def first_rank(ranked: Sequence[Key], gold: Iterable[Key]) -> int | None:
    """1-based rank of the first gold article in ``ranked``; None when none is there.

    >>> first_rank([("刑法", 1), ("民法典", 1079)], {("民法典", 1079)})
    2
    """
    gold = set(gold)
    for i, key in enumerate(ranked, start=1):
        if key in gold:
            return i
    return None


def query_metrics(ranked: Sequence[Key], gold: Iterable[Key], ks: Sequence[int] = KS) -> dict[str, float]:
    """R@k for each k, MRR@10 and nDCG@10 of one ranked list (see the module docstring).

    >>> m = query_metrics([("a", 1), ("b", 2), ("c", 3)], {("b", 2), ("c", 3)})
    >>> m["R@1"], m["R@5"], m["MRR@10"], round(m["nDCG@10"], 4)
    (0.0, 1.0, 0.5, 0.6934)
    """
    gold = set(gold)
    rank = first_rank(ranked, gold)
    out = {f"R@{k}": float(rank is not None and rank <= k) for k in ks}
    out["MRR@10"] = 1.0 / rank if rank is not None and rank <= DEPTH else 0.0
    seen: set[Key] = set()
    dcg = 0.0
    for i, key in enumerate(ranked[:DEPTH], start=1):
        if key in gold and key not in seen:
            seen.add(key)
            dcg += 1.0 / math.log2(i + 1)
    ideal = sum(1.0 / math.log2(i + 1) for i in range(1, min(len(gold), DEPTH) + 1))
    out["nDCG@10"] = dcg / ideal if ideal else 0.0
    return out


def metric_names(ks: Sequence[int] = KS) -> list[str]:
    return [f"R@{k}" for k in ks] + ["MRR@10", "nDCG@10"]


def bootstrap(values: np.ndarray, resamples: int = RESAMPLES, seed: int = SEED) -> np.ndarray:
    """Means and percentile 95% intervals of the columns of ``values`` (queries × metrics).

    Returns an array (3, metrics): mean, low, high. The resampled query indices are drawn once for
    all metrics, so the intervals of one run are drawn from the same resamples.

    >>> bootstrap(np.ones((4, 2))).tolist()
    [[1.0, 1.0], [1.0, 1.0], [1.0, 1.0]]
    """
    values = np.asarray(values, dtype=np.float64)
    n = len(values)
    if n == 0:
        return np.full((3, values.shape[1] if values.ndim == 2 else 0), np.nan)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n, size=(resamples, n))
    means = values[idx].mean(axis=1)  # (resamples, metrics)
    lo, hi = np.percentile(means, [2.5, 97.5], axis=0)
    return np.vstack([values.mean(axis=0), lo, hi])


@dataclass
class Evaluation:
    """Per-query ranks and metrics of one run; :meth:`summary` aggregates them."""

    ks: tuple[int, ...]
    ids: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    ranks: list[int | None] = field(default_factory=list)
    values: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    unscorable: list[str] = field(default_factory=list)

    @property
    def names(self) -> list[str]:
        return metric_names(self.ks)

    def summary(self, resamples: int = RESAMPLES, seed: int = SEED) -> dict:
        """{"overall": {...}, "by_source": {source: {...}}}: per metric mean, lo, hi, and the query count."""

        def block(mask: np.ndarray) -> dict:
            stats = bootstrap(self.values[mask], resamples, seed)
            out: dict = {"queries": int(mask.sum())}
            for j, name in enumerate(self.names):
                out[name] = {"mean": float(stats[0, j]), "lo": float(stats[1, j]), "hi": float(stats[2, j])}
            return out

        sources = np.array(self.sources, dtype=object)
        by_source = {}
        if len(set(self.sources)) > 1:
            by_source = {s: block(sources == s) for s in sorted(set(self.sources))}
        return {"overall": block(np.ones(len(self.ids), dtype=bool)), "by_source": by_source}


def evaluate(
    queries: Sequence[GoldQuery],
    search: Callable[[str], Sequence[Key]],
    ks: Sequence[int] = KS,
) -> Evaluation:
    """Run ``search`` on every query with gold articles and score its ranking."""
    result = Evaluation(tuple(ks))
    rows = []
    for q in queries:
        if not q.gold:
            result.unscorable.append(q.id)
            continue
        ranked = list(search(q.question))
        m = query_metrics(ranked, q.gold, ks)
        rows.append([m[name] for name in result.names])
        result.ids.append(q.id)
        result.sources.append(q.source)
        result.ranks.append(first_rank(ranked, q.gold))
    result.values = np.array(rows, dtype=np.float64).reshape(len(rows), len(result.names))
    return result


def query_group(query: GoldQuery) -> str:
    """The group a query is never split from: its ``group``, or its id when it has none."""
    return query.group if query.group is not None else f"id:{query.id}"


def grouped_folds(
    queries: Sequence[GoldQuery], n_splits: int = 5, seed: int = SEED
) -> list[tuple[np.ndarray, np.ndarray]]:
    """(train indices, test indices) of ``n_splits`` folds that never split a group.

    A query's group is its ``group`` or, when it has none, its id (scikit-learn's ``GroupKFold``,
    shuffled with ``seed`` so that groups are not assigned in file order).
    """
    from sklearn.model_selection import GroupKFold

    groups = [query_group(q) for q in queries]
    n_groups = len(set(groups))
    if n_groups < n_splits:
        raise ValueError(f"{n_splits} folds need at least {n_splits} groups; there are {n_groups}")
    splitter = GroupKFold(n_splits=n_splits, shuffle=True, random_state=seed)
    x = np.zeros((len(queries), 1))
    return [(train, test) for train, test in splitter.split(x, groups=groups)]


def markdown_table(summary: dict, names: Sequence[str]) -> str:
    """One row per source (overall last), each metric as ``mean [lo, hi]``."""
    head = "| source | queries | " + " | ".join(names) + " |"
    lines = [head, "|" + "---|" * (len(names) + 2)]
    blocks = [*summary["by_source"].items(), ("all", summary["overall"])]
    for source, block in blocks:
        cells = [f"{block[n]['mean']:.3f} [{block[n]['lo']:.3f}, {block[n]['hi']:.3f}]" for n in names]
        lines.append(f"| {source or '—'} | {block['queries']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


class GoldFileError(ValueError):
    """A queries file that cannot be evaluated; the message names the file and lines, in Chinese and English."""


def read_gold_queries(path: str, db) -> tuple[list[GoldQuery], list[str]]:
    """Queries of a JSONL file and notes on the gold articles the database does not know.

    Each line: ``{"id", "question", "articles": [[law, number], …], "source"?, "group"?}``. Law names
    are resolved as the citation checker resolves them (aliases, short names, the Civil Code's books);
    an unknown law or a number the law does not have is dropped with a note, so a query can end with
    no gold (then it is counted as unscorable). A malformed line raises :class:`GoldFileError` naming
    every bad line; nothing is evaluated.
    """
    from ..jsonl import JSONLError, read_jsonl, report

    try:
        lines = read_jsonl(path)
    except JSONLError as exc:
        raise GoldFileError(f"输入文件无法读取 cannot read the queries: {exc}") from None
    bad: list[str] = []
    notes: list[str] = []
    queries: list[GoldQuery] = []
    seen_ids: set[str] = set()
    for n, obj in lines:
        where = f"{path}:{n}"
        qid = obj.get("id", str(n))
        question = obj.get("question")
        articles = obj.get("articles")
        source = obj.get("source", "")
        group = obj.get("group")
        problems = []
        if not isinstance(qid, (str, int)) or isinstance(qid, bool):
            problems.append('"id" 须为字符串或整数 must be a string or an integer')
        elif str(qid) in seen_ids:
            problems.append(f'"id" {qid!r} 重复 appears twice')
        if not isinstance(question, str) or not question.strip():
            problems.append('"question" 须为非空文字 must be non-empty text')
        if not isinstance(articles, list) or not all(_is_pair(a) for a in articles):
            problems.append(
                '"articles" 须为 [法律名, 条号] 列表 must be a list of [law, number] pairs, e.g. [["民法典", 1079]]'
            )
        if not isinstance(source, str):
            problems.append('"source" 须为字符串 must be a string')
        if group is not None and not isinstance(group, (str, int)):
            problems.append('"group" 须为字符串或整数 must be a string or an integer')
        if problems:
            bad.append(f"{where}: " + "; ".join(problems))
            continue
        qid = str(qid)
        seen_ids.add(qid)
        gold = set()
        for law, number in articles:
            key = db.resolve(law).key
            if key is None:
                notes.append(f"{where}: 未知法律 unknown law {law!r}; article {number} left out")
            elif db.find_article(key, number) is None:
                notes.append(f"{where}: 《{key}》无第{number}条 has no article {number}; left out")
            else:
                gold.add((key, number))
        queries.append(
            GoldQuery(qid, question, frozenset(gold), source, None if group is None else str(group))
        )
    if bad:
        raise GoldFileError("输入格式有误 malformed input: " + report(bad))
    if not queries:
        raise GoldFileError(f"{path}: 文件中没有问题 no queries in the file")
    return queries, notes


def _is_pair(value: object) -> bool:
    return (
        isinstance(value, list)
        and len(value) == 2
        and isinstance(value[0], str)
        and bool(value[0].strip())
        and isinstance(value[1], int)
        and not isinstance(value[1], bool)
        and value[1] > 0
    )
