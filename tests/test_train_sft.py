"""LoRA SFT of the lawyer (LawLuo §3.1, §4): training/train_lawyer_sft.py on a tiny random Qwen2 built
here — only the lawyer's tokens carry labels (TRL's generation markers, and this script's own masks for
a template TRL cannot patch), the loss goes down, training resumes, the adapter loads in the app's
transformers backend and makes the trained answers likelier; 4-bit is refused without a GPU."""

from __future__ import annotations

import json
import sys

import pytest

from lawluo.llm.options import TransformersOptions
from lawluo.llm.transformers_backend import TransformersBackend, clear_model_cache

from .conftest import ROOT
from .fakes.tiny_lm import CHATML_TEMPLATE, save_tiny_lm

pytestmark = pytest.mark.slow  # 5 s of the suite on 2 cores (4 s or more: left out of the inner loop)

pytest.importorskip("torch")
pytest.importorskip("peft")
pytest.importorskip("trl")

#: ChatML with ``{% generation %}`` around each assistant answer and its end-of-turn token.
GENERATION_TEMPLATE = (
    "{% for message in messages %}"
    "{% if message['role'] == 'assistant' %}"
    "{{ '<|im_start|>assistant\n' }}{% generation %}{{ message['content'] + '<|im_end|>' }}{% endgeneration %}"
    "{{ '\n' }}"
    "{% else %}{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>\n' }}{% endif %}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)
ANSWER = "当事人对自己提出的主张，有责任提供证据。"
DIALOGUE = [
    "[客户] 公司拖欠工资怎么办？",
    "[律师] 用人单位应当支付工资。",
    "[客户] 没签劳动合同呢？",
    "[律师] 劳动者与用人单位订立劳动合同。",
    "[客户] 谢谢",
]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """A tiny chat model with a marked template, one with plain ChatML, and a shared-data folder of 12
    single-turn KINLED consultations and 4 lawyer-llama dialogues."""
    root = tmp_path_factory.mktemp("sft")
    data = root / "data"
    (data / "lawluo_kinled").mkdir(parents=True)
    (data / "lawyer_llama").mkdir()
    kinled = [{"question": f"我的房东不退押金，我该怎么办？第{i}次", "answer": ANSWER} for i in range(12)]
    (data / "lawluo_kinled" / "consult_995.json").write_text(
        json.dumps(kinled, ensure_ascii=False), encoding="utf-8"
    )
    counsel = [{"query": "公司拖欠工资怎么办？", "laws": [], "history": DIALOGUE}] * 4
    (data / "lawyer_llama" / "legal_counsel_multi_turn_with_article_v2.jsonl").write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in counsel), encoding="utf-8"
    )
    yield {
        "root": root,
        "data": data,
        "base": save_tiny_lm(root / "lm", chat_template=GENERATION_TEMPLATE),
        "plain": save_tiny_lm(root / "plain", chat_template=CHATML_TEMPLATE),
    }
    clear_model_cache()


def sft_args(tiny, out, *, base="base", max_steps=12, resume=False, **data):
    from training import train_lawyer_sft as ts

    data_args = ts.LawyerDataArguments(
        data_dir=str(tiny["data"]), sources=["kinled_consult", "legal_counsel_mt"], **data
    )
    training_args = ts.LawyerSFTConfig(
        output_dir=str(out),
        max_steps=max_steps,
        learning_rate=5e-3,
        lr_scheduler_type="constant",
        logging_steps=1,
        save_steps=6,
        max_length=256,
        bf16=False,
        gradient_checkpointing=False,
        disable_tqdm=True,
        report_to="none",
        seed=0,
        resume_from_checkpoint="true" if resume else None,
    )
    return data_args, training_args, ts.LawyerModelConfig(model_name_or_path=str(tiny[base]))


def labelled_text(trainer, source: str) -> tuple[str, list]:
    """The decoded labelled tokens of the first example whose text contains ``source``'s marker, and its labels."""
    tokenizer = trainer.processing_class
    for row in trainer.train_dataset:
        text = tokenizer.decode(row["input_ids"])
        if source in text:
            kept = [t for t, label in zip(row["input_ids"], row["labels"], strict=True) if label != -100]
            return tokenizer.decode(kept), row["labels"]
    raise AssertionError(f"no example with {source!r}")


def test_only_the_lawyers_turns_are_labelled_with_generation_markers(tiny, tmp_path):
    from training import train_lawyer_sft as ts

    trainer = ts.build_trainer(*sft_args(tiny, tmp_path / "out"))
    assert trainer.loss_mask_mode == "trl"
    text, labels = labelled_text(trainer, "拖欠工资")
    assert text == "用人单位应当支付工资。<|im_end|>劳动者与用人单位订立劳动合同。<|im_end|>"
    assert labels[0] == -100  # <|im_start|> of the client's turn
    assert labelled_text(trainer, "押金")[0] == ANSWER + "<|im_end|>"


def test_a_template_trl_cannot_patch_is_masked_by_prefixes(tiny, tmp_path):
    from training import train_lawyer_sft as ts

    trainer = ts.build_trainer(*sft_args(tiny, tmp_path / "out", base="plain"))
    assert trainer.loss_mask_mode == "prefix"
    text, _ = labelled_text(trainer, "拖欠工资")
    assert text == "用人单位应当支付工资。<|im_end|>\n劳动者与用人单位订立劳动合同。<|im_end|>\n"


