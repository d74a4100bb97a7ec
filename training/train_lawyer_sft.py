"""LoRA SFT of the lawyer (LawLuo paper §3.1 and §4): multi-turn legal consultations, loss on the
lawyer's turns only, a PEFT adapter that the app loads on top of the base model.

    # a tiny CPU run (a minute; TRL's tiny random Qwen2.5, fetched from the hub once)
    python -m training.train_lawyer_sft \\
        --model_name_or_path trl-internal-testing/tiny-Qwen2ForCausalLM-2.5 \\
        --sources kinled_consult legal_counsel_mt --max_samples 64 --max_steps 10 --max_length 512 \\
        --bf16 false --gradient_checkpointing false --logging_steps 1 --output_dir /tmp/lawyer-lora-tiny

    # paper scale on one GPU: Qwen2.5-7B-Instruct in 4 bits (QLoRA); memory and time in the YAML
    python -m training.train_lawyer_sft --config configs/training/lawyer_sft_qwen2.5-7b.yaml

    # the same command with --resume_from_checkpoint true continues from the last checkpoint

    # several GPUs (DDP; DeepSpeed ZeRO-3 or FSDP: the other configs in configs/training/, see the README)
    accelerate launch --config_file configs/training/accelerate_multi_gpu.yaml \\
        -m training.train_lawyer_sft --config configs/training/lawyer_sft_qwen2.5-7b.yaml

    # then, in the app's settings (configs/local-gpu.yaml), or served by vLLM (configs/vllm.yaml):
    #   lawyer: {backend: transformers, model: Qwen/Qwen2.5-7B-Instruct, adapter: outputs/lawyer-lora}
    #   vllm serve Qwen/Qwen2.5-7B-Instruct --enable-lora --lora-modules lawluo-lawyer=outputs/lawyer-lora

Data (``training/data.py``): the ``--sources`` of ``../shared/data`` that have lawyer answers — by
default the LawLuo paper's KINLED parts (consultations, judicial exam, judicial interpretations, legal
terms) and lawyer-llama's single- and multi-turn counsel — plus saved LawLuo consultations
(``--transcripts``), as chat messages. Multi-turn dialogues stay whole: every lawyer turn is a
target. ``--prompt_format app`` builds each example with the app's own lawyer prompt (the domain's
role prompt as system message, the ``lawyer/turn`` template around the last question with the
record's statutes), routed with ``--route_domains`` by the receptionist in the ``assets_dir`` of the
LawLuo settings ``--lawluo_config`` (the shipped one by default). ``--mix_dataset`` adds general
instruction data (``--mix_ratio`` general rows per legal row) to limit forgetting.

Loss on the lawyer's turns only. TRL's ``assistant_only_loss`` masks with the chat template's
``{% generation %}`` markers; TRL 1.16 swaps in a marked training copy of known templates (Qwen2.5,
Qwen3, Llama 3, Gemma, GLM-4-MoE, …) by itself. For any other template this script computes the
same mask by rendering each conversation up to every assistant turn (the tokens a turn adds after
``add_generation_prompt`` are its answer and end-of-turn token), and hands TRL ``input_ids`` with
``assistant_masks``; either way TRL sets the labels of every other token to -100.

Defaults follow the paper: LoRA r=16, α=32, dropout 0.05 on all linear layers, learning rate 5e-5,
batch size 2, 3 epochs. ``--load_in_4bit`` loads the base in 4-bit NF4 (QLoRA; bitsandbytes, CUDA
only — refused on a machine without a GPU). Results: ``<output_dir>/results/`` (``config.json``,
``data.json``, ``metrics.jsonl``; ``training/reporting.py``); the adapter: ``<output_dir>``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path

from trl import ModelConfig, SFTConfig, TrlParser

from training.arguments import LawLuoArguments, SharedDataArguments
from training.data import PROMPT_FORMATS, SOURCES, check_sources

DEFAULT_SOURCES = [
    "kinled_consult",
    "kinled_exam",
    "kinled_interp",
    "kinled_terms",
    "legal_counsel",
    "legal_counsel_mt",
]


@dataclass
class LawyerDataArguments(SharedDataArguments, LawLuoArguments):
    """What the lawyer is trained on (every field is a command-line flag or a YAML key); ``--lawluo_config``
    gives the receptionist that ``--route_domains`` routes with (in its ``assets_dir``)."""

    sources: list[str] = field(
        default_factory=lambda: list(DEFAULT_SOURCES),
        metadata={
            "help": f"Sources of training/data.py with lawyer answers: {', '.join(SOURCES)}. The LawBench "
            "dev sets (lawbench_consult, scenario_statute) are benchmark questions: leave them out to keep "
            "the evaluation clean."
        },
    )
    transcripts: list[str] = field(
        default_factory=list,
        metadata={"help": "Saved LawLuo consultations (.json, .jsonl or folders of them) to train on too."},
    )
    max_samples: int | None = field(
        default=None, metadata={"help": "Keep at most this many legal examples (a seeded sample)."}
    )
    prompt_format: str = field(
        default="plain",
        metadata={
            "help": "plain: the dialogue as it is; app: the app's lawyer prompt (role prompt + lawyer/turn template)."
        },
    )
    system_prompt: str | None = field(
        default=None, metadata={"help": "A system message before every plain dialogue (none by default)."}
    )
    route_domains: bool = field(
        default=False,
        metadata={
            "help": "With --prompt_format app: route each question with the receptionist of --lawluo_config."
        },
    )
    mix_dataset: str | None = field(
        default=None,
        metadata={
            "help": "General instruction data mixed in against forgetting: a local .json/.jsonl/.csv/.parquet "
            "file, a save_to_disk folder or a hub id (messages, ShareGPT, Alpaca or prompt/completion rows)."
        },
    )
    mix_ratio: float = field(
        default=0.0, metadata={"help": "General examples per legal example (e.g. 0.2); 0 mixes none."}
    )
    mix_split: str = field(default="train", metadata={"help": "Split of a hub --mix_dataset."})
    eval_fraction: float = field(
        default=0.0, metadata={"help": "Share of the legal examples held out for an eval loss (0: none)."}
    )

    def __post_init__(self) -> None:
        check_sources(self.sources)
        if self.prompt_format not in PROMPT_FORMATS:
            raise ValueError(f"prompt_format must be one of {', '.join(PROMPT_FORMATS)}")
        if self.system_prompt and self.prompt_format == "app":
            raise ValueError(
                "--system_prompt is for --prompt_format plain; app uses the domain's role prompt"
            )
        if self.route_domains and self.prompt_format != "app":
            raise ValueError("--route_domains needs --prompt_format app")
        if self.mix_ratio < 0 or (self.mix_ratio > 0) != bool(self.mix_dataset):
            raise ValueError("give --mix_dataset together with a positive --mix_ratio (or neither)")
        if not 0 <= self.eval_fraction < 1:
            raise ValueError("eval_fraction must be in [0, 1)")


@dataclass
class LawyerSFTConfig(SFTConfig):
    """TRL's ``SFTConfig`` with the paper's defaults (lr 5e-5, batch 2, 3 epochs, assistant-only loss)."""

    output_dir: str | None = field(
        default="outputs/lawyer-lora", metadata={"help": "Where the adapter and results/ are written."}
    )
    learning_rate: float = field(default=5e-5, metadata={"help": "AdamW learning rate."})
    per_device_train_batch_size: int = field(default=2, metadata={"help": "Batch size per device."})
    num_train_epochs: float = field(default=3.0, metadata={"help": "Epochs."})
    assistant_only_loss: bool = field(
        default=True, metadata={"help": "Loss on the lawyer's (assistant) tokens only."}
    )
    max_length: int | None = field(
        default=2048, metadata={"help": "Longer examples are cut (keep the start)."}
    )
    bf16: bool | None = field(
        default=None, metadata={"help": "bf16 mixed precision; unset: on when the GPU supports it."}
    )

    def __post_init__(self) -> None:
        if self.bf16 is None and not self.fp16:
            import torch

            self.bf16 = bool(torch.cuda.is_available() and torch.cuda.is_bf16_supported())
        super().__post_init__()


@dataclass
class LawyerModelConfig(ModelConfig):
    """TRL's ``ModelConfig`` with LoRA on by default: r=16, α=32, dropout 0.05 on all linear layers."""

    use_peft: bool = field(default=True, metadata={"help": "Train a LoRA adapter (the app loads adapters)."})
    lora_target_modules: list[str] | None = field(
        default_factory=lambda: ["all-linear"], metadata={"help": "LoRA target modules."}
    )


