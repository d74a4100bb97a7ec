"""The (question, cited article) pairs of ``lawluo/retrieval/supervision.py``."""

from __future__ import annotations

import gzip
import hashlib
import json
from collections import Counter

import pytest

from lawluo.retrieval import supervision as sv

from .conftest import ROOT, SHARED_DATA

CONTRACT_107 = "当事人一方不履行合同义务或者履行合同义务不符合约定的，应当承担继续履行、采取补救措施或者赔偿损失等违约责任。"
CODE_1087 = (
    "离婚时，夫妻的共同财产由双方协议处理；协议不成的，由人民法院根据财产的具体情况，"
    "按照照顾子女、女方和无过错方权益的原则判决。"
)


def articles(checker, text, stats=None):
    return sv.read_articles(text, checker, Counter() if stats is None else stats, "test")


def test_alias_and_numerals_resolve_to_one_article(checker):
    assert articles(checker, "依据《中华人民共和国民法典》第一千零七十九条") == [("民法典", 1079)]
    assert articles(checker, "依据《民法典》第1079条第二款") == [("民法典", 1079)]


def test_repealed_law_maps_to_its_successor_article(checker):
    assert articles(checker, f"《合同法》第一百零七条：{CONTRACT_107}") == [("民法典", 577)]


def test_wrong_number_takes_the_article_the_content_is(checker):
    # 婚姻法-style numbering: the quoted text is 民法典 art. 1087, cited as art. 1079.
    assert articles(checker, f"《民法典》第一千零七十九条：{CODE_1087}") == [("民法典", 1087)]


def test_revision_note_in_a_title_is_read_as_the_law(checker):
    assert articles(checker, "根据《中华人民共和国商标法(2019修正)》第六条，") == [("商标法", 6)]


def test_unresolved_citations_are_dropped_and_counted(checker):
    stats = Counter()
    assert articles(checker, "《中华人民共和国不存在法》第三条；《民法典》第九千条", stats) == []
    assert stats["unresolved:test"] == 2


def pair(pid, source, question, arts, is_eval=False):
    return sv.Pair(pid, source, question, list(arts), eval=is_eval)


def test_near_duplicates_across_sources_merge_with_the_union_of_articles():
    q = "我和老公分居两年了，他不同意离婚，我起诉离婚法院会判离吗？"
    rows = [
        pair("a", "lawyer_llama_single_turn", q, [("民法典", 1079)]),
        pair("b", "other", "公司拖欠我三个月工资不给怎么办", [("劳动合同法", 30)]),
        pair(
            "c",
            "kinled_consult",
            q.replace("？", "").replace("，", " "),
            [("民法典", 1079), ("民法典", 1087)],
        ),
    ]
    stats = Counter()
    kept = sv.deduplicate(rows, stats)
    assert [p.id for p in kept] == ["a", "b"]
    assert kept[0].articles == [("民法典", 1079), ("民法典", 1087)]
    assert stats["duplicates:kinled_consult"] == 1


def test_evaluation_questions_are_never_merged_or_changed():
    q = "场景:小张开了一家个人独资企业，欠了供应商货款。根据哪条法律规定，小张隐匿财产会受到什么处罚？"
    rows = [
        pair("train", "kinled_consult", q.removeprefix("场景:"), [("刑法", 1)]),
        pair("e1", "lawbench_scenario", q, [("个人独资企业法", 42)], is_eval=True),
        pair("e2", "lawbench_scenario", q + "呢", [("个人独资企业法", 31)], is_eval=True),
    ]
    kept = sv.deduplicate(rows, Counter())
    assert [(p.id, p.articles) for p in kept] == [
        ("e1", [("个人独资企业法", 42)]),
        ("e2", [("个人独资企业法", 31)]),
    ]


def test_paraphrases_of_an_evaluation_question_share_its_group():
    eval_q = "房东不退押金，合同到期了，我该怎么办？可以起诉房东吗？"
    related = "房东不退押金，合同到期了，我该怎么办？"
    rows = [
        pair("t1", "x", related, [("民法典", 703)]),
        pair("t2", "x", "交通事故对方全责不赔钱怎么办", [("民法典", 1208)]),
        pair("e", "lawbench_consult", eval_q, [("民法典", 703)], is_eval=True),
    ]
    jac = sv.similar_pairs([eval_q, related], 0.0)[0][2]
    assert sv.RELATED <= jac < sv.DUPLICATE  # related, not a duplicate: both rows stay
    sv.assign_groups(rows)
    assert [p.group for p in rows] == ["e", "t2", "e"]


