"""Loading local Hugging Face chat models for the ``transformers`` backend, once per process.

A :class:`LoadKey` names the weights (model or GGUF file, adapter, quantisation, resolved device and dtype,
revision);
:data:`MODEL_CACHE` loads each key once, thread-safely, and keeps it (see :class:`ModelCache` for why
this one process-wide cache exists; the ``reward_model`` backend keeps its models there too). torch,
transformers, peft and bitsandbytes are imported inside :func:`load_model`, never at module import.
Every failure is a one-line :class:`~lawluo.llm.errors.ModelUnavailable` saying what to change.

A GGUF file (``gguf_file``, or ``model:`` naming a ``.gguf`` file) is read by transformers itself
(``from_pretrained(folder, gguf_file=name)``), which dequantises its weights to ``dtype`` and rebuilds
the tokenizer from the file's metadata; it needs the ``gguf`` package (:data:`GGUF_REQUIREMENT`).

Reference: transformers ``AutoModelForCausalLM.from_pretrained`` / ``BitsAndBytesConfig`` and "GGUF and
interaction with Transformers"; PEFT ``PeftModel.from_pretrained``.
"""

from __future__ import annotations

import gc
import importlib.util
import os
import sys
import threading
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from .errors import ModelUnavailable
from .options import TransformersOptions

BITSANDBYTES_REQUIREMENT = "bitsandbytes==0.50.2"
GGUF_REQUIREMENT = "gguf==0.19.0"  # transformers reads GGUF metadata and dequantises with it
K = TypeVar("K", bound=Hashable)
HUB_HINT = (
    "a hub id needs network access, or HF_HUB_OFFLINE=1 with the model already in the local "
    "Hugging Face cache; a local path must be a directory written by save_pretrained"
)


# -- loading ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class LoadKey:
    """Everything that decides which weights end up in memory; device and dtype already resolved.

    For a GGUF file ``model`` is the folder or hub repo that holds it and ``gguf_file`` its name there.
    """

    model: str
    adapter: str | None
    quantization: str
    device: str
    dtype: str
    revision: str | None
    trust_remote_code: bool
    gguf_file: str | None = None


@dataclass
class LoadedModel:
    """A tokenizer and model in memory, and the lock every ``generate`` on the model holds."""

    tokenizer: Any
    model: Any
    device: str
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)


