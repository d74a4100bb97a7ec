"""Clarification material: yes/no elements per consultation domain, ranked by match to the question.

    material = ClarificationMaterial.from_settings(settings)      # assets/clarifications.jsonl.gz
    material.rank("公司没给我交社保，我想辞职能要补偿吗", "labor", k=3)   # best-matching labour elements
    material.follow_ups(item, "…", "labor", k=3)                    # the element's siblings first

Each :class:`Item` is one element — a statement a client can answer with yes or no (是否…？) — of one
domain, with the words it is about. The items come from two kinds of material, merged by
``python -m lawluo build clarifications`` (:mod:`.mining`): the constituent elements of each domain's key
statutes (``statute_elements.yaml``, written by hand, each with its article) and the clarifying
questions lawyers asked, or the conditions their answers turned on, in the consultations of
``../shared/data``, tagged with the domain of the consultation. Items of one statute entry, one dialogue
or one answer share a ``group``: they are each other's follow-ups (a deeper level of the tree).

Ranking is BM25 (Robertson & Zaragoza, 2009) over the statement and its keywords, with the project's
jieba tokens (:mod:`lawluo.text`), restricted to the consultation's domain — so a
criminal element (自首, 前科) reaches only a criminal consultation — and weighted by source: the
statute elements are worth more than a condition mined from one answer (weights chosen on the dev half
of ``benchmarks/data/clarification_questions.jsonl``; see ``benchmarks/clarification_relevance.py``).

**An element that only restates the question is passed over** (:func:`restates`): after
"我弟弟把对方打成轻伤二级", 伤情鉴定结论是否为轻伤以上？ asks what the client already said. The test is
lexical and explainable: the element's content words — what follows 是否/有没有/有无, less stop words,
qualifiers (以上, 超过, 已…) and quantities (三年, 80) — are (nearly) all words of the question or the
statutory terms of its colloquial words (拆迁 → 征收 补偿, ``assets/colloquial_terms.tsv``). It catches
a restatement in the question's own words, not a paraphrase (全责 for 全部或主要责任).
"""

from __future__ import annotations

import gzip
import json
import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from ..domains import OTHER, PACKAGED, Domains, load_domains
from ..files import write_gzip_lines
from ..law.numerals import article_label
from ..retrieval.bm25 import BM25Index
from ..retrieval.statutes import load_colloquial
from ..text import jieba_words, tokenize
from .statements import (  # noqa: F401  (re-exported: the statement tests)
    DENIAL_REACH,
    KEYWORD_DF_FILE,
    PARAPHRASES,
    RESTATE_SHARE,
    STATED_MAX,
    asks_key,
    content_words,
    is_yes_no,
    keyword_df,
    paraphrased,
    question_words,
    restates,
    said_words,
    specificity,
    stated_answer,
)
from .tree import statement_key

