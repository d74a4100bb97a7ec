"""Boss-guided reinforcement learning of the lawyer (LawLuo §3.2): the policy answers consultation
questions, the boss (the reward model of eq. 6) scores each answer, and the policy is updated online to
raise the boss's reward, with a KL penalty towards the starting model.

Trainer: TRL's ``RLOOTrainer``. The paper uses PPO, which TRL 1.16 no longer ships (neither in
``trl`` nor in ``trl.experimental``); its online trainers are GRPO and RLOO. RLOO (REINFORCE Leave-One-Out,
Ahmadian et al. 2024) is the one built as PPO's replacement for RLHF against a reward model: like PPO-RLHF
it folds the KL to the reference into the sequence reward (reward − β·KL) and keeps PPO's clipped
importance ratio (``epsilon``); instead of PPO's learned value head it takes, as each answer's
baseline, the mean reward of the other ``num_generations`` answers to the same question — no critic to
train or hold in memory, which matters at 7B on one GPU. GRPO would also work; it normalises the group's
advantages by their standard deviation and puts the KL into the loss, which departs further from PPO-RLHF.

What this script adds to TRL: the reward functions. :class:`BossReward` wraps lawluo's
:class:`~lawluo.agents.boss.Boss` — a ``reward_model`` backend (:mod:`lawluo.llm.reward_backend`, the
reward model trained by ``training/``; its raw reward r(x, y), read exactly as the app reads it: the
question and answer through the tokenizer's chat template, cut to ``boss_max_length`` tokens) or, with
no ``--boss_model``, whatever the lawluo settings give the boss role (a chat model as judge: its 0–10
score). With ``--hallucination_penalty λ > 0`` a second reward function,
:class:`HallucinatedStatutes`, counts the answer's hallucinated statutes (the citation checker over
the statute database, the NHSR rules of :mod:`lawluo.metrics.nhsr`), and TRL sums the two with
``reward_weights = [1, −λ]``: reward = r(x, y) − λ · #hallucinated statutes (not in the paper).

    # a tiny CPU run (seconds) with a random 2-layer policy and reward model made by the test fakes
    python -c "from tests.fakes.tiny_lm import save_tiny_lm; from tests.fakes.tiny_training import \\
        save_tiny_reward_model; save_tiny_lm('/tmp/tiny-lm'); save_tiny_reward_model('/tmp/tiny-reward')"
    python -m training.train_rl \\
        --model_name_or_path /tmp/tiny-lm --boss_model /tmp/tiny-reward \\
        --dataset kinled_consult --max_samples 8 --num_generations 2 --per_device_train_batch_size 4 \\
        --max_completion_length 16 --max_steps 2 --learning_rate 1e-4 \\
        --bf16 false --gradient_checkpointing false --logging_steps 1 --report_to none \\
        --output_dir /tmp/rl-tiny

    # paper scale on one GPU: the SFT lawyer (Qwen2.5-7B-Instruct + LoRA, 4-bit) against the trained boss
    python -m training.train_rl --config configs/training/rl-qwen2.5-7b.yaml

    # --config is TRL's YAML of these arguments; --lawluo_config is the LawLuo settings file (as
    # `python -m lawluo --config`) whose boss role scores without --boss_model and whose assets_dir holds
    # the statute database of the penalty (or --statutes)

    # the same command with --resume_from_checkpoint true continues from the last checkpoint

    # several GPUs: accelerate launch --config_file configs/training/accelerate_multi_gpu.yaml -m training.train_rl …

Sampling from a vLLM server (TRL's vLLM integration, ``RLOOConfig``'s ``use_vllm``/``vllm_mode``): start TRL's
server for the *same* base model on GPUs of its own — the trainer sends it the policy's new weights every
step (``vllm_mode server``: NCCL weight transfer, so vLLM must be installed beside the trainer too) — and
add ``--use_vllm true --vllm_mode server --vllm_server_base_url http://HOST:8000``::

    CUDA_VISIBLE_DEVICES=0 trl vllm-serve --model Qwen/Qwen2.5-7B-Instruct
    CUDA_VISIBLE_DEVICES=1,2,3 accelerate launch --config_file configs/training/accelerate_multi_gpu.yaml \\
        --num_processes 3 -m training.train_rl --config configs/training/rl-qwen2.5-7b.yaml \\
        --use_vllm true --vllm_mode server --vllm_server_base_url http://127.0.0.1:8000

``--vllm_mode colocate`` runs vLLM inside each training process instead (no server; it shares the GPU).
An OpenAI-compatible server alone cannot do this (RLOO needs each completion's token ids and the
weights kept in step with the policy); HIPO's generation step, which samples once per round, can
(``train_hipo.py --generation_base_url``).

Writes the policy to ``output_dir`` (with ``--use_peft`` or ``--init_adapter``: the LoRA adapter; load it
with lawluo's transformers backend as ``model: <base>, adapter: <output_dir>``) and ``output_dir/results/``
(``training/reporting.py``): ``config.json``, ``data.json``, and ``metrics.jsonl`` with TRL's logs —
``reward`` (the weighted sum, before the KL penalty), ``reward_std``, ``rewards/boss/mean``,
``rewards/hallucinated_statutes/mean``, ``nhsr`` (of the step's answers, when they cite statutes),
``kl``, ``loss``…
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from training.arguments import PolicyArguments, StatuteArguments
from training.data import prompt_messages, sample_questions


@dataclass
class RLArguments(PolicyArguments, StatuteArguments):
    """What boss-guided RL adds to ``RLOOConfig`` (training) and ``ModelConfig`` (model, LoRA, 4-bit); the
    questions, the starting adapter (its frozen copy is the KL reference), the LawLuo settings (the boss
    role without ``--boss_model``) and the statute database are the fields shared with HIPO
    (``training/arguments.py``)."""

    boss_model: str | None = field(
        default=None,
        metadata={
            "help": "The boss: a reward model (AutoModelForSequenceClassification, num_labels=1; path or hub id) "
            "scored through lawluo's reward_model backend. Unset: the boss role of --lawluo_config."
        },
    )
    boss_device: str = field(
        default="auto", metadata={"help": "Device of the reward model (auto, cpu, cuda:N)."}
    )
    boss_dtype: str = field(default="auto", metadata={"help": "auto, float32, bfloat16 or float16."})
    boss_max_length: int = field(
        default=1024, metadata={"help": "Most tokens of question + answer the reward model reads."}
    )
    boss_batch_size: int = field(default=8, metadata={"help": "Answers per reward-model forward pass."})
    hallucination_penalty: float = field(
        default=0.0,
        metadata={"help": "λ: reward −= λ per hallucinated statute of the answer (0: boss only)."},
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.hallucination_penalty < 0:
            raise ValueError("hallucination_penalty must be >= 0 (it is subtracted)")


# -- reward functions ----------------------------------------------------------------------------------
def message_text(x: Any, role: str | None = None) -> str:
    """The text of a standard (str) or conversational (messages) prompt or completion: the last message,
    or the last message of ``role``.

    >>> message_text([{"role": "system", "content": "s"}, {"role": "user", "content": "q"}], "user")
    'q'
    >>> message_text("plain text")
    'plain text'
    """
    if isinstance(x, str):
        return x
    messages = [m for m in x if role is None or m["role"] == role]
    return messages[-1]["content"] if messages else ""


class BossReward:
    """A TRL reward function: the boss's raw score of each completion to its prompt (LawLuo §3.2, eq. 6).

    Completions of the same question are scored together (:meth:`Boss.best_of`: batched by a reward
    model, in parallel by a judge). The score is ``Score.raw``: the reward r(x, y) of a reward model, the
    0–10 score of a judge. A question whose scoring fails gets ``None`` rewards, which TRL leaves out.
    """

    __name__ = "boss"

    def __init__(self, boss: Any) -> None:
        self.boss = boss

    def __call__(self, prompts: list, completions: list, **kwargs: Any) -> list[float | None]:
        from lawluo.llm import LLMError

        questions = [message_text(p, "user") for p in prompts]
        answers = [message_text(c) for c in completions]
        groups: dict[str, list[int]] = {}
        for i, q in enumerate(questions):
            groups.setdefault(q, []).append(i)
        rewards: list[float | None] = [None] * len(answers)
        for question, index in groups.items():
            try:
                _, scores = self.boss.best_of(question, [answers[i] for i in index])
            except LLMError as exc:
                print(f"The boss could not score {len(index)} answer(s): {type(exc).__name__}: {exc}")
                continue
            for i, score in zip(index, scores, strict=True):
                rewards[i] = score.raw if score.raw is not None else score.p_better
        return rewards


class HallucinatedStatutes:
    """A TRL reward function: how many statutes each completion cites that are hallucinated (the NHSR
    check's verdict is hallucinated: not ``verified``, ``amended_since`` or ``no_content``); weighted by −λ.
    Logs ``nhsr``."""

    __name__ = "hallucinated_statutes"

    def __init__(self, metric: Any) -> None:
        self.metric = metric  # lawluo.metrics.nhsr.NHSRMetric, rules only

    def __call__(
        self, prompts: list, completions: list, log_metric: Any = None, **kwargs: Any
    ) -> list[float]:
        from lawluo.metrics.nhsr import summarise_nhsr
        from training.hipo import count_hallucinated

        checked = [self.metric.check_rules(message_text(c)) for c in completions]
        nhsr = summarise_nhsr(checked)["nhsr"]
        if log_metric is not None and nhsr is not None:
            log_metric("nhsr", nhsr)
        return [float(count_hallucinated(a.citations)) for a in checked]


# -- data and models ---------------------------------------------------------------------------------
def load_prompts(args: RLArguments, seed: int) -> list[dict]:
    """Questions of ``args.dataset`` (duplicates dropped, shuffled with ``seed``, at most ``max_samples``)
    as TRL's conversational prompts."""
    questions = sample_questions(Path(args.data_dir), args.dataset, seed, args.max_samples)
    if not questions:
        raise ValueError(f"no question in {args.dataset}")
    return [{"id": q["id"], "prompt": prompt_messages(q["question"], args.system_prompt)} for q in questions]


def load_boss(args: RLArguments) -> Any:
    """lawluo's boss from ``--boss_model`` (a reward model) or the settings' boss role; loaded now."""
    from lawluo.agents.boss import Boss

    if args.boss_model:
        from lawluo.llm.options import RewardModelOptions
        from lawluo.llm.reward_backend import RewardModelBackend

        options = RewardModelOptions(
            model=args.boss_model,
            device=args.boss_device,
            dtype=args.boss_dtype,
            max_length=args.boss_max_length,
            batch_size=args.boss_batch_size,
        )
        backend = RewardModelBackend(options, role="boss")
    else:
        from lawluo.llm.models import LanguageModels

        backend = LanguageModels(args.settings().models)["boss"]
    boss = Boss(backend)
    if not boss.available:
        raise ValueError(boss.unavailable_reason())
    if boss.uses_reward_model:
        backend.load()  # fail now, not after the first generation
    return boss


def check_model(model_args, init_adapter: str | None) -> None:
    """Refuse settings that cannot work (ValueError)."""
    if model_args.model_name_or_path is None:
        raise ValueError("--model_name_or_path is required (the starting model, e.g. the SFT lawyer)")
    if (model_args.load_in_4bit or model_args.load_in_8bit) and not (model_args.use_peft or init_adapter):
        raise ValueError(
            "4/8-bit loading trains only a LoRA adapter: add --use_peft true (or --init_adapter)"
        )


def check_vllm(training_args) -> None:
    """``--use_vllm true`` needs vLLM importable in the training environment (server mode too: TRL's
    client moves the weights to the server with vLLM's NCCL communicator); SystemExit with what to do."""
    import importlib.util

    if getattr(training_args, "use_vllm", False) and importlib.util.find_spec("vllm") is None:
        raise SystemExit(
            "--use_vllm true needs vLLM installed beside the trainer (pip install 'trl[vllm]', on a CUDA "
            "machine), also with --vllm_mode server; or train without it (the policy generates). / "
            "--use_vllm 需要在训练环境中安装 vLLM（pip install 'trl[vllm]'，需 CUDA），或去掉该选项。"
        )


def reward_functions(args: RLArguments, training_args) -> list[Any]:
    """The boss (:class:`BossReward`) and, with ``--hallucination_penalty λ > 0``, the count of hallucinated
    statutes (:class:`HallucinatedStatutes`, over the statute database of :class:`StatuteArguments`);
    sets ``reward_weights`` to [1, −λ] unless given."""
    reward_funcs: list[Any] = [BossReward(load_boss(args))]
    weights = [1.0]
    if args.hallucination_penalty > 0:
        from lawluo.law.checker import CitationChecker
        from lawluo.law.database import StatuteDB
        from lawluo.metrics.nhsr import NHSRMetric

        db = StatuteDB(args.statutes_path())
        reward_funcs.append(HallucinatedStatutes(NHSRMetric(CitationChecker(db))))
        weights.append(-args.hallucination_penalty)
    if training_args.reward_weights is None:
        training_args.reward_weights = weights
    elif len(training_args.reward_weights) != len(weights):
        raise ValueError(f"--reward_weights needs {len(weights)} values (boss[, hallucinated_statutes])")
    return reward_funcs


def load_policy(model_args, training_args, init_adapter: str | None):
    """(model, peft_config, quantization) for ``RLOOTrainer``: the model's name, which TRL loads with
    ``model_init_kwargs`` and wraps in a new LoRA adapter, or the base model with ``init_adapter`` on top,
    loaded here (TRL loads a model by name, but not a name + adapter) with LoRA and 4-bit applied."""
    from trl import get_peft_config, get_quantization_config

    peft_config, quantization = get_peft_config(model_args), get_quantization_config(model_args)
    model_init_kwargs = {
        "revision": model_args.model_revision,
        "trust_remote_code": training_args.trust_remote_code,
        "attn_implementation": model_args.attn_implementation,
        "dtype": model_args.dtype,
    }
    if training_args.model_init_kwargs is not None:
        model_init_kwargs.update(training_args.model_init_kwargs)
    if init_adapter is None:
        training_args.model_init_kwargs = model_init_kwargs
        return model_args.model_name_or_path, peft_config, quantization

    import torch
    from peft import PeftModel
    from transformers import AutoModelForCausalLM

    if model_init_kwargs["dtype"] not in (None, "auto"):
        model_init_kwargs["dtype"] = getattr(torch, model_init_kwargs["dtype"])
    if quantization is not None:
        model_init_kwargs |= {
            "quantization_config": quantization,
            "device_map": {"": training_args.device},
        }
    base = AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path, **model_init_kwargs)
    return PeftModel.from_pretrained(base, init_adapter, is_trainable=True), None, None  # both applied


