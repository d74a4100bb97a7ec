"""How far the configured LLM judge agrees with labelled verdicts on the annotation tab's demo items (issue 41 item 4).

    python -m lawluo models local --detach          # the 0.5B on llama-server, as configs/local-cpu.yaml expects
    python benchmarks/judge_agreement.py [--config configs/local-cpu.yaml] [--limit 60] [--out report.md] \
        [--pairwise-out pairwise.jsonl]

The items are the 60 of ``assets/eval/demo_items.jsonl`` (real LawBench systems' answers, three pairs of
systems); the verdicts to agree with are ``benchmarks/data/judge_labels.demo.jsonl`` (A / B / tie / both_bad by
the annotation guidelines, written blind before any judge ran on them and frozen by sha256: read its README
for who labelled them). The judge is the config's ``judge`` role, asked exactly as ``python -m lawluo evaluate
--metrics pairwise`` asks it (``lawluo.metrics.pairwise.judge_pair``: LawBench's reference shown, every pair
judged twice with the answers swapped). Its two verdicts are combined and compared as the statistics tab does
(``eval_ui.consistency``: kept when they agree, a tie when they differ; MT-bench's S1 with ties, S2 without,
Wilson intervals; self-consistency over the items with both verdicts).

Printed beside the judge: what a judge that always says "A" and one that always says "tie" would score, so that
a figure can be read against doing nothing. ``--pairwise-out`` keeps the judge's lines in the format of
``evaluate``'s ``pairwise.jsonl``, which the statistics tab loads as the judge's results.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from _common import ROOT, command_line, emit_report, read_jsonl

from eval_ui import stats
from eval_ui.consistency.auto import AutoMetrics, combined_judge_verdict, question_id
from eval_ui.items import read_items
from lawluo.config import load_settings
from lawluo.llm import LanguageModels
from lawluo.metrics.judge import Judge
from lawluo.metrics.pairwise import MIN_JUDGE_CONSISTENCY, judge_pair

ITEMS = ROOT / "assets" / "eval" / "demo_items.jsonl"
LABELS = ROOT / "benchmarks" / "data" / "judge_labels.demo.jsonl"
LABELS_SHA256 = "7e1287e500643311d552321bc443a71feb52ab37ed7cdb2332e8bf6d676901a9"


def agreement_row(name: str, verdicts: list, labels: list, swapped: list | None = None) -> str:
    r = stats.judge_agreement(verdicts, labels, judge_swapped=swapped)

    def fig(key: str, n: str) -> str:
        if r[key] is None:
            return "–"
        return f"{r[key]:.3f} [{r[key + '_low']:.3f}, {r[key + '_high']:.3f}] (n {r[n]})"

    consistency = fig("self_consistency", "n_consistency") if swapped is not None else "–"
    return (
        f"| {name} | {fig('agreement_with_tie', 'n_with_tie')} | "
        f"{fig('agreement_without_tie', 'n_without_tie')} | {consistency} |"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", default=str(ROOT / "configs" / "local-cpu.yaml"))
    parser.add_argument("--limit", type=int, default=60, help="first N labelled items (60: all)")
    parser.add_argument("--out", help="also write the Markdown report here")
    parser.add_argument("--pairwise-out", help="keep the judge's verdicts as evaluate's pairwise.jsonl here")
    args = parser.parse_args()
    digest = hashlib.sha256(LABELS.read_bytes()).hexdigest()
    if digest != LABELS_SHA256:
        raise SystemExit(
            f"{LABELS} is not the frozen label set (sha256 {digest[:12]}…, expected {LABELS_SHA256[:12]}…)"
        )
    labels = {row["id"]: row["verdict"] for row in read_jsonl(LABELS)}
    items = [item for item in read_items(ITEMS) if item.id in labels][: args.limit]
    settings = load_settings(args.config)
    models = LanguageModels(settings.models)
    if not models.available("judge"):
        raise SystemExit(f"{args.config}: the judge has no usable model")
    judge = Judge(models["judge"])
    out = Path(args.pairwise_out) if args.pairwise_out else Path(tempfile.mkdtemp()) / "pairwise.jsonl"
    start = time.perf_counter()
    with out.open("w", encoding="utf-8") as f:
        for n, item in enumerate(items, start=1):
            outcome = judge_pair(judge, item.question, item.reference, item.answer_a, item.answer_b)
            record = outcome.record(question_id(item), item.system_a, item.system_b)
            f.write(json.dumps(record.as_json(), ensure_ascii=False) + "\n")
            f.flush()
            print(
                f"{n}/{len(items)} {item.id}: {record.result} {'; '.join(record.errors)[:120]}",
                file=sys.stderr,
                flush=True,
            )
    seconds = time.perf_counter() - start
    auto = AutoMetrics.read([out])
    orders = [auto.judged(question_id(i), i.system_a, i.system_b) or (None, None) for i in items]
    human = [labels[item.id] for item in items]
    combined = [combined_judge_verdict(*o) for o in orders]
    first = [o[0] for o in orders]
    swapped = [o[1] for o in orders]
    failed = sum(o == (None, None) for o in orders)
    r = stats.judge_agreement(first, first, judge_swapped=swapped)
    consistent = r["self_consistency"]
    verdict_counts = Counter(v or "none" for v in combined)
    lines = [
        "# The LLM judge against labelled verdicts on the demo items (issue 41 item 4)",
        "",
        f"Made by `{command_line()}` with the judge `{models['judge'].describe()}` on {len(items)} items of "
        f"`assets/eval/demo_items.jsonl`, labels `benchmarks/data/judge_labels.demo.jsonl` (sha256 "
        f"`{LABELS_SHA256[:12]}…`; who labelled them: its README). {2 * len(items)} judge requests in "
        f"{seconds:.0f} s ({seconds / max(1, len(items)):.1f} s an item); {failed} items without a verdict.",
        "",
        "| judge | S1: agreement with ties (chance 1/3) | S2: without ties (chance 1/2) | self-consistency |",
        "|---|---|---|---|",
        agreement_row("the judge, both orders combined (as the statistics tab)", combined, human),
        agreement_row("the judge, answers in the items' order only", first, human, swapped),
        agreement_row('always "A" (no judge)', ["A"] * len(items), human),
        agreement_row('always "tie" (no judge)', ["tie"] * len(items), human),
        "",
        f"Labels: {dict(Counter(human))} (both_bad counts as tie). The judge's combined verdicts: "
        f"{dict(verdict_counts)}.",
        "",
        (
            f"**The judge gives the same verdict in both orders for {consistent:.0%} of the items, below "
            f"{MIN_JUDGE_CONSISTENCY:.0%}: its preferences are not a measurement** (the statistics tab says so)."
            if consistent is not None and consistent < MIN_JUDGE_CONSISTENCY
            else "The judge's self-consistency is at or above the bar the statistics tab asks for."
        ),
    ]
    emit_report("\n".join(lines), args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