FILENAME = "clarifications.jsonl.gz"
MATERIAL_NOTE = (
    "未配置语言模型：以下法律要素取自本领域关键法条的构成要件和律师咨询中常问的问题，"
    "按与您的问题的相关程度排列，仅供参考。"
)
SOURCES = ("statute", "dialogue", "answer")
#: How much a BM25 match of each source counts (dev half, benchmarks/clarification_relevance.py).
SOURCE_WEIGHT = {"statute": 1.0, "dialogue": 0.55, "answer": 0.45}
#: Extra weight for a mined statement found in several consultations: ``1 + SUPPORT_WEIGHT·ln(support)``.
SUPPORT_WEIGHT = 0.15
#: A mined item is offered only when its weighted score reaches this share of the best statute match
#: (mined statements are many and specific, some garbled; a weak word overlap is not enough to show
#: one). 0.8 until issue 18 step 3; with a statute entry for most common issues since, 1.0: a mined
#: item must match at least as well as the best statute element (the 96 seen questions: the same
#: first levels; on 18 self-written fresh questions it replaced two garbled statements such as
#: 买卖双方是否在签订合同时？).
MINED_MIN_SHARE = 1.0
#: For the generalist (其他), how much another domain's item counts against one of its own.
FOREIGN_WEIGHT = 0.7
#: Any item scoring below this share of the best match is left out: it shares only a common word
#: (属于, 已经…) with the question, and a case of the domain or nothing is better than an unrelated element.
MIN_SHARE = 0.3
STATEMENT_MAX_CHARS = 40
#: Soft routing (:meth:`ClarificationMaterial.domain_for`): below this receptionist confidence the tree's
#: material may come from another domain. The receptionist's own bar for a routing it trusts enough to
#: re-route a conversation (``REROUTE_MIN_CONFIDENCE``): out of fold, routings above it were right 74 %
#: of the time, those below far less often.
SWITCH_CONFIDENCE = 0.6
#: ... and only when another domain's best statute element matches the question better than the routed
#: domain's best (BM25): any better for one of the receptionist's own next choices (its top three),
#: this many times better ("far better", not a near tie) for any other domain. On the 96 seen questions
#: the material's domain then agrees with the labelled one on 88 (the receptionist alone: 75; 1.5×
#: for every domain: 86; 1.2×: 87; 2×: 84).
SWITCH_RATIO = 1.5
#: How many questions' :meth:`ClarificationMaterial.named` are kept (a tree asks it once per node).
NAMED_CACHE = 64
#: An issue's title (:meth:`ClarificationMaterial.issues`) is its entry's first keywords, a client's words.
ISSUE_TITLE_KEYWORDS = 3
#: The generalist (其他) draws on every domain's entries: its issue menu lists the best matches only.
OTHER_ISSUES = 20
#: At most this many articles of the elements a client confirmed lead the lawyer's statutes.
TREE_STATUTES = 2
#: The first level opens with the elements of the entry the question names most specifically
#: (:meth:`ClarificationMaterial.lead`) when its keyword is at least this specific: ``ln((N+1)/(df+1))``
#: of :data:`~lawluo.tolc.statements.KEYWORD_DF_FILE`, 0 for a word every lay question says. Chosen on the seen sets (issue 42).
LEAD_MIN_SPECIFICITY = 3.0


@dataclass(frozen=True)
class Item:
    """One element of the material (the fields of one line of ``clarifications.jsonl.gz``)."""

    id: str
    domain: str  # a domain id of the table (lawluo/domains.yaml)
    statement: str  # yes/no, ends with ？
    keywords: tuple[str, ...] = ()  # what it is about: a client's words for the issue
    source: str = "statute"  # one of SOURCES
    ref: str = ""  # the statute article, or the consultation it was mined from
    groups: tuple[str, ...] = ()  # items sharing a group are each other's follow-ups
    support: int = 1  # consultations the statement was mined from (1 for a statute element)

    @property
    def text(self) -> str:
        """What BM25 indexes: the statement and its keywords."""
        return " ".join((self.statement, *self.keywords))

    def to_json(self) -> str:
        data = asdict(self)
        data["keywords"], data["groups"] = list(self.keywords), list(self.groups)
        return json.dumps(data, ensure_ascii=False, sort_keys=True)

    @classmethod
    def from_dict(cls, obj: object) -> Item:
        """Validate one decoded line; raises ``ValueError`` saying what is wrong."""
        if not isinstance(obj, dict):
            raise ValueError(f"expected a JSON object, got {type(obj).__name__}")
        names = set(cls.__dataclass_fields__)
        if obj.keys() - names or {"id", "domain", "statement"} - obj.keys():
            raise ValueError(f"fields must be {sorted(names)}; got {sorted(obj)}")
        for name in ("id", "domain", "statement", "source", "ref"):
            if name in obj and not isinstance(obj[name], str):
                raise ValueError(f"{name} must be a string")
        for name in ("keywords", "groups"):
            if not isinstance(obj.get(name, []), list) or not all(
                isinstance(x, str) for x in obj.get(name, [])
            ):
                raise ValueError(f"{name} must be a list of strings")
        if obj.get("source", "statute") not in SOURCES:
            raise ValueError(f"source {obj['source']!r} is not one of {', '.join(SOURCES)}")
        if not isinstance(obj.get("support", 1), int) or obj.get("support", 1) < 1:
            raise ValueError("support must be a positive integer")
        if not is_yes_no(obj["statement"]) or len(obj["statement"]) > STATEMENT_MAX_CHARS + 10:
            raise ValueError(f"statement {obj['statement'][:60]!r} is not a short yes/no statement")
        return cls(
            **{**obj, "keywords": tuple(obj.get("keywords", ())), "groups": tuple(obj.get("groups", ()))}
        )


