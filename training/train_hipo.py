"""HIPO: iterative DPO on hard samples, against hallucinated statutes (LegalHalBench §4.3, Algorithm 1, eq. 3).

Each round r = 1 … ``num_rounds`` generates an answer y_l to every question with the previous round's
model, keeps the hard samples — y_l cites a hallucinated statute (lawluo's citation checker over the
statute database) or is not similar to the reference answer y_w (a sentence-transformers encoder) — and
trains on them with TRL's DPO loss plus I(y_l)·NLL(y_w)/|y_w|, the previous model as the reference.
What TRL provides and what ``training/hipo.py`` adds is written there.

    # a tiny CPU run (seconds per round) with a random 2-layer model and encoder made by the test fakes
    python -c "from tests.fakes.tiny_lm import save_tiny_lm; from tests.fakes.tiny_training import \\
        save_tiny_encoder; save_tiny_lm('/tmp/tiny-lm'); save_tiny_encoder('/tmp/tiny-encoder')"
    python training/train_hipo.py \\
        --model_name_or_path /tmp/tiny-lm --similarity_model /tmp/tiny-encoder \\
        --dataset kinled_consult --max_samples 8 --num_rounds 2 --max_new_tokens 16 \\
        --max_steps 4 --per_device_train_batch_size 4 --learning_rate 1e-3 --max_length 512 \\
        --bf16 false --gradient_checkpointing false --logging_steps 1 --report_to none \\
        --output_dir /tmp/hipo-tiny

    # paper scale on one GPU: Qwen2.5-7B-Instruct (or the SFT lawyer), 4-bit QLoRA, 3 rounds
    python training/train_hipo.py --config configs/training/hipo-qwen2.5-7b.yaml

    # the same command again resumes: finished rounds (output_dir/round-N/round.json) are skipped; add
    # --resume_from_checkpoint true to continue an unfinished round from its last checkpoint

Writes, under ``output_dir``:

- ``round-N/``: the round's model — the full model and tokenizer, or with ``--use_peft`` the LoRA adapter
  (load it with lawluo's transformers backend: ``model: <base>``, ``adapter: <output_dir>/round-N``);
  ``generations.jsonl`` (every question: y_l, its hallucinated statutes, similarity, kept or not);
  ``round.json`` (written last: the round is done);
- ``results/`` (``training/reporting.py``): ``config.json``; ``data.json`` (rows and SHA-256 of the
  questions and of each round's hard samples); ``metrics.jsonl``: the trainer's logs with ``round``, and
  per round one ``event: "hard_samples"`` line — ``generated``, ``hallucinated`` (answers with a
  hallucinated statute), ``similar``, ``kept``, ``dropped``, ``nhsr`` (of the round's generations);
  ``resumed: true`` when an interrupted round reused its generations — and one ``event: "round_done"`` line.

A round that keeps no hard sample ends the run (the model already answers every question well). Run it
as one process on one GPU: generation and judging are not split across processes.
"""

from __future__ import annotations

import copy
import gc
import random
import sys
from dataclasses import dataclass, field
from pathlib import Path

from data import SHARED_DATA, SOURCES, consultations, dedupe_key

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