@pytest.fixture(scope="module")
def trained(tiny):
    """12 steps (checkpoints at 6 and 12), then resumed to 16."""
    from training import train_lawyer_sft as ts

    out = tiny["root"] / "adapter"
    ts.main(*sft_args(tiny, out))
    first = [json.loads(line) for line in (out / "results" / "metrics.jsonl").read_text().splitlines()]
    trainer = ts.main(*sft_args(tiny, out, max_steps=16, resume=True))
    metrics = [json.loads(line) for line in (out / "results" / "metrics.jsonl").read_text().splitlines()]
    return {"out": out, "first": first, "metrics": metrics, "trainer": trainer}


def test_the_loss_goes_down(trained):
    logged = [m["loss"] for m in trained["first"] if "loss" in m]
    assert len(logged) == 12 and sum(logged[-2:]) < 0.6 * sum(logged[:2])


def test_training_resumes_from_the_last_checkpoint(trained):
    steps = [m["step"] for m in trained["metrics"] if "loss" in m]
    assert steps == list(range(1, 17)) and trained["trainer"].state.global_step == 16
    config = json.loads((trained["out"] / "results" / "config.json").read_text())
    assert config["LoraConfig"]["r"] == 16 and config["LoraConfig"]["lora_alpha"] == 32
    assert config["LoraConfig"]["lora_dropout"] == 0.05 and config["loss_mask"] == "trl"
    data = json.loads((trained["out"] / "results" / "data.json").read_text())
    assert data["train"]["rows"] == 16 and data["by_source"] == {"kinled_consult": 12, "legal_counsel_mt": 4}


def test_the_app_loads_the_adapter_and_it_learned_the_answers(tiny, trained):
    import torch
    from peft import PeftModel

    ask = [{"role": "user", "content": "我的房东不退押金，我该怎么办？第3次"}]
    base = TransformersBackend(TransformersOptions(model=str(tiny["base"]), temperature=0, max_tokens=12))
    tuned = TransformersBackend(
        TransformersOptions(
            model=str(tiny["base"]), adapter=str(trained["out"]), temperature=0, max_tokens=12
        )
    )
    assert isinstance(tuned.load().model, PeftModel) and tuned.chat(ask).strip()

    def answer_loss(backend) -> float:
        loaded = backend.load()
        tokenizer = loaded.tokenizer
        prompt = tokenizer.apply_chat_template(
            ask, add_generation_prompt=True, tokenize=True, return_dict=False
        )
        answer = tokenizer(ANSWER + "<|im_end|>", add_special_tokens=False)["input_ids"]
        ids = torch.tensor([list(prompt) + answer])
        labels = ids.clone()
        labels[0, : len(prompt)] = -100
        with torch.inference_mode():
            return float(loaded.model(input_ids=ids, labels=labels).loss)

    assert answer_loss(tuned) < 0.5 * answer_loss(base)


def test_4bit_is_refused_without_a_gpu():
    import torch

    from training import train_lawyer_sft as ts

    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    with pytest.raises(SystemExit, match="needs a CUDA GPU"):
        ts.check_quantization(ts.LawyerModelConfig(model_name_or_path="x", load_in_4bit=True))


def test_general_data_is_mixed_in_at_the_ratio(tiny, tmp_path):
    from training import train_lawyer_sft as ts

    general = tmp_path / "alpaca.jsonl"
    general.write_text(
        "".join(
            json.dumps({"instruction": f"写一句话{i}", "input": "", "output": "好的。"}) + "\n"
            for i in range(20)
        ),
        encoding="utf-8",
    )
    args = ts.LawyerDataArguments(
        data_dir=str(tiny["data"]), sources=["kinled_consult"], mix_dataset=str(general), mix_ratio=0.5
    )
    train, evaluation, counts = ts.load_sft_data(args, seed=0)
    assert counts["general_examples"] == 6 and len(train) == 18 and evaluation is None
    general_rows = [r for r in train if r["source"] == "general"]
    assert general_rows[0]["messages"][-1] == {"role": "assistant", "content": "好的。"}
    with pytest.raises(ValueError, match="--mix_dataset together with a positive --mix_ratio"):
        ts.LawyerDataArguments(mix_ratio=0.3)


RECIPES = [
    ROOT / "configs" / "training" / name
    for name in ("lawyer_sft_qwen2.5-7b.yaml", "boss_reward_qwen2.5-1.5b.yaml", "receptionist_encoder.yaml")
]


@pytest.mark.parametrize("config", RECIPES, ids=lambda p: p.name)
def test_the_gpu_recipes_parse(config, monkeypatch):
    """Every recipe names only flags its script knows and passes its checks (parsed, not run; --use_cpu
    because transformers refuses bf16 where there is no GPU)."""
    import importlib

    name = config.read_text(encoding="utf-8").split("# script: training/")[1].split(".py")[0]
    script = importlib.import_module(f"training.{name}")
    argv = [script.__file__, "--config", str(config), "--output_dir", "/tmp/unused", "--use_cpu", "true"]
    monkeypatch.setattr(sys, "argv", argv)
    parsed = script.make_parser().parse_args_and_config()
    assert parsed[1].output_dir == "/tmp/unused" and parsed[1].bf16
    assert getattr(parsed[2], "model_name_or_path", None)