def write_material(items: Iterable[Item], path: Path) -> bytes:
    """Write ``items`` as gzip JSONL (keys sorted, no file name, mtime 0: the same items give the same
    bytes) atomically to ``path``; returns the bytes written."""
    return write_gzip_lines(path, (item.to_json() for item in items))


def load_material(path: Path) -> list[Item]:
    """Read a file written by :func:`write_material`; ``ValueError`` names the file and the line."""
    path = Path(path)
    try:
        with gzip.open(path, "rb") as gz:
            raw = gz.read()
    except (OSError, EOFError) as exc:
        raise ValueError(f"{path}: not a readable gzip file: {exc}") from exc
    items = []
    for lineno, line in enumerate(raw.split(b"\n"), start=1):
        if line.strip():
            try:
                items.append(Item.from_dict(json.loads(line.decode("utf-8"))))
            except (ValueError, TypeError) as exc:
                raise ValueError(f"{path}: line {lineno}: corrupt clarification record: {exc}") from exc
    return items


@dataclass(frozen=True)
class Issue:
    """One statute entry of the material as a client sees it in the tree's issue menu (问题类型): the
    ``id`` its elements share (``statute:labor:22``), its domain and a ``title`` in a client's words."""

    id: str
    domain: str
    title: str


@dataclass
class ClarificationMaterial:
    """The items and their BM25 index; ``rank`` and ``follow_ups`` answer within one domain.
    ``colloquial`` (a client's word → statutory terms) lets :meth:`restating` see that 拆迁 said 征收.
    ``domains``' guarded rows (``guarded_by``: the criminal one) keep their elements (自首, 前科…) to
    themselves: another routing draws on them only for a question that says one of their words."""

    items: list[Item]
    index: BM25Index | None = None
    colloquial: dict[str, list[str]] = field(default_factory=dict)
    domains: Domains = PACKAGED

    def __post_init__(self) -> None:
        if self.index is None:
            self.index = BM25Index.build([item.text for item in self.items]) if self.items else None
        self._domains = np.array([item.domain for item in self.items], dtype=object)
        self._guarded = {d.id: d for d in self.domains.guarded}
        self._weights = np.array(
            [SOURCE_WEIGHT[i.source] * (1 + SUPPORT_WEIGHT * math.log(i.support)) for i in self.items],
            dtype=np.float32,
        )
        self._statute = np.array([i.source == "statute" for i in self.items], dtype=bool)
        self._keys = [statement_key(i.statement) for i in self.items]
        self._by_key: dict[str, list[int]] = {}
        self._groups: dict[str, list[int]] = {}
        self._by_keyword: dict[str, list[int]] = {}  # a statute entry's lay word → its elements
        self._named: dict[str, np.ndarray] = {}  # the last questions' named() (one tree asks it many times)
        self._issues: dict[str, Issue] = {}  # a statute entry's group → the entry as an issue
        for n, item in enumerate(self.items):
            if item.source == "statute" and item.groups and item.groups[0] not in self._issues:
                title = "、".join(item.keywords[:ISSUE_TITLE_KEYWORDS]) or item.statement
                self._issues[item.groups[0]] = Issue(item.groups[0], item.domain, title)
            for word in item.keywords if item.source == "statute" else ():
                self._by_keyword.setdefault(word, []).append(n)
            self._by_key.setdefault(self._keys[n], []).append(n)
            for group in item.groups:
                self._groups.setdefault(group, []).append(n)

    @classmethod
    def from_settings(cls, settings) -> ClarificationMaterial | None:
        """The settings' ``clarifications.jsonl.gz`` with its index cached in ``cache_dir``; ``None``
        when the assets folder has no material (the tree then reads its elements off similar cases)."""
        path = Path(settings.assets_dir) / FILENAME
        if not path.exists():
            return None
        items = load_material(path)
        from ..retrieval.shipped import SHIPPED_DIR, shipped_path

        index = BM25Index.load_or_build(
            Path(settings.cache_dir) / "clarifications-bm25",
            [i.text for i in items],
            shipped=shipped_path(Path(settings.assets_dir) / SHIPPED_DIR, "clarifications"),
        )
        colloquial = load_colloquial(Path(settings.assets_dir) / "colloquial_terms.tsv")
        return cls(items, index, colloquial, load_domains(settings.domains_file))

    def __len__(self) -> int:
        return len(self.items)

    def covers(self, domain: str | None) -> bool:
        """True when the material has elements for ``domain``."""
        return domain is not None and bool(np.any(self._domains == domain))

    def scope(self, domain: str) -> np.ndarray:
        """Which items a consultation of ``domain`` may get: its own; for the generalist (其他, where
        the receptionist also sends the questions it is unsure of) every domain's but the guarded ones'."""
        if domain == OTHER:
            return ~np.isin(self._domains, list(self._guarded))
        return self._domains == domain

    def domain_for(
        self, question: str, domain: str, confidence: float | None, near: Sequence[str] = ()
    ) -> str:
        """The domain whose elements a tree for ``question`` draws on (soft routing): the routed
        ``domain``, unless the receptionist was unsure (``confidence`` below :data:`SWITCH_CONFIDENCE`;
        ``None`` — the client chose the domain — never switches) and another domain's best statute
        element (among those the question :meth:`named`, when it names any) matches the question
        better: any better for one of the receptionist's next choices ``near`` (its top three),
        :data:`SWITCH_RATIO` times better for any other. A guarded routing (criminal) is kept; a guarded
        domain is a target only for a question that says one of its words.

        Rule 1 of ``benchmarks/data/README.md`` counts an element of another matter as irrelevant; a
        lay question's words name its matter (租金 + 不还车 is a lease, not a traffic accident) more
        surely than an unsure classifier does."""
        if confidence is None or confidence >= SWITCH_CONFIDENCE or domain in self._guarded or not question:
            return domain
        if self.index is None:
            return domain
        scores = self.index.scores(tokenize(question)) * self._weights
        named = self.named(question)
        statute = named if named.any() else self._statute  # the elements the client's words name, if any
        best: dict[str, float] = {}
        for n in np.flatnonzero(statute & (scores > 0)):
            d = self.items[n].domain
            best[d] = max(best.get(d, 0.0), float(scores[n]))
        for guarded in self._guarded.values():
            if not guarded.said_in(question):
                best.pop(guarded.id, None)
        # the routed domain keeps its best statute element even when the question names none of its
        # entries: a keyword of another domain (三年 of a loan's limitation period) is no reason to leave a
        # routing whose own words (别来了, 补偿) the keywords happen to miss (issue 42)
        here = max(
            best.get(domain, 0.0),
            *(float(scores[n]) for n in np.flatnonzero(self._statute & (self._domains == domain))),
            0.0,
        )
        better = [
            d
            for d in sorted(best)  # sorted: ties go the same way every time
            if d != domain and best[d] > (here if d in near else SWITCH_RATIO * here)
        ]
        return max(better, key=lambda d: best[d]) if better else domain

    def named(self, question: str) -> np.ndarray:
        """The statute elements whose entry the client's words name: one of the entry's keywords (the lay
        words it was written with, ``statute_elements.yaml``) is in ``question``, as written or
        :func:`paraphrased`. A BM25 match alone can rest on a word any matter uses (经过…同意 brought
        调岗 to a photo used without consent; 卫生 brought 卫生间 leaks to a fine for a dirty kitchen):
        :meth:`rank` puts the named elements first and :meth:`domain_for` compares domains on them.
        Mined elements are never named: their keywords are the words of the consultations they came from."""
        if (known := self._named.get(question)) is not None:
            return known
        out = np.zeros(len(self.items), dtype=bool)
        texts = (question, paraphrased(question))
        words = {w for t in texts for w in jieba_words(t)}
        for word, members in self._by_keyword.items():
            # a one-character keyword (告, 罚, 撞) only as a word of its own: 告 is not in 广告
            if word in words if len(word) == 1 else any(word in t for t in texts):
                out[members] = True
        out.flags.writeable = False  # shared by the callers of the cache
        if len(self._named) >= NAMED_CACHE:
            self._named.clear()
        self._named[question] = out
        return out

    def naming(self, question: str) -> dict[str, float]:
        """``{issue id: how specifically question names it}``: for each statute entry one of whose keywords
        ``question`` says (as :meth:`named` finds them), the highest :func:`specificity` of those keywords."""
        if not question:
            return {}
        texts = (question, paraphrased(question))
        words = {w for t in texts for w in jieba_words(t)}
        out: dict[str, float] = {}
        for word, members in self._by_keyword.items():
            if word in words if len(word) == 1 else any(word in t for t in texts):
                value = specificity(word)
                for group in {self.items[n].groups[0] for n in members if self.items[n].groups}:
                    out[group] = max(out.get(group, 0.0), value)
        return out

    def lead(self, question: str, domain: str) -> Issue | None:
        """The issue the question names most specifically among those a consultation of ``domain`` may get
        (:meth:`scope`): the entry of the most :func:`specific <specificity>` keyword the question says, if it
        reaches :data:`LEAD_MIN_SPECIFICITY` (押金, 漏水, 加班费 do; 公司, 房子 do not); of entries named
        equally, the one whose element matches the question best (BM25). ``None`` when none does. Its
        elements open the first level (issue 42: the entry the question names wins over the domain's
        best BM25 matches, which a word any matter uses can bring)."""
        naming = self.naming(question)
        allowed = self.scope(domain) & self._statute
        if domain == OTHER or not naming:
            return None
        scores = self._scores(question, domain, frozenset())
        best: dict[str, tuple[float, float]] = {}
        for group, value in naming.items():
            if value < LEAD_MIN_SPECIFICITY:
                continue
            members = [n for n in self._groups.get(group, ()) if allowed[n]]
            if members:
                best[group] = (max(float(scores[n]) for n in members), value)
        if not best:
            return None
        return self._issues[max(sorted(best), key=lambda g: best[g])]

    def statute_refs(self, statements: Iterable[str], limit: int = TREE_STATUTES) -> list[str]:
        """The first article of each statute entry one of ``statements`` (elements the client confirmed)
        was written from, as a citation the statute search looks up (``《中华人民共和国民法典》第九百八十五条``),
        in the order of ``statements``, at most ``limit``. The lawyer's statutes then begin with the articles
        whose conditions the client said yes to, whatever words the search would match."""
        out: list[str] = []
        for statement in statements:
            cite = self.source(statement)
            if cite is not None and cite not in out:
                out.append(cite)
                if len(out) == limit:
                    break
        return out

    def source(self, statement: str) -> str | None:
        """The first article of the statute entry ``statement`` was written from, as a citation
        (``《中华人民共和国民法典》第九百八十五条``); ``None`` for an element of no entry (mined, a case's)."""
        item = self._statute_item(statement)
        return None if item is None else first_article(item.ref)

    def issue(self, issue_id: str) -> Issue | None:
        """The statute entry ``issue_id`` (a group of :meth:`issues`), or ``None`` for any other value."""
        return self._issues.get(issue_id) if isinstance(issue_id, str) else None

    def issue_of(self, statement: str) -> Issue | None:
        """The statute entry ``statement`` was written from (any domain), or ``None`` (mined, a case's)."""
        item = self._statute_item(statement)
        return None if item is None else self._issues.get(item.groups[0])

    def _statute_item(self, statement: str) -> Item | None:
        """The statute element with ``statement``'s :func:`statement_key` (any domain), or ``None``."""
        n = next((n for n in self._by_key.get(statement_key(statement), ()) if self._statute[n]), None)
        return None if n is None else self.items[n]

    def issues(self, question: str, domain: str) -> list[Issue]:
        """The issues a client of ``domain`` may choose from for ``question`` (the tree's 问题类型 menu),
        best first: the entries whose keywords the question names (:meth:`named`), then by their best BM25
        match, then the rest of the domain's entries in the order written. For the generalist (其他), whose
        tree may draw on any domain but the guarded ones, the :data:`OTHER_ISSUES` best matches."""
        scores = self._scores(question, domain, frozenset()) if question else np.zeros(len(self.items))
        named = self.named(question) if question else np.zeros(len(self.items), dtype=bool)
        allowed = self.scope(domain) & self._statute
        best: dict[str, tuple[bool, float, int]] = {}
        for n in np.flatnonzero(allowed):
            group = self.items[n].groups[0]
            was = best.get(group, (False, 0.0, n))
            best[group] = (was[0] or bool(named[n]), max(was[1], float(scores[n])), min(was[2], n))
        order = sorted(best, key=lambda g: (not best[g][0], -best[g][1], best[g][2]))
        if domain == OTHER:
            order = [g for g in order if best[g][0] or best[g][1] > 0][:OTHER_ISSUES]
        return [self._issues[g] for g in order]

    def issue_elements(
        self,
        issue_id: str,
        query: str,
        taken: set[str] = frozenset(),
        question: str = "",
        keep_said: bool = False,
    ) -> list[Item]:
        """The elements of the entry ``issue_id`` (the client chose it in the 问题类型 menu), those that match
        ``query`` best first, then in the order written; none whose :func:`statement_key` is in ``taken`` and
        none that only restates ``question``."""
        members = self._groups.get(issue_id, []) if self.issue(issue_id) else []
        scores = self.index.scores(tokenize(query)) if self.index is not None and query else None
        order = sorted(members, key=lambda n: (-(scores[n] if scores is not None else 0.0), n))
        said = (lambda statement: False) if keep_said else self.restating(question)
        return [
            self.items[n] for n in order if self._keys[n] not in taken and not said(self.items[n].statement)
        ]

    def stated(self, question: str, items: Sequence[Item]) -> list[tuple[Item, str, str]]:
        """``(item, mark, quote)`` for each of ``items`` that ``question`` already answers
        (:func:`stated_answer`), in their order."""
        out = []
        for item in items:
            if item.source != "statute":  # a mined statement may be garbled (您的案底记录是否被发现？)
                continue
            answer = stated_answer(item.statement, question, self.colloquial)
            if answer is not None:
                out.append((item, *answer))
        return out

    def restating(self, question: str) -> Callable[[str], bool]:
        """``statement -> True`` when the element only restates ``question`` (:func:`restates`)."""
        words = question_words(question, self.colloquial) if question else frozenset()
        return lambda statement: bool(words) and restates(statement, words)

    def find(self, statement: str, domain: str) -> Item | None:
        """The item in ``domain``'s scope with this statement (up to punctuation, 是否 and 您)."""
        allowed = self.scope(domain)
        n = next((n for n in self._by_key.get(statement_key(statement), ()) if allowed[n]), None)
        return None if n is None else self.items[n]

    def rank(
        self,
        query: str,
        domain: str,
        k: int,
        taken: set[str] = frozenset(),
        statutes_only: bool = False,
        question: str = "",
        keep_said: bool = False,
    ) -> list[Item]:
        """Up to ``k`` items of ``domain`` that match ``query``, best first — the elements ``question``
        names (:meth:`named`) before the others — none whose :func:`statement_key` is in ``taken`` and
        none that only restates ``question`` (the client's own words; :meth:`restating`): BM25 × source
        weight; a mined item only when it scores at least ``MINED_MIN_SHARE`` of the best statute item, any item only when it scores at least ``MIN_SHARE``
        of the best item (both bars count the taken and the restating items too); a named element that
        shares no BM25 term with ``query`` is kept at that bar, after the named ones that match. ``statutes_only``: the
        statute items with any match, no bars (what is left when the good matches are used up)."""
        scores = self._scores(query, domain, frozenset())
        if statutes_only:
            scores[~self._statute] = 0.0
            self._drop(scores, taken)
            return self._top(scores, k, self.restating(question))
        named = self.named(question) if question else None
        if named is not None:  # named without a BM25 term in common (帮信 said as 帮信罪): kept, at the bar
            unmatched = named & self.scope(domain) & (scores <= 0)
            scores[unmatched] = MIN_SHARE * float(scores.max(initial=0.0)) or 1.0
        best_statute = float(scores[self._statute].max(initial=0.0))  # taken ones included: the bar stays
        scores[~self._statute & (scores < MINED_MIN_SHARE * best_statute)] = 0.0
        scores[scores < MIN_SHARE * float(scores.max(initial=0.0))] = 0.0
        self._drop(scores, taken)
        said = (lambda statement: False) if keep_said else self.restating(question)
        return self._top(scores, k, said, named)

    def follow_ups(
        self,
        item: Item,
        query: str,
        domain: str,
        k: int,
        taken: set[str] = frozenset(),
        question: str = "",
    ) -> list[Item]:
        """Up to ``k`` items of ``item``'s groups (the statute's other elements, the dialogue's other
        questions), those that match ``query`` first, then in the order of the material; none that only
        restates ``question``."""
        allowed = self.scope(domain)
        members = sorted({n for g in item.groups for n in self._groups.get(g, ())})
        members = [n for n in members if allowed[n]]
        scores = self._scores(query, domain, taken)
        order = sorted(members, key=lambda n: (-scores[n], n))
        said = self.restating(question)
        out = (self.items[n] for n in order if self.items[n] is not item and self._keys[n] not in taken)
        return [i for i in out if not said(i.statement)][:k]

    def defaults(self, domain: str, k: int, taken: set[str] = frozenset(), question: str = "") -> list[Item]:
        """The domain's statute elements in the order written, for a question no element matches; none
        that only restates ``question``."""
        said = self.restating(question)
        out = [
            item
            for item in self.items
            if item.domain == domain
            and item.source == "statute"
            and statement_key(item.statement) not in taken
            and not said(item.statement)
        ]
        return out[:k]

    # -- internals ------------------------------------------------------------------------------------
    def _scores(self, query: str, domain: str, taken: set[str]) -> np.ndarray:
        if self.index is None:
            return np.zeros(0, dtype=np.float32)
        scores = self.index.scores(tokenize(query)) * self._weights
        scores[~self.scope(domain)] = 0.0
        if domain == OTHER:
            scores[self._domains != OTHER] *= FOREIGN_WEIGHT
        self._drop(scores, taken)
        return scores

    def _drop(self, scores: np.ndarray, taken: set[str]) -> None:
        for key in taken:
            for n in self._by_key.get(key, ()):
                scores[n] = 0.0

    def _top(
        self, scores: np.ndarray, k: int, said: Callable[[str], bool], first: np.ndarray | None = None
    ) -> list[Item]:
        """Up to ``k`` items by score, those of ``first`` (that score at all) before the others."""
        out: list[Item] = []
        order = np.argsort(-scores, kind="stable")
        if first is not None:
            ahead = (first & (scores > 0))[order]
            order = np.concatenate([order[ahead], order[~ahead]])
        for n in order:
            if len(out) == k or scores[n] <= 0:
                break
            if not said(self.items[n].statement):
                out.append(self.items[n])
        return out


