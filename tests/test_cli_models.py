"""``python -m lawluo models`` and ``chat``: which model each role uses, and one question from the shell."""

from __future__ import annotations

import json

import pytest

from lawluo.cli import main
from lawluo.config import load_settings
from lawluo.llm import LanguageModels, RoleStatus
from lawluo.ui.models_panel import models_status_html

from .fakes.openai_server import FakeOpenAIServer, Fault, Reply


@pytest.fixture
def fake_judge(monkeypatch, tmp_path):
    with FakeOpenAIServer() as server:
        config = tmp_path / "judge.yaml"
        config.write_text(
            f"models:\n  judge: {{backend: openai, model: fake-model, base_url: '{server.url}', max_retries: 0}}\n",
            encoding="utf-8",
        )
        monkeypatch.setenv("OPENAI_API_KEY", "test")
        yield server, str(config)


def test_models_lists_every_role_and_pings_the_usable_ones(fake_judge, capsys):
    server, config = fake_judge
    assert main(["--config", config, "models", "--ping"]) == 0
    rows = {row["role"]: row for row in map(json.loads, capsys.readouterr().out.splitlines())}
    assert list(rows) == ["lawyer", "clarifier", "secretary", "judge", "boss"]
    assert rows["judge"]["available"] and rows["judge"]["ping_s"] >= 0 and "error" not in rows["judge"]
    assert not rows["lawyer"]["available"] and "LAWLUO_LAWYER_BACKEND" in rows["lawyer"]["reason"]
    assert server.requests[0]["max_tokens"] == 1


def test_a_failed_ping_is_reported_with_exit_status_1(fake_judge, capsys):
    server, config = fake_judge
    server.script(Fault.status(401))
    assert main(["--config", config, "models", "--ping"]) == 1
    judge = [json.loads(line) for line in capsys.readouterr().out.splitlines()][3]
    assert "rejected the API key" in judge["error"]


def five_roles(tmp_path, base_url: str, judge_model: str = "fake-model", extra: str = "") -> str:
    """A settings file whose five roles use one server; the judge's model may differ."""
    lines = ["models:"]
    for role in ("lawyer", "clarifier", "secretary", "judge", "boss"):
        model = judge_model if role == "judge" else "fake-model"
        lines.append(f"  {role}: {{backend: openai, model: {model}, base_url: '{base_url}'{extra}}}")
    config = tmp_path / "five.yaml"
    config.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(config)


def ping_rows(capsys) -> dict[str, dict]:
    return {row["role"]: row for row in map(json.loads, capsys.readouterr().out.splitlines())}


