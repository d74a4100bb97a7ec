"""The statutes an answer cites, as an annotator labels them: one entry per cited article, with its real text.

    cited = cited_statutes(checker, answer)      # [CitedStatute(key="《民法典》第1079条", …), …]
    cited[0].text                                # the article at the number cited, from the database
    cited[0].hallucinated                        # the checker's verdict as a yes/no (hidden by default)

The citations are the checker's (the rules NHSR uses, :class:`lawluo.law.checker.CitationChecker`), so
the human labels and the automatic ones are about the same statutes. Two mentions of one article are
one entry (``key``: the law's canonical name when the database knows it and the article label). The
text shown is the article **at the number cited** in the law's current version (what a lawyer would
look up), not the article the checker matched by content; a law that is repealed or unknown says so.
"""

from __future__ import annotations

from dataclasses import dataclass

from lawluo.i18n import Message, message
from lawluo.law import verdicts
from lawluo.law.checker import CitationChecker

#: Checker verdicts that make a citation hallucinated (LegalHalBench's NHSR: wrong law, number or
#: content). ``no_content`` (an article named without saying what it provides) is not: it exists.
HALLUCINATED = verdicts.HALLUCINATED
MAX_ANSWER_CHARS = 200_000


@dataclass(frozen=True)
class CitedStatute:
    key: str
    law: str
    article_label: str
    verdict: str
    text: str | None  # the article's current text at the number cited; None when there is none
    note: Message | str = ""  # why there is no text (a Message: the page renders it in the reader's language)

    @property
    def hallucinated(self) -> bool:
        return self.verdict in HALLUCINATED


def cited_statutes(checker: CitationChecker | None, answer: str) -> list[CitedStatute]:
    """The distinct articles ``answer`` cites, in order of first mention (empty without a checker)."""
    if checker is None or not answer:
        return []
    out: dict[str, CitedStatute] = {}
    for checked in checker.check(answer[:MAX_ANSWER_CHARS]).citations:
        cit = checked.citation
        key = f"《{cit.law}》{cit.label}"
        if key in out:
            # a later mention that is wrong makes the article's citation wrong (as NHSR counts it)
            if checked.verdict in HALLUCINATED and not out[key].hallucinated:
                out[key] = CitedStatute(
                    key, cit.law, cit.label, checked.verdict, out[key].text, out[key].note
                )
            continue
        text, note = _article_text(checker, cit)
        out[key] = CitedStatute(key, cit.law, cit.label, checked.verdict, text, note)
    return list(out.values())


def _article_text(checker: CitationChecker, cit) -> tuple[str | None, Message | str]:
    db = checker.db
    repealed = cit.resolution is not None and cit.resolution.repeal is not None
    law = db.current(cit.key) if cit.key else None
    if law is None or repealed:
        if repealed:
            by = cit.resolution.repeal.repealed_by
            return None, (
                message("annotate.statute.repealed_by", by=by) if by else message("annotate.statute.repealed")
            )
        return None, message("annotate.statute.no_law")
    article = db.article(law, cit.article, cit.suffix)
    if article is None:
        return None, message("annotate.statute.no_article", law=law.name, article=cit.label)
    return article.text, ""
