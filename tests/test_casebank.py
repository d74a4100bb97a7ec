"""The ToLC case bank: what the committed asset promises, and how it is built, written and read.

Most tests read the committed ``assets/cases.jsonl.gz``; those that rebuild it read ``../shared/data``
(skipped when absent) and the statute database in ``assets/``.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from lawluo.retrieval.casebank import (
    DOMAINS,
    Case,
    build_case_bank,
    cause_from_case_name,
    domain_for_cause,
    infer_cause,
    load_case_bank,
    write_case_bank,
)

ROOT = Path(__file__).resolve().parents[1]
ASSET = ROOT / "assets" / "cases.jsonl.gz"
DATA = Path(__file__).resolve().parents[2] / "shared" / "data"

needs_data = pytest.mark.skipif(not DATA.is_dir(), reason=f"source data not found at {DATA}")


@pytest.fixture(scope="module")
def cases() -> list[Case]:
    if not ASSET.exists():
        pytest.skip(f"{ASSET} not built; run `python -m lawluo build cases --data ../shared/data`")
    return load_case_bank(ASSET)


def extractor():
    """The statutes a case cites, resolved against the shipped database (as ``lawluo build cases`` does)."""
    from lawluo.config import Settings
    from lawluo.law import StatuteDB
    from lawluo.law.citations import CitationExtractor

    return CitationExtractor(StatuteDB(Settings().statutes_path)).extract


@pytest.fixture(scope="module")
def built() -> list[Case]:
    if not DATA.is_dir():
        pytest.skip(f"source data not found at {DATA}")
    return build_case_bank(DATA, extract=extractor())


# -- what every case promises ---------------------------------------------------------------------


def test_every_case_has_facts_and_a_cause(cases):
    assert cases
    for case in cases:
        assert case.facts.strip(), case.id
        assert case.cause.strip(), case.id
        assert case.title.strip(), case.id


def test_ids_are_unique_and_prefixed_by_their_source(cases):
    ids = [c.id for c in cases]
    assert len(ids) == len(set(ids))
    for case in cases:
        assert case.id.startswith(f"{case.source}-"), case.id


def test_every_source_contributes(cases):
    sources = {c.source for c in cases}
    assert sources == {"cail", "typical", "disc"}


def test_domain_hints_are_consultation_domains_or_empty(cases):
    for case in cases:
        assert case.domain_hint == "" or case.domain_hint in DOMAINS, case.id


def test_articles_are_law_and_positive_article_number(cases):
    for case in cases:
        for art in case.articles:
            assert isinstance(art["law"], str) and art["law"]
            assert isinstance(art["article"], int) and art["article"] > 0


def test_only_cail_cases_carry_a_sentence(cases):
    assert all(c.sentence == "" for c in cases if c.source != "cail")
    assert all(c.sentence for c in cases if c.source == "cail")


def test_search_text_is_title_cause_and_facts(cases):
    case = cases[0]
    text = case.search_text
    assert case.title in text and case.cause in text and case.facts in text
    if case.outcome:
        assert case.outcome not in text


# -- per source --------------------------------------------------------------------------------


def test_cail_facts_shared_by_both_files_are_merged_into_one_case(cases):
    cail = [c for c in cases if c.source == "cail"]
    assert 0 < len(cail) < 1000  # 500 + 500 records describe the same facts
    # lb31-0 / lb34-0: 被告人颜某 stole 3723 yuan through the victim's Alipay. (Another CAIL fact has a
    # different defendant 颜某, so match the whole opening.)
    yan = [
        c for c in cail if "被告人颜某在本市洪山区马湖新村足球场马路边捡拾到被害人谢某的VIVOX5手机" in c.facts
    ]
    assert len(yan) == 1
    case = yan[0]
    assert case.cause == "盗窃"
    assert case.title == "盗窃案"
    assert case.domain_hint == "刑事辩护"
    assert {"law": "中华人民共和国刑法", "article": 264} in [
        {"law": a["law"], "article": a["article"]} for a in case.articles
    ]
    assert case.sentence == "4个月"  # from the terms file, merged with the articles file's record


def test_cail_facts_drop_the_labels(cases):
    for case in cases:
        if case.source == "cail":
            assert not case.facts.startswith("事实:")
            assert "罪名:" not in case.facts and "\r" not in case.facts


def test_a_labour_typical_case_has_a_cause_and_the_labour_domain(cases):
    labour = [c for c in cases if c.source == "typical" and c.title == "加班费的仲裁时效应当如何认定"]
    assert len(labour) == 1
    case = labour[0]
    assert case.cause
    assert case.domain_hint == "劳动纠纷"
    assert "张某" in case.facts and case.outcome  # 基本案情 → facts; 裁判结果/案例分析/典型意义 → outcome
    assert "<!--" not in case.facts + case.outcome


def test_typical_case_cause_comes_from_its_case_name(cases):
    by_title = {c.title: c for c in cases if c.source == "typical"}
    car = by_title["为家庭生活消费需要购买汽车，发生欺诈纠纷的，可以按照消费者权益保护法处理。"]
    assert car.cause == "买卖合同纠纷"
    assert car.domain_hint == "消费权益"


def test_disc_keeps_only_case_analyses(cases):
    disc = [c for c in cases if c.source == "disc"]
    assert disc
    for case in disc:
        assert not case.facts.startswith("请对以下案件"), case.id
        assert case.outcome, case.id


@needs_data
def test_disc_case_count_matches_the_case_analysis_rows(cases):
    rows = [json.loads(line) for line in (DATA / "disc" / "qa_short_answer.jsonl").open(encoding="utf-8")]
    analyses = [r for r in rows if r["input"].startswith("请对以下案件做出分析并给出可能的判决")]
    assert 0 < len(analyses) < len(rows)
    assert sum(c.source == "disc" for c in cases) == len(analyses)


def test_a_disc_drunk_driving_judgment_is_a_criminal_case(cases):
    disc1 = next(c for c in cases if c.id == "disc-1")
    assert disc1.cause == "危险驾驶"
    assert disc1.domain_hint == "刑事辩护"


# -- cause and domain heuristics ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "administrative", "cause"),
    [
        ("张莉诉北京合力华通汽车服务有限公司买卖合同纠纷案", False, "买卖合同纠纷"),
        ("张某等人诉某销售公司、孟某某服务合同纠纷案", False, "服务合同纠纷"),
        ("孙银山诉南京欧尚超市有限公司江宁店买卖合同纠纷案", False, "买卖合同纠纷"),
        ("常某某诉许某网络服务合同案", False, "网络服务合同纠纷"),
        ("张某某诉某物业公司等财产损害赔偿案", False, "财产损害赔偿纠纷"),
        ("邹某与某医美机构侵权责任纠纷案", False, "侵权责任纠纷"),
        ("王某诉安徽省怀宁县国土资源局土地管理行政出让案", True, "土地管理行政出让"),
        ("加班费的仲裁时效应当如何认定", False, ""),
    ],
)
def test_cause_from_case_name(name, administrative, cause):
    assert cause_from_case_name(name, administrative=administrative) == cause


def test_infer_cause_prefers_a_named_cause_over_keywords():
    assert infer_cause("本案系劳务合同纠纷，原告向被告借款") == "劳务合同纠纷"
    assert infer_cause("被告向原告借款5万元，出具借条一张") == "民间借贷纠纷"
    assert infer_cause("计算至全国银行间同业拆借中心公布的贷款市场报价利率，被告尚欠货款") == "买卖合同纠纷"
    assert infer_cause("今天天气很好") == ""


def test_domain_for_cause():
    assert domain_for_cause("劳动争议") == "劳动纠纷"
    assert domain_for_cause("机动车交通事故责任纠纷") == "交通事故"
    assert domain_for_cause("遗嘱继承纠纷") == "婚姻家庭"
    assert domain_for_cause("盗窃") == ""


# -- writing and reading -----------------------------------------------------------------------


def test_write_then_load_round_trips(cases, tmp_path):
    path = tmp_path / "cases.jsonl.gz"
    write_case_bank(cases[:20], path)
    assert load_case_bank(path) == cases[:20]


def test_written_gzip_has_no_timestamp(cases, tmp_path):
    path = tmp_path / "cases.jsonl.gz"
    write_case_bank(cases[:3], path)
    header = path.read_bytes()[:10]
    assert header[:2] == b"\x1f\x8b"
    assert header[4:8] == b"\x00\x00\x00\x00"  # MTIME


def test_the_build_is_deterministic(built, tmp_path):
    again = build_case_bank(DATA, extract=extractor())
    first, second = tmp_path / "a.jsonl.gz", tmp_path / "b.jsonl.gz"
    write_case_bank(built, first)
    write_case_bank(again, second)
    assert first.read_bytes() == second.read_bytes()


def test_the_committed_asset_is_what_the_build_produces(built, tmp_path):
    if not ASSET.exists():
        pytest.skip(f"{ASSET} not built")
    fresh = tmp_path / "cases.jsonl.gz"
    write_case_bank(built, fresh)
    assert fresh.read_bytes() == ASSET.read_bytes(), (
        "assets/cases.jsonl.gz is stale; rebuild with `python -m lawluo build cases --data ../shared/data`"
    )


def _gzip_lines(path: Path, lines: list[str]) -> None:
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


def test_loading_a_broken_line_names_the_line(cases, tmp_path):
    path = tmp_path / "broken.jsonl.gz"
    _gzip_lines(path, [cases[0].to_json(), cases[1].to_json(), '{"id": "cail-1", "source": "ca'])
    with pytest.raises(ValueError, match=r"line 3"):
        load_case_bank(path)


def test_loading_a_record_with_missing_fields_names_the_line(cases, tmp_path):
    path = tmp_path / "incomplete.jsonl.gz"
    _gzip_lines(path, [cases[0].to_json(), json.dumps({"id": "x", "source": "cail"})])
    with pytest.raises(ValueError, match=r"line 2.*missing"):
        load_case_bank(path)


def test_loading_a_file_that_is_not_gzip_is_a_value_error(tmp_path):
    path = tmp_path / "plain.jsonl.gz"
    path.write_text("{}\n", encoding="utf-8")
    with pytest.raises(ValueError, match="gzip"):
        load_case_bank(path)
