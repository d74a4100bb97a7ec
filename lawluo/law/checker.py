"""Check each cited statute against the statute database and compute NHSR.

**NHSR** — the Non-Hallucinated Statute Rate of LegalHalBench (§3.3, with the extraction and
matching procedure of Appendix A.2–A.3) — is the share of cited statutes that are not hallucinated,
where a statute is hallucinated when its name, its article number or its content is wrong: each
extracted statute is matched to the most similar real statute and checked on all three. We count
only citations that carry content (a quotation or statement of what the article says): a name and a
number alone cannot be checked for content, so those get the verdict ``no_content`` and stay out of
the denominator (``nhsr`` is ``None`` when no citation carries content).

Verdicts:

``verified``          the law exists and is in force, the article exists, and the content agrees with it;
``wrong_number``      the content belongs to another article of the same law (``matched`` names it);
``content_mismatch``  the article exists but the content agrees with no article of the law;
``not_found``         no such law, or no such article in any version of it;
``repealed``          the law has been repealed (``matched`` names the successor's article when the
                      content agrees with one, e.g. 合同法 art. 107 → 民法典 art. 577);
``outdated_version``  the content (or, without content, the number) matches only an older version;
``no_content``        name and number only, both real: nothing to check the content against.

**How "content agrees" is decided.** Quotes in real answers are partial (one paragraph of a long
article), slightly reworded, use Arabic numerals for Chinese ones (``处5日以上10日以下拘留``), and in
the LawBench reference style run on into the lawyer's commentary. Both sides are normalised
(numerals written the statute's way, punctuation, brackets and whitespace removed) and compared with
rapidfuzz's ``partial_ratio``: the shorter string is aligned with its best-matching window of the
longer one, so a fragment of an article scores as high as the whole article, and an article followed
by commentary scores as high as the article alone. A score of at least :data:`AGREE` (quotations)
or :data:`AGREE_STATED` (unquoted statements, which paraphrase more) means the content agrees.
Thresholds were set by reading the score distribution on LawBench's answers (see
``tests/fixtures/checked_citations.jsonl`` for hand-checked cases on both sides of them).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rapidfuzz import fuzz
from rapidfuzz.distance import Indel

from .citations import Citation, CitationExtractor
from .database import Article, Law, StatuteDB
from .numerals import int_to_chinese

VERDICTS = ("verified", "wrong_number", "content_mismatch", "not_found", "repealed", "outdated_version", "no_content")
AGREE = 75.0
AGREE_STATED = 68.0
_CANDIDATES = 8
#: Content shorter than this (normalised characters) is compared with the cited article only: a short
#: phrase such as a crime's name matches some window of many articles.
MIN_SEARCH = 15

_NON_WORD = re.compile(r"[^\u4e00-\u9fff0-9a-zA-Z]")
_DIGITS = re.compile(r"\d+")
_FULLWIDTH = str.maketrans("０１２３４５６７８９", "0123456789")


def normalise(text: str) -> str:
    """Content as compared: Arabic numerals in statute style, no punctuation or spaces.

    >>> normalise("处5日以上10日以下拘留，并处200元以上500元以下罚款；")
    '处五日以上十日以下拘留并处二百元以上五百元以下罚款'
    """
    text = text.translate(_FULLWIDTH)
    text = _DIGITS.sub(lambda m: int_to_chinese(int(m.group())) if len(m.group()) <= 8 else m.group(), text)
    return _NON_WORD.sub("", text)


def _bigrams(text: str) -> set[str]:
    return {text[i : i + 2] for i in range(len(text) - 1)}


def block_coverage(quoted: str, target: str, min_block: int = 4) -> float:
    """Share of ``quoted`` covered by runs of at least ``min_block`` characters that appear, in order,
    in ``target`` — robust to quotes that skip items (``…（八）…``) or join non-adjacent paragraphs.

    >>> round(block_coverage("甲乙丙丁戊己庚辛", "甲乙丙丁XX戊己庚辛"), 2)
    1.0
    """
    if not quoted or not target:
        return 0.0
    quoted = quoted[:800]
    covered = sum(
        op.src_end - op.src_start
        for op in Indel.opcodes(quoted, target)
        if op.tag == "equal" and op.src_end - op.src_start >= min_block
    )
    return covered / len(quoted)


@dataclass
class Checked:
    """A citation with its verdict."""

    citation: Citation
    verdict: str
    matched: Article | None = None
    score: float | None = None
    note: str = ""

    def as_dict(self) -> dict:
        c = self.citation
        return {
            "law": c.law,
            "article": c.article,
            "article_label": c.label,
            "written": c.written,
            "verdict": self.verdict,
            "quoted": c.quoted,
            "content_kind": c.content_kind,
            "matched": None
            if self.matched is None
            else {**self.matched.as_dict(), "score": None if self.score is None else round(self.score, 1)},
            "note": self.note,
            "span": [c.start, c.end],
        }


@dataclass
class CheckResult:
    citations: list[Checked]

    @property
    def nhsr(self) -> float | None:
        """Share of content-bearing citations that are verified (LegalHalBench §3.3)."""
        checked = [c for c in self.citations if c.verdict != "no_content"]
        if not checked:
            return None
        return sum(c.verdict == "verified" for c in checked) / len(checked)

    def counts(self) -> dict[str, int]:
        out = dict.fromkeys(VERDICTS, 0)
        for c in self.citations:
            out[c.verdict] += 1
        return out


class CitationChecker:
    """Extracts citations from text and gives each a verdict against a :class:`StatuteDB`."""

    def __init__(self, db: StatuteDB):
        self.db = db
        self.extractor = CitationExtractor(db)
        self._law_grams: dict[int, list[tuple[Article, str, set[str]]]] = {}
        self._norm: dict[int, str] = {}

    # -- similarity ---------------------------------------------------------------------------

    def _article_norm(self, art: Article) -> str:
        norm = self._norm.get(art.index)
        if norm is None:
            norm = self._norm[art.index] = normalise(art.text)
        return norm

    def agreement(self, quoted_norm: str, art: Article) -> float:
        """0–100: how well normalised quoted content agrees with an article (see module docstring)."""
        target = self._article_norm(art)
        if not quoted_norm or not target:
            return 0.0
        return max(float(fuzz.partial_ratio(quoted_norm, target)), 100.0 * block_coverage(quoted_norm, target))

    def _grams_of(self, law: Law) -> list[tuple[Article, str, set[str]]]:
        grams = self._law_grams.get(law.id)
        if grams is None:
            grams = []
            for art in self.db.articles_of(law):
                norm = self._article_norm(art)
                grams.append((art, norm, _bigrams(norm)))
            self._law_grams[law.id] = grams
        return grams

    def best_in_law(self, quoted_norm: str, law: Law, exclude: Article | None = None) -> tuple[Article | None, float]:
        """The article of ``law`` whose text agrees best with the content, among bigram-overlap candidates."""
        q = _bigrams(quoted_norm[:600])
        if not q:
            return None, 0.0
        scored = [(len(q & g), art) for art, _n, g in self._grams_of(law) if art is not exclude]
        scored.sort(key=lambda t: t[0], reverse=True)
        best, best_score = None, 0.0
        for _overlap, art in scored[:_CANDIDATES]:
            s = self.agreement(quoted_norm, art)
            if s > best_score:
                best, best_score = art, s
        return best, best_score

    # -- verdicts ----------------------------------------------------------------------------

    def check_citation(self, cit: Citation) -> Checked:
        res = cit.resolution
        quoted_norm = normalise(cit.quoted) if cit.quoted else ""
        threshold = AGREE_STATED if cit.content_kind == "stated" else AGREE
        if res is None or (res.key is None and res.repeal is None):
            return Checked(cit, "not_found", note=(res.note if res else "no law named"))
        if res.repeal is not None and (res.key is None or not self.db.current(res.key).in_force):
            return self._repealed(cit, quoted_norm, threshold)
        versions = self.db.versions(res.key)
        current = versions[0]
        art = self.db.article(current, cit.article, cit.suffix)
        note = res.note
        if res.part and art is not None and art.part and art.part != res.part:
            note = (note + "; " if note else "") + f"article is in {art.part}, not {res.part}"
        if not quoted_norm:
            if art is not None:
                return Checked(cit, "no_content", art, note=note)
            old = self._in_old_versions(versions, cit)
            if old is not None:
                return Checked(cit, "outdated_version", old, note=f"only in the {old.law.version} version")
            return Checked(cit, "not_found", note=f"{current.name} has no {cit.label}")
        if art is not None:
            score = self.agreement(quoted_norm, art)
            if score >= threshold:
                return Checked(cit, "verified", art, score, note)
        for old_law in versions[1:]:
            old = self.db.article(old_law, cit.article, cit.suffix)
            if old is not None:
                s = self.agreement(quoted_norm, old)
                if s >= threshold:
                    return Checked(cit, "outdated_version", old, s, f"matches the {old_law.version} version")
        if len(quoted_norm) < MIN_SEARCH:
            if art is not None:
                return Checked(cit, "content_mismatch", art, self.agreement(quoted_norm, art), note)
            return Checked(cit, "not_found", note=f"{current.name} has no {cit.label}")
        other, s = self.best_in_law(quoted_norm, current, exclude=art)
        if other is not None and s >= max(threshold, AGREE):
            return Checked(cit, "wrong_number", other, s, f"content is {other.label}")
        for old_law in versions[1:]:
            other, s = self.best_in_law(quoted_norm, old_law)
            if other is not None and s >= threshold:
                return Checked(
                    cit, "outdated_version", other, s, f"content is {other.label} of the {old_law.version} version"
                )
        if art is not None:
            return Checked(cit, "content_mismatch", art, self.agreement(quoted_norm, art), note)
        if self._in_old_versions(versions, cit) is not None:
            old = self._in_old_versions(versions, cit)
            return Checked(cit, "content_mismatch", old, self.agreement(quoted_norm, old), "article only in an older version")
        return Checked(cit, "not_found", note=f"{current.name} has no {cit.label}")

    def _in_old_versions(self, versions: list[Law], cit: Citation) -> Article | None:
        for law in versions[1:]:
            art = self.db.article(law, cit.article, cit.suffix)
            if art is not None:
                return art
        return None

    def _repealed(self, cit: Citation, quoted_norm: str, threshold: float) -> Checked:
        rep = cit.resolution.repeal
        by = rep.repealed_by or "the issuing authority"
        note = f"{rep.name} was repealed by {by}" + (f" ({rep.clause.split(' ')[0]})" if rep.clause else "")
        if quoted_norm and rep.successor_key and self.db.current(rep.successor_key):
            successor = self.db.current(rep.successor_key)
            art, s = self.best_in_law(quoted_norm, successor)
            if art is not None and s >= threshold:
                return Checked(cit, "repealed", art, s, note + f"; the content is now {successor.name} {art.label}")
        if rep.successor_key and self.db.current(rep.successor_key):
            note += f"; successor: {self.db.current(rep.successor_key).name}"
        return Checked(cit, "repealed", None, None, note)

    def check(self, text: str) -> CheckResult:
        return CheckResult([self.check_citation(c) for c in self.extractor.extract(text)])
