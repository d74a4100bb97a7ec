"""ZeroGPU: the ``transformers`` backend's generation inside ``spaces.GPU`` on a Hugging Face Space.

ZeroGPU hardware lends a Space a GPU only while a function decorated with ``spaces.GPU(duration=…)``
runs. :func:`decide` says whether this backend uses it (the ``zerogpu`` option; unset means: on when
``SYSTEM=spaces``, which every Space sets, and the ``spaces`` package is installed); :func:`gpu_function`
returns ``spaces.GPU(duration=d)(fn)`` when it does and ``fn`` itself otherwise, so nothing imports
``spaces`` off a Space. What the ``spaces`` package (0.51.3, read for this module) does, and what the
backend does about it:

- Importing ``spaces`` on ZeroGPU hardware (``SPACES_ZERO_GPU=true``) patches torch in the importing
  thread: ``torch.cuda.is_available()`` is true, and a tensor put on ``cuda`` (``.to("cuda")``,
  ``device_map``) stays in CPU memory, is packed to disk when Gradio launches and is copied to the GPU
  lent to a decorated call. So the backend imports ``spaces`` and loads its model when it is created
  (the app creates its models in the main thread before ``launch``), with ``device: auto`` resolving to
  ``cuda``; a function decorated after launch, or a model loaded in another thread, would miss that.
- A decorated function runs in a worker process forked from the app: its arguments and what it returns
  or yields are pickled, and an exception raised there reaches the app only as its class name. The
  backend's decorated functions take messages and options, find the model through the backend (the
  fork's copy), move the prompt to the model's device themselves, and hand back text, a
  :class:`~.answer.Finish` and any exception as plain values (:class:`Failed`).
- A generator function may be decorated: each item is sent to the app as it is yielded, and closing the
  app's side stops the worker's generator at its next item. The backend's stream is such a generator:
  ``generate`` in a thread feeding a ``TextIteratorStreamer``, both inside the worker.
- Off ZeroGPU hardware ``spaces.GPU`` returns the function itself, and every call runs in this process.
- The scheduler's refusals (quota used up, a duration above the allowed maximum, an aborted task) are
  ``gradio.Error``; :func:`translated_errors` turns them into this layer's errors, so the app shows
  their message like any other model error.

Reference: Hugging Face, "Spaces ZeroGPU" (``@spaces.GPU``, ``duration``, quotas); the ``spaces``
package, ``spaces/zero/decorator.py`` and ``spaces/zero/wrappers.py``.
"""

from __future__ import annotations

import functools
import importlib.util
import logging
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

from .errors import ModelUnavailable, RateLimited

SPACES_REQUIREMENT = "spaces==0.51.3"
DEFAULT_DURATION_S = 60  # spaces.GPU's own default
F = TypeVar("F", bound=Callable[..., Any])
logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ZeroGPUDecision:
    """Whether generation runs inside ``spaces.GPU``, and why (one line for the log and ``models --ping``)."""

    on: bool
    reason: str


@dataclass(frozen=True)
class Failed:
    """An exception handed back as a value by a decorated function, so that its message survives the
    worker process (``spaces`` reports a raised one by its class name only)."""

    error: BaseException


def spaces_installed() -> bool:
    """Whether ``import spaces`` would find a package, without importing it."""
    if "spaces" in sys.modules:
        return sys.modules["spaces"] is not None
    return importlib.util.find_spec("spaces") is not None


def decide(
    option: bool | None, device: str = "auto", environ: Mapping[str, str] | None = None
) -> ZeroGPUDecision:
    """Whether a backend with ``zerogpu: option`` and ``device`` runs its generation inside ``spaces.GPU``.

    ``True`` and ``False`` are the settings' word (whether ``spaces`` is installed is checked when they
    load); ``None`` (auto) is on when ``SYSTEM=spaces`` and the ``spaces`` package is installed.

    >>> decide(None, environ={}).reason
    'zerogpu auto: not on a Hugging Face Space (SYSTEM is not "spaces")'
    >>> decide(False, environ={"SYSTEM": "spaces"})
    ZeroGPUDecision(on=False, reason='zerogpu: off in the settings')
    """
    env = os.environ if environ is None else environ
    hardware = (
        "ZeroGPU hardware"
        if env.get("SPACES_ZERO_GPU", "").lower() in ("1", "t", "true")
        else "not ZeroGPU hardware: spaces.GPU does nothing here"
    )
    if option is False:
        return ZeroGPUDecision(False, "zerogpu: off in the settings")
    if option is True:
        return ZeroGPUDecision(True, f"zerogpu: on in the settings ({hardware})")
    if env.get("SYSTEM") != "spaces":
        return ZeroGPUDecision(False, 'zerogpu auto: not on a Hugging Face Space (SYSTEM is not "spaces")')
    if device == "cpu":
        return ZeroGPUDecision(False, "zerogpu auto: off, device is cpu")
    if not spaces_installed():
        return ZeroGPUDecision(
            False, f"zerogpu auto: on a Space, but the spaces package is not installed ({SPACES_REQUIREMENT})"
        )
    return ZeroGPUDecision(True, f"zerogpu auto: on a Space with the spaces package ({hardware})")


def gpu_function(fn: F, decision: ZeroGPUDecision, duration_s: int) -> F:
    """``spaces.GPU(duration=duration_s)(fn)`` when ``decision`` is on, else ``fn`` itself (``spaces``
    not imported). Call it before the app launches: ZeroGPU registers its functions at launch."""
    if not decision.on:
        return fn
    try:
        import spaces
    except ImportError as exc:
        raise ModelUnavailable(
            f"zerogpu is on but the spaces package cannot be imported ({exc}): pip install {SPACES_REQUIREMENT}"
        ) from exc
    return spaces.GPU(duration=duration_s)(fn)


def log_decision(what: str, decision: ZeroGPUDecision, duration_s: int) -> None:
    """Log the decision for ``what`` (a backend's description), once per process for each distinct line."""
    if decision.on:
        _log_once(f"{what}: generation inside spaces.GPU(duration={duration_s}); {decision.reason}")
    else:
        _log_once(f"{what}: generation in this process; {decision.reason}")


@functools.cache  # de-duplicates log lines for the life of the process; holds no state anyone reads
def _log_once(line: str) -> None:
    logger.info("%s", line)


def unwrap(result: Any) -> Any:
    """``result``, or the exception it carries (:class:`Failed`) raised."""
    if isinstance(result, Failed):
        raise result.error
    return result


@contextmanager
def translated_errors() -> Iterator[None]:
    """Turn a ``gradio.Error`` raised by ``spaces`` (the scheduler said no) into :class:`RateLimited`
    (quota used up: try later) or :class:`ModelUnavailable` (anything else), keeping its message."""
    try:
        yield
    except Exception as exc:
        gradio = sys.modules.get("gradio")
        if gradio is None or not isinstance(exc, gradio.Error):
            raise
        title = str(getattr(exc, "title", None) or "ZeroGPU")
        message = str(getattr(exc, "message", None) or exc)
        error = RateLimited if "quota" in f"{title} {message}".lower() else ModelUnavailable
        raise error(f"{title}: {message}") from exc
