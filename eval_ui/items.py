"""Pairwise comparison items (one question, two systems' answers) read from files people hand us.

    items = read_items("comparisons.jsonl")          # or .csv with the same column names
    items = items_from_answers("answers.jsonl", "references.jsonl", "lawluo", "gpt-4", n=200, seed=0)

An item file has one comparison per line (JSONL) or row (CSV): ``id``, ``question``, ``answer_a``,
``answer_b``, ``system_a``, ``system_b`` (required) and ``reference``, ``statutes``, ``source``
(optional). In a CSV, ``statutes`` is a JSON list (``["《民法典》第1079条"]``) or ``;``-separated.
Every problem of the file (missing field, wrong type, duplicate id, a text over
:data:`MAX_TEXT` characters, two identical answers) is reported with its line number in one
:class:`~lawluo.jsonl.JSONLError`, and no item is returned when there is any — the annotation store
imports a file all or nothing.
"""

from __future__ import annotations

import csv
import io
import json
import random
from dataclasses import dataclass
from pathlib import Path

from lawluo.jsonl import JSONLError, read_jsonl, report

MAX_TEXT = 20_000
MAX_NAME = 200
MAX_ID = 500
REQUIRED = ("id", "question", "answer_a", "answer_b", "system_a", "system_b")
OPTIONAL = ("reference", "statutes", "source")


@dataclass(frozen=True)
class Item:
    """One pairwise comparison: ``question`` answered by ``system_a`` (``answer_a``) and ``system_b``."""

    id: str
    question: str
    answer_a: str
    answer_b: str
    system_a: str
    system_b: str
    reference: str = ""
    statutes: tuple[str, ...] = ()
    source: str = ""


def item_problems(item: Item) -> list[str]:
    """What is wrong with ``item`` (empty when it can be annotated); shared by files and the store."""
    problems = []
    if not isinstance(item.id, str) or not item.id.strip() or len(item.id) > MAX_ID:
        problems.append(f'"id" must be a non-empty string of at most {MAX_ID} characters')
    for name in ("question", "answer_a", "answer_b", "system_a", "system_b", "reference", "source"):
        value = getattr(item, name)
        if not isinstance(value, str):
            problems.append(f'"{name}" must be a string, got {type(value).__name__}')
        elif name in REQUIRED and not value.strip():
            problems.append(f'"{name}" is empty')
        elif len(value) > (MAX_NAME if name.startswith("system") else MAX_TEXT):
            limit = MAX_NAME if name.startswith("system") else MAX_TEXT
            problems.append(f'"{name}" has {len(value):,} characters; the limit is {limit:,}')
    if not isinstance(item.statutes, tuple) or not all(
        isinstance(s, str) and s.strip() and len(s) <= MAX_TEXT for s in item.statutes
    ):
        problems.append('"statutes" must be a list of non-empty strings')
    if isinstance(item.answer_a, str) and item.answer_a.strip() and item.answer_a == item.answer_b:
        problems.append('"answer_a" and "answer_b" are the same text; there is nothing to compare')
    return problems


def _item(obj: dict, where: str, source: str, errors: list[str], csv_row: bool) -> Item | None:
    missing = [f for f in REQUIRED if obj.get(f) is None or obj.get(f) == ""]
    if missing:
        errors.append(f"{where}: missing {', '.join(repr(f) for f in missing)}")
        return None
    raw_id = obj["id"]
    if isinstance(raw_id, bool) or not isinstance(raw_id, str | int):
        errors.append(f'{where}: "id" must be a string or integer')
        return None
    statutes = obj.get("statutes") or []
    if csv_row and isinstance(statutes, str):
        text = statutes.strip()
        if text.startswith("["):
            try:
                statutes = json.loads(text)
            except json.JSONDecodeError as exc:
                errors.append(f'{where}: "statutes" looks like a JSON list but is not valid JSON ({exc.msg})')
                return None
        else:
            statutes = [s.strip() for s in text.split(";") if s.strip()]
    if not isinstance(statutes, list):
        errors.append(f'{where}: "statutes" must be a list of strings')
        return None
    fields = {f: obj.get(f, "") for f in REQUIRED[1:] + ("reference", "source")}
    for name, value in fields.items():
        if value is None and name in OPTIONAL:
            fields[name] = ""
    item = Item(
        id=str(raw_id).strip(),
        statutes=tuple(statutes),
        **{**fields, "source": fields["source"] or source},
    )
    problems = item_problems(item)
    if problems:
        errors.extend(f"{where}: {p}" for p in problems)
        return None
    return item


