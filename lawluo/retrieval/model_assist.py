"""Statute search sharpened by a language model, when one is configured (``statute_assist_role``).

    searcher = with_model_assist(StatuteSearcher.from_settings(settings), settings, models)
    searcher.search("老板不给钱还把我开了", 20)   # same interface and hits as StatuteSearcher.search

:class:`ModelAssistedSearcher` wraps a :class:`~lawluo.retrieval.statutes.StatuteSearcher` and makes at
most two model calls per question:

1. **Rewrite** (``retrieval/rewrite``): the question in statutory terms plus a short hypothetical
   answer (HyDE, Gao et al. 2023, "Precise Zero-Shot Dense Retrieval without Relevance Labels", §3;
   query rewriting as in Ma et al. 2023, "Query Rewriting for Retrieval-Augmented LLMs"). The question
   with that text appended is searched with the same BM25 searcher, and the two rankings are fused by
   reciprocal rank fusion (:func:`~lawluo.retrieval.fusion.reciprocal_rank_fusion`).
2. **Listwise rerank** (``retrieval/rerank``): the top :data:`RERANK_DEPTH` candidates, numbered, and the
   model answers ``{"order": [3, 1, …]}`` (RankGPT, Sun et al. 2023, "Is ChatGPT Good at Search?", §3.2,
   one window). The order is validated: ids out of range, repeated or not integers are dropped, ids
   it left out follow in their previous order.

Both calls run within one time budget (``statute_assist_budget_s``, :class:`~lawluo.llm.budget.Deadline`)
on top of the role's own timeout. Any fault — no answer, an error, a timeout, broken JSON, no valid id,
an answer too long — leaves that step's model-free ranking in place, silently for the caller (a
warning in the server log). Answers are cached on disk (:class:`AssistCache`, sqlite, keyed by the
model and a hash of the prompt), so a repeated question costs no call; a cached answer is validated
exactly like a fresh one, so a corrupt or hostile cache entry is at worst ignored.

Articles the question names by law and number (:meth:`StatuteSearcher.lookup`) stay first and are
never reranked away. Hits keep the model-free ranking's scores as a ladder: the i-th hit gets the
i-th best model-free score, so a caller that sorts by score (the lawyer's domain boost) keeps the
model's order. Without a configured and available model nothing is wrapped: the model-free path is
unchanged.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from .. import prompts
from ..llm.budget import Deadline
from ..llm.structured import parse_json
from ..prompts.untrusted import clip, quote
from .fusion import reciprocal_rank_fusion
from .query import QueryError, clean_query
from .statutes import StatuteHit

if TYPE_CHECKING:
    from ..llm.base import ChatBackend
    from .statutes import Lookup, StatuteSearcher

log = logging.getLogger(__name__)
T = TypeVar("T")

#: Candidates the model reorders (the lawyer retrieves 20: STATUTES_K × CANDIDATES_PER_STATUTE).
RERANK_DEPTH = 20
#: Depth of each ranking fused by RRF (the original question's and the rewritten one's).
FUSION_DEPTH = 50
#: Characters of each candidate article shown to the model.
CANDIDATE_CHARS = 160
#: Characters of the question sent to the model (the rest is cut, and the cut marked).
QUESTION_CHARS = 1500
#: Characters of the rewrite added to the query; a longer one is cut.
REWRITE_CHARS = 600
#: A model answer (or cached value) longer than this is a fault, not parsed.
MAX_ANSWER_CHARS = 20_000
REWRITE_TOKENS, RERANK_TOKENS = 400, 300
_THINK = re.compile(r"<think>.*?(?:</think>|$)", re.S | re.I)
_TAG = re.compile(r"<[^>]{0,200}>")


class AssistFault(ValueError):
    """A model answer that cannot be used (empty, too long, no valid order)."""


def strip_reasoning(text: str) -> str:
    """``text`` without a reasoning model's ``<think>…</think>`` block.

    >>> strip_reasoning("<think>先想想</think>用人单位 解除劳动合同")
    '用人单位 解除劳动合同'
    """
    return _THINK.sub("", text).strip()


def parse_rewrite(text: object) -> str:
    """The rewrite to add to the query: reasoning and markup removed, whitespace collapsed, cut to
    :data:`REWRITE_CHARS`; :class:`AssistFault` when nothing is left or the answer is far too long.

    >>> parse_rewrite("<b>用人单位</b> 违法解除\\n劳动合同  赔偿金")
    '用人单位 违法解除 劳动合同 赔偿金'
    """
    if not isinstance(text, str) or len(text) > MAX_ANSWER_CHARS:
        raise AssistFault("the rewrite is not text or is too long")
    words = " ".join(_TAG.sub(" ", strip_reasoning(text)).split())
    if not words:
        raise AssistFault("the rewrite is empty")
    return words[:REWRITE_CHARS]


def parse_order(text: object, n: int) -> list[int]:
    """The model's order of candidates ``1..n`` as 0-based positions, every candidate once.

    Accepts ``{"order": [...]}`` or a bare list, ids as integers or digit strings. Ids out of range,
    repeated, or of another type are dropped; candidates the model left out follow in their previous
    order. :class:`AssistFault` when the answer holds no valid id at all.

    >>> parse_order('{"order": [3, 1, 99, "2", 3]}', 4)
    [2, 0, 1, 3]
    """
    if not isinstance(text, str) or len(text) > MAX_ANSWER_CHARS:
        raise AssistFault("the order is not text or is too long")
    try:
        value = parse_json(strip_reasoning(text))
    except ValueError as exc:
        raise AssistFault(f"the order is not JSON: {exc}") from None
    if isinstance(value, dict):
        value = value.get("order")
    if not isinstance(value, list):
        raise AssistFault("the answer has no list of ids")
    order: list[int] = []
    for item in value:
        if isinstance(item, str) and item.strip().isdigit() and len(item.strip()) < 6:
            item = int(item.strip())
        if isinstance(item, int) and not isinstance(item, bool) and 1 <= item <= n and item - 1 not in order:
            order.append(item - 1)
    if not order:
        raise AssistFault("the answer names no candidate id")
    return order + [i for i in range(n) if i not in order]


class AssistCache:
    """Model answers on disk: one sqlite table of (key, answer). Every fault (a file that is not a
    database, a locked or read-only one) makes it a miss or a lost write, logged, never an error."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._broken = False

    @staticmethod
    def key(model: str, messages: list[dict[str, str]], options: dict[str, Any]) -> str:
        payload = json.dumps([model, messages, options], ensure_ascii=False, sort_keys=True)
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()

    def _connection(self) -> sqlite3.Connection | None:
        if self._broken:
            return None
        if self._conn is None:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                conn = sqlite3.connect(self.path, timeout=1.0, check_same_thread=False)
                conn.execute(
                    "CREATE TABLE IF NOT EXISTS answers (key TEXT PRIMARY KEY, answer TEXT NOT NULL)"
                )
                conn.commit()
            except (sqlite3.Error, OSError) as exc:
                log.warning("statute assist cache %s disabled: %s", self.path, exc)
                self._broken = True
                return None
            self._conn = conn
        return self._conn

    def get(self, key: str) -> str | None:
        with self._lock:
            conn = self._connection()
            if conn is None:
                return None
            try:
                row = conn.execute("SELECT answer FROM answers WHERE key = ?", (key,)).fetchone()
            except sqlite3.Error as exc:
                log.warning("statute assist cache %s unreadable: %s", self.path, exc)
                return None
        value = row[0] if row else None
        return value if isinstance(value, str) and len(value) <= MAX_ANSWER_CHARS else None

    def put(self, key: str, answer: str) -> None:
        with self._lock:
            conn = self._connection()
            if conn is None:
                return
            try:
                conn.execute("INSERT OR REPLACE INTO answers (key, answer) VALUES (?, ?)", (key, answer))
                conn.commit()
            except sqlite3.Error as exc:
                log.warning("statute assist cache %s not written: %s", self.path, exc)

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None


