"""Every prompt LawLuo sends is a template file here, with named placeholders.

Templates are ``string.Template`` files (``${field}``), so JSON examples with braces need no escaping.
``prompts.yaml`` declares each template's fields and purpose; :func:`render` refuses missing or
unexpected fields, and a test renders every template with its declared fields, so a typo in a
placeholder fails in CI rather than in front of a user (alpaca_eval keeps its judges the same way).
A key with ``*`` (``lawyer/*``: the domain lawyers' role prompts) declares every template file it
matches that has no entry of its own, so a new domain's role prompt is one file.

**Judges** are folders, as alpaca_eval keeps its evaluators: ``metrics/pairwise/`` holds ``prompt.txt``
(the template, named ``metrics/pairwise``) and ``judge.yaml`` — its fields and purpose, and the contract
of its reply: ``reply: json`` with the ``schema`` it must validate against (``"module:Class"``, two
judges may name one), or ``reply: text`` with the ``parser`` that reads it. :func:`judge` reads it;
:func:`rendered_from` says which template a prompt text was rendered from (the fake judge of the tests
answers by it).

    render("structured/json_instructions", schema="{…}")
    judge("metrics/pairwise").schema_type()   # lawluo.metrics.pairwise.PairVerdict
"""

from __future__ import annotations

import fnmatch
import functools
import importlib
import re
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


JUDGE_FILE = "judge.yaml"  # beside a judge's prompt.txt
REPLIES = ("json", "text")


@dataclass(frozen=True)
class JudgeSpec:
    """A judge folder's ``judge.yaml``: the contract of the template beside it."""

    name: str
    fields: tuple[str, ...]
    purpose: str
    reply: str  # json: validated against ``schema``; text: read by ``parser``
    schema: str = ""  # "module:Class" (a pydantic model, or list[...] of one: "module:Class[]")
    parser: str = ""  # "module:function" for a text reply

    def schema_type(self) -> object:
        """The class the reply must validate against (``list[Class]`` for ``module:Class[]``)."""
        many = self.schema.endswith("[]")
        found = _attribute(self.schema.removesuffix("[]"))
        return list[found] if many else found

    def parser_function(self) -> object:
        return _attribute(self.parser)


def _attribute(target: str) -> object:
    module, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module), attribute)


def _judge_folders() -> dict[str, Path]:
    """Template name → folder, for every folder holding a ``prompt.txt``."""
    return {
        p.parent.relative_to(PROMPTS_DIR).as_posix(): p.parent
        for p in sorted(PROMPTS_DIR.rglob("prompt.txt"))
    }


@functools.cache
def declared() -> dict[str, dict]:
    """The index: template name → {fields, purpose}, the template files a ``*`` key matches and the judge
    folders (their ``judge.yaml``) included."""
    index = yaml.safe_load(INDEX.read_text(encoding="utf-8")) or {}
    names = sorted(
        p.relative_to(PROMPTS_DIR).with_suffix("").as_posix()
        for p in PROMPTS_DIR.rglob("*.txt")
        if p.name != "prompt.txt"
    )
    entries = {name: entry for name, entry in index.items() if "*" not in name}
    for pattern, entry in index.items():
        if "*" in pattern:
            entries |= {name: entry for name in fnmatch.filter(names, pattern) if name not in entries}
    for name, folder in _judge_folders().items():
        if name in entries:
            raise PromptError(f"prompt {name} is declared twice: in {INDEX.name} and in {name}/{JUDGE_FILE}")
        entries[name] = yaml.safe_load((folder / JUDGE_FILE).read_text(encoding="utf-8")) or {}
    return entries


def _template_path(name: str) -> Path:
    folder = PROMPTS_DIR / name
    return folder / "prompt.txt" if (folder / "prompt.txt").is_file() else PROMPTS_DIR / f"{name}.txt"


@functools.cache
def load(name: str) -> Prompt:
    entry = declared().get(name)
    if entry is None:
        raise PromptError(f"no prompt {name!r} in {INDEX.name}; known: {', '.join(sorted(declared()))}")
    template = string.Template(_template_path(name).read_text(encoding="utf-8"))
    return Prompt(name, tuple(entry.get("fields") or ()), entry.get("purpose", ""), template)


@functools.cache
def judge(name: str) -> JudgeSpec:
    """The contract of judge ``name`` (a folder with ``prompt.txt`` and ``judge.yaml``)."""
    if name not in _judge_folders():
        raise PromptError(f"no judge {name!r}; judges: {', '.join(judges())}")
    entry = declared()[name]
    spec = JudgeSpec(
        name,
        tuple(entry.get("fields") or ()),
        str(entry.get("purpose", "")),
        str(entry.get("reply", "")),
        str(entry.get("schema", "")),
        str(entry.get("parser", "")),
    )
    if spec.reply not in REPLIES or not (spec.schema if spec.reply == "json" else spec.parser):
        raise PromptError(f"judge {name}: {JUDGE_FILE} needs reply json + schema, or reply text + parser")
    return spec


def judges() -> list[str]:
    """The names of the judge folders."""
    return sorted(_judge_folders())


@functools.cache
def _pattern(name: str) -> re.Pattern:
    """A regex matching the texts template ``name`` renders (any value in each placeholder)."""
    template = load(name).template
    parts, end = [], 0
    for m in template.pattern.finditer(template.template):
        parts.append(re.escape(template.template[end : m.start()]))
        parts.append(re.escape("$") if m.group("escaped") else "(?:.*?)")
        end = m.end()
    parts.append(re.escape(template.template[end:]))
    return re.compile("".join(parts), re.S)


def rendered_from(text: str, names: list[str] | None = None) -> str | None:
    """The template (of ``names``, default every declared one) that ``text`` begins with a rendering of
    (what a caller appends, e.g. the JSON instructions, may follow), else ``None``; the most specific one
    (longest fixed text) when several fit.

    >>> rendered_from(render("structured/json_retry", error="E", schema="S"))
    'structured/json_retry'
    """
    fits = [n for n in (names or declared()) if _pattern(n).match(text)]
    return max(fits, key=lambda n: len(_pattern(n).pattern), default=None)


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
