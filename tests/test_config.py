"""Settings: a YAML file plus LAWLUO_… environment overrides, validated at start-up with clear errors."""

from __future__ import annotations

import textwrap

import pytest

from lawluo.config import ROLES, ConfigError, load_settings
from lawluo.llm.options import NoModelOptions, OpenAIOptions, TransformersOptions

from .conftest import ROOT


def write(tmp_path, text: str):
    path = tmp_path / "lawluo.yaml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def test_no_file_and_no_environment_means_no_model_for_any_role():
    settings = load_settings(environ={})
    assert settings.source is None
    for role in ROLES:
        config = getattr(settings.models, role)
        assert config.backend == "none" and config.options == NoModelOptions()


def test_default_section_is_merged_into_roles_with_the_same_backend(tmp_path):
    path = write(
        tmp_path,
        """
        models:
          default: {backend: openai, model: deepseek-chat, base_url: "https://api.deepseek.com/v1",
                    api_key_env: DEEPSEEK_API_KEY}
          judge: {temperature: 0}
          lawyer: {backend: transformers, model: ./base, adapter: ./lora, quantization: 4bit}
        """,
    )
    settings = load_settings(path, environ={"DEEPSEEK_API_KEY": "k-123"})
    judge = settings.models.judge
    assert judge.backend == "openai"
    assert judge.options == OpenAIOptions(
        model="deepseek-chat",
        base_url="https://api.deepseek.com/v1",
        api_key_env="DEEPSEEK_API_KEY",
        temperature=0.0,
    )
    assert judge.api_key == "k-123"
    assert settings.models.clarifier.options.temperature == 0.7
    lawyer = settings.models.lawyer
    assert lawyer.backend == "transformers"
    assert lawyer.options == TransformersOptions(model="./base", adapter="./lora", quantization="4bit")
    assert lawyer.api_key is None


def test_whole_answers_turns_streaming_off_and_waits_long_enough_for_a_whole_answer(tmp_path):
    """What the batch commands use (``generate``/``evaluate`` without ``--stream``): every role that streams
    asks for whole answers, waiting at least the given seconds; the rest of its settings are kept."""
    path = write(
        tmp_path,
        """
        models:
          default: {backend: openai, model: m, base_url: "http://gpu:8000/v1", timeout: 30}
          judge: {timeout: 900, temperature: 0}
          secretary: {stream: false}
          lawyer: {backend: transformers, model: ./base}
        """,
    )
    models = load_settings(path, environ={}).models
    whole = models.whole_answers(600)
    assert whole.clarifier.options == OpenAIOptions(
        model="m", base_url="http://gpu:8000/v1", timeout=600, stream=False
    )
    assert whole.judge.options.timeout == 900 and whole.judge.options.temperature == 0  # its longer wait kept
    assert whole.secretary == models.secretary  # already whole answers, with the wait its owner chose
    assert whole.lawyer == models.lawyer  # a local model: no stream option to turn off
    assert not whole.boss.options.stream
    assert models.clarifier.options.stream  # a copy: the settings themselves are unchanged


def test_api_keys_never_appear_in_the_repr_of_settings(tmp_path):
    settings = load_settings(
        environ={
            "LAWLUO_DEFAULT_BACKEND": "openai",
            "LAWLUO_DEFAULT_MODEL": "m",
            "OPENAI_API_KEY": "sk-secret",
        }
    )
    assert settings.models.lawyer.api_key == "sk-secret"
    assert "sk-secret" not in repr(settings)


def test_environment_overrides_the_file_and_coerces_types(tmp_path):
    path = write(tmp_path, "models:\n  default: {backend: openai, model: gpt-4o-mini}\n")
    env = {
        "LAWLUO_JUDGE_TEMPERATURE": "0",
        "LAWLUO_LAWYER_MODEL": "gpt-4o",
        "LAWLUO_DEFAULT_MAX_RETRIES": "5",
        "LAWLUO_DEFAULT_JSON_MODE": "true",
        "LAWLUO_DEFAULT_EXTRA_BODY": '{"enable_thinking": false}',
        "LAWLUO_CACHE_DIR": str(tmp_path / "idx"),
        "OPENAI_BASE_URL": "http://127.0.0.1:9/v1",
    }
    settings = load_settings(path, environ=env)
    assert settings.models.judge.options.temperature == 0.0
    assert settings.models.lawyer.options.model == "gpt-4o"
    assert settings.models.secretary.options.max_retries == 5
    assert settings.models.secretary.options.json_mode is True
    assert settings.models.boss.options.extra_body == {"enable_thinking": False}
    assert settings.models.boss.options.base_url == "http://127.0.0.1:9/v1"  # OPENAI_BASE_URL as default
    assert settings.cache_dir == tmp_path / "idx"


