"""Check each cited statute against the statute database and compute NHSR.

**NHSR** — the Non-Hallucinated Statute Rate of LegalHalBench (§3.3, with the extraction and
matching procedure of Appendix A.2–A.3) — is the share of cited statutes that are not hallucinated,
where a statute is hallucinated when its name, its article number or its content is wrong: each
extracted statute is matched to the most similar real statute and checked on all three. We count
only citations that carry content (a quotation or statement of what the article says): a name and a
number alone cannot be checked for content, so those get the verdict ``no_content`` and stay out of
the denominator (``nhsr`` is ``None`` when no citation carries content).

The verdicts — what each means, whether it is a hallucination, how it is shown — are the rows of
:data:`lawluo.law.verdicts.VERDICT_TABLE`; the rules that give them, tried in order, are
:mod:`lawluo.law.checker_rules` (one small function per rule, each marked with the verdicts it gives).

**How "content agrees" is decided.** Quotes in real answers are partial (one paragraph or item of a
long article), slightly reworded, use Arabic numerals for Chinese ones (``处5日以上10日以下拘留``), and
in the LawBench reference style run on into the lawyer's commentary. A plain string similarity is
fooled both ways: a fabricated rule that borrows a penalty formula shared by hundreds of criminal
articles (``处三年以下有期徒刑、拘役或者罚金``) looks similar to many of them. So both sides are
normalised (numerals written the statute's way, punctuation, brackets and whitespace removed), cut
into character bigrams, and each bigram weighted by its inverse document frequency *within the law*
(a bigram that most articles of the law share weighs almost nothing, a bigram no article has weighs
most). Agreement is the weighted share of the quote found in the article, or of the article found in
the quote when the quote is the longer (an article followed by commentary), times 100. The cited
article agrees at :data:`AGREE`; another article is named as the content's real one (wrong number,
older version, a repealed law's successor) only at :data:`WRONG_NUMBER`, and overturns a cited
article that merely agrees when it reaches :data:`CLEAR_MATCH` and beats it by :data:`MARGIN`.
Thresholds were set on LawBench answers and the hand-checked citations in
``tests/fixtures/checked_citations.jsonl``.
"""

from __future__ import annotations

import datetime
import math
import re

import numpy as np
from scipy import sparse

from . import meaning
from .checked import Checked, CheckResult
from .checker_rules import (
    AGREE,
    AGREE_STATED,
    CLEAR_MATCH,
    MARGIN,
    MIN_SEARCH,
    NEAR_EXACT,
    OLDER_CLEARLY,
    OLDER_MARGIN,
    OLDER_VERBATIM,
    SUCCESSOR,
    WRONG_NUMBER,
    CheckContext,
    judge,
)
from .citations import Citation, CitationExtractor
from .database import Article, Law, StatuteDB
from .numerals import int_to_chinese
from .verdicts import VERDICTS

__all__ = [
    "AGREE",
    "AGREE_STATED",
    "CLEAR_MATCH",
    "MARGIN",
    "MIN_SEARCH",
    "NEAR_EXACT",
    "OLDER_CLEARLY",
    "OLDER_MARGIN",
    "OLDER_VERBATIM",
    "SUCCESSOR",
    "VERDICTS",
    "WRONG_NUMBER",
    "CheckContext",
    "CheckResult",
    "Checked",
    "CitationChecker",
    "as_of_day",
    "normalise",
]

#: The thresholds the rules apply are in :mod:`lawluo.law.checker_rules` (re-exported here).
_MAX_COMPARE = 1200
_CANDIDATES = 8
_PREFILTER = 40

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


