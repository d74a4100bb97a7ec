"""ZeroGPU (``lawluo/llm/zerogpu.py``): the ``transformers`` backend's generation inside ``spaces.GPU``.

Offline, on a tiny random chat model built in the test. A stand-in ``spaces`` module, put in
``sys.modules`` by the test, records each ``GPU(duration=…)`` and every call of a decorated function,
and pickles what crosses as spaces' worker process would (the arguments, the result, each yielded
item). The last test uses the real ``spaces`` package when it is installed (requirements-dev.txt): off
ZeroGPU hardware its decorator returns the function itself.
"""

from __future__ import annotations

import functools
import importlib.abc
import inspect
import pickle
import sys
import textwrap
import types

import pytest

from lawluo.config import ConfigError, load_settings
from lawluo.llm.errors import ModelUnavailable, RateLimited
from lawluo.llm.options import TransformersOptions
from lawluo.llm.transformers_backend import MODEL_CACHE, TransformersBackend, clear_model_cache
from lawluo.llm.zerogpu import SPACES_REQUIREMENT, decide

from .conftest import ROOT
from .fakes.tiny_lm import save_tiny_lm

pytestmark = pytest.mark.slow  # 4 s of the suite on 2 cores (4 s or more: left out of the inner loop)

pytest.importorskip("torch")

ASK = [
    {"role": "system", "content": "你是一名中国律师。"},
    {"role": "user", "content": "我的房东不退押金，我该怎么办？"},
]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return str(save_tiny_lm(tmp_path_factory.mktemp("tiny_lm") / "lm"))


@pytest.fixture(autouse=True, scope="module")
def _empty_cache_after_module():
    yield
    clear_model_cache()


@pytest.fixture(autouse=True)
def _no_space(monkeypatch):
    """Every test starts off a Space; the ones that need it set SYSTEM themselves."""
    for name in ("SYSTEM", "SPACES_ZERO_GPU"):
        monkeypatch.delenv(name, raising=False)


def backend(tiny, **options) -> TransformersBackend:
    return TransformersBackend(
        TransformersOptions(**{"model": tiny, "temperature": 0, "max_tokens": 16, **options})
    )


def stand_in_spaces(refuse: Exception | None = None) -> types.ModuleType:
    """A ``spaces`` module whose ``GPU(duration=…)`` records ``(function name, duration)`` in ``decorated``
    and whose wrappers record each call in ``calls``, pickling what crosses; ``refuse``: raised by every
    call instead, as spaces raises the scheduler's refusals."""
    module = types.ModuleType("spaces")
    module.decorated, module.calls = [], []

    def crossed(value):
        return pickle.loads(pickle.dumps(value))

    def decorate(fn, duration):
        module.decorated.append((fn.__name__, duration))

        def enter(args, kwargs):
            module.calls.append(fn.__name__)
            if refuse is not None:
                raise refuse
            return crossed((args, kwargs))

        if inspect.isgeneratorfunction(fn):

            @functools.wraps(fn)
            def generator_wrapper(*args, **kwargs):
                args, kwargs = enter(args, kwargs)
                for item in fn(*args, **kwargs):
                    yield crossed(item)

            return generator_wrapper

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            args, kwargs = enter(args, kwargs)
            return crossed(fn(*args, **kwargs))

        return wrapper

    def GPU(task=None, *, duration=None, size=None):  # noqa: N802 (spaces' name)
        return functools.partial(decorate, duration=duration) if task is None else decorate(task, duration)

    module.GPU = GPU
    return module


class LookupRecorder(importlib.abc.MetaPathFinder):
    """A finder first on ``sys.meta_path`` that records every search for ``spaces`` and finds nothing."""

    def __init__(self) -> None:
        self.names: list[str] = []

    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] == "spaces":
            self.names.append(name)
        return None


@pytest.fixture
def expected(tiny):
    """The greedy answer generated in this process, without ZeroGPU."""
    return str(backend(tiny, zerogpu=False).chat(ASK))


