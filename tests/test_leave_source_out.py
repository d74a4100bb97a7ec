"""``bench retrieval --leave-source-out`` (lawluo/retrieval/holdout.py) on a tiny statute database."""

from __future__ import annotations

import gzip
import json
from functools import partial

import numpy as np
import pytest

from lawluo.cli import main
from lawluo.retrieval import holdout, priors
from lawluo.retrieval.holdout import FAMILIES, LeaveSourceOut, paired_difference, split
from lawluo.retrieval.rerank import train

LABOUR = """# 中华人民共和国劳动合同法

2012年12月28日 第十一届全国人民代表大会常务委员会第三十次会议修正

<!-- INFO END -->

## 第一章 总则

第一条 为了完善劳动合同制度，明确劳动合同双方当事人的权利和义务，保护劳动者的合法权益，制定本法。

第十条 建立劳动关系，应当订立书面劳动合同。

第十九条 劳动合同期限三个月以上不满一年的，试用期不得超过一个月。

第三十条 用人单位应当按照劳动合同约定和国家规定，向劳动者及时足额支付劳动报酬。

第三十一条 用人单位应当严格执行劳动定额标准，不得强迫或者变相强迫劳动者加班。用人单位安排加班的，应当按照国家有关规定向劳动者支付加班费。

第四十六条 有下列情形之一的，用人单位应当向劳动者支付经济补偿。
"""

TRAFFIC = """# 中华人民共和国道路交通安全法

2021年4月29日 第十三届全国人民代表大会常务委员会第二十八次会议修正

<!-- INFO END -->

## 第一章 总则

第一条 为了维护道路交通秩序，预防和减少交通事故，保护人身安全，制定本法。

第十九条 驾驶机动车，应当依法取得机动车驾驶证。

第二十二条 饮酒、服用国家管制的精神药品或者麻醉药品的，不得驾驶机动车。

第七十六条 机动车发生交通事故造成人身伤亡、财产损失的，由保险公司在机动车第三者责任强制保险责任限额范围内予以赔偿。

第九十一条 饮酒后驾驶机动车的，处暂扣六个月机动车驾驶证，并处一千元以上二千元以下罚款。
"""

DISC_QUESTION = "老板连续三个月拖欠我的工资不发，我该怎么向公司讨要劳动报酬"
#: A KINLED question sharing most of DISC_QUESTION's character 6-grams: a near duplicate across families.
NEAR_DUPLICATE = "老板连续三个月拖欠我的工资不发，我该怎么向公司讨要劳动报酬呢？"


def _row(i, source, question, articles, eval_=False):
    return {
        "id": f"{source}#{i}",
        "group": f"{source}#{i}",
        "source": source,
        "question": question,
        "articles": [list(a) for a in articles],
        "eval": eval_,
    }


ROWS = [
    _row(0, "disc", DISC_QUESTION, [("劳动合同法", 30)]),
    _row(1, "disc", "喝了两瓶啤酒开车被交警查到了会怎么处罚", [("道路交通安全法", 91)]),
    _row(0, "kinled_consult", NEAR_DUPLICATE, [("劳动合同法", 30)]),
    _row(1, "kinled_consult", "公司一直不跟我签书面劳动合同可以吗", [("劳动合同法", 10)]),
    _row(
        2,
        "kinled_interpretation",
        "根据《劳动合同法》第十九条，试用期最长可以约定多久？",
        [("劳动合同法", 19)],
    ),
    _row(3, "kinled_consult", "单位天天让我加班却不给加班费", [("劳动合同法", 31)]),
    _row(0, "lawyer_llama_single_turn", "开车撞了人，保险公司要赔多少", [("道路交通安全法", 76)]),
    _row(1, "lawyer_llama_single_turn", "没有驾驶证开车会被处罚吗", [("道路交通安全法", 19)]),
    _row(2, "lawyer_llama_zixun", "公司裁员要给经济补偿吗", [("劳动合同法", 46)]),
    _row(3, "lawyer_llama_zixun", "试用期三个月合法吗，合同签了一年", [("劳动合同法", 19)]),
    _row(0, "lawbench_consult", "酒驾第一次被抓驾驶证会扣多久", [("道路交通安全法", 91)], eval_=True),
    _row(1, "lawbench_consult", "公司不发工资能去哪里投诉", [("劳动合同法", 30)], eval_=True),
    _row(
        2,
        "lawbench_scenario",
        "场景:小王喝酒后驾驶汽车，应当如何处理？",
        [("道路交通安全法", 22)],
        eval_=True,
    ),
    _row(
        3,
        "lawbench_scenario",
        "场景:小李签了一年的劳动合同，试用期能约定多长？",
        [("劳动合同法", 19)],
        eval_=True,
    ),
]

