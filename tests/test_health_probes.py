"""``/healthz`` reports what is really usable (:mod:`lawluo.ui.health`): the annotation store by a real
write (a full disk answers 503 ``disk_full``, where a folder that ``os.access`` calls writable used to
answer 200), the models by a ping when asked (``?models=1``) — both throttled, so that the public route
cannot be used to hammer the disk or spend a model's tokens — and never a URL, key or model name."""

from __future__ import annotations

import errno
import json
import os
import threading
import time

import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

from lawluo.config import Settings, load_settings
from lawluo.ui import health
from lawluo.ui.health import (
    HEALTH_PATH,
    PROBE_FILE,
    HealthProbe,
    Throttled,
    annotation_store_check,
    health_route,
)

from .fakes.disks import file_size_limit, fill, tmpfs
from .fakes.openai_server import FakeOpenAIServer

SECRET_KEY = "sk-health-probe-secret"
MODEL_NAME = "secret-finetune-7b"


def client_for(settings: Settings) -> TestClient:
    return TestClient(Starlette(routes=[health_route(settings)]))


# -- the annotation store: a real write ---------------------------------------------------------------


def test_a_full_disk_is_reported_as_an_annotation_store_that_cannot_write(tmp_path):
    with tmpfs(tmp_path / "disk", size="64k") as disk:
        client = client_for(Settings(assets_dir=tmp_path, annotation_dir=disk))
        assert client.get(HEALTH_PATH).json()["annotation_store"] == {"writable": True}
        filler = fill(disk, leave=0)
        assert os.access(disk, os.W_OK)  # what the old check looked at: still "writable"
        response = client_for(Settings(assets_dir=tmp_path, annotation_dir=disk)).get(HEALTH_PATH)
        assert response.status_code == 503
        body = response.json()
        assert body["annotation_store"] == {"writable": False, "reason": "disk_full"}
        assert "annotation store not writable (disk_full) 标注库不可写" in body["problems"]
        assert str(disk) not in json.dumps(body)
        filler.unlink()  # an admin frees space: writable again, and no probe file left behind
        assert annotation_store_check(disk) == {"writable": True}
        assert sorted(p.name for p in disk.iterdir()) == []


def test_a_read_only_disk_is_reported(tmp_path):
    with tmpfs(tmp_path / "ro", size="64k", readonly=True) as disk:
        assert annotation_store_check(disk) == {"writable": False, "reason": "read_only"}


@pytest.mark.parametrize(
    ("call", "code", "reason"),
    [
        ("fsync", errno.ENOSPC, "disk_full"),  # delayed allocation: the disk says no only at fsync
        ("write", errno.ENOSPC, "disk_full"),
        ("write", errno.EDQUOT, "disk_full"),
        ("open", errno.EROFS, "read_only"),
        ("fsync", errno.EIO, "io_error"),
    ],
)
def test_a_refused_write_is_reported_with_its_reason_on_any_machine(
    tmp_path, monkeypatch, call, code, reason
):
    original = getattr(os, call)

    def refuse(target, *args, **kwargs):
        if call == "open" and not str(target).endswith(PROBE_FILE):
            return original(target, *args, **kwargs)
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(os, call, refuse)
    try:
        assert annotation_store_check(tmp_path) == {"writable": False, "reason": reason}
    finally:
        monkeypatch.undo()
    assert not (tmp_path / PROBE_FILE).exists()  # deleted after a refusal too


