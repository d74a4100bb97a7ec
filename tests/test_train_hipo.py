"""HIPO (LegalHalBench §4.3, Algorithm 1, eq. 3): the hard-sample filter, the loss, the script end to end.

Everything runs offline on CPU with tiny random models built here (tests/fakes/tiny_lm.py,
tests/fakes/tiny_training.py) and a statute database of three articles.
"""

from __future__ import annotations

import math

import pytest

from tests.conftest import ROOT
from tests.fakes.tiny_lm import save_tiny_lm, save_tiny_lora_adapter
from tests.fakes.tiny_training import (
    NO_SUCH_LAW,
    NUMBER_ONLY,
    QUESTIONS,
    VERIFIED,
    WRONG_CONTENT,
    WRONG_NUMBER,
    save_tiny_encoder,
    write_tiny_consultations,
    write_tiny_statutes,
)
from training import hipo

pytestmark = pytest.mark.slow  # 14 s of the suite on 2 cores (4 s or more: left out of the inner loop)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """Paths of a tiny LM (+ a second one with other weights), encoder, statute DB and data folder."""
    base = tmp_path_factory.mktemp("hipo-tiny")
    return {
        "lm": save_tiny_lm(base / "lm", seed=0),
        "ref": save_tiny_lm(base / "ref", seed=1),
        "encoder": save_tiny_encoder(base / "encoder"),
        "statutes": write_tiny_statutes(base / "statutes"),
        "data": write_tiny_consultations(base / "data", n=4),
    }


@pytest.fixture(scope="module")
def metric(tiny):
    from lawluo.law.checker import CitationChecker
    from lawluo.law.database import StatuteDB
    from lawluo.metrics.nhsr import NHSRMetric

    return NHSRMetric(CitationChecker(StatuteDB(tiny["statutes"])))


# -- (a) the hard-sample filter ----------------------------------------------------------------------------
def test_the_filter_drops_exactly_the_answers_without_hallucination_that_are_similar():
    # (hallucinated statutes, similarity): only "none and similar" is dropped; similar = at least the threshold
    flags = [(0, 0.95), (0, 0.8), (0, 0.79), (1, 0.95), (3, 0.1), (0, -0.2)]
    keep = hipo.select_hard_samples([h for h, _ in flags], [s for _, s in flags], threshold=0.8)
    assert keep == [False, False, True, True, True, True]
    with pytest.raises(ValueError, match="similarities"):
        hipo.select_hard_samples([0, 1], [0.5], 0.8)


def test_judging_finds_hallucinated_statutes_with_the_checker_and_keeps_the_hard_samples(metric):
    generated = {
        VERIFIED: 0.90,  # real statute, similar: the model already answers well → dropped
        VERIFIED + "另外还有别的说法。": 0.20,  # real statute but far from the reference → kept
        WRONG_CONTENT: 0.95,  # content_mismatch, similar → kept
        NO_SUCH_LAW: 0.10,  # not_found → kept
        "公司拖欠工资，可以申请劳动仲裁。": 0.85,  # cites nothing, similar → dropped
        NUMBER_ONLY: 0.90,  # no_content is not a hallucination → dropped
        WRONG_NUMBER: 0.99,  # the content belongs to another article → kept
    }
    texts = list(generated)

    def fake_similarity(a, b):
        assert b == ["参考答案"] * len(texts)
        return [generated[t] for t in a]

    rows = hipo.judge_answers(metric, fake_similarity, texts, ["参考答案"] * len(texts), 0.8, progress=False)
    assert [r["hallucinated"] for r in rows] == [0, 0, 1, 1, 0, 0, 1]
    assert [r["keep"] for r in rows] == [False, True, True, True, False, False, True]
    assert [c["verdict"] for c in rows[2]["citations"]] == ["content_mismatch"]
    summary = hipo.round_summary(rows, 0.8)
    assert summary == {
        "generated": 7,
        "hallucinated": 3,
        "similar": 5,
        "kept": 4,
        "dropped": 3,
        "nhsr": pytest.approx(2 / 5),  # verified 2 of the 5 statutes that carry content
        "nhsr_macro": pytest.approx((1 + 1 + 0 + 0 + 0) / 5),
        "statutes": 5,
        "hallucinated_statutes": 3,
    }