EXPANSIONS = {
    ("劳动合同法", 30): [
        (DISC_QUESTION, "disc"),
        (NEAR_DUPLICATE, "consult_995"),
        ("老板欠薪怎么办", "zixun_gpt4.dev"),
    ],
    ("劳动合同法", 31): [("加班没有加班费", "legal_counsel_with_article_v2")],
    ("道路交通安全法", 91): [("酒后开车被查", "cail"), ("喝酒驾车的处罚", "term_qa_3125")],
}


@pytest.fixture(autouse=True)
def small_reranker(monkeypatch):
    """Few rounds and one seed (a set this small gets leaves of 2 rows from
    :func:`~lawluo.retrieval.rerank.train` itself)."""
    monkeypatch.setattr(holdout, "train", partial(train, rounds=10, seeds=(0,)))


def _family(name):
    return next(f for f in FAMILIES if f.name == name)


@pytest.fixture(scope="module")
def tiny_db(tmp_path_factory):
    from lawluo.law.build import build_statute_db
    from lawluo.law.database import StatuteDB

    root = tmp_path_factory.mktemp("lso")
    for folder, name, text in (("社会法", "劳动合同法", LABOUR), ("行政法", "道路交通安全法", TRAFFIC)):
        (root / "laws" / folder).mkdir(parents=True)
        (root / "laws" / folder / f"{name}.md").write_text(text, encoding="utf-8")
    build_statute_db(root / "laws", root / "statutes.sqlite")
    return StatuteDB(root / "statutes.sqlite")


@pytest.fixture(scope="module")
def bench(tiny_db):
    return LeaveSourceOut(tiny_db, ROWS, EXPANSIONS, None)


def test_a_held_out_source_and_its_near_duplicates_leave_the_training_data():
    part = split(_family("disc"), ROWS, EXPANSIONS, max_queries=0)
    assert [q.question for q in part.test] == [DISC_QUESTION, ROWS[1]["question"]]
    questions = {r["question"] for r in part.training}
    assert DISC_QUESTION not in questions and NEAR_DUPLICATE not in questions  # the KINLED near duplicate too
    assert part.near_rows == ["kinled_consult#0"]
    assert len(part.training) == len(ROWS) - 3
    kept = [q for v in part.expansions.values() for q in v]
    assert DISC_QUESTION not in kept and NEAR_DUPLICATE not in kept and "老板欠薪怎么办" in kept
    assert part.expansions_dropped == {"source": 1, "near": 1}
    # the law prior counts no held-out row (all rows: 劳动合同法 6, 道路交通安全法 3)
    assert priors.law_counts(part.training) == {"劳动合同法": 4, "道路交通安全法": 2}


def test_test_questions_lose_their_citation_and_the_family_its_expansion_sources():
    part = split(_family("kinled"), ROWS, EXPANSIONS, max_queries=0)
    assert "试用期最长可以约定多久？" in [q.question for q in part.test]
    assert not any(r["source"].startswith("kinled") for r in part.training)
    kept = [q for v in part.expansions.values() for q in v]
    assert "喝酒驾车的处罚" not in kept and NEAR_DUPLICATE not in kept and "酒后开车被查" in kept
    # DISC's question is a near duplicate of a KINLED one: held out with it, though of another family
    assert part.near_rows == ["disc#0"] and DISC_QUESTION not in kept


def test_sampling_is_seeded_and_keeps_whole_groups():
    a = split(_family("lawyer-llama"), ROWS, EXPANSIONS, max_queries=2, seed=1)
    b = split(_family("lawyer-llama"), ROWS, EXPANSIONS, max_queries=2, seed=1)
    assert [q.id for q in a.test] == [q.id for q in b.test] and len(a.test) == 2
    assert a.held_rows == 4


