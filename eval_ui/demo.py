"""The demo comparison set shipped in ``assets/eval/``: real systems' answers to LawBench consultation
questions (``../shared/data/lawbench/consult_predictions.dev.jsonl`` against ``consult.dev.jsonl``), so
the annotation tab has work on its first start.

Three pairs of systems that the no-judge metrics rank differently (``docs/results/``) — a high-NHSR
legal model against a general chat model, and so on — with 20 questions each, sampled with a fixed
seed: 60 items. Rebuild with ``python -m eval_ui build-demo``.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

from .items import Item, items_from_answers

PAIRS = (
    ("fuzi-mingcha-7b-hf", "GPT4"),
    ("baichuan-13b-chat-hf", "chatglm2-6b-hf"),
    ("wisdom-interrogatory-7b-hf", "qwen-7b-chat-hf"),
)
PER_PAIR = 20
SEED = 2026
DEMO_ITEMS = Path(__file__).resolve().parents[1] / "assets" / "eval" / "demo_items.jsonl"


def build_demo(
    data_dir: str | Path, out: str | Path = DEMO_ITEMS, per_pair: int = PER_PAIR, seed: int = SEED
) -> list[Item]:
    """Sample the demo items from the shared data and write them as JSONL (the import format)."""
    lawbench = Path(data_dir) / "lawbench"
    items: list[Item] = []
    for system_a, system_b in PAIRS:
        items += items_from_answers(
            lawbench / "consult_predictions.dev.jsonl",
            lawbench / "consult.dev.jsonl",
            system_a,
            system_b,
            per_pair,
            seed,
        )
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    rows = [{**asdict(item), "statutes": list(item.statutes)} for item in items]
    out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return items
