"""What the citation checker returns: each citation with its verdict (:class:`Checked`), and a text's
citations with their NHSR (:class:`CheckResult`; the verdicts are :mod:`lawluo.law.verdicts`)."""

from __future__ import annotations

from dataclasses import dataclass

from ..i18n import EN, Message
from .citations import Citation
from .database import Article
from .verdicts import counts, nhsr


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