@pytest.mark.parametrize("name", ["disc", "kinled", "lawbench"])
def test_no_held_out_question_reaches_any_refit_part(bench, monkeypatch, name):
    """Every searcher the bench builds for a family (the sparse one, the out-of-fold ones, the expansions
    one) sees no question of the family nor a near duplicate of one, in its law counts, votes, index or the
    colloquial terms mined for it."""
    seen_rows, seen_expansions = [], []
    sparse, with_expansions = LeaveSourceOut.sparse, LeaveSourceOut.with_expansions

    def spy_sparse(self, training):
        seen_rows.append(list(training))
        searcher = sparse(self, training)
        if searcher.features.votes is not None:
            seen_rows.append([{"question": q} for q in searcher.features.votes.questions])
        return searcher

    def spy_expansions(self, expansions):
        seen_expansions.append(dict(expansions))
        return with_expansions(self, expansions)

    mined, mine = [], holdout.colloquial.mine

    def spy_mine(rows, db, shares):
        mined.append(list(rows))
        return mine(rows, db, shares)

    monkeypatch.setattr(LeaveSourceOut, "sparse", spy_sparse)
    monkeypatch.setattr(LeaveSourceOut, "with_expansions", spy_expansions)
    monkeypatch.setattr(holdout.colloquial, "mine", spy_mine)
    result = bench.run_family(_family(name), max_queries=0, reranker_queries=0)
    held = {r["question"] for r in ROWS if _family(name).owns(r["source"])}
    held |= {holdout.query_text(q) for q in held}
    forbidden = held | ({NEAR_DUPLICATE, DISC_QUESTION} if name in ("disc", "kinled") else set())
    assert seen_rows and seen_expansions
    for rows in seen_rows:
        assert not forbidden & {r["question"] for r in rows}
    for expansions in seen_expansions:
        assert not forbidden & {q for v in expansions.values() for q in v}
    assert set(result.evaluations) == set(holdout.SYSTEMS) - set(holdout.DENSE_SYSTEMS)  # no encoder given
    for rows in mined:
        assert not forbidden & {r["question"] for r in rows}
    if name == "lawbench":
        assert "out of fold" in result.reranker
    else:
        assert "evaluation rows (LawBench)" in result.reranker


def test_lay_questions_belong_to_no_family_and_train_the_reranker_whichever_is_held_out(tiny_db):
    """The fresh lay questions (``lawluo_lay`` evaluation rows) stay in the training data of every held-out
    family, and with LawBench held out they are the reranker's training rows instead of an out-of-fold sample."""
    lay = [
        _row(0, "lawluo_lay", "下班路上骑车被车撞了，公司说不算工伤", [("劳动合同法", 30)], eval_=True),
        _row(1, "lawluo_lay", "朋友喝了酒还要开车送我回家，我能不能拦", [("道路交通安全法", 22)], eval_=True),
        _row(2, "lawluo_lay", "老板说试用期可以签半年，合同才一年", [("劳动合同法", 19)], eval_=True),
    ]
    bench = LeaveSourceOut(tiny_db, ROWS + lay, EXPANSIONS, None)
    for family in FAMILIES:
        assert {r["id"] for r in lay} <= {r["id"] for r in split(family, ROWS + lay, EXPANSIONS, 0).training}
    assert "evaluation rows (lay)" in bench.run_family(_family("lawbench"), 0, 0).reranker
    assert "evaluation rows (LawBench and lay)" in bench.run_family(_family("disc"), 0, 0).reranker


class CharacterDense:
    """A dense first stage over the tiny database: articles by the share of the question's characters they
    hold (no model)."""

    def __init__(self, db) -> None:
        self.texts = [a.text for a in db.articles]

    def search(self, query: str, k: int) -> list[tuple[int, float]]:
        chars = set(query)
        scored = [(i, len(chars & set(t)) / max(1, len(chars))) for i, t in enumerate(self.texts)]
        return sorted(scored, key=lambda x: (-x[1], x[0]))[:k]


class CharacterEncoder:
    """Unit vectors of character counts over the tiny database's characters (no model)."""

    def __init__(self, db) -> None:
        self.alphabet = sorted({c for a in db.articles for c in a.text})

    def __call__(self, texts, **kwargs) -> np.ndarray:
        counts = np.array([[t.count(c) for c in self.alphabet] for t in texts], dtype=np.float32) + 0.01
        return counts / np.linalg.norm(counts, axis=1, keepdims=True)

    encode_query = encode_document = __call__


def character_index(db):
    """A :class:`~lawluo.retrieval.dense.DenseIndex` of :class:`CharacterEncoder` vectors (adapters apply)."""
    import faiss

    from lawluo.retrieval.dense import DenseIndex

    encoder = CharacterEncoder(db)
    vectors = encoder([a.text for a in db.articles])
    flat = faiss.IndexFlatIP(vectors.shape[1])
    flat.add(vectors)
    return DenseIndex(flat, encoder, "characters", "fp")