def test_config_path_comes_from_lawluo_config_when_not_given(tmp_path):
    path = write(tmp_path, "models:\n  lawyer: {backend: openai, model: qwen-plus}\n")
    settings = load_settings(environ={"LAWLUO_CONFIG": str(path)})
    assert settings.source == str(path)
    assert settings.models.lawyer.options.model == "qwen-plus"


def test_every_problem_is_reported_at_once_with_the_valid_choices(tmp_path):
    path = write(
        tmp_path,
        """
        asset_dir: x
        models:
          lawer: {backend: openai}
          judge: {backend: gpt4, model: x}
          clarifier: {backend: openai, model: gpt-4o, temprature: 0.2}
          secretary: {backend: openai}
          boss: {backend: openai, model: x, temperature: hot}
        """,
    )
    with pytest.raises(ConfigError) as caught:
        load_settings(path, environ={})
    message = str(caught.value)
    assert str(path) in message
    assert "unknown key(s) asset_dir; valid keys: assets_dir, cache_dir" in message
    assert "models.lawer: unknown role; valid: default, lawyer, clarifier, secretary, judge, boss" in message
    assert "models.judge.backend: unknown backend 'gpt4'; valid: none, openai, transformers" in message
    assert (
        "models.clarifier: unknown option(s) temprature for backend openai; valid: model, base_url" in message
    )
    assert "models.secretary: backend openai needs model" in message
    assert "models.boss.temperature: expected a number, got 'hot'" in message


LOCAL = {"LAWLUO_LAWYER_BACKEND": "transformers", "LAWLUO_LAWYER_MODEL": "m"}
HOSTED = {"LAWLUO_JUDGE_BACKEND": "openai", "LAWLUO_JUDGE_MODEL": "m"}


@pytest.mark.parametrize(
    ("environ", "message"),
    [
        (
            {**LOCAL, "LAWLUO_LAWYER_QUANTIZATION": "3bit"},
            "models.lawyer: quantization '3bit' is not one of none, 4bit, 8bit",
        ),
        (
            {**LOCAL, "LAWLUO_LAWYER_QUANTIZATION": "8bit", "LAWLUO_LAWYER_DEVICE": "cpu"},
            "with device: cpu set quantization: none",
        ),
        ({**HOSTED, "LAWLUO_JUDGE_TEMPERATURE": "3"}, "temperature 3.0 is outside 0–2"),
        (
            {**HOSTED, "LAWLUO_JUDGE_BASE_URL": "api.deepseek.com"},
            "base_url 'api.deepseek.com' must start with http",
        ),
    ],
    ids=["quantization", "quantization-on-cpu", "temperature", "base_url"],
)
def test_option_values_are_validated_by_the_backend_options(environ, message):
    with pytest.raises(ConfigError, match=message):
        load_settings(environ=environ)


def test_a_key_written_into_the_file_is_refused(tmp_path):
    path = write(tmp_path, "models:\n  lawyer: {backend: openai, model: m, api_key: sk-oops}\n")
    with pytest.raises(ConfigError, match="API keys are never read from settings.*api_key_env"):
        load_settings(path, environ={})


def test_unknown_lawluo_environment_variables_are_errors():
    with pytest.raises(
        ConfigError, match="unknown environment variable LAWLUO_LAYWER_MODEL; valid: LAWLUO_CONFIG"
    ):
        load_settings(environ={"LAWLUO_LAYWER_MODEL": "x"})
    assert load_settings(environ={"LAWLUO_LAYWER_MODEL": ""}).models.lawyer.backend == "none"  # empty = unset


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("models: [1, 2\n", "is not valid YAML at line 2"),
        ("- just\n- a list\n", "must hold a mapping of settings, not a list"),
        ("models: 3\n", "models: expected a mapping of roles, got int"),
        ("models:\n  lawyer: openai\n", "models.lawyer: expected a mapping of options, got 'openai'"),
    ],
)
def test_malformed_files_get_a_message_not_a_traceback(tmp_path, text, message):
    with pytest.raises(ConfigError, match=message):
        load_settings(write(tmp_path, text), environ={})


def test_a_missing_file_is_named():
    with pytest.raises(ConfigError, match="cannot read config file /nonexistent/lawluo.yaml"):
        load_settings("/nonexistent/lawluo.yaml", environ={})


@pytest.mark.parametrize("path", sorted((ROOT / "configs").glob("*.yaml")), ids=lambda p: p.name)
def test_every_shipped_example_config_loads(path):
    settings = load_settings(path, environ={})
    assert settings.source == str(path)
    assert {config.backend for _, config in settings.models.items()} <= {
        "none",
        "openai",
        "anthropic",
        "transformers",
    }
