"""Statute lookup by law name and article number, and which law a citation is attributed to.

Issue 18 item 3: 民法典第1079条, 劳动合同法第82条 and 刑法第一百三十三条之一 return that article first, in the
statute tab and in the lawyer's retrieval; a repealed law says so and names what replaced it; a
citation written after another law's citation belongs to the law written before it.
"""

from __future__ import annotations

import re

import pytest

from lawluo.agents.lawyer import Brief, Lawyer, lookup_notices, retrieve_statutes
from lawluo.domains import PACKAGED
from lawluo.firm.saved import SavedStatute
from lawluo.law.citations import CitationExtractor
from lawluo.llm.no_model import NoModel
from lawluo.ui import render
from lawluo.ui.statute_tab import search_statutes

EXAMPLES = [
    ("民法典第1079条", "民法典", 1079, 0),
    ("劳动合同法第82条", "劳动合同法", 82, 0),
    ("刑法第一百三十三条之一", "刑法", 133, 1),
]
CIVIL_CODE_REPEAL = "已废止，由《中华人民共和国民法典》取代"


def first_card_title(html: str) -> str:
    return re.search(r'<span class="ll-title" lang="zh-CN">([^<]*)</span>', html).group(1)


def text_of(html: str) -> str:
    """``html``'s text, its tags dropped (both languages' texts side by side)."""
    return re.sub(r"<[^>]+>", "", html)


def key(article) -> tuple[str, int, int]:
    return article.law.key, article.number, article.suffix


# -- the searcher ---------------------------------------------------------------------------------


@pytest.mark.parametrize("query, law, number, suffix", EXAMPLES)
def test_the_named_article_comes_first(statute_searcher, query, law, number, suffix):
    hits = statute_searcher.search(query, k=5)
    assert key(hits[0].article) == (law, number, suffix)
    assert hits[0].exact and not any(h.exact for h in hits[1:])
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


@pytest.mark.parametrize(
    "query, expected",
    [
        ("民法典第一千零七十九条", ("民法典", 1079, 0)),
        ("民法典1079条", ("民法典", 1079, 0)),  # 第 left out
        ("《中华人民共和国民法典》婚姻家庭编第1079条", ("民法典", 1079, 0)),
        ("劳动合同法第八十二条", ("劳动合同法", 82, 0)),
        ("劳动法第36条", ("劳动法", 36, 0)),  # not 劳动合同法
        ("刑法第133条之一", ("刑法", 133, 1)),
        ("刑法第133条之1", ("刑法", 133, 1)),
        ("刑法第一百三十三条之二", ("刑法", 133, 2)),
        ("刑法第一百三十三条", ("刑法", 133, 0)),  # not 之一
        ("民诉法第一百二十二条", ("民事诉讼法", 122, 0)),  # an abbreviation
        ("我被辞退了，劳动合同法第47条怎么算经济补偿？", ("劳动合同法", 47, 0)),
    ],
)
def test_names_and_numerals_people_type(statute_searcher, query, expected):
    assert key(statute_searcher.search(query, k=3)[0].article) == expected


def test_several_named_articles_come_first_in_the_order_written(statute_searcher):
    hits = statute_searcher.search("民法典第1087条和第1079条", k=5)
    assert [key(h.article) for h in hits[:2]] == [("民法典", 1087, 0), ("民法典", 1079, 0)]
    assert statute_searcher.search("民法典第1087条和第1079条", k=1)[0].article.number == 1087


def test_a_query_without_a_number_is_searched_as_before(statute_searcher):
    assert statute_searcher.lookup("试用期 解除劳动合同") == []
    assert not any(h.exact for h in statute_searcher.search("试用期 解除劳动合同", k=5))


def test_a_law_the_civil_code_repealed_names_its_successor_and_no_article(statute_searcher):
    (lookup,) = statute_searcher.lookup("合同法第五十二条")
    assert lookup.article is None and lookup.known_law
    assert lookup.repeal.startswith(CIVIL_CODE_REPEAL)
    assert "第一千二百六十条" in lookup.repeal and "合同编" in lookup.repeal
    # No correspondence table exists: the message says so instead of naming a new article.
    assert "没有新旧条文对照表" in lookup.message() and "no longer in force" in lookup.message()
    assert not any(h.exact for h in statute_searcher.search("合同法第五十二条", k=5))


