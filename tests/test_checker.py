"""Each cited statute gets a verdict against the database; NHSR is the share verified (LegalHalBench §3.3)."""

from __future__ import annotations

import pytest

from lawluo.law.checker import VERDICTS, normalise


def verdicts(checker, text):
    return [(c.citation.article, c.verdict) for c in checker.check(text).citations]


def only(checker, text):
    (checked,) = checker.check(text).citations
    return checked


def test_verified_exact_quote(checker):
    c = only(
        checker,
        "《中华人民共和国民法典》第一千零七十九条规定：“夫妻一方要求离婚的，可以由有关组织进行调解或者直接向人民法院提起离婚诉讼。”",
    )
    assert c.verdict == "verified" and c.matched.number == 1079


def test_verified_partial_and_reworded_quote_with_arabic_numerals(checker):
    c = only(
        checker,
        "《治安管理处罚法》第四十三条规定：“殴打他人的，处5日以上10日以下拘留，并处200元以上500元以下罚款。”",
    )
    assert c.verdict == "verified"


def test_wrong_number_names_the_article_the_content_belongs_to(checker):
    c = only(
        checker, "《劳动合同法》第三十二条规定：“劳动者提前三十日以书面形式通知用人单位，可以解除劳动合同。”"
    )
    assert c.verdict == "wrong_number" and c.matched.number == 37
    assert "第三十七条" in c.note


def test_content_mismatch_when_no_article_of_the_law_says_it(checker):
    c = only(
        checker,
        "《中华人民共和国刑法》第一百零一条规定：“暴力冲突的，应当依法追究责任，并赔偿对方全部损失。”",
    )
    assert c.verdict == "content_mismatch"


def test_not_found_for_unknown_law_and_for_article_beyond_the_end(checker):
    assert only(checker, "根据《劳动者保护法》第三条，公司要赔钱。").verdict == "not_found"
    assert only(checker, "根据《民法典》第一千三百条，继承开始。").verdict == "not_found"


def test_repealed_law_names_the_successor_article(checker):
    c = only(
        checker,
        "《合同法》第一百零七条规定：“当事人一方不履行合同义务或者履行合同义务不符合约定的，应当承担继续履行、采取补救措施或者赔偿损失等违约责任。”",
    )
    assert c.verdict == "repealed"
    assert c.matched.law.name == "中华人民共和国民法典" and c.matched.number == 577


def test_repealed_without_content_still_repealed(checker):
    c = only(checker, "依据《婚姻法》第三十二条，可以起诉离婚。")
    assert c.verdict == "repealed" and "民法典" in c.note


def test_outdated_version_when_the_content_is_an_older_versions_article(checker, db):
    old = db.article(db.versions("公司法")[1], 63)  # 2018 一人公司 joint liability, now art. 23
    c = only(checker, f"《公司法》第六十三条规定：“{old.text}”")
    assert c.verdict in ("outdated_version", "wrong_number")
    assert c.verdict == "outdated_version" and c.matched.law.version == "2018-10-26"


def test_no_content_for_name_and_number_only(checker):
    c = only(checker, "参见《民法典》第一千零七十九条。")
    assert c.verdict == "no_content" and c.matched.number == 1079


def test_nhsr_counts_only_content_bearing_citations(checker):
    text = (
        "《民法典》第一千零七十九条规定：“夫妻一方要求离婚的，可以由有关组织进行调解或者直接向人民法院提起离婚诉讼。”"
        "《劳动合同法》第三十二条规定：“劳动者提前三十日以书面形式通知用人单位，可以解除劳动合同。”"
        "另见《民法典》第一千零八十条。"
    )
    result = checker.check(text)
    assert [c.verdict for c in result.citations] == ["verified", "wrong_number", "no_content"]
    assert result.nhsr == pytest.approx(0.5)
    assert result.counts()["no_content"] == 1 and set(result.counts()) == set(VERDICTS)


def test_nhsr_is_none_without_content(checker):
    assert checker.check("参见《民法典》第一千零七十九条。").nhsr is None
    assert checker.check("没有引用任何法条。").nhsr is None


def test_normalise():
    assert normalise("（1）处5日以上，10日以下") == "一处五日以上十日以下"


def test_shared_penalty_formula_alone_is_not_agreement(checker, db):
    # 刑法 art. 314 ends with the formula; the quote's substance (醉酒驾驶) is in no such article.
    quote = normalise("醉酒后驾驶机动车的，处三年以下有期徒刑、拘役或者罚金。")
    assert checker.agreement(quote, db.find_article("刑法", 314)) < 50


def test_hostile_and_huge_text_is_checked_without_error(checker):
    text = "<script>alert(1)</script>《民法典》第1079条" + "无关内容。" * 200_000
    result = checker.check(text)
    assert [c.citation.article for c in result.citations] == [1079]
