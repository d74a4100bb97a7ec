"""The positive control's rows: corruptions of each kind drawn (seeded) and spread over laws and articles,
each cited in an answer's words."""

from __future__ import annotations

import random

from ..database import Article, Law, StatuteDB
from .answers import _cite
from .common import POSITIVE_SIZES, POSITIVE_VERDICT, PRC, _expected
from .corruptions import Corrupter, Corruption

_LEADS = (
    "根据您描述的情况，",
    "关于这个问题，法律有明确规定。",
    "您好，针对您的咨询，相关法律依据如下。",
    "这种情况需要看法律的具体规定。",
    "",
)


def positive_rows(
    db: StatuteDB,
    pool: list[Article],
    civil_pool: list[Article],
    drink_pool: list[Article],
    rng: random.Random,
    avoid: frozenset[tuple] = frozenset(),
) -> tuple[list[dict], dict]:
    """The positive control: :data:`POSITIVE_SIZES` rows per corruption kind, each one corrupted citation.

    Corruptions of the articles in ``avoid`` (:func:`article_id`) are taken only when the others run out."""
    c = Corrupter(db, rng)
    candidates: dict[str, list[Corruption]] = {
        "wrong_number": c.wrong_numbers(pool),
        "wrong_law": c.wrong_laws(pool),
        "should_may": c.word_swaps("should_may", pool),
        "above_below": c.word_swaps("above_below", pool),
        "drink_drunk": c.word_swaps("drink_drunk", pool + drink_pool),
        "must_not_removed": c.word_swaps("must_not_removed", pool),
        "number_changed": c.number_changes(pool),
        "splice": c.splices(pool + drink_pool),
        "repealed": c.repealed(civil_pool),
        "outdated_version": c.outdated(),
        "no_such_article": c.no_such_articles(pool),
    }
    rows, stats = [], {}
    for kind, size in POSITIVE_SIZES.items():
        found = candidates[kind]
        picked = _spread(rng, found, size, by_law=kind == "outdated_version", avoid=avoid)
        stats[kind] = {"candidates": len(found), "rows": len(picked)}
        if avoid:
            stats[kind]["from_avoided_articles"] = sum(article_id(c.source) in avoid for c in picked)
        for corr in picked:
            rows.append(_positive_row(db, corr, rng, len(rows) + 1))
    return rows, stats


def _spread(
    rng: random.Random,
    found: list[Corruption],
    size: int,
    by_law: bool = False,
    avoid: frozenset[tuple] = frozenset(),
) -> list[Corruption]:
    """A seeded sample, at most one per source article (or law) while they last, then at most two, …

    Corruptions of an article in ``avoid`` come after the others (in each group, and groups made only of
    them after the other groups); with ``avoid`` empty the sample is the same as without it."""
    by_article: dict[object, list[Corruption]] = {}
    for corr in found:
        by_article.setdefault(corr.source.law.key if by_law else corr.source.index, []).append(corr)
    groups = [by_article[k] for k in sorted(by_article)]
    for g in groups:
        rng.shuffle(g)
    rng.shuffle(groups)
    if avoid:  # stable: the seeded order is kept within the fresh and within the avoided
        for g in groups:
            g.sort(key=lambda c: article_id(c.source) in avoid)
        groups.sort(key=lambda g: all(article_id(c.source) in avoid for c in g))
    picked: list[Corruption] = []
    depth = 0
    while len(picked) < size and any(len(g) > depth for g in groups):
        for g in groups:
            if len(g) > depth and len(picked) < size:
                picked.append(g[depth])
        depth += 1
    return picked


def article_id(art: Article) -> tuple[str, str, int, int]:
    """An article as a positive row's ``source`` names it: law key, version, number, suffix."""
    return (art.law.key, art.law.version, art.number, art.suffix)


def _positive_row(db: StatuteDB, corr: Corruption, rng: random.Random, n: int) -> dict:
    src = corr.source
    d = corr.detail
    if corr.kind in ("wrong_number", "no_such_article"):
        law, number, suffix = src.law, d["cited_article"], d.get("cited_suffix", 0)
        key, written = law.key, None
    elif corr.kind == "wrong_law":
        law = db.current(d["cited_law"])
        number, suffix, key, written = d["cited_article"], d["cited_suffix"], law.key, None
    elif corr.kind == "repealed":
        law, number, suffix = None, d["cited_article"], 0
        written = rng.choice((PRC + d["cited_law"], d["cited_law"]))
        res = db.resolve(written)
        if res.repeal is None or res.key is not None:
            raise ValueError(f"{written} is not recorded as repealed in the statute database")
        key = res.repeal.key
    elif corr.kind == "outdated_version":
        law = db.current(d["cited_law"])
        number, suffix, key, written = src.number, src.suffix, law.key, None
    else:
        law, number, suffix, key, written = src.law, src.number, src.suffix, src.law.key, None
    forms = ("colon", "quoted", "arabic", "unbracketed", "book")
    if law is not None:
        _form, cite = _cite(rng, law, number, suffix, corr.quote, forms=forms)
        written = law.name
    else:
        fake = Law(-1, written, key, "", "", "", None, False)
        _form, cite = _cite(rng, fake, number, suffix, corr.quote, forms=("colon", "quoted", "arabic"))
    text = rng.choice(_LEADS) + cite
    return {
        "id": f"pos-{n:04d}",
        "control": "positive",
        "style": "answer",
        "kind": corr.kind,
        "text": text,
        "as_of": None,
        "citations": [_expected(written, key, number, suffix, "hallucinated", POSITIVE_VERDICT[corr.kind])],
        "excluded": [],
        "source": {
            "law": src.law.name,
            "key": src.law.key,
            "version": src.law.version,
            "article": src.number,
            "suffix": src.suffix,
        },
        "corruption": {k: v for k, v in d.items() if k not in ("cited_law", "cited_article", "cited_suffix")},
    }


# -- building and freezing ----------------------------------------------------------------------