def write_tiny_data(root):
    def jsonl(name, rows):
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")

    law = f"《民法典》第一千零八十七条：{CODE_1087}"
    jsonl(
        "lawbench/scenario_statute.dev.jsonl",
        [{"id": "s1", "question": "场景:离婚财产怎么分？", "reference": law}],
    )
    jsonl(
        "lawbench/consult.dev.jsonl",
        [{"id": "c1", "question": "对方违约怎么办", "reference": f"《合同法》第一百零七条{CONTRACT_107}"}],
    )
    jsonl(
        "lawyer_llama/legal_counsel_with_article_v2.jsonl",
        [{"query": "离婚时夫妻共同财产如何分割呢", "laws": [law]}],
    )
    jsonl(
        "lawyer_llama/legal_counsel_multi_turn_with_article_v2.jsonl",
        [{"query": "离婚时夫妻共同财产如何分割", "laws": [law], "history": []}],
    )
    jsonl(
        "lawyer_llama/zixun_gpt4.dev.jsonl",
        [{"id": "zx-1", "query": "离婚后孩子归谁", "laws": [law], "response": law}],
    )
    jsonl("lawyer_llama/legal_advice.jsonl", [[{"instruction": "借钱不还怎么办", "output": "可以起诉。"}]])
    jsonl(
        "disc/qa_short_answer.jsonl",
        [{"id": 1, "input": "醉驾怎么处理", "output": "《刑法》第一百三十三条之一"}],
    )
    for name, rows in (
        ("consult_995.json", [{"question": "分居两年能离婚吗", "answer": "《民法典》第一千零七十九条"}]),
        (
            "judicial_interp_4382.json",
            [{"question": "根据《中华人民共和国商标法(2019修正)》第六条，怎么办？", "answer": "根据第六条"}],
        ),
    ):
        (root / "lawluo_kinled").mkdir(parents=True, exist_ok=True)
        (root / "lawluo_kinled" / name).write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")


def test_build_is_deterministic_and_well_formed(tmp_path, db):
    data = tmp_path / "data"
    write_tiny_data(data)
    first = sv.build_and_write(data, tmp_path / "a", db)
    second = sv.build_and_write(data, tmp_path / "b", db)
    assert first["sha256"] == second["sha256"]
    assert (tmp_path / "a" / sv.PROVENANCE_FILENAME).read_text() == (
        tmp_path / "b" / sv.PROVENANCE_FILENAME
    ).read_text()
    rows = [json.loads(line) for line in gzip.open(tmp_path / "a" / sv.FILENAME, "rt", encoding="utf-8")]
    by_id = {r["id"]: r for r in rows}
    assert by_id["s1"]["eval"] and by_id["s1"]["group"] == "s1"
    assert by_id["c1"]["articles"] == [["民法典", 577]]
    assert by_id["kinled_interpretation#0"]["articles"] == [["商标法", 6]]
    assert "lawyer_llama_multi_turn#0" not in by_id  # a near duplicate of the single-turn question
    assert "lawyer_llama_advice#0" not in by_id  # no article: no row
    assert first["by_source"]["lawyer_llama_multi_turn"]["duplicates"] == 1
    assert set(rows[0]) == {"id", "source", "question", "articles", "group", "eval"}
    lay = [r for r in rows if r["source"] == sv.LAY_SOURCE]
    assert len(lay) == 384 + 335 == first["by_source"][sv.LAY_SOURCE]["questions"]  # fresh1–4, train1–4
    assert all(r["eval"] and r["group"] == r["id"] and r["id"].startswith(("fresh", "train")) for r in lay)
    # the held-out sets (the ones that decided them, and the next) stay out
    held_out = ("fresh5-", "fresh6-", "fresh7-", "fresh8-", "fresh9-", "fresh10-", "fresh11-", "fresh12-")
    assert not any(r["id"].startswith(held_out) for r in lay)


def write_lay_set(folder, rows) -> dict[str, str]:
    folder.mkdir(parents=True, exist_ok=True)
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    (folder / "lay.jsonl").write_text(text, encoding="utf-8")
    return {"lay.jsonl": hashlib.sha256(text.encode("utf-8")).hexdigest()}


def test_lay_questions_are_evaluation_rows_with_the_articles_the_database_knows(tmp_path, db):
    sets = write_lay_set(
        tmp_path,
        [
            {
                "id": "q1",
                "question": "房东不退押金",
                "gold": [{"law": "民法典", "article": 577}, {"law": "民法典", "article": 577}],
            },
            {
                "id": "q2",
                "question": "公司不给加班费",
                "gold": [{"law": "劳动法", "article": 44}, {"law": "不存在的法", "article": 1}],
            },
            {"id": "q3", "question": "没有一条知道的", "gold": [{"law": "民法典", "article": 99999}]},
        ],
    )
    stats = Counter()
    pairs = sv.read_lay_pairs(db, stats, tmp_path, sets)
    assert [(p.id, p.articles, p.eval, p.source) for p in pairs] == [
        ("q1", [("民法典", 577)], True, sv.LAY_SOURCE),
        ("q2", [("劳动法", 44)], True, sv.LAY_SOURCE),
    ]
    assert stats[f"unresolved:{sv.LAY_SOURCE}"] == 2 and stats[f"no articles:{sv.LAY_SOURCE}"] == 1


