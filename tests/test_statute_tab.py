"""The statute-lookup tab's handlers, called directly on the shipped assets (no server)."""

from __future__ import annotations

import logging
import re
from html.parser import HTMLParser

import pytest

from lawluo.ui import render
from lawluo.ui.statute_tab import (
    EMPTY_ANSWER_MESSAGE,
    MAX_TEXT_CHARS,
    check_answer,
    check_answer_json,
    search_cases,
    search_statutes,
)

CIVIL_CODE_1079 = (
    "根据《中华人民共和国民法典》第一千零七十九条规定：“夫妻一方要求离婚的，可以由有关组织进行调解或者直接向"
    "人民法院提起离婚诉讼。人民法院审理离婚案件，应当进行调解；如果感情确已破裂，调解无效的，应当准予离婚。”"
)
CONTRACT_LAW_107 = (
    "依据《合同法》第一百零七条：“当事人一方不履行合同义务或者履行合同义务不符合约定的，应当承担继续履行、"
    "采取补救措施或者赔偿损失等违约责任。”"
)


class _Shown(HTMLParser):
    """The text of HTML as a page in ``lang`` shows it: the other language's ``ll-lang-*`` elements dropped."""

    VOID = {"br", "img", "input", "meta", "hr", "wbr"}

    def __init__(self, lang: str) -> None:
        super().__init__()
        self.hide, self.depth, self.hidden_at, self.out = (
            f"ll-lang-{'en' if lang == 'zh' else 'zh'}",
            0,
            None,
            [],
        )

    def handle_starttag(self, tag, attrs):
        if tag in self.VOID:
            return
        self.depth += 1
        if self.hidden_at is None and self.hide in (dict(attrs).get("class") or "").split():
            self.hidden_at = self.depth

    def handle_endtag(self, tag):
        if tag in self.VOID:
            return
        if self.hidden_at == self.depth:
            self.hidden_at = None
        self.depth -= 1

    def handle_data(self, data):
        if self.hidden_at is None:
            self.out.append(data)


def shown(html: str, lang: str = "zh") -> str:
    """What a page in ``lang`` (``zh``, ``en``) shows of ``html``: its text, the other language's hidden."""
    parser = _Shown(lang)
    parser.feed(html)
    parser.close()
    return " ".join("".join(parser.out).split())


def test_shown_hides_the_other_language():
    from lawluo.ui.i18n import say

    html = f"<div>{say('statute.search_button')} <b>x</b></div>"
    assert shown(html, "zh") == "检索 x" and shown(html, "en") == "Search x"


class Exploding:
    """A service whose every call fails, to exercise the unexpected-error path."""

    def search(self, query, k):
        raise RuntimeError("index <b>corrupt</b>")

    def check(self, text, as_of=None):
        raise RuntimeError("boom")


# -- statute search -------------------------------------------------------------------------------


def test_statute_search_finds_labour_contract_law(statute_searcher):
    out = search_statutes(statute_searcher, "试用期 解除劳动合同", 5)
    assert "劳动合同法" in out
    assert out.count('class="ll-card"') == 5
    assert "第二十一条" in out


@pytest.mark.parametrize("query", ["", "   \n", None])
def test_statute_search_empty_query_is_a_message(statute_searcher, query):
    out = search_statutes(statute_searcher, query, 5)
    assert (
        "ll-notice" in out and "empty query" in shown(out, "en") and "请输入问题或关键词" in shown(out, "zh")
    )
    assert "ll-card" not in out


def test_statute_search_k_is_clamped(statute_searcher):
    assert search_statutes(statute_searcher, "劳动合同", 500).count('class="ll-card"') == 20
    assert search_statutes(statute_searcher, "劳动合同", 0).count('class="ll-card"') == 1
    assert search_statutes(statute_searcher, "劳动合同", "x").count('class="ll-card"') == 5


def test_statute_search_escapes_the_query(statute_searcher):
    out = search_statutes(statute_searcher, "<script>alert(1)</script> 劳动合同", 3)
    assert "<script>" not in out
    assert "&lt;script&gt;" in out