@pytest.mark.parametrize("name", ["disc", "lawbench"])
def test_with_a_dense_stage_the_fused_reranker_is_refit_and_measured(tiny_db, name):
    bench = LeaveSourceOut(tiny_db, ROWS, EXPANSIONS, None, dense=CharacterDense(tiny_db))
    result = bench.run_family(_family(name), max_queries=0, reranker_queries=0)
    # a dense stage that cannot take a query adapter: every system but the adapter's
    assert set(result.evaluations) == set(holdout.SYSTEMS) - {
        "fused+reranker+adapter",
        "fused+reranker+adapter+hub",
    }
    assert bench.dense is not None and all(len(e.ranks) for e in result.evaluations.values())


@pytest.mark.parametrize("name", ["disc", "lawbench"])
def test_the_query_adapter_is_fitted_without_the_held_out_family(tiny_db, name, monkeypatch):
    fitted_on: list[set[str]] = []
    measured_on: list[set[str]] = []
    real, real_hub = holdout.fit_rows, holdout.fit_hub_offsets

    def recording(dense, db, rows, *args, **kwargs):
        fitted_on.append({r["source"] for r in rows})
        return real(dense, db, rows, *args, **kwargs)

    def recording_hub(dense, rows, *args, **kwargs):
        measured_on.append({r["source"] for r in rows})
        return real_hub(dense, rows, *args, **kwargs)

    monkeypatch.setattr(holdout, "fit_rows", recording)
    monkeypatch.setattr(holdout, "fit_hub_offsets", recording_hub)
    shipped = character_index(tiny_db)
    from lawluo.retrieval.query_adapter import QueryAdapter

    shipped.adapter = QueryAdapter(np.eye(shipped.dimension, dtype=np.float32), "fp", 9)  # learned from all
    shipped.hub_offsets = np.full(len(shipped), 0.1, dtype=np.float32)  # measured against every family
    bench = LeaveSourceOut(tiny_db, ROWS, EXPANSIONS, None, dense=shipped)
    # the shipped adapter and hub offsets saw every family: never used here
    assert bench.dense.adapter is None and bench.dense.hub_offsets is None
    result = bench.run_family(_family(name), max_queries=0, reranker_queries=0)
    assert set(result.evaluations) == set(holdout.SYSTEMS)
    assert fitted_on and not any(_family(name).owns(s) for sources in fitted_on for s in sources)
    assert measured_on and not any(_family(name).owns(s) for sources in measured_on for s in sources)


def test_mean_over_families_by_hand():
    stats = holdout.macro_bootstrap([np.array([[1.0], [0.0]]), np.array([[1.0], [1.0], [1.0], [1.0]])])
    assert stats[0, 0] == 0.75  # (0.5 + 1.0) / 2, not the pooled 5 / 6
    assert 0.5 <= stats[1, 0] <= 0.75 <= stats[2, 0] <= 1.0


def test_paired_difference_by_hand():
    d = paired_difference(np.array([1.0, 1.0, 1.0, 0.0]), np.array([1.0, 0.0, 1.0, 0.0]))
    assert d["mean"] == 0.25 and 0.0 <= d["lo"] <= 0.25 <= d["hi"] <= 1.0
    same = paired_difference(np.ones(5), np.ones(5))
    assert same == {"mean": 0.0, "lo": 0.0, "hi": 0.0}


def _assets(tmp_path, tiny_db, rows=ROWS):
    import shutil

    assets = tmp_path / "assets"
    assets.mkdir()
    shutil.copyfile(tiny_db.path, assets / "statutes.sqlite")
    with gzip.open(assets / "supervision.jsonl.gz", "wt", encoding="utf-8") as f:
        f.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    with gzip.open(assets / "statute_expansions.jsonl.gz", "wt", encoding="utf-8") as f:
        for (law, n), pairs in EXPANSIONS.items():
            row = {
                "law": law,
                "article": n,
                "questions": [q for q, _ in pairs],
                "sources": [s for _, s in pairs],
            }
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    (assets / "colloquial_terms.tsv").write_text("开车\t驾驶 机动车\n", encoding="utf-8")
    return assets