def _group(hit: StatuteHit) -> tuple[str, int, int]:
    a = hit.article
    return (a.law.key, a.number, a.suffix)


def _candidate(i: int, hit: StatuteHit) -> str:
    a = hit.article
    text = " ".join(a.text.split())
    text = text if len(text) <= CANDIDATE_CHARS else text[:CANDIDATE_CHARS] + "…"
    return f"[{i}] 《{a.law.key}》{a.label}：{text}"


class ModelAssistedSearcher:
    """:class:`StatuteSearcher`'s interface (``search``, ``lookup``, and every other attribute of the
    wrapped searcher), with the model's rewrite and listwise rerank (module docstring).

    ``calls`` counts the model calls made (cache hits excluded), for tests and benchmarks.
    """

    def __init__(
        self,
        base: StatuteSearcher,
        model: ChatBackend,
        cache: AssistCache | None = None,
        *,
        budget_s: float = 20.0,
        rewrite: bool = True,
        rerank: bool = True,
    ) -> None:
        if not budget_s > 0:
            raise ValueError(f"budget_s must be > 0 (got {budget_s})")
        self.base = base
        self.model = model
        self.cache = cache
        self.budget_s = budget_s
        self.rewrite_enabled = rewrite
        self.rerank_enabled = rerank
        self.calls = 0
        self._calls_lock = threading.Lock()

    def __getattr__(self, name: str) -> Any:  # db, bm25, scores, query_tokens, … of the wrapped searcher
        if name == "base":  # not yet set (during unpickling): never recurse
            raise AttributeError(name)
        return getattr(self.base, name)

    def lookup(self, query: str) -> list[Lookup]:
        return self.base.lookup(query)

    def search(self, query: str, k: int = 5) -> list[StatuteHit]:
        """The ``k`` best articles for ``query``: the model-free search, then the rewrite fused in and the
        top :data:`RERANK_DEPTH` reordered by the model; named articles first, as in the model-free search."""
        query = clean_query(query)
        if k < 1:
            raise QueryError("k must be at least 1")
        hits = self.base.search(query, max(k, FUSION_DEPTH))
        exact = [h for h in hits if h.exact]
        ranked = [h for h in hits if not h.exact]
        ladder = [h.score for h in ranked]
        deadline = Deadline.after(self.budget_s, "statute search with the model")
        named = {_group(h) for h in exact}  # first already: not in the fused list, not shown for reranking
        with deadline.active():
            if self.rewrite_enabled:
                ranked = [h for h in self._with_rewrite(query, ranked) if _group(h) not in named]
            if self.rerank_enabled and len(ranked) > 1:
                ranked = self._reranked(query, ranked)
        out = exact + [replace(h, score=_rung(ladder, i), exact=False) for i, h in enumerate(ranked)]
        return out[:k]

    # -- the two steps ------------------------------------------------------------------------------
    def _with_rewrite(self, query: str, ranked: list[StatuteHit]) -> list[StatuteHit]:
        question, note = clip(query, QUESTION_CHARS, "question")
        messages = [
            {"role": "user", "content": prompts.render("retrieval/rewrite", question=quote(question, note))}
        ]
        rewrite = self._ask("rewrite", messages, parse_rewrite, max_tokens=REWRITE_TOKENS)
        if rewrite is None:
            return ranked
        # The rewrite first: a long question, not the rewrite, is what the searcher's length limit cuts.
        expanded = self.base.search(f"{rewrite}\n{query}", FUSION_DEPTH)
        by_group: dict[tuple[str, int, int], StatuteHit] = {}
        ids: dict[tuple[str, int, int], int] = {}
        lists = []
        for hits in (ranked, expanded):
            lists.append([])
            for h in hits:
                g = _group(h)
                by_group.setdefault(g, h)
                lists[-1].append((ids.setdefault(g, len(ids)), h.score))
        if not ids:
            return ranked
        keys = list(ids)
        fused = reciprocal_rank_fusion(lists, k=len(ids))
        return [by_group[keys[i]] for i, _ in fused]

    def _reranked(self, query: str, ranked: list[StatuteHit]) -> list[StatuteHit]:
        top = ranked[:RERANK_DEPTH]
        question, note = clip(query, QUESTION_CHARS, "question")
        candidates = "\n".join(_candidate(i, h) for i, h in enumerate(top, start=1))
        text = prompts.render(
            "retrieval/rerank", question=quote(question, note), candidates=candidates, n=len(top)
        )
        messages = [{"role": "user", "content": text}]
        order = self._ask(
            "rerank",
            messages,
            lambda answer: parse_order(answer, len(top)),
            max_tokens=RERANK_TOKENS,
            json=True,
        )
        if order is None:
            return ranked
        return [top[i] for i in order] + ranked[RERANK_DEPTH:]

    # -- calls and cache ----------------------------------------------------------------------------
    def _cache_key(self, messages: list[dict[str, str]], max_tokens: int) -> str:
        return AssistCache.key(self.model.log_name(), messages, {"temperature": 0, "max_tokens": max_tokens})

    def _ask(
        self, what: str, messages: list[dict[str, str]], parse: Callable[[str], T], **overrides: Any
    ) -> T | None:
        """``parse`` of the model's answer — a cached one that parses, else one call — or ``None`` after
        any fault (logged). Only answers that parse are cached; a cached one is parsed like a fresh one."""
        key = self._cache_key(messages, overrides["max_tokens"])
        cached = self.cache.get(key) if self.cache is not None else None
        if cached is not None:
            try:
                return parse(cached)
            except AssistFault:
                log.warning("statute assist: unusable %s answer in the cache ignored", what)
        with self._calls_lock:
            self.calls += 1
        try:
            answer = self.model.chat(messages, temperature=0, **overrides)
            value = parse(answer)
        except Exception as exc:  # any fault of the model, its server or its answer: the model-free ranking
            log.warning("statute assist: %s ignored (%s: %s)", what, type(exc).__name__, exc)
            return None
        if self.cache is not None:
            self.cache.put(key, answer)
        return value


def _rung(ladder: list[float], i: int) -> float:
    """The score of the ``i``-th hit: the ``i``-th best model-free score, decreasing past the end."""
    if not ladder:
        return 1.0 / (i + 1)
    return ladder[i] if i < len(ladder) else ladder[-1] * 0.99 ** (i - len(ladder) + 1)


def with_model_assist(searcher: StatuteSearcher, settings, models) -> StatuteSearcher | ModelAssistedSearcher:
    """``searcher`` wrapped with the model of ``settings.statute_assist_role`` when that is set and its
    model is available; else ``searcher`` itself (nothing on the model-free path changes)."""
    role = getattr(settings, "statute_assist_role", None)
    if not role or isinstance(searcher, ModelAssistedSearcher):
        return searcher
    model = models[role]
    if not model.available:
        log.info("statute assist off: the %s role has no model (%s)", role, model.unavailable_reason())
        return searcher
    cache = AssistCache(Path(settings.cache_dir) / "statute-assist.sqlite")
    log.info("statute assist on: %s model %s", role, model.describe())
    return ModelAssistedSearcher(searcher, model, cache, budget_s=settings.statute_assist_budget_s)
