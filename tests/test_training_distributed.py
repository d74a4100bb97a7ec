"""Training that scales out (issue 22, item 7): the training scripts run unchanged under ``accelerate launch``.

Two processes on CPU joined by gloo (``configs/training/accelerate_cpu_2proc.yaml``) run the real scripts
as modules on a tiny random Qwen2 built here: LoRA SFT of the lawyer, then one HIPO round (DPO + eq. 3)
starting from that adapter. Each process records the ids of the examples its trainer handed it
(``LAWLUO_RECORD_EXAMPLES``, ``training/distributed.py``): both processes trained, on disjoint shards that
together are the whole training set; only the main process wrote the results; the saved adapters load in
the app's transformers backend and change its answers. HIPO's generation step also samples from an
OpenAI-compatible server (the fake on loopback), and the accelerate/DeepSpeed configs parse.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lawluo.llm.options import TransformersOptions
from lawluo.llm.transformers_backend import TransformersBackend, clear_model_cache

from .conftest import ROOT
from .fakes.openai_server import Emulation, FakeOpenAIServer
from .fakes.tiny_lm import save_tiny_lm
from .fakes.tiny_training import VERIFIED, WRONG_CONTENT, save_tiny_encoder, write_tiny_statutes

pytestmark = pytest.mark.slow  # 25 s of the suite on 2 cores (4 s or more: left out of the inner loop)

pytest.importorskip("torch")
pytest.importorskip("peft")
pytest.importorskip("trl")
pytest.importorskip("accelerate")

CONFIGS = ROOT / "configs" / "training"
N = 8  # questions: 2 processes × batch 2 × 2 steps, each example once
QUESTIONS = [f"公司拖欠工资怎么办？第{i}次" for i in range(N)]
COMMON = [
    "--max_steps", "2", "--per_device_train_batch_size", "2", "--learning_rate", "5e-3",
    "--max_length", "256", "--bf16", "false", "--gradient_checkpointing", "false", "--logging_steps", "1",
    "--report_to", "none", "--disable_tqdm", "true", "--save_strategy", "no", "--seed", "0",
]  # fmt: skip


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(module: str, args: list[str], record: Path, timeout: int = 300) -> float:
    """``accelerate launch`` of ``python -m module`` in 2 CPU processes; its wall time in seconds."""
    command = [
        sys.executable, "-m", "accelerate.commands.launch",
        "--config_file", str(CONFIGS / "accelerate_cpu_2proc.yaml"),
        "--main_process_port", str(free_port()), "-m", module, *args, *COMMON, "--use_cpu", "true",
    ]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "CUDA_VISIBLE_DEVICES")}
    env |= {"LAWLUO_RECORD_EXAMPLES": str(record), "OMP_NUM_THREADS": "1", "CUDA_VISIBLE_DEVICES": ""}
    start = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    return time.perf_counter() - start


def seen(record: Path, name: str) -> dict[int, list[str]]:
    """The ids each rank recorded for the trainer ``name``."""
    out = {}
    for rank in (0, 1):
        path = record / f"{name}-rank{rank}.jsonl"
        out[rank] = [i for line in path.read_text().splitlines() for i in json.loads(line)["ids"]]
    return out


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """A tiny LM, encoder, statute database and a data folder of N answered questions."""
    root = tmp_path_factory.mktemp("distributed")
    data = root / "data"
    (data / "lawluo_kinled").mkdir(parents=True)
    rows = [{"question": q, "answer": f"{VERIFIED}您可以要求单位支付。"} for q in QUESTIONS]
    (data / "lawluo_kinled" / "consult_995.json").write_text(json.dumps(rows, ensure_ascii=False), "utf-8")
    yield {
        "root": root,
        "data": data,
        "lm": save_tiny_lm(root / "lm"),
        "encoder": save_tiny_encoder(root / "encoder"),
        "statutes": write_tiny_statutes(root / "statutes"),
    }
    clear_model_cache()


@pytest.fixture(scope="module")
def runs(tiny):
    """SFT, then HIPO from the SFT adapter: each under ``accelerate launch`` in 2 CPU processes."""
    root, runs = tiny["root"], dict(tiny, record=tiny["root"] / "record")
    base = ["--model_name_or_path", str(tiny["lm"]), "--data_dir", str(tiny["data"])]
    runs["sft"] = root / "sft"
    sft_seconds = launch(
        "training.train_lawyer_sft",
        [*base, "--sources", "kinled_consult", "--output_dir", str(runs["sft"])],
        runs["record"],
    )
    runs["hipo"] = root / "hipo"
    hipo_seconds = launch(
        "training.train_hipo",
        [
            *base,
            "--dataset",
            "kinled_consult",
            "--init_adapter",
            str(runs["sft"]),
            "--similarity_model",
            str(tiny["encoder"]),
            "--statutes",
            str(tiny["statutes"]),
            "--similarity_threshold",
            "1.0",
            "--num_rounds",
            "1",
            "--max_new_tokens",
            "8",
            "--generation_batch_size",
            "4",
            "--output_dir",
            str(runs["hipo"]),
        ],  # fmt: skip
        runs["record"],
    )
    print(f"accelerate launch, 2 CPU processes: SFT {sft_seconds:.1f} s, HIPO {hipo_seconds:.1f} s")
    return runs


def test_sft_under_two_processes_trains_each_on_its_own_shard(runs):
    from training import train_lawyer_sft as ts

    ranks = seen(runs["record"], "sft")
    assert len(ranks[0]) == len(ranks[1]) == N // 2
    assert set(ranks[0]).isdisjoint(ranks[1])
    data_args = ts.LawyerDataArguments(data_dir=str(runs["data"]), sources=["kinled_consult"])
    train, _, _ = ts.load_sft_data(data_args, seed=0)
    assert set(ranks[0]) | set(ranks[1]) == set(train["id"])
    metrics = [json.loads(x) for x in (runs["sft"] / "results" / "metrics.jsonl").read_text().splitlines()]
    assert [m["step"] for m in metrics if "loss" in m] == [1, 2]  # logged once, by the main process
    assert json.loads((runs["sft"] / "results" / "data.json").read_text())["train"]["rows"] == N


def test_hipo_under_two_processes_judges_once_and_trains_each_on_its_own_shard(runs):
    generations = [
        json.loads(x) for x in (runs["hipo"] / "round-1" / "generations.jsonl").read_text().splitlines()
    ]
    assert sorted(g["question"] for g in generations) == sorted(QUESTIONS)  # each question answered once
    kept = {g["id"] for g in generations if g["keep"]}
    assert len(kept) == N
    ranks = seen(runs["record"], "hipo-round-1")
    assert len(ranks[0]) == len(ranks[1]) == N // 2
    assert set(ranks[0]).isdisjoint(ranks[1]) and set(ranks[0]) | set(ranks[1]) == kept
    events = [json.loads(x) for x in (runs["hipo"] / "results" / "metrics.jsonl").read_text().splitlines()]
    assert [e.get("event") for e in events if "event" in e] == ["hard_samples", "round_done"]
    assert json.loads((runs["hipo"] / "round-1" / "round.json").read_text())["steps"] == 2


def _logits(backend, question: str):
    import torch

    loaded = backend.load()
    ids = loaded.tokenizer.apply_chat_template(
        [{"role": "user", "content": question}], add_generation_prompt=True, tokenize=True, return_dict=False
    )
    with torch.inference_mode():
        return loaded.model(input_ids=torch.tensor([list(ids)])).logits[0, -1]


@pytest.mark.parametrize("adapter", ["sft", "hipo"])
def test_the_app_loads_the_adapter_trained_by_two_processes(runs, adapter):
    import torch
    from peft import PeftModel

    path = runs["sft"] if adapter == "sft" else runs["hipo"] / "round-1"
    options = dict(model=str(runs["lm"]), temperature=0, max_tokens=8)
    base = TransformersBackend(TransformersOptions(**options))
    tuned = TransformersBackend(TransformersOptions(**options, adapter=str(path)))
    assert isinstance(tuned.load().model, PeftModel)
    assert tuned.chat([{"role": "user", "content": QUESTIONS[0]}]).strip()
    assert not torch.allclose(_logits(base, QUESTIONS[0]), _logits(tuned, QUESTIONS[0]), atol=1e-4)


# -- HIPO's generation step on an OpenAI-compatible server (one process) ---------------------------------
def test_hipo_samples_round_one_from_a_server_and_asks_it_to_load_the_next_adapter(tiny, tmp_path):
    from training import train_hipo

    with FakeOpenAIServer(emulate=Emulation.vllm()) as server:
        server.responder = lambda body: WRONG_CONTENT  # a hallucinated statute for every question
        flags = [
            "--model_name_or_path", str(tiny["lm"]), "--data_dir", str(tiny["data"]),
            "--dataset", "kinled_consult", "--use_peft", "true", "--lora_r", "4",
            "--similarity_model", str(tiny["encoder"]), "--statutes", str(tiny["statutes"]),
            "--num_rounds", "2", "--max_new_tokens", "128", "--temperature", "0.5",
            "--generation_base_url", server.url, "--generation_model", "lawluo-lawyer",
            "--generation_concurrency", "4", "--output_dir", str(tmp_path / "hipo"),
            *COMMON,
        ]  # fmt: skip
        parsed = train_hipo.make_parser().parse_args_and_config(flags)
        with pytest.raises(SystemExit, match="VLLM_ALLOW_RUNTIME_LORA_UPDATING"):
            train_hipo.main(*parsed)
        requests = server.requests
    asked = [r for r in requests if "messages" in r]
    assert len(asked) == N and {r["model"] for r in asked} == {"lawluo-lawyer"}
    assert {r["messages"][-1]["content"] for r in asked} == set(QUESTIONS)
    assert {r["temperature"] for r in asked} == {0.5} and {r["max_tokens"] for r in asked} == {128}
    generations = (tmp_path / "hipo" / "round-1" / "generations.jsonl").read_text().splitlines()
    assert [json.loads(g)["rejected"] for g in generations] == [WRONG_CONTENT] * N
    assert all(json.loads(g)["hallucinated"] == 1 for g in generations)
    assert (tmp_path / "hipo" / "round-1" / "round.json").exists()  # round 1 trained and saved
    assert (tmp_path / "hipo" / "round-1" / "adapter_model.safetensors").exists()


def test_a_server_past_round_one_needs_lora():
    from training import train_hipo

    flags = [
        "--model_name_or_path",
        "x",
        "--generation_base_url",
        "http://127.0.0.1:1/v1",
        "--num_rounds",
        "2",
    ]
    script_args, _, model_args = train_hipo.make_parser().parse_args_and_config([*flags, "--bf16", "false"])
    with pytest.raises(ValueError, match="--use_peft true"):
        train_hipo.check_model(model_args, None, None, script_args)
    with pytest.raises(ValueError, match="not an http"):
        train_hipo.HIPOArguments(generation_base_url="127.0.0.1:8000")


# -- the configs -------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "name, kind",
    [
        ("accelerate_cpu_2proc", "MULTI_GPU"),
        ("accelerate_multi_gpu", "MULTI_GPU"),
        ("accelerate_deepspeed_zero3", "DEEPSPEED"),
        ("accelerate_fsdp2", "FSDP"),
    ],
)
def test_the_accelerate_configs_parse_and_say_how_to_launch(name, kind):
    from accelerate.commands.config.config_args import load_config_from_file

    path = CONFIGS / f"{name}.yaml"
    config = load_config_from_file(str(path))
    assert config.distributed_type.name == kind
    assert f"--config_file configs/training/{name}.yaml" in path.read_text(encoding="utf-8")
    if kind == "DEEPSPEED":
        ds = json.loads((ROOT / config.deepspeed_config["deepspeed_config_file"]).read_text(encoding="utf-8"))
        assert ds["zero_optimization"]["stage"] == 3
        assert ds["zero_optimization"]["stage3_gather_16bit_weights_on_model_save"] is True
    if kind == "FSDP":
        assert config.fsdp_config["fsdp_version"] == 2
        assert config.fsdp_config["fsdp_auto_wrap_policy"] == "TRANSFORMER_BASED_WRAP"


def test_worked_examples_in_the_distributed_helpers_hold():
    import doctest

    from training import distributed

    result = doctest.testmod(distributed)
    assert result.attempted > 0 and result.failed == 0


def test_processes_that_did_not_join_one_group_stop_with_what_to_do(monkeypatch):
    """Without --use_cpu on a machine with no GPU, each launched process would train alone on all the data."""
    from training import distributed

    class Alone:
        device, world_size, process_index = "cpu", 1, 0

    monkeypatch.setenv("WORLD_SIZE", "2")
    with pytest.raises(SystemExit, match="--use_cpu true"):
        distributed.is_main(Alone())
    monkeypatch.setenv("WORLD_SIZE", "1")
    assert distributed.is_main(Alone())
