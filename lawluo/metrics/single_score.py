"""LawLuo's single-answer score, 1–10 (LawLuo §5.2, Appendix C).

The judge reads an answer in its dialogue context and scores it on lawyer-like language, usefulness
of the advice and accuracy of the legal knowledge, ending with ``[分数=N]`` (prompt
``metrics/single_score``); ``[score=N]`` and full-width brackets are accepted too. An answer without a
parsable score gets one corrective turn; then the score is missing (``None``) with the judge's text
kept, never invented. A multi-turn dialogue is scored turn by turn, each turn with the dialogue
before it, so quality-over-turns curves (LawLuo Fig. 7) can be drawn (:func:`mean_by_turn`).

    result = score_turn(judge, history=[("client", "…"), ("lawyer", "…")], question="…", answer="…")
    result.score      # 7.0
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lawluo import prompts

from .judge import ANSWER_BUDGET, QUESTION_BUDGET, Judge, attempt, untrusted
from .registry import Key, Metric, judged_columns

if TYPE_CHECKING:
    from .registry import Run

SCORE = re.compile(r"[\[【［]\s*(?:分数|得分|评分|score)\s*[=＝:：]\s*(\d+(?:\.\d+)?)\s*[\]】］]", re.I)
HISTORY_BUDGET = 6_000
NO_HISTORY = "（无，这是对话的第一轮）"
RETRY = "你的回答没有按格式给出分数。请只输出一行“[分数=N]”，N 为 1 到 10 的整数。"
SPEAKERS = {"client": "客户", "lawyer": "律师", "user": "客户", "assistant": "律师"}


def parse_score(text: str) -> float | None:
    """The last ``[分数=N]`` in ``text`` when N is within 1–10, else ``None``.

    >>> parse_score("回答专业。[分数=8]"), parse_score("【score：7.5】"), parse_score("[分数=11]"), parse_score("8分")
    (8.0, 7.5, None, None)
    """
    found = SCORE.findall(text or "")
    if not found:
        return None
    value = float(found[-1])
    return value if 1 <= value <= 10 else None


@dataclass
class TurnScore:
    score: float | None
    raw: str = ""
    error: str | None = None

    def as_dict(self) -> dict:
        return {"score": self.score, "raw": self.raw, "error": self.error}


def _history(history: Sequence[tuple[str, str]]) -> str:
    lines = [f"{SPEAKERS.get(role, role)}：{text}" for role, text in history]
    return "\n".join(lines) if lines else ""


def score_turn(judge: Judge, history: Sequence[tuple[str, str]], question: str, answer: str) -> TurnScore:
    """Score one answer given the dialogue before it (a list of (speaker, text))."""
    past = _history(history)
    prompt = judge_prompt(past, question, answer)
    messages = [{"role": "user", "content": prompt}]
    first = attempt(lambda: judge.chat(messages))
    if first.error:
        return TurnScore(None, "", first.error)
    score = parse_score(first.value)
    if score is not None:
        return TurnScore(score, first.value)
    retry = messages + [{"role": "assistant", "content": first.value}, {"role": "user", "content": RETRY}]
    second = attempt(lambda: judge.chat(retry))
    if second.error:
        return TurnScore(None, first.value, second.error)
    score = parse_score(second.value)
    if score is None:
        return TurnScore(
            None, first.value + "\n---\n" + second.value, "no [分数=N] with N in 1–10 in the judge's answer"
        )
    return TurnScore(score, second.value)


def judge_prompt(history: str, question: str, answer: str) -> str:
    return prompts.render(
        "metrics/single_score",
        history=untrusted(history, HISTORY_BUDGET, "dialogue") if history else NO_HISTORY,
        question=untrusted(question, QUESTION_BUDGET, "question"),
        answer=untrusted(answer, ANSWER_BUDGET, "answer"),
    )


def mean_by_turn(per_dialogue: Sequence[Sequence[float | None]]) -> list[float | None]:
    """Mean score of each turn position over dialogues (missing scores and absent turns skipped).

    >>> mean_by_turn([[6, 8], [7, None, 9], [8]])
    [7.0, 8.0, 9.0]
    """
    width = max((len(d) for d in per_dialogue), default=0)
    means = []
    for t in range(width):
        values = [d[t] for d in per_dialogue if t < len(d) and d[t] is not None]
        means.append(sum(values) / len(values) if values else None)
    return means


class ScoreRun(Metric):
    """The single-answer score in ``lawluo evaluate``: every turn of every answer scored in its dialogue;
    an answer's score is its turns' mean, and each system's mean by turn goes to ``Results.turns``."""

    def run(self, run: Run) -> dict[Key, dict]:
        jobs = []  # (answer, turn index, history, question, answer text)
        for a in run.inputs.answers:
            turns = a.turns or ((run.inputs.references[a.id].question, a.text),)
            history: list[tuple[str, str]] = []
            for t, (question, text) in enumerate(turns):
                jobs.append((a, t, list(history), question, text))
                history += [("client", question), ("lawyer", text)]
        scored: list[TurnScore] = run.map(lambda j: score_turn(run.judge, j[2], j[3], j[4]), jobs, "score")
        per_answer: dict[Key, list[TurnScore]] = {}
        for job, s in zip(jobs, scored, strict=True):
            per_answer.setdefault((job[0].id, job[0].system), []).append(s)
        out: dict[Key, dict] = {}
        by_system: dict[str, list[list[float | None]]] = {}
        for key, turn_scores in per_answer.items():
            values = [s.score for s in turn_scores if s.score is not None]
            out[key] = {
                "score": sum(values) / len(values) if values else None,
                "turns": [s.as_dict() for s in turn_scores],
            }
            by_system.setdefault(key[1], []).append([s.score for s in turn_scores])
        run.results.turns = {system: mean_by_turn(dialogues) for system, dialogues in by_system.items()}
        return out

    def summarise(self, values: Sequence[dict]) -> dict:
        return judged_columns("score", values)

    def judge_errors(self, value: dict) -> int:
        return sum(1 for t in value.get("turns", []) if t["error"])


SINGLE_SCORE = ScoreRun()
