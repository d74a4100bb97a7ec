"""The boss's reward model (LawLuo §3.2, eq. 6): training/train_boss.py with binary cross-entropy on a tiny
random Qwen2 classifier built here — the loss goes down, training resumes, and the saved model, loaded
by the app's reward_model backend, gives the boss P(better) that ranks the better answers first."""

from __future__ import annotations

import json

import pytest

from lawluo.agents.boss import Boss
from lawluo.llm.options import RewardModelOptions
from lawluo.llm.reward_backend import RewardModelBackend, encode_pair

from .fakes.tiny_lm import build_tiny_tokenizer, tiny_qwen2_config

pytestmark = pytest.mark.slow  # 13 s of the suite on 2 cores (4 s or more: left out of the inner loop)

pytest.importorskip("torch")
pytest.importorskip("trl")

QUESTIONS = [
    "我的房东不退押金，我该怎么办？",
    "公司拖欠工资怎么办？",
    "用人单位解除劳动合同要赔偿吗？",
    "借钱不还可以起诉吗？",
    "合同违约怎么处理？",
    "工伤怎么赔偿？",
    "邻居装修漏水谁负责？",
    "离婚财产怎么分？",
]
BETTER = "根据《民法典》的规定，当事人对自己提出的主张，有责任提供证据，应当遵循诚信原则。"
WORSE = "What should I do?"


def labelled_rows() -> list[dict]:
    return [
        {"question": q, "answer": answer, "label": label}
        for q in QUESTIONS
        for answer, label in ((BETTER + q[:2], "better"), (WORSE, "worse"))
    ]


def save_tiny_classifier(path, seed: int = 0):
    import torch
    from transformers import Qwen2ForSequenceClassification

    tokenizer = build_tiny_tokenizer()
    torch.manual_seed(seed)
    Qwen2ForSequenceClassification(tiny_qwen2_config(tokenizer, num_labels=1)).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def boss_args(out, outputs, max_steps: int, resume: bool = False, **model):
    from training import train_boss as tb

    data_args = tb.BossDataArguments(labelled_outputs=[str(outputs)], eval_fraction=0.25)
    training_args = tb.BossConfig(
        output_dir=str(out),
        max_steps=max_steps,
        per_device_train_batch_size=4,
        learning_rate=2e-3,
        lr_scheduler_type="constant",
        logging_steps=1,
        save_steps=4,
        seed=0,
        max_length=128,
        disable_tqdm=True,
        report_to="none",
        resume_from_checkpoint="true" if resume else None,
    )
    return data_args, training_args, tb.BossModelConfig(**model)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """8 steps (checkpoints at 4 and 8), then resumed to 12; the model saved in ``out``."""
    from training import train_boss as tb

    root = tmp_path_factory.mktemp("boss")
    base = save_tiny_classifier(root / "base")
    outputs = root / "labelled.jsonl"
    outputs.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in labelled_rows()), encoding="utf-8"
    )
    out = root / "rm"
    tb.main(*boss_args(out, outputs, 8, model_name_or_path=str(base)))
    first = [json.loads(line) for line in (out / "results" / "metrics.jsonl").read_text().splitlines()]
    trainer = tb.main(*boss_args(out, outputs, 12, resume=True, model_name_or_path=str(base)))
    metrics = [json.loads(line) for line in (out / "results" / "metrics.jsonl").read_text().splitlines()]
    yield {
        "out": out,
        "base": base,
        "first": first,
        "metrics": metrics,
        "trainer": trainer,
        "outputs": outputs,
    }
    from lawluo.llm.local_loading import clear_model_cache

    clear_model_cache()


def losses(metrics):
    return [m["loss"] for m in metrics if "loss" in m]


def test_the_bce_loss_goes_down(trained):
    logged = losses(trained["first"])
    assert len(logged) == 8 and sum(logged[-2:]) < 0.5 * sum(logged[:2])


def test_training_resumes_from_the_last_checkpoint(trained):
    steps = [m["step"] for m in trained["metrics"] if "loss" in m]
    assert steps == list(range(1, 13)) and trained["trainer"].state.global_step == 12
    assert (trained["out"] / "checkpoint-12").is_dir()
    assert any("eval_accuracy" in m for m in trained["metrics"])


def test_the_boss_loads_the_model_and_prefers_the_better_answers(trained):
    boss = Boss(
        RewardModelBackend(RewardModelOptions(model=str(trained["out"]), device="cpu", max_length=128))
    )
    for q in QUESTIONS:
        better, worse = boss.score(q, BETTER + q[:2]), boss.score(q, WORSE)
        assert better.method == "reward_model" and 0 < worse.p_better < better.p_better < 1
    best, _ = boss.best_of(QUESTIONS[0], [WORSE, BETTER + QUESTIONS[0][:2]])
    assert best == 1


def test_the_app_scores_what_the_trained_model_scored(trained):
    diffs = [m["app_score_max_abs_diff"] for m in trained["metrics"] if "app_score_max_abs_diff" in m]
    assert len(diffs) == 2 and max(diffs) < 1e-4


def test_training_inputs_are_the_reward_backends(trained):
    from training import train_boss as tb

    tokenizer = trained["trainer"].processing_class
    row = {"question": QUESTIONS[0], "answer": BETTER, "kind": "answer"}
    assert tb.boss_input(tokenizer, row, 64) == encode_pair(tokenizer, QUESTIONS[0], BETTER, 64)
    long = {
        "question": QUESTIONS[0],
        "answer": "证" * 7000,
        "kind": "answer",
    }  # past the boss's 6,000 characters
    assert tb.boss_input(tokenizer, long, 10**6) == encode_pair(tokenizer, QUESTIONS[0], "证" * 6000, 10**6)
    report = {"question": QUESTIONS[0], "answer": "证" * 13000, "kind": "report"}  # reports: 12,000
    assert tb.boss_input(tokenizer, report, 10**6) == encode_pair(
        tokenizer, QUESTIONS[0], "证" * 12000, 10**6
    )


def test_lora_is_merged_into_a_model_the_app_loads(trained, tmp_path):
    from training import train_boss as tb

    out = tmp_path / "rm-lora"
    args = boss_args(out, trained["outputs"], 4, model_name_or_path=str(trained["base"]), use_peft=True)
    args[2].lora_target_modules = ["q_proj", "v_proj"]
    tb.main(*args)
    assert not (out / "adapter_config.json").exists()
    metrics = [json.loads(line) for line in (out / "results" / "metrics.jsonl").read_text().splitlines()]
    assert [m["app_score_max_abs_diff"] for m in metrics if "app_score_max_abs_diff" in m][0] < 1e-4
    score = Boss(RewardModelBackend(RewardModelOptions(model=str(out), device="cpu"))).score(
        QUESTIONS[1], BETTER
    )
    assert 0 < score.p_better < 1


def test_no_labelled_outputs_is_a_clear_error(tmp_path):
    from training import train_boss as tb

    with pytest.raises(ValueError, match="no labelled outputs"):
        tb.load_reward_rows(tb.BossDataArguments(), seed=0)
    with pytest.raises(ValueError, match="needs --annotation_items"):
        tb.BossDataArguments(annotation_labels=["labels.csv"])