def test_cli_prints_a_table_per_family_and_the_pool(tmp_path, tiny_db, capsys, monkeypatch):
    monkeypatch.setenv("LAWLUO_ASSETS_DIR", str(_assets(tmp_path, tiny_db)))
    out, figures = tmp_path / "report.md", tmp_path / "figures.json"
    argv = [
        "bench",
        "retrieval",
        "--leave-source-out",
        "--sources",
        "disc,lawbench",
        "--reranker-queries",
        "0",
    ]
    assert main([*argv, "--out", str(out), "--json", str(figures)]) == 0
    printed = capsys.readouterr().out
    for title in ("## Held out: disc", "## Held out: lawbench", "## All held-out families"):
        assert title in printed
    for system in holdout.SYSTEMS:  # two families, the mean over them, every question pooled, and
        # LawBench's two sources apart (consultations and scenarios)
        assert printed.count(f"| {system} | ") == (0 if system in holdout.DENSE_SYSTEMS else 6)
    assert "| sparse | lawbench_consult | 2 | " in printed and "| sparse | lawbench_scenario | " in printed
    report = out.read_text(encoding="utf-8")
    assert (
        report == printed
        and "python -m lawluo bench retrieval --leave-source-out --sources disc,lawbench" in report
    )
    data = json.loads(figures.read_text(encoding="utf-8"))
    assert (
        set(data["families"]) == {"disc", "lawbench"} and data["pooled"]["systems"]["sparse"]["queries"] == 6
    )
    assert data["families"]["disc"]["near_duplicate_rows_dropped"] == ["kinled_consult#0"]
    # the mean over families weighs disc's 2 questions as much as lawbench's 4
    means = [data["families"][f]["systems"]["plain"]["R@100"]["mean"] for f in ("disc", "lawbench")]
    assert data["pooled"]["mean_over_families"]["plain"]["R@100"]["mean"] == pytest.approx(sum(means) / 2)


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        (
            ["--sources", "disc,nope"],
            "unknown source(s) nope; choose from: lawyer-llama, kinled, disc, lawbench",
        ),
        (["--input", "q.jsonl"], "give either --input or --leave-source-out"),
        (["--max-queries", "-1"], "must be 0 (all) or more"),
        (["--k", "50"], "--k must be at least 100"),
    ],
)
def test_cli_bad_input_is_a_clear_error(tmp_path, tiny_db, capsys, monkeypatch, extra, says):
    monkeypatch.setenv("LAWLUO_ASSETS_DIR", str(_assets(tmp_path, tiny_db)))
    assert main(["bench", "retrieval", "--leave-source-out", *extra]) == 2
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err


def test_cli_missing_supervision_file_says_how_to_build_it(tmp_path, tiny_db, capsys, monkeypatch):
    assets = _assets(tmp_path, tiny_db)
    (assets / "supervision.jsonl.gz").unlink()
    monkeypatch.setenv("LAWLUO_ASSETS_DIR", str(assets))
    assert main(["bench", "retrieval", "--leave-source-out"]) == 2
    err = capsys.readouterr().err
    assert "no supervision file" in err and "python -m lawluo build supervision" in err


def test_leave_source_out_options_need_the_flag(capsys):
    assert main(["bench", "retrieval", "--input", "q.jsonl", "--sources", "disc"]) == 2
    assert "--sources applies to --leave-source-out only" in capsys.readouterr().err
    assert main(["bench", "retrieval"]) == 2
    assert "missing --input" in capsys.readouterr().err


def test_a_reranker_training_question_is_searched_with_an_adapter_that_never_saw_it(tiny_db, monkeypatch):
    from lawluo.retrieval import adapter_training
    from lawluo.retrieval.query_adapter import QueryAdapter
    from lawluo.retrieval.rerank_training import eval_queries

    index = character_index(tiny_db)
    index.adapter = QueryAdapter(np.eye(index.dimension, dtype=np.float32), "fp", 1)
    seen: list[tuple[list[list[int]], list]] = []
    real = adapter_training.cross_fit

    def recording(vectors, golds, articles, folds, **kwargs):
        seen.append((golds, folds))
        return real(vectors, golds, articles, folds, **kwargs)

    monkeypatch.setattr(adapter_training, "cross_fit", recording)
    queries = eval_queries(ROWS)
    view = adapter_training.training_view(index, tiny_db, ROWS, queries, None)
    assert set(view.known_queries) == {q.question for q in queries} and index.known_queries == {}
    (golds, folds), n = seen[0], len(ROWS)
    row_of = {r["question"]: i for i, r in enumerate(ROWS)}
    for fitted, test in folds:
        for t in test:  # the searched text of query t - n: its own row is never among the fitted rows
            assert row_of[queries[t - n].question] not in fitted
        assert all(golds[i] for i in fitted if i < n)  # every other row with a gold article trains
    assert sorted(t - n for _, test in folds for t in test) == list(range(len(queries)))
