"""The Tree of Legal Clarifications as data: nodes, marks, pruning, and the facts it yields.

Node ids are paths — the root is ``"0"``, its children ``"1"``, ``"2"``, …, their children ``"1.1"``,
``"1.2"``, … — so a script or a test can name a node before the tree exists, and ids never change when
a tree is saved and resumed. A node marked ``no`` prunes its subtree: its descendants disappear from
:meth:`Tree.visible` and their marks no longer count.

Reference: LawLuo paper §3.2, Algorithm 1 (ToLC): nodes are legal elements, yes/no statements of fact.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import asdict, dataclass, field

MARKS = ("yes", "no", "unknown")
ROOT_ID = "0"
#: Who proposed a tree's elements (``Tree.source``), as the app and the trace name it.
TREE_SOURCES = {
    "model": "澄清模型 clarifier model",
    "material": "本领域法条要件与律师常问问题（未配置模型） statute elements and lawyers' questions (no model)",
    "cases": "相似案例（未配置模型） similar cases (no model)",
}
#: Who proposed one element (``Node.source``): code → (Chinese, English). ``""`` on a node saved before
#: nodes recorded it (the tree's ``source`` then stands for every node).
NODE_SOURCES = {
    "model": ("澄清模型", "clarifier model"),
    "material": ("本领域法条要件与律师常问问题", "clarification material"),
    "cases": ("相似案例", "similar cases"),
}
#: Why an element did not come from the clarifier model (``Node.fallback``): code → (Chinese, English).
#: ``""`` on an element the model proposed.
FALLBACK_REASONS = {
    "no_model": ("未配置澄清模型", "no clarifier model"),
    "unavailable": ("澄清模型不可用", "clarifier model unavailable"),
    "timeout": ("澄清模型超时", "timed out"),
    "bad_json": ("澄清模型的输出不是有效的 JSON", "bad JSON"),
    "cut": ("澄清模型的输出在 max_tokens 处被截断", "cut at max_tokens"),
    "cancelled": ("调用已取消", "cancelled"),
    "too_few": ("澄清模型给出的可用要素不足", "the model proposed fewer than K usable elements"),
    "rejected": (
        "澄清模型的部分要素不合格（如案例当事人、反问结论）",
        "model elements turned away (a case's party, a conclusion asked back…)",
    ),
    "error": ("澄清模型调用失败", "model error"),
}
_NOISE = re.compile(r"[\s，。、？?！!：:；;“”\"'（）()《》「」]|是否|您的?|请问")


#: A citation the material's description carries (…？（《劳动合同法》第八十二条）): not part of the fact.
_CITED = re.compile(r"[（(]\s*(?:依据|根据|参见|见)?\s*《[^》]{1,40}》[^（）()]{0,24}[）)]")


def tree_calls(height: int, k: int) -> int:
    """Clarifier calls a full tree of height ``height`` and width ``k`` costs: one per node above the leaves
    (:attr:`Tree.calls` counts them in a tree as built).

    >>> tree_calls(3, 3), tree_calls(4, 3), tree_calls(5, 6)
    (4, 13, 259)
    """
    return sum(k**depth for depth in range(height - 1))


def statement_key(statement: str) -> str:
    """What two statements must share to count as duplicates: the text without a cited statute,
    punctuation, 是否, 您.

    >>> statement_key("您是否签了书面合同？（《劳动合同法》第十条）") == statement_key("是否签了书面合同")
    True
    >>> statement_key("您是否已经报警？") == statement_key("您是否已报警？")  # the 0.5B wrote both in one tree
    True
    """
    return _NOISE.sub("", _CITED.sub("", statement)).replace("已经", "已")


@dataclass
class Node:
    id: str
    parent: str | None
    depth: int
    statement: str
    case_ids: list[str] = field(default_factory=list)
    mark: str = "unknown"
    source: str = ""  # who proposed it (NODE_SOURCES); "" for the root and in trees saved before
    fallback: str = ""  # why not the model (FALLBACK_REASONS); "" when the model proposed it


@dataclass
class Tree:
    """A built (or partly built) tree. ``source`` says who was to propose the elements
    (:data:`TREE_SOURCES`): ``model`` when a clarifier model is configured, else ``material`` (the domain's
    clarification material) or ``cases``; each node's ``source`` and ``fallback`` say who actually did and,
    when not the model, why (:meth:`origins`)."""

    question: str
    height: int
    k: int
    nodes: list[Node] = field(default_factory=list)  # breadth-first order
    source: str = "model"
    notes: list[str] = field(default_factory=list)
    complete: bool = False
    failures: int = 0  # nodes whose model call failed (their children were read off similar cases)
    issue: str = ""  # the statute entry the client chose (问题类型), "" when the builder chose the elements
    #: The domain whose material the elements were drawn from when it is not the domain the tree was built for
    #: (soft routing, :meth:`~.material.ClarificationMaterial.domain_for`); "" when drawn from that domain.
    drawn_from: str = ""

    @classmethod
    def start(cls, question: str, height: int, k: int) -> Tree:
        return cls(question, height, k, [Node(ROOT_ID, None, 0, question)])

    # -- structure --------------------------------------------------------------------------------
    def node(self, node_id: str) -> Node:
        for node in self.nodes:
            if node.id == node_id:
                return node
        raise KeyError(f"no node {node_id!r} in the tree; nodes: {', '.join(n.id for n in self.nodes)}")

    def children(self, node_id: str) -> list[Node]:
        return [n for n in self.nodes if n.parent == node_id]

    def level(self, depth: int) -> list[Node]:
        return [n for n in self.nodes if n.depth == depth]

    def path(self, node_id: str) -> list[Node]:
        """The nodes from the root's first child down to ``node_id`` (the root itself is the question)."""
        chain = []
        node = self.node(node_id)
        while node.parent is not None:
            chain.append(node)
            node = self.node(node.parent)
        return chain[::-1]

    def add_child(
        self, parent_id: str, statement: str, case_ids: list[str], source: str = "", fallback: str = ""
    ) -> Node:
        parent = self.node(parent_id)
        index = len(self.children(parent_id)) + 1
        child_id = str(index) if parent_id == ROOT_ID else f"{parent_id}.{index}"
        child = Node(
            child_id, parent_id, parent.depth + 1, statement, list(case_ids), source=source, fallback=fallback
        )
        self.nodes.append(child)
        return child

    @property
    def calls(self) -> int:
        """Clarifier calls building this tree took when a model proposed its elements: one per node above
        the leaves, as :func:`tree_calls` counts for a full tree.

        >>> tree = Tree.start("被辞退了怎么办", 3, 2)
        >>> _ = tree.add_child("0", "是否签了合同？", []), tree.add_child("1", "是否有工资流水？", [])
        >>> tree.calls
        2
        """
        return sum(n.depth < self.height - 1 for n in self.nodes)

    @property
    def elements(self) -> list[Node]:
        """Every node but the root."""
        return [n for n in self.nodes if n.parent is not None]

    def origins(self) -> tuple[dict[str, int], dict[str, int]]:
        """``(sources, fallbacks)``: elements per actual source (:data:`NODE_SOURCES`; a node saved without
        one counts as the tree's ``source``) and, of those the model did not propose, elements per reason
        (:data:`FALLBACK_REASONS`), both in their vocabulary's order.

        >>> tree = Tree.start("被辞退了怎么办", 2, 3)
        >>> _ = tree.add_child("0", "是否签了合同？", [], "model")
        >>> _ = tree.add_child("0", "是否有工资流水？", ["c1"], "cases", "bad_json")
        >>> tree.origins()
        ({'model': 1, 'cases': 1}, {'bad_json': 1})
        """
        sources = Counter(n.source or self.source for n in self.elements)
        fallbacks = Counter(n.fallback for n in self.elements if n.fallback)
        return (
            {s: sources[s] for s in [*NODE_SOURCES, *sorted(set(sources) - set(NODE_SOURCES))] if sources[s]},
            {
                r: fallbacks[r]
                for r in [*FALLBACK_REASONS, *sorted(set(fallbacks) - set(FALLBACK_REASONS))]
                if fallbacks[r]
            },
        )

    def origin_summary(self) -> str:
        """The elements per actual source, and why the model was not used, in English for the trace:
        ``6 elements: 2 from clarifier model, 4 from similar cases (not from the model: bad JSON 4)``.

        >>> tree = Tree.start("被辞退了怎么办", 2, 3)
        >>> _ = tree.add_child("0", "是否签了合同？", [], "model")
        >>> _ = tree.add_child("0", "是否有工资流水？", ["c1"], "cases", "bad_json")
        >>> tree.origin_summary()
        '2 elements: 1 from clarifier model, 1 from similar cases (not from the model: bad JSON 1)'
        """
        sources, fallbacks = self.origins()
        parts = ", ".join(f"{n} from {NODE_SOURCES.get(s, (s, s))[1]}" for s, n in sources.items())
        why = ", ".join(f"{FALLBACK_REASONS.get(r, (r, r))[1]} {n}" for r, n in fallbacks.items())
        return (
            f"{len(self.elements)} elements"
            + (f": {parts}" if parts else "")
            + (f" (not from the model: {why})" if why else "")
        )

    # -- marks ------------------------------------------------------------------------------------
    def mark(self, node_id: str, value: str) -> None:
        if value not in MARKS:
            raise ValueError(f"mark {value!r} is not one of {', '.join(MARKS)}")
        if node_id == ROOT_ID:
            raise ValueError("the root is the client's question; mark its elements instead")
        self.node(node_id).mark = value

    def pruned(self, node_id: str) -> bool:
        """True when an ancestor of ``node_id`` is marked ``no``."""
        return any(n.mark == "no" for n in self.path(node_id)[:-1])

    def visible(self) -> list[Node]:
        """The elements a client can still see and mark (none under a ``no``)."""
        return [n for n in self.elements if not self.pruned(n.id)]

    def confirmed(self) -> list[str]:
        return [n.statement for n in self.visible() if n.mark == "yes"]

    def denied(self) -> list[str]:
        return [n.statement for n in self.visible() if n.mark == "no"]

    # -- serialisation ----------------------------------------------------------------------------
    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> Tree:
        nodes = [Node(**n) for n in data.get("nodes", [])]
        return cls(**{**data, "nodes": nodes})
