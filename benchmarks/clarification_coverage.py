"""How many everyday questions need an article that the clarification material has an entry for (issue 42 item 3).

    python benchmarks/clarification_coverage.py            # ≈ 2 s
    python benchmarks/clarification_coverage.py --tail 20  # also the 20 uncovered articles needed most often

Without a model the tree's first level is drawn from the entries of ``lawluo/tolc/statute_elements.yaml`` (each
written from one or more articles). A question whose issue has no entry gets a neighbouring entry's elements, which
the strict rule of ``benchmarks/data/README.md`` counts as irrelevant (rule 1). The labelled everyday questions of
``benchmarks/data/lay_questions.*.jsonl`` (``fresh*``: written blind, ``train*``: written to learn from) name the
article that most directly answers each (``primary``) and every article a lawyer would cite (``gold``). Printed per
kind of set and per domain: the questions whose primary article (and whose any gold article) some entry was
written from, and how the uncovered articles spread — how many distinct articles the uncovered questions need and
how many of those only one question needs.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

import yaml
from _common import ROOT

from lawluo.law.names import name_key
from lawluo.tolc.mining import STATUTE_FILE

DATA = ROOT / "benchmarks" / "data"


def covered_articles(path: Path = STATUTE_FILE) -> set[tuple[str, str]]:
    """``(law, article)`` of every article an entry of the material was written from (``287-2`` kept as written)."""
    entries = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    return {(name_key(e["law"]), str(a)) for rows in entries.values() for e in rows for a in e["articles"]}


def key(ref: dict) -> tuple[str, str]:
    return name_key(ref["law"]), str(ref["article"])


def report(name: str, rows: list[dict], covered: set[tuple[str, str]], tail: int) -> None:
    primary = sum(key(r["primary"]) in covered for r in rows)
    any_gold = sum(any(key(g) in covered for g in r["gold"]) for r in rows)
    missing = Counter(key(r["primary"]) for r in rows if key(r["primary"]) not in covered)
    once = sum(1 for n in missing.values() if n == 1)
    print(
        f"{name:6s} {len(rows):5d} questions: primary article covered {primary} = {primary / len(rows):.1%}; "
        f"any gold article covered {any_gold} = {any_gold / len(rows):.1%}; the {sum(missing.values())} uncovered "
        f"need {len(missing)} distinct articles, {once} of them once"
    )
    for (law, article), n in missing.most_common(tail):
        print(f"         {n:3d} × {law} {article}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--tail", type=int, default=0, help="print this many of the uncovered articles needed most"
    )
    args = parser.parse_args()
    covered = covered_articles()
    print(f"{len(covered)} articles have an entry ({STATUTE_FILE.relative_to(ROOT)})")
    sets = {
        kind: [
            json.loads(line) for p in sorted(DATA.glob(f"lay_questions.{kind}*.jsonl")) for line in p.open()
        ]
        for kind in ("fresh", "train")
    }
    for kind, rows in sets.items():
        report(kind, rows, covered, args.tail)
    every = [r for rows in sets.values() for r in rows]
    report("all", every, covered, 0)
    print("\nper domain (all sets): primary article covered")
    by_domain: dict[str, list[dict]] = {}
    for r in every:
        by_domain.setdefault(r["domain"], []).append(r)
    for domain, rows in by_domain.items():
        hit = sum(key(r["primary"]) in covered for r in rows)
        print(f"  {domain:22s} {hit:4d}/{len(rows):4d} = {hit / len(rows):.1%}")


if __name__ == "__main__":
    main()
