"""The checker compares only text that claims to state the article (issue 40, item 1), and a quote that
agrees with an article but changes what it means — a splice, one word of legal meaning — is not verified."""

from __future__ import annotations

import pytest

from lawluo.law.meaning import _key_tokens


def only(checker, text):
    (checked,) = checker.check(text).citations
    return checked


def kinds(checker, text):
    return [(c.citation.article, c.citation.content_kind, c.verdict) for c in checker.check(text).citations]


# -- quoting, stating, applying ---------------------------------------------------------------------


def test_a_judgment_applying_articles_is_not_read_as_their_content(checker):
    text = (
        "依照《中华人民共和国刑法》第二百六十六条、第六十七条第三款、第二十三条之规定，判决如下：被告人张3犯诈骗罪，"
        "判处有期徒刑一年。（刑期从判决执行之日起计算。判决执行以前先行羁押的，羁押一日折抵刑期一日。）"
    )
    assert kinds(checker, text) == [
        (266, "applied", "no_content"),
        (67, "applied", "no_content"),
        (23, "applied", "no_content"),
    ]


def test_the_courts_finding_after_a_citation_is_applied_not_stated(checker):
    c = only(
        checker,
        "依照《中华人民共和国刑法》第一百三十三条之一，犯罪事实清楚，证据确实、充分，应当以危险驾驶罪追究其刑事责任",
    )
    assert (c.citation.content_kind, c.verdict) == ("applied", "no_content")
    c = only(
        checker, "被告人归案后如实供述，符合《中华人民共和国刑法》第六十七条第三款的规定，依法可以从轻处罚。"
    )
    assert (c.citation.content_kind, c.verdict) == ("applied", "no_content")


def test_advice_to_the_client_after_a_citation_is_applied(checker):
    c = only(checker, "根据《劳动合同法》第四十七条，公司应当按您的工作年限支付经济补偿")
    assert (c.citation.content_kind, c.verdict) == ("applied", "no_content")


@pytest.mark.parametrize(
    "text",
    [
        "根据《劳动合同法》第四十七条规定，经济补偿按劳动者在本单位工作的年限，每满一年支付一个月工资的标准向劳动者支付。",
        "根据《劳动合同法》第四十七条的规定，经济补偿按劳动者在本单位工作的年限，每满一年支付一个月工资的标准向劳动者支付。",
    ],
)
def test_a_rule_restated_after_a_citation_is_compared_as_a_paraphrase(checker, text):
    c = only(checker, text)
    assert (c.citation.content_kind, c.verdict) == ("stated", "verified")


def test_statute_words_for_parties_do_not_make_a_quote_an_application(checker):
    """原告, 本案 and 其他 are words of 民事诉讼法 itself: the quote is still compared (and here it is
    art. 122's text under 119's number)."""
    c = only(
        checker,
        "《中华人民共和国民事诉讼法》第一百一十九条规定，起诉必须符合下列条件：（一）原告是与本案有直接利害关系的公民、"
        "法人和其他组织；（二）有明确的被告；（三）有具体的诉讼请求和事实、理由；（四）属于人民法院受理民事诉讼的范围和受诉人民法院管辖。",
    )
    assert c.citation.content_kind == "stated" and c.verdict == "wrong_number"


# -- the issuer outside the brackets -----------------------------------------------------------------


@pytest.mark.parametrize("issuer", ["最高人民法院、最高人民检察院", "两高"])
def test_an_interpretation_named_after_its_issuer_outside_the_brackets_resolves(checker, issuer):
    c = only(checker, f"依照{issuer}《关于办理盗窃刑事案件适用法律若干问题的解释》第一条之规定")
    assert c.citation.law == "最高人民法院、最高人民检察院关于办理盗窃刑事案件适用法律若干问题的解释"
    assert c.verdict == "no_content"


# -- splices and words of legal meaning --------------------------------------------------------------


def test_a_splice_of_two_provisions_is_a_content_mismatch(checker):
    """Issue 40's example: 道路交通安全法 art. 91 punishes 饮酒后 driving with 暂扣六个月; 醉酒 driving with
    约束至酒醒，吊销… Every piece is in the article, so the agreement score alone passed it."""
    c = only(
        checker,
        "根据《中华人民共和国道路交通安全法》第九十一条，醉酒驾驶机动车的，处暂扣六个月机动车驾驶证，并处一千元以上二千元以下罚款。",
    )
    assert c.verdict == "content_mismatch"
    assert c.note.startswith("spliced") and "饮酒后驾驶机动车的" in c.note


def test_the_true_provision_for_that_subject_is_verified(checker):
    c = only(
        checker,
        "《中华人民共和国道路交通安全法》第九十一条规定：“醉酒驾驶机动车的，由公安机关交通管理部门约束至酒醒，吊销机动车驾驶证，"
        "依法追究刑事责任；五年内不得重新取得机动车驾驶证。”",
    )
    assert c.verdict == "verified"


def test_a_paraphrase_condensing_two_sentences_of_one_rule_is_not_a_splice(checker):
    c = only(checker, "《中华人民共和国刑法》第六十七条规定，犯罪以后自首的，可以从轻或者减轻处罚。")
    assert c.verdict == "verified", c.note


@pytest.mark.parametrize(
    ("changed", "note"),
    [
        ("殴打他人的，处五日以下十日以上拘留", "changes"),  # 以上 ↔ 以下
        ("殴打他人的，处五日以上十五日以下拘留", "changes"),  # a period changed
        ("殴打他人的，处五日以上十日以下拘留，并处二百元以上五千元以下罚款", "changes"),  # an amount
    ],
)
def test_one_changed_word_of_legal_meaning_is_a_content_mismatch(checker, changed, note):
    c = only(checker, f"《治安管理处罚法》第四十三条规定：“{changed}。”")
    assert c.verdict == "content_mismatch" and note in c.note


def test_may_for_must_is_a_content_mismatch(checker):
    c = only(
        checker,
        "《中华人民共和国劳动合同法》第八十二条规定：“用人单位自用工之日起超过一个月不满一年未与劳动者订立书面劳动合同的，"
        "可以向劳动者每月支付二倍的工资。”",
    )
    assert c.verdict == "content_mismatch" and "may" in c.note and "must" in c.note


def test_arabic_numerals_and_a_partial_quote_keep_their_meaning(checker):
    c = only(
        checker,
        "《治安管理处罚法》第四十三条规定：“殴打他人的，处5日以上10日以下拘留，并处200元以上500元以下罚款。”",
    )
    assert c.verdict == "verified"


def test_key_tokens_count_periods_and_amounts_not_every_numeral():
    assert _key_tokens("夫妻一方的个人财产") == []
    assert _key_tokens("每满一年支付一个月工资") == ["一", "一"]
    assert _key_tokens("处两千元以下罚款；不得") == ["二千", "以下", "must_not"]