def test_encoder_similarity_is_cosine_of_a_sentence_transformers_model(tiny):
    similarity = hipo.encoder_similarity(str(tiny["encoder"]), device="cpu")
    same, other = similarity([QUESTIONS[0], QUESTIONS[0]], [QUESTIONS[0], "合同"])
    assert same == pytest.approx(1.0, abs=1e-5)
    assert -1.0 <= other < 0.99


def test_worked_examples_in_docstrings_hold():
    import doctest

    from training import train_hipo

    for module in (hipo, train_hipo):
        result = doctest.testmod(module)
        assert result.attempted > 0 and result.failed == 0, module.__name__


# -- (b) the loss is eq. 3 -----------------------------------------------------------------------------------
def _sequence_logps(model, batch):
    """Σ log π(token) over each completion, and its length, with plain logits (not TRL's fused head)."""
    import torch

    logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
    logps = torch.log_softmax(logits[:, :-1].float(), dim=-1)
    token = logps.gather(-1, batch["input_ids"][:, 1:, None])[..., 0]
    mask = batch["completion_mask"][:, 1:].float()
    return (token * mask).sum(1), mask.sum(1)


def test_the_loss_is_dpo_plus_the_indicator_weighted_length_normalised_nll_of_the_chosen_answer(
    tiny, tmp_path
):
    import torch
    import torch.nn.functional as F
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import DPOConfig

    beta = 0.5
    rows = [
        {"q": QUESTIONS[0], "w": VERIFIED, "l": WRONG_CONTENT, "i": 1.0},
        {"q": QUESTIONS[1], "w": "可以。", "l": "不可以，公司说了算。", "i": 0.0},
        {"q": QUESTIONS[2], "w": "有补偿，按工作年限计算。", "l": NO_SUCH_LAW, "i": 1.0},
    ]
    dataset = Dataset.from_list(
        [
            {
                "prompt": [{"role": "user", "content": r["q"]}],
                "chosen": [{"role": "assistant", "content": r["w"]}],
                "rejected": [{"role": "assistant", "content": r["l"]}],
                "hallucinated": r["i"],
                "id": f"row-{n}",  # an extra column the trainer must drop, while keeping "hallucinated"
            }
            for n, r in enumerate(rows)
        ]
    )
    tokenizer = AutoTokenizer.from_pretrained(tiny["lm"])
    policy = AutoModelForCausalLM.from_pretrained(tiny["lm"])
    ref = AutoModelForCausalLM.from_pretrained(tiny["ref"])  # other weights: the DPO term is not log 2
    args = DPOConfig(
        output_dir=str(tmp_path),
        beta=beta,
        per_device_train_batch_size=3,
        max_length=256,
        bf16=False,
        gradient_checkpointing=False,
        report_to="none",
    )
    trainer = hipo.hipo_trainer_class()(
        model=policy, ref_model=ref, args=args, train_dataset=dataset, processing_class=tokenizer
    )
    batch = next(iter(trainer.get_train_dataloader()))
    assert set(batch) >= {"input_ids", "completion_mask", "hallucinated"}
    trainer.model.train()  # as in a training step (TRL has switched dropout off)
    loss = trainer.compute_loss(trainer.model, batch)

    with torch.no_grad():
        pi, lengths = _sequence_logps(policy, batch)
        ref_logps, _ = _sequence_logps(ref, batch)
    pi_w, pi_l = pi.chunk(2)
    ref_w, ref_l = ref_logps.chunk(2)
    n_w = lengths.chunk(2)[0]
    indicator = batch["hallucinated"]
    dpo = -F.logsigmoid(beta * ((pi_w - ref_w) - (pi_l - ref_l)))
    nll = -pi_w / n_w
    expected = (dpo + indicator * nll).mean()
    assert sorted(indicator.tolist()) == [0.0, 1.0, 1.0]
    assert loss.item() == pytest.approx(expected.item(), rel=1e-4, abs=1e-5)
    assert abs(expected.item() - dpo.mean().item()) > 0.5  # the NLL term is really there
    assert abs(dpo.mean().item() - math.log(2)) > 1e-3  # and the reference is really another model
    logged = trainer._metrics["train"]
    assert logged["hipo/hallucinated"][-1] == pytest.approx(2 / 3)
    assert logged["hipo/nll_term"][-1] == pytest.approx((indicator * nll).mean().item(), rel=1e-4)


