"""Weak domain labels for consultation questions: which laws the answer cites, and the question's words.

The receptionist (LawLuo paper §3.2) needs questions labelled with the consultation domains (16 shipped), and the
only labelled ones (LawBench 2-4 dev, 250) are few and noisy. Every other source of questions in
``../shared/data`` comes with an answer, and the statutes an answer cites say a lot about the domain:
劳动合同法 → 劳动纠纷, 民法典 art. 1208–1217 → 交通事故, 刑法 → 刑事辩护. :func:`weak_label` combines

- **law votes**: each distinct (law, article) the answer or the record's ``laws`` cite (found by
  :func:`lawluo.law.citations.extract_citations`), and each law named in 《…》 without an article,
  votes for the domain of that law (``laws`` patterns, or the 民法典 article ranges, of the domain
  table's rows, ``lawluo/domains.yaml``); votes are normalised to shares, so a long answer
  does not outweigh the question;
- **question words** (weight 1 per distinct keyword, 0.5 per weak keyword) and the answer's words
  (a quarter of that), from the same rows;

into ``score = 3·law_share + 2·question_words + 0.5·answer_words`` per domain, and keeps the best
domain only when it is clear: ``best ≥ MIN_SCORE`` and ``best ≥ MIN_RATIO × second``. Everything else
is dropped as ambiguous.

    >>> rules = load_rules()
    >>> keyword_votes("我借钱给朋友，他打了借条但一直不还", rules).most_common(1)
    [('debt', 3.5)]
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ..domains import PACKAGED_FILE

RULES = PACKAGED_FILE  # the domain table
MIN_SCORE = 2.0
MIN_RATIO = 1.5
LAW_WEIGHT, QUESTION_WEIGHT, ANSWER_WEIGHT = 3.0, 2.0, 0.5

_BRACKETED = re.compile(r"《([^《》\n]{2,60})》")
_VERSION = re.compile(r"\(\d{4}[^()]*\)$")


@dataclass(frozen=True)
class Rules:
    """The rules file, parsed: law-name patterns, 民法典 ranges and keywords, each with its domain."""

    laws: tuple[tuple[str, str], ...]
    civil_code: tuple[tuple[int, int, str], ...]
    keywords: tuple[tuple[str, str, float], ...]


def load_rules(path: Path = RULES) -> Rules:
    """The weak-labelling rules (``laws``, ``civil_code``, ``keywords``, ``weak``) of the rows of the
    domain table in ``path`` (default: the packaged ``lawluo/domains.yaml``), in row order."""
    from lawluo.domains import load_domains

    laws, ranges, words = [], [], []
    for row in load_domains(path):
        laws += [(pattern, row.id) for pattern in row.laws]
        ranges += [(lo, hi, row.id) for lo, hi in row.civil_code]
        words += [(w, row.id, 1.0) for w in row.keywords]
        words += [(w, row.id, 0.5) for w in row.weak]
    return Rules(tuple(laws), tuple(ranges), tuple(words))


def law_domain(name: str, article: int | None, rules: Rules) -> str | None:
    """The domain a cited law (and article, for the 民法典) points at, or None.

    >>> rules = load_rules()
    >>> law_domain("中华人民共和国劳动合同法", 39, rules), law_domain("中华人民共和国民法典", 1213, rules)
    ('labor', 'traffic')
    >>> law_domain("中华人民共和国民法典", 143, rules) is None  # 总则编: no domain
    True
    """
    from lawluo.law.names import name_key

    key = _VERSION.sub("", name_key(name))
    if key.startswith("民法典") and article is not None and key == "民法典":
        return next((dom for lo, hi, dom in rules.civil_code if lo <= article <= hi), None)
    return next((dom for pattern, dom in rules.laws if pattern in key), None)


def law_votes(texts: Iterable[str], rules: Rules, db=None) -> Counter:
    """Votes of the laws cited in ``texts``: one per distinct (law, article), one per law named bare."""
    from lawluo.law.citations import extract_citations

    votes: Counter = Counter()
    seen: set = set()
    for text in texts:
        if not text:
            continue
        cited = set()
        for c in extract_citations(text, db):
            cited.add(c.law)
            if (c.law, c.article) in seen:
                continue
            seen.add((c.law, c.article))
            article = c.article if c.part is None or c.law.endswith("民法典") else None
            dom = law_domain(c.law, article, rules)
            if dom:
                votes[dom] += 1
        for name in set(_BRACKETED.findall(text)) - cited:
            if ("name", name) in seen or name.startswith("民法典") and len(name) <= 4:
                continue  # a bare 《民法典》 says nothing about the domain
            seen.add(("name", name))
            dom = law_domain(name, None, rules)
            if dom:
                votes[dom] += 1
    return votes


def keyword_votes(text: str, rules: Rules) -> Counter:
    """Sum of the weights of the distinct keywords of each domain found in ``text``."""
    votes: Counter = Counter()
    for word, dom, weight in rules.keywords:
        if word in text:
            votes[dom] += weight
    return votes


@dataclass(frozen=True)
class WeakLabel:
    domain: str | None  # None: ambiguous, dropped
    scores: dict[str, float]
    by: str  # "law+words", "law", "words" or "" — which evidence the winner had


def weak_label(
    question: str, answer: str, laws: Iterable[str], rules: Rules, db=None, law_weight: float = LAW_WEIGHT
) -> WeakLabel:
    """Combine law votes and keywords into one domain, or None when the evidence is not clear.

    ``law_weight`` scales the law votes' share (0: keywords alone decide)."""
    lv = law_votes([answer, *laws], rules, db)
    total = sum(lv.values())
    qv = keyword_votes(question, rules)
    av = keyword_votes(answer, rules) if answer else Counter()
    scores: Counter = Counter()
    for dom, n in lv.items():
        scores[dom] += law_weight * n / total
    for dom, w in qv.items():
        scores[dom] += QUESTION_WEIGHT * w
    for dom, w in av.items():
        scores[dom] += ANSWER_WEIGHT * w
    ranked = scores.most_common(2)
    if not ranked:
        return WeakLabel(None, {}, "")
    best, top = ranked[0]
    second = ranked[1][1] if len(ranked) > 1 else 0.0
    if top < MIN_SCORE or top < MIN_RATIO * second:
        return WeakLabel(None, dict(scores), "")
    by = "+".join(x for x, v in (("law", lv), ("words", qv)) if v.get(best))
    return WeakLabel(best, dict(scores), by)