_REF = re.compile(r"^《(?P<law>.+)》第(?P<number>\d+)(?:条之(?P<suffix>\d+))?(?:、|条|$)")


def first_article(ref: str) -> str | None:
    """A statute entry's citation (``Item.ref``, as :mod:`.mining` writes it) cut to its first article, with
    the article number written as the statute database writes it; ``None`` for anything else.

    >>> first_article("《中华人民共和国公司法》第227、66条"), first_article("《中华人民共和国刑法》第287条之2")
    ('《中华人民共和国公司法》第二百二十七条', '《中华人民共和国刑法》第二百八十七条之二')
    >>> first_article("案例 12") is None
    True
    """
    m = _REF.match(ref)
    if m is None:
        return None
    return f"《{m['law']}》" + article_label(int(m["number"]), int(m["suffix"] or 0))


#: How the clarifier's prompt names where a mined element came from.
_MINED_ORIGIN = {"dialogue": "律师在咨询中问过", "answer": "律师答复所依据的条件"}


def describe(items: Sequence[Item]) -> str:
    """The items as reference lines for the clarifier's prompt: ``- statement（where it came from）``.

    >>> describe([Item("s-1", "labor", "单位是否没有依法为您缴纳社会保险？", ref="《中华人民共和国劳动合同法》第38条")])
    '- 单位是否没有依法为您缴纳社会保险？（《中华人民共和国劳动合同法》第38条）'
    """
    return "\n".join(
        f"- {item.statement}（{item.ref if item.source == 'statute' else _MINED_ORIGIN[item.source]}）"
        for item in items
    )
