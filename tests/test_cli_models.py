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
    assert html.count("未配置 not available") == 5 and "LAWLUO_SECRETARY_BACKEND" in html
    hostile = RoleStatus("judge", "openai", "openai · <script>alert(1)</script>", True, None)
    html = models_status_html([hostile])
    assert "<script>" not in html and "&lt;script&gt;alert(1)" in html and "可用 ready" in html