def check_quantization(model_args: ModelConfig) -> None:
    """Refuse 4/8-bit loading where it cannot work, with what to do instead (SystemExit)."""
    if not (model_args.load_in_4bit or model_args.load_in_8bit):
        return
    import importlib.util

    import torch

    bits = "--load_in_4bit (QLoRA)" if model_args.load_in_4bit else "--load_in_8bit"
    if not torch.cuda.is_available():
        raise SystemExit(
            f"{bits} needs a CUDA GPU with bitsandbytes, and torch sees no GPU here. "
            "Train without it (LoRA on the full-precision base) or run on a GPU."
        )
    if importlib.util.find_spec("bitsandbytes") is None:
        raise SystemExit(f"{bits} needs bitsandbytes: pip install -r requirements-gpu.txt")
    if not model_args.use_peft:
        raise SystemExit(f"{bits} trains only adapters: keep --use_peft true")


def load_sft_data(args: LawyerDataArguments, seed: int):
    """(train, eval or None, counts): legal examples, a held-out share, general examples mixed in."""
    from training.data import (
        consultations,
        general_messages,
        load_rows,
        read_transcripts,
        sft_rows,
        to_dataset,
        transcript_record,
    )

    records = list(consultations(Path(args.data_dir), args.sources))
    records += [transcript_record(s) for s in read_transcripts(args.transcripts)]
    route = None
    if args.route_domains:
        from lawluo.agents.receptionist import Receptionist

        receptionist = Receptionist.load(args.settings())
        route = lambda question: receptionist.classify(question).domain  # noqa: E731
    rows = sft_rows(records, args.prompt_format, args.system_prompt, route)
    rng = random.Random(seed)
    rng.shuffle(rows)
    if args.max_samples is not None:
        rows = rows[: args.max_samples]
    n_eval = int(round(len(rows) * args.eval_fraction))
    eval_rows, train_rows = rows[:n_eval], rows[n_eval:]
    general = []
    if args.mix_dataset:
        wanted = int(round(len(train_rows) * args.mix_ratio))
        pool = [m for m in map(general_messages, load_rows(args.mix_dataset, args.mix_split)) if m]
        if not pool:
            raise ValueError(f"{args.mix_dataset}: no row has a shape general_messages understands")
        general = [
            {"messages": m, "source": "general", "id": f"general-{i}"}
            for i, m in enumerate(rng.sample(pool, min(wanted, len(pool))))
        ]
        train_rows = train_rows + general
        rng.shuffle(train_rows)
    if not train_rows:
        raise ValueError("no training example: check --sources, --transcripts and --max_samples")
    columns = ("messages", "source", "id")
    counts = {
        "records": len(records),
        "legal_examples": len(rows),
        "general_examples": len(general),
        "by_source": {
            s: sum(r["source"] == s for r in train_rows) for s in sorted({r["source"] for r in train_rows})
        },
    }
    return to_dataset(train_rows, columns), (to_dataset(eval_rows, columns) if eval_rows else None), counts