def test_ping_sends_one_request_per_distinct_backend(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    with FakeOpenAIServer() as server:
        config = five_roles(tmp_path, server.url, judge_model="fake-judge")
        assert main(["--config", config, "models", "--ping"]) == 0
        sent = sorted(request["model"] for request in server.requests)
    assert sent == ["fake-judge", "fake-model"]  # four roles share one backend, the judge has its own
    rows = ping_rows(capsys)
    assert all(rows[role]["ping_s"] >= 0 and "error" not in rows[role] for role in rows)


def test_ping_does_not_retry_a_failure(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    with FakeOpenAIServer() as server:
        server.script(Fault.status(503))  # retryable: a normal call retries it (max_retries 3)
        assert main(["--config", five_roles(tmp_path, server.url), "models", "--ping"]) == 1
        assert len(server.requests) == 1
    rows = ping_rows(capsys)
    assert len({row["error"] for row in rows.values()}) == 1 and "503" in rows["lawyer"]["error"]


def test_ping_with_the_server_down_reports_every_role(monkeypatch, tmp_path, capsys):
    import socket

    with socket.socket() as probe:  # a loopback port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    config = five_roles(tmp_path, f"http://127.0.0.1:{port}/v1")
    assert main(["--config", config, "models", "--ping", "--ping-timeout", "5"]) == 1
    rows = ping_rows(capsys)
    assert list(rows) == ["lawyer", "clarifier", "secretary", "judge", "boss"]
    assert all("Cannot reach the" in row["error"] and str(port) not in row["error"] for row in rows.values())


def test_a_hung_server_is_given_up_on_after_the_ping_timeout(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    with FakeOpenAIServer() as server:
        server.script(Fault.hang(30))
        assert (
            main(["--config", five_roles(tmp_path, server.url), "models", "--ping", "--ping-timeout", "0.5"])
            == 1
        )
        assert len(server.requests) == 1
    assert "the ping took longer than its time budget of 0.5 s" in ping_rows(capsys)["judge"]["error"]


def test_ping_shows_what_each_backend_chose_for_its_server(monkeypatch, tmp_path, capsys):
    from lawluo.llm.openai_backend import OpenAIBackend

    monkeypatch.setattr(OpenAIBackend, "setup_notes", lambda self: {"system_message": f"keep ({self.role})"})
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    with FakeOpenAIServer() as server:
        assert main(["--config", five_roles(tmp_path, server.url, "fake-judge"), "models", "--ping"]) == 0
    rows = ping_rows(capsys)
    assert rows["judge"]["setup"] == {"system_message": "keep (judge)"}
    assert {rows[role]["setup"]["system_message"] for role in ("lawyer", "clarifier", "boss")} == {
        "keep (lawyer)"
    }


def test_a_bad_ping_timeout_is_a_usage_error(capsys):
    assert main(["models", "--ping", "--ping-timeout", "0"]) == 2
    assert "--ping-timeout" in capsys.readouterr().err


def test_chat_streams_the_answer_to_stdout(fake_judge, capsys):
    server, config = fake_judge
    server.script(Reply("不可以，用人单位应当依法缴纳社会保险费。"))
    assert (
        main(
            [
                "--config",
                config,
                "chat",
                "--role",
                "judge",
                "--system",
                "你是律师。",
                "试用期可以不交社保吗？",
            ]
        )
        == 0
    )
    assert capsys.readouterr().out == "不可以，用人单位应当依法缴纳社会保险费。\n"
    assert server.requests[0]["messages"][0] == {"role": "system", "content": "你是律师。"}


def test_chat_without_a_model_says_what_to_configure(monkeypatch, capsys):
    monkeypatch.delenv("LAWLUO_CONFIG", raising=False)
    assert main(["chat", "你好"]) == 1
    assert "No language model is configured for the lawyer role" in capsys.readouterr().err


def test_chat_keeps_a_partial_answer_when_the_stream_breaks(fake_judge, capsys):
    server, config = fake_judge
    server.script(Fault.broken_stream("不可以，用人单位应当依法缴纳。", after=2))
    assert main(["--config", config, "chat", "--role", "judge", "问"]) == 1
    out, err = capsys.readouterr()
    assert out == "不可"
    assert "broke off after 2 characters" in err


def test_chat_refuses_an_empty_question(capsys):
    assert main(["chat", "   "]) == 2
    assert "the question is empty" in capsys.readouterr().err


def test_invalid_settings_stop_the_cli_with_exit_status_2(monkeypatch, capsys):
    monkeypatch.setenv("LAWLUO_JUDGE_BACKEND", "gpt")
    assert main(["models"]) == 2
    assert "unknown backend 'gpt'; valid: none, openai, transformers" in capsys.readouterr().err


def test_the_models_panel_shows_each_role_and_escapes_what_it_shows():
    html = models_status_html(LanguageModels(load_settings(environ={}).models).status())
    assert html.count(">未配置<") == html.count(">not available<") == 5 and "LAWLUO_SECRETARY_BACKEND" in html
    hostile = RoleStatus("judge", "openai", "openai · <script>alert(1)</script>", True, None)
    html = models_status_html([hostile])
    assert "<script>" not in html and "&lt;script&gt;alert(1)" in html and ">可用<" in html
