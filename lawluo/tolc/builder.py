"""Building the Tree of Legal Clarifications level by level (LawLuo paper §3.2, Algorithm 1).

For every node of a level, at once: retrieve the top-``k`` similar cases for the client's question
plus the elements on the node's path, and ask the clarifier model for ``k`` child elements as JSON.
A level is one round of parallel calls, so a tree of height ``H`` costs ``H - 1`` dependent rounds
(``H=3, K=3``: 1 call, then 3 in parallel → 13 nodes). Duplicates (same statement up to punctuation
and 是否/您) are dropped across the whole tree.

Without a clarifier model — or for a node whose model call failed (bad JSON twice, timeout) — the
children are read off the retrieved cases (:mod:`.from_cases`) and the tree says so in ``notes``.
:meth:`TreeBuilder.levels` yields the tree after each level so the UI can show the first level as soon
as it exists.

The question, the path's elements and the cases go into ``tolc/expand`` through
:func:`~lawluo.prompts.untrusted.quote` (a ``<<<`` or ``>>>`` in them is written full-width), so none can
close the quotation of the client's question.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from dataclasses import dataclass

from pydantic import BaseModel, Field

from .. import prompts
from ..llm import ChatBackend, LLMError, gather
from ..prompts.untrusted import quote
from ..retrieval.casebank import Case
from .from_cases import NO_MODEL_NOTE, elements_from_cases
from .tree import Tree, statement_key

DEFAULT_HEIGHT, DEFAULT_K = 3, 3
MAX_HEIGHT, MAX_K = 5, 6
CASE_FACTS_CHARS, CASE_OUTCOME_CHARS = 220, 160
STATEMENT_MAX_CHARS = 80


class Element(BaseModel):
    statement: str = Field(description="一个可以用“是/否”回答的关键事实，不超过40字，以问号结尾")
    case_ids: list[str] = Field(default_factory=list, description="支持该要素的案例编号")


class Elements(BaseModel):
    elements: list[Element]


@dataclass
class TreeBuilder:
    """``case_search(query, k) -> list[Case]``; ``clarifier`` may be ``None`` or unavailable."""

    case_search: object
    clarifier: ChatBackend | None = None
    height: int = DEFAULT_HEIGHT
    k: int = DEFAULT_K

    def __post_init__(self) -> None:
        if not 2 <= self.height <= MAX_HEIGHT or not 1 <= self.k <= MAX_K:
            raise ValueError(
                f"height must be 2–{MAX_HEIGHT} and k 1–{MAX_K} (got H={self.height}, K={self.k})"
            )

    @property
    def uses_model(self) -> bool:
        return self.clarifier is not None and self.clarifier.available

    def build(self, question: str) -> Tree:
        *_, tree = self.levels(question)
        return tree

    def levels(self, question: str) -> Iterator[Tree]:
        """The tree after each level is expanded (the last one has ``complete=True``)."""
        tree = Tree.start(question, self.height, self.k)
        if not self.uses_model:
            tree.source = "cases"
            tree.notes.append(NO_MODEL_NOTE)
        taken = {statement_key(question)}
        for depth in range(self.height - 1):
            parents = tree.level(depth)
            results = gather([lambda p=p: self._expand(tree, p.id) for p in parents], return_exceptions=True)
            for parent, result in zip(parents, results, strict=True):
                if isinstance(result, BaseException):
                    raise result
                children, note = result
                if note is not None:  # the model call failed: a fact, not a wording
                    tree.failures += 1
                    if note not in tree.notes:
                        tree.notes.append(note)
                for statement, case_ids in children:
                    key = statement_key(statement)
                    if key and key not in taken:
                        taken.add(key)
                        tree.add_child(parent.id, statement, case_ids)
            tree.complete = depth == self.height - 2
            yield copy.deepcopy(tree)  # a snapshot: the caller may keep it while the next level grows

    # -- one node -----------------------------------------------------------------------------------
    def _expand(self, tree: Tree, node_id: str) -> tuple[list[tuple[str, list[str]]], str | None]:
        path = tree.path(node_id)
        query = " ".join([tree.question, *(n.statement for n in path)])
        cases: list[Case] = list(self.case_search(query, self.k))
        if self.uses_model:
            try:
                return self._from_model(tree.question, [n.statement for n in path], cases), None
            except LLMError as exc:
                note = f"部分要素由相似案例生成：澄清模型调用失败（{type(exc).__name__}: {exc}）"
                return self._from_cases(tree, cases), note
        return self._from_cases(tree, cases), None

    def _from_model(self, question: str, path: list[str], cases: list[Case]) -> list[tuple[str, list[str]]]:
        known = {c.id for c in cases}
        messages = [
            {"role": "system", "content": prompts.render("tolc/system")},
            {
                "role": "user",
                "content": prompts.render(
                    "tolc/expand",
                    question=quote(question),
                    k=self.k,
                    path=quote("\n".join(f"- {s}" for s in path)) or "（无，这是第一层）",
                    cases=quote("\n\n".join(_describe(c) for c in cases)) or "（未检索到相似案例）",
                ),
            },
        ]
        answer = self.clarifier.chat_json(messages, Elements)
        out = []
        for element in answer.elements[: self.k]:
            statement = " ".join(element.statement.split())[:STATEMENT_MAX_CHARS]
            if statement:
                out.append((statement, [i for i in element.case_ids if i in known]))
        return out

    def _from_cases(self, tree: Tree, cases: list[Case]) -> list[tuple[str, list[str]]]:
        taken = {statement_key(n.statement) for n in tree.nodes}
        return [(c.statement, [c.case_id]) for c in elements_from_cases(cases, self.k, taken)]


def _describe(case: Case) -> str:
    facts = case.facts[:CASE_FACTS_CHARS] + ("…" if len(case.facts) > CASE_FACTS_CHARS else "")
    outcome = (case.outcome or case.sentence or "")[:CASE_OUTCOME_CHARS]
    return f"[{case.id}] {case.title}（{case.cause}）\n事实：{facts}\n结果：{outcome}"
