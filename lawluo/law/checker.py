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
from dataclasses import dataclass

import numpy as np
from scipy import sparse

from ..i18n import EN, Message, message
from . import meaning
from .citations import Citation, CitationExtractor
from .database import Article, Law, StatuteDB
from .numerals import int_to_chinese
from .verdicts import VERDICTS, counts, nhsr

__all__ = ["VERDICTS", "CheckResult", "Checked", "CitationChecker", "normalise"]

AGREE = 50.0
AGREE_STATED = 50.0
_MAX_COMPARE = 1200
_CANDIDATES = 8
_PREFILTER = 40
#: Content shorter than this (normalised characters) is compared with the cited article only: a short
#: phrase such as a crime's name matches some window of many articles.
MIN_SEARCH = 15
#: Another article must reach this score to be called the content's real article (wrong_number,
#: a repealed law's successor), and must beat a cited article that merely passes the threshold by
#: MARGIN with at least CLEAR_MATCH to overturn it.
WRONG_NUMBER = 70.0
#: A repealed law's successor rewords its articles (合同法 art. 32 → 民法典 art. 490), so the
#: successor's article is named at a lower agreement.
SUCCESSOR = 55.0
CLEAR_MATCH = 85.0
#: A quote that agrees with today's article is still an older version's when it agrees with that
#: version's article this well and by this much more (a few words reworded by the amendment).
OLDER_CLEARLY = 90.0
OLDER_MARGIN = 8.0
#: …or when, this long (normalised characters), it is word for word that version's text and not today's.
OLDER_VERBATIM = 20
MARGIN = 25.0
#: A cited article this close to the quote cannot be beaten by MARGIN: no need to search the law.
NEAR_EXACT = 100.0 - MARGIN + 10.0

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