# -- the loss mask ---------------------------------------------------------------------------------
def loss_mask_mode(tokenizer, training_args: SFTConfig) -> str:
    """How the lawyer-only loss is computed: ``trl`` (TRL's ``assistant_only_loss`` with ``{% generation %}``
    markers, the template's own or TRL's training copy), ``prefix`` (this script's masks, for templates
    TRL cannot patch) or ``none`` (loss on every token)."""
    from trl import get_training_chat_template
    from trl.chat_template_utils import has_generation_markers

    if not training_args.assistant_only_loss:
        return "none"
    if training_args.chat_template_path:
        return "trl"
    template = getattr(tokenizer, "chat_template", None)
    if template is None:
        raise ValueError(
            "the tokenizer has no chat template: train an instruct/chat model (e.g. Qwen/Qwen2.5-7B-Instruct), "
            "or give one with --chat_template_path"
        )
    if has_generation_markers(template):
        return "trl"
    try:
        get_training_chat_template(tokenizer)
    except ValueError:
        return "prefix"
    return "trl"


def assistant_token_mask(tokenizer, messages: list[dict]) -> dict:
    """``input_ids`` of the conversation and ``assistant_masks`` (1 on each assistant turn's tokens).

    A turn's tokens are those that rendering the conversation up to and including it adds after
    rendering it up to the turn before with ``add_generation_prompt`` (the assistant header): its
    content and end-of-turn marker. Needs a template that renders a conversation as a prefix of any
    longer one; ValueError otherwise.
    """

    def ids(msgs: list[dict], generation_prompt: bool = False) -> list[int]:
        return list(
            tokenizer.apply_chat_template(
                msgs, tokenize=True, add_generation_prompt=generation_prompt, return_dict=False
            )
        )

    full = ids(messages)
    mask = [0] * len(full)
    for i, message in enumerate(messages):
        if message["role"] != "assistant":
            continue
        before, upto = ids(messages[:i], generation_prompt=True), ids(messages[: i + 1])
        start, end = len(before), len(upto)
        if full[:end] != upto or upto[:start] != before:
            raise ValueError(
                "the chat template does not render a conversation as a prefix of a longer one, so the "
                "lawyer's turns cannot be masked; give a template with {% generation %} markers "
                "(--chat_template_path) or set --assistant_only_loss false"
            )
        mask[start:end] = [1] * (end - start)
    return {"input_ids": full, "assistant_masks": mask}


