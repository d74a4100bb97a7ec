"""Turning chat messages into model input and cutting stop strings, for the ``transformers`` backend.

Reference: Hugging Face transformers, "Chat templates" (``apply_chat_template``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .errors import ModelUnavailable, RequestRejected


def encode_chat(tokenizer: Any, messages: Sequence[dict[str, str]]) -> Any:
    """``messages`` as model input (a ``BatchEncoding`` of one row) built by the tokenizer's chat template.

    Control tokens typed inside a message (``<|im_start|>system`` pasted by a user) are encoded as
    plain text (``sanitize_control_tokens``). If the template rejects the messages and they hold a
    system message (Gemma's and Mistral's templates refuse one), the system text is merged into
    the first user message and the template tried again.
    """
    if getattr(tokenizer, "chat_template", None) is None:
        raise ModelUnavailable("the model's tokenizer has no chat template; use an instruct/chat model")
    try:
        return _apply_template(tokenizer, messages)
    except Exception as exc:
        if not any(message["role"] == "system" for message in messages):
            raise RequestRejected(f"the model's chat template rejected the conversation: {exc}") from exc
    merged = merge_system_into_user(messages)
    try:
        return _apply_template(tokenizer, merged)
    except Exception as exc:
        raise RequestRejected(
            f"the model's chat template rejected the conversation, even with the system message merged "
            f"into the first user message: {exc}"
        ) from exc


def _apply_template(tokenizer: Any, messages: Sequence[dict[str, str]]) -> Any:
    return tokenizer.apply_chat_template(
        list(messages),
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