def test_a_repealed_law_in_the_database_shows_its_article_marked_repealed(statute_searcher):
    hits = statute_searcher.search("最高人民法院关于适用合同法若干问题的解释(二)第二十六条", k=3)
    first = hits[0]
    assert first.exact and (first.article.number, first.article.law.in_force) == (26, False)
    assert first.repeal == (
        "已废止，由《最高人民法院关于适用《中华人民共和国民法典》合同编通则若干问题的解释》取代"
    )
    assert first.as_dict()["repeal"] == first.repeal


def test_laws_in_force_carry_no_repeal_note(statute_searcher):
    assert all(
        h.repeal == "" for h in statute_searcher.search("民法典第1079条", k=5) if h.article.law.in_force
    )


@pytest.mark.parametrize(
    "query, words",
    [
        ("劳动者保护法第3条", ["没有找到名为《劳动者保护法》的法律", "No law named"]),
        ("劳动合同法第200条", ["《中华人民共和国劳动合同法》没有第二百条", "has no 第二百条"]),
    ],
)
def test_unknown_law_or_article_is_said_in_chinese_and_english(statute_searcher, query, words):
    (lookup,) = statute_searcher.lookup(query)
    assert lookup.article is None
    for word in words:
        assert word in lookup.message()  # the command line's and the MCP tools' words: Chinese · English
    notice = lookup.notice()  # the page's: a message of the catalogue, shown in the page's language
    assert notice.key.startswith("statute.") and words[0] in str(notice) and words[1] in notice.text("en")


# -- the statute tab ------------------------------------------------------------------------------


@pytest.mark.parametrize("query, law, number, suffix", EXAMPLES)
def test_statute_tab_shows_the_named_article_first(statute_searcher, db, query, law, number, suffix):
    html = search_statutes(statute_searcher, query, 5)
    article = db.find_article(law, number, suffix)
    assert first_card_title(html) == f"{article.law.name} {article.label}"
    assert html.count("按条号查到") == 1
    assert "ll-notice" not in html


def test_statute_tab_says_a_repealed_law_was_replaced(statute_searcher):
    html = search_statutes(statute_searcher, "合同法第五十二条", 5)
    notice = html[: html.index('class="ll-card"')]
    assert "ll-notice warn" in notice and "《中华人民共和国合同法》" + CIVIL_CODE_REPEAL in text_of(notice)
    assert "没有新旧条文对照表" in notice and "is no longer in force" in notice


def test_statute_tab_marks_a_repealed_article_on_its_card(statute_searcher):
    html = search_statutes(statute_searcher, "最高人民法院关于适用合同法若干问题的解释(二)第二十六条", 3)
    first_card = html[
        html.index('class="ll-card"') : html.index('class="ll-card"', html.index('class="ll-card"') + 1)
    ]
    assert "按条号查到" in first_card and "exact article" in first_card
    assert 'lang="zh-CN">已废止</span><span class="ll-lang-en" lang="en">repealed</span>' in first_card
    assert (
        "已废止，由《最高人民法院关于适用《中华人民共和国民法典》合同编通则若干问题的解释》取代" in first_card
    )


def test_the_repeal_line_is_escaped():
    card = render.statute_card({"law": "x", "article_label": "第一条", "text": "t", "repeal": "<img src=x>"})
    assert "<img" not in card and "&lt;img src=x&gt;" in card


# -- the lawyer's retrieval -----------------------------------------------------------------------


@pytest.mark.parametrize("query, law, number, suffix", EXAMPLES)
@pytest.mark.parametrize("domain", ["criminal", "labor", "marriage_family"])
def test_lawyer_retrieval_keeps_the_named_article_first(
    statute_searcher, db, query, law, number, suffix, domain
):
    # Another domain's preferred laws are boosted, but never above the article the client named.
    hits = retrieve_statutes(statute_searcher, PACKAGED[domain], query, 3)
    article = db.find_article(law, number, suffix)
    assert (hits[0]["law"], hits[0]["article_label"], hits[0]["exact"]) == (
        article.law.name,
        article.label,
        True,
    )