def test_a_lay_set_edited_after_it_was_frozen_stops_the_build(tmp_path, db):
    sets = write_lay_set(
        tmp_path, [{"id": "q1", "question": "房东不退押金", "gold": [{"law": "民法典", "article": 577}]}]
    )
    (tmp_path / "lay.jsonl").write_text('{"id": "q1", "question": "改过", "gold": []}\n', encoding="utf-8")
    with pytest.raises(ValueError, match="frozen"):
        sv.read_lay_pairs(db, Counter(), tmp_path, sets)


def test_the_lay_sets_learned_from_are_fresh1_to_4_and_train1_to_4_as_frozen_never_the_held_out_ones(
    monkeypatch,
):
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    from retrieval_fresh import FRESH_SETS  # the scorer's sets: 1–4 taken from LAY_SETS, 5 to 8 its own

    assert sorted(sv.LAY_SETS) == [
        f"lay_questions.{s}{n}.jsonl" for s in ("fresh", "train") for n in (1, 2, 3, 4)
    ]
    held_out = {
        path.name
        for name, (path, _sha) in FRESH_SETS.items()
        if name in ("fresh5", "fresh6", "fresh7", "fresh8", "fresh9", "fresh10", "fresh11", "fresh12")
    }
    assert len(held_out) == 8 and not held_out & set(sv.LAY_SETS)
    assert sorted(FRESH_SETS) == sorted(f"fresh{n}" for n in range(1, 13)), (
        "training sets are not scored as fresh"
    )
    for path, sha in FRESH_SETS.values():
        sv.read_frozen(path, sha)
    for name, sha in sv.LAY_SETS.items():
        sv.read_frozen(sv.LAY_DIR / name, sha)  # each file still has the bytes it was frozen with


def test_the_development_sets_are_scored_as_dev_and_never_learned_from_nor_held_out(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    from retrieval_fresh import DEV, FRESH_SETS, fresh_set

    assert sorted(sv.DEV_LAY_SETS) == [f"lay_questions.train{n}.jsonl" for n in (5, 6, 7, 8)]
    assert not set(sv.DEV_LAY_SETS) & set(sv.LAY_SETS)  # refused by fresh8: nothing learns from them
    assert not set(sv.DEV_LAY_SETS) & {path.name for path, _sha in FRESH_SETS.values()}
    rows = fresh_set(DEV)  # every set, each checked against its sha256
    assert len(rows) == 341 and len({r["id"] for r in rows}) == 341
    assert {r["id"].split("-")[0] for r in rows} == {"train5", "train6", "train7", "train8"}
    supervision = [json.loads(line) for line in gzip.open(ROOT / "assets" / "supervision.jsonl.gz", "rt")]
    learned = {r["id"] for r in supervision}
    assert not learned & {r["id"] for r in rows}


def test_missing_data_names_the_files(tmp_path, checker):
    with pytest.raises(FileNotFoundError, match="consult.dev.jsonl"):
        sv.read_pairs(tmp_path, checker, Counter())


@pytest.mark.skipif(
    not SHARED_DATA.exists(),
    reason="../shared/data is missing: the shipped asset cannot be checked against it",
)
def test_shipped_asset_has_rows_from_every_source():
    path = ROOT / "assets" / sv.FILENAME
    assert path.stat().st_size < 5_000_000
    rows = [json.loads(line) for line in gzip.open(path, "rt", encoding="utf-8")]
    sources = Counter(r["source"] for r in rows)
    # The multi-turn dialogues open with the single-turn questions word for word: all merged away.
    assert set(sources) == (set(sv.SOURCES) | {sv.LAY_SOURCE}) - {"lawyer_llama_multi_turn"}
    assert all(
        r["eval"] == (r["source"].startswith("lawbench") or r["source"] == sv.LAY_SOURCE) for r in rows
    )
    assert sources[sv.LAY_SOURCE] == 384 + 335
    assert len({r["id"] for r in rows}) == len(rows)
    assert sources["lawbench_scenario"] > 200 and sources["lawbench_consult"] > 200
    assert all(
        r["articles"] and all(isinstance(n, int) and n >= 1 for _law, n in r["articles"]) for r in rows
    )
