"""Priors of the statute search learned from the supervision rows: how often lay questions need each law.

    counts = law_counts(rows)                       # {"民法典": 812, "劳动合同法": 97, …} from eval: false lay rows
    law_prior(counts, "民法典")                     # 1 + 0.05·log1p(812) ≈ 1.335

Issue 39 measured the doc2query expansions and the per-article citation prior on ~1,500 published lay
questions the project never saw: both make popular articles win everyday questions (民法典1042 for a loan
question), and removing them raised R@10. What helped was a prior per *law* from the lay consultation rows:
``1 + LAW_PRIOR · log1p(count)``, where ``count`` is the number of training rows of :data:`LAY_SOURCES` that
cite the law (a row counts a law once, however many of its articles it cites). A law prior moves a whole
code up a little against the regulations that share its words; it cannot lift one hub article over its
neighbours the way a per-article count does.

Only ``eval: false`` rows count (the LawBench dev rows are evaluation), and the leave-source-out bench
(:mod:`lawluo.retrieval.holdout`) recounts without the held-out source.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping

#: Supervision sources whose questions are a lay client's (not exam questions, not interpretations).
LAY_SOURCES = frozenset(
    {"lawyer_llama_single_turn", "lawyer_llama_zixun", "lawyer_llama_advice", "kinled_consult", "disc"}
)
#: Weight of the log count (issue 39: 0.05 on the published lay questions).
LAW_PRIOR = 0.05


def law_counts(rows: Iterable[Mapping], sources: frozenset[str] = LAY_SOURCES) -> Counter[str]:
    """Training rows of ``sources`` citing each law (the law's short key, as ``articles`` name it)."""
    counts: Counter[str] = Counter()
    for row in rows:
        if row.get("eval") or row.get("source") not in sources:
            continue
        laws = {pair[0] for pair in row.get("articles") or () if isinstance(pair, list | tuple) and pair}
        counts.update(law for law in laws if isinstance(law, str))
    return counts


def law_prior(counts: Mapping[str, int], law: str) -> float:
    """``1 + LAW_PRIOR · log1p(counts[law])``: 1 for a law no lay row cites."""
    return 1.0 + LAW_PRIOR * math.log1p(max(0, counts.get(law, 0)))
