"""The evaluator's input files, validated as a whole before anything is computed.

Answers (one per system and question): ``{"id", "system", "answer"}``, optionally ``"as_of"`` (the day
the answer was written, ``YYYY-MM-DD``: its citations are judged against the law in force then); a multi-turn dialogue gives
``"turns": [{"question": …, "answer": …}, …]`` instead of (or besides) ``"answer"`` — the
single-answer score is then computed per turn, and the other metrics read the lawyer's turns joined
(or ``"answer"`` when given). References (one per question): ``{"id", "question", "reference",
"statutes"?}`` where ``statutes`` lists the statutes that govern the question, as citations
(``《民法典》第1079条``, resolved to the article's real text) or as text.

Every bad line is reported with its file and line number, and nothing is evaluated until both files
are valid (an answer without a reference, a duplicate (id, system), a wrong type…).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from lawluo.jsonl import JSONLError, read_jsonl, report
from lawluo.law.checker import as_of_day

MAX_TEXT = 200_000
MAX_TURNS = 50


@dataclass(frozen=True)
class Answer:
    id: str
    system: str
    text: str
    turns: tuple[tuple[str, str], ...] = ()  # (question, answer) per turn of a dialogue
    as_of: str | None = None  # the day the answer was written: its citations are judged as of then


@dataclass(frozen=True)
class Reference:
    id: str
    question: str
    reference: str
    statutes: tuple[str, ...] | None = None


@dataclass
class Inputs:
    answers: list[Answer]
    references: dict[str, Reference]
    notes: list[str] = field(default_factory=list)

    @property
    def systems(self) -> list[str]:
        return list(dict.fromkeys(a.system for a in self.answers))


def _id(value: object) -> str | None:
    if isinstance(value, bool) or not isinstance(value, str | int) or str(value).strip() == "":
        return None
    return str(value)


def _text(value: object, what: str, errors: list[str], where: str, required: bool = True) -> str | None:
    if value is None and not required:
        return None
    if not isinstance(value, str):
        errors.append(f'{where}: "{what}" must be a string')
        return None
    if len(value) > MAX_TEXT:
        errors.append(f'{where}: "{what}" has {len(value):,} characters; the limit is {MAX_TEXT:,}')
        return None
    return value


def _answer(obj: dict, where: str, errors: list[str]) -> Answer | None:
    n_before = len(errors)
    qid, system = _id(obj.get("id")), obj.get("system")
    if qid is None:
        errors.append(f'{where}: "id" must be a non-empty string or integer')
    if not isinstance(system, str) or not system.strip() or len(system) > 200:
        errors.append(f'{where}: "system" must be a non-empty string (at most 200 characters)')
    turns: list[tuple[str, str]] = []
    raw_turns = obj.get("turns")
    if raw_turns is not None:
        if not isinstance(raw_turns, list) or not raw_turns or len(raw_turns) > MAX_TURNS:
            errors.append(
                f'{where}: "turns" must be a list of 1–{MAX_TURNS} {{"question", "answer"}} objects'
            )
        else:
            for t, turn in enumerate(raw_turns):
                if not isinstance(turn, dict):
                    errors.append(f"{where}: turn {t} is not an object")
                    continue
                q = _text(turn.get("question"), f"turns[{t}].question", errors, where)
                a = _text(turn.get("answer"), f"turns[{t}].answer", errors, where)
                if q is not None and a is not None:
                    turns.append((q, a))
    text = _text(obj.get("answer"), "answer", errors, where, required=raw_turns is None)
    as_of = None
    if obj.get("as_of") not in (None, ""):
        try:
            if not isinstance(obj["as_of"], str):
                raise ValueError
            as_of = as_of_day(obj["as_of"])
        except ValueError:
            errors.append(
                f'{where}: "as_of" must be a date written YYYY-MM-DD (the day the answer was written)'
            )
    if len(errors) > n_before:
        return None
    if text is None:
        text = "\n\n".join(a for _, a in turns)
    return Answer(qid, system.strip(), text, tuple(turns), as_of)


def _reference(obj: dict, where: str, errors: list[str]) -> Reference | None:
    n_before = len(errors)
    qid = _id(obj.get("id"))
    if qid is None:
        errors.append(f'{where}: "id" must be a non-empty string or integer')
    question = _text(obj.get("question"), "question", errors, where)
    reference = _text(obj.get("reference", ""), "reference", errors, where)
    statutes = obj.get("statutes")
    if statutes is not None and (
        not isinstance(statutes, list) or not all(isinstance(s, str) and len(s) <= 20_000 for s in statutes)
    ):
        errors.append(f'{where}: "statutes" must be a list of strings')
    if len(errors) > n_before:
        return None
    return Reference(qid, question, reference, None if statutes is None else tuple(statutes))


def load_inputs(answers_path: str | Path, references_path: str | Path) -> Inputs:
    """Both files, validated; :class:`~lawluo.jsonl.JSONLError` lists every problem found."""
    errors: list[str] = []
    references: dict[str, Reference] = {}
    for n, obj in read_jsonl(references_path):
        ref = _reference(obj, f"{references_path}:{n}", errors)
        if ref is None:
            continue
        if ref.id in references:
            errors.append(f"{references_path}:{n}: id {ref.id!r} appears twice")
        references[ref.id] = ref
    answers, seen = [], set()
    for n, obj in read_jsonl(answers_path):
        answer = _answer(obj, f"{answers_path}:{n}", errors)
        if answer is None:
            continue
        if (answer.id, answer.system) in seen:
            errors.append(f"{answers_path}:{n}: system {answer.system!r} answers id {answer.id!r} twice")
        elif answer.id not in references and references:
            errors.append(f"{answers_path}:{n}: id {answer.id!r} is not in {references_path}")
        seen.add((answer.id, answer.system))
        answers.append(answer)
    if errors:
        raise JSONLError(report(errors))
    if not answers:
        raise JSONLError(f"{answers_path}: no answers in the file")
    if not references:
        raise JSONLError(f"{references_path}: no references in the file")
    inputs = Inputs(answers, references)
    for system in inputs.systems:
        missing = len(references) - sum(a.system == system for a in answers)
        if missing:
            inputs.notes.append(f"{system} has no answer to {missing} of the {len(references)} questions")
    return inputs
