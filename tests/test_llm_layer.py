"""The backend layer shared by every backend: messages, overrides, the no-model state, role sharing,
concurrency limits and parallel calls, and the promise that a no-model start imports no torch."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest

from lawluo.config import load_settings
from lawluo.llm import BACKENDS, LanguageModels, ModelUnavailable, create_backend, gather
from lawluo.llm.no_model import NoModel
from lawluo.llm.options import (
    AnthropicOptions,
    NoModelOptions,
    OpenAIOptions,
    RewardModelOptions,
    TransformersOptions,
)

from .conftest import ROOT
from .fakes.scripted_backend import ScriptedBackend

pytestmark = pytest.mark.slow  # 8 s of the suite on 2 cores (4 s or more: left out of the inner loop)

HELLO = [{"role": "user", "content": "你好"}]


def test_no_model_backend_raises_model_unavailable_saying_what_to_set():
    model = NoModel(NoModelOptions(), role="clarifier")
    assert not model.available
    with pytest.raises(ModelUnavailable) as caught:
        model.chat(HELLO)
    message = str(caught.value)
    assert "No language model is configured for the clarifier role" in message
    assert "LAWLUO_CLARIFIER_BACKEND=openai" in message and "--config" in message
    with pytest.raises(ModelUnavailable):
        model.stream(HELLO)
    with pytest.raises(ModelUnavailable):
        model.chat_json(HELLO, dict)


def test_an_openai_role_without_its_key_is_unavailable_before_any_request():
    settings = load_settings(
        environ={
            "LAWLUO_LAWYER_BACKEND": "openai",
            "LAWLUO_LAWYER_MODEL": "deepseek-chat",
            "LAWLUO_LAWYER_API_KEY_ENV": "DEEPSEEK_API_KEY",
        }
    )
    lawyer = LanguageModels(settings.models)["lawyer"]
    assert not lawyer.available
    assert "DEEPSEEK_API_KEY is not set" in lawyer.unavailable_reason()
    with pytest.raises(ModelUnavailable, match="DEEPSEEK_API_KEY"):
        lawyer.chat(HELLO)


@pytest.mark.parametrize(
    ("messages", "message"),
    [
        ([], "non-empty list"),
        ("你好", "non-empty list"),
        ([{"role": "client", "content": "x"}], "role 'client' is not one of system, user, assistant"),
        ([{"role": "user", "content": None}], "content must be a string"),
        (["hi"], "message 0 is a str"),
    ],
)
def test_bad_messages_are_rejected_with_the_reason(messages, message):
    with pytest.raises(ValueError, match=message):
        ScriptedBackend("x").chat(messages)


def test_unknown_generation_options_are_rejected_and_known_ones_pass_through():
    model = ScriptedBackend("a", "b")
    with pytest.raises(TypeError, match="unknown generation option.*temprature"):
        model.chat(HELLO, temprature=0)
    assert model.chat(HELLO, temperature=0, max_tokens=5, seed=None) == "a"
    assert model.calls[-1][1] == {"temperature": 0, "max_tokens": 5}  # None means "not set"


def test_roles_with_identical_settings_share_one_backend_and_others_do_not():
    env = {
        "LAWLUO_DEFAULT_BACKEND": "openai",
        "LAWLUO_DEFAULT_MODEL": "m",
        "OPENAI_API_KEY": "k",
        "LAWLUO_JUDGE_TEMPERATURE": "0",
    }
    models = LanguageModels(load_settings(environ=env).models)
    assert models["lawyer"] is models["clarifier"] is models["secretary"] is models["boss"]
    assert models["judge"] is not models["lawyer"]
    with pytest.raises(KeyError, match="no role 'receptionist'"):
        models["receptionist"]


def test_status_lists_every_role_without_contacting_anything():
    env = {
        "LAWLUO_JUDGE_BACKEND": "openai",
        "LAWLUO_JUDGE_MODEL": "gpt-4o",
        "OPENAI_API_KEY": "k",
        "LAWLUO_JUDGE_BASE_URL": "http://127.0.0.1:9/v1",
    }
    rows = {row.role: row for row in LanguageModels(load_settings(environ=env).models).status()}
    assert list(rows) == ["lawyer", "clarifier", "secretary", "judge", "boss"]
    assert rows["judge"].available and rows["judge"].description == "openai · gpt-4o"  # no server URL
    assert not rows["lawyer"].available and "lawyer role" in rows["lawyer"].reason


def test_the_concurrency_limit_caps_calls_in_flight():
    in_flight, peak, lock = 0, 0, threading.Lock()

    def slow(_messages):
        nonlocal in_flight, peak
        with lock:
            in_flight += 1
            peak = max(peak, in_flight)
        time.sleep(0.05)
        with lock:
            in_flight -= 1
        return "ok"

    model = ScriptedBackend(responder=slow, concurrency=3)
    results = gather([lambda: model.chat(HELLO) for _ in range(9)])
    assert results == ["ok"] * 9
    assert peak == 3


def test_a_stream_holds_its_slot_until_it_is_closed():
    model = ScriptedBackend("abc", "def", concurrency=1)
    stream = model.stream(HELLO)
    assert next(stream) == "a"
    finished = threading.Event()
    worker = threading.Thread(target=lambda: (model.chat(HELLO), finished.set()))
    worker.start()
    assert not finished.wait(0.1)  # the open stream holds the only slot
    stream.close()
    assert finished.wait(2)
    worker.join()


def test_gather_keeps_order_and_can_return_failures_in_place():
    def fail():
        raise ModelUnavailable("no model")

    assert gather([lambda: 1, lambda: 2, lambda: 3]) == [1, 2, 3]
    outcomes = gather([lambda: 1, fail, lambda: 3], return_exceptions=True)
    assert outcomes[0] == 1 and outcomes[2] == 3 and isinstance(outcomes[1], ModelUnavailable)
    with pytest.raises(ModelUnavailable):
        gather([lambda: 1, fail])
    assert gather([]) == []


def test_as_finished_yields_each_result_as_it_ends_and_a_caller_that_stops_waits_for_nothing():
    from contextlib import closing

    from lawluo.llm.parallel import as_finished

    release = threading.Event()

    def work(n):
        if n == 0:
            release.wait(30)  # a slow call
        if n == 3:
            raise ValueError("three")
        return n * 10

    got = []
    with closing(as_finished(work, range(5), workers=2)) as done:
        for n, future in done:
            got.append(n)
            if n == 3:
                assert isinstance(future.exception(), ValueError)
            else:
                assert future.result() == n * 10
            if len(got) == 4:
                release.set()  # the slow one ends last
    assert got == [1, 2, 3, 4, 0]

    # A caller that stops takes no further item and does not wait for the one in flight.
    gates, taken = [threading.Event() for _ in range(10)], []

    def gated(n):
        gates[n].wait(30)
        return n

    def items():
        for n in range(10):
            taken.append(n)
            yield n

    gates[0].set()
    with closing(as_finished(gated, items(), workers=1, name="stopping")) as done:
        for n, _ in done:
            if n == 2:
                break  # item 3 may be in flight, its gate shut: not waited for
            gates[n + 1].set()
    for gate in gates:
        gate.set()
    for thread in [t for t in threading.enumerate() if t.name.startswith("stopping")]:
        thread.join(10)
    assert taken in ([0, 1, 2], [0, 1, 2, 3])  # none after the one in flight, though every gate is open

    def broken():
        yield 1
        raise OSError("unreadable questions")

    with pytest.raises(OSError, match="unreadable"):
        list(as_finished(lambda n: n, broken(), workers=1))


def test_importing_lawluo_and_building_the_app_without_models_imports_no_torch():
    code = (
        "import sys, app\n"
        "from lawluo.config import load_settings\n"
        f"app.build_app(load_settings(environ={{'LAWLUO_CACHE_DIR': {os.environ['LAWLUO_CACHE_DIR']!r}}}))\n"
        "print(sorted(m for m in ('torch', 'transformers', 'peft', 'openai') if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "GRADIO_ANALYTICS_ENABLED": "False", "HOME": "/tmp"},
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "[]"


@pytest.mark.parametrize("name", sorted(BACKENDS))
def test_every_registered_backend_can_be_created_from_its_options_without_loading_anything(name):
    options = {
        "none": NoModelOptions(),
        "openai": OpenAIOptions(model="m"),
        "anthropic": AnthropicOptions(model="m"),
        "transformers": TransformersOptions(model="org/model"),
        "reward_model": RewardModelOptions(model="org/reward-model"),
    }[name]
    backend = create_backend(name, options, "lawyer", api_key="k")
    assert backend.name == name and backend.role == "lawyer"
    assert backend.describe().startswith(name)
