"""The clarification tree's second level without a model: where its elements come from, and the labels of
the elements session 18 changed (issue 18).

    python benchmarks/clarification_level2.py        # ≈ 10 s

1. Over the 448 benchmark questions (``benchmarks/clarification_relevance.py``: receptionist routing, no model,
   H=3, K=3) the second-level elements by origin: the domain's material, or a similar case's decisive fact, its
   dispute focus or its cause of action (您的情况是否涉及「…」？). Since session 18 a case's cause of action is
   offered only when the domain has no material, and its dispute focus only when it asks a yes/no question.
2. ``benchmarks/data/clarification_level2.heldout11-13.jsonl``: the second-level elements of held-out 11–13 that
   differ between the system before session 18 and after it, labelled by the rule of benchmarks/data/README.md
   (not blind; README says how): relevant / labelled, per system, cause-of-action elements apart.
"""

from __future__ import annotations

import re
from collections import Counter

from _common import ROOT, read_jsonl
from clarification_relevance import QUESTIONS

from lawluo.config import load_settings
from lawluo.firm import Firm
from lawluo.tolc.from_cases import YES_NO_FOCUS

LABELS = ROOT / "benchmarks" / "data" / "clarification_level2.heldout11-13.jsonl"
CAUSE = "您的情况是否涉及「"
_FACT_FORM = re.compile(r"是否|有没有|有无")


def origin(node) -> str:
    """Where one element came from, in words."""
    if node.source != "cases":
        return node.source or "material"
    if node.statement.startswith(CAUSE):
        return "cases: cause of action"
    if not _FACT_FORM.search(node.statement) and not YES_NO_FOCUS.search(node.statement):
        return "cases: not a yes/no question"
    return "cases: decisive fact or yes/no dispute focus"


def main() -> None:
    questions = [q for path in QUESTIONS for q in read_jsonl(path)]
    firm = Firm.from_settings(load_settings(environ={}))  # no model configured
    counts = Counter()
    for q in questions:
        state = firm.new()
        firm.receive(state, q["question"])
        *_, tree = firm.clarify(state, height=3, k=3)
        counts.update(origin(n) for n in tree.level(2))
    total = sum(counts.values())
    print(
        f"{len(questions)} questions, H=3 K=3, receptionist routing, no model: {total} second-level elements"
    )
    for name, n in counts.most_common():
        print(f"  {name}: {n} ({n / total:.1%})")

    rows = read_jsonl(LABELS)
    print(f"{LABELS.name}: {len(rows)} labelled elements (held-out 11–13, the elements that differ)")
    for system in ("before", "after"):
        for kind, test in (("cause of action", True), ("other", False)):
            chosen = [r for r in rows if r["system"] == system and r["element"].startswith(CAUSE) == test]
            if chosen:
                rel = sum(r["relevant"] for r in chosen)
                print(f"  {system}, {kind}: {rel}/{len(chosen)} relevant")


if __name__ == "__main__":
    main()
