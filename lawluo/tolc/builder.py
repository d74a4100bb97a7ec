"""Building the Tree of Legal Clarifications level by level (LawLuo paper §3.2, Algorithm 1).

For every node of a level, at once: retrieve the top-``k`` similar cases for the client's question
plus the elements on the node's path, and ask the clarifier model for ``k`` child elements as JSON.
A level is one round of parallel calls, so a tree of height ``H`` costs ``H - 1`` dependent rounds
(``H=3, K=3``: 1 call, then 3 in parallel → 13 nodes). Duplicates (same statement up to punctuation
and 是否/您) are dropped across the whole tree.

**The consultation's domain decides the material.** With the domain (:meth:`TreeBuilder.levels`'s
``domain``) and the clarification material (:mod:`.material`) of that domain:

- without a clarifier model, a node's children are elements of the material: for the first level,
  those that best match the question (BM25 within the domain); deeper down, the follow-ups of the
  element above (the statute's other elements, the dialogue's other questions) first, then the best
  matches of the question and the path; only then elements read off similar cases of the same domain
  (:mod:`.from_cases`). A criminal element therefore reaches only a criminal consultation.
- with a model, the same candidates go into the prompt as reference material, and the retrieved
  cases are those of the domain.

Without material for the domain (no asset, a domain added to the table since, or no domain given),
the children are read off the retrieved cases, as the paper does. For a node whose model call failed
(bad JSON twice, cut at max_tokens, timeout) the children come from the material or the cases, and the
tree says so in ``notes``. Every element records who actually proposed it (``Node.source``: model,
material, cases) and, when not the model, why (``Node.fallback``: no model, unavailable, timeout, bad
JSON, cut, cancelled, error; :func:`why_not_model`), so neither the tree nor the trace calls a fallback's
elements the model's (:meth:`~.tree.Tree.origins`). :meth:`TreeBuilder.levels` yields the tree after each level so the UI can show the first
level as soon as it exists.

The question, the path's elements, the cases and the material go into ``tolc/expand`` through
:func:`~lawluo.prompts.untrusted.quote` (a ``<<<`` or ``>>>`` in them is written full-width), so none can
close the quotation of the client's question.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from pydantic import BaseModel, Field

from .. import prompts
from ..domains import PACKAGED, Domain
from ..llm import (
    Cancelled,
    ChatBackend,
    LLMError,
    LLMTimeout,
    ModelUnavailable,
    StructuredOutputError,
    gather,
)
from ..llm.answer import reported_cut
from ..llm.errors import AnswerCut
from ..prompts.untrusted import quote
from ..retrieval.casebank import Case
from .element_check import rejection, vet
from .from_cases import NO_MODEL_NOTE, elements_from_cases
from .material import MATERIAL_NOTE, STATED_MAX, ClarificationMaterial, Item, asks_key, describe
from .tree import FALLBACK_REASONS, NODE_SOURCES, ROOT_ID, Tree, statement_key

log = logging.getLogger(__name__)
DEFAULT_HEIGHT, DEFAULT_K = 3, 3
MAX_HEIGHT, MAX_K = 5, 6
CASE_FACTS_CHARS, CASE_OUTCOME_CHARS = 220, 160
STATEMENT_MAX_CHARS = 80
#: Cases retrieved per node when they are filtered to the consultation's domain (then the best ``k``).
CASE_POOL = 30
#: Shown when the material comes from another domain than the routed one (soft routing). It says what happened — the
#: other domain's elements share more of the question's words — not that they fit the matter: over held-out 17–20 the
#: switched trees' asked elements were relevant 27 times in 96 (session 40 saw a car wash's scratch drawn to 债权债务's
#: loan elements).
SWITCH_NOTE = (
    "以下要素取自「{name}」领域：那里的法律要素与您问题的用词更接近。"
    "若不对题，请在“改派领域”中选择「{routed}」，按该领域的要素澄清。"
)
#: Added to the tree's notes when a node's model call failed (once per distinct wording).
#: What the visitor reads when the model failed: plain words; the error itself goes to the log and the trace.
FAILED_NOTE = "部分要素改由{sources}生成：{why}。"

#: A child as the builder proposes it: (statement, case ids, source, why not the model).
Child = tuple[str, list[str], str, str]


class Element(BaseModel):
    statement: str = Field(description="一个可以用“是/否”回答的关键事实，不超过40字，以问号结尾")
    case_ids: list[str] = Field(default_factory=list, description="支持该要素的案例编号")


class Elements(BaseModel):
    elements: list[Element]


@dataclass
class TreeBuilder:
    """``case_search(query, k) -> list[Case]``; ``clarifier`` may be ``None`` or unavailable;
    ``material`` (may be ``None``) holds the domains' elements."""

    case_search: Callable[[str, int], Sequence[Case]]
    clarifier: ChatBackend | None = None
    height: int = DEFAULT_HEIGHT
    k: int = DEFAULT_K
    material: ClarificationMaterial | None = None
    prompt_variant: str = "default"  # lawluo.prompts.VARIANTS: "small" for a small local model

    def __post_init__(self) -> None:
        if not 2 <= self.height <= MAX_HEIGHT or not 1 <= self.k <= MAX_K:
            raise ValueError(
                f"height must be 2–{MAX_HEIGHT} and k 1–{MAX_K} (got H={self.height}, K={self.k})"
            )

    @property
    def uses_model(self) -> bool:
        return self.clarifier is not None and self.clarifier.available

    def build(
        self,
        question: str,
        domain: Domain | None = None,
        confidence: float | None = None,
        near: Sequence[str] = (),
        issue: str = "",
    ) -> Tree:
        *_, tree = self.levels(question, domain, confidence, near, issue)
        return tree

    def levels(
        self,
        question: str,
        domain: Domain | None = None,
        confidence: float | None = None,
        near: Sequence[str] = (),
        issue: str = "",
    ) -> Iterator[Tree]:
        """The tree after each level is expanded (the last one has ``complete=True``).

        ``domain`` is the consultation's :class:`~lawluo.domains.Domain` row (or ``None``): it
        chooses the material and the cases the elements come from. ``confidence`` is the receptionist's
        for that routing (``None`` when the client chose the domain) and ``near`` its next choices:
        when it is unsure and another domain's material matches the question better, the material
        comes from that domain (:meth:`~.material.ClarificationMaterial.domain_for`) and the tree says
        so in ``notes`` and ``drawn_from``. ``issue``: the statute entry the client chose in the tree's
        问题类型 menu (:meth:`~.material.ClarificationMaterial.issues`); its elements open the first level (a
        model gets them first among its reference elements), its domain's material is used, and
        ``tree.issue`` keeps it."""
        tree = Tree.start(question, self.height, self.k)
        scope = _Scope(domain, self.material)
        chosen = self.material.issue(issue) if self.material is not None and issue else None
        if chosen is not None and scope.material is not None:
            tree.issue = chosen.id
            drawn = None if chosen.domain == domain.id else chosen.domain
            scope = _Scope(domain, self.material, drawn, chosen.id)
            tree.drawn_from = drawn or ""
        elif scope.material is not None:
            drawn = scope.material.domain_for(question, domain.id, confidence, near)
            if drawn != domain.id:
                scope = _Scope(domain, self.material, drawn)
                tree.drawn_from = drawn
                tree.notes.append(SWITCH_NOTE.format(name=_name(drawn), routed=domain.name))
        if not self.uses_model:
            tree.source = "material" if scope.material else "cases"
            tree.notes.insert(0, MATERIAL_NOTE if scope.material else NO_MODEL_NOTE)
        taken = {statement_key(question)}
        said: set[frozenset[str]] = set()  # what each element asks (asks_key): a rewording is a duplicate
        stated: set[str] = set()  # the elements the question already answers: pre-marked, not expanded
        for depth in range(self.height - 1):
            parents = [p for p in tree.level(depth) if p.id not in stated]
            results = gather(
                [lambda p=p: self._expand(tree, p.id, scope) for p in parents], return_exceptions=True
            )
            for parent, result in zip(parents, results, strict=True):
                if isinstance(result, BaseException):
                    raise result
                children, note = result
                if note is not None:  # the model call failed: a fact, not a wording
                    tree.failures += 1
                    if note not in tree.notes:
                        tree.notes.append(note)
                added = 0
                for statement, case_ids, source, fallback in children:
                    key, asks = statement_key(statement), asks_key(statement)
                    if not key or key in taken or (asks and asks in said) or added >= self.k:
                        continue
                    if source != "model" and rejection(statement) in ("choice", "several"):
                        continue  # only yes/no statements (购房款是否有父母出资，出资在婚前还是婚后？ is not)
                    taken.add(key)
                    said.add(asks)
                    tree.add_child(parent.id, statement, case_ids, source, fallback)
                    added += 1
            # what the question already answers, beside the first level; a model's first level is the model's
            if depth == 0 and not self.uses_model:
                for item, mark, _quote in scope.stated(tree.question, 2 * self.k, taken):
                    key = statement_key(item.statement)
                    if len(stated) == STATED_MAX or key in taken:
                        continue
                    taken.add(key)
                    said.add(asks_key(item.statement))
                    node = tree.add_child(ROOT_ID, item.statement, [], "material", self._absent())
                    node.mark = mark  # the client's own words answer it: shown as 您已说明, still editable
                    stated.add(node.id)
            tree.complete = depth == self.height - 2
            yield copy.deepcopy(tree)  # a snapshot: the caller may keep it while the next level grows

    # -- one node -----------------------------------------------------------------------------------
    def _expand(self, tree: Tree, node_id: str, scope: _Scope) -> tuple[list[Child], str | None]:
        """The node's children and, when its model call failed, the note saying so (else ``None``)."""
        path = tree.path(node_id)
        query = " ".join([tree.question, *(n.statement for n in path)])
        cases = scope.cases(self.case_search, query, self.k)
        taken = {statement_key(n.statement) for n in tree.nodes}
        strong, weak = scope.candidates(
            query, path[-1].statement if path else None, 2 * self.k, taken, tree.question
        )
        if self.uses_model:
            try:
                material = (strong + weak)[: 2 * self.k]
                found, rejected = self._from_model(
                    tree.question, [n.statement for n in path], cases, material
                )
                # a weak model proposes fewer than K (or repeats one, or proposes what may not be shown): the
                # caller takes the model's first and tops the node up to K from what the fallback would have
                # given, each labelled "too_few" or, when elements were turned away, "rejected"
                topped = self._fallback(
                    tree, strong, weak, cases, scope, "rejected" if rejected else "too_few"
                )
                return [(s, ids, "model", "") for s, ids in found] + topped, None
            except LLMError as exc:
                why = why_not_model(exc)
                children = self._fallback(tree, strong, weak, cases, scope, why)
                sources = dict.fromkeys(c[2] for c in children) or {"cases": None}
                log.warning(
                    "clarifier failed (%s), elements from %s: %s: %s",
                    why,
                    ", ".join(sources),
                    type(exc).__name__,
                    exc,
                )
                note = FAILED_NOTE.format(
                    sources="和".join(NODE_SOURCES[s][0] for s in sources), why=FALLBACK_REASONS[why][0]
                )
                return children, note
        return self._fallback(tree, strong, weak, cases, scope, self._absent()), None

    def _absent(self) -> str:
        """Why an element that stands in for the model's is not the model's, when no call failed: no clarifier
        is configured (``no_model``), or the configured one cannot be used (``unavailable``)."""
        return "no_model" if getattr(self.clarifier, "name", "none") == "none" else "unavailable"

    def _from_model(
        self, question: str, path: list[str], cases: list[Case], material: list[Item]
    ) -> tuple[list[tuple[str, list[str]]], list[tuple[str, str]]]:
        """The model's elements that may be shown (repaired: :func:`.element_check.vet`), and those turned
        away with why (a key of :data:`.element_check.REJECTIONS`; logged)."""
        known = {c.id for c in cases}
        messages = [
            {"role": "system", "content": prompts.render("tolc/system", self.prompt_variant)},
            {
                "role": "user",
                "content": prompts.render(
                    "tolc/expand",
                    self.prompt_variant,
                    question=quote(question),
                    k=self.k,
                    path=quote("\n".join(f"- {s}" for s in path)) or "（无，这是第一层）",
                    cases=quote("\n\n".join(_describe(c) for c in cases)) or "（未检索到相似案例）",
                    material=quote(describe(material)) or "（本领域没有可参考的要素）",
                ),
            },
        ]
        answer = self.clarifier.chat_json(messages, Elements)
        out, rejected = [], []
        for element in answer.elements[: self.k]:
            statement, why = vet(element.statement[: 2 * STATEMENT_MAX_CHARS], question)
            if why is None:
                out.append((statement, [i for i in element.case_ids if i in known]))  # vet caps its length
            else:
                rejected.append((statement, why))
        if rejected:
            log.info("clarifier elements turned away: %s", "; ".join(f"{s} ({w})" for s, w in rejected))
        return out, rejected

    def _fallback(
        self, tree: Tree, strong: list[Item], weak: list[Item], cases: list[Case], scope: _Scope, why: str
    ) -> list[Child]:
        """Children without a model (``why``: a key of :data:`~.tree.FALLBACK_REASONS`): the material's
        good matches, then elements of the (domain's) cases, then the domain's statute elements that match
        the question only weakly. With material for the domain the cases offer no 您的情况是否涉及「案由」？: the
        consultation's matter is already the domain's, and on the 96 questions of held-out 11–13 none of
        the 62 such second-level elements was relevant (rule 3 of ``benchmarks/data/README.md``), against
        12 of the 73 elements that took their places (``benchmarks/data/clarification_level2.heldout11-13.jsonl``)."""
        out: list[Child] = [(item.statement, [], "material", why) for item in strong]
        taken = {statement_key(n.statement) for n in tree.nodes} | {statement_key(c[0]) for c in out}
        domain = scope.domain.id if scope.material else None
        from_cases = elements_from_cases(cases, 2 * self.k, taken, domain, causes=scope.material is None)
        if scope.material:  # a case's element that only restates the question is passed over too
            said = scope.material.restating(tree.question)
            from_cases = [c for c in from_cases if not said(c.statement)]
        out += [(c.statement, [c.case_id], "cases", why) for c in from_cases[: self.k]]
        return out + [(item.statement, [], "material", why) for item in weak]