def test_a_short_write_counts_as_a_full_disk(tmp_path, monkeypatch):
    monkeypatch.setattr(os, "write", lambda fd, data: len(data) // 2)
    assert annotation_store_check(tmp_path) == {"writable": False, "reason": "disk_full"}


def test_a_file_size_limit_stops_the_probe(tmp_path):
    with file_size_limit(1000):
        assert annotation_store_check(tmp_path) == {"writable": False, "reason": "disk_full"}


def test_a_read_only_store_file_is_reported(tmp_path):
    store = tmp_path / health.ANNOTATION_STORE_FILE
    store.write_bytes(b"")
    store.chmod(0o400)
    try:
        if os.access(store, os.W_OK):
            pytest.skip("running as root: a 0400 file is still writable")
        assert annotation_store_check(tmp_path) == {"writable": False, "reason": "read_only"}
    finally:
        store.chmod(0o600)


def test_a_link_planted_at_the_probe_name_is_not_written_through(tmp_path):
    target = tmp_path / "precious.txt"
    target.write_text("keep me")
    (tmp_path / PROBE_FILE).symlink_to(target)
    assert annotation_store_check(tmp_path) == {"writable": False, "reason": "io_error"}  # ELOOP
    assert target.read_text() == "keep me"


def test_the_disk_is_probed_at_most_once_every_few_seconds(tmp_path, monkeypatch):
    calls = []

    def counting(folder):
        calls.append(folder)
        return {"writable": True}

    monkeypatch.setattr(health, "annotation_store_check", counting)
    client = client_for(Settings(assets_dir=tmp_path, annotation_dir=tmp_path))
    for _ in range(20):
        assert client.get(HEALTH_PATH).json()["annotation_store"] == {"writable": True}
    assert len(calls) == 1
    assert health.STORE_CHECK_S <= 10


def test_a_probe_that_hangs_answers_timeout_and_is_not_started_twice():
    release, runs = threading.Event(), []

    def hangs():
        runs.append(1)
        release.wait(10)
        return {"writable": True}

    check = Throttled(hangs, 0, 0.2, late={"writable": False, "reason": "timeout"}, failed={}, name="t")
    start = time.monotonic()
    assert check.result() == {"writable": False, "reason": "timeout"}
    assert check.result() == {"writable": False, "reason": "timeout"}  # the same run, still in flight
    assert time.monotonic() - start < 2 and len(runs) == 1
    release.set()
    assert check.future().result(5) == {"writable": True}


def test_a_check_that_raises_answers_its_failure_value():
    def broken():
        raise RuntimeError("/secret/path is broken")

    check = Throttled(broken, 60, 2, late={}, failed={"writable": False, "reason": "io_error"}, name="t")
    assert check.result() == {"writable": False, "reason": "io_error"}


# -- the models: pinged when asked ----------------------------------------------------------------------


@pytest.fixture
def model_server():
    with FakeOpenAIServer() as server:
        yield server


def settings_with_models(tmp_path, lawyer_url: str, judge_url: str | None = None) -> Settings:
    environ = {
        "LAWLUO_LAWYER_BACKEND": "openai",
        "LAWLUO_LAWYER_MODEL": MODEL_NAME,
        "LAWLUO_LAWYER_BASE_URL": lawyer_url,
        "LAWLUO_LAWYER_MAX_RETRIES": "0",
        "OPENAI_API_KEY": SECRET_KEY,
        "LAWLUO_ANNOTATION_DIR": str(tmp_path),
    }
    if judge_url:
        environ |= {
            "LAWLUO_JUDGE_BACKEND": "openai",
            "LAWLUO_JUDGE_MODEL": MODEL_NAME + "-judge",
            "LAWLUO_JUDGE_BASE_URL": judge_url,
            "LAWLUO_JUDGE_MAX_RETRIES": "0",
        }
    return load_settings(environ=environ)


def closed_port_url() -> str:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}/v1"


def test_models_are_pinged_only_when_asked_and_at_most_every_30_s(tmp_path, model_server):
    dead = closed_port_url()
    client = client_for(settings_with_models(tmp_path, model_server.url, dead))
    plain = client.get(HEALTH_PATH)
    assert plain.status_code == 200 and model_server.requests == []  # no model contacted
    assert "reachable" not in json.dumps(plain.json()["models"])

    response = client.get(HEALTH_PATH + "?models=1")
    assert response.status_code == 503
    body = response.json()
    lawyer, judge = body["models"]["lawyer"], body["models"]["judge"]
    assert lawyer["reachable"] is True and lawyer["ping_s"] >= 0
    assert judge == {"configured": True, "backend": "openai", "reachable": False, "error": "connection"}
    assert body["models"]["clarifier"] == {"configured": False, "backend": "none"}
    assert "judge model unreachable (connection) 模型不可达" in body["problems"]
    pinged = len(model_server.requests)
    assert pinged == 1 and model_server.requests[0]["max_tokens"] == 1
    text = json.dumps(body)
    for secret in (SECRET_KEY, MODEL_NAME, model_server.url, dead, "127.0.0.1", str(tmp_path)):
        assert secret not in text

    for _ in range(10):  # cached: a public URL cannot make the app spend tokens on every request
        assert client.get(HEALTH_PATH + "?models=1").json()["models"]["lawyer"]["reachable"] is True
    assert len(model_server.requests) == pinged
    assert health.MODELS_CHECK_S >= 30


def test_roles_sharing_a_backend_are_pinged_once_and_a_local_model_is_not_loaded(tmp_path, model_server):
    settings = load_settings(
        environ={
            "LAWLUO_DEFAULT_BACKEND": "openai",
            "LAWLUO_DEFAULT_MODEL": MODEL_NAME,
            "LAWLUO_DEFAULT_BASE_URL": model_server.url,
            "OPENAI_API_KEY": SECRET_KEY,
            "LAWLUO_BOSS_BACKEND": "reward_model",
            "LAWLUO_BOSS_MODEL": str(tmp_path / "no-such-reward-model"),
            "LAWLUO_ANNOTATION_DIR": str(tmp_path),
        }
    )
    body = HealthProbe(settings).report(models=True)
    assert len(model_server.requests) == 1  # lawyer, clarifier, secretary and judge share one backend
    assert all(body["models"][r]["reachable"] is True for r in ("lawyer", "clarifier", "secretary", "judge"))
    assert body["models"]["boss"] == {"configured": True, "backend": "reward_model", "reachable": None}
    assert body["status"] == "ok"


def test_a_server_that_refuses_the_key_says_auth_without_the_key(tmp_path):
    with FakeOpenAIServer(api_key="the-right-key") as server:
        body = HealthProbe(settings_with_models(tmp_path, server.url)).report(models=True)
    assert body["models"]["lawyer"]["error"] == "auth" and SECRET_KEY not in json.dumps(body)
