"""A simulated client for ``bench tolc``: a model that answers the tree's yes/no elements as the client of a
case would, from the case's hidden facts only — yes, no, or 不清楚 (the element stays unmarked, as when a
visitor clicks nothing), never an invented fact.

The client is a configured role's model (``--client-role``, default ``judge``; any chat role the firm
does not use in the bench — e.g. ``secretary`` — can point it at another model in the settings file).
It is asked at temperature 0, one call per tree level, about the elements a visitor would still see
(none under an element answered no), with the prompt ``tolc/bench_client``.

Reference: LeCoDe (Yuan et al., arXiv:2505.19667) §4, where a model plays the client from the
dialogue's facts; the LawLuo paper's ToLC (§3.2) has the client mark elements Yes/No.

    client = SimulatedClient(models["judge"])
    reply = client.answer(case, tree.level(1))   # ClientReply(marks={"1": "yes", "2": "unknown"}, omitted=0)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, Field

from ... import prompts
from ...llm import ChatBackend
from ...prompts.untrusted import quote
from ...tolc.tree import Node
from .cases import BenchCase

#: The client's words → the mark a visitor's click leaves (不清楚: no click, the element stays unknown).
MARK_OF = {"yes": "yes", "no": "no", "不清楚": "unknown"}
STATEMENT_CHARS = 200


class ClientAnswer(BaseModel):
    id: str = Field(max_length=40)
    answer: Literal["yes", "no", "不清楚"]


class ClientAnswers(BaseModel):
    answers: list[ClientAnswer] = Field(max_length=100)


@dataclass
class ClientReply:
    """The marks of one call (node id → yes / no / unknown) and how many asked elements it left out."""

    marks: dict[str, str] = field(default_factory=dict)
    omitted: int = 0


def render_facts(case: BenchCase) -> str:
    """The case's facts, one a line, each with the lawyer's question it answered."""
    return "\n".join(f"[{f.id}] {f.shown()}" for f in case.facts)


@dataclass
class SimulatedClient:
    backend: ChatBackend
    temperature: float = 0.0

    def answer(self, case: BenchCase, elements: Sequence[Node]) -> ClientReply:
        """The client's marks for ``elements`` (an element it did not answer stays ``unknown`` and is
        counted in ``omitted``); a reply that is not valid JSON for :class:`ClientAnswers` after the one
        corrective turn raises :class:`~lawluo.llm.errors.StructuredOutputError`, like any model error."""
        if not elements:
            return ClientReply()
        listed = "\n".join(f"[{n.id}] {n.statement[:STATEMENT_CHARS]}" for n in elements)
        content = prompts.render(
            "tolc/bench_client",
            question=quote(case.question),
            facts=quote(render_facts(case)),
            elements=quote(listed),
        )
        reply = self.backend.chat_json(
            [{"role": "user", "content": content}], ClientAnswers, temperature=self.temperature
        )
        asked = {n.id for n in elements}
        given = {}
        for item in reply.answers:
            if item.id in asked and item.id not in given:  # an id it was not asked, or a repeat: ignored
                given[item.id] = MARK_OF[item.answer]
        marks = {n.id: given.get(n.id, "unknown") for n in elements}
        return ClientReply(marks, omitted=len(asked - set(given)))
