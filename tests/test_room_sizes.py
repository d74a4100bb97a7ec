"""Rooms of a size a reader can hold (issue 44, item 5): no module over 600 lines, no function over 80.

Counted on the source as committed (blank lines, comments and docstrings included), for the library
(``lawluo``, ``eval_ui``, ``training``), ``app.py``, ``benchmarks/`` and ``scripts/``. A Gradio layout
builder that reads best whole may be longer if the line above its ``def`` says why, starting
``# layout:`` — the exceptions are listed by :func:`long_layouts` so that a reader sees them all.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WHERE = ("lawluo", "eval_ui", "training", "benchmarks", "scripts", "app.py")
MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 80
LAYOUT_MARK = "# layout:"


def sources(root: Path = ROOT) -> list[Path]:
    found: list[Path] = []
    for name in WHERE:
        path = root / name
        found += [path] if path.is_file() else sorted(path.rglob("*.py"))
    return [p for p in found if "__pycache__" not in p.parts]


def functions(path: Path) -> list[tuple[str, int, int, bool]]:
    """``(name, first line, length, marked as a layout)`` for every function and method of ``path``."""
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    out = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            above = lines[first - 2].strip() if first >= 2 else ""
            out.append(
                (node.name, node.lineno, node.end_lineno - node.lineno + 1, above.startswith(LAYOUT_MARK))
            )
    return out


def long_layouts(root: Path = ROOT) -> list[str]:
    """The functions over the limit that say why (``# layout: …`` above them)."""
    return [
        f"{p.relative_to(root)}:{line} {name} ({length} lines)"
        for p in sources(root)
        for name, line, length, marked in functions(p)
        if length > MAX_FUNCTION_LINES and marked
    ]


def test_the_counter_sees_long_functions_and_their_reasons(tmp_path):
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    (tmp_path / "m.py").write_text(
        f"def short():\n    return 1\n\n\n# layout: one Blocks context\ndef tall():\n{body}\n",
        encoding="utf-8",
    )
    assert [(n, length, marked) for n, _, length, marked in functions(tmp_path / "m.py")] == [
        ("short", 2, False),
        ("tall", MAX_FUNCTION_LINES + 1, True),
    ]


def test_no_module_is_over_600_lines():
    long = {
        str(p.relative_to(ROOT)): n
        for p in sources()
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert not long, f"modules over {MAX_MODULE_LINES} lines: {long}"


def test_no_function_is_over_80_lines_unless_a_layout_says_why():
    long = [
        f"{p.relative_to(ROOT)}:{line} {name} ({length} lines)"
        for p in sources()
        for name, line, length, marked in functions(p)
        if length > MAX_FUNCTION_LINES and not marked
    ]
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines: {long}"


def test_the_layouts_that_say_why_are_few():
    assert len(long_layouts()) <= 5, long_layouts()


def test_no_handler_reads_gradio_private_event_data():
    """Gradio contracts are public: an event's fields through ``lawluo.ui.views.event_field`` (``evt.node``),
    never ``evt._data`` (issue 44: read in two handlers before)."""
    readers = [
        f"{p.relative_to(ROOT)}:{n}"
        for p in sources()
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), start=1)
        if "._data" in line or '"_data"' in line
    ]
    assert not readers, readers
