"""Training rows for the clarifier (issue 41 item 3): the app's own first-level prompt for a question, and
as the answer the elements a labeller marked relevant for it.

Where the rows come from:

- the questions of ``benchmarks/data/clarification_questions*.jsonl`` and the labels of
  ``clarification_labels*.jsonl`` (one label per question and element, by the rule of
  ``benchmarks/data/README.md``): a question with at least ``min_relevant`` relevant elements is a row, its
  answer the relevant ones — up to K, those the prompt's reference elements hold first (the model learns to
  pick from what it is shown), each once;
- the prompt is what :class:`~lawluo.tolc.builder.TreeBuilder` sends for the first level, built by the firm
  of the given settings (receptionist routing, soft routing, material, similar cases, ``prompt_variant``): a
  recording clarifier takes the messages and fails the call, so nothing but the prompt is used.

The held-out sets a clarifier is measured on must stay out: ``exclude`` names their splits (the ``split``
field of the question files, e.g. ``held_out16``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from lawluo.llm.base import ChatBackend
from lawluo.llm.errors import LLMError
from lawluo.tolc.tree import statement_key

BENCHMARK_DATA = Path(__file__).resolve().parent.parent / "benchmarks" / "data"


@dataclass(frozen=True)
class LabelledQuestion:
    id: str
    question: str
    split: str
    relevant: tuple[str, ...]  # the elements labelled relevant, in the labels file's order


def labelled_questions(
    data: Path = BENCHMARK_DATA, exclude: Iterable[str] = (), min_relevant: int = 2
) -> list[LabelledQuestion]:
    """Every question of ``data`` with at least ``min_relevant`` elements labelled relevant, its split not
    in ``exclude``; a question id labelled in two files counts once (the ids differ between sets)."""
    exclude = set(exclude)
    questions: dict[str, dict] = {}
    for path in sorted(data.glob("clarification_questions*.jsonl")):
        for row in _rows(path):
            questions[row["id"]] = row
    relevant: dict[str, dict[str, None]] = {}
    for path in sorted(data.glob("clarification_labels*.jsonl")):
        for row in _rows(path):
            if row.get("relevant") == 1:
                relevant.setdefault(row["id"], {})[row["element"]] = None
    out = []
    for qid, row in questions.items():
        kept = _distinct(relevant.get(qid, {}))
        if row.get("split") in exclude or len(kept) < min_relevant:
            continue
        out.append(LabelledQuestion(qid, row["question"], row.get("split", ""), tuple(kept)))
    return out


def _rows(path: Path) -> Iterator[dict]:
    with path.open(encoding="utf-8") as f:
        for line in f:
            if line.strip():
                yield json.loads(line)


def _distinct(statements: Iterable[str]) -> list[str]:
    seen, out = set(), []
    for s in statements:
        key = statement_key(s)
        if key and key not in seen:
            seen.add(key)
            out.append(s)
    return out


class RecordingClarifier(ChatBackend):
    """A clarifier that keeps the messages it is sent and fails every call (the builder then falls back
    to the material, which costs nothing): how the app's exact prompt is obtained without a model."""

    name = "recording"

    def __init__(self) -> None:
        super().__init__(options=None, role="clarifier")
        self.calls: list[list[dict]] = []

    @property
    def concurrency(self) -> int:
        return 1

    def chat_json(self, messages, schema, **overrides):
        self.calls.append([dict(m) for m in messages])
        raise LLMError("recording only")

    def _chat(self, messages, gen):  # pragma: no cover - chat_json never reaches it
        raise LLMError("recording only")

    def _stream(self, messages, gen):  # pragma: no cover
        raise LLMError("recording only")


def first_level_prompt(firm, question: str) -> list[dict]:
    """The messages the firm's tree builder sends for the first level of ``question``'s tree."""
    recorder = RecordingClarifier()
    kept, firm.tree_builder.clarifier = firm.tree_builder.clarifier, recorder
    try:
        state = firm.new()
        firm.receive(state, question)
        for _ in firm.clarify(state, 2, firm.tree_builder.k):
            pass
    finally:
        firm.tree_builder.clarifier = kept
    if not recorder.calls:
        raise ValueError(f"the tree builder sent no prompt for {question!r}")
    return recorder.calls[0]


def answer_of(relevant: Sequence[str], prompt: str, k: int) -> str:
    """The row's answer, as the builder's schema wants it: up to ``k`` relevant elements, those the prompt
    shows first."""
    shown = [s for s in relevant if s in prompt]
    chosen = (shown + [s for s in relevant if s not in shown])[:k]
    return json.dumps({"elements": [{"statement": s, "case_ids": []} for s in chosen]}, ensure_ascii=False)


@dataclass
class ClarifierRows:
    rows: list[dict] = field(default_factory=list)  # {"messages", "source", "id", "split"}
    shown: int = 0  # answer elements the prompt's reference elements held
    elements: int = 0


def clarifier_rows(firm, questions: Sequence[LabelledQuestion]) -> ClarifierRows:
    """One chat row per question: the app's first-level prompt and the labelled answer."""
    out = ClarifierRows()
    k = firm.tree_builder.k
    for q in questions:
        messages = first_level_prompt(firm, q.question)
        answer = answer_of(q.relevant, messages[-1]["content"], k)
        chosen = json.loads(answer)["elements"]
        out.elements += len(chosen)
        out.shown += sum(e["statement"] in messages[-1]["content"] for e in chosen)
        out.rows.append(
            {
                "messages": [*messages, {"role": "assistant", "content": answer}],
                "source": "clarification_labels",
                "id": q.id,
                "split": q.split,
            }
        )
    return out
