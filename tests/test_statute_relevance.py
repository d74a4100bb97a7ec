"""A calibrated relevance per statute hit (lawluo/retrieval/relevance.py)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from lawluo.retrieval import relevance
from lawluo.retrieval.relevance import DENSE_FEATURES, SPARSE_FEATURES, Relevance, fit, load_relevance


def _synthetic(n: int = 4000, seed: int = 0, dense: bool = False):
    """Hits whose chance of being relevant falls with rank and rises with the lexical match."""
    rng = np.random.default_rng(seed)
    rank = rng.integers(1, 11, n)
    bm25 = rng.uniform(0, 3, n)
    cosine = rng.uniform(0.7, 0.9, n)
    rows = [
        relevance.features(int(r), 1.0 / r, 1.0, float(b), 1, float(c) if dense else None)
        for r, b, c in zip(rank, bm25, cosine, strict=True)
    ]
    p = 1 / (1 + np.exp(-(1.5 * bm25 - 0.6 * rank + (20 * (cosine - 0.8) if dense else 0))))
    return np.array(rows), (rng.uniform(size=n) < p).astype(int)


@pytest.fixture(scope="module")
def model() -> Relevance:
    rows, labels = _synthetic()
    dense_rows, dense_labels = _synthetic(dense=True)
    return Relevance(
        fit(rows, labels, SPARSE_FEATURES), fit(dense_rows, dense_labels, DENSE_FEATURES), "test"
    )


def test_a_fitted_model_is_calibrated_and_ranks_a_better_match_higher(model):
    rows, labels = _synthetic(seed=1)
    p = model.probability(rows.tolist(), dense=False)
    assert abs(p.mean() - labels.mean()) < 0.03  # calibrated on data it did not see
    strong = relevance.features(1, 1.0, 1.0, 3.0, 1, None)
    weak = relevance.features(9, 0.1, 1.0, 0.2, 1, None)
    p_strong, p_weak = model.probability([strong, weak], dense=False)
    assert p_strong > 0.8 > 0.1 > p_weak


def test_without_a_dense_model_a_row_with_a_cosine_is_scored_by_the_sparse_one(model):
    sparse_only = Relevance(model.sparse, None)
    row = relevance.features(2, 0.5, 1.0, 1.0, 1, 0.85)
    assert sparse_only.probability([row], dense=True)[0] == pytest.approx(
        model.sparse.probability(np.array([row[:3]]))[0]
    )


def test_the_asset_round_trips(model, tmp_path):
    path = tmp_path / relevance.FILENAME
    path.write_text(model.to_json(), encoding="utf-8")
    loaded = load_relevance(path)
    row = relevance.features(1, 1.0, 1.0, 2.0, 1, 0.8)
    assert loaded.probability([row], dense=True)[0] == pytest.approx(model.probability([row], dense=True)[0])


@pytest.mark.parametrize(
    "mutate",
    [
        lambda d: d.update(format="other"),
        lambda d: d["sparse"].update(weights=[1.0]),
        lambda d: d["sparse"].update(weights=[float("nan")] * 3),
        lambda d: d["sparse"].update(scale=[0.0, 1.0, 1.0]),
        lambda d: d["sparse"].update(bias="0"),
        lambda d: d["sparse"].update(features=["log_rank"]),
        lambda d: d.update(dense={"features": list(DENSE_FEATURES)}),
        lambda d: d.clear(),
    ],
)
def test_a_broken_or_hostile_asset_is_ignored_with_a_warning(model, tmp_path, caplog, mutate):
    data = json.loads(model.to_json())
    mutate(data)
    path = tmp_path / relevance.FILENAME
    path.write_text(json.dumps(data).replace("NaN", "NaN"), encoding="utf-8")
    assert load_relevance(path) is None and "ignored" in caplog.text


def test_a_missing_or_huge_asset_is_no_model(tmp_path):
    assert load_relevance(tmp_path / "none.json") is None
    huge = tmp_path / "huge.json"
    huge.write_text(" " * 200_000, encoding="utf-8")
    assert load_relevance(huge) is None


def test_the_searchers_hits_carry_a_relevance_between_0_and_1_when_the_model_is_there(
    statute_searcher, model
):
    saved = statute_searcher.relevance
    statute_searcher.relevance = None
    try:
        assert all(h.relevance is None for h in statute_searcher.search("试用期 解除劳动合同", 5))
        statute_searcher.relevance = model
        hits = statute_searcher.search("试用期 解除劳动合同", 5)
    finally:
        statute_searcher.relevance = saved
    assert all(0.0 <= h.relevance <= 1.0 for h in hits)
    assert hits[0].as_dict()["relevance"] == round(hits[0].relevance, 3)
    # features fall with rank: the first hit is at least as likely relevant as the fifth
    assert hits[0].relevance >= hits[-1].relevance


def test_the_relevance_is_fitted_on_hits_of_rerankers_that_never_saw_the_question(monkeypatch):
    """The shipped rerankers are trained on the rows the relevance is fitted on: each fold's hits come from a
    reranker refit on the other folds, and the searcher gets its own reranker back."""
    from types import SimpleNamespace

    from lawluo.build import relevance_training as rt
    from lawluo.retrieval.evaluation import GoldQuery
    from lawluo.retrieval.rerank_training import QuerySet

    queries = [
        GoldQuery(f"q{i}", f"问题{i}", frozenset({("民法典", i)}), group=f"g{i // 2}") for i in range(20)
    ]
    shipped = object()
    searcher = SimpleNamespace(dense=None, fused_reranker=None, reranker=shipped, features=object())
    trained_on, searched = [], []
    monkeypatch.setattr(
        rt,
        "query_set",
        lambda s, qs, fused=False: QuerySet(
            [[]] * len(qs), [np.full((2, 1), i) for i in range(len(qs))], [np.eye(2)[0]] * len(qs)
        ),
    )

    def fake_train(features, labels, names):
        trained_on.append({int(f[0, 0]) for f in features})
        return ("model", len(trained_on))

    def fake_rows(s, qs):
        searched.append((s.reranker, {q.id for q in qs}))
        return np.zeros((len(qs), 3)), np.zeros(len(qs), dtype=int), False

    monkeypatch.setattr(rt, "train", fake_train)
    monkeypatch.setattr(rt, "labelled_rows", fake_rows)
    rows, labels, _ = rt.out_of_fold_rows(searcher, queries)
    assert len(rows) == len(labels) == 20 and len(trained_on) == rt.FOLDS
    for (model, tested), trained in zip(searched, trained_on, strict=True):
        assert model[0] == "model" and not {f"q{i}" for i in trained} & tested  # never its own questions
    assert set().union(*(t for _, t in searched)) == {q.id for q in queries}
    assert searcher.reranker is shipped  # put back
