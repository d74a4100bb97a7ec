"""The first level's lead issue chosen by the statute search (issue 42 item 3, session 37): a trial, not shipped.

    python benchmarks/first_level_attested_lead.py      # ~5 min: the shipped lead, then three variants

No model; each seen clarification question (every ``benchmarks/data/clarification_questions*.jsonl``) goes
through the firm as a visitor's does (receptionist routing, K=3, first level only), as
``clarification_first_level.py`` runs it. The shipped lead (:meth:`ClarificationMaterial.lead`: the issue whose
keyword the question names most specifically) is compared with a lead *attested* by the lawyer's statute search:
the issue of the consultation's scope whose statute entry was written from one of the question's first N
articles (the best-ranked such article wins) — ahead of the keyword lead ("first") or only when no keyword names
one ("fallback"). The asked elements are scored against every ``clarification_labels*.jsonl`` by the strict rule;
an element no label covers is counted apart (a figure over labelled elements only). These questions were
developed on with the keyword lead, so they favour it: a gain here would still need a fresh set.
"""

from __future__ import annotations

import re

from _common import ROOT, read_jsonl

from lawluo.config import load_settings
from lawluo.firm import Firm
from lawluo.tolc.material import ClarificationMaterial

DATA = ROOT / "benchmarks" / "data"
REF = re.compile(r"《(?P<law>[^》]+)》第(?P<number>\d+)")
VARIANTS = (("shipped", 0), ("first", 3), ("first", 5), ("fallback", 5))


def main() -> None:
    questions = [q for p in sorted(DATA.glob("clarification_questions*.jsonl")) for q in read_jsonl(p)]
    labels = {
        (r["id"], r["element"]): int(r["relevant"])
        for p in DATA.glob("clarification_labels*.jsonl")
        for r in read_jsonl(p)
    }
    firm = Firm.from_settings(load_settings(environ={}))  # no model configured
    material, searcher = firm.material, firm.statute_searcher
    issues_of: dict[
        tuple[str, int], list[str]
    ] = {}  # (law key, article) → the statute entries written from it
    for item in material.items:
        if item.source == "statute" and item.groups and (m := REF.match(item.ref)):
            key = searcher.db.resolve(m["law"]).key
            if key is not None and item.groups[0] not in issues_of.setdefault((key, int(m["number"])), []):
                issues_of[(key, int(m["number"]))].append(item.groups[0])
    shipped_lead = ClarificationMaterial.lead
    print(f"{len(questions)} seen clarification questions, no model, first level, strict rule")
    print("| lead | asked relevant / labelled | unlabelled |\n|---|---|---|")
    for mode, depth in VARIANTS:

        def lead(self, question, domain, mode=mode, depth=depth):
            keyword = shipped_lead(self, question, domain)
            if mode == "shipped" or (mode == "fallback" and keyword is not None):
                return keyword
            allowed = self.scope(domain) & self._statute
            in_scope = {self.items[n].groups[0] for n in allowed.nonzero()[0]}
            for hit in searcher.search(question, depth):
                for issue in issues_of.get((hit.article.law.key, hit.article.number), ()):
                    if issue in in_scope:
                        return self.issue(issue)
            return keyword

        ClarificationMaterial.lead = lead
        try:
            asked = []
            for q in questions:
                state = firm.new()
                firm.receive(state, q["question"])
                *_, tree = firm.clarify(state, height=2)
                asked += [(q["id"], node.statement) for node in tree.level(1) if node.mark == "unknown"]
        finally:
            ClarificationMaterial.lead = shipped_lead
        labelled = [labels[a] for a in asked if a in labels]
        name = "keyword (shipped)" if mode == "shipped" else f"attested by the first {depth} statutes, {mode}"
        print(
            f"| {name} | {sum(labelled)}/{len(labelled)} = {sum(labelled) / len(labelled):.1%} "
            f"| {len(asked) - len(labelled)} of {len(asked)} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