class ModelCache:
    """The models loaded in this process, each loaded at most once, by at most one thread at a time.

    This is the one process-wide mutable object of the language-model layer, on purpose: what it
    guards, GPU and CPU memory, is itself process-wide. Several roles (every domain's lawyer, the
    judge) and every reload of the settings create their own backend objects, and a 7B model (about
    15 GB in bfloat16) must never be loaded twice for them. Entries are keyed by :class:`LoadKey`; a
    failed load leaves nothing behind, so the next call tries again (the user may have fixed the
    path or the network). Tests empty it with :func:`clear_model_cache`.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()  # guards the dict, never held while loading
        self._slots: dict[Hashable, _Slot] = {}

    def get(self, key: K, load: Callable[[K], LoadedModel]) -> LoadedModel:
        """The model for ``key``, calling ``load(key)`` if no thread has loaded it yet.

        ``key`` is a :class:`LoadKey` for chat models; other local models (the reward model of
        :mod:`lawluo.llm.reward_backend`) use their own frozen key class, so keys never collide.
        """
        with self._lock:
            slot = self._slots.setdefault(key, _Slot())
        # One lock per key: threads asking for the same model wait for one load; a load of another
        # model, or a call on a model already loaded, does not wait.
        with slot.lock:
            if slot.loaded is None:
                slot.loaded = load(key)
            return slot.loaded

    def clear(self) -> None:
        """Forget every loaded model (memory is freed once no backend call still holds one)."""
        with self._lock:
            self._slots.clear()
        gc.collect()
        torch = sys.modules.get("torch")
        if torch is not None and torch.cuda.is_available():
            torch.cuda.empty_cache()

    def __len__(self) -> int:
        with self._lock:
            return sum(slot.loaded is not None for slot in self._slots.values())


@dataclass
class _Slot:
    lock: threading.Lock = field(default_factory=threading.Lock)
    loaded: LoadedModel | None = None


MODEL_CACHE = ModelCache()


def clear_model_cache() -> None:
    """Unload every model this backend loaded in this process (for tests, and to free GPU memory)."""
    MODEL_CACHE.clear()


def resolve_load_key(options: TransformersOptions) -> LoadKey:
    """The :class:`LoadKey` for ``options`` on this machine, or ``ModelUnavailable`` saying why not.

    Resolves ``device: auto`` (the GPU if torch sees one, else the CPU) and ``dtype: auto``
    (bfloat16 on a GPU that supports it, else float16 there; float32 on the CPU), and checks that
    4/8-bit quantization is possible here (a CUDA GPU and bitsandbytes).
    """
    import torch

    if options.quantization != "none":
        if not torch.cuda.is_available():
            raise ModelUnavailable(
                f"quantization {options.quantization} needs a CUDA GPU with bitsandbytes, and torch sees no "
                "GPU here; set quantization: none (or run on a GPU)"
            )
        if importlib.util.find_spec("bitsandbytes") is None:
            raise ModelUnavailable(
                f"quantization {options.quantization} needs bitsandbytes, which is not installed: "
                f"pip install {BITSANDBYTES_REQUIREMENT} (see requirements-gpu.txt), or set quantization: none"
            )
    device, dtype = resolve_device_and_dtype(options.device, options.dtype)
    model, gguf_file = gguf_location(options.model, options.gguf_file)
    return LoadKey(
        model=model,
        adapter=_expand(options.adapter) if options.adapter else None,
        quantization=options.quantization,
        device=device,
        dtype=dtype,
        revision=options.revision,
        trust_remote_code=options.trust_remote_code,
        gguf_file=gguf_file,
    )


def gguf_location(model: str, gguf_file: str | None) -> tuple[str, str | None]:
    """Where ``from_pretrained`` reads (a folder or hub repo) and the GGUF file's name there, if any.

    >>> gguf_location("", "/models/gemma-3-270m.gguf")
    ('/models', 'gemma-3-270m.gguf')
    >>> gguf_location("/models/gemma-3-270m.gguf", None)
    ('/models', 'gemma-3-270m.gguf')
    >>> gguf_location("unsloth/gemma-3-270m-it-GGUF", "gemma-3-270m-it-Q8_0.gguf")
    ('unsloth/gemma-3-270m-it-GGUF', 'gemma-3-270m-it-Q8_0.gguf')
    """
    if gguf_file and not model.strip():
        path = gguf_file
    elif not gguf_file and model.lower().endswith(".gguf"):
        path = model
    else:
        return _expand(model), gguf_file
    folder, name = os.path.split(_expand(path))
    return folder or ".", name


def missing_gguf_file(model: str, gguf_file: str | None) -> str | None:
    """A message if the GGUF file named by ``model``/``gguf_file`` should be local and is not there."""
    if not gguf_file and not model.lower().endswith(".gguf"):
        return None
    folder, name = gguf_location(model, gguf_file)
    if not (_looks_local(folder) or folder == "." or os.path.isdir(folder)):
        return None  # a hub repo: found (or not) on the first call
    if os.path.isfile(os.path.join(folder, name)):
        return None
    try:
        present = sorted(f for f in os.listdir(folder) if f.lower().endswith(".gguf"))[:5]
    except OSError:
        return f"GGUF file {os.path.join(folder, name)} does not exist: its folder {folder} is missing"
    there = f"the .gguf files there: {', '.join(present)}" if present else "there is no .gguf file there"
    return (
        f"GGUF file {name} is not in {folder} ({there}); set gguf_file: to one of them, or to the file's path"
    )


def resolve_device_and_dtype(device: str, dtype: str) -> tuple[str, str]:
    """``device`` and ``dtype`` settings resolved on this machine, or ``ModelUnavailable`` saying why not.

    ``auto`` device: the GPU if torch sees one, else the CPU; ``auto`` dtype: bfloat16 on a GPU that
    supports it, else float16 there; float32 on the CPU.
    """
    import torch

    resolved = _resolve_device(device)
    if dtype == "auto":
        if resolved == "cpu":
            dtype = "float32"
        else:
            dtype = "bfloat16" if torch.cuda.is_bf16_supported() else "float16"
    return resolved, dtype


def _resolve_device(requested: str) -> str:
    import torch

    if requested == "cpu":
        return "cpu"
    if not torch.cuda.is_available():
        if requested == "auto":
            return "cpu"
        build = "a CPU-only build" if torch.version.cuda is None else f"built for CUDA {torch.version.cuda}"
        raise ModelUnavailable(
            f"device {requested} asks for a CUDA GPU, but torch {torch.__version__} ({build}) sees none; "
            "set device: auto or cpu, or install the CUDA build of torch on a machine with a GPU"
        )
    if requested in ("auto", "cuda"):
        return f"cuda:{torch.cuda.current_device()}"
    index_text = requested.partition(":")[2]
    count = torch.cuda.device_count()
    if not index_text.isdigit() or int(index_text) >= count:
        raise ModelUnavailable(
            f"device {requested} does not exist: torch sees {count} GPU(s), cuda:0 to cuda:{count - 1}"
        )
    return f"cuda:{int(index_text)}"


def load_model(key: LoadKey) -> LoadedModel:
    """Load the tokenizer, the model and the adapter named by ``key`` (no caching; see :class:`ModelCache`).

    The chat template is not checked here: a backend may bring its own (:mod:`.local_prompting`).
    """
    missing = missing_gguf_file(key.model, key.gguf_file) if key.gguf_file else None
    for what, name in (("model", key.model), ("adapter", key.adapter)):
        missing = missing or missing_local_path(what, name)
    if missing:
        raise ModelUnavailable(missing)
    if key.gguf_file and importlib.util.find_spec("gguf") is None:
        raise ModelUnavailable(
            f"reading the GGUF file {key.gguf_file} needs the gguf package, which is not installed: "
            f"pip install {GGUF_REQUIREMENT} (see requirements.txt)"
        )
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    common: dict[str, Any] = {"revision": key.revision, "trust_remote_code": key.trust_remote_code}
    if key.gguf_file:
        common["gguf_file"] = key.gguf_file
    what = f"GGUF file {key.gguf_file} in" if key.gguf_file else "model"
    try:
        tokenizer = AutoTokenizer.from_pretrained(key.model, **common)
    except Exception as exc:
        raise ModelUnavailable(load_failure_message(what, key.model, exc)) from exc
    kwargs: dict[str, Any] = {"dtype": getattr(torch, key.dtype), "device_map": {"": key.device}, **common}
    if key.quantization != "none":
        kwargs["quantization_config"] = _bitsandbytes_config(key.quantization)
    try:
        model = AutoModelForCausalLM.from_pretrained(key.model, **kwargs)
    except Exception as exc:
        raise ModelUnavailable(load_failure_message(what, key.model, exc)) from exc
    if key.adapter:
        if importlib.util.find_spec("peft") is None:
            raise ModelUnavailable(
                f"adapter {key.adapter} needs peft, which is not installed: pip install peft"
            )
        from peft import PeftModel

        try:
            model = PeftModel.from_pretrained(model, key.adapter)
        except Exception as exc:
            raise ModelUnavailable(load_failure_message("adapter", key.adapter, exc)) from exc
    model.eval()
    return LoadedModel(tokenizer=tokenizer, model=model, device=key.device)


def _bitsandbytes_config(quantization: str) -> Any:
    import torch
    from transformers import BitsAndBytesConfig

    if quantization == "8bit":
        return BitsAndBytesConfig(load_in_8bit=True)
    return BitsAndBytesConfig(
        load_in_4bit=True,
        bnb_4bit_quant_type="nf4",
        # bfloat16 as QLoRA computes; float16 on GPUs without bfloat16 (T4, V100).
        bnb_4bit_compute_dtype=torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16,
        bnb_4bit_use_double_quant=True,
    )


def _expand(name: str) -> str:
    return os.path.expanduser(name) if name.startswith("~") else name


def _looks_local(name: str) -> bool:
    return name.startswith(("/", "./", "../", "~"))


def missing_local_path(what: str, name: str | None) -> str | None:
    """A message if ``name`` is obviously a local path (``/…``, ``./…``, ``../…``, ``~…``) that does not exist."""
    if name and _looks_local(name) and not os.path.exists(_expand(name)):
        return f"{what} directory {name} does not exist; set {what}: to a directory written by save_pretrained or to a hub id"
    return None


def load_failure_message(what: str, name: str, exc: BaseException) -> str:
    reason = " ".join(str(exc).split()) or type(exc).__name__
    if len(reason) > 400:
        reason = reason[:400] + "…"
    if what.startswith("GGUF") and "architecture" in reason and "not supported" in reason:
        hint = (
            "transformers cannot read this architecture from GGUF; use the model's safetensors weights "
            "(a hub id or a save_pretrained folder), or serve the GGUF with llama.cpp's server and the openai backend"
        )
    elif not _looks_local(name) and name != ".":
        hint = HUB_HINT
    elif what.startswith("GGUF"):
        hint = "check that the file is a complete GGUF model"
    else:
        hint = "check that the directory was written by save_pretrained"
    return f"cannot load {what} {name}: {type(exc).__name__}: {reason} ({hint})"
