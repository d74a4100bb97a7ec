"""Boss-guided RL (LawLuo §3.2): the reward functions and the script, with a tiny policy and a tiny random
reward model loaded through lawluo's reward_model backend. Offline, CPU."""

from __future__ import annotations

import pytest

from tests.conftest import ROOT
from tests.fakes.tiny_lm import save_tiny_lm, save_tiny_lora_adapter
from tests.fakes.tiny_training import (
    NO_SUCH_LAW,
    NUMBER_ONLY,
    QUESTIONS,
    VERIFIED,
    WRONG_CONTENT,
    save_tiny_reward_model,
    write_tiny_consultations,
    write_tiny_statutes,
)
from training import train_rl


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    base = tmp_path_factory.mktemp("rl-tiny")
    lm = save_tiny_lm(base / "lm", seed=0)
    return {
        "lm": lm,
        "adapter": save_tiny_lora_adapter(lm, base / "sft-adapter"),
        "reward": save_tiny_reward_model(base / "reward"),
        "statutes": write_tiny_statutes(base / "statutes"),
        "data": write_tiny_consultations(base / "data", n=4),
    }


def _boss(tiny):
    args = train_rl.RLArguments(boss_model=str(tiny["reward"]), boss_device="cpu")
    return train_rl.load_boss(args)


def test_the_boss_reward_is_the_reward_models_raw_score_of_each_answer_to_its_question(tiny):
    boss = _boss(tiny)
    reward = train_rl.BossReward(boss)
    prompts = [
        [{"role": "user", "content": q}] for q in (QUESTIONS[0], QUESTIONS[0], QUESTIONS[1], QUESTIONS[1])
    ]
    answers = ["可以申请劳动仲裁。", VERIFIED, "不可以。", WRONG_CONTENT]
    completions = [[{"role": "assistant", "content": a}] for a in answers]
    got = reward(prompts=prompts, completions=completions, trainer_state=None)
    direct = boss.model.score_batch([(p[0]["content"], a) for p, a in zip(prompts, answers, strict=True)])
    assert got == pytest.approx(direct, rel=1e-5, abs=1e-6)
    assert len(set(round(r, 4) for r in got)) == 4  # random weights, yet different answers score differently
    assert reward.__name__ == "boss"  # TRL logs it as rewards/boss/mean


def test_the_penalty_counts_hallucinated_statutes_and_logs_nhsr(tiny):
    from lawluo.law.checker import CitationChecker
    from lawluo.law.database import StatuteDB
    from lawluo.metrics.nhsr import NHSRMetric

    count = train_rl.HallucinatedStatutes(NHSRMetric(CitationChecker(StatuteDB(tiny["statutes"]))))
    logged = {}
    completions = [VERIFIED, WRONG_CONTENT + NO_SUCH_LAW, NUMBER_ONLY, "没有引用法条。"]
    got = count(prompts=["问"] * 4, completions=completions, log_metric=lambda k, v: logged.__setitem__(k, v))
    assert got == [0.0, 2.0, 0.0, 0.0]
    assert logged == {"nhsr": pytest.approx(1 / 3)}


@pytest.mark.parametrize("start", ["model", "sft_adapter"])
def test_the_script_trains_a_few_steps_against_the_boss_and_logs_rewards(tiny, tmp_path, start):
    from lawluo.llm.options import TransformersOptions
    from lawluo.llm.transformers_backend import TransformersBackend
    from training.reporting import RunLog

    out = tmp_path / "rl"
    argv = [
        "--model_name_or_path", str(tiny["lm"]),
        "--boss_model", str(tiny["reward"]),
        "--boss_device", "cpu",
        "--hallucination_penalty", "0.5",
        "--statutes", str(tiny["statutes"]),
        "--data_dir", str(tiny["data"]),
        "--dataset", "kinled_consult",
        "--max_samples", "4",
        "--num_generations", "2",
        "--per_device_train_batch_size", "4",
        "--max_completion_length", "8",
        "--max_steps", "2",
        "--learning_rate", "1e-3",
        "--bf16", "false",
        "--gradient_checkpointing", "false",
        "--logging_steps", "1",
        "--save_strategy", "no",
        "--report_to", "none",
        "--disable_tqdm", "true",
        "--output_dir", str(out),
    ]  # fmt: skip
    if (
        start == "sft_adapter"
    ):  # the SFT lawyer's LoRA adapter, trained further (a frozen copy is the KL reference)
        argv += ["--init_adapter", str(tiny["adapter"])]
    script_args, training_args, model_args = train_rl.make_parser().parse_args_and_config(argv)
    assert train_rl.main(script_args, training_args, model_args) == out
    assert training_args.reward_weights == [1.0, -0.5]
    steps = [m for m in RunLog(out).metrics() if "reward" in m]
    assert [m["step"] for m in steps] == [1, 2]
    for m in steps:
        assert m["rewards/boss/mean"] != 0.0 and m["rewards/hallucinated_statutes/mean"] == 0.0
        assert m["reward"] == pytest.approx(m["rewards/boss/mean"], abs=1e-5)  # no statute: no penalty
        assert "kl" in m and "loss" in m
    config = (out / "results" / "config.json").read_text(encoding="utf-8")
    assert '"boss_model"' in config and '"RLOOConfig"' in config
    assert '"train"' in (out / "results" / "data.json").read_text(encoding="utf-8")
    if start == "sft_adapter":
        assert (out / "adapter_model.safetensors").exists() and not (out / "ref").exists()
        options = TransformersOptions(model=str(tiny["lm"]), adapter=str(out), temperature=0, max_tokens=4)
    else:
        assert (out / "model.safetensors").exists()
        options = TransformersOptions(model=str(out), temperature=0, max_tokens=4)
    backend = TransformersBackend(options)
    assert isinstance(backend.chat([{"role": "user", "content": QUESTIONS[0]}]), str)


def test_the_gpu_recipe_parses():
    argv = ["--config", str(ROOT / "configs" / "training" / "rl-qwen2.5-7b.yaml"), "--bf16", "false"]
    script_args, training_args, model_args = train_rl.make_parser().parse_args_and_config(argv)
    assert model_args.load_in_4bit and model_args.use_peft and script_args.boss_model
    assert training_args.num_generations == 4 and training_args.max_completion_length == 512


def test_without_a_boss_the_script_says_what_to_configure(tiny, tmp_path):
    args = train_rl.RLArguments(boss_model=str(tmp_path / "missing"))
    with pytest.raises(ValueError, match="reward model|does not exist"):
        train_rl.load_boss(args)


def test_worked_examples_in_docstrings_hold():
    import doctest

    result = doctest.testmod(train_rl)
    assert result.attempted > 0 and result.failed == 0
