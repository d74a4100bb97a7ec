"""The learned statute reranker (``lawluo/retrieval/rerank.py``) and its wiring into ``StatuteSearcher``."""

from __future__ import annotations

import json
import logging

import numpy as np
import pytest

from lawluo.retrieval.evaluation import GoldQuery
from lawluo.retrieval.rerank import (
    FEATURES,
    FORMAT,
    FUSED_FEATURES,
    FUSED_FILENAME,
    Reranker,
    RerankerError,
    load_reranker,
    train,
)
from lawluo.retrieval.rerank_training import near_duplicates, query_set, training_queries

ROWS = [
    {
        "id": "t1",
        "question": "我想和丈夫离婚，孩子的抚养权归谁",
        "articles": [["民法典", 1084]],
        "eval": False,
        "group": "t1",
    },
    {
        "id": "t2",
        "question": "公司拖欠工资不发怎么办",
        "articles": [["劳动合同法", 30]],
        "eval": False,
        "group": "t2",
    },
    {"id": "e1", "question": "离婚财产怎么分", "articles": [["民法典", 1087]], "eval": True, "group": "e1"},
    {
        "id": "t3",
        "question": "离婚财产怎么分割呢",
        "articles": [["民法典", 1087]],
        "eval": False,
        "group": "e1",
    },
]
QUESTIONS = [
    "公司不给我发工资还把我辞退了",
    "离婚后孩子的抚养费怎么算",
    "邻居家的狗咬伤了我的孩子",
    "借钱给朋友不还可以起诉吗",
    "交通事故对方全责赔偿",
    "租房押金房东不退",
    "醉酒驾驶机动车怎么处罚",
    "遗嘱继承和法定继承",
    "试用期被解除劳动合同",
    "网购买到假货怎么维权",
]


@pytest.fixture
def searcher(statute_searcher, monkeypatch):
    """The shipped searcher with its feature tables from :data:`ROWS`, no reranker and no dense first stage
    — what a reranker reorders is the sparse ranking — (restored after)."""
    monkeypatch.setattr(statute_searcher, "reranker", None)
    monkeypatch.setattr(statute_searcher, "dense", None)
    monkeypatch.setattr(statute_searcher, "features", statute_searcher.features)
    statute_searcher.attach_features(ROWS)
    return statute_searcher


def _keys(hits):
    return [(h.article.law.key, h.article.number) for h in hits]


def _third_is_gold(searcher, question: str) -> GoldQuery:
    """A synthetic row whose gold is the article BM25 ranks third."""
    cands = searcher.candidates(searcher.ranking(question), 100)
    a = searcher.db.articles[cands[2][0]]
    return GoldQuery(question, question, frozenset({(a.law.key, a.number)}))


def test_training_on_synthetic_rows_moves_the_learned_article_to_the_top(searcher, monkeypatch):
    data = query_set(searcher, [_third_is_gold(searcher, q) for q in QUESTIONS[:8]])
    model = train(data.features, data.labels, rounds=50, seeds=(0,))
    query = QUESTIONS[9]
    before = _keys(searcher.search(query, 5))
    monkeypatch.setattr(searcher, "reranker", model)
    after = searcher.search(query, 5)
    assert _keys(after)[0] == before[2]
    scores = [h.score for h in after]
    assert scores == sorted(scores, reverse=True) and all(0 < s < 1 for s in scores)


def test_lookups_stay_first_with_a_reranker(searcher, monkeypatch):
    data = query_set(searcher, [_third_is_gold(searcher, q) for q in QUESTIONS[:8]])
    monkeypatch.setattr(searcher, "reranker", train(data.features, data.labels, rounds=20, seeds=(0,)))
    hits = searcher.search("民法典第1079条 离婚", 5)
    assert hits[0].exact and _keys(hits)[0] == ("民法典", 1079)


def test_features_do_not_depend_on_the_gold(searcher):
    q = QUESTIONS[1]
    one = query_set(searcher, [GoldQuery("a", q, frozenset({("民法典", 1085)}))])
    other = query_set(searcher, [GoldQuery("b", q, frozenset({("刑法", 1)}))])
    assert np.array_equal(one.features[0], other.features[0])
    assert one.features[0].shape[1] == len(FEATURES)
    assert not np.array_equal(one.labels[0], other.labels[0])


class Broken:
    """A reranker whose every call fails."""

    def scores(self, features):
        raise RuntimeError("boom")


