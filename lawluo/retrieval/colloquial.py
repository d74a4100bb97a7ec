"""Colloquial words and the statutory terms they stand for, mined from the supervision pairs.

    mined = mine(rows, db)                            # {"还款": ["借款人", "借款"], …}
    write(mined, path, hand=load_colloquial(...))     # word<TAB>terms lines, as colloquial_terms.tsv

A client writes 欠条, 跑路, 开除; the article says 借款, 下落不明, 解除劳动合同. The hand-written table
(``assets/colloquial_terms.tsv``) covers 70 such words. This module finds more from the training pairs of
``assets/supervision.jsonl.gz`` (lay sources only, ``eval: false``; :data:`~lawluo.retrieval.priors.LAY_SOURCES`):
a word ``w`` is *colloquial* when questions use it (in at least :data:`MIN_QUESTIONS`) and the statutes
hardly ever do (in under :data:`MAX_ARTICLE_SHARE` of the articles); a statutory term ``t`` stands for it
when the articles cited for questions with ``w`` contain ``t`` far more often than the articles cited for
all questions — lift ``P(t ∈ cited | w ∈ question) / P(t ∈ cited) ≥ MIN_LIFT`` with ``P(t | w) ≥
MIN_SHARE`` (the association rules of Agrawal & Srikant 1994, "Fast Algorithms for Mining Association
Rules", VLDB, §2, with lift as the interest measure). Lift, not the raw co-occurrence, keeps the terms of
the most-cited family articles (配偶, 子女) from attaching to every word that family questions use.

Each colloquial word keeps its :data:`TERMS_PER_WORD` best terms; a word of the hand-written table keeps
the hand-written terms. Mined from training rows only, so the leave-source-out bench mines without the
held-out source (:mod:`lawluo.retrieval.holdout`, system ``sparse+mined colloquial``). **Not shipped**: held
out it changed R@10 by +0.003 [+0.000, +0.008] (docs/results/retrieval_leave_source_out.md), and most
words it finds in these pairs are clerks' words (某, 时许) or map to generic terms (被告人, 利息) — the pairs
are too few and too skewed to hub articles to teach everyday vocabulary.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path

from ..files import write_atomically
from ..text import tokenize
from .priors import LAY_SOURCES

FILENAME = "colloquial_terms.mined.tsv"
MIN_QUESTIONS = 8
MAX_ARTICLE_SHARE = 0.0005
MIN_TERM_ARTICLES = 0.0003
MIN_LIFT = 8.0
MIN_SHARE = 0.25
MIN_PAIRS = 5
#: A term must be in this many distinct articles cited for the word's questions.
MIN_ARTICLES = 3
TERMS_PER_WORD = 2


def article_shares(db) -> dict[str, float]:
    """Share of the current articles whose text holds each token."""
    return token_shares(tokenize(a.text) for a in db.articles if a.law.is_current)


def token_shares(documents: Iterable[list[str]]) -> dict[str, float]:
    """Share of ``documents`` (token lists) that hold each token."""
    df: Counter[str] = Counter()
    n = 0
    for tokens in documents:
        df.update(set(tokens))
        n += 1
    return {t: c / max(1, n) for t, c in df.items()}


def mine(
    rows: Iterable[Mapping],
    db,
    shares: Mapping[str, float] | None = None,
    sources: frozenset[str] = LAY_SOURCES,
) -> dict[str, list[str]]:
    """Colloquial word → statutory terms, from the ``eval: false`` rows of ``sources`` (see the module)."""
    shares = article_shares(db) if shares is None else shares
    text_tokens: dict[tuple[str, int], set[str]] = {}

    def cited_tokens(pairs) -> set[str]:
        out: set[str] = set()
        for pair in pairs or ():
            if not isinstance(pair, list | tuple) or len(pair) != 2:
                continue
            key = (pair[0], pair[1])
            if key not in text_tokens:
                article = (
                    db.find_article(*key) if isinstance(key[0], str) and isinstance(key[1], int) else None
                )
                text_tokens[key] = set(tokenize(article.text)) if article is not None else set()
            out |= text_tokens[key]
        return out

    questions: Counter[str] = Counter()
    cited: Counter[str] = Counter()
    together: dict[str, Counter[str]] = {}
    articles: dict[tuple[str, str], set] = {}  # (word, term) → the distinct cited articles holding the term
    n = 0
    for row in rows:
        if row.get("eval") or row.get("source") not in sources or not isinstance(row.get("question"), str):
            continue
        keys = [tuple(p) for p in row.get("articles") or () if isinstance(p, list | tuple) and len(p) == 2]
        terms = cited_tokens(keys)
        if not terms:
            continue
        n += 1
        words = {
            w for w in tokenize(row["question"]) if len(w) >= 2 and shares.get(w, 0.0) < MAX_ARTICLE_SHARE
        }
        cited.update(terms)
        questions.update(words)
        for w in words:
            together.setdefault(w, Counter()).update(terms)
            for key in keys:
                for t in text_tokens.get(key, ()):
                    articles.setdefault((w, t), set()).add(key)
    out: dict[str, list[str]] = {}
    for w, count in questions.items():
        if count < MIN_QUESTIONS:
            continue
        scored = []
        for t, c in together[w].items():
            if c < MIN_PAIRS or len(t) < 2 or shares.get(t, 0.0) < MIN_TERM_ARTICLES:
                continue
            if len(articles.get((w, t), ())) < MIN_ARTICLES:  # one hub article's incidental words
                continue
            share = c / count
            lift = share / (cited[t] / n)
            if share >= MIN_SHARE and lift >= MIN_LIFT:
                scored.append((lift * share, t))
        if scored:
            out[w] = [t for _, t in sorted(scored, key=lambda x: (-x[0], x[1]))[:TERMS_PER_WORD]]
    return dict(sorted(out.items()))


def write(mined: Mapping[str, list[str]], path: Path, hand: Mapping[str, list[str]] | None = None) -> bytes:
    """The mined table as ``word<TAB>terms`` lines (words of the hand-written table ``hand`` left out)."""
    lines = [
        "# colloquial word\tstatutory terms — mined from the supervision pairs by python -m lawluo build "
        "colloquial (lawluo/retrieval/colloquial.py); the hand-written colloquial_terms.tsv comes first"
    ]
    lines += [f"{w}\t{' '.join(terms)}" for w, terms in mined.items() if w not in (hand or {})]
    data = ("\n".join(lines) + "\n").encode("utf-8")
    write_atomically(path, data.decode("utf-8"))
    return data
