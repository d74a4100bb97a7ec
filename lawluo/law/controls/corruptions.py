"""The positive control's corruptions of real articles: the wrong number or law, one word of legal meaning
changed, a number changed, a splice of two clauses, a repealed law, an older version, no such article."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field

from ..database import Article, StatuteDB
from ..names import CIVIL_CODE_PARTS, CIVIL_CODE_SUCCESSOR_PARTS
from ..numerals import chinese_to_int, int_to_chinese
from .answers import _part
from .common import MIN_QUOTE, OTHER_LAWS, REPEALED_SIZES, plain

# -- positive control: corruptions ---------------------------------------------------------------

SWAPS: dict[str, tuple[tuple[str, str], ...]] = {
    "should_may": (("应当", "可以"), ("可以", "应当")),
    "above_below": (("以上", "以下"), ("以下", "以上")),
    "drink_drunk": (("醉酒", "饮酒"), ("饮酒", "醉酒")),
    "must_not_removed": (("不得", ""),),
}
_AMOUNT = re.compile(
    r"(?<![第（(])([零一二三四五六七八九十百千万两]+|\d+)(周岁|年|个月|日|天|小时|元|万元|倍|次|人)"
)


@dataclass
class Corruption:
    """A corrupted quote: what it is, the text cited, and what it was made from."""

    kind: str
    quote: str
    source: Article
    detail: dict = field(default_factory=dict)


def replace_at(text: str, at: int, old: str, new: str) -> str:
    """``text`` with the ``old`` that starts at ``at`` replaced by ``new``; everything else unchanged.

    >>> replace_at("处三年以上七年以下有期徒刑", 3, "以上", "以下")
    '处三年以下七年以下有期徒刑'
    """
    if text[at : at + len(old)] != old:
        raise ValueError(f"{old!r} is not at {at} of {text!r}")
    return text[:at] + new + text[at + len(old) :]


def change_number(text: str, at: int, rng: random.Random) -> tuple[str, str, str]:
    """``text`` with the number-with-unit (``三年``, ``一千元``, ``十五日``) that starts at ``at`` changed to
    another value (doubled, tripled, one more or less, five more; seeded). Returns the new text and the
    number as written before and after.

    >>> change_number("处三年以下有期徒刑", 1, random.Random(0))[1:]
    ('三', '八')
    """
    m = _AMOUNT.match(text, at)
    if m is None:
        raise ValueError(f"no number with a unit at {at} of {text!r}")
    raw = m.group(1)
    value = chinese_to_int(raw)
    choices = sorted(
        v for v in {value * 2, value + 1, value - 1, value * 3, value + 5} if v != value and v > 0
    )
    new_value = rng.choice(choices)
    new = str(new_value) if raw.isdigit() else int_to_chinese(new_value)
    return text[: m.start(1)] + new + text[m.end(1) :], raw, new


#: A clause ``<subject>的，<consequence>``: the consequence starts with what the law does or allows.
_CLAUSE_RE = re.compile(
    r"^(.{3,80}的)，((?:处|由|依照|依法|给予|应当|可以|不得|承担|并处|责令|吊销|没收|构成|免除|从重|从轻|减轻|视为|属于|是).{3,})$"
)


def splice_clauses(article_text: str) -> list[tuple[str, str, str]]:
    """Every splice of one clause's subject (``…的``) with another clause's consequence, in one article.

    Returns ``(spliced, clause the subject is from, clause the consequence is from)``.

    >>> splice_clauses("饮酒后驾驶机动车的，处暂扣六个月机动车驾驶证。\\n醉酒驾驶机动车的，吊销机动车驾驶证。")[0][0]
    '饮酒后驾驶机动车的，吊销机动车驾驶证'
    """
    clauses = []
    for c in re.split(r"[。；;\n]", article_text):
        m = _CLAUSE_RE.match(c.strip())
        if m and not m.group(1).endswith("目的") and not m.group(2).endswith(("：", ":")):
            clauses.append((m.group(1), m.group(2), c.strip()))
    out = []
    for a in clauses:
        for b in clauses:
            if a[0] != b[0] and a[1] != b[1]:
                out.append((f"{a[0]}，{b[1]}", a[2], b[2]))
    return out


class Corrupter:
    """Builds corrupted quotes from a pool of real articles, checking each against every article of the law."""

    def __init__(self, db: StatuteDB, rng: random.Random):
        self.db = db
        self.rng = rng
        self._plain: dict[int, str] = {}

    def plain_of(self, art: Article) -> str:
        p = self._plain.get(art.index)
        if p is None:
            p = self._plain[art.index] = plain(art.text)
        return p

    def in_any_article(self, quote: str, key: str) -> bool:
        """The quote (normalised) is part of some article of any version of the law."""
        q = plain(quote)
        return any(
            q in self.plain_of(art) for law in self.db.versions(key) for art in self.db.articles_of(law)
        )

    def span_around(self, text: str, at: int) -> tuple[int, int]:
        """The span of the sentence of ``text`` holding position ``at`` (70 %), else of the whole text."""
        if self.rng.random() < 0.3:
            return 0, len(text)
        start = max(text.rfind(p, 0, at) for p in "。\n") + 1
        ends = [e for e in (text.find(p, at) for p in "。\n") if e >= 0]
        end = min(ends) + 1 if ends else len(text)
        while start < end and text[start].isspace():
            start += 1
        return start, end

    def word_swaps(self, kind: str, pool: list[Article]) -> list[Corruption]:
        out = []
        for art in pool:
            for old, new in SWAPS[kind]:
                at = art.text.find(old)
                while at >= 0:
                    start, end = self.span_around(art.text, at)
                    quote = art.text[start:end]
                    changed = replace_at(quote, at - start, old, new)
                    if len(plain(changed)) >= MIN_QUOTE and not self.in_any_article(changed, art.law.key):
                        out.append(
                            Corruption(kind, changed, art, {"from": old, "to": new, "quote_before": quote})
                        )
                    at = art.text.find(old, at + len(old))
        return out

    def number_changes(self, pool: list[Article]) -> list[Corruption]:
        out = []
        for art in pool:
            for m in _AMOUNT.finditer(art.text):
                start, end = self.span_around(art.text, m.start())
                quote = art.text[start:end]
                changed, before, after = change_number(quote, m.start() - start, self.rng)
                if len(plain(changed)) < MIN_QUOTE or self.in_any_article(changed, art.law.key):
                    continue
                out.append(
                    Corruption(
                        "number_changed",
                        changed,
                        art,
                        {"from": before + m.group(2), "to": after + m.group(2), "quote_before": quote},
                    )
                )
        return out

    def splices(self, pool: list[Article]) -> list[Corruption]:
        out = []
        for art in pool:
            for spliced, subject_of, consequence_of in splice_clauses(art.text):
                quote = spliced + "。"
                if len(plain(quote)) < MIN_QUOTE or self.in_any_article(quote, art.law.key):
                    continue
                out.append(
                    Corruption(
                        "splice", quote, art, {"subject_from": subject_of, "consequence_from": consequence_of}
                    )
                )
        return out

    def wrong_numbers(self, pool: list[Article]) -> list[Corruption]:
        out = []
        for art in pool:
            articles = self.db.articles_of(art.law)
            numbers = sorted({(a.number, a.suffix) for a in articles} - {(art.number, art.suffix)})
            if not numbers:
                continue
            near = [n for n in numbers if n[1] == 0 and 0 < abs(n[0] - art.number) <= 5]
            target = self.rng.choice(near) if near and self.rng.random() < 0.6 else self.rng.choice(numbers)
            quote = _part(self.rng, art.text)
            cited = self.db.article(art.law, *target)
            if len(plain(quote)) < MIN_QUOTE or cited is None or plain(quote) in self.plain_of(cited):
                continue
            if self._elsewhere(quote, art):
                continue
            out.append(
                Corruption(
                    "wrong_number", quote, art, {"cited_article": target[0], "cited_suffix": target[1]}
                )
            )
        return out

    def _elsewhere(self, quote: str, art: Article) -> bool:
        """The quote is also part of another article of the law (then no number is wrong for it)."""
        q = plain(quote)
        return any(q in self.plain_of(a) for a in self.db.articles_of(art.law) if a is not art)

    def wrong_laws(self, pool: list[Article]) -> list[Corruption]:
        out = []
        for art in pool:
            others = [k for k in OTHER_LAWS if k != art.law.key and self.db.current(k) is not None]
            key = self.rng.choice(others)
            target_law = self.db.current(key)
            target = self.rng.choice(self.db.articles_of(target_law))
            quote = _part(self.rng, art.text)
            if len(plain(quote)) < MIN_QUOTE or self.in_any_article(quote, key):
                continue
            out.append(
                Corruption(
                    "wrong_law",
                    quote,
                    art,
                    {"cited_law": key, "cited_article": target.number, "cited_suffix": target.suffix},
                )
            )
        return out

    def repealed(self, civil_pool: list[Article]) -> list[Corruption]:
        out = []
        for name, size in REPEALED_SIZES.items():
            parts = CIVIL_CODE_SUCCESSOR_PARTS[name]
            ranges = [CIVIL_CODE_PARTS[p] for p in parts]
            candidates = [a for a in civil_pool if any(lo <= a.number <= hi for lo, hi in ranges)]
            for art in candidates:
                quote = _part(self.rng, art.text)
                if len(plain(quote)) < MIN_QUOTE:
                    continue
                out.append(
                    Corruption(
                        "repealed",
                        quote,
                        art,
                        {"cited_law": name, "cited_article": self.rng.randint(1, size)},
                    )
                )
        return out

    def outdated(self) -> list[Corruption]:
        out = []
        for key in sorted({law.key for law in self.db.laws.values()}):
            versions = self.db.versions(key)
            if len(versions) < 2 or versions[0].level not in ("法律", "司法解释"):
                continue
            current = self.db.articles_of(versions[0])
            current_plain = [self.plain_of(a) for a in current]
            for old_law in versions[1:]:
                for old in self.db.articles_of(old_law):
                    p = self.plain_of(old)
                    if len(p) < 30 or any(p in c or c in p for c in current_plain):
                        continue
                    out.append(
                        Corruption(
                            "outdated_version",
                            old.text,
                            old,
                            {
                                "cited_law": key,
                                "old_version": old_law.version,
                                "current_version": versions[0].version,
                            },
                        )
                    )
        return out

    def no_such_articles(self, pool: list[Article]) -> list[Corruption]:
        out = []
        for art in pool:
            top = max(a.number for law in self.db.versions(art.law.key) for a in self.db.articles_of(law))
            quote = _part(self.rng, art.text)
            if len(plain(quote)) < MIN_QUOTE:
                continue
            out.append(
                Corruption("no_such_article", quote, art, {"cited_article": top + self.rng.randint(1, 60)})
            )
        return out
