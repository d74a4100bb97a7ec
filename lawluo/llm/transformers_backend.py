"""The ``transformers`` backend: a Hugging Face causal LM run in this process, optionally with a PEFT
(LoRA) adapter on top and optionally quantized to 4 or 8 bits with bitsandbytes on a CUDA GPU.

Importing this module or creating a backend imports neither torch nor transformers: the model loads
on the first call (or on :meth:`TransformersBackend.load`), once per process for the same weights, in
the :class:`ModelCache`. Generation on one loaded model is serialised by that model's lock (one
model, one GPU); :attr:`TransformersOptions.concurrency` only bounds how many calls may wait for it.

The weights may come from a GGUF file (``gguf_file``, dequantised by transformers). Prompts are built
by the chat template (``apply_chat_template``): the tokenizer's, or ``chat_template`` from the settings
for a model without one; a template that refuses a system message gets it merged into the first user
message instead. ``generate`` stops at the model's end-of-sequence token and at the template's
end-of-turn token (``<end_of_turn>``, ``<|im_end|>``, …; see :func:`~.local_prompting.chat_format`);
an answer that ran to ``max_tokens`` comes back marked as cut (:mod:`.answer`). ``temperature: 0``
decodes greedily. A stream runs ``generate`` in a worker thread feeding a ``TextIteratorStreamer``;
closing the stream early stops generation after the current token.

On a Hugging Face Space with ZeroGPU hardware (``zerogpu``, see :mod:`.zerogpu`) the two functions that
do the GPU work, :meth:`TransformersBackend._answer_on_device` and the generator
:meth:`TransformersBackend._pieces_on_device`, are wrapped in ``spaces.GPU(duration=zerogpu_duration_s)``
when the backend is created, and the model is loaded then too (before the app launches); everywhere
else the wrapping is the identity and the model loads on the first call.

Reference: Hugging Face transformers, "Chat templates" and "Text generation strategies"
(``TextIteratorStreamer``, ``StoppingCriteria``, ``stop_strings``); PEFT, ``PeftModel.from_pretrained``.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Generator, Iterator
from typing import Any

from . import zerogpu
from .answer import ChatAnswer, Finish
from .base import ChatBackend
from .errors import LLMError, LLMTimeout
from .local_loading import (
    MODEL_CACHE,
    LoadedModel,
    LoadKey,
    clear_model_cache,
    gguf_location,
    load_model,
    missing_gguf_file,
    missing_local_path,
    resolve_load_key,
)
from .local_prompting import (
    ChatFormat,
    StopStringFilter,
    chat_format,
    chat_template_problem,
    cut_at_stop,
    encode_chat,
    is_template_file,
    requested_stops,
)
from .options import TransformersOptions

__all__ = ["MODEL_CACHE", "StopStringFilter", "TransformersBackend", "clear_model_cache", "encode_chat"]
logger = logging.getLogger(__name__)


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
        self._format: ChatFormat | None = None
        self._startup_error: str | None = None
        self.zerogpu = zerogpu.decide(options.zerogpu, options.device)
        zerogpu.log_decision(self.describe(), self.zerogpu, options.zerogpu_duration_s)
        # The functions that do the GPU work; spaces.GPU-wrapped on ZeroGPU, themselves elsewhere.
        self._generate_answer = zerogpu.gpu_function(
            self._answer_on_device, self.zerogpu, options.zerogpu_duration_s
        )
        self._generate_pieces = zerogpu.gpu_function(
            self._pieces_on_device, self.zerogpu, options.zerogpu_duration_s
        )
        if self.zerogpu.on:
            self._load_at_startup()

    def _load_at_startup(self) -> None:
        """Load the model and its chat format now (ZeroGPU: in the thread that imported ``spaces``, before
        launch, so the weights are packed for the lent GPU). A failure is kept as the unavailable reason:
        the app starts and says why, and the Space is restarted once the setting is fixed."""
        if self.unavailable_reason() is not None:
            return
        try:
            self.chat_format()  # loads the model first
        except LLMError as exc:
            self._startup_error = f"{exc} (the model loads at start-up on a Space: restart it after the fix)"
            logger.error("%s: %s", self.describe(), self._startup_error)

    def unavailable_reason(self) -> str | None:
        # Only what is knowable without importing torch: a local path or file that plainly does not exist.
        # Everything else (no GPU, no bitsandbytes, an unreachable hub) surfaces on the first call, or on
        # ZeroGPU at start-up, where it is kept (_startup_error).
        o = self.options
        folder, gguf_file = gguf_location(o.model, o.gguf_file)
        return (
            self._startup_error
            or (missing_gguf_file(o.model, o.gguf_file) if gguf_file else missing_local_path("model", folder))
            or missing_local_path("adapter", o.adapter)
            or chat_template_problem(o.chat_template)
        )

    def describe(self) -> str:
        gguf_file = gguf_location(self.options.model, self.options.gguf_file)[1]
        text = f"{self.name} · {gguf_file or self.options.model}"
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

    def chat_format(self) -> ChatFormat:
        """The chat template and end-of-turn tokens this backend uses (loading the model if needed).

        Kept per backend, not with the loaded model: two roles may share weights with different templates.
        """
        if self._format is None:
            o = self.options
            self._format = chat_format(
                self.load().tokenizer, o.gguf_file or o.model, o.chat_template, o.stop_tokens
            )
        return self._format

    def setup_notes(self) -> dict[str, str]:
        """The template and stop tokens chosen (and ZeroGPU, when on), for ``python -m lawluo models --ping``
        (loads the model)."""
        fmt = self.chat_format()
        template = self.options.chat_template
        if not template:
            source = "the model's own"
        else:
            source = (
                template.strip()
                if is_template_file(template)
                else f"from the settings ({len(template)} characters)"
            )
        notes = {
            "chat_template": source,
            "stop_tokens": ", ".join(fmt.stop_tokens) or "only the model's end-of-sequence token",
        }
        if self.zerogpu.on:
            notes["zerogpu"] = (
                f"spaces.GPU(duration={self.options.zerogpu_duration_s}); {self.zerogpu.reason}"
            )
        return notes

    # -- generation -----------------------------------------------------------------------------
    # _chat and _stream run in the app's process; _answer_on_device and _pieces_on_device do the GPU work
    # (self._generate_answer / self._generate_pieces: on ZeroGPU they run in spaces' worker process).
    def _chat(self, messages: list[dict[str, str]], gen: dict[str, Any]) -> str:
        with zerogpu.translated_errors():
            text, finish = zerogpu.unwrap(self._generate_answer(messages, gen))
        return ChatAnswer(text, finish)

    def _stream(
        self, messages: list[dict[str, str]], gen: dict[str, Any]
    ) -> Generator[str, None, Finish | None]:
        with zerogpu.translated_errors():
            pieces = iter(self._generate_pieces(messages, gen))
            try:
                for item in pieces:
                    if isinstance(item, Finish):
                        return item
                    yield zerogpu.unwrap(item)
            finally:
                pieces.close()  # closed early: the generation stops (on ZeroGPU, at its next piece)
        return None

    def _answer_on_device(self, messages: list[dict[str, str]], gen: dict[str, Any]) -> Any:
        """The whole answer as ``(text, Finish)``, or :class:`~.zerogpu.Failed` carrying the exception."""
        try:
            import torch

            loaded = self.load()
            inputs = self._encode(loaded, messages)
            kwargs = self._generate_kwargs(loaded, gen)
            with loaded.lock:
                if "seed" in gen:
                    torch.manual_seed(int(gen["seed"]))
                output = loaded.model.generate(**inputs, **kwargs)
            new_tokens = output[0, inputs["input_ids"].shape[1] :]
            text = loaded.tokenizer.decode(new_tokens, skip_special_tokens=True)
            text, stopped = cut_at_stop(text, self._stops(gen))
            return text, self._finish(loaded, new_tokens, kwargs["max_new_tokens"], stopped)
        except Exception as exc:
            return zerogpu.Failed(exc)

    def _pieces_on_device(self, messages: list[dict[str, str]], gen: dict[str, Any]) -> Iterator[Any]:
        """The answer's pieces, then its :class:`Finish` (if known) as the last item; an exception comes as
        a last :class:`~.zerogpu.Failed` item. Items, not a generator's return value: ``spaces`` passes on
        only what is yielded."""
        try:
            finish = yield from self._stream_on_device(messages, gen)
        except Exception as exc:
            yield zerogpu.Failed(exc)
        else:
            if finish is not None:
                yield finish

    def _encode(self, loaded: LoadedModel, messages: list[dict[str, str]]) -> Any:
        fmt = self.chat_format()
        template = fmt.template if self.options.chat_template else None  # None: the tokenizer's own
        # The model's own device: on ZeroGPU the GPU lent to this call, known only inside it.
        device = getattr(loaded.model, "device", None) or loaded.device
        return encode_chat(loaded.tokenizer, messages, template).to(device)

    def _stops(self, gen: dict[str, Any]) -> list[str]:
        """Strings an answer is cut at: the call's ``stop`` and the end-of-turn tokens, should one be decoded."""
        return requested_stops(gen) + list(self.chat_format().stop_tokens)

    def _stream_on_device(
        self, messages: list[dict[str, str]], gen: dict[str, Any]
    ) -> Generator[str, None, Finish | None]:
        from transformers import StoppingCriteriaList, TextIteratorStreamer

        loaded = self.load()
        inputs = self._encode(loaded, messages)
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
        stop_filter = StopStringFilter(self._stops(gen))
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
            if stop_filter.stopped:
                return Finish("stop", kwargs["max_new_tokens"])
            worker.join(timeout=self.options.stream_timeout)  # ``output`` is set just after the last piece
            if worker.output is None:
                return None
            new_tokens = worker.output[0, inputs["input_ids"].shape[1] :]
            return self._finish(loaded, new_tokens, kwargs["max_new_tokens"], False)
        finally:
            # Closed early (GeneratorExit at the yield), stopped by a stop string, timed out or done:
            # stop generation after the current token and, unless the model is stalled, wait until
            # the worker has released the model lock, so the next call does not queue behind it.
            cancel.set()
            if not timed_out:
                worker.join(timeout=self.options.stream_timeout)

    def _finish(self, loaded: LoadedModel, new_tokens: Any, max_new_tokens: int, stopped: bool) -> Finish:
        """``length`` when generation ran to ``max_new_tokens`` without an end token or a stop string."""
        ends = set(_end_ids(loaded)) | set(self.chat_format().stop_token_ids)
        ended = len(new_tokens) > 0 and int(new_tokens[-1]) in ends
        if stopped or ended or len(new_tokens) < max_new_tokens:
            return Finish("stop", max_new_tokens)
        logger.warning("%s: answer cut at max_tokens=%s", self.describe(), max_new_tokens)
        return Finish("length", max_new_tokens)

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
        eos = _end_ids(loaded)
        extra = [i for i in self.chat_format().stop_token_ids if i not in eos]
        if extra:  # the template's end-of-turn token is not the model's end of sequence (Gemma, base models)
            kwargs["eos_token_id"] = eos + extra
        return kwargs


def _end_ids(loaded: LoadedModel) -> list[int]:
    """The model's own end-of-sequence ids (generation config, else the tokenizer's)."""
    eos = loaded.model.generation_config.eos_token_id
    if eos is None:
        eos = loaded.tokenizer.eos_token_id
    if eos is None:
        return []
    return [int(i) for i in eos] if isinstance(eos, list | tuple) else [int(eos)]


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
        self.output: Any = None  # generate's token ids, prompt included

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
                self.output = self.loaded.model.generate(**self.kwargs)
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