# -- (c) the script end to end ------------------------------------------------------------------------------
def _argv(tiny, out, *extra):
    return [
        "--model_name_or_path", str(tiny["lm"]),
        "--similarity_model", str(tiny["encoder"]),
        "--statutes", str(tiny["statutes"]),
        "--data_dir", str(tiny["data"]),
        "--dataset", "kinled_consult",
        "--max_samples", "4",
        "--max_new_tokens", "12",
        "--temperature", "0",
        "--max_steps", "4",
        "--per_device_train_batch_size", "4",
        "--learning_rate", "2e-3",
        "--beta", "0.1",
        "--max_length", "96",
        "--use_peft", "true",
        "--lora_r", "4",
        "--lora_alpha", "8",
        "--lora_target_modules", "q_proj", "v_proj",
        "--bf16", "false",
        "--gradient_checkpointing", "false",
        "--logging_steps", "1",
        "--save_strategy", "no",
        "--report_to", "none",
        "--disable_tqdm", "true",
        "--output_dir", str(out),
        *extra,
    ]  # fmt: skip


def _run(argv):
    from training import train_hipo

    return train_hipo.main(*train_hipo.make_parser().parse_args_and_config(argv))


def test_the_script_runs_two_rounds_resumes_at_the_unfinished_one_and_saves_loadable_models(tiny, tmp_path):
    from lawluo.llm.options import TransformersOptions
    from lawluo.llm.transformers_backend import TransformersBackend
    from training.reporting import RunLog

    out = tmp_path / "hipo"
    # similarity 1.0 is reached only by a copy of the reference: every answer of the tiny model is hard
    assert _run(_argv(tiny, out, "--num_rounds", "1", "--similarity_threshold", "1.0")) == out / "round-1"
    generations_1 = out / "round-1" / "generations.jsonl"
    first_write = generations_1.stat().st_mtime_ns

    # the same command with more rounds: round 1 is skipped, round 2 trains against round 1's model
    assert _run(_argv(tiny, out, "--num_rounds", "2", "--similarity_threshold", "1.0")) == out / "round-2"
    assert generations_1.stat().st_mtime_ns == first_write
    lines = RunLog(out).metrics()
    rounds = [m for m in lines if m.get("event") == "hard_samples"]
    assert [m["round"] for m in rounds] == [1, 2]
    for m in rounds:
        assert m["generated"] == 4 and m["kept"] + m["dropped"] == 4 and m["kept"] == 4
        assert {"hallucinated", "similar", "nhsr"} <= set(m)
    losses = {r: [m["loss"] for m in lines if m.get("round") == r and "loss" in m] for r in (1, 2)}
    assert len(losses[1]) == len(losses[2]) == 4
    assert losses[1][-1] < losses[1][0]  # the loss goes down within a round
    # round 2 starts at log 2: its policy and its reference are both round 1's model (and I(y_l) = 0 here)
    assert losses[2][0] == pytest.approx(math.log(2), abs=1e-4)
    assert [m["round"] for m in lines if m.get("event") == "round_done"] == [1, 2]
    data = (out / "results" / "data.json").read_text(encoding="utf-8")
    assert '"questions"' in data and '"round-1"' in data and '"round-2"' in data

    # the same command again: nothing left to do
    before = len(lines)
    assert _run(_argv(tiny, out, "--num_rounds", "2", "--similarity_threshold", "1.0")) == out / "round-2"
    assert len(RunLog(out).metrics()) == before

    # each round's adapter loads in lawluo's transformers backend on top of the base model
    for r in (1, 2):
        assert (out / f"round-{r}" / "adapter_model.safetensors").exists()
        assert not (out / f"round-{r}" / "ref").exists()  # TRL's frozen reference copy is not saved
        backend = TransformersBackend(
            TransformersOptions(
                model=str(tiny["lm"]),
                adapter=str(out / f"round-{r}"),
                temperature=0,
                max_tokens=4,
                device="cpu",
            )
        )
        assert isinstance(backend.chat([{"role": "user", "content": QUESTIONS[0]}]), str)