def test_statute_search_unexpected_error_is_reported_and_logged(caplog):
    with caplog.at_level(logging.ERROR, logger="lawluo.ui.statute_tab"):
        out = search_statutes(Exploding(), "劳动合同", 5)
    assert "&lt;b&gt;corrupt&lt;/b&gt;" in out and "<b>" not in out
    assert "Something went wrong: RuntimeError: index <b>corrupt</b>" in shown(out, "en")
    assert "出错了：RuntimeError: index <b>corrupt</b>" in shown(out, "zh")
    assert any(r.exc_info for r in caplog.records)


def test_statute_card_badges_for_superseded_and_repealed():
    hit = {
        "law": "中华人民共和国合同法",
        "article_label": "第一百零七条",
        "version": "1999-03-15",
        "current": False,
        "in_force": False,
        "level": "法律",
        "text": "当事人一方……",
        "score": 1.5,
    }
    out = render.statute_card(hit)
    assert "superseded" in shown(out, "en") and "repealed" in shown(out, "en") and "1999-03-15" in out
    assert "已修订" in shown(out, "zh") and "已废止" in shown(out, "zh") and "法律" in shown(out, "en")
    assert 'lang="zh-CN">中华人民共和国合同法 第一百零七条<' in out  # the law's name: Chinese on every page


def test_a_card_shows_the_calibrated_relevance_not_a_score_that_reads_like_a_chance():
    hit = {"law": "中华人民共和国民法典", "article_label": "第一千零四十二条", "text": "禁止借婚姻索取财物。"}
    with_relevance = render.statute_card({**hit, "score": 0.51, "relevance": 0.04})
    assert "估计相关 4%" in shown(with_relevance, "zh") and "estimated relevance 4%" in shown(
        with_relevance, "en"
    )
    assert "0.51" not in with_relevance
    for relevance in (None, 7.0, "0.5"):  # no model, or a value no model gives: the rank score, named so
        out = render.statute_card({**hit, "score": 0.51, "relevance": relevance})
        assert "得分 0.51" in shown(out, "zh") and "估计相关" not in shown(out, "zh")


# -- case search ----------------------------------------------------------------------------------


def test_case_search_shows_cards(case_searcher):
    out = search_cases(case_searcher, "醉酒驾驶机动车", 3)
    assert out.count('class="ll-card"') == 3
    assert "引用法条" in shown(out, "zh") and "Cites" in shown(out, "en") and "危险驾驶" in out


def test_case_search_empty_query_and_missing_bank(case_searcher):
    assert "empty query" in shown(search_cases(case_searcher, " ", 3), "en")
    missing = search_cases(None, "醉酒驾驶", 3)
    assert "python -m lawluo build cases" in shown(missing, "en") and "案例库不可用" in shown(missing, "zh")


def test_case_card_folds_long_facts_and_escapes():
    hit = {
        "title": "<img src=x onerror=alert(1)>",
        "cause": "盗窃",
        "source": "cail",
        "facts": "甲" * 500,
        "articles": [{"law": "中华人民共和国刑法", "article": 133, "suffix": 1}],
        "score": 3.0,
    }
    out = render.case_card(hit)
    assert "<img" not in out and "&lt;img src=x onerror=alert(1)&gt;" in out
    assert "<details>" in out and "甲" * 500 in out
    assert "中华人民共和国刑法第一百三十三条之一" in out


# -- citation check -------------------------------------------------------------------------------


def test_check_verified(checker):
    summary, table = check_answer(checker, CIVIL_CODE_1079)
    assert "NHSR 1/1 = 1.00 over content-bearing citations" in shown(summary, "en")
    assert 'data-verdict="verified"' in table and "ll-badge ok" in table
    # a visitor reads plain words: NHSR only under 高级 / Advanced, no verdict code, in the page's language
    seen = shown(summary.split('class="ll-advanced"')[0] + table, "zh")
    assert "1 处与条文相符" in seen and "条文存在·内容相符" in seen
    assert not re.search(r"NHSR|verified|As written|Refers to|Content cited|Exists", seen)
    seen_en = shown(summary.split('class="ll-advanced"')[0] + table, "en")
    assert (
        "of the 1 that state the article's content, 1 agree" in seen_en
        and "Exists · content agrees" in seen_en
    )
    assert not re.search(r"NHSR|verified|原文写作|条文存在|处与条文相符", seen_en)
    assert "《《" not in table
    assert "<details>" in table and "经人民法院判决不准离婚后" in table  # the real text, folded


