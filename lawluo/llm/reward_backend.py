"""The ``reward_model`` backend: a local reward model that scores an answer to a question (the boss).

LawLuo §3.2, eq. 6: the boss is a reward model r(x, y) trained on preference pairs, as TRL's
``RewardTrainer`` trains one (loss −log σ(r(x, y⁺) − r(x, y⁻)), Bradley–Terry): an
``AutoModelForSequenceClassification`` with a single output, the reward, read at the last token.
:meth:`RewardModelBackend.score` returns that raw reward; :class:`lawluo.agents.boss.Boss` turns it into
a probability. It is a :class:`~lawluo.llm.base.ChatBackend` so that the settings, the registry and
:class:`~lawluo.llm.models.LanguageModels` treat it like every other backend, but it cannot chat:
``chat`` and ``stream`` raise :class:`~lawluo.llm.errors.RequestRejected`.

Input, as TRL formats a conversational preference example: the tokenizer's chat template applied to
``[{"role": "user", "content": question}, {"role": "assistant", "content": answer}]`` (control tokens
typed inside the texts are encoded as plain text); a tokenizer without a chat template gets the
question and the answer as a text pair (``[CLS] q [SEP] a [SEP]`` for BERT-like models) when it has a
separator token, else ``question + "\\n\\n" + answer``. Longer than ``max_length`` tokens: the question
is cut to what is left after the answer but never below a quarter of the budget, the answer to the rest
(both keep their beginning).

Like the ``transformers`` backend, importing this module or creating a backend imports neither torch
nor transformers; the model loads on the first call, once per process for the same weights, in the
shared :data:`~lawluo.llm.local_loading.MODEL_CACHE`, and every forward pass holds the model's lock.

Reference: TRL, "Reward Modeling" (``RewardTrainer``, conversational preference format); transformers
``AutoModelForSequenceClassification`` (the pooled logit of the last non-padding token).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from .base import ChatBackend
from .errors import ModelUnavailable, RequestRejected
from .local_loading import (
    MODEL_CACHE,
    LoadedModel,
    load_failure_message,
    missing_local_path,
    resolve_device_and_dtype,
)
from .options import RewardModelOptions

__all__ = ["RewardLoadKey", "RewardModelBackend", "load_reward_model"]

PLAIN_SEPARATOR = "\n\n"  # between question and answer for a tokenizer with neither template nor [SEP]
QUESTION_SHARE = 4  # a cut question keeps at least 1/QUESTION_SHARE of the token budget


@dataclass(frozen=True)
class RewardLoadKey:
    """Which reward-model weights end up in memory (its own class: never equal to a chat model's key)."""

    model: str
    device: str
    dtype: str
    revision: str | None
    trust_remote_code: bool


class RewardModelBackend(ChatBackend):
    """A local reward model (see the module docstring); ``options`` is :class:`RewardModelOptions`."""

    name = "reward_model"

    def __init__(self, options: RewardModelOptions, role: str = "boss", api_key: str | None = None) -> None:
        super().__init__(options, role, api_key)
        self.options: RewardModelOptions = options
        self._key: RewardLoadKey | None = None

    def unavailable_reason(self) -> str | None:
        # Only what is knowable without importing torch; the rest surfaces on the first call.
        return missing_local_path("model", self.options.model)

    def describe(self) -> str:
        return f"{self.name} · {self.options.model}"

    def load(self) -> LoadedModel:
        """The loaded tokenizer and model, loading them now if no backend in this process has yet.

        Call it at startup to fail early; raises ``ModelUnavailable`` with what to change.
        """
        if self._key is None:
            device, dtype = resolve_device_and_dtype(self.options.device, self.options.dtype)
            model = self.options.model
            self._key = RewardLoadKey(
                model=os.path.expanduser(model) if model.startswith("~") else model,
                device=device,
                dtype=dtype,
                revision=self.options.revision,
                trust_remote_code=self.options.trust_remote_code,
            )
        return MODEL_CACHE.get(self._key, load_reward_model)

    # -- scoring --------------------------------------------------------------------------------
    def score(self, question: str, answer: str) -> float:
        """The raw reward r(question, answer): a real number, higher is better (not a probability)."""
        return self.score_batch([(question, answer)])[0]

    def score_batch(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """The rewards of ``(question, answer)`` pairs, in order, ``batch_size`` pairs per forward pass.

        A pair scores the same alone or in a batch (right padding, the reward read at the last real
        token), up to floating-point noise.
        """
        pairs = list(pairs)
        for i, pair in enumerate(pairs):
            if not (
                isinstance(pair, tuple | list) and len(pair) == 2 and all(isinstance(t, str) for t in pair)
            ):
                raise ValueError(f"pair {i} must be (question, answer), two strings")
        self._raise_if_unavailable()
        if not pairs:
            return []
        with self._slots:
            loaded = self.load()
            rows = [encode_pair(loaded.tokenizer, q, a, self.options.max_length) for q, a in pairs]
            pad_id = _pad_token_id(loaded)
            size = self.options.batch_size if pad_id is not None else 1
            rewards: list[float] = []
            for start in range(0, len(rows), size):
                rewards += _forward(loaded, rows[start : start + size], pad_id)
            return rewards

    def ping(self, timeout: float = 10.0) -> None:
        """Score one pair (a reward model cannot chat); ``timeout`` does not apply to a local model."""
        self.score("ping", "pong")

    # -- not a chat model -----------------------------------------------------------------------
    def _refuse(self) -> RequestRejected:
        return RequestRejected(
            f"the {self.role} role's reward model ({self.options.model}) scores answers; it cannot chat. "
            "Score with lawluo.agents.boss.Boss, or give this role a chat backend (openai, transformers)"
        )

    def _chat(self, messages: list[dict[str, str]], gen: dict[str, Any]) -> str:
        raise self._refuse()

    def _stream(self, messages: list[dict[str, str]], gen: dict[str, Any]) -> Iterator[str]:
        raise self._refuse()


# -- loading --------------------------------------------------------------------------------------------
def load_reward_model(key: RewardLoadKey) -> LoadedModel:
    """Load the tokenizer and the one-output sequence classifier named by ``key`` (no caching)."""
    missing = missing_local_path("model", key.model)
    if missing:
        raise ModelUnavailable(missing)
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    common = {"revision": key.revision, "trust_remote_code": key.trust_remote_code}
    try:
        tokenizer = AutoTokenizer.from_pretrained(key.model, **common)
        model = AutoModelForSequenceClassification.from_pretrained(
            key.model, dtype=getattr(torch, key.dtype), device_map={"": key.device}, **common
        )
    except Exception as exc:
        raise ModelUnavailable(load_failure_message("reward model", key.model, exc)) from exc
    outputs = model.config.num_labels
    if outputs != 1:
        raise ModelUnavailable(
            f"{key.model} is a classifier with {outputs} outputs; a reward model has exactly one "
            "(num_labels=1, as TRL's RewardTrainer saves it). Train one with training/ or pick another model"
        )
    # TRL sets the model's pad token from the tokenizer's when it trains; do the same for models
    # saved without one, so that answers can be scored in batches.
    text_config = model.config.get_text_config()
    if text_config.pad_token_id is None and tokenizer.pad_token_id is not None:
        text_config.pad_token_id = tokenizer.pad_token_id
    model.eval()
    return LoadedModel(tokenizer=tokenizer, model=model, device=key.device)


# -- input ----------------------------------------------------------------------------------------------
def encode_pair(tokenizer: Any, question: str, answer: str, max_length: int) -> list[int]:
    """The token ids the reward model reads for ``(question, answer)``, at most ``max_length`` of them.

    The format is described in the module docstring. When the pair is too long, the question and the
    answer are cut on token boundaries and formatted again, so the template's closing tokens (where the
    reward is read) are kept.
    """
    ids = _format(tokenizer, question, answer)
    if len(ids) <= max_length:
        return ids
    q_ids, a_ids = _text_ids(tokenizer, question), _text_ids(tokenizer, answer)
    budget = max(0, max_length - len(_format(tokenizer, "", "")))
    q_keep = min(len(q_ids), max(budget // QUESTION_SHARE, budget - len(a_ids)))
    a_keep = max(0, budget - q_keep)
    ids = _format(tokenizer, _decode(tokenizer, q_ids[:q_keep]), _decode(tokenizer, a_ids[:a_keep]))
    # Decoding and encoding again can merge tokens differently; a rare overshoot of a few tokens is cut.
    return ids[:max_length]


def _format(tokenizer: Any, question: str, answer: str) -> list[int]:
    if getattr(tokenizer, "chat_template", None) is not None:
        conversation = [{"role": "user", "content": question}, {"role": "assistant", "content": answer}]
        return list(
            tokenizer.apply_chat_template(
                conversation, tokenize=True, return_dict=False, sanitize_control_tokens=True
            )
        )
    if tokenizer.sep_token is not None:
        return list(tokenizer(question, answer, split_special_tokens=True)["input_ids"])
    return list(tokenizer(question + PLAIN_SEPARATOR + answer, split_special_tokens=True)["input_ids"])


def _text_ids(tokenizer: Any, text: str) -> list[int]:
    return list(tokenizer(text, add_special_tokens=False, split_special_tokens=True)["input_ids"])


def _decode(tokenizer: Any, ids: list[int]) -> str:
    # A cut inside a multi-byte character decodes to U+FFFD; drop it.
    return tokenizer.decode(ids).rstrip("\ufffd")


def _pad_token_id(loaded: LoadedModel) -> int | None:
    """The padding id the model recognises (it finds the last real token by it), or None: no batching."""
    return loaded.model.config.get_text_config().pad_token_id


def _forward(loaded: LoadedModel, rows: list[list[int]], pad_id: int | None) -> list[float]:
    import torch

    width = max(len(row) for row in rows)
    input_ids = torch.full((len(rows), width), pad_id if pad_id is not None else 0, dtype=torch.long)
    attention_mask = torch.zeros((len(rows), width), dtype=torch.long)
    for i, row in enumerate(rows):  # right padding: positions of the real tokens do not move
        input_ids[i, : len(row)] = torch.tensor(row, dtype=torch.long)
        attention_mask[i, : len(row)] = 1
    with loaded.lock, torch.inference_mode():
        logits = loaded.model(
            input_ids=input_ids.to(loaded.device), attention_mask=attention_mask.to(loaded.device)
        ).logits
    return [float(value) for value in logits[:, 0].float().cpu()]
