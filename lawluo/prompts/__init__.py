"""Every prompt LawLuo sends is a template file here, with named placeholders.

Templates are ``string.Template`` files (``${field}``), so JSON examples with braces need no escaping.
``prompts.yaml`` declares each template's fields and purpose; :func:`render` refuses missing or
unexpected fields, and a test renders every template with its declared fields, so a typo in a
placeholder fails in CI rather than in front of a user (alpaca_eval keeps its judges the same way).
A key with ``*`` (``lawyer/*``: the domain lawyers' role prompts) declares every template file it
matches that has no entry of its own, so a new domain's role prompt is one file.

    render("structured/json_instructions", schema="{…}")
"""

from __future__ import annotations

import fnmatch
import functools
import string
from dataclasses import dataclass
from pathlib import Path

import yaml

PROMPTS_DIR = Path(__file__).resolve().parent
INDEX = PROMPTS_DIR / "prompts.yaml"


class PromptError(KeyError):
    """A template that does not exist, or fields that do not match its declaration."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


@dataclass(frozen=True)
class Prompt:
    name: str
    fields: tuple[str, ...]
    purpose: str
    template: string.Template

    def render(self, **values: object) -> str:
        missing = [f for f in self.fields if f not in values]
        extra = sorted(set(values) - set(self.fields))
        if missing or extra:
            raise PromptError(
                f"prompt {self.name}: missing field(s) {missing or '-'}, unexpected field(s) {extra or '-'}; "
                f"declared: {', '.join(self.fields) or '(none)'}"
            )
        return self.template.substitute({key: str(value) for key, value in values.items()})


@functools.cache
def declared() -> dict[str, dict]:
    """The index: template name → {fields, purpose}, the template files a ``*`` key matches included."""
    index = yaml.safe_load(INDEX.read_text(encoding="utf-8")) or {}
    names = sorted(p.relative_to(PROMPTS_DIR).with_suffix("").as_posix() for p in PROMPTS_DIR.rglob("*.txt"))
    entries = {name: entry for name, entry in index.items() if "*" not in name}
    for pattern, entry in index.items():
        if "*" in pattern:
            entries |= {name: entry for name in fnmatch.filter(names, pattern) if name not in entries}
    return entries


@functools.cache
def load(name: str) -> Prompt:
    entry = declared().get(name)
    if entry is None:
        raise PromptError(f"no prompt {name!r} in {INDEX.name}; known: {', '.join(sorted(declared()))}")
    path = PROMPTS_DIR / f"{name}.txt"
    template = string.Template(path.read_text(encoding="utf-8"))
    return Prompt(name, tuple(entry.get("fields") or ()), entry.get("purpose", ""), template)


#: Prompt variants a setting may choose (``prompt_variant``), each with the template suffixes it looks for
#: in order: ``small`` for small local models — where ``<name>.small`` exists it replaces ``<name>`` (few-shot,
#: stricter rules) —, ``tuned`` for a model fine-tuned on the clarifier's own prompt
#: (``training/train_clarifier_sft.py``): ``<name>.tuned``, else ``<name>.small``.
VARIANTS = {"default": (), "small": ("small",), "tuned": ("tuned", "small")}


def render(name: str, variant: str = "default", **values: object) -> str:
    """The text of template ``name`` — or of its ``variant``'s (:data:`VARIANTS`) when there is one —
    with ``values`` filled in. A variant may leave out fields of ``name`` (the tuned clarifier's prompt
    shows no cases): the values of those are not used."""
    if variant not in VARIANTS:
        raise PromptError(f"prompt variant {variant!r}; valid: {', '.join(VARIANTS)}")
    chosen = next((f"{name}.{v}" for v in VARIANTS[variant] if f"{name}.{v}" in declared()), name)
    if chosen != name:
        dropped = set(load(name).fields) - set(load(chosen).fields)
        values = {key: value for key, value in values.items() if key not in dropped}
    return load(chosen).render(**values)
