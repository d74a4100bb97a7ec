"""The reference statutes of a question: what T_LC's claims are judged against (LegalHalBench A.5).

From the reference file's ``statutes`` when given — a citation such as ``《民法典》第1079条`` is replaced
by the article's real text from the statute database, anything else is used as written — otherwise
from the statutes the reference answer cites (LawBench's references end in ``法律依据:`` and the
articles), again as the real text of the articles the checker matched.
"""

from __future__ import annotations

from lawluo.law.checker import CitationChecker

from .inputs import Reference

MAX_STATUTES = 8


def _article_text(article) -> str:
    return f"《{article.law.name}》{article.label}：{article.text}"


def reference_statutes(checker: CitationChecker, reference: Reference) -> list[str]:
    """Statute texts for ``reference``, at most :data:`MAX_STATUTES`, without repeats."""
    out: list[str] = []
    if reference.statutes is not None:
        for written in reference.statutes:
            matched = [c.matched for c in checker.check(written).citations if c.matched is not None]
            if matched:
                out.extend(_article_text(a) for a in matched)
            else:
                out.append(written.strip())
    elif reference.reference:
        out.extend(
            _article_text(c.matched) for c in checker.check(reference.reference).citations if c.matched
        )
    return list(dict.fromkeys(s for s in out if s))[:MAX_STATUTES]