@dataclass
class HIPOArguments:
    """What HIPO adds to ``DPOConfig`` (training) and ``ModelConfig`` (model, LoRA, 4-bit)."""

    dataset: list[str] = field(
        default_factory=lambda: ["kinled_consult"],
        metadata={
            "help": f"Sources of questions with reference answers (training/data.py): {', '.join(SOURCES)}."
        },
    )
    data_dir: str = field(default=str(SHARED_DATA), metadata={"help": "The shared data directory."})
    max_samples: int | None = field(
        default=None, metadata={"help": "Use at most this many questions (a seeded random subset)."}
    )
    num_rounds: int = field(default=3, metadata={"help": "HIPO rounds T (the paper: 3 are enough)."})
    similarity_model: str = field(
        default="BAAI/bge-small-zh-v1.5",
        metadata={"help": "sentence-transformers encoder (hub id or path) for sim(y_l, y_w)."},
    )
    similarity_threshold: float = field(
        default=0.8,
        metadata={
            "help": "y_l is similar to y_w at cosine similarity ≥ this; a similar y_l without hallucinated "
            "statutes drops the question (our default, not the paper's)."
        },
    )
    statutes: str | None = field(
        default=None,
        metadata={"help": "Statute database (default: lawluo's assets/statutes.sqlite)."},
    )
    nll_weight: float = field(
        default=1.0,
        metadata={"help": "Weight of I(y_l)·NLL(y_w)/|y_w| in eq. 3 (1 in the paper; 0: plain DPO)."},
    )
    generation_batch_size: int = field(default=8, metadata={"help": "Questions per generate call."})
    max_new_tokens: int = field(default=512, metadata={"help": "Most tokens of a generated answer."})
    temperature: float = field(
        default=0.7, metadata={"help": "Sampling temperature of y_l; 0 decodes greedily."}
    )
    top_p: float | None = field(default=None, metadata={"help": "Nucleus sampling of y_l."})
    init_adapter: str | None = field(
        default=None,
        metadata={
            "help": "LoRA adapter of the starting model (e.g. the SFT lawyer of train_lawyer_sft.py): round 1 "
            "trains it further, with a frozen copy as the reference (its own LoRA settings replace --lora_*)."
        },
    )
    system_prompt: str | None = field(
        default=None,
        metadata={"help": "A system message before every question (use the one the model was trained with)."},
    )
    keep_round_checkpoints: bool = field(
        default=False, metadata={"help": "Keep round-N/checkpoints/ after the round's model is saved."}
    )

    def __post_init__(self) -> None:
        unknown = [s for s in self.dataset if s not in SOURCES]
        if unknown:
            raise ValueError(f"unknown dataset {unknown}; sources: {', '.join(SOURCES)}")
        if self.num_rounds < 1 or self.generation_batch_size < 1 or self.max_new_tokens < 1:
            raise ValueError("num_rounds, generation_batch_size and max_new_tokens must be at least 1")
        if self.max_samples is not None and self.max_samples < 1:
            raise ValueError("max_samples must be at least 1")
        if not -1.0 <= self.similarity_threshold <= 1.0:
            raise ValueError(f"similarity_threshold {self.similarity_threshold} is not a cosine similarity")
        if self.nll_weight < 0 or self.temperature < 0:
            raise ValueError("nll_weight and temperature must be >= 0")


def load_questions(args: HIPOArguments, seed: int) -> list[dict]:
    """Questions with a reference answer from ``args.dataset``, duplicates dropped, shuffled with ``seed``,
    at most ``max_samples``."""
    rows, seen = [], set()
    for c in consultations(Path(args.data_dir), args.dataset):
        key = dedupe_key(c.question)
        if not key or not c.answer.strip() or key in seen:
            continue
        seen.add(key)
        rows.append({"id": f"{c.source}:{c.id}", "question": c.question.strip(), "answer": c.answer.strip()})
    random.Random(seed).shuffle(rows)
    return rows[: args.max_samples] if args.max_samples else rows


def prompt_messages(question: str, system_prompt: str | None = None) -> list[dict]:
    """The conversation the model answers: the question as one user message (after ``system_prompt``).

    >>> prompt_messages("押金不退怎么办？", "你是律师。")
    [{'role': 'system', 'content': '你是律师。'}, {'role': 'user', 'content': '押金不退怎么办？'}]
    """
    system = [{"role": "system", "content": system_prompt}] if system_prompt else []
    return [*system, {"role": "user", "content": question}]


def preference_rows(generations: list[dict], system_prompt: str | None = None) -> list[dict]:
    """The hard samples of a round as TRL's conversational preference rows, with I(y_l)."""
    from hipo import INDICATOR

    return [
        {
            "prompt": prompt_messages(g["question"], system_prompt),
            "chosen": [{"role": "assistant", "content": g["chosen"]}],
            "rejected": [{"role": "assistant", "content": g["rejected"]}],
            INDICATOR: float(g["hallucinated"] > 0),
        }
        for g in generations
        if g["keep"]
    ]


