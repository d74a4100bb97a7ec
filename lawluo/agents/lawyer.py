"""The lawyer: one legal LLM, specialised per domain by its role-enhancement prompt (LawLuo paper §3.2).

Its input for one answer (:class:`Brief`) is the conversation so far, the facts the client confirmed or
denied in the clarification tree, and the statutes retrieved for them; the role prompt comes from the
domain's row in the domain table (``domains.yaml``: its own template, or the generic one filled with
the domain's name and laws). The statutes are retrieved with the domain's preferred laws favoured
(:func:`retrieve_statutes`). Checking the statutes the answer cites is the firm's next step, not the
lawyer's.

**Untrusted text.** The question, the earlier turns, the facts (the tree's elements come from a model or
the case bank) and the statutes go through :func:`~lawluo.prompts.untrusted.quote`: a ``<<<`` or ``>>>``
in them is written full-width, so none can close the quotation of the client's words in ``lawyer/turn``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from .. import prompts
from ..llm import ChatBackend, gather
from ..prompts.untrusted import quote
from .domains import Domain

PREFERRED_LAW_BOOST = 1.25  # a preferred law's article must be within 25% of the best score to outrank it
CANDIDATES_PER_STATUTE = 4
STATUTE_TEXT_CHARS = 300
HISTORY_CHARS = 6000  # older turns beyond this budget are dropped, oldest first


@dataclass
class Brief:
    domain: Domain
    question: str
    history: list[tuple[str, str]] = field(default_factory=list)  # earlier ("client"|"lawyer", text)
    confirmed: list[str] = field(default_factory=list)
    denied: list[str] = field(default_factory=list)
    statutes: list[dict] = field(default_factory=list)  # StatuteHit.as_dict()


def retrieve_statutes(searcher, domain: Domain, query: str, k: int) -> list[dict]:
    """The ``k`` best articles for ``query``, articles of the domain's preferred laws boosted."""
    preferred = set(domain.preferred_laws)
    hits = [h.as_dict() for h in searcher.search(query, k * CANDIDATES_PER_STATUTE)]
    for hit in hits:
        hit["preferred"] = hit["law"] in preferred
    hits.sort(key=lambda h: -h["score"] * (PREFERRED_LAW_BOOST if h["preferred"] else 1.0))
    return hits[:k]


class Lawyer:
    name = "lawyer"

    def __init__(self, model: ChatBackend) -> None:
        self.model = model

    @property
    def available(self) -> bool:
        return self.model.available

    def messages(self, brief: Brief) -> list[dict[str, str]]:
        """System: the domain's role prompt. Then the earlier turns, then this turn with its grounding."""
        messages = [{"role": "system", "content": brief.domain.role_prompt()}]
        for role, text in _recent(brief.history):
            messages.append({"role": "user" if role == "client" else "assistant", "content": quote(text)})
        statutes = "\n".join(
            f"- 《{s['law']}》{s['article_label']}：{s['text'][:STATUTE_TEXT_CHARS]}" for s in brief.statutes
        )
        messages.append(
            {
                "role": "user",
                "content": prompts.render(
                    "lawyer/turn",
                    question=quote(brief.question),
                    confirmed=quote("\n".join(f"- {s}" for s in brief.confirmed)) or "（无）",
                    denied=quote("\n".join(f"- {s}" for s in brief.denied)) or "（无）",
                    statutes=quote(statutes) or "（未检索到相关法条）",
                ),
            }
        )
        return messages

    def stream(self, brief: Brief) -> Iterator[str]:
        return self.model.stream(self.messages(brief))

    def answers(self, brief: Brief, n: int) -> list[str]:
        """``n`` independent answers, generated in parallel (for the boss's best-of-n)."""
        messages = self.messages(brief)
        return gather([lambda: self.model.chat(messages) for _ in range(n)])


def _recent(history: list[tuple[str, str]]) -> list[tuple[str, str]]:
    kept, used = [], 0
    for role, text in reversed(history):
        used += len(text)
        if used > HISTORY_CHARS:
            break
        kept.append((role, text))
    return kept[::-1]