# -- on a Space -----------------------------------------------------------------------------------------
def test_on_a_space_generation_runs_inside_spaces_gpu_with_the_configured_duration(
    tiny, expected, monkeypatch
):
    spaces = stand_in_spaces()
    monkeypatch.setitem(sys.modules, "spaces", spaces)
    monkeypatch.setenv("SYSTEM", "spaces")
    clear_model_cache()
    llm = backend(tiny, zerogpu_duration_s=42)
    assert llm.zerogpu.on and "on a Space" in llm.zerogpu.reason
    assert spaces.decorated == [("_answer_on_device", 42), ("_pieces_on_device", 42)]
    assert len(MODEL_CACHE) == 1 and spaces.calls == []  # loaded when created, before any call

    answer = llm.chat(ASK)
    assert answer == expected and answer.finish is not None
    assert spaces.calls == ["_answer_on_device"]
    stream = llm.stream(ASK)
    assert "".join(stream) == expected and stream.finish == answer.finish
    assert spaces.calls == ["_answer_on_device", "_pieces_on_device"]
    assert len(spaces.decorated) == 2  # decorated once, when created
    assert llm.setup_notes()["zerogpu"].startswith("spaces.GPU(duration=42); zerogpu auto: on a Space")


def test_an_error_on_the_gpu_keeps_its_message_and_a_closed_stream_frees_the_model(tiny, monkeypatch):
    monkeypatch.setitem(sys.modules, "spaces", stand_in_spaces())
    monkeypatch.setenv("SYSTEM", "spaces")
    llm = backend(tiny, max_tokens=200)
    loaded = llm.load()
    stream = llm.stream(ASK)
    assert next(stream)
    stream.close()
    assert not loaded.lock.locked()

    def failing_generate(**kwargs):
        raise RuntimeError("CUDA out of memory (simulated)")

    monkeypatch.setattr(loaded.model, "generate", failing_generate)
    with pytest.raises(RuntimeError, match="simulated"):
        llm.chat(ASK)
    with pytest.raises(RuntimeError, match="simulated"):
        list(llm.stream(ASK))


def test_a_spent_zerogpu_quota_is_a_rate_limit_with_the_schedulers_message(tiny, monkeypatch):
    import gradio as gr

    refusal = gr.Error(
        "You have exceeded your free ZeroGPU quota (60s requested vs. 12s left).",
        title="ZeroGPU quota exceeded",
    )
    monkeypatch.setitem(sys.modules, "spaces", stand_in_spaces(refuse=refusal))
    monkeypatch.setenv("SYSTEM", "spaces")
    llm = backend(tiny)
    with pytest.raises(RateLimited, match=r"ZeroGPU quota exceeded: .*60s requested vs\. 12s left"):
        llm.chat(ASK)
    with pytest.raises(RateLimited, match="quota"):
        list(llm.stream(ASK))


def test_a_model_that_cannot_load_at_start_up_leaves_the_app_starting_and_says_why(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "spaces", stand_in_spaces())
    monkeypatch.setenv("SYSTEM", "spaces")
    (tmp_path / "lm").mkdir()  # not a save_pretrained folder
    llm = backend(str(tmp_path / "lm"))
    reason = llm.unavailable_reason()
    assert reason.startswith(f"cannot load model {tmp_path / 'lm'}: ") and reason.endswith(
        "restart it after the fix)"
    )
    with pytest.raises(ModelUnavailable, match="restart it after the fix"):
        llm.chat(ASK)


# -- elsewhere ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("system", "option"), [(None, None), ("spaces", False), (None, False)])
def test_off_a_space_or_switched_off_spaces_is_never_looked_up(tiny, expected, monkeypatch, system, option):
    recorder = LookupRecorder()
    monkeypatch.setattr(sys, "meta_path", [recorder, *sys.meta_path])
    for name in [m for m in sys.modules if m.partition(".")[0] == "spaces"]:
        monkeypatch.delitem(sys.modules, name)
    if system:
        monkeypatch.setenv("SYSTEM", system)
    llm = backend(tiny, zerogpu=option)
    assert not llm.zerogpu.on
    assert llm._generate_answer == llm._answer_on_device and llm._generate_pieces == llm._pieces_on_device
    assert llm.chat(ASK) == expected and "".join(llm.stream(ASK)) == expected
    assert recorder.names == [] and "spaces" not in sys.modules