def test_a_failing_model_keeps_the_bm25_ranking_and_logs(searcher, monkeypatch, caplog):
    before = _keys(searcher.search(QUESTIONS[0], 5))
    monkeypatch.setattr(searcher, "reranker", Broken())
    with caplog.at_level(logging.WARNING, logger="lawluo.retrieval.statutes"):
        assert _keys(searcher.search(QUESTIONS[0], 5)) == before
    assert "reranker failed" in caplog.text


def test_saved_trees_score_as_lightgbm_does(tmp_path):
    import lightgbm as lgb

    from lawluo.retrieval.rerank import PARAMS

    rng = np.random.default_rng(0)
    xs = [rng.normal(size=(30, len(FEATURES))) for _ in range(20)]
    # the three best by a hidden rule are relevant: every query has both labels, so none is left out
    ys = [(np.argsort(np.argsort(-(x[:, 3] + 0.5 * x[:, 11]))) < 3).astype(float) for x in xs]
    model = train(xs, ys, rounds=15, seeds=(0, 1))
    data = lgb.Dataset(np.vstack(xs), np.concatenate(ys), group=[30] * 20, feature_name=list(FEATURES))
    boosters = [lgb.train(dict(PARAMS) | {"seed": s}, data, num_boost_round=15) for s in (0, 1)]
    z = rng.normal(size=(40, len(FEATURES)))
    expected = (boosters[0].predict(z) + boosters[1].predict(z)) / 2
    path = tmp_path / "r.json"
    path.write_text(model.to_json(trained_on="test"), encoding="utf-8")
    loaded = load_reranker(path)
    assert isinstance(loaded, Reranker) and loaded.n_models == 2
    assert np.allclose(loaded.scores(z), expected, atol=1e-9)
    assert np.allclose(model.scores(z), expected, atol=1e-9)


def _tree(**change):
    """A valid one-split tree (feature 0 <= 0.5: leaf 1, else leaf 2), with fields replaced by ``change``."""
    nodes = {
        "feature": [0, 0, 0],
        "threshold": [0.5, 0.0, 0.0],
        "left": [1, 1, 2],
        "right": [2, 1, 2],
        "value": [0.0, -1.0, 1.0],
    }
    payload = {"format": FORMAT, "features": list(FEATURES), "n_models": 1, "roots": [0], "nodes": nodes}
    for key, value in change.items():
        (payload if key in payload else nodes)[key] = value
    return json.dumps(payload).encode()


def test_a_hand_written_tree_scores_as_written(tmp_path):
    path = tmp_path / "r.json"
    path.write_bytes(_tree())
    x = np.zeros((2, len(FEATURES)))
    x[1, 0] = 1.0
    assert load_reranker(path).scores(x).tolist() == [-1.0, 1.0]


@pytest.mark.parametrize(
    "content",
    [
        b"\xff\xfe not json",
        b"[]",
        _tree(format="other"),
        _tree(features=["score_rel"]),
        _tree(nodes="tree"),
        _tree(left=[1, 1, 9]),  # a child outside the arrays
        _tree(left=[-1, 1, 2]),
        _tree(feature=[len(FEATURES), 0, 0]),  # a split on a feature that does not exist
        _tree(value=[0.0, "x", 1.0]),
        _tree(threshold=[0.5, 0.0]),  # arrays of different lengths
        _tree(left=[1, 0, 2], right=[2, 0, 2]),  # node 1 goes back to the root: a cycle
        _tree(n_models=11),
        _tree(roots=[]),
    ],
)
def test_corrupt_asset_falls_back_with_a_log_line(tmp_path, caplog, content):
    path = tmp_path / "statute_reranker.json"
    path.write_bytes(content)
    with caplog.at_level(logging.WARNING, logger="lawluo.retrieval.rerank"):
        assert load_reranker(path) is None
    assert "unusable" in caplog.text and "BM25" in caplog.text


def test_missing_asset_means_no_reranker(tmp_path, caplog):
    with caplog.at_level(logging.INFO, logger="lawluo.retrieval.rerank"):
        assert load_reranker(tmp_path / "absent.json") is None
    assert "no statute reranker" in caplog.text


def test_training_needs_a_query_with_a_relevant_candidate():
    from lawluo.retrieval.rerank import RerankerError

    with pytest.raises(RerankerError):
        train([np.zeros((3, len(FEATURES)))], [np.zeros(3)], rounds=1, seeds=(0,))


def test_training_rows_grouped_with_an_eval_question_are_left_out():
    ids = [q.id for q in training_queries(ROWS)]
    assert ids == ["t1", "t2"]