def tokenize_with_masks(dataset, tokenizer):
    """The dataset as ``input_ids`` + ``assistant_masks`` (:func:`assistant_token_mask`) and its ``id``;
    other columns dropped (the trainer drops ``id`` too, unless :func:`training.distributed.record_examples`
    asks for it)."""
    return dataset.map(
        lambda row: assistant_token_mask(tokenizer, row["messages"]),
        remove_columns=[c for c in dataset.column_names if c != "id"],
        desc="Masking all but the lawyer's turns",
    )


# -- training --------------------------------------------------------------------------------------
def build_trainer(
    data_args: LawyerDataArguments, training_args: LawyerSFTConfig, model_args: ModelConfig, run=None
):
    """The ``SFTTrainer`` (LoRA on ``model_name_or_path``) over the lawyer data; ``run`` is a RunLog."""
    if not model_args.model_name_or_path:
        raise ValueError("give --model_name_or_path: the base chat model (hub id or local path)")
    check_quantization(model_args)
    return sft_trainer(*load_sft_data(data_args, training_args.seed), training_args, model_args, run)


def sft_trainer(train, evaluation, counts: dict, training_args: SFTConfig, model_args: ModelConfig, run=None):
    """The ``SFTTrainer`` (LoRA on ``model_name_or_path``) over chat rows (``messages``), loss on the
    assistant's turns only; ``counts`` go into the run's ``data.json``. Shared with the clarifier's script."""
    from transformers import AutoTokenizer
    from trl import SFTTrainer, get_peft_config, get_quantization_config

    from training.distributed import record_examples

    tokenizer = AutoTokenizer.from_pretrained(
        model_args.model_name_or_path,
        revision=model_args.model_revision,
        trust_remote_code=training_args.trust_remote_code,
    )
    mode = loss_mask_mode(tokenizer, training_args)
    if run is not None:
        run.write_data_hashes({"train": train, "eval": evaluation or []}, **counts)
    if mode == "prefix":
        # TRL accepts assistant_only_loss only for conversational rows; these rows carry the mask instead.
        train = tokenize_with_masks(train, tokenizer)
        evaluation = tokenize_with_masks(evaluation, tokenizer) if evaluation is not None else None
        training_args.assistant_only_loss = False
    training_args.model_init_kwargs = {
        "revision": model_args.model_revision,
        "attn_implementation": model_args.attn_implementation,
        "dtype": model_args.dtype,
        **(training_args.model_init_kwargs or {}),
    }
    trainer = SFTTrainer(
        model=model_args.model_name_or_path,
        args=training_args,
        train_dataset=train,
        eval_dataset=evaluation,
        processing_class=tokenizer,
        peft_config=get_peft_config(model_args),
        quantization_config=get_quantization_config(model_args),
        callbacks=[run.callback()] if run is not None else None,
    )
    trainer.loss_mask_mode = mode
    record_examples(trainer, "sft")
    return trainer


def main(data_args: LawyerDataArguments, training_args: LawyerSFTConfig, model_args: ModelConfig):
    """Train, save the adapter to ``output_dir``, log to ``output_dir/results``; returns the trainer."""
    return train_adapter(
        lambda run: build_trainer(data_args, training_args, model_args, run),
        data_args,
        training_args,
        model_args,
        use=f"load it as the lawyer with\n  lawyer: {{backend: transformers, model: "
        f"{model_args.model_name_or_path}, adapter: {training_args.output_dir}}}",
    )


def train_adapter(make_trainer, data_args, training_args: SFTConfig, model_args: ModelConfig, use: str):
    """The run of an SFT script (shared with the clarifier's): ``make_trainer(run)`` builds the trainer; the
    configs go to ``results/``, training resumes where asked, the adapter is saved to ``output_dir`` and
    ``use`` (how to load it) printed; returns the trainer."""
    from trl import get_peft_config

    from training.distributed import is_main
    from training.reporting import RunLog, resume_checkpoint

    run = RunLog(training_args.output_dir, main=is_main(training_args))  # under accelerate: one writer
    trainer = make_trainer(run)
    run.write_config(
        data_args, training_args, model_args, get_peft_config(model_args), loss_mask=trainer.loss_mask_mode
    )
    trainer.train(resume_from_checkpoint=resume_checkpoint(training_args))
    if trainer.eval_dataset is not None:
        trainer.evaluate()
    trainer.save_model(training_args.output_dir)  # from the main process only (the trainer's rule)
    if hasattr(trainer, "end"):
        trainer.end()
    if run.main:
        print(f"adapter saved to {training_args.output_dir}; {use}")
    return trainer


def make_parser() -> TrlParser:
    return TrlParser((LawyerDataArguments, LawyerSFTConfig, LawyerModelConfig))


if __name__ == "__main__":
    main(*make_parser().parse_args_and_config())
