"""LoRA SFT of the clarifier (issue 41 item 3): the app's first-level ToLC prompt → the yes/no elements a
labeller marked relevant for that question (``training/clarifier_data.py``), loss on the answer only.

The rows use the prompt of ``--prompt_variant`` (default ``tuned``: question, path and reference elements,
no cases — ``lawluo/prompts/tolc/expand.tuned.txt``), built by the firm of ``--lawluo_config`` exactly as
the app builds it; serve the result with the same ``prompt_variant``.

    # the real 0.5B on a CPU (bf16 autocast; ~2 s a row of ~420 tokens on 2 cores): dequantise the GGUF of
    # `python -m lawluo models local` (~1 min), train, and export the adapter as a GGUF LoRA for llama-server
    python -m training.gguf dequantise --out outputs/qwen2.5-coder-0.5b-hf
    python -m training.train_clarifier_sft --model_name_or_path outputs/qwen2.5-coder-0.5b-hf \\
        --lawluo_config configs/local-cpu.yaml --exclude_splits held_out16 held_out17 held_out18 \\
        --num_train_epochs 1 --learning_rate 2e-4 --per_device_train_batch_size 4 --bf16 true \\
        --gradient_checkpointing false --logging_steps 5 --save_strategy no --report_to none \\
        --output_dir outputs/clarifier-lora
    python -m training.gguf export-lora --base outputs/qwen2.5-coder-0.5b-hf --adapter outputs/clarifier-lora
    python -m lawluo models local --lora outputs/clarifier-lora/clarifier-lora.gguf --detach
    python app.py --config configs/local-cpu-tuned.yaml        # the clarifier's requests apply the LoRA

Held out: the splits named by ``--exclude_splits`` (the sets the clarifier is measured on) are never rows;
``--eval_fraction`` holds out a share of the rest for an eval loss. Results: ``<output_dir>/results/``
(``config.json``, ``data.json`` with each row's id and split, ``metrics.jsonl``), the adapter in
``<output_dir>``.
"""

from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass, field
from pathlib import Path

from trl import ModelConfig, TrlParser

from training.arguments import LawLuoArguments
from training.clarifier_data import BENCHMARK_DATA
from training.train_lawyer_sft import (
    LawyerModelConfig,
    LawyerSFTConfig,
    check_quantization,
    sft_trainer,
    train_adapter,
)


@dataclass
class ClarifierDataArguments(LawLuoArguments):
    """What the clarifier is trained on; ``--lawluo_config`` gives the firm (routing, material, cases)
    whose prompts the rows carry."""

    labels_dir: str = field(
        default=str(BENCHMARK_DATA),
        metadata={"help": "Folder of clarification_questions*.jsonl and clarification_labels*.jsonl."},
    )
    exclude_splits: list[str] = field(
        default_factory=list,
        metadata={
            "help": "Question splits never trained on: the held-out sets the clarifier is measured on."
        },
    )
    min_relevant: int = field(
        default=2, metadata={"help": "A question needs at least this many relevant elements to be a row."}
    )
    prompt_variant: str = field(
        default="tuned", metadata={"help": "The prompts the rows are built with (lawluo.prompts.VARIANTS)."}
    )
    max_samples: int | None = field(default=None, metadata={"help": "Keep at most this many rows (seeded)."})
    eval_fraction: float = field(
        default=0.0, metadata={"help": "Share of the rows held out for an eval loss (0: none)."}
    )

    def __post_init__(self) -> None:
        from lawluo.prompts import VARIANTS

        if self.prompt_variant not in VARIANTS:
            raise ValueError(f"prompt_variant must be one of {', '.join(VARIANTS)}")
        if not 0 <= self.eval_fraction < 1:
            raise ValueError("eval_fraction must be in [0, 1)")


@dataclass
class ClarifierSFTConfig(LawyerSFTConfig):
    """The lawyer's SFT config, written to ``outputs/clarifier-lora``; a row is one short prompt and answer."""

    output_dir: str | None = field(
        default="outputs/clarifier-lora", metadata={"help": "Where the adapter and results/ are written."}
    )
    max_length: int | None = field(default=1024, metadata={"help": "Longer rows are cut (keep the start)."})


def load_clarifier_data(args: ClarifierDataArguments, seed: int):
    """(train, eval or None, counts): one row per labelled question outside ``exclude_splits``."""
    from lawluo.firm import Firm
    from training.clarifier_data import clarifier_rows, labelled_questions
    from training.data import to_dataset

    settings = dataclasses.replace(args.settings(), prompt_variant=args.prompt_variant)
    questions = labelled_questions(Path(args.labels_dir), args.exclude_splits, args.min_relevant)
    if not questions:
        raise ValueError(f"no question with {args.min_relevant}+ relevant elements in {args.labels_dir}")
    built = clarifier_rows(Firm.from_settings(settings), questions)
    rows = built.rows
    rng = random.Random(seed)
    rng.shuffle(rows)
    if args.max_samples is not None:
        rows = rows[: args.max_samples]
    n_eval = int(round(len(rows) * args.eval_fraction))
    eval_rows, train_rows = rows[:n_eval], rows[n_eval:]
    counts = {
        "questions": len(questions),
        "rows": len(rows),
        "answer_elements": built.elements,
        "answer_elements_in_prompt": built.shown,
        "excluded_splits": sorted(args.exclude_splits),
        "by_split": {s: sum(r["split"] == s for r in train_rows) for s in sorted({r["split"] for r in rows})},
    }
    columns = ("messages", "source", "id")
    return to_dataset(train_rows, columns), (to_dataset(eval_rows, columns) if eval_rows else None), counts


def main(data_args: ClarifierDataArguments, training_args: ClarifierSFTConfig, model_args: ModelConfig):
    """Train, save the adapter to ``output_dir``, log to ``output_dir/results``; returns the trainer."""
    if not model_args.model_name_or_path:
        raise ValueError("give --model_name_or_path: the base chat model (hub id or local path)")
    check_quantization(model_args)
    return train_adapter(
        lambda run: sft_trainer(
            *load_clarifier_data(data_args, training_args.seed), training_args, model_args, run
        ),
        data_args,
        training_args,
        model_args,
        use="export it for llama-server with\n  python -m training.gguf export-lora --base "
        f"{model_args.model_name_or_path} --adapter {training_args.output_dir}",
    )


def make_parser() -> TrlParser:
    return TrlParser((ClarifierDataArguments, ClarifierSFTConfig, LawyerModelConfig))


if __name__ == "__main__":
    main(*make_parser().parse_args_and_config())
