"""``python -m lawluo models local`` (lawluo/llm/local_server.py, issue 41 item 1), offline: the GGUF joined from tiny
fake part packages made here (a folder on ``sys.path`` holding each package and its ``.dist-info``), the refusal
without cmake, and the server's start, readiness, stop and SIGTERM against ``tests/fakes/llama_server.py``."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from lawluo import cli
from lawluo.llm import local_server as ls
from lawluo.llm import local_server_build, local_server_gguf

FAKE = Path(__file__).parent / "fakes" / "llama_server.py"
CHUNKS = [b"GGUF" + b"a" * 60, b"b" * 64, b"c" * 17]


def _pin(
    chunks=CHUNKS, names=("fake-part1", "fake-part2", "fake-part3"), version="0.9.0", sha=None
) -> ls.ModelPin:
    joined = b"".join(chunks)
    return ls.ModelPin(
        key="fake", alias="fake-model", file="fake.gguf", parts=tuple(names), version=version,
        size=len(joined), sha256=sha or hashlib.sha256(joined).hexdigest(), upstream="test",
        config="configs/local-cpu.yaml",
    )  # fmt: skip


def _install_parts(site: Path, names, chunks, version="0.9.0") -> None:
    """Part packages laid out as the real wheels are: ``<module>/data/partNN.bin`` plus their metadata."""
    for i, (name, chunk) in enumerate(zip(names, chunks, strict=True), 1):
        module = name.replace("-", "_")
        data = site / module / "data" / f"part{i:02d}.bin"
        data.parent.mkdir(parents=True)
        data.write_bytes(chunk)
        (site / module / "__init__.py").write_text("")
        info = site / f"{module}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
        (info / "RECORD").write_text(
            f"{module}/__init__.py,,\n{module}/data/part{i:02d}.bin,,\n{info.name}/RECORD,,\n"
        )


@pytest.fixture
def site(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "site"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))
    return folder


def test_parts_are_joined_in_order_verified_and_cached(site, tmp_path, monkeypatch):
    pin = _pin()
    _install_parts(site, pin.parts, CHUNKS)
    gguf = ls.assemble_gguf(pin, tmp_path / "models")
    assert gguf.read_bytes() == b"".join(CHUNKS)
    assert not list((tmp_path / "models").glob("*.partial"))

    def no_parts(pin):
        raise AssertionError("a verified cached GGUF is not joined again")

    monkeypatch.setattr(local_server_gguf, "part_files", no_parts)
    assert ls.assemble_gguf(pin, tmp_path / "models") == gguf


def test_a_wrong_sha256_is_refused_and_nothing_is_left(site, tmp_path):
    pin = _pin(sha="0" * 64)
    _install_parts(site, pin.parts, CHUNKS)
    with pytest.raises(ls.LocalModelError, match="sha256 .* but fake's is 0000"):
        ls.assemble_gguf(pin, tmp_path / "models")
    assert list((tmp_path / "models").iterdir()) == []


def test_parts_out_of_order_do_not_make_the_model(site, tmp_path):
    pin = _pin()
    _install_parts(site, pin.parts, [CHUNKS[1], CHUNKS[0], CHUNKS[2]])
    with pytest.raises(ls.LocalModelError, match="do not make fake: .*sha256"):
        ls.assemble_gguf(pin, tmp_path / "models")


def test_missing_and_wrong_version_parts_are_all_named(site, tmp_path):
    pin = _pin()
    _install_parts(site, pin.parts[:1], CHUNKS[:1])
    with pytest.raises(ls.LocalModelError) as caught:
        ls.assemble_gguf(pin, tmp_path / "models")
    message = str(caught.value)
    assert "not installed: fake-part2, fake-part3" in message
    assert "requirements-local.txt" in message and "--gguf PATH" in message


def test_a_part_of_another_version_is_refused(site, tmp_path):
    pin = _pin(version="1.0.0")
    _install_parts(site, pin.parts, CHUNKS, version="0.9.0")
    with pytest.raises(ls.LocalModelError, match="not version 1.0.0: fake-part1 0.9.0"):
        ls.part_files(pin)


def test_a_gguf_path_is_verified_and_copied_into_the_cache(tmp_path):
    pin = _pin(names=("absent-part",))
    given = tmp_path / "given.gguf"
    given.write_bytes(b"".join(CHUNKS))
    cached = ls.assemble_gguf(pin, tmp_path / "models", gguf=given)
    assert cached.parent == tmp_path / "models" and cached.read_bytes() == given.read_bytes()
    given.write_bytes(b"GGUF" + b"x" * 10)
    (tmp_path / "models" / pin.file).unlink()
    with pytest.raises(ls.LocalModelError, match="bytes, but fake has"):
        ls.assemble_gguf(pin, tmp_path / "models", gguf=given)


def test_the_build_runs_cmake_for_llama_server_only_natively():
    configure, build = ls.cmake_commands(
        Path("/s"),
        Path("/b"),
        {"cmake": "cmake", "generator": "Ninja"},
        2,
        ["avx", "avx2", "fma", "amx_tile"],
    )
    assert {"-DCMAKE_BUILD_TYPE=Release", "-DLLAMA_USE_PREBUILT_UI=OFF"} <= set(configure)
    if (
        local_server_build.platform.machine() == "x86_64"
    ):  # no -march=native: it emitted AMX/AVX512-FP16 that faulted (SIGILL)
        assert {"-DGGML_NATIVE=OFF", "-DGGML_AVX2=ON", "-DGGML_F16C=OFF", "-DGGML_AMX_TILE=OFF"} <= set(
            configure
        )
    assert build == ["cmake", "--build", "/b", "--target", "llama-server", "-j", "2"]
    assert ls.build_key("1", ["avx2"]) != ls.build_key("1", ["avx2", "avx512f"])  # another CPU, another build
    assert ls.default_threads(2) == 1 and ls.default_threads(1) == 1 and ls.default_threads(8) == 4


def test_models_local_without_cmake_names_the_debian_packages(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("LAWLUO_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(local_server_build, "_installed_binary", lambda: None)
    monkeypatch.setattr(
        local_server_build.shutil, "which", lambda name: None if name == "cmake" else f"/usr/bin/{name}"
    )
    assert cli.main(["models", "local"]) == 2
    err = capsys.readouterr().err
    assert "needs cmake" in err and "apt-get install build-essential cmake" in err
    assert "Traceback" not in err
    assert not (
        tmp_path / "cache" / "local-model" / "src"
    ).exists()  # nothing fetched before the tools are there


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _fake_binary(folder: Path) -> Path:
    binary = folder / "llama-server"
    binary.parent.mkdir(parents=True, exist_ok=True)
    binary.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE}" "$@"\n')
    binary.chmod(0o755)
    return binary


def test_the_server_starts_answers_and_stops(tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_LLAMA_ARGS", str(tmp_path / "args.json"))
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")
    server = ls.LocalServer(_fake_binary(tmp_path), gguf, "fake-model", _free_port(), threads=1, ctx_size=4096,
                            log_path=tmp_path / "server.log")  # fmt: skip
    try:
        assert server.start(timeout=30) >= 0.3  # /health said "loading" first
        assert ls.health("127.0.0.1", server.port) == "ok"
        request = urllib.request.Request(
            server.base_url + "/chat/completions",
            json.dumps({"model": "fake-model", "messages": [{"role": "user", "content": "你好"}]}).encode(),
            {"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            assert json.load(response)["choices"][0]["message"]["content"] == "echo: 你好"
        args = json.loads((tmp_path / "args.json").read_text())
        assert (args["host"], args["threads"], args["ctx_size"], args["parallel"], args["jinja"]) == (
            "127.0.0.1", 1, 4096, 1, True
        )  # fmt: skip
        with pytest.raises(ls.LocalModelError, match="is in use"):
            ls.LocalServer(server.binary, gguf, "x", server.port).start(timeout=5)
    finally:
        server.stop()
    assert server.process.returncode is not None
    assert ls.health("127.0.0.1", server.port) == "down"


def test_a_server_that_exits_is_reported_with_its_log(tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_LLAMA_FAIL", "1")
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")
    server = ls.LocalServer(_fake_binary(tmp_path), gguf, "m", _free_port(), log_path=tmp_path / "server.log")
    with pytest.raises(ls.LocalModelError, match="exited with status 1; its log: .*server.log"):
        server.start(timeout=30)
    assert "failed to load model" in (tmp_path / "server.log").read_text()


def _prepared_cache(tmp_path: Path, monkeypatch) -> tuple[Path, Path, Path]:
    """A cache whose llama-server is the fake (built before, for the --source folder) and a pinned fake GGUF."""
    source = tmp_path / "llama.cpp"
    (source / "tools" / "server").mkdir(parents=True)
    cache = tmp_path / "cache"
    key = ls.build_key(ls.source_label(source), ls.cpu_flags())
    _fake_binary(cache / "local-model" / "llama.cpp" / key / "bin")
    gguf = tmp_path / "given.gguf"
    gguf.write_bytes(b"".join(CHUNKS))
    monkeypatch.setitem(ls.MODELS, ls.DEFAULT_MODEL, _pin(names=("absent-part",)))
    monkeypatch.setenv("LAWLUO_CACHE_DIR", str(cache))
    return cache, source, gguf


def test_models_local_detached_then_status_and_stop(tmp_path, monkeypatch, capsys):
    cache, source, gguf = _prepared_cache(tmp_path, monkeypatch)
    monkeypatch.setattr(
        local_server_build.shutil, "which", lambda name: None
    )  # a built server needs no build tools
    port = _free_port()
    argv = ["models", "local", "--source", str(source), "--gguf", str(gguf), "--port", str(port)]
    try:
        assert cli.main([*argv, "--detach"]) == 0
        started = json.loads(capsys.readouterr().out)
        assert started["base_url"] == f"http://127.0.0.1:{port}/v1" and started["model"] == "fake-model"
        assert started["config"] == "configs/local-cpu.yaml" and started["threads"] == ls.default_threads()
        assert cli.main(["models", "local", "--status"]) == 0
        assert json.loads(capsys.readouterr().out)["health"] == "ok"
    finally:
        assert cli.main(["models", "local", "--stop"]) == 0
    assert json.loads(capsys.readouterr().out)["pid"] == started["pid"]
    assert cli.main(["models", "local", "--status"]) == 1
    assert ls.health("127.0.0.1", port) == "down"
    written = {p.relative_to(cache).parts[0] for p in cache.rglob("*")}
    assert written == {"local-model"}


def _chat(base_url: str, **extra) -> str:
    body = {"model": "fake-model", "messages": [{"role": "user", "content": "你好"}], **extra}
    request = urllib.request.Request(
        base_url + "/chat/completions", json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)["choices"][0]["message"]["content"]


def test_a_lora_adapter_is_loaded_unapplied_and_only_requests_that_name_it_get_it(
    tmp_path, monkeypatch, capsys
):
    cache, source, gguf = _prepared_cache(tmp_path, monkeypatch)
    monkeypatch.setattr(local_server_build.shutil, "which", lambda name: None)
    monkeypatch.setenv("FAKE_LLAMA_ARGS", str(tmp_path / "args.json"))
    port = _free_port()
    argv = ["models", "local", "--source", str(source), "--gguf", str(gguf), "--port", str(port), "--detach"]
    assert cli.main([*argv, "--lora", str(tmp_path / "absent.gguf")]) == 2
    assert "absent.gguf: no such file" in capsys.readouterr().err
    lora = tmp_path / "clarifier-lora.gguf"
    lora.write_bytes(b"GGUF")
    try:
        assert cli.main([*argv, "--lora", str(lora)]) == 0
        started = json.loads(capsys.readouterr().out)
        assert started["lora"] == str(lora) and started["config"] == "configs/local-cpu-tuned.yaml"
        args = json.loads((tmp_path / "args.json").read_text())
        assert args["lora"] == [str(lora)] and args["lora_init_without_apply"] is True
        assert _chat(started["base_url"]) == "echo: 你好"  # every other role: the base model
        assert _chat(started["base_url"], lora=[{"id": 0, "scale": 1.0}]) == "lora: 你好"  # the clarifier
    finally:
        cli.main(["models", "local", "--stop"])


def test_the_tuned_config_applies_the_adapter_to_the_clarifier_only():
    from lawluo.config import load_settings
    from lawluo.llm import LanguageModels

    settings = load_settings(Path(__file__).parent.parent / "configs" / "local-cpu-tuned.yaml")
    assert settings.prompt_variant == "tuned"
    models = LanguageModels(settings.models)
    assert models["clarifier"].options.extra_body == {"lora": [{"id": 0, "scale": 1.0}]}
    assert all(not models[role].options.extra_body for role in ("lawyer", "secretary", "judge"))


def test_sigterm_stops_the_foreground_command_and_its_server(tmp_path, monkeypatch):
    cache, source, gguf = _prepared_cache(tmp_path, monkeypatch)
    port = _free_port()
    # the child process sees the fake pin through a tiny launcher: the real MODELS are pinned to real files
    launcher = tmp_path / "launch.py"
    pin = ls.MODELS[ls.DEFAULT_MODEL]
    launcher.write_text(
        "import sys\nfrom lawluo.llm import local_server as ls\nfrom lawluo import cli\n"
        f"ls.MODELS[ls.DEFAULT_MODEL] = ls.{pin!r}\n"
        "sys.exit(cli.main(sys.argv[1:]))\n"
    )
    command = [sys.executable, str(launcher), "models", "local", "--source", str(source), "--gguf", str(gguf)]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parent.parent)}
    child = subprocess.Popen(
        [*command, "--port", str(port)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True
    )
    try:
        started = json.loads(child.stdout.readline())
        assert ls.health("127.0.0.1", port) == "ok"
        child.send_signal(signal.SIGTERM)
        assert child.wait(30) == 0
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    deadline = time.monotonic() + 10
    while ls._alive(started["pid"]) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not ls._alive(started["pid"]) and ls.health("127.0.0.1", port) == "down"
    assert not (cache / "local-model" / "server.json").exists()


@pytest.mark.parametrize("key", sorted(ls.MODELS))
def test_each_pinned_model_names_a_settings_file_that_asks_for_it(key):
    """`models local --model …` tells the user which settings file to start the app with; that file's models
    are the alias the server answers to."""
    from lawluo.config import load_settings

    from .conftest import ROOT

    pin = ls.MODELS[key]
    settings = load_settings(ROOT / pin.config, environ={})
    served = {config.options.model for _, config in settings.models.items() if config.backend == "openai"}
    assert served == {pin.alias}