def test_without_lora_each_round_saves_a_full_model_that_lawluo_loads(tiny, tmp_path):
    from lawluo.llm.options import TransformersOptions
    from lawluo.llm.transformers_backend import TransformersBackend

    out = tmp_path / "hipo-full"
    argv = _argv(
        tiny,
        out,
        "--num_rounds",
        "1",
        "--similarity_threshold",
        "1.0",
        "--use_peft",
        "false",
        "--max_steps",
        "2",
    )
    assert _run(argv) == out / "round-1"
    assert (out / "round-1" / "model.safetensors").exists() and (out / "round-1" / "tokenizer.json").exists()
    backend = TransformersBackend(
        TransformersOptions(model=str(out / "round-1"), temperature=0, max_tokens=4, device="cpu")
    )
    assert isinstance(backend.chat([{"role": "user", "content": QUESTIONS[0]}]), str)


def test_round_one_continues_an_sft_adapter_with_a_frozen_copy_of_it_as_the_reference(tiny, tmp_path):
    from training.reporting import RunLog

    adapter = save_tiny_lora_adapter(tiny["lm"], tmp_path / "sft-adapter")  # random non-zero LoRA weights
    out = tmp_path / "hipo"
    argv = _argv(
        tiny, out, "--num_rounds", "1", "--similarity_threshold", "1.0", "--init_adapter", str(adapter)
    )
    assert _run([*argv, "--max_steps", "2"]) == out / "round-1"
    losses = [m["loss"] for m in RunLog(out).metrics() if "loss" in m]
    # log 2 at the first step: the reference is the SFT adapter itself, not the base model under it
    assert losses[0] == pytest.approx(math.log(2), abs=1e-4)


def test_the_gpu_recipe_parses():
    from training import train_hipo

    argv = ["--config", str(ROOT / "configs" / "training" / "hipo-qwen2.5-7b.yaml"), "--bf16", "false"]
    script_args, training_args, model_args = train_hipo.make_parser().parse_args_and_config(argv)
    assert model_args.load_in_4bit and model_args.use_peft and script_args.num_rounds == 3
    assert training_args.beta == 0.1 and training_args.output_dir == "outputs/hipo-qwen2.5-7b"


def test_a_round_without_hard_samples_ends_the_run_without_training(tiny, tmp_path):
    from training.reporting import RunLog

    out = tmp_path / "hipo"
    # similarity ≥ -1 always: every answer is similar, none cites a hallucinated statute → all dropped
    assert _run(_argv(tiny, out, "--num_rounds", "2", "--similarity_threshold", "-1.0")) is None
    assert not (out / "round-1" / "round.json").exists()
    [line] = [m for m in RunLog(out).metrics() if m.get("event") == "hard_samples"]
    assert (line["kept"], line["dropped"]) == (0, 4)
    assert not any("loss" in m for m in RunLog(out).metrics())


def test_bad_settings_fail_with_the_reason(tiny, tmp_path):
    from training import train_hipo

    with pytest.raises(ValueError, match="unknown dataset"):
        train_hipo.make_parser().parse_args_and_config(_argv(tiny, tmp_path, "--dataset", "nope"))
    with pytest.raises(ValueError, match="cosine"):
        train_hipo.make_parser().parse_args_and_config(_argv(tiny, tmp_path, "--similarity_threshold", "1.5"))
