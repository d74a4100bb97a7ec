"""Our ROUGE-L on LawBench's consultation dev half next to LawBench's published figures.

    python -m lawluo evaluate --answers ../shared/data/lawbench/consult_predictions.dev.jsonl \
        --references ../shared/data/lawbench/consult.dev.jsonl --metrics nhsr,rouge_l,meteor \
        --out docs/results/lawbench_consult_dev
    python benchmarks/lawbench_rouge.py [docs/results/lawbench_consult_dev/summary.json]

The published figures are LawBench's zero-shot task 3-8 (法律咨询) ROUGE-L over its full 500 questions
(Fei et al. 2023, the LawBench leaderboard); ours are over the 250 of them in the shared dev set, so
small differences are sampling, not method.
"""

from __future__ import annotations

import json
import sys

from _common import ROOT

PUBLISHED = {  # system name in consult_predictions → (LawBench's name, ROUGE-L on 500 questions)
    "GPT4": ("GPT4", 0.196),
    "GPT-3.5-turbo-0613": ("GPT-3.5", 0.174),
    "chatlaw-13b-hf": ("ChatLaw-13B", 0.172),
    "chatlaw-33b-hf": ("ChatLaw-33B", 0.166),
    "fuzi-mingcha-7b-hf": ("fuzi.mingcha", 0.166),
    "hanfei-1.0-7b-hf": ("HanFei", 0.161),
    "lawgpt-7b-beta1.1-hf": ("LaWGPT-1.1", 0.076),
    "lawyer-llama-13b-hf": ("Lawyer-LLaMA", 0.169),
    "lexilaw-6b-hf": ("LexiLaw", 0.158),
    "wisdom-interrogatory-7b-hf": ("wisdomInterrogatory", 0.202),
    "qwen-7b-chat-hf": ("Qwen-7B-chat", 0.193),
    "internlm-chat-7b-hf": ("InternLM-chat", 0.154),
    "chatglm2-6b-hf": ("ChatGLM2", 0.176),
    "baichuan-13b-chat-hf": ("Baichuan-13B-chat", 0.203),
}


def main() -> None:
    path = (
        sys.argv[1]
        if len(sys.argv) > 1
        else ROOT / "docs" / "results" / "lawbench_consult_dev" / "summary.json"
    )
    rows = {r["system"]: r for r in json.loads(open(path, encoding="utf-8").read())["summary"]}
    print("| System | ROUGE-L, ours (250 dev questions) | LawBench published (500) | difference |")
    print("|---|---|---|---|")
    diffs = []
    for system, (name, published) in PUBLISHED.items():
        ours = rows[system]["rouge_l"]
        diffs.append(ours - published)
        print(f"| {name} | {ours:.3f} | {published:.3f} | {ours - published:+.3f} |")
    print(
        f"\nmean |difference| {sum(abs(d) for d in diffs) / len(diffs):.4f}, max {max(abs(d) for d in diffs):.4f}"
    )
    ours_rank = sorted(PUBLISHED, key=lambda s: -rows[s]["rouge_l"])
    theirs_rank = sorted(PUBLISHED, key=lambda s: -PUBLISHED[s][1])
    from scipy.stats import spearmanr

    rho = spearmanr(
        [ours_rank.index(s) for s in PUBLISHED], [theirs_rank.index(s) for s in PUBLISHED]
    ).statistic
    print(f"Spearman rank correlation of the 14 systems' order: {rho:.3f}")


if __name__ == "__main__":
    main()
