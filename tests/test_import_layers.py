"""The retrieval package's modules import each other without a circle (issue 39, item 7).

Search (``statutes``, ``rerank``, ``votes``, ``query``, ``shipped``), supervision, asset building
(``shipped_build``, ``rerank_training``) and evaluation are layers: a module may import the ones below
it, never one above, so none needs an import inside a function to dodge a circle. Every ``import`` and
``from … import`` counts, at any depth (inside functions and ``if TYPE_CHECKING:`` too); relative imports
are resolved against the importing module.
"""

from __future__ import annotations

import ast
from pathlib import Path

import lawluo.retrieval

PACKAGE = "lawluo.retrieval"
FOLDER = Path(lawluo.retrieval.__file__).parent


def _imported(node: ast.AST, module: str, package: str, modules: set[str]) -> set[str]:
    """The modules of ``package`` (names in ``modules``) that the import statement ``node`` of ``module`` names."""
    if isinstance(node, ast.Import):
        targets = [a.name for a in node.names]
    elif isinstance(node, ast.ImportFrom):
        if node.level:
            parts = module.split(".")[: -node.level]  # a module's own package is one level up
            base = ".".join(parts + ([node.module] if node.module else []))
        else:
            base = node.module or ""
        # ``from . import rerank`` names a module; ``from .rerank import DEPTH`` names a module's member
        targets = [base] + [f"{base}.{a.name}" for a in node.names]
    else:
        return set()
    out = set()
    for target in targets:
        if target.startswith(package + "."):
            name = target[len(package) + 1 :].split(".")[0]
            if name in modules:
                out.add(f"{package}.{name}")
    return out


def import_graph(folder: Path, package: str = PACKAGE) -> dict[str, set[str]]:
    """module → the modules of the same package it imports, read from the ``.py`` files of ``folder``."""
    modules = {p.stem for p in folder.glob("*.py") if p.stem != "__init__"}
    graph: dict[str, set[str]] = {}
    for name in sorted(modules):
        module = f"{package}.{name}"
        tree = ast.parse((folder / f"{name}.py").read_text(encoding="utf-8"))
        graph[module] = {
            t for node in ast.walk(tree) for t in _imported(node, module, package, modules) if t != module
        }
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The shortest circle (``[a, b, …, a]``) through each module of every strongly connected component
    of more than one module (Tarjan, 1972), each circle once.

    >>> cycles({"a": {"b", "c"}, "b": {"a"}, "c": {"a", "d"}, "d": set()})
    [['a', 'b', 'a'], ['a', 'c', 'a']]
    """
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    found: set[tuple[str, ...]] = set()
    for component in components:
        for start in component:
            circle = _circle(graph, set(component), start)[:-1]
            first = circle.index(min(circle))
            found.add(tuple(circle[first:] + circle[:first]))
    return [[*c, c[0]] for c in sorted(found)]


def _circle(graph: dict[str, set[str]], component: set[str], start: str) -> list[str]:
    """A shortest circle from ``start`` back to it inside ``component`` (breadth first)."""
    parent: dict[str, str] = {}
    frontier = [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(graph[v] & component):
                if w == start:
                    path = [v]
                    while path[-1] != start:
                        path.append(parent[path[-1]])
                    return [*reversed(path), start]
                if w not in parent:
                    parent[w] = v
                    nxt.append(w)
        frontier = nxt
    raise AssertionError(f"{sorted(component)} is not strongly connected")


def test_the_finder_names_a_circle_through_nested_and_relative_imports(tmp_path):
    (tmp_path / "a.py").write_text("def f():\n    from .b import x\n", encoding="utf-8")
    (tmp_path / "b.py").write_text("from lawluo.retrieval import c\n", encoding="utf-8")
    (tmp_path / "c.py").write_text("import lawluo.retrieval.a\nfrom ..files import y\n", encoding="utf-8")
    (tmp_path / "d.py").write_text("from . import a\n", encoding="utf-8")
    graph = import_graph(tmp_path)
    assert graph["lawluo.retrieval.d"] == {"lawluo.retrieval.a"}
    assert cycles(graph) == [
        ["lawluo.retrieval.a", "lawluo.retrieval.b", "lawluo.retrieval.c", "lawluo.retrieval.a"]
    ]


def test_retrieval_modules_import_each_other_without_a_circle():
    found = cycles(import_graph(FOLDER))  # before issue 39: statutes ⇄ rerank, votes, shipped
    assert not found, "import circles in lawluo.retrieval: " + "; ".join(" → ".join(c) for c in found)


def test_the_shipped_index_lookup_imports_no_search_or_builder():
    """``shipped.py`` is read by the searchers when they start; what builds the indexes is above them."""
    assert import_graph(FOLDER)[f"{PACKAGE}.shipped"] <= {f"{PACKAGE}.bm25"}
