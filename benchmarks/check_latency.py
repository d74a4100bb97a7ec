"""Citation-checking latency for 2,000-character answers built from real systems' answers.

    python benchmarks/check_latency.py

Each text is consecutive answers from ``consult_predictions.dev.jsonl`` joined until it reaches 2,000
characters (so citation density is that of real answers), cut at 2,000. Timed after one warm-up pass
over all texts (the checker caches normalised article texts per law; a long-running app is warm).
"""

from __future__ import annotations

import time

from _common import DATA, percentile, read_jsonl


def texts_of(length: int = 2000) -> list[str]:
    answers = [r["answer"] for r in read_jsonl(DATA / "lawbench" / "consult_predictions.dev.jsonl")]
    out, buf = [], ""
    for a in answers:
        buf += a + "\n"
        if len(buf) >= length:
            out.append(buf[:length])
            buf = ""
    return out


def main() -> None:
    from lawluo.config import load_settings
    from lawluo.law import StatuteDB
    from lawluo.law.checker import CitationChecker

    t = time.perf_counter()
    checker = CitationChecker(StatuteDB(load_settings().statutes_path))
    texts = texts_of()
    cold = []
    for text in texts:
        s = time.perf_counter()
        checker.check(text)
        cold.append((time.perf_counter() - s) * 1000)
    times, n_cit = [], 0
    for text in texts:
        s = time.perf_counter()
        n_cit += len(checker.check(text).citations)
        times.append((time.perf_counter() - s) * 1000)
    print(f"loaded in {time.perf_counter() - t - sum(cold) / 1000 - sum(times) / 1000:.2f}s")
    print(f"{len(texts)} texts of 2,000 chars, {n_cit / len(texts):.1f} citations each on average")
    print(f"first pass (cold caches): p50 {percentile(cold, 50):.1f} ms, p90 {percentile(cold, 90):.1f} ms")
    print(
        f"warm: p50 {percentile(times, 50):.1f} ms, p90 {percentile(times, 90):.1f} ms, max {max(times):.1f} ms"
    )


if __name__ == "__main__":
    main()