def test_near_duplicates_share_most_character_grams():
    found = near_duplicates(
        ["公司拖欠工资不发怎么办呢", "完全无关的一句话而已"], ["公司拖欠工资不发怎么办", "离婚"]
    )
    assert found == [{0}, set()]


# The reranker of the fused candidates (BM25 and e5 fused first, then reordered with e5 features)


class FakeDense:
    """A dense first stage that ranks BM25's top 40 backwards, cosines falling from 0.9: the fused list then
    differs from either ranking, and nothing needs the e5 model."""

    def __init__(self, searcher) -> None:
        self.searcher = searcher
        self.calls = 0

    def search(self, query: str, k: int) -> list[tuple[int, float]]:
        self.calls += 1
        sparse = [i for i, _ in self.searcher.candidates(self.searcher.ranking(query), 40)][::-1]
        return [(i, 0.9 - 0.01 * r) for r, i in enumerate(sparse[:k])]


@pytest.fixture
def fused_searcher(searcher, monkeypatch):
    monkeypatch.setattr(searcher, "dense", FakeDense(searcher))
    monkeypatch.setattr(searcher, "fused_reranker", None)
    return searcher


def _fused_order(searcher, question: str) -> list[tuple[str, int]]:
    tokens = searcher.query_tokens(question)
    sparse = searcher._scores(tokens)
    found = searcher.dense.search(question, 300)
    _, cands, matrix = searcher.fused_candidates(question, tokens, sparse, searcher._top(sparse, 300), found)
    assert matrix.shape == (len(cands), len(FUSED_FEATURES))
    return [(searcher.db.articles[i].law.key, searcher.db.articles[i].number) for i, _ in cands]


def test_without_a_fused_reranker_the_search_is_the_two_rankings_fused(fused_searcher):
    hits = fused_searcher.search(QUESTIONS[0], 10)
    assert _keys(hits) == _fused_order(fused_searcher, QUESTIONS[0])[:10]
    assert fused_searcher.dense.calls >= 1


def test_a_fused_reranker_trained_on_synthetic_rows_moves_the_learned_article_to_the_top(
    fused_searcher, monkeypatch
):
    def third(question: str) -> GoldQuery:
        return GoldQuery(question, question, frozenset({_fused_order(fused_searcher, question)[2]}))

    data = query_set(fused_searcher, [third(q) for q in QUESTIONS[:8]], fused=True)
    model = train(data.features, data.labels, rounds=50, seeds=(0,), names=FUSED_FEATURES)
    query = QUESTIONS[9]
    before = _fused_order(fused_searcher, query)
    monkeypatch.setattr(fused_searcher, "fused_reranker", model)
    after = fused_searcher.search(query, 5)
    assert _keys(after)[0] == before[2]
    scores = [h.score for h in after]
    assert scores == sorted(scores, reverse=True) and all(0 < s < 1 for s in scores)
    monkeypatch.setattr(fused_searcher, "dense", None)  # no dense stage: the fused reranker is not used
    assert _keys(fused_searcher.search(query, 5)) != _keys(after)


def test_a_failing_fused_reranker_keeps_the_fused_ranking_and_logs(fused_searcher, monkeypatch, caplog):
    before = _keys(fused_searcher.search(QUESTIONS[3], 5))
    monkeypatch.setattr(fused_searcher, "fused_reranker", Broken())
    with caplog.at_level(logging.WARNING, logger="lawluo.retrieval.statutes"):
        assert _keys(fused_searcher.search(QUESTIONS[3], 5)) == before
    assert "fused statute reranker failed" in caplog.text


def test_the_fused_asset_loads_only_for_the_fused_features(tmp_path, caplog):
    rng = np.random.default_rng(0)
    xs = [rng.normal(size=(30, len(FUSED_FEATURES))) for _ in range(6)]
    ys = [(x[:, -6] > 0.5).astype(float) for x in xs]  # the cosine column decides
    model = train(xs, ys, rounds=10, seeds=(0,), names=FUSED_FEATURES)
    path = tmp_path / FUSED_FILENAME
    path.write_text(model.to_json(trained_on="test"), encoding="utf-8")
    loaded = load_reranker(path, FUSED_FEATURES)
    assert loaded is not None and np.allclose(loaded.scores(xs[0]), model.scores(xs[0]))
    with caplog.at_level(logging.WARNING, logger="lawluo.retrieval.rerank"):
        assert load_reranker(path) is None  # the sparse reranker's place: refused, not misread
    assert "特征不符" in caplog.text
    with pytest.raises(RerankerError, match="特征数不符"):
        train(xs, ys, rounds=2, seeds=(0,))  # fused columns under the sparse names
