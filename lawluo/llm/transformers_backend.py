"""The ``transformers`` backend: a Hugging Face causal LM run in this process, optionally with a PEFT
(LoRA) adapter on top and optionally quantized to 4 or 8 bits with bitsandbytes on a CUDA GPU.

Importing this module or creating a backend imports neither torch nor transformers: the model loads
on the first call (or on :meth:`TransformersBackend.load`), once per process for the same weights, in
the :class:`ModelCache`. Generation on one loaded model is serialised by that model's lock (one
model, one GPU); :attr:`TransformersOptions.concurrency` only bounds how many calls may wait for it.

Prompts are built by the tokenizer's chat template (``apply_chat_template``); a template that
refuses a system message gets it merged into the first user message instead. ``temperature: 0``
decodes greedily. A stream runs ``generate`` in a worker thread feeding a ``TextIteratorStreamer``;
closing the stream early stops generation after the current token.

Reference: Hugging Face transformers, "Chat templates" and "Text generation strategies"
(``TextIteratorStreamer``, ``StoppingCriteria``, ``stop_strings``); PEFT, ``PeftModel.from_pretrained``.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from typing import Any

from .base import ChatBackend
from .errors import LLMTimeout
from .local_loading import (
    MODEL_CACHE,
    LoadedModel,
    LoadKey,
    clear_model_cache,
    load_model,
    missing_local_path,
    resolve_load_key,
)
from .local_prompting import StopStringFilter, cut_at_stop, encode_chat, requested_stops
from .options import TransformersOptions

__all__ = ["MODEL_CACHE", "StopStringFilter", "TransformersBackend", "clear_model_cache", "encode_chat"]


# -- the backend --------------------------------------------------------------------------------------
class TransformersBackend(ChatBackend):
    """A local Hugging Face chat model (see the module docstring); ``options`` is :class:`TransformersOptions`."""

    name = "transformers"

    def __init__(
        self, options: TransformersOptions, role: str = "lawyer", api_key: str | None = None
    ) -> None:
        super().__init__(options, role, api_key)
        self.options: TransformersOptions = options
        self._key: LoadKey | None = None

    def unavailable_reason(self) -> str | None:
        # Only what is knowable without importing torch: a local path that plainly does not exist.
        # Everything else (no GPU, no bitsandbytes, an unreachable hub) surfaces on the first call.
        return missing_local_path("model", self.options.model) or missing_local_path(
            "adapter", self.options.adapter
        )

    def describe(self) -> str:
        text = f"{self.name} · {self.options.model}"
        if self.options.adapter:
            text += f" + adapter {self.options.adapter}"
        if self.options.quantization != "none":
            text += f" ({self.options.quantization})"
        return text

    def load(self) -> LoadedModel:
        """The loaded tokenizer and model, loading them now if no backend in this process has yet.

        Call it at startup to fail early; raises ``ModelUnavailable`` with what to change.
        """
        if self._key is None:
            self._key = resolve_load_key(self.options)
        return MODEL_CACHE.get(self._key, load_model)

    # -- generation -----------------------------------------------------------------------------
    def _chat(self, messages: list[dict[str, str]], gen: dict[str, Any]) -> str:
        import torch

        loaded = self.load()
        inputs = encode_chat(loaded.tokenizer, messages).to(loaded.device)
        kwargs = self._generate_kwargs(loaded, gen)
        with loaded.lock:
            if "seed" in gen:
                torch.manual_seed(int(gen["seed"]))
            output = loaded.model.generate(**inputs, **kwargs)
        new_tokens = output[0, inputs["input_ids"].shape[1] :]
        text = loaded.tokenizer.decode(new_tokens, skip_special_tokens=True)
        return cut_at_stop(text, requested_stops(gen))[0]

    def _stream(self, messages: list[dict[str, str]], gen: dict[str, Any]) -> Iterator[str]:
        from transformers import StoppingCriteriaList, TextIteratorStreamer

        loaded = self.load()
        inputs = encode_chat(loaded.tokenizer, messages).to(loaded.device)
        streamer = TextIteratorStreamer(
            loaded.tokenizer, skip_prompt=True, skip_special_tokens=True, timeout=self.options.stream_timeout
        )
        cancel = threading.Event()
        kwargs = {
            **inputs,
            **self._generate_kwargs(loaded, gen),
            "streamer": streamer,
            "stopping_criteria": StoppingCriteriaList([_event_stopping_criteria(cancel)]),
        }
        worker = _GenerateWorker(loaded, kwargs, gen.get("seed"), cancel, streamer)
        worker.start()
        stop_filter = StopStringFilter(requested_stops(gen))
        timed_out = False
        try:
            while not stop_filter.stopped:
                try:
                    piece = next(streamer)
                except StopIteration:
                    break
                except queue.Empty:
                    if worker.is_alive() and not worker.generating.is_set():
                        continue  # waiting for the model lock behind another call: not a stalled model
                    timed_out = True
                    raise LLMTimeout(
                        f"{self.options.model} produced no token for {self.options.stream_timeout:g} s; "
                        "raise stream_timeout, lower max_tokens, or use a smaller model"
                    ) from None
                text = stop_filter.feed(piece)
                if text:
                    yield text
            if worker.error is not None and not stop_filter.stopped:
                raise worker.error
            rest = stop_filter.flush()
            if rest:
                yield rest
        finally:
            # Closed early (GeneratorExit at the yield), stopped by a stop string, timed out or done:
            # stop generation after the current token and, unless the model is stalled, wait until
            # the worker has released the model lock, so the next call does not queue behind it.
            cancel.set()
            if not timed_out:
                worker.join(timeout=self.options.stream_timeout)

    def _generate_kwargs(self, loaded: LoadedModel, gen: dict[str, Any]) -> dict[str, Any]:
        temperature = float(gen.get("temperature", self.options.temperature))
        top_p = gen.get("top_p", self.options.top_p)
        kwargs: dict[str, Any] = {"max_new_tokens": int(gen.get("max_tokens", self.options.max_tokens))}
        if temperature == 0:
            kwargs["do_sample"] = False
        else:
            kwargs.update(do_sample=True, temperature=temperature)
            if top_p is not None:
                kwargs["top_p"] = float(top_p)
        stops = requested_stops(gen)
        if stops:
            # generate stops once a stop string is complete; the text is cut before it afterwards.
            kwargs.update(stop_strings=stops, tokenizer=loaded.tokenizer)
        if loaded.model.generation_config.pad_token_id is None:
            tokenizer = loaded.tokenizer
            kwargs["pad_token_id"] = (
                tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
            )
        return kwargs


class _GenerateWorker(threading.Thread):
    """Runs one ``generate`` holding the model lock; its exception is kept for the consumer to raise."""

    def __init__(
        self, loaded: LoadedModel, kwargs: dict[str, Any], seed: Any, cancel: threading.Event, streamer: Any
    ) -> None:
        super().__init__(name="lawluo-generate", daemon=True)
        self.loaded, self.kwargs, self.seed, self.cancel, self.streamer = (
            loaded,
            kwargs,
            seed,
            cancel,
            streamer,
        )
        self.generating = threading.Event()
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            while not self.loaded.lock.acquire(timeout=0.05):
                if self.cancel.is_set():
                    return
            try:
                if self.cancel.is_set():
                    return
                self.generating.set()
                if self.seed is not None:
                    import torch

                    torch.manual_seed(int(self.seed))
                self.loaded.model.generate(**self.kwargs)
            finally:
                self.loaded.lock.release()
        except BaseException as exc:  # handed to the consumer, which re-raises it
            self.error = exc
        finally:
            # Wake the consumer even if generate failed before the streamer's end() (a second stop
            # signal after end() is never read).
            self.streamer.text_queue.put(self.streamer.stop_signal)


def _event_stopping_criteria(event: threading.Event) -> Any:
    """A ``StoppingCriteria`` that ends generation once ``event`` is set."""
    import torch
    from transformers import StoppingCriteria

    class EventStoppingCriteria(StoppingCriteria):
        def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
            return torch.full(
                (input_ids.shape[0],), event.is_set(), dtype=torch.bool, device=input_ids.device
            )

    return EventStoppingCriteria()
