"""Statute search with the model's rewrite and listwise rerank (``lawluo/retrieval/model_assist.py``)
against the model-free search, on the evaluation rows, through any OpenAI-compatible server.

    # a real model (quality and cost): every eval question costs at most 2 calls, cached on disk
    python benchmarks/retrieval_model_assist.py --base-url https://api.deepseek.com/v1 \\
        --model deepseek-chat --api-key-env DEEPSEEK_API_KEY [--limit 465] [--cache-dir DIR]
    # the scripted fake server (tests/fakes/openai_server.py) in this process: overhead only
    python benchmarks/retrieval_model_assist.py --scripted [--latency 0] [--limit 465]

Questions: the ``eval: true`` rows of ``assets/supervision.jsonl.gz`` (LawBench dev scenario→statute and
consultations; gold = their canonical articles; helpers imported from ``retrieval_votes.py``). Nothing
here is tuned on them — the depths (fusion 50, rerank 20) and the prompts were fixed before any run —
so the table is a held-out measurement of whatever model ``--model`` names, not a cross-validated one.
Both sides run on the app's searcher as shipped, whose learned reranker *was* trained on these rows: their
absolute recall is in-sample, only the paired difference (with the model − model-free) measures the model.

With ``--scripted`` the "model" is a script: the rewrite repeats the question and the rerank returns the
candidates in the order shown. Its recall table only checks the plumbing (it should sit near the
model-free one) and is **not** a quality figure of any model. What it measures is the cost the wrapper
adds per question on top of the model's own latency: two extra BM25 searches, two HTTP round trips on
loopback, the prompts, parsing and the disk cache; then a second pass over the same questions (every
answer cached: 0 calls).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
from _common import percentile  # also puts the repository root on sys.path (lawluo, tests.fakes)
from retrieval_votes import DEPTH, NAMES, R5, as_evaluation, load_rows, print_paired, scored

from lawluo.config import load_settings
from lawluo.law import StatuteDB
from lawluo.llm.openai_backend import OpenAIBackend
from lawluo.llm.options import OpenAIOptions
from lawluo.retrieval.evaluation import markdown_table
from lawluo.retrieval.model_assist import AssistCache, ModelAssistedSearcher
from lawluo.retrieval.rerank_training import eval_queries
from lawluo.retrieval.statutes import StatuteSearcher

_QUOTED = re.compile(r"\n<<<(.*?)>>>\n", re.S)


def scripted_answer(body: dict) -> str:
    """The scripted model: the rewrite repeats the question; the rerank keeps the order shown."""
    prompt = body["messages"][-1]["content"]
    if '"order"' in prompt:
        n = len(re.findall(r"^\[\d+\] ", prompt, re.M))
        return '{"order": [%s]}' % ", ".join(str(i) for i in range(1, n + 1))  # noqa: UP031
    found = _QUOTED.search(prompt)
    return found.group(1) if found else ""


def run_pass(queries, base, assisted) -> tuple[list[list], list[float], list[float], list[int]]:
    """Per question: the assisted ranking, the model-free and assisted wall times (ms), the calls made."""
    rankings, free_ms, assisted_ms, calls = [], [], [], []
    for q in queries:
        t = time.perf_counter()
        base.search(q.question, DEPTH)
        free_ms.append(1000 * (time.perf_counter() - t))
        before = assisted.calls
        t = time.perf_counter()
        hits = assisted.search(q.question, DEPTH)
        assisted_ms.append(1000 * (time.perf_counter() - t))
        calls.append(assisted.calls - before)
        rankings.append([(h.article.law.key, h.article.number) for h in hits])
    return rankings, free_ms, assisted_ms, calls


def describe(label: str, free_ms: list[float], assisted_ms: list[float], calls: list[int]) -> None:
    extra = [a - f for a, f in zip(assisted_ms, free_ms, strict=True)]
    print(
        f"{label}: model-free p50 {statistics.median(free_ms):.1f} ms; with the model p50 "
        f"{statistics.median(assisted_ms):.1f} ms, p90 {percentile(assisted_ms, 90):.1f} ms; added per question "
        f"p50 {statistics.median(extra):.1f} ms, p90 {percentile(extra, 90):.1f} ms; "
        f"calls per question {np.mean(calls):.2f} (max {max(calls)})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--base-url", help="OpenAI-compatible server URL ending in /v1")
    parser.add_argument("--model", default="fake-model")
    parser.add_argument("--api-key-env", default="OPENAI_API_KEY")
    parser.add_argument("--scripted", action="store_true", help="serve a scripted model on loopback")
    parser.add_argument("--latency", type=float, default=0.0, help="--scripted: seconds per answer")
    parser.add_argument("--limit", type=int, default=0, help="first N eval questions (0: all)")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds per call")
    parser.add_argument("--budget", type=float, default=20.0, help="seconds for both calls of a question")
    parser.add_argument("--cache-dir", type=Path, help="answer cache folder (default: a fresh temporary one)")
    args = parser.parse_args()
    if args.scripted == bool(args.base_url):
        parser.error("give exactly one of --base-url and --scripted")

    settings = load_settings()
    base = StatuteSearcher.from_settings(settings, StatuteDB(settings.statutes_path))
    queries = eval_queries(load_rows())[: args.limit or None]
    cache_dir = args.cache_dir or Path(tempfile.mkdtemp(prefix="lawluo-assist-bench-"))

    server = None
    if args.scripted:
        from tests.fakes.openai_server import FakeOpenAIServer

        server = FakeOpenAIServer(latency=args.latency)
        server.responder = scripted_answer
        url, key = server.url, "bench"
    else:
        url, key = args.base_url, os.environ.get(args.api_key_env, "")
    options = OpenAIOptions(
        model=args.model, base_url=url, timeout=args.timeout, max_retries=1, api_key_required=False
    )
    model = OpenAIBackend(options, role="statute assist", api_key=key or None)
    assisted = ModelAssistedSearcher(
        base, model, AssistCache(cache_dir / "statute-assist.sqlite"), budget_s=args.budget
    )
    try:
        base.search("劳动合同", 1)  # warm jieba and the index
        print(f"{len(queries)} eval questions; model {model.describe()}; cache {cache_dir}")
        rankings, free_ms, assisted_ms, calls = run_pass(queries, base, assisted)
        describe("first pass", free_ms, assisted_ms, calls)
        _, free2, assisted2, calls2 = run_pass(queries, base, assisted)
        describe("second pass (cached)", free2, assisted2, calls2)
    finally:
        if server is not None:
            server.close()

    free_rank = [
        [(h.article.law.key, h.article.number) for h in base.search(q.question, DEPTH)] for q in queries
    ]
    free_values, assisted_values = scored(queries, free_rank), scored(queries, rankings)
    if args.scripted:
        print("\n**Scripted model: the tables below check the plumbing; they are not a quality figure.**")
    for title, ranking, values in (
        ("model-free StatuteSearcher", free_rank, free_values),
        (f"with the model ({model.describe()})", rankings, assisted_values),
    ):
        print(f"\n### {title}\n")
        print(markdown_table(as_evaluation(queries, ranking, values).summary(), NAMES))
    print("\n### paired difference, with the model − model-free, R@5 [95% bootstrap CI over questions]\n")
    print_paired(assisted_values[:, R5] - free_values[:, R5], [q.source for q in queries])


if __name__ == "__main__":
    main()
