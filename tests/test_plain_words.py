"""Plain words for lay visitors (issue 18, item 5): the consultation tab names the checker's results by
their Chinese labels (from the verdict table); NHSR, the boss's probabilities and the judge's name stay in
the trace. After an override the routing panel shows the chosen domain, without the confidence the
receptionist had for another one."""

from __future__ import annotations

import re

import pytest

from lawluo.config import load_settings
from lawluo.firm import Firm
from lawluo.firm.state import Turn
from lawluo.law.verdicts import BY_CODE, VERDICT_TABLE
from lawluo.llm import LanguageModels
from lawluo.ui import consult_render as cr
from lawluo.ui import consult_tab as tab

from .fakes.live_app import model_environ

QUESTION = "我在公司干了两年一直没签劳动合同，现在老板把我辞退了，我能要求什么赔偿？"
JARGON = ("NHSR", "P(更好", "P(better", "judge", "reward_model", "Boss", "主任评分", "content-bearing")
#: The components a visitor reads (the trace is the one that keeps the figures).
READ = ("chat", "routing", "tree", "citations", "retrieved", "message", "report")


def visible(view: tab.ConsultView) -> str:
    return "".join(str(getattr(view, name)) for name in READ if getattr(view, name) is not tab.KEEP)


@pytest.fixture
def firm(firm_services, firm_server) -> Firm:
    settings = load_settings(environ=model_environ(firm_server))
    return Firm.from_settings(settings, models=LanguageModels(settings.models), **firm_services)


def test_no_jargon_reaches_the_visitor_but_the_trace_keeps_every_figure(firm):
    views = list(tab.ask(firm, None, QUESTION, True, 2, 2))
    state = views[-1].state
    views.append(tab.mark(firm, state, "1", "yes"))
    views += list(tab.answer(firm, state))
    views += list(tab.regenerate(firm, state))
    views.append(tab.end(firm, state, client="王女士"))
    shown = "".join(visible(v) for v in views)
    for word in JARGON:  # a word, not a part of one ("not judged by a lawyer" is plain English)
        assert not re.search(rf"(?<![A-Za-z]){re.escape(word)}(?![A-Za-z])", shown), word
    trace = views[-1].trace
    assert "NHSR" in trace and "P(better)" in trace  # the checker's and the boss's figures, for the curious
    assert state.turns[-1].score["method"] == "judge"  # the boss did score the answer

    answer, citations = views[-2].chat[-1]["content"], views[-2].citations
    verified, missing = BY_CODE["verified"].label_zh, BY_CODE["not_found"].label_zh
    assert f"引用核查：{verified} 1 条、{missing} 1 条" in answer  # in words, the verdict table's labels
    assert "回答引用了 2 条法条" in citations and verified in citations and missing in citations
    words = re.sub(r"<[^>]+>", "", citations)  # what the panel shows, without its markup
    assert "verified" not in words and "not_found" not in words  # no verdict codes


def test_the_citations_panel_of_an_answer_without_citations_says_so_in_words():
    html = cr.citations_html(Turn("lawyer", "建议您先和公司协商。"))
    assert "这次回答没有引用具体法条" in html and "NHSR" not in html


def test_after_an_override_the_chosen_domain_shows_without_a_confidence(firm):
    state = list(tab.ask(firm, None, QUESTION, True, 2, 2))[-1].state
    before = tab.view(firm, state).routing
    assert "置信度" in before and "劳动纠纷" in before
    after = list(tab.set_domain(firm, state, "contract"))[-1].routing
    chosen = after.split('class="ll-domain"')[1].split("</div>")[0]
    assert "合同纠纷" in chosen and "由您选择" in chosen
    assert "置信度" not in after and "%" not in after
    assert "接待员的建议" in after and "劳动纠纷" in after
    assert "咨询人改派为 合同纠纷" in after  # the change, in words


@pytest.mark.parametrize("row", VERDICT_TABLE, ids=[v.code for v in VERDICT_TABLE])
def test_each_verdict_reads_as_its_chinese_label_in_the_chat_and_the_citations_panel(row):
    text = "根据《中华人民共和国劳动合同法》第八十二条处理。"
    citation = {
        "law": "中华人民共和国劳动合同法",
        "article": 82,
        "article_label": "第八十二条",
        "written": "中华人民共和国劳动合同法",
        "verdict": row.code,
        "quoted": "",
        "matched": None,
        "span": [16, 21],
    }
    turn = Turn("lawyer", text, citations=[citation], nhsr=0.5)
    state = tab.Consultation(turns=[Turn("client", "问题"), turn])
    footer = cr.chat_messages(state)[-1]["content"]
    panel = re.sub(r"<[^>]+>", "", cr.citations_html(turn))
    assert f"引用核查：{row.label_zh} 1 条" in footer
    assert row.label_zh in panel and row.code not in panel and "NHSR" not in panel + footer