def test_a_retrieved_article_with_its_lookup_fields_is_saved(statute_searcher):
    hit = retrieve_statutes(
        statute_searcher, PACKAGED["contract"], "最高人民法院关于适用合同法若干问题的解释(二)第二十六条", 2
    )[0]
    saved = SavedStatute.model_validate(hit)
    assert saved.exact and saved.repeal.startswith("已废止")


@pytest.mark.parametrize("relevance", [1.5, -0.1, float("nan"), "高", [0.5]])
def test_a_saved_statute_with_a_relevance_outside_0_to_1_is_refused(statute_searcher, relevance):
    hit = retrieve_statutes(statute_searcher, PACKAGED["labor"], "试用期 解除劳动合同", 1)[0]
    with pytest.raises(ValueError):
        SavedStatute.model_validate({**hit, "relevance": relevance})


# -- which law a citation belongs to --------------------------------------------------------------


@pytest.fixture(scope="module")
def extract(db):
    return CitationExtractor(db).extract


def cited(citations) -> list[tuple[str, int, int]]:
    return [(c.key, c.article, c.suffix) for c in citations]


@pytest.mark.parametrize(
    "text",
    [
        # The sentence: the second citation names 刑法 and is not 《劳动合同法》第133条之一.
        "根据《劳动合同法》第四十七条规定，经济补偿按劳动者在本单位工作的年限，每满一年支付一个月工资的标准"
        "向劳动者支付。另参见刑法第133条之一",
        "《劳动合同法》第四十七条经济补偿按劳动者在本单位工作的年限支付，另参见刑法第133条之一",
        "用人单位应当依照《劳动合同法》第四十七条的规定支付经济补偿。另参见刑法第一百三十三条之一",
    ],
)
def test_a_citation_after_another_laws_binds_to_its_own_law(extract, checker, text):
    citations = extract(text)
    assert cited(citations) == [("劳动合同法", 47, 0), ("刑法", 133, 1)]
    assert "刑法" not in (citations[0].quoted or "")
    second = checker.check(text).citations[1]
    assert second.citation.law == "中华人民共和国刑法" and second.verdict == "no_content"
    assert second.matched.label == "第一百三十三条之一"


def test_a_bare_article_after_a_law_still_continues_that_law(extract):
    text = "根据《劳动合同法》第四十七条规定，经济补偿按年限支付。第四十八条规定了赔偿金。"
    citations = extract(text)
    assert cited(citations) == [("劳动合同法", 47, 0), ("劳动合同法", 48, 0)]
    assert citations[1].backref


def test_a_law_ending_in_tong_fa_is_not_a_back_reference(extract):
    # 劳动合同法 ends in 同法 (“the same law”), which must not send it back to the previous law.
    assert cited(extract("根据《民法典》第1079条，劳动合同法第82条也有规定。")) == [
        ("民法典", 1079, 0),
        ("劳动合同法", 82, 0),
    ]
    assert cited(extract("劳动合同法第八十二条")) == [("劳动合同法", 82, 0)]
    back = extract("根据《民法典》第1079条，同法第1087条也有规定。")
    assert cited(back) == [("民法典", 1079, 0), ("民法典", 1087, 0)] and back[1].backref


def test_the_lawyer_is_told_when_the_client_names_an_article_of_a_repealed_law(statute_searcher):
    question = "合同法第五十二条规定的合同无效情形现在还适用吗？"
    notices = lookup_notices(statute_searcher, question)
    assert len(notices) == 1 and "已废止" in notices[0] and "中华人民共和国民法典" in notices[0]

    brief = Brief(PACKAGED["contract"], question, notices=notices)
    turn = Lawyer(NoModel(None, role="lawyer")).messages(brief)[-1]["content"]

    assert f"- 注意：{notices[0]}" in turn  # inside the quoted grounding, before the retrieved statutes
    assert lookup_notices(statute_searcher, "劳动合同法第82条") == []  # an article the database gives
