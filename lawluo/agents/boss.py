"""The boss: scores the lawyer's answers and the secretary's report, and picks the best of several answers.

LawLuo §3.2, eq. 6: the boss is a reward model r(x, y) of a question x and an answer y, trained on
pairs of better and worse answers under the Bradley–Terry model, P(y beats y') = σ(r(x, y) − r(x, y')).
Its score of one answer is reported as ``p_better = σ(r(x, y))``: the probability that the answer beats
a reference answer of reward 0. Until a reward model is trained (``training/``), any chat model
configured for the boss role serves as an LLM judge instead: it rates the answer 0–10 with a
one-sentence reason (prompt ``boss/score``), and ``p_better = score / 10``.

    boss = Boss(models["boss"])
    if boss.available:
        best, scores = boss.best_of(question, [answer_a, answer_b, answer_c])
    else:
        show(boss.unavailable_reason())        # the firm shows the answers without scores

Untrusted text: the question and the answer (or report) are quoted between ``<<<`` and ``>>>`` in the
judge's prompt, which tells the judge not to follow instructions inside them; a ``<<<`` or ``>>>``
inside the text is written full-width so it cannot close the quotation. The boss reads at most
:data:`QUESTION_BUDGET`, :data:`ANSWER_BUDGET` and :data:`REPORT_BUDGET` characters (the beginning;
the cut is marked in the prompt and noted in the :class:`Score`); a reward model further cuts the
pair to its ``max_length`` tokens.

A score is never invented: when the judge does not answer with a valid score even after the corrective
retry, :meth:`Boss.score` raises :class:`~lawluo.llm.errors.StructuredOutputError` (its ``raw`` is the
judge's last answer), as it raises every other model error; the caller shows the answer unscored.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from typing import Literal

from pydantic import BaseModel, Field

from lawluo import prompts
from lawluo.llm import ChatBackend, ModelUnavailable, StructuredOutputError, gather
from lawluo.llm.reward_backend import RewardModelBackend
from lawluo.prompts.untrusted import clip, quote

QUESTION_BUDGET = 2_000  # characters of the client's question the boss reads
ANSWER_BUDGET = 6_000  # characters of an answer (about 4,000 tokens of Chinese for a Qwen tokenizer)
BOSS = "The boss"
REPORT_BUDGET = 12_000  # characters of a consultation report
HOW_TO_CONFIGURE = (
    "Set models.boss to a reward model (backend: reward_model, model: <directory written by "
    "training/ or a hub id>; or LAWLUO_BOSS_BACKEND=reward_model and LAWLUO_BOSS_MODEL=…), or to a chat "
    "model that judges as an LLM (backend: openai or transformers). Answers are shown without scores "
    "until then."
)


@dataclass(frozen=True)
class Score:
    """The boss's verdict on one answer or report.

    ``p_better`` is in [0, 1]: σ(reward) for a reward model, the judge's score / 10 for an LLM judge;
    ``raw`` is the reward (any real number) or the judge's 0–10 score; ``note`` is the judge's reason
    and/or what was cut before scoring.
    """

    p_better: float
    raw: float | None
    method: Literal["reward_model", "judge"]
    note: str = ""

    def __post_init__(self) -> None:
        if not 0.0 <= self.p_better <= 1.0:
            raise ValueError(f"p_better {self.p_better} is outside [0, 1]")
        if self.method not in ("reward_model", "judge"):
            raise ValueError(f"method {self.method!r} is not reward_model or judge")


class JudgeVerdict(BaseModel):
    """What the LLM judge answers (as JSON)."""

    score: float = Field(ge=0, le=10, description="overall score from 0 (worst) to 10 (best)")
    reason: str = Field(min_length=1, description="one sentence explaining the score")


def sigmoid(x: float) -> float:
    """σ(x) = 1 / (1 + e^(−x)), without overflow for large |x|.

    >>> sigmoid(0.0), round(sigmoid(2.0), 4), sigmoid(-1000.0)
    (0.5, 0.8808, 0.0)
    """
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    z = math.exp(x)
    return z / (1.0 + z)


class Boss:
    """Scores answers and reports with the boss role's model: a reward model, or a chat model as judge."""

    name = "boss"
    answer_prompt = "boss/score"
    report_prompt = "boss/score_report"

    def __init__(self, model: ChatBackend) -> None:
        self.model = model

    @property
    def uses_reward_model(self) -> bool:
        return isinstance(self.model, RewardModelBackend)

    @property
    def available(self) -> bool:
        return self.unavailable_reason() is None

    def unavailable_reason(self) -> str | None:
        """Why the boss cannot score (no model configured, a missing model directory), else ``None``."""
        reason = self.model.unavailable_reason()
        if reason is None:
            return None
        return f"The boss cannot score answers: {reason.rstrip('.')}. {HOW_TO_CONFIGURE}"

    # -- scoring --------------------------------------------------------------------------------
    def score(self, question: str, answer: str) -> Score:
        """The boss's :class:`Score` of ``answer`` to ``question`` (LawLuo §3.2, eq. 6).

        With a reward model, ``p_better = σ(r(question, answer))``: the Bradley–Terry probability that
        the answer beats a reference answer of reward 0. With a chat model, the judge's 0–10 score / 10.
        Raises ``ModelUnavailable`` (what to set) when the boss has no model, and the model's errors
        (``StructuredOutputError`` when the judge gives no valid score) otherwise.
        """
        return self._score(question, answer, ANSWER_BUDGET, "answer", self.answer_prompt)

    def score_report(self, question: str, report_markdown: str) -> Score:
        """The boss's :class:`Score` of the secretary's consultation report, scored as :meth:`score` does
        (a reward model reads the report as the answer to the question; a judge uses ``boss/score_report``).
        """
        return self._score(question, report_markdown, REPORT_BUDGET, "report", self.report_prompt)

    def best_of(self, question: str, answers: Sequence[str]) -> tuple[int, list[Score]]:
        """The index of the best of ``answers`` (the first of equal ones) and every answer's :class:`Score`.

        A reward model scores them all in batched forward passes; a judge scores them in parallel
        (:func:`lawluo.llm.gather`, within the backend's concurrency limit). Any failure is raised.
        """
        answers = list(answers)
        if not answers:
            raise ValueError("best_of needs at least one answer")
        self._raise_if_unavailable()
        if self.uses_reward_model:
            question, question_note = clip(question, QUESTION_BUDGET, "question", BOSS)
            clipped = [clip(answer, ANSWER_BUDGET, "answer", BOSS) for answer in answers]
            rewards = self.model.score_batch([(question, text) for text, _ in clipped])
            scores = [
                _reward_score(reward, question_note, note)
                for reward, (_, note) in zip(rewards, clipped, strict=True)
            ]
        else:
            scores = gather([partial(self.score, question, answer) for answer in answers])
        best = max(range(len(scores)), key=lambda i: (scores[i].p_better, scores[i].raw or 0.0))
        return best, scores

    # -- internals ------------------------------------------------------------------------------
    def _raise_if_unavailable(self) -> None:
        reason = self.unavailable_reason()
        if reason is not None:
            raise ModelUnavailable(reason)

    def _score(self, question: str, text: str, budget: int, what: str, prompt: str) -> Score:
        if not isinstance(question, str) or not isinstance(text, str):
            raise TypeError(f"the question and the {what} must be strings")
        self._raise_if_unavailable()
        question, question_note = clip(question, QUESTION_BUDGET, "question", BOSS)
        text, text_note = clip(text, budget, what, BOSS)
        if self.uses_reward_model:
            return _reward_score(self.model.score(question, text), question_note, text_note)
        fields = {"question": quote(question, question_note), what: quote(text, text_note)}
        messages = [{"role": "user", "content": prompts.render(prompt, **fields)}]
        try:
            verdict = self.model.chat_json(messages, JudgeVerdict)
        except StructuredOutputError as exc:
            raise StructuredOutputError(f"The boss could not score this {what}: {exc}", raw=exc.raw) from exc
        note = " ".join(part for part in (verdict.reason.strip(), question_note, text_note) if part)
        return Score(p_better=verdict.score / 10, raw=float(verdict.score), method="judge", note=note)


def _reward_score(reward: float, *notes: str) -> Score:
    note = " ".join(n for n in notes if n)
    return Score(p_better=sigmoid(reward), raw=reward, method="reward_model", note=note)