def load_policy(model_args, training_args, adapter: str | None, source: str):
    """The model to generate with and train in a round: ``source`` (the starting model, or the previous
    round's full model), or the base model with the previous round's adapter (trainable) on top."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import get_quantization_config

    quantization = get_quantization_config(model_args)
    dtype = model_args.dtype if model_args.dtype in (None, "auto") else getattr(torch, model_args.dtype)
    kwargs = {
        "revision": model_args.model_revision,
        "trust_remote_code": training_args.trust_remote_code,
        "attn_implementation": model_args.attn_implementation,
        "dtype": dtype,
    }
    if quantization is not None:
        kwargs.update(quantization_config=quantization, device_map={"": torch.cuda.current_device()})
    tokenizer = AutoTokenizer.from_pretrained(
        source, revision=model_args.model_revision, trust_remote_code=training_args.trust_remote_code
    )
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    model = AutoModelForCausalLM.from_pretrained(source, **kwargs)
    if adapter is not None:
        from peft import PeftModel

        model = PeftModel.from_pretrained(model, adapter, is_trainable=True)
    if quantization is None:
        model.to(training_args.device)
    return model, tokenizer


def save_round_model(trainer, tokenizer, path: Path, peft: bool) -> None:
    model = trainer.accelerator.unwrap_model(trainer.model)
    if peft:  # only the trained adapter: the frozen "ref" copy TRL adds in rounds ≥ 2 stays out
        model.save_pretrained(str(path), selected_adapters=["default"])
    else:
        trainer.save_model(str(path))
    tokenizer.save_pretrained(str(path))


def main(script_args: HIPOArguments, training_args, model_args) -> Path | None:
    """Run the rounds not yet done; return the last round's model directory (None if none was trained)."""
    import torch
    import transformers
    from datasets import Dataset
    from hipo import (
        GENERATIONS,
        completed_rounds,
        encoder_similarity,
        generate_answers,
        hipo_trainer_class,
        judge_answers,
        read_jsonl,
        remove_checkpoints,
        round_dir,
        round_summary,
        write_jsonl,
        write_round,
    )
    from packaging.version import Version
    from reporting import RunLog, resume_checkpoint
    from trl import get_peft_config

    from lawluo.config import Settings
    from lawluo.law.checker import CitationChecker
    from lawluo.law.database import StatuteDB
    from lawluo.metrics.nhsr import NHSRMetric

    if model_args.model_name_or_path is None:
        raise ValueError("--model_name_or_path is required (the starting model, e.g. the SFT lawyer)")
    peft_config = get_peft_config(model_args)
    peft = peft_config is not None or script_args.init_adapter is not None
    if (model_args.load_in_4bit or model_args.load_in_8bit) and not peft:
        raise ValueError(
            "4/8-bit loading trains only a LoRA adapter: add --use_peft true (or --init_adapter)"
        )
    out = Path(training_args.output_dir)
    progress = not training_args.disable_tqdm
    run = RunLog(out)
    run.write_config(script_args, training_args, model_args, peft_config=peft_config)
    questions = load_questions(script_args, training_args.seed)
    if not questions:
        raise ValueError(f"no question with a reference answer in {script_args.dataset}")

    def hash_data() -> None:
        splits = {"questions": questions}
        for r in range(1, script_args.num_rounds + 1):
            path = round_dir(out, r) / GENERATIONS
            if path.exists():
                splits[f"round-{r}"] = preference_rows(read_jsonl(path), script_args.system_prompt)
        run.write_data_hashes(splits, dataset=script_args.dataset, max_samples=script_args.max_samples)

    done = completed_rounds(out)
    if done:
        print(f"Rounds 1–{done} are done (under {out}); skipping them.")
    if done >= script_args.num_rounds:
        hash_data()
        print(f"All {script_args.num_rounds} rounds are done; the last model is {round_dir(out, done)}.")
        return round_dir(out, done)

    metric = NHSRMetric(CitationChecker(StatuteDB(script_args.statutes or Settings.load().statutes_path)))
    similarity = encoder_similarity(script_args.similarity_model)
    HIPOTrainer = hipo_trainer_class()
    last: Path | None = round_dir(out, done) if done else None
    for r in range(done + 1, script_args.num_rounds + 1):
        rdir = round_dir(out, r)
        rdir.mkdir(parents=True, exist_ok=True)
        previous = round_dir(out, r - 1) if r > 1 else None
        if peft:  # the base model with the previous round's adapter (round 1: --init_adapter or a new one)
            source = model_args.model_name_or_path
            adapter = str(previous) if previous else script_args.init_adapter
        else:
            source, adapter = (str(previous) if previous else model_args.model_name_or_path), None
        model, tokenizer = load_policy(model_args, training_args, adapter, source)

        gen_path = rdir / GENERATIONS
        resumed = gen_path.exists()
        if resumed:  # an interrupted round: train on the same hard samples
            generations = read_jsonl(gen_path)
        else:
            answers = generate_answers(
                model,
                tokenizer,
                [prompt_messages(q["question"], script_args.system_prompt) for q in questions],
                batch_size=script_args.generation_batch_size,
                max_new_tokens=script_args.max_new_tokens,
                temperature=script_args.temperature,
                top_p=script_args.top_p,
                seed=training_args.seed + r,
                progress=progress,
            )
            judged = judge_answers(
                metric,
                similarity,
                answers,
                [q["answer"] for q in questions],
                script_args.similarity_threshold,
                progress,
            )
            generations = [
                {"id": q["id"], "question": q["question"], "chosen": q["answer"], "rejected": a, **j}
                for q, a, j in zip(questions, answers, judged, strict=True)
            ]
            write_jsonl(gen_path, generations)
        summary = round_summary(generations, script_args.similarity_threshold)
        run.log(round=r, event="hard_samples", resumed=resumed, **summary)
        hash_data()
        print(
            f"Round {r}: {summary['generated']} answers, {summary['hallucinated']} with a hallucinated "
            f"statute, {summary['similar']} similar to the reference; kept {summary['kept']} hard samples, "
            f"dropped {summary['dropped']}; NHSR of the generations {summary['nhsr']}"
        )
        rows = preference_rows(generations, script_args.system_prompt)
        if not rows:
            print(f"Round {r} found no hard sample: stopping; the last model is {previous or source}.")
            del model
            break

        args = copy.deepcopy(training_args)
        args.output_dir = str(rdir / "checkpoints")
        trainer = HIPOTrainer(
            model=model,
            ref_model=None,  # TRL: a copy of `source`, or (PEFT) the adapter disabled / a frozen copy of it
            args=args,
            train_dataset=Dataset.from_list(rows),
            processing_class=tokenizer,
            peft_config=peft_config if adapter is None else None,
            callbacks=[run.callback(round=r)],
            nll_weight=script_args.nll_weight,
        )
        usable = len(trainer.train_dataset)  # TRL drops pairs whose prompt alone fills max_length
        if usable == 0:
            raise ValueError(
                f"round {r}: the prompts of all {len(rows)} hard samples are at least max_length "
                f"({args.max_length}) tokens long, so nothing is left to train on; raise --max_length"
            )
        if usable < len(rows):
            print(f"Round {r}: {len(rows) - usable} hard samples dropped, their prompts fill max_length")
        result = trainer.train(resume_from_checkpoint=resume_checkpoint(args))
        save_round_model(trainer, tokenizer, rdir, peft)
        info = {"round": r, "model": str(rdir), "base_model": source, "adapter": peft}
        info |= {"train_loss": result.training_loss, "steps": result.global_step, **summary}
        write_round(out, r, info)
        run.log(round=r, event="round_done", model=str(rdir), train_loss=result.training_loss)
        if not script_args.keep_round_checkpoints:
            remove_checkpoints(rdir / "checkpoints")
        last = rdir
        if r == script_args.num_rounds and Version(transformers.__version__) >= Version("5.18.0"):
            trainer.end()  # trackers and the process group: once, at the very end
        del trainer, model
        gc.collect()
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
    if last is not None:
        print(f"HIPO done through round {completed_rounds(out)}: the last model is {last}")
    return last


def make_parser():
    from trl import DPOConfig, ModelConfig, TrlParser

    return TrlParser((HIPOArguments, DPOConfig, ModelConfig))


if __name__ == "__main__":
    main(*make_parser().parse_args_and_config())
