"""Turning chat messages into model input and knowing where an answer ends, for the ``transformers``
backend: the chat template (the model's, or one the settings supply), its end-of-turn tokens, and stop
strings.

A base model, and most GGUF files, come without a chat template; ``chat_template:`` supplies one (the
text, or a ``.jinja`` file). Chat models end a turn with their own token (Gemma ``<end_of_turn>``,
ChatML ``<|im_end|>``, Llama 3 ``<|eot_id|>``, Phi-3 ``<|end|>``) which is often not the tokenizer's
end-of-sequence token, so :func:`chat_format` finds the ones the template writes and the backend stops
``generate`` at them too.

Reference: Hugging Face transformers, "Chat templates" (``apply_chat_template``, ``chat_template=``)
and "Text generation strategies" (``eos_token_id`` may be a list).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .errors import ModelUnavailable, RequestRejected

# End-of-turn tokens of common chat formats: Gemma, ChatML (Qwen), Llama 3, Phi-3.
END_OF_TURN_TOKENS = ("<end_of_turn>", "<|im_end|>", "<|eot_id|>", "<|end|>")
TEMPLATE_SUFFIXES = (".jinja", ".j2")


@dataclass(frozen=True)
class ChatFormat:
    """How one backend prompts its model: the Jinja template and the tokens that end an answer.

    ``stop_token_ids`` are the end-of-turn tokens the template writes and the ``stop_tokens`` option
    (passed to ``generate`` with the model's own end-of-sequence ids); ``stop_tokens`` are their text.
    """

    template: str
    stop_tokens: tuple[str, ...] = ()
    stop_token_ids: tuple[int, ...] = ()


def is_template_file(value: str) -> bool:
    """Whether a ``chat_template`` setting names a file rather than holding the template itself.

    >>> is_template_file("configs/chat_templates/gemma.jinja"), is_template_file("{{ bos_token }}…")
    (True, False)
    """
    text = value.strip()
    return "{{" not in text and "{%" not in text and text.lower().endswith(TEMPLATE_SUFFIXES)


def chat_template_problem(value: str | None) -> str | None:
    """Why a ``chat_template`` setting cannot be used (a missing file, neither a file nor a template), else None."""
    if value is None:
        return None
    if is_template_file(value):
        path = os.path.expanduser(value.strip())
        if not os.path.isfile(path):
            return f"chat_template file {value.strip()} does not exist; set chat_template: to a .jinja file or a template"
        return None
    if "{{" not in value and "{%" not in value:
        return (
            f"chat_template {value[:60]!r} is neither a Jinja template (it has no {{{{ or {{%) nor the path of a "
            ".jinja file"
        )
    return None


def read_chat_template(value: str) -> str:
    """The template a ``chat_template`` setting gives: its text, or the text of the file it names."""
    problem = chat_template_problem(value)
    if problem:
        raise ModelUnavailable(problem)
    if not is_template_file(value):
        return value
    path = os.path.expanduser(value.strip())
    try:
        with open(path, encoding="utf-8") as file:
            return file.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise ModelUnavailable(f"cannot read chat_template file {value.strip()}: {exc}") from exc


def single_token_id(tokenizer: Any, text: str) -> int | None:
    """The id of ``text`` if the tokenizer encodes it as exactly one token, else None."""
    ids = tokenizer.encode(text, add_special_tokens=False)
    return ids[0] if len(ids) == 1 else None


def chat_format(
    tokenizer: Any, model: str, chat_template: str | None = None, stop_tokens: Sequence[str] = ()
) -> ChatFormat:
    """The :class:`ChatFormat` for ``tokenizer``: ``chat_template`` (text or file) if set, else the
    tokenizer's own; the end-of-turn tokens of :data:`END_OF_TURN_TOKENS` the template writes and that
    are single tokens, plus ``stop_tokens`` (each must be one token). ``model`` names the model in errors.
    """
    template = (
        read_chat_template(chat_template) if chat_template else getattr(tokenizer, "chat_template", None)
    )
    if not isinstance(template, str) or not template.strip():
        raise ModelUnavailable(
            f"model {model} has no chat template (a base model, or a GGUF file without one), so LawLuo cannot "
            "turn a conversation into a prompt; set chat_template: to a Jinja template or a .jinja file "
            "(configs/chat_templates/gemma.jinja for Gemma), or use an instruct/chat model "
            "(e.g. Qwen/Qwen2.5-7B-Instruct)"
        )
    found: dict[str, int] = {}
    for token in END_OF_TURN_TOKENS:
        token_id = single_token_id(tokenizer, token) if token in template else None
        if token_id is not None:
            found[token] = token_id
    for token in stop_tokens:
        token_id = single_token_id(tokenizer, token)
        if token_id is None:
            pieces = len(tokenizer.encode(token, add_special_tokens=False))
            raise ModelUnavailable(
                f"stop_tokens: {token!r} is not one token of the tokenizer of {model} (it is {pieces}); "
                "name a token of its vocabulary, or drop it"
            )
        found[token] = token_id
    return ChatFormat(template, tuple(found), tuple(dict.fromkeys(found.values())))


def encode_chat(tokenizer: Any, messages: Sequence[dict[str, str]], template: str | None = None) -> Any:
    """``messages`` as model input (a ``BatchEncoding`` of one row) built by ``template``, or by the
    tokenizer's own chat template when ``template`` is None.

    Control tokens typed inside a message (``<|im_start|>system`` pasted by a user) are encoded as
    plain text (``sanitize_control_tokens``). If the template rejects the messages and they hold a
    system message (Gemma's and Mistral's templates refuse one), the system text is merged into
    the first user message and the template tried again.
    """
    if template is None and getattr(tokenizer, "chat_template", None) is None:
        raise ModelUnavailable(
            "the model's tokenizer has no chat template; set chat_template:, or use an instruct/chat model"
        )
    try:
        return _apply_template(tokenizer, messages, template)
    except Exception as exc:
        if not any(message["role"] == "system" for message in messages):
            raise RequestRejected(f"the model's chat template rejected the conversation: {exc}") from exc
    merged = merge_system_into_user(messages)
    try:
        return _apply_template(tokenizer, merged, template)
    except Exception as exc:
        raise RequestRejected(
            f"the model's chat template rejected the conversation, even with the system message merged "
            f"into the first user message: {exc}"
        ) from exc


def _apply_template(tokenizer: Any, messages: Sequence[dict[str, str]], template: str | None) -> Any:
    return tokenizer.apply_chat_template(
        list(messages),
        chat_template=template,
        add_generation_prompt=True,
        tokenize=True,
        return_dict=True,
        return_tensors="pt",
        sanitize_control_tokens=True,
    )


def merge_system_into_user(messages: Sequence[dict[str, str]]) -> list[dict[str, str]]:
    """``messages`` without system messages, their text put before the first user message's.

    >>> merge_system_into_user([{"role": "system", "content": "你是律师。"}, {"role": "user", "content": "押金？"}])
    [{'role': 'user', 'content': '你是律师。\\n\\n押金？'}]
    """
    system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
    rest = [dict(m) for m in messages if m["role"] != "system"]
    if not system:
        return rest
    if rest and rest[0]["role"] == "user":
        rest[0]["content"] = f"{system}\n\n{rest[0]['content']}"
    else:
        rest.insert(0, {"role": "user", "content": system})
    return rest


# -- stop strings -------------------------------------------------------------------------------------
def cut_at_stop(text: str, stops: Sequence[str]) -> tuple[str, bool]:
    """``text`` up to (not including) the earliest stop string, and whether one was found.

    >>> cut_at_stop("答：可以。\\n问：", ["问："])
    ('答：可以。\\n', True)
    """
    positions = [i for i in (text.find(stop) for stop in stops if stop) if i >= 0]
    if not positions:
        return text, False
    return text[: min(positions)], True


class StopStringFilter:
    """Passes streamed text through, holding back a tail that may be the start of a stop string.

    >>> f = StopStringFilter(["问："])
    >>> [f.feed("答：可以"), f.feed("。\\n问"), f.feed("：还有"), f.stopped]
    ['答：可以', '。\\n', '', True]
    """

    def __init__(self, stops: Sequence[str]) -> None:
        self.stops = [stop for stop in stops if stop]
        self.buffer = ""
        self.stopped = False

    def feed(self, piece: str) -> str:
        if not self.stops:
            return piece
        self.buffer += piece
        text, self.stopped = cut_at_stop(self.buffer, self.stops)
        if self.stopped:
            self.buffer = ""
            return text
        keep = max(
            (k for stop in self.stops for k in range(1, len(stop)) if self.buffer.endswith(stop[:k])),
            default=0,
        )
        ready, self.buffer = self.buffer[: len(self.buffer) - keep], self.buffer[len(self.buffer) - keep :]
        return ready

    def flush(self) -> str:
        rest, self.buffer = self.buffer, ""
        return rest


def requested_stops(gen: dict[str, Any]) -> list[str]:
    stop = gen.get("stop")
    if not stop:
        return []
    return [stop] if isinstance(stop, str) else [s for s in stop if s]
