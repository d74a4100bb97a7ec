"""The judge-call cache: a repeated call is read from disk, keyed by model, messages and options;
errors are never cached; threads and a second process share it."""

from __future__ import annotations

import subprocess
import sys
import threading

import pytest

from lawluo.llm import RateLimited
from lawluo.llm.answer import ChatAnswer, Finish
from lawluo.metrics.cache import CachedBackend, JudgeCache
from tests.fakes.scripted_backend import ScriptedBackend

from .conftest import ROOT

ASK = [{"role": "user", "content": "这个回答好吗？"}]


def counting_backend():
    return ScriptedBackend(responder=lambda messages: f"answer {len(messages)} {messages[-1]['content']}")


def test_a_repeated_call_is_answered_from_disk_even_after_a_restart(tmp_path):
    backend = counting_backend()
    cached = CachedBackend(backend, JudgeCache(tmp_path / "c.sqlite"))
    first = cached.chat(ASK, temperature=0)
    assert cached.chat(ASK, temperature=0) == first
    assert len(backend.calls) == 1
    reopened = CachedBackend(backend, JudgeCache(tmp_path / "c.sqlite"))
    assert reopened.chat(ASK, temperature=0) == first and len(backend.calls) == 1
    assert (reopened.cache.hits, reopened.cache.misses) == (1, 0)


@pytest.mark.parametrize(
    "change",
    [
        lambda: ([{"role": "user", "content": "另一个问题"}], {"temperature": 0}),
        lambda: (ASK, {"temperature": 0.7}),
        lambda: ([{"role": "system", "content": "你是法官"}, *ASK], {"temperature": 0}),
    ],
)
def test_different_messages_or_options_are_different_calls(tmp_path, change):
    backend = counting_backend()
    cached = CachedBackend(backend, JudgeCache(tmp_path / "c.sqlite"))
    cached.chat(ASK, temperature=0)
    messages, options = change()
    cached.chat(messages, **options)
    assert len(backend.calls) == 2


def test_a_different_model_is_a_different_call(tmp_path):
    cache = JudgeCache(tmp_path / "c.sqlite")
    a, b = counting_backend(), counting_backend()
    b.describe = lambda: "openai · another-model @ http://x"
    CachedBackend(a, cache).chat(ASK)
    CachedBackend(b, cache).chat(ASK)
    assert len(a.calls) == len(b.calls) == 1


def test_errors_are_not_cached(tmp_path):
    backend = ScriptedBackend(RateLimited("slow down"), "好")
    cached = CachedBackend(backend, JudgeCache(tmp_path / "c.sqlite"))
    with pytest.raises(RateLimited):
        cached.chat(ASK)
    assert cached.chat(ASK) == "好" and cached.chat(ASK) == "好"
    assert len(backend.calls) == 2


def test_an_answer_cut_at_max_tokens_is_not_cached(tmp_path):
    backend = ScriptedBackend(ChatAnswer('{"score": ', Finish("length", 4)), '{"score": 5}')
    cached = CachedBackend(backend, JudgeCache(tmp_path / "c.sqlite"))
    assert cached.chat(ASK) == '{"score": ' and cached.chat(ASK) == '{"score": 5}'
    assert cached.chat(ASK) == '{"score": 5}' and len(backend.calls) == 2  # the whole one is kept


def test_structured_output_retries_are_cached_too(tmp_path):
    backend = ScriptedBackend("不是 JSON", '{"score": 5}')
    cached = CachedBackend(backend, JudgeCache(tmp_path / "c.sqlite"))
    assert cached.chat_json(ASK, dict) == {"score": 5}
    again = CachedBackend(ScriptedBackend(), JudgeCache(tmp_path / "c.sqlite"))  # a script with no replies
    assert again.chat_json(ASK, dict) == {"score": 5}


def test_threads_and_another_process_share_the_cache(tmp_path):
    path = tmp_path / "c.sqlite"
    cached = CachedBackend(counting_backend(), JudgeCache(path))
    threads = [
        threading.Thread(target=lambda i=i: cached.chat([{"role": "user", "content": f"问题{i % 20}"}]))
        for i in range(80)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(cached.cache) == 20
    script = (
        "import sys; from lawluo.metrics.cache import JudgeCache;"
        "from lawluo.metrics.cache import CachedBackend; from tests.fakes.scripted_backend import ScriptedBackend;"
        f"c = CachedBackend(ScriptedBackend(), JudgeCache({str(path)!r}));"
        "print(c.chat([{'role': 'user', 'content': '问题7'}]))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "answer 1 问题7"
