"""training/train_retriever.py: a statute bi-encoder fine-tuned with MultipleNegativesRankingLoss and BM25
hard negatives, run for two steps on a tiny BERT built here over the 劳动合同法 articles of the shipped
statute database; the saved model loads with the app's ``load_encoder`` and searches."""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

import pytest

pytest.importorskip("sentence_transformers")

LAW = "劳动合同法"
#: (question, cited articles of 劳动合同法, eval flag)
ROWS = [
    ("公司拖欠工资三个月怎么办", [30], False),
    ("试用期被辞退，公司说我不符合录用条件", [39], False),
    ("没签劳动合同能要双倍工资吗", [82], False),
    ("被违法解除劳动合同能要多少赔偿", [87, 47], False),
    ("经济补偿金怎么算", [47], False),
    ("公司提前三十天通知解除合同合法吗", [40], False),
    ("老板不给钱还把我开了", [30, 87], True),
    ("入职一年没签合同", [82], True),
]


def write_supervision(path: Path) -> Path:
    with gzip.open(path, "wt", encoding="utf-8") as f:
        for i, (question, numbers, is_eval) in enumerate(ROWS):
            row = {
                "id": f"t{i}",
                "question": question,
                "articles": [[LAW, n] for n in numbers],
                "eval": is_eval,
            }
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    return path


def save_tiny_bert(path: Path, texts: list[str]) -> Path:
    """A random 2-layer BERT (hidden 32) with a character-level WordLevel tokenizer of ``texts``."""
    from .fakes.tiny_lm import save_tiny_bert, tiny_bert_tokenizer

    return save_tiny_bert(path, tiny_bert_tokenizer(texts), max_positions=64)


@pytest.fixture(scope="module")
def corpus(db):
    from training.train_retriever import ArticleCorpus

    return ArticleCorpus(db, [LAW])


def test_only_training_rows_make_pairs(db) -> None:
    from training.train_retriever import article_pairs

    rows = [{"question": q, "articles": [[LAW, n] for n in ns], "eval": e} for q, ns, e in ROWS]
    train = article_pairs(rows, db)
    held = article_pairs(rows, db, eval_rows=True)
    assert {q for q, _, _ in train} == {q for q, _, e in ROWS if not e}
    assert {q for q, _, _ in held} == {q for q, _, e in ROWS if e}
    assert len(train) == sum(len(ns) for _, ns, e in ROWS if not e)


def test_hard_negatives_come_from_bm25_and_are_never_cited(db, corpus) -> None:
    from training.train_retriever import article_pairs, training_rows

    rows = [{"question": q, "articles": [[LAW, n] for n in ns], "eval": e} for q, ns, e in ROWS]
    pairs = article_pairs(rows, db)
    out = training_rows(pairs, corpus, n_negatives=2, depth=10, seed=0)
    assert len(out) == len(pairs)
    for row, (question, key, cited) in zip(out, pairs, strict=True):
        assert row["anchor"] == question and row["positive"] == corpus.passage(key)
        top = {corpus.passages[i] for i, _ in corpus.bm25.search(question, 10)}
        cited_passages = {corpus.passage(k) for k in cited}
        for name in ("negative_1", "negative_2"):
            assert row[name] in top and row[name] not in cited_passages
    # seeded: the same rows again
    assert training_rows(pairs, corpus, 2, 10, seed=0) == out


def test_too_few_negatives_drops_the_pair(corpus) -> None:
    from training.train_retriever import training_rows

    top = [corpus.keys[i] for i, _ in corpus.bm25.search("工资", 5)]
    cited = frozenset(top[:4])  # the question cites 4 of its 5 BM25 hits: one negative is left
    pairs = [("工资", top[0], cited)]
    assert training_rows(pairs, corpus, n_negatives=2, depth=5, seed=0) == []
    assert [r["negative_1"] for r in training_rows(pairs, corpus, 1, 5, seed=0)] == [corpus.passage(top[4])]