def test_check_repealed(checker):
    summary, table = check_answer(checker, CONTRACT_LAW_107)
    assert "NHSR 0/1 = 0.00" in shown(summary, "en")
    assert 'data-verdict="repealed"' in table and "ll-badge bad" in table
    assert "第五百七十七条" in table  # the successor article of the Civil Code


def test_check_name_and_number_only(checker):
    summary, table = check_answer(checker, "参见《民法典》第1079条。")
    assert "no citation carries content" in shown(summary, "en")
    assert 'data-verdict="no_content"' in table and "第1079条" in table  # as written


def test_check_hostile_input_is_escaped(checker):
    summary, table = check_answer(
        checker, "<script>alert(1)</script>《民法典》第1079条 <img src=x onerror=alert(1)>"
    )
    out = (summary + table).lower()
    assert "<script" not in out and "<img" not in out
    assert 'data-verdict="no_content"' in table and "第1079条" in table


def test_citation_card_escapes_every_field():
    hostile = "<script>alert(1)</script>"
    cit = {
        "law": hostile,
        "article_label": "第一条",
        "written": "<img src=x onerror=alert(1)>",
        "verdict": "content_mismatch",
        "quoted": hostile,
        "content_kind": "quoted",
        "matched": {
            "law": hostile,
            "article_label": hostile,
            "version": "2020",
            "current": True,
            "text": hostile,
        },
        "note": hostile,
        "span": [0, 25],
    }
    out = render.citation_card(1, cit, hostile) + render.check_summary(
        0.0, {"content_mismatch": 1}, [hostile]
    )
    assert "<script" not in out and "<img" not in out
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in out and "&lt;img src=x onerror=alert(1)&gt;" in out


@pytest.mark.parametrize("text", ["", "  \n\t", None])
def test_check_empty_input_is_a_message(checker, text):
    summary, table = check_answer(checker, text)
    assert "请粘贴" in shown(summary, "zh") and "Paste an answer" in shown(summary, "en") and table == ""


def test_check_truncates_long_input(checker):
    text = CIVIL_CODE_1079 + "这是一段很长的回答。" * 30_000
    assert len(text) > 300_000
    summary, table = check_answer(checker, text)
    assert f"only the first {MAX_TEXT_CHARS:,} were checked" in shown(summary, "en")
    assert f"只核查了前 {MAX_TEXT_CHARS:,} 字" in shown(summary, "zh")
    assert 'data-verdict="verified"' in table


def test_check_unexpected_error_is_reported():
    summary, table = check_answer(Exploding(), CIVIL_CODE_1079)
    assert "Something went wrong: RuntimeError: boom" in shown(summary, "en") and table == ""


def test_check_json(checker):
    out = check_answer_json(checker, CIVIL_CODE_1079 + CONTRACT_LAW_107)
    assert out["error"] is None and out["nhsr"] == 0.5
    assert [c["verdict"] for c in out["citations"]] == ["verified", "repealed"]
    assert check_answer_json(checker, "")["error"] == EMPTY_ANSWER_MESSAGE
    assert check_answer_json(Exploding(), "x")["error"] == "Something went wrong: RuntimeError: boom"


def test_a_query_nothing_matches_is_quoted_short_in_both_languages(statute_searcher):
    pasted = "x" * 5000  # one unbroken word: nothing matches it
    out = search_statutes(statute_searcher, pasted, 5)
    assert "ll-card" not in out
    assert "的法条" in shown(out, "zh") and "No article matched" in shown(out, "en")
    assert "No article" not in shown(out, "zh") and "法条" not in shown(out, "en")
    assert "x" * render.ECHO_CHARS + "…" in out
    assert "x" * (render.ECHO_CHARS + 1) not in out


def test_the_results_heading_quotes_a_long_query_short(statute_searcher):
    query = "劳动合同 " + "试用期" * 400
    out = search_statutes(statute_searcher, query, 3)
    assert out.count('class="ll-card"') == 3
    heading = out.split('<div class="ll-card">')[0]
    assert (
        "3 条法条" in shown(heading, "zh") and "…" in heading and "3 article(s) for" in shown(heading, "en")
    )
    assert len(shown(heading, "zh")) < 100 and len(shown(heading, "en")) < 100


def test_worked_examples_in_the_renderers_docstrings_hold():
    import doctest

    result = doctest.testmod(render)
    assert result.attempted > 0 and result.failed == 0
