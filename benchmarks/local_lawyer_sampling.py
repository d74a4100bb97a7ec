"""How the local model's lawyer is sampled, and how often its answer goes round in circles (issue 41 item 4).

    python -m lawluo models local --detach          # the 0.5B on llama-server, as configs/local-cpu.yaml expects
    python benchmarks/local_lawyer_sampling.py [--limit 6] [--variants none,dry,repeat]

Qwen2.5-Coder-0.5B on llama-server, asked LawBench consultation questions through the whole pipeline
(``python -m lawluo generate`` with ``configs/local-cpu.yaml``), often writes one sentence over and over until
``max_tokens``; such an answer is held back as ``loop`` (``lawluo/agents/answer_check.py``). This runs the same
first ``--limit`` questions of ``../shared/data/lawbench/consult.dev.jsonl`` once per sampling variant of the
lawyer role — the config file copied with only the lawyer's ``extra_body`` changed:

- ``none``: llama-server's defaults (no repetition penalty);
- ``dry``: DRY sampling (``dry_multiplier 0.8, dry_base 1.75, dry_allowed_length 3``);
- ``repeat``: ``repeat_penalty 1.1`` over the last 256 tokens (what ``configs/local-cpu.yaml`` ships).

Prints, per variant, generate's own summary (answers written, held back per reason, model calls) and the
seconds a question. Temperature 0.3 as configured, so a rerun can differ by a question or two.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml
from _common import DATA, ROOT, command_line, emit_report

VARIANTS = {
    "none": None,
    "dry": {"dry_multiplier": 0.8, "dry_base": 1.75, "dry_allowed_length": 3},
    "repeat": {"repeat_penalty": 1.1, "repeat_last_n": 256},
}


def variant_config(base: Path, extra_body: dict | None, folder: Path) -> Path:
    """``base`` with the lawyer's ``extra_body`` replaced (or removed), written into ``folder``."""
    settings = yaml.safe_load(base.read_text(encoding="utf-8"))
    lawyer = settings.setdefault("models", {}).setdefault("lawyer", {})
    lawyer.pop("extra_body", None)
    if extra_body:
        lawyer["extra_body"] = extra_body
    path = folder / f"{base.stem}-{len(list(folder.iterdir()))}.yaml"
    path.write_text(yaml.safe_dump(settings, allow_unicode=True), encoding="utf-8")
    return path


def run(config: Path, questions: Path, limit: int, out: Path) -> tuple[dict, float]:
    """One ``generate`` run; its closing JSON summary and the wall seconds."""
    start = time.perf_counter()
    command = [sys.executable, "-m", "lawluo", "--config", str(config), "generate", "--questions"]
    command += [str(questions), "--limit", str(limit), "--system", config.stem, "--out", str(out)]
    done = subprocess.run(
        [*command, "--concurrency", "1", "--quiet"], cwd=ROOT, capture_output=True, text=True
    )
    summary = next(
        (json.loads(line) for line in done.stdout.splitlines()[::-1] if line.startswith("{")), None
    )
    if summary is None:
        raise SystemExit(f"generate printed no summary (exit {done.returncode}):\n{done.stderr[-2000:]}")
    return summary, time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", default=str(ROOT / "configs" / "local-cpu.yaml"))
    parser.add_argument("--limit", type=int, default=6, help="first N LawBench dev questions (6)")
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--out", help="also write the Markdown report here")
    args = parser.parse_args()
    questions = DATA / "lawbench" / "consult.dev.jsonl"
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for name in args.variants.split(","):
            config = variant_config(Path(args.config), VARIANTS[name], Path(folder))
            summary, seconds = run(config, questions, args.limit, Path(folder) / f"{name}.jsonl")
            held = ", ".join(f"{r} {n}" for r, n in sorted(summary["held_back"].items())) or "none"
            rows.append(
                f"| {name} | {summary['written']} | {held} | {summary['model_calls']} | "
                f"{seconds / args.limit:.0f} |"
            )
            print(rows[-1], file=sys.stderr, flush=True)
    lines = [
        "# The local lawyer's sampling: answers that go round in circles (issue 41 item 4)",
        "",
        f"Made by `{command_line()}`: the first {args.limit} LawBench consultation dev questions through "
        f"`python -m lawluo generate` with `{Path(args.config).name}`, only the lawyer's `extra_body` changed.",
        "",
        "| lawyer sampling | answers shown | held back | model calls | seconds a question |",
        "|---|---|---|---|---|",
        *rows,
    ]
    emit_report("\n".join(lines), args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