def test_negatives_sample_is_seeded(corpus) -> None:
    a = corpus.negatives("解除劳动合同", frozenset(), 3, 20, random.Random(1))
    assert a == corpus.negatives("解除劳动合同", frozenset(), 3, 20, random.Random(1)) and len(a) == 3


@pytest.mark.parametrize(
    "kwargs", [{"hard_negatives": -1}, {"hard_negatives": 5, "negative_depth": 3}, {"max_pairs": 0}]
)
def test_bad_data_arguments_are_rejected(kwargs) -> None:
    from training.train_retriever import RetrieverDataArguments

    with pytest.raises(ValueError):
        RetrieverDataArguments(**kwargs)


def test_two_steps_train_save_and_the_app_loader_searches(tmp_path: Path, corpus) -> None:
    from lawluo.retrieval.dense import DenseIndex, load_encoder
    from training import train_retriever as tr

    supervision = write_supervision(tmp_path / "supervision.jsonl.gz")
    base = save_tiny_bert(tmp_path / "bert", corpus.passages + [q for q, _, _ in ROWS])
    out = tmp_path / "retriever"
    parser = tr.make_parser()
    data_args, training_args, model_args = parser.parse_args_into_dataclasses(
        [
            "--supervision", str(supervision), "--corpus_laws", LAW, "--hard_negatives", "1",
            "--negative_depth", "10", "--evaluate", "true", "--model_name_or_path", str(base),
            "--max_seq_length", "64", "--query_prompt", "query: ", "--passage_prompt", "passage: ",
            "--output_dir", str(out), "--max_steps", "2", "--per_device_train_batch_size", "4",
            "--logging_steps", "1", "--save_strategy", "no", "--report_to", "none", "--use_cpu", "true",
        ]
    )  # fmt: skip
    tr.main(data_args, training_args, model_args)

    model = load_encoder(str(out))
    assert model.prompts["query"] == "query: " and model.prompts["document"] == "passage: "
    index = DenseIndex.build(corpus.passages[:20], model)
    hits = index.search("公司拖欠工资", 5)
    assert len(hits) == 5 and all(0 <= i < 20 for i, _ in hits)
    logs = [json.loads(line) for line in (out / "results" / "metrics.jsonl").read_text().splitlines()]
    assert any("loss" in line for line in logs)
    recall = next(line for line in logs if "eval_recall@5" in line)
    assert recall["eval_questions"] == 2 and 0 <= recall["eval_recall@100"] <= 1
    data = json.loads((out / "results" / "data.json").read_text())
    assert data["pairs"]["rows"] == sum(len(ns) for _, ns, e in ROWS if not e)  # the eval rows never train


def test_the_gpu_recipe_parses_and_trains_on_the_shipped_supervision() -> None:
    from training.train_retriever import make_parser

    root = Path(__file__).resolve().parents[1]
    recipe = root / "configs" / "training" / "retriever_bge-base-zh.yaml"
    assert "training/train_retriever.py" in recipe.read_text(encoding="utf-8")
    data_args, training_args, model_args = make_parser().parse_args_and_config(
        ["--config", str(recipe), "--bf16", "false", "--use_cpu", "true"]
    )
    assert (
        data_args.hard_negatives == 3
        and data_args.evaluate
        and training_args.batch_sampler == "no_duplicates"
    )
    assert model_args.model_name_or_path == "BAAI/bge-base-zh-v1.5"
    assert data_args.supervision_path() == root / "assets" / "supervision.jsonl.gz"


def test_a_supervision_line_that_is_not_a_row_is_named(tmp_path: Path) -> None:
    from training.train_retriever import read_supervision

    path = tmp_path / "bad.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.write(
            json.dumps({"question": "q", "articles": [[LAW, 30]]})
            + "\n"
            + json.dumps(["not", "a", "row"])
            + "\n"
        )
    with pytest.raises(ValueError, match=":2: not a supervision row"):
        read_supervision(path)
