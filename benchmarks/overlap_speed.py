"""ROUGE-L (LawBench's task 3-8 score) and METEOR over every answer of the consultation dev set.

    python benchmarks/overlap_speed.py

Scores the 3,500 answers of ``consult_predictions.dev.jsonl`` (14 systems x 250 questions) against
``consult.dev.jsonl`` with ``lawluo.metrics.overlap``, prints each system's mean ROUGE-L and METEOR,
the seconds each metric took over all answers (jieba's dictionary is loaded first and timed apart),
and, for scale, ``rouge_chinese`` itself (LawBench's code path) on the first 100 answers.
"""

from __future__ import annotations

import statistics
import time
from collections import defaultdict

from _common import DATA, read_jsonl


def main() -> None:
    from lawluo.metrics.overlap import _jieba, meteor_many, rouge_l_many, rouge_l_reference

    rows = read_jsonl(DATA / "lawbench" / "consult_predictions.dev.jsonl")
    refs = {r["id"]: r["reference"] for r in read_jsonl(DATA / "lawbench" / "consult.dev.jsonl")}
    predictions = [r["answer"] for r in rows]
    references = [refs[r["id"]] for r in rows]

    t = time.perf_counter()
    _jieba()
    t_jieba = time.perf_counter() - t
    t = time.perf_counter()
    rouge = rouge_l_many(predictions, references)
    t_rouge = time.perf_counter() - t
    t = time.perf_counter()
    meteor = meteor_many(predictions, references)
    t_meteor = time.perf_counter() - t
    t = time.perf_counter()
    slow = rouge_l_reference(predictions[:100], references[:100])
    t_slow = time.perf_counter() - t
    assert slow == rouge[:100], "fast ROUGE-L differs from rouge_chinese"

    by_system: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for row, r, m in zip(rows, rouge, meteor, strict=True):
        by_system[row["system"]].append((r, m))
    print(f"{len(rows)} answers, {len(by_system)} systems, {len(refs)} references")
    print(f"{'system':<30} {'ROUGE-L':>8} {'METEOR':>8}")
    for system, scores in sorted(by_system.items(), key=lambda kv: -statistics.fmean(s[0] for s in kv[1])):
        rs, ms = zip(*scores, strict=True)
        print(f"{system:<30} {statistics.fmean(rs):>8.4f} {statistics.fmean(ms):>8.4f}")
    print(f"{'all':<30} {statistics.fmean(rouge):>8.4f} {statistics.fmean(meteor):>8.4f}")
    print(f"jieba dictionary load: {t_jieba:.2f}s")
    print(f"ROUGE-L, all {len(rows)} answers: {t_rouge:.2f}s; METEOR: {t_meteor:.2f}s")
    print(
        f"rouge_chinese (LawBench's path), first 100 answers: {t_slow:.2f}s, identical scores "
        f"(~{t_slow / 100 * len(rows):.0f}s for all)"
    )


if __name__ == "__main__":
    main()
