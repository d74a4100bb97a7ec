"""First-level clarification elements of a held-out question set with the clarifier of a settings file — the
local model, the fine-tuned one, or none — against hand labels, with seconds per tree (issue 41 item 3).

    python benchmarks/clarifier_local.py --config none --out /tmp/none.jsonl                      # no model
    python -m lawluo models local --detach                                                      # base 0.5B
    python benchmarks/clarifier_local.py --config configs/local-cpu.yaml --out /tmp/base.jsonl
    python -m lawluo models local --stop
    python -m lawluo models local --lora outputs/clarifier-lora/clarifier-lora.gguf --detach    # tuned
    python benchmarks/clarifier_local.py --config configs/local-cpu-tuned.yaml --out /tmp/tuned.jsonl

Each question goes through the firm as a visitor's does (the receptionist routes it; the tree's first level,
K=3; ``--height 3`` builds the whole tree the app builds and times that, the first level still what is
scored). Printed: relevant / labelled first-level elements (the strict rule of ``benchmarks/data/README.md``),
the elements with no label yet (the figure counts only when that is 0), the same for the model's own
elements and for those the builder took from the material instead (with why), and the seconds per tree
(p50, max). ``--out`` writes every element (``id``, ``element``, ``source``, ``fallback``) for labelling.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections import Counter
from pathlib import Path

from _common import ROOT  # also puts the repository root on sys.path

from lawluo.config import Settings, load_settings
from lawluo.firm import Firm

DATA = ROOT / "benchmarks" / "data"


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="none", help="settings file, or none: no model")
    parser.add_argument("--questions", type=Path, default=DATA / "clarification_questions.heldout16.jsonl")
    parser.add_argument("--labels", type=Path, default=DATA / "clarification_labels.heldout16.jsonl")
    parser.add_argument("--height", type=int, default=2, help="2: the first level only; 3: the app's tree")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--out", type=Path, help="every first-level element, one JSON object a line")
    parser.add_argument("--score", type=Path, help="score the elements an earlier --out wrote (no run)")
    parser.add_argument(
        "--against", type=Path, help="with --score: another --out file, the paired difference (bootstrap)"
    )
    args = parser.parse_args()
    labels = (
        {(r["id"], r["element"]): r["relevant"] for r in read_jsonl(args.labels)}
        if args.labels.is_file()
        else {}
    )
    if args.score:
        rows = read_jsonl(args.score)
        print(f"elements of {args.score} ({len({r['id'] for r in rows})} questions)")
        report(rows, labels)
        if args.against:
            paired(rows, read_jsonl(args.against), labels, args.score.name, args.against.name)
        return
    firm = Firm.from_settings(Settings() if args.config == "none" else load_settings(args.config))
    questions = read_jsonl(args.questions)[: args.limit]
    seconds, rows = [], []
    for q in questions:
        state = firm.new()
        firm.receive(state, q["question"])
        start = time.perf_counter()
        for _ in firm.clarify(state, args.height, 3):
            pass
        seconds.append(time.perf_counter() - start)
        for node in state.tree.level(1):
            rows.append(
                {"id": q["id"], "element": node.statement, "source": node.source, "fallback": node.fallback}
            )
        print(f"{q['id']} {seconds[-1]:5.1f} s  {q['question'][:40]}", flush=True)
    if args.out:
        args.out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    print(f"\nsettings: {args.config} · {len(questions)} questions · height {args.height}")
    print(f"seconds per tree: p50 {statistics.median(seconds):.1f}, max {max(seconds):.1f}")
    report(rows, labels)


def paired(rows: list[dict], other: list[dict], labels: dict, name: str, other_name: str) -> None:
    """Relevant elements per question, this run minus the other, with a 95 % bootstrap interval over questions
    (1,000 resamples, seed 0); elements without a label count as not relevant here."""
    import numpy as np

    def per_question(chosen: list[dict]) -> dict[str, int]:
        out: dict[str, int] = {}
        for r in chosen:
            out[r["id"]] = out.get(r["id"], 0) + labels.get((r["id"], r["element"]), 0)
        return out

    a, b = per_question(rows), per_question(other)
    ids = sorted(set(a) | set(b))
    diff = np.array([a.get(i, 0) - b.get(i, 0) for i in ids], dtype=float)
    rng = np.random.default_rng(0)
    boots = [diff[rng.integers(0, len(diff), len(diff))].mean() for _ in range(1000)]
    lo, hi = np.percentile(boots, [2.5, 97.5])
    better, worse = int((diff > 0).sum()), int((diff < 0).sum())
    print(
        f"{name} − {other_name}: {diff.mean():+.2f} relevant elements per question [{lo:+.2f}, {hi:+.2f}] "
        f"over {len(ids)} questions ({better} more, {worse} fewer, {len(ids) - better - worse} the same)"
    )


def report(rows: list[dict], labels: dict) -> None:
    def line(name: str, chosen: list[dict]) -> None:
        scored = [labels[(r["id"], r["element"])] for r in chosen if (r["id"], r["element"]) in labels]
        share = f"{sum(scored)}/{len(scored)} = {sum(scored) / len(scored):.1%}" if scored else "-"
        print(f"  {name:<34} {share:<18} unlabelled {len(chosen) - len(scored)}")

    print("first-level elements relevant (strict rule):")
    line("all shown", rows)
    line("proposed by the model", [r for r in rows if r["source"] == "model"])
    line("material/cases instead", [r for r in rows if r["source"] != "model"])
    why = Counter(r["fallback"] or "-" for r in rows if r["source"] != "model")
    print("  why not the model:", dict(why) or "-")


if __name__ == "__main__":
    main()
