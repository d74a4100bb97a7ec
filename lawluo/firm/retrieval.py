"""What the lawyer's answer rests on (LawLuo paper §3.2): the statutes and cases retrieved for the latest
question and the facts the client confirmed, and the notices on the statutes it names."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from ..agents.lawyer import (
    CASE_ATTESTING_STATUTES,
    is_criminal_question,
    lookup_notices,
    retrieve_cases,
    retrieve_statutes,
)
from ..domains import OTHER, Domains
from ..retrieval.statute_fit import annotate
from .state import Consultation
from .tracing import traced

STATUTES_K, CASES_K = 5, 3


class Library(Protocol):
    """What a retrieval reads (a :class:`~lawluo.firm.Firm` has it): the domain table, the statute and case
    searchers, the clarification material and the reader of a question's kind of case (each may be ``None``)."""

    @property
    def domains(self) -> Domains: ...

    statute_searcher: object
    case_searcher: object
    material: object
    case_kinds: object


@dataclass(frozen=True)
class Retrieval:
    """What :meth:`Firm.retrieve` found for one question: the query it searched (the question and the
    confirmed facts), the lawyer's domain, the statutes and cases, and the notices on statutes it names."""

    query: str
    domain: str
    statutes: list[dict]
    cases: list[dict]
    notices: list[str]


def retrieve(firm: Library, state: Consultation) -> Retrieval:
    """The statutes, cases and notices for the latest question and the facts confirmed so far (the
    retrieval step of :meth:`Firm.answer`, traced). A batch prepares it ahead of the model call and hands it
    to :meth:`Firm.answer`, so the CPU work of the next questions runs while answers stream."""
    query, domain = retrieval_key(firm, state)
    lawyer_domain = firm.domains[domain]
    with traced(state, "retrieval", "statutes and cases") as event:
        # One search: its first STATUTES_K are shown, its first CASE_ATTESTING_STATUTES attest the cases' kind.
        found = retrieve_statutes(
            firm.statute_searcher, lawyer_domain, query, max(STATUTES_K, CASE_ATTESTING_STATUTES)
        )
        statutes = found[:STATUTES_K]
        confirmed = confirmed_statutes(firm, state)
        if confirmed:
            named = {(s["law"], s["article_label"]) for s in confirmed}
            rest = [s for s in statutes if (s["law"], s["article_label"]) not in named]
            statutes = (confirmed + rest)[:STATUTES_K]
        question = state.client_turns[-1]
        statutes = annotate(
            statutes,
            question,
            is_criminal_question(question, domain, firm.domains),
            getattr(firm.statute_searcher, "colloquial", None),
        )
        cases = retrieve_cases(
            firm.case_searcher,
            lawyer_domain,
            query,
            CASES_K,
            firm.domains.guarded,
            found[:CASE_ATTESTING_STATUTES],
            None if firm.case_kinds is None else firm.case_kinds(query),
        )
        event.summary = (
            f"{len(statutes)} statutes ({len(confirmed)} of the confirmed elements), "
            f"{len(cases)} cases for {len(query)} characters"
        )
    notices = lookup_notices(firm.statute_searcher, state.client_turns[-1])
    return Retrieval(query, domain, statutes, cases, notices)


def confirmed_statutes(firm: Library, state: Consultation) -> list[dict]:
    """The articles whose conditions the client confirmed in the tree: each confirmed element written
    from a statute entry (:meth:`~lawluo.tolc.material.ClarificationMaterial.statute_refs`) brings its
    entry's first article, looked up by law and number. The search alone can miss it — a wrong
    transfer's 不当得利 (民法典 985) shares no word with 转错账 — and the client's yes is the firmest sign
    that the article applies."""
    cited = getattr(firm.statute_searcher, "cited", None)  # a searcher of a test may not look up
    if firm.material is None or cited is None or not state.confirmed:
        return []
    hits = (cited(cite) for cite in firm.material.statute_refs(state.confirmed))
    return [{**hit.as_dict(), "preferred": True, "confirmed": True} for hit in hits if hit is not None]


def sources(firm: Library, facts: list[str]) -> dict[str, str]:
    """Each marked fact written from a statute entry → that entry's first article, as a citation
    (:meth:`~lawluo.tolc.material.ClarificationMaterial.source`): the answer without a model says which
    quoted article a fact belongs to by where the fact came from, not only by the words they share."""
    if firm.material is None:
        return {}
    return {fact: cite for fact in facts if (cite := firm.material.source(fact)) is not None}


def retrieval_key(firm: Library, state: Consultation) -> tuple[str, str]:
    """What a retrieval depends on: its query (the latest question and the facts confirmed so far) and
    the lawyer's domain."""
    return " ".join([state.client_turns[-1], *state.confirmed]), firm.domains[state.domain or OTHER].id