def why_not_model(exc: LLMError) -> str:
    """Why a failed clarifier call's elements came from elsewhere: a key of :data:`~.tree.FALLBACK_REASONS`.

    >>> why_not_model(StructuredOutputError("invalid JSON")), why_not_model(LLMTimeout("no answer in 5 s"))
    ('bad_json', 'timeout')
    """
    if reported_cut(exc) is not None:
        return "cut"
    for kind, reason in (
        (AnswerCut, "cut"),  # a StructuredOutputError, but not bad JSON: the model ran out of tokens
        (Cancelled, "cancelled"),
        (ModelUnavailable, "unavailable"),
        (LLMTimeout, "timeout"),  # BudgetExceeded too: the step's time budget ran out
        (StructuredOutputError, "bad_json"),
    ):
        if isinstance(exc, kind):
            return reason
    return "error"


@dataclass(frozen=True)
class _Scope:
    """What one tree draws on: the consultation's domain row and the material, if it covers the domain."""

    domain: Domain | None
    all_material: ClarificationMaterial | None
    drawn: str | None = None  # the domain whose material is used, when not the consultation's
    issue: str = ""  # the statute entry the client chose: its elements open the first level

    @property
    def material(self) -> ClarificationMaterial | None:
        covered = self.all_material is not None and self.domain is not None
        return self.all_material if covered and self.all_material.covers(self.domain.id) else None

    def candidates(
        self, query: str, parent: str | None, n: int, taken: set[str], question: str = ""
    ) -> tuple[list[Item], list[Item]]:
        """Material elements for a node, ``(strong, weak)``: the parent element's follow-ups and the good
        matches of ``query`` (for the first level with none, the domain's first statute elements); then
        the domain's statute elements that match only weakly (offered after the cases). None only
        restates the client's ``question`` (:meth:`~.material.ClarificationMaterial.restating`)."""
        material = self.material
        if material is None:
            return [], []
        domain = self.drawn or self.domain.id
        out: list[Item] = []
        item = material.find(parent, domain) if parent else None
        if item is not None:
            domain = item.domain  # the generalist's tree stays with the issue its first level chose
            out += material.follow_ups(item, query, domain, n, taken, question)
        elif parent is None and self.issue:
            out += material.issue_elements(self.issue, query, taken, question)[:n]
        elif parent is None and (lead := material.lead(question, domain)) is not None:
            out += material.issue_elements(lead.id, query, taken, question)[:n]
        seen = taken | {statement_key(i.statement) for i in out}
        out += material.rank(query, domain, n - len(out), seen, question=question)
        if parent is None and not out:
            out = material.defaults(domain, n, taken, question)
        seen |= {statement_key(i.statement) for i in out}
        weak = (
            material.rank(query, domain, n, seen, statutes_only=True, question=question)
            if len(out) < n
            else []
        )
        return out[:n], weak

    def stated(self, question: str, n: int, taken: set[str]) -> list[tuple[Item, str, str]]:
        """``(item, mark, quote)`` for the first-level elements the client's ``question`` already answers
        (:meth:`~.material.ClarificationMaterial.stated`): among the ``n`` best candidates of the first level
        before the restatement filter (the chosen or the leading issue's elements, then the best matches),
        those that only restate the question and whose answer it gives."""
        material = self.material
        if material is None:
            return []
        domain = self.drawn or self.domain.id
        issue = self.issue or getattr(material.lead(question, domain), "id", "")
        out = material.issue_elements(issue, question, taken, question, keep_said=True)[:n] if issue else []
        seen = taken | {statement_key(i.statement) for i in out}
        out += material.rank(question, domain, n, seen, question=question, keep_said=True)
        return material.stated(question, out[:n])

    def cases(self, case_search, query: str, k: int) -> list[Case]:
        """The top-``k`` similar cases; with material for the domain, only cases of the domain."""
        if self.material is None:
            return list(case_search(query, k))
        return [c for c in case_search(query, max(CASE_POOL, k)) if c.domain_hint == self.domain.cases_as][:k]


def _name(domain_id: str) -> str:
    """The packaged table's Chinese name of ``domain_id`` (the id itself for a domain it lacks)."""
    return PACKAGED[domain_id].name if domain_id in PACKAGED else domain_id


def _describe(case: Case) -> str:
    facts = case.facts[:CASE_FACTS_CHARS] + ("…" if len(case.facts) > CASE_FACTS_CHARS else "")
    outcome = (case.outcome or case.sentence or "")[:CASE_OUTCOME_CHARS]
    return f"[{case.id}] {case.title}（{case.cause}）\n事实：{facts}\n结果：{outcome}"