@dataclass
class Checked:
    """A citation with its verdict."""

    citation: Citation
    verdict: str
    matched: Article | None = None
    score: float | None = None
    #: how the verdict was reached, where it needs saying (messages of the catalogue: the page shows them in
    #: its language); :attr:`note` is their English, as the JSON and the command line give it
    notes: tuple[Message, ...] = ()

    @property
    def note(self) -> str:
        """The notes in English, ``"; "`` between them: ``""`` for none."""
        return "; ".join(m.text(EN) for m in self.notes)

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
        """Share of content-bearing citations that are verified (LegalHalBench §3.3; :func:`.verdicts.nhsr`)."""
        return nhsr(c.verdict for c in self.citations)

    def counts(self) -> dict[str, int]:
        return counts(c.verdict for c in self.citations)


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

    def _article_norm(self, art: Article) -> str:
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
            grams = self._grams[art.index] = _bigrams(self._article_norm(art))
        return grams

    def _grams_of(self, law: Law) -> list[tuple[Article, str, set[str]]]:
        grams = self._law_grams.get(law.id)
        if grams is None:
            grams = [(a, self._article_norm(a), self._grams_by_index(a)) for a in self.db.articles_of(law)]
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
        — or the version the citation names (``《公司法》(2018年修正)``) — else against today's statute book."""
        res = cit.resolution
        quoted_norm = normalise(cit.quoted) if cit.quoted else ""
        if res is None or (res.key is None and res.repeal is None):
            return Checked(
                cit, "not_found", notes=res.notes if res else (message("statute.note.no_law_named"),)
            )
        law_key = res.key or res.repeal.key
        if as_of is not None and self.db.repealed_on(law_key, as_of) is None and self.db.repeal(law_key):
            if res.key is None:  # in force on that date, but the database holds none of its text
                return Checked(
                    cit,
                    "no_content",
                    notes=(message("statute.note.in_force_no_text", law=res.repeal.name, day=as_of),),
                )
        elif res.repeal is not None:  # resolve() sets it only when no version is in force
            return self._repealed(cit, quoted_norm)
        versions = self.db.versions(res.key)
        reference, dated_note = versions[0], None
        named = next((v for v in versions if res.version and v.version == res.version), None)
        if named is not None:
            reference = named
        elif as_of is not None:
            dated = self.db.version_in_force(res.key, as_of)
            if dated is not None:
                reference = dated
            elif not self.db.existed_on(res.key, as_of):
                oldest = versions[-1]
                since = oldest.first_in_force or oldest.effective
                return Checked(
                    cit,
                    "not_found",
                    notes=(
                        message(
                            "statute.note.not_yet_in_force_since", law=oldest.name, day=as_of, since=since
                        )
                        if since
                        else message("statute.note.not_yet_in_force", law=oldest.name, day=as_of),
                    ),
                )
            else:
                reference = versions[-1]
                dated_note = message("statute.note.no_version_on", day=as_of, version=reference.version)
        checked = self._against(cit, quoted_norm, reference, versions)
        if dated_note:
            if checked.verdict in ("wrong_number", "content_mismatch", "not_found"):
                # Against a later text than the one in force that day, a mismatch or a renumbering says
                # nothing: the citation cannot be judged (刑法 of 2017 against the 2020 text).
                checked = Checked(
                    cit, "no_content", None, None, (message("statute.note.not_judged", reason=dated_note),)
                )
            else:
                checked.notes = (*checked.notes, dated_note)
        if checked.verdict == "verified" and reference is not versions[0]:
            now = self.db.article(versions[0], cit.article, cit.suffix)
            if now is None or self._article_norm(now) != self._article_norm(checked.matched):
                if named is not None:
                    when = message("statute.note.when_named", named=res.version_named)
                elif dated_note:
                    when = message("statute.note.when_oldest", day=as_of)
                else:
                    when = message("statute.note.when_in_force", day=as_of)
                change = "statute.note.amended_in" if now is not None else "statute.note.no_longer_in"
                checked.verdict = "amended_since"
                checked.notes = (
                    message(change, version=reference.version, when=when, current=versions[0].version),
                )
        return checked

    def _against(self, cit: Citation, quoted_norm: str, reference: Law, versions: list[Law]) -> Checked:
        """The verdict against one version of the law (``reference``); versions older than it make
        ``outdated_version``, newer ones — not yet in force on the text's date — are accepted."""
        res = cit.resolution
        threshold = AGREE_STATED if cit.content_kind == "stated" else AGREE
        current = reference
        older = [v for v in versions if v.version < reference.version]
        newer = [v for v in versions if v.version > reference.version]
        art = self.db.article(current, cit.article, cit.suffix)
        notes = res.notes
        if res.part and art is not None and art.part and art.part != res.part:
            notes = (*notes, message("statute.note.wrong_part", part=art.part, cited=res.part))
        if not quoted_norm:
            if art is not None:
                return Checked(cit, "no_content", art, notes=notes)
            old = self._in_versions(older, cit)
            if old is not None:
                return Checked(
                    cit,
                    "outdated_version",
                    old,
                    notes=(message("statute.note.only_in_version", version=old.law.version),),
                )
            new = self._in_versions(newer, cit)
            if new is not None:
                return Checked(
                    cit,
                    "no_content",
                    new,
                    notes=(message("statute.note.in_later_version", version=new.law.version),),
                )
            return Checked(
                cit,
                "not_found",
                notes=(message("statute.note.law_has_no", law=current.name, label=cit.label),),
            )
        s_cited = self.agreement(quoted_norm, art) if art is not None else 0.0
        searchable = len(quoted_norm) >= MIN_SEARCH
        if searchable and s_cited < NEAR_EXACT:
            best, s_best = self.best_in_law(quoted_norm, current, exclude=art)
        else:
            best, s_best = None, 0.0
        # The cited article agrees, unless another article of the law is a clearly better match
        # (shared penalty formulas let a wrong article reach the threshold).
        if s_cited >= threshold and not (s_best >= CLEAR_MATCH and s_best >= s_cited + MARGIN):
            changed = meaning.conflict(cit.quoted, self._clauses(art), normalise)
            if changed:  # every piece is in the article, but joined or worded to say something else
                return Checked(
                    cit,
                    "content_mismatch",
                    art,
                    s_cited,
                    (message("statute.note.reads_otherwise", detail=changed),),
                )
            verbatim_now = quoted_norm in self._article_norm(art)
            for old_law in older:  # the words of an older version, close to today's but not the same
                old = self.db.article(old_law, cit.article, cit.suffix)
                s_old = self.agreement(quoted_norm, old) if old is not None else 0.0
                # a quote that is an older version's words and not today's (a few words the amendment
                # changed), or that agrees with it clearly better
                verbatim_then = (
                    old is not None
                    and not verbatim_now
                    and len(quoted_norm) >= OLDER_VERBATIM
                    and quoted_norm in self._article_norm(old)
                )
                if verbatim_then or (s_old >= OLDER_CLEARLY and s_old >= s_cited + OLDER_MARGIN):
                    return Checked(
                        cit,
                        "outdated_version",
                        old,
                        s_old,
                        (message("statute.note.matches_version", version=old_law.version),),
                    )
            return Checked(cit, "verified", art, s_cited, notes)
        for new_law in newer:  # the text may be dated before the amendment it quotes took effect
            new = self.db.article(new_law, cit.article, cit.suffix)
            s_new = self.agreement(quoted_norm, new) if new is not None else 0.0
            if s_new < threshold or meaning.conflict(cit.quoted, self._clauses(new), normalise):
                continue
            _other, s_other = (
                self.best_in_law(quoted_norm, new_law, exclude=new) if searchable else (None, 0.0)
            )
            if not (s_other >= CLEAR_MATCH and s_other >= s_new + MARGIN):
                return Checked(
                    cit,
                    "verified",
                    new,
                    s_new,
                    (message("statute.note.matches_later", version=new_law.version),),
                )
        for old_law in older:
            old = self.db.article(old_law, cit.article, cit.suffix)
            if old is not None:
                s_old = self.agreement(quoted_norm, old)
                # another article of today's law that agrees clearly better is the content's article
                # (a renumbered article agrees as well with both: the cited number was right then)
                if s_old >= threshold and s_old > s_cited and not (best is not None and s_best > s_old + 5):
                    return Checked(
                        cit,
                        "outdated_version",
                        old,
                        s_old,
                        (message("statute.note.matches_version", version=old_law.version),),
                    )
        if best is not None and s_best >= max(threshold, WRONG_NUMBER):
            return Checked(
                cit, "wrong_number", best, s_best, (message("statute.note.content_is", label=best.label),)
            )
        if searchable:
            for old_law in older:
                other, s_other = self.best_in_law(quoted_norm, old_law)
                if other is not None and s_other >= max(threshold, WRONG_NUMBER) and s_other > s_best:
                    return Checked(
                        cit,
                        "outdated_version",
                        other,
                        s_other,
                        (
                            message(
                                "statute.note.content_is_in_version",
                                label=other.label,
                                version=old_law.version,
                            ),
                        ),
                    )
        if art is not None:
            return Checked(cit, "content_mismatch", art, s_cited, notes)
        old = self._in_versions(older, cit)
        if old is not None:
            return Checked(
                cit,
                "content_mismatch",
                old,
                self.agreement(quoted_norm, old),
                (message("statute.note.only_older"),),
            )
        return Checked(
            cit, "not_found", notes=(message("statute.note.law_has_no", law=current.name, label=cit.label),)
        )

    def _in_versions(self, versions: list[Law], cit: Citation) -> Article | None:
        for law in versions:
            art = self.db.article(law, cit.article, cit.suffix)
            if art is not None:
                return art
        return None

    def _repealed(self, cit: Citation, quoted_norm: str) -> Checked:
        rep = cit.resolution.repeal
        by = rep.repealed_by or message("statute.note.issuing_authority")
        if rep.clause:
            note = message(
                "statute.note.repealed_by_clause", law=rep.name, by=by, clause=rep.clause.split(" ")[0]
            )
        else:
            note = message("statute.note.repealed_by", law=rep.name, by=by)
        successor = self.db.current(rep.successor_key) if rep.successor_key else None
        if successor is None:
            return Checked(cit, "repealed", None, None, (note,))
        if len(quoted_norm) >= MIN_SEARCH:
            art, s = self.best_in_law(quoted_norm, successor)
            if art is not None and s >= SUCCESSOR:
                now_is = message("statute.note.now_is", law=successor.name, label=art.label)
                return Checked(cit, "repealed", art, s, (note, now_is))
        return Checked(
            cit, "repealed", None, None, (note, message("statute.note.successor", law=successor.name))
        )

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