class CitationChecker:
    """Extracts citations from text and gives each a verdict against a :class:`StatuteDB`."""

    def __init__(self, db: StatuteDB):
        self.db = db
        self.extractor = CitationExtractor(db)
        self._law_grams: dict[int, list[tuple[Article, str, set[str]]]] = {}
        self._norm: dict[int, str] = {}
        self._idf: dict[int, dict[str, float]] = {}
        self._grams: dict[int, set[str]] = {}
        self._article_clauses: dict[int, list] = {}
        self._matrices: dict[int, tuple] = {}
        self._position: dict[int, int] = {}  # an article's row in its law's matrix

    # -- similarity ---------------------------------------------------------------------------

    def article_norm(self, art: Article) -> str:
        """The article's text as compared (:func:`normalise`), cached."""
        norm = self._norm.get(art.index)
        if norm is None:
            norm = self._norm[art.index] = normalise(art.text)
        return norm

    def _clauses(self, art: Article) -> list:
        out = self._article_clauses.get(art.index)
        if out is None:
            out = self._article_clauses[art.index] = meaning.clauses(art.text, normalise)
        return out

    def agreement(self, quoted_norm: str, art: Article) -> float:
        """0–100: how well normalised quoted content agrees with an article (see module docstring)."""
        quoted = _bigrams(quoted_norm[:_MAX_COMPARE])
        return self._weighted(quoted, art, self._idf_of(art.law))

    def conflict(self, quoted: str, art: Article) -> str:
        """What the quote says otherwise than the article, though every piece of it is there
        (:func:`lawluo.law.meaning.conflict`); ``""`` when nothing."""
        return meaning.conflict(quoted, self._clauses(art), normalise)

    def _weighted(self, quoted: set[str], art: Article, idf: dict[str, float]) -> float:
        target = self._grams_by_index(art)
        if not quoted or not target:
            return 0.0
        default = idf.get("", 1.0)
        shared = sum(idf.get(b, default) for b in quoted & target)
        of_quote = shared / sum(idf.get(b, default) for b in quoted)
        of_article = shared / sum(idf.get(b, default) for b in target)
        # The larger share decides; the smaller breaks near-ties in favour of the article that the
        # quote covers more of (art. 16 over art. 35 for 劳动合同文本由用人单位和劳动者各执一份).
        return 100.0 * max(of_quote, of_article) + 0.01 * min(of_quote, of_article)

    def _grams_by_index(self, art: Article) -> set[str]:
        grams = self._grams.get(art.index)
        if grams is None:
            grams = self._grams[art.index] = _bigrams(self.article_norm(art))
        return grams

    def _grams_of(self, law: Law) -> list[tuple[Article, str, set[str]]]:
        grams = self._law_grams.get(law.id)
        if grams is None:
            grams = [(a, self.article_norm(a), self._grams_by_index(a)) for a in self.db.articles_of(law)]
            self._law_grams[law.id] = grams
        return grams

    def _idf_of(self, law: Law) -> dict[str, float]:
        """Inverse document frequency of character bigrams among the law's articles (key "" = unseen)."""
        idf = self._idf.get(law.id)
        if idf is None:
            grams = self._grams_of(law)
            df: dict[str, int] = {}
            for _a, _n, g in grams:
                for b in g:
                    df[b] = df.get(b, 0) + 1
            n = len(grams)
            idf = {b: math.log((n + 1) / (d + 0.5)) for b, d in df.items()}
            idf[""] = math.log((n + 1) / 0.5)
            self._idf[law.id] = idf
        return idf

    def _matrix_of(self, law: Law):
        """The law's articles × bigrams 0/1 matrix (scipy CSC), its bigram columns and their IDF."""
        cached = self._matrices.get(law.id)
        if cached is None:
            grams = self._grams_of(law)
            idf = self._idf_of(law)
            vocab: dict[str, int] = {}
            rows, cols = [], []
            for row, (art, _n, g) in enumerate(grams):
                self._position[art.index] = row
                for b in g:
                    rows.append(row)
                    cols.append(vocab.setdefault(b, len(vocab)))
            matrix = sparse.csc_matrix(
                (np.ones(len(rows), dtype=np.float64), (rows, cols)), shape=(len(grams), len(vocab))
            )
            idf_vector = np.zeros(len(vocab))
            for b, c in vocab.items():
                idf_vector[c] = idf.get(b, idf[""])
            cached = self._matrices[law.id] = (vocab, matrix, idf_vector)
        return cached

    def best_in_law(
        self, quoted_norm: str, law: Law, exclude: Article | None = None
    ) -> tuple[Article | None, float]:
        """The article of ``law`` whose text agrees best with the content, among bigram-overlap candidates."""
        q = _bigrams(quoted_norm[:_MAX_COMPARE])
        if not q:
            return None, 0.0
        idf = self._idf_of(law)
        grams = self._grams_of(law)
        vocab, matrix, idf_vector = self._matrix_of(law)
        cols = [vocab[b] for b in q if b in vocab]
        if not cols:
            return None, 0.0
        # Cheap overlap prefilter (shared bigrams, one sparse column sum), then an IDF-weighted overlap of
        # the best :data:`_PREFILTER`, then the full score on :data:`_CANDIDATES`; ties go to the later
        # article, as ``heapq.nlargest`` over (score, position) would.
        sub = matrix[:, cols]
        overlaps = np.asarray(sub.sum(axis=1)).ravel()
        if exclude is not None and exclude.law.id == law.id:
            overlaps[self._position[exclude.index]] = -1
        positions = np.arange(len(overlaps))
        top = np.lexsort((-positions, -overlaps))[:_PREFILTER]
        top = top[overlaps[top] >= 0]
        weights = np.asarray(sub[top] @ idf_vector[cols]).ravel()
        order = np.lexsort((-top, -weights))[:_CANDIDATES]
        best, best_score = None, 0.0
        for i in top[order]:
            art = grams[i][0]
            s = self._weighted(q, art, idf)
            if s > best_score:
                best, best_score = art, s
        return best, best_score

    # -- verdicts ----------------------------------------------------------------------------

    def check_citation(self, cit: Citation, as_of: str | None = None) -> Checked:
        """The verdict of one citation, against the version in force on ``as_of`` (an ISO date) when given
        — or the version the citation names (``《公司法》(2018年修正)``) — else against today's statute book
        (the rules: :func:`lawluo.law.checker_rules.judge`)."""
        quoted_norm = normalise(cit.quoted) if cit.quoted else ""
        return judge(CheckContext(self, cit, quoted_norm, as_of))

    def check(self, text: str, as_of: str | datetime.date | None = None) -> CheckResult:
        """Every citation in ``text`` with its verdict; ``as_of`` (a date or ``YYYY-MM-DD``): judge each
        against the version in force on that day — the date the text was written, or of the facts."""
        day = as_of_day(as_of)
        return CheckResult([self.check_citation(c, day) for c in self.extractor.extract(text)])


def as_of_day(value: str | datetime.date | None) -> str | None:
    """An ``as_of`` value as an ISO day; ``ValueError`` with the accepted forms for anything else.

    >>> as_of_day("2017-3-5"), as_of_day(datetime.date(2020, 1, 1)), as_of_day(None), as_of_day("")
    ('2017-03-05', '2020-01-01', None, None)
    """
    if value is None or value == "":
        return None
    if isinstance(value, datetime.date):
        return value.isoformat()[:10]
    m = re.fullmatch(r"\s*(\d{4})[-/.年](\d{1,2})[-/.月](\d{1,2})日?\s*", str(value))
    try:
        if m is None:
            raise ValueError
        return datetime.date(*map(int, m.groups())).isoformat()
    except ValueError:
        raise ValueError(
            f"as_of {str(value)[:40]!r} is not a date: write YYYY-MM-DD, e.g. 2017-03-05"
        ) from None