def save_policy(trainer, out: Path) -> None:
    """The trained policy in ``out``: with LoRA only the trained adapter (not TRL's frozen "ref" copy).
    Every process calls it (a sharded model is gathered); the main process writes."""
    from accelerate.utils import is_peft_model

    from training.distributed import is_main, wait_for_everyone

    unwrapped = trainer.accelerator.unwrap_model(trainer.model)
    if is_peft_model(unwrapped):
        state_dict = trainer.accelerator.get_state_dict(trainer.model_wrapped)
        if is_main(trainer.args):
            unwrapped.save_pretrained(str(out), selected_adapters=["default"], state_dict=state_dict)
            trainer.processing_class.save_pretrained(str(out))
    else:
        trainer.save_model(str(out))
    wait_for_everyone(trainer.args)


def main(script_args: RLArguments, training_args, model_args) -> Path:
    """Train the policy against the boss; return the directory the model (or adapter) was saved to."""
    import transformers
    from datasets import Dataset
    from packaging.version import Version
    from trl import RLOOTrainer

    from training.distributed import is_main, record_examples
    from training.reporting import RunLog, resume_checkpoint

    # Rewards, model and prompts
    check_model(model_args, script_args.init_adapter)
    check_vllm(training_args)
    reward_funcs = reward_functions(script_args, training_args)
    model, peft_config, quantization = load_policy(model_args, training_args, script_args.init_adapter)
    rows = load_prompts(script_args, training_args.seed)
    run = RunLog(training_args.output_dir, main=is_main(training_args))
    run.write_config(script_args, training_args, model_args, peft_config=peft_config)
    run.write_data_hashes({"train": rows}, dataset=script_args.dataset, max_samples=script_args.max_samples)

    # Train against the boss
    trainer = RLOOTrainer(
        model=model,
        reward_funcs=reward_funcs,
        args=training_args,
        train_dataset=Dataset.from_list(rows),
        quantization_config=quantization,
        peft_config=peft_config,
        callbacks=[run.callback()],
    )
    record_examples(trainer, "rl")
    trainer.train(resume_from_checkpoint=resume_checkpoint(training_args))

    # Save
    out = Path(training_args.output_dir)
    save_policy(trainer, out)
    if run.main:
        print(f"Saved the policy to {out}")
    if Version(transformers.__version__) >= Version("5.18.0"):
        trainer.end()
    return out


def make_parser():
    from trl import ModelConfig, RLOOConfig, TrlParser

    return TrlParser((RLArguments, RLOOConfig, ModelConfig))


if __name__ == "__main__":
    main(*make_parser().parse_args_and_config())