def _csv_rows(path: Path) -> list[tuple[int, dict]]:
    """(line number where the record starts, row) for every non-blank CSV record."""
    raw = path.read_bytes()
    if b"\x00" in raw[:8192]:
        raise JSONLError(f"{path}: looks like a binary file; expected CSV text")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise JSONLError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    reader = csv.DictReader(io.StringIO(text, newline=""))
    header = reader.fieldnames or []
    absent = [f for f in REQUIRED if f not in header]
    if absent:
        raise JSONLError(
            f"{path}:1: the header lacks column(s) {', '.join(absent)}; "
            f"expected {', '.join(REQUIRED + OPTIONAL)}"
        )
    rows, start = [], reader.line_num + 1
    try:
        for row in reader:
            if any((v or "").strip() for k, v in row.items() if k is not None):
                rows.append((start, row))
            start = reader.line_num + 1
    except csv.Error as exc:
        raise JSONLError(f"{path}:{reader.line_num}: not valid CSV ({exc})") from exc
    return rows


def read_items(path: str | Path) -> list[Item]:
    """Every item of a ``.jsonl`` or ``.csv`` file; :class:`JSONLError` lists every bad line."""
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix not in (".jsonl", ".csv"):
        raise JSONLError(f"{path}: expected a .jsonl or .csv file of comparison items")
    if not p.is_file():
        raise JSONLError(f"{path}: no such file")
    rows = read_jsonl(p) if suffix == ".jsonl" else _csv_rows(p)
    errors: list[str] = []
    items: list[Item] = []
    first_line: dict[str, int] = {}
    for n, obj in rows:
        item = _item(obj, f"{path}:{n}", p.name, errors, csv_row=suffix == ".csv")
        if item is None:
            continue
        if item.id in first_line:
            errors.append(f"{path}:{n}: id {item.id!r} already used on line {first_line[item.id]}")
            continue
        first_line[item.id] = n
        items.append(item)
    if errors:
        raise JSONLError(report(errors))
    if not items:
        raise JSONLError(f"{path}: no items in the file")
    return items


def items_from_answers(
    answers_path: str | Path,
    references_path: str | Path,
    system_a: str,
    system_b: str,
    n: int,
    seed: int = 0,
) -> list[Item]:
    """``n`` questions (seeded sample) answered by both systems, as items ``"{id}:{system_a}:{system_b}"``.

    The files are the batch evaluator's (:func:`lawluo.metrics.inputs.load_inputs` validates them);
    a question whose two answers are identical or longer than :data:`MAX_TEXT` cannot be compared and
    is left out of the sample. Raises ``ValueError`` naming the systems available, or how many
    questions could be sampled, when the request cannot be met.
    """
    from lawluo.metrics.inputs import load_inputs

    if system_a == system_b:
        raise ValueError(f"system_a and system_b are both {system_a!r}; choose two different systems")
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    inputs = load_inputs(answers_path, references_path)
    unknown = [s for s in (system_a, system_b) if s not in inputs.systems]
    if unknown:
        raise ValueError(
            f"{', '.join(map(repr, unknown))} not in {answers_path}; systems there: {', '.join(inputs.systems)}"
        )
    by_system = {s: {a.id: a.text for a in inputs.answers if a.system == s} for s in (system_a, system_b)}
    both = sorted(set(by_system[system_a]) & set(by_system[system_b]) & set(inputs.references))
    source = Path(answers_path).name
    eligible = []
    for qid in both:
        ref = inputs.references[qid]
        item = Item(
            id=f"{qid}:{system_a}:{system_b}",
            question=ref.question,
            answer_a=by_system[system_a][qid],
            answer_b=by_system[system_b][qid],
            system_a=system_a,
            system_b=system_b,
            reference=ref.reference,
            statutes=tuple(s for s in ref.statutes or () if s.strip()),
            source=source,
        )
        if not item_problems(item):
            eligible.append(item)
    if len(eligible) < n:
        excluded = len(both) - len(eligible)
        raise ValueError(
            f"asked for {n} items but only {len(eligible)} questions answered by both {system_a!r} and "
            f"{system_b!r} can be compared"
            + (f" ({excluded} more left out: identical, empty or over-long texts)" if excluded else "")
        )
    return random.Random(seed).sample(eligible, n)
