"""What a leave-source-out run holds out (issue 39, item 1): the question families, the supervision rows and
expansions they are read from, and one family's test questions and the training data left without it.

The bench that refits the search on a :class:`Split` is :class:`lawluo.retrieval.holdout.LeaveSourceOut`.
"""

from __future__ import annotations

import gzip
import json
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from .evaluation import SEED, GoldQuery
from .expansions import query_text  # noqa: F401  (re-exported: the question as tested)
from .rerank_training import near_duplicates

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
    "fused+reranker",
    "fused+reranker+adapter",
    "fused+reranker+adapter+hub",
    "expansions",
    "plain",
)
#: The systems run only when an encoder is given (``--encoder``); left out of the tables otherwise.
DENSE_SYSTEMS = (
    "sparse+e5",
    "sparse+reranker+e5",
    "fused+reranker",
    "fused+reranker+adapter",
    "fused+reranker+adapter+hub",
)
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
