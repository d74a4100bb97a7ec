"""The retrieval evaluation harness: metrics, bootstrap intervals, grouped folds, ``bench retrieval``."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from lawluo.cli import main
from lawluo.retrieval.evaluation import (
    GoldQuery,
    bootstrap,
    evaluate,
    first_rank,
    grouped_folds,
    query_metrics,
)

pytestmark = pytest.mark.slow  # 4 s of the suite on 2 cores (4 s or more: left out of the inner loop)

A, B, C, D = ("甲法", 1), ("甲法", 2), ("乙法", 3), ("乙法", 4)


def test_metrics_of_hand_made_rankings():
    m = query_metrics([A, B, C], {B, C})
    assert m == {
        "R@1": 0.0,
        "R@5": 1.0,
        "R@10": 1.0,
        "R@100": 1.0,
        "MRR@10": 0.5,
        "nDCG@10": pytest.approx((1 / math.log2(3) + 1 / math.log2(4)) / (1 + 1 / math.log2(3))),
    }
    assert query_metrics([C, A], {C}) == {
        "R@1": 1.0,
        "R@5": 1.0,
        "R@10": 1.0,
        "R@100": 1.0,
        "MRR@10": 1.0,
        "nDCG@10": 1.0,
    }
    # the first gold at rank 12: a hit at 100 only, nothing at 10
    ranked = [("丙法", i) for i in range(1, 12)] + [D]
    assert first_rank(ranked, {D}) == 12
    m = query_metrics(ranked, {D})
    assert (m["R@10"], m["R@100"], m["MRR@10"], m["nDCG@10"]) == (0.0, 1.0, 0.0, 0.0)
    # a gold article listed twice counts once; no gold at all scores zero
    assert query_metrics([A, A], {A, B})["nDCG@10"] == pytest.approx(1 / (1 + 1 / math.log2(3)))
    assert first_rank([A, B], {C}) is None and query_metrics([A, B], {C})["R@100"] == 0.0


def test_evaluate_aggregates_per_source_and_leaves_out_queries_without_gold():
    rankings = {"q1": [A, B], "q2": [C, D], "q3": [A], "q4": [A]}
    queries = [
        GoldQuery("1", "q1", frozenset({A}), "s"),
        GoldQuery("2", "q2", frozenset({D}), "s"),
        GoldQuery("3", "q3", frozenset({C}), "t"),
        GoldQuery("4", "q4", frozenset(), "t"),
    ]
    result = evaluate(queries, rankings.__getitem__)
    assert result.ranks == [1, 2, None] and result.unscorable == ["4"]
    summary = result.summary()
    assert summary["overall"]["queries"] == 3
    assert summary["overall"]["R@1"]["mean"] == pytest.approx(1 / 3)
    assert summary["overall"]["MRR@10"]["mean"] == pytest.approx(0.5)
    assert summary["by_source"]["s"]["R@5"]["mean"] == 1.0
    assert summary["by_source"]["t"]["R@5"]["mean"] == 0.0


def test_bootstrap_interval_contains_the_mean_and_is_seeded():
    rng = np.random.default_rng(1)
    values = (rng.random((200, 3)) < [0.2, 0.5, 0.9]).astype(float)
    stats = bootstrap(values, seed=7)
    assert np.all(stats[1] <= stats[0]) and np.all(stats[0] <= stats[2])
    assert np.all(stats[2] - stats[1] > 0.05)  # 200 Bernoulli draws: a real width, not zero
    assert np.array_equal(stats, bootstrap(values, seed=7))
    assert not np.array_equal(stats[1:], bootstrap(values, seed=8)[1:])
    # the width of a proportion's interval is close to the normal approximation's 2 × 1.96 × sd/√n
    p = values[:, 1].mean()
    assert stats[2, 1] - stats[1, 1] == pytest.approx(2 * 1.96 * math.sqrt(p * (1 - p) / 200), rel=0.2)


def test_grouped_folds_never_split_a_group():
    queries = [GoldQuery(str(i), f"q{i}", frozenset({A}), group=f"g{i % 7}") for i in range(40)]
    queries += [GoldQuery(f"x{i}", "x", frozenset({A})) for i in range(5)]  # no group: its own
    folds = grouped_folds(queries, n_splits=5)
    assert len(folds) == 5
    tested = np.concatenate([test for _, test in folds])
    assert sorted(tested.tolist()) == list(range(len(queries)))  # each query tested exactly once
    for train, test in folds:
        assert not set(train) & set(test)
        train_groups = {queries[i].group for i in train if queries[i].group}
        test_groups = {queries[i].group for i in test if queries[i].group}
        assert not train_groups & test_groups
    with pytest.raises(ValueError, match="at least 5 groups"):
        grouped_folds(queries[:3], n_splits=5)


def _write(path, rows):
    path.write_text(
        "\n".join(r if isinstance(r, str) else json.dumps(r, ensure_ascii=False) for r in rows) + "\n"
    )
    return str(path)


def test_bench_retrieval_on_a_tiny_file(tmp_path, capsys, statute_searcher, monkeypatch):
    from lawluo.retrieval import statutes

    monkeypatch.setattr(
        statutes.StatuteSearcher, "from_settings", classmethod(lambda cls, s, db=None: statute_searcher)
    )
    path = _write(
        tmp_path / "q.jsonl",
        [
            {"id": "a", "question": "民法典第1079条", "articles": [["民法典", 1079]], "source": "x"},
            {"id": "b", "question": "刑法第133条", "articles": [["中华人民共和国刑法", 133]], "source": "y"},
            {"id": "c", "question": "离婚", "articles": [["没有这部法", 3]], "source": "y"},
        ],
    )
    out = tmp_path / "figures.json"
    assert main(["bench", "retrieval", "--input", path, "--k", "20", "--json", str(out)]) == 0
    captured = capsys.readouterr()
    assert "| x | 1 | 1.000 [1.000, 1.000]" in captured.out  # the named article comes first
    assert "| all | 2 |" in captured.out and "R@100" not in captured.out  # --k 20: no R@100
    assert "unknown law '没有这部法'" in captured.err and "未知法律" in captured.err
    figures = json.loads(out.read_text(encoding="utf-8"))
    assert figures["overall"]["R@1"] == {"mean": 1.0, "lo": 1.0, "hi": 1.0}
    assert figures["unscorable"] == ["c"]
    assert [q["rank"] for q in figures["per_query"]] == [1, 1]
    assert figures["by_source"]["y"]["queries"] == 1


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ('{"id": "a", "question": "", "articles": [["民法典", 1]]}', '"question" 须为非空文字'),
        (
            '{"id": "a", "question": "问", "articles": [["民法典", "一"]]}',
            "must be a list of [law, number] pairs",
        ),
        ('{"id": "a", "question": "问", "articles": "民法典第1条"}', "[法律名, 条号]"),
        ("not json", "not valid JSON"),
    ],
)
def test_bench_retrieval_malformed_input(tmp_path, capsys, line, says):
    good = '{"id": "ok", "question": "问", "articles": [["民法典", 1]]}'
    path = _write(tmp_path / "q.jsonl", [good, line])
    assert main(["bench", "retrieval", "--input", path]) == 2
    err = capsys.readouterr().err
    assert says in err and f"{path}:2" in err and "Traceback" not in err


def test_bench_retrieval_missing_file_and_bad_k(tmp_path, capsys):
    assert main(["bench", "retrieval", "--input", str(tmp_path / "none.jsonl")]) == 2
    assert "no such file" in capsys.readouterr().err
    assert main(["bench", "retrieval", "--input", str(tmp_path / "none.jsonl"), "--k", "5"]) == 2
    assert "between 10 and 1000" in capsys.readouterr().err
