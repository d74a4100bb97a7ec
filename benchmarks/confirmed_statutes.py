"""Does the answer quote the statute whose condition the client confirmed? (issue 18, session 17)

    python benchmarks/confirmed_statutes.py          # ≈ 20 s, no model

For every question of the clarification benchmark (``benchmarks/clarification_relevance.py``: 448 everyday
questions, each first-level element hand-labelled relevant or not), a client routed by the receptionist
says yes to every first-level element labelled relevant that was written from a statute entry; then the
lawyer's statutes are retrieved twice: by the search alone (``retrieve_statutes``, what the answer quoted
before) and by ``Firm.retrieve`` (the first article of each confirmed entry first, at most two). Printed:
how many confirmed entries there were, how often the search alone had the entry's first article among the
statutes the extract quotes (the first three) or among the five the lawyer's prompt gets, the same with the
confirmed articles first, and what the lookups cost: the statute search of the lawyer's retrieval
(``retrieve_statutes``) against the lookups the confirmed elements add (``statute_refs`` and
``StatuteSearcher.cited``), p50 and p90 per question.

The "confirmed first" figure is 100 % by construction when every lookup resolves; the figure that says what
the change adds is how often the search alone missed the article of a condition the client had confirmed.

Then the extract's lines on the confirmed facts (``grounded_reply``, session 18): how many link the fact to a
quoted statute when links come from shared words only (``link_facts``, before session 18) and now (a fact
written from a statute entry goes with that entry's first article when it is quoted: ``Brief.sources``), and
how many of the shared-word links went to the fact's own entry's article.
"""

from __future__ import annotations

import time

from _common import percentile, read_jsonl
from clarification_relevance import LABELS, QUESTIONS

from lawluo.agents.lawyer import (
    REPLY_NO_LINK,
    REPLY_STATUTES,
    Brief,
    grounded_reply,
    link_facts,
    retrieve_statutes,
)
from lawluo.config import load_settings
from lawluo.firm import Firm
from lawluo.firm.firm import STATUTES_K


def main() -> None:
    questions = [q for path in QUESTIONS for q in read_jsonl(path)]
    labels = {(r["id"], r["element"]): int(r["relevant"]) for path in LABELS for r in read_jsonl(path)}
    firm = Firm.from_settings(load_settings(environ={}))  # no model configured
    material, searcher = firm.material, firm.statute_searcher
    statute_of = {i.statement: i for i in material.items if i.source == "statute"}
    fresh = {"held_out11", "held_out12", "held_out13"}
    counts = {name: [0, 0, 0, 0, 0] for name in ("all", "held-out 11–13")}  # entries, alone@3, @5, first@3, q
    times = {"statute search": [], "confirmed elements' lookups": []}
    facts = {"by shared words only": [0, 0], "by statute entry, then words": [0, 0]}  # linked, facts
    own = [0, 0]  # shared words linked the fact to its own entry's article, facts
    for q in questions:
        state = firm.new()
        firm.receive(state, q["question"])
        *_, tree = firm.clarify(state, height=2)
        yes = [n for n in tree.level(1) if labels.get((q["id"], n.statement)) and n.statement in statute_of]
        if not yes:
            continue
        for node in yes:
            firm.mark(state, node.id, "yes")
        retrieval = firm.retrieve(state)
        start = time.perf_counter()
        alone = retrieve_statutes(searcher, firm.domains[retrieval.domain], retrieval.query, STATUTES_K)
        times["statute search"].append(time.perf_counter() - start)
        start = time.perf_counter()
        hits = [searcher.cited(cite) for cite in material.statute_refs(state.confirmed)]
        times["confirmed elements' lookups"].append(time.perf_counter() - start)
        words_only = Brief(
            firm.domains[retrieval.domain],
            q["question"],
            confirmed=state.confirmed,
            statutes=retrieval.statutes,
        )
        for name, reply in (
            ("by shared words only", grounded_reply(words_only)),
            ("by statute entry, then words", "".join(firm.answer(state))),
        ):
            lines = [line for line in reply.splitlines() if line.startswith("- 您确认：")]
            facts[name][0] += sum(not line.endswith(REPLY_NO_LINK) for line in lines)
            facts[name][1] += len(lines)
        position = {f"《{s['law']}》{s['article_label']}": i for i, s in enumerate(retrieval.statutes)}
        for fact, (i, _) in zip(
            state.confirmed, link_facts(state.confirmed, retrieval.statutes), strict=True
        ):
            own[0] += i is not None and i == position.get(material.source(fact))
            own[1] += 1
        labels_of = {(h.article.law.name, h.article.label) for h in hits if h is not None}
        keys = [[(s["law"], s["article_label"]) for s in found] for found in (alone, retrieval.statutes)]
        for name in ("all", "held-out 11–13"):
            if name == "all" or q["split"] in fresh:
                c = counts[name]
                c[0] += len(labels_of)
                c[1] += len(labels_of & set(keys[0][:REPLY_STATUTES]))
                c[2] += len(labels_of & set(keys[0][:STATUTES_K]))
                c[3] += len(labels_of & set(keys[1][:REPLY_STATUTES]))
                c[4] += 1
    print(
        f"{len(questions)} questions; a client says yes to the first-level statute elements labelled relevant; "
        f"the extract quotes the first {REPLY_STATUTES} statutes, the prompt gets {STATUTES_K}"
    )
    for name, (n, alone3, alone5, first3, nq) in counts.items():
        print(
            f"{name}: {nq} questions with a confirmed statute element, {n} confirmed entries' first articles; "
            f"search alone: in the quoted {alone3}/{n} = {alone3 / n:.1%}, in the prompt's {alone5}/{n} = "
            f"{alone5 / n:.1%}; confirmed first: quoted {first3}/{n} = {first3 / n:.1%}"
        )
    for name, (linked, n) in facts.items():
        print(
            f"the extract's confirmed facts linked to a quoted statute, {name}: {linked}/{n} = {linked / n:.1%}"
        )
    print(
        f"  shared words alone linked a fact to its own entry's article: {own[0]}/{own[1]} = {own[0] / own[1]:.1%}"
    )
    for name, values in times.items():
        print(
            f"{name}: p50 {percentile(values, 50) * 1000:.1f} ms, p90 {percentile(values, 90) * 1000:.1f} ms"
        )


if __name__ == "__main__":
    main()