def test_off_a_space_a_stand_in_spaces_is_never_called(tiny, expected, monkeypatch):
    spaces = stand_in_spaces()
    monkeypatch.setitem(sys.modules, "spaces", spaces)
    llm = backend(tiny)
    assert llm.chat(ASK) == expected and "".join(llm.stream(ASK)) == expected
    assert spaces.decorated == [] and spaces.calls == []


def test_a_space_without_the_spaces_package_or_on_cpu_stays_off(monkeypatch):
    monkeypatch.setitem(sys.modules, "spaces", None)  # import spaces → ImportError
    missing = decide(None, environ={"SYSTEM": "spaces"})
    assert not missing.on and missing.reason.endswith(f"not installed ({SPACES_REQUIREMENT})")
    monkeypatch.setitem(sys.modules, "spaces", stand_in_spaces())
    assert decide(None, environ={"SYSTEM": "spaces"}).on
    assert not decide(None, "cpu", environ={"SYSTEM": "spaces"}).on


# -- settings -------------------------------------------------------------------------------------------
def test_zerogpu_on_without_the_spaces_package_fails_when_the_settings_load(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "spaces", None)
    path = tmp_path / "lawluo.yaml"
    path.write_text(
        textwrap.dedent(
            """\
            models:
              lawyer:
                backend: transformers
                model: Qwen/Qwen2.5-7B-Instruct
                zerogpu: on
            """
        ),
        encoding="utf-8",
    )
    with pytest.raises(
        ConfigError, match=rf"models\.lawyer: zerogpu: on needs the spaces package.*{SPACES_REQUIREMENT}"
    ):
        load_settings(path, environ={})
    with pytest.raises(ConfigError, match="zerogpu: on needs the spaces package"):
        load_settings(
            environ={
                "LAWLUO_LAWYER_BACKEND": "transformers",
                "LAWLUO_LAWYER_MODEL": "m",
                "LAWLUO_LAWYER_ZEROGPU": "on",
            }
        )


def test_zerogpu_options_are_checked(monkeypatch):
    monkeypatch.setitem(sys.modules, "spaces", stand_in_spaces())
    assert TransformersOptions(model="m", zerogpu=True).zerogpu_duration_s == 60
    with pytest.raises(ValueError, match="with device: cpu set zerogpu: off"):
        TransformersOptions(model="m", zerogpu=True, device="cpu")
    with pytest.raises(ValueError, match="zerogpu_duration_s 0 must be at least 1"):
        TransformersOptions(model="m", zerogpu_duration_s=0)


def test_the_space_zerogpu_config_runs_the_writing_roles_on_one_qwen_model():
    settings = load_settings(ROOT / "configs" / "space-zerogpu.yaml", environ={})
    roles = dict(settings.models.items())
    for role in ("lawyer", "clarifier", "secretary"):
        config = roles[role]
        assert config.backend == "transformers"
        assert config.options.model.startswith("Qwen/") and config.options.zerogpu is None


# -- the real package -----------------------------------------------------------------------------------
@pytest.fixture
def real_spaces(monkeypatch):
    """The installed ``spaces`` package, imported for this test only (skipped when it is not installed)."""
    before = {name for name in sys.modules if name.partition(".")[0] == "spaces"}
    module = pytest.importorskip("spaces")
    yield module
    for name in [m for m in sys.modules if m.partition(".")[0] == "spaces" and m not in before]:
        del sys.modules[name]


def test_the_real_spaces_decorator_does_nothing_off_zerogpu_hardware(
    tiny, expected, monkeypatch, real_spaces
):
    monkeypatch.setenv("SYSTEM", "spaces")
    llm = backend(tiny, zerogpu_duration_s=30)
    assert llm.zerogpu.on and "not ZeroGPU hardware" in llm.zerogpu.reason
    assert llm._generate_answer == llm._answer_on_device  # spaces.GPU(duration=30)(fn) is fn
    assert llm._generate_pieces == llm._pieces_on_device
    assert llm.chat(ASK) == expected and "".join(llm.stream(ASK)) == expected
