"""The library is built in layers: no import circle, lazy or not (issue 39 item 7, issue 44 item 3).

Every ``import`` and ``from … import`` counts, at any depth — inside functions and under
``if TYPE_CHECKING:`` too — so no module can dodge a circle by importing inside a function. Relative
imports are resolved against the importing module. Two graphs are checked:

- **modules**: every module of ``lawluo``, ``eval_ui`` and ``training`` (a package's ``__init__`` is the
  package's own name);
- **packages**: the same imports between the library's parts — each subpackage or top-level module of
  ``lawluo`` (``lawluo.text``, ``lawluo.domains``, ``lawluo.law``, ``lawluo.retrieval`` …), ``eval_ui``
  and ``training``. The order they form is the one ``docs/development.md`` draws (bottom first: text,
  domains, i18n …; config; llm; law; retrieval; tolc; metrics and agents; firm; ui, cli, eval_ui,
  training).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # 9 s of the suite on 2 cores (4 s or more: left out of the inner loop)

ROOT = Path(__file__).resolve().parents[1]
LIBRARY = ("lawluo", "eval_ui", "training")
RETRIEVAL = "lawluo.retrieval"


def modules_under(root: Path, packages=LIBRARY) -> dict[str, Path]:
    """Dotted module name → file, for every ``.py`` file of ``packages`` under ``root``."""
    found: dict[str, Path] = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _targets(node: ast.AST, module: str, is_package: bool) -> list[str]:
    """The dotted names an import statement of ``module`` names (a module, or a module's member)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if not isinstance(node, ast.ImportFrom):
        return []
    base = node.module or ""
    if node.level:
        parts = module.split(".")
        if not is_package:
            parts = parts[:-1]  # a module's own package is one level up
        parts = parts[: len(parts) - (node.level - 1)]
        base = ".".join(parts + ([base] if base else []))
    # ``from . import rerank`` names a module; ``from .rerank import DEPTH`` names a module's member
    return [base] + [f"{base}.{a.name}" for a in node.names]


def _known(name: str, modules: dict[str, Path]) -> str | None:
    """The longest prefix of ``name`` that is one of ``modules``."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def import_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    """module → the modules of ``modules`` it imports, read from their source."""
    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        is_package = path.name == "__init__.py"
        imported = set()
        for node in ast.walk(tree):
            for target in _targets(node, module, is_package):
                known = _known(target, modules)
                # a package's ``__init__`` runs before any of its modules anyway: not an edge from inside it
                if known and known != module and not module.startswith(known + "."):
                    imported.add(known)
        graph[module] = imported
    return graph


def part_of(module: str) -> str:
    """The library part a module belongs to: ``lawluo.<sub>`` (subpackage or top-level module), else its
    top package (``eval_ui``, ``training``)."""
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "lawluo" and len(parts) > 1 else parts[0]


def parts_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The module graph folded onto :func:`part_of`, self-loops dropped."""
    folded: dict[str, set[str]] = {}
    for module, imported in graph.items():
        here = part_of(module)
        folded.setdefault(here, set()).update(part_of(m) for m in imported if part_of(m) != here)
    return folded


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The shortest circle (``[a, b, …, a]``) through each node of every strongly connected component
    of more than one node (Tarjan, 1972), each circle once.

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
            for w in sorted(graph.get(v, set()) & component):
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


def _say(found: list[list[str]]) -> str:
    return "; ".join(" → ".join(c) for c in found)


def test_the_finder_names_a_circle_through_nested_relative_and_type_checking_imports(tmp_path):
    folder = tmp_path / "lawluo" / "retrieval"
    folder.mkdir(parents=True)
    (tmp_path / "lawluo" / "__init__.py").write_text("", encoding="utf-8")
    (folder / "__init__.py").write_text("", encoding="utf-8")
    (folder / "a.py").write_text("def f():\n    from .b import x\n", encoding="utf-8")
    (folder / "b.py").write_text("from lawluo.retrieval import c\n", encoding="utf-8")
    (folder / "c.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import lawluo.retrieval.a\n",
        encoding="utf-8",
    )
    (folder / "d.py").write_text("from . import a\nfrom ..text import y\n", encoding="utf-8")
    (tmp_path / "lawluo" / "text.py").write_text("from lawluo.retrieval.d import z\n", encoding="utf-8")
    graph = import_graph(modules_under(tmp_path, ("lawluo",)))
    assert graph["lawluo.retrieval.d"] == {"lawluo.retrieval.a", "lawluo.text"}
    assert cycles(graph) == [
        ["lawluo.retrieval.a", "lawluo.retrieval.b", "lawluo.retrieval.c", "lawluo.retrieval.a"],
        ["lawluo.retrieval.d", "lawluo.text", "lawluo.retrieval.d"],
    ]
    assert cycles(parts_graph(graph)) == [["lawluo.retrieval", "lawluo.text", "lawluo.retrieval"]]


def test_no_module_of_the_library_imports_in_a_circle():
    found = cycles(import_graph(modules_under(ROOT)))
    assert not found, "import circles between modules: " + _say(found)


def test_the_parts_of_the_library_import_each_other_without_a_circle():
    """Before issue 44: agents, tolc, retrieval, metrics, law, llm, config and lawluo.law.weak_labels in one
    circle (tolc → metrics through the tree benchmark, retrieval → tolc through asset building …)."""
    found = cycles(parts_graph(import_graph(modules_under(ROOT))))
    assert not found, "import circles between the library's parts: " + _say(found)


#: The bottom layer: what every other part may import, importing only each other.
BOTTOM = ("lawluo.text", "lawluo.domains", "lawluo.prompts", "lawluo.i18n", "lawluo.files", "lawluo.jsonl")


def test_the_bottom_layer_imports_only_itself():
    graph = parts_graph(import_graph(modules_under(ROOT)))
    for bottom in BOTTOM:
        assert graph[bottom] <= set(BOTTOM), f"{bottom} imports {sorted(graph[bottom] - set(BOTTOM))}"


def test_the_package_does_not_import_the_training_scripts():
    """``lawluo`` is what ``pip install`` ships; ``training/`` is not shipped (it once imported
    ``lawluo.law.weak_labels``, so ``lawluo build clarifications`` failed when installed)."""
    graph = import_graph(modules_under(ROOT))
    reach = {m: sorted(t for t in graph[m] if not t.startswith(("lawluo", "eval_ui"))) for m in graph}
    wrong = {m: t for m, t in reach.items() if m.startswith("lawluo") and t}
    assert not wrong, wrong


def test_the_shipped_index_lookup_imports_no_search_or_builder():
    """``shipped.py`` is read by the searchers when they start; what builds the indexes is above them."""
    graph = import_graph(modules_under(ROOT))
    assert graph[f"{RETRIEVAL}.shipped"] <= {f"{RETRIEVAL}.bm25"}
