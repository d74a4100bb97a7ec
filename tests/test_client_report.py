"""The report a client can keep (issue 18, item 6): the client's name from the tab, the facts confirmed and
denied, every statute cited with its verdict in words and its real text, the disclaimer; the ``.md`` and the
``.docx`` hold the same text; no model server's address anywhere, the model's name only."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from docx import Document

from lawluo.agents.secretary import (
    APPENDIX,
    DISCLAIMER,
    SECTIONS,
    CitedStatute,
    Report,
    render_docx,
    render_markdown,
)
from lawluo.config import load_settings
from lawluo.firm import Firm
from lawluo.llm import LanguageModels
from lawluo.ui import consult_tab as tab
from lawluo.ui.models_panel import models_status_html

from .fakes.live_app import live_app, model_environ

pytestmark = pytest.mark.slow  # 5 s of the suite on 2 cores (4 s or more: left out of the inner loop)

QUESTION = "我在公司干了两年一直没签劳动合同，现在老板把我辞退了，我能要求什么赔偿？"
ARTICLE_82 = (
    "用人单位自用工之日起超过一个月不满一年未与劳动者订立书面劳动合同的，应当向劳动者每月支付二倍的工资。"
)


def make_firm(firm_services, firm_server=None) -> Firm:
    settings = load_settings(environ=model_environ(firm_server) if firm_server else {})
    return Firm.from_settings(settings, models=LanguageModels(settings.models), **firm_services)


def answered(firm: Firm):
    """A consultation with its first element confirmed, its second denied, and the lawyer's answer."""
    state = list(tab.ask(firm, None, QUESTION, True, 2, 2))[-1].state
    tab.mark(firm, state, "1", "yes")
    tab.mark(firm, state, "2", "no")
    list(tab.answer(firm, state))
    return state


# -- the same text in both files ---------------------------------------------------------------------


def markdown_paragraphs(markdown: str) -> list[str]:
    """Each line of the Markdown as the text it shows: markers of headings, quotes, bold and italics
    removed, the backslash escapes of md_text and inert_links undone (CommonMark §2.4: a backslash before
    ASCII punctuation shows the character; list markers stay: the .docx side writes them out, below)."""
    out = []
    for line in (line.strip() for line in markdown.splitlines()):
        if not line:
            continue
        line = re.sub(r"^(#{1,2}|>) ", "", line)
        line = re.sub(r"^\*\*(.*)\*\*$", r"\1", line)
        line = re.sub(r"^\*(.*)\*$", r"\1", line)
        out.append(html.unescape(re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", line)))
    return out


def docx_paragraphs(path: Path) -> list[str]:
    """Each paragraph of the document, a list item with the marker Word draws for it."""
    out, number = [], 0
    for p in Document(str(path)).paragraphs:
        number = number + 1 if p.style.name == "List Number" else 0
        marker = {"List Number": f"{number}. ", "List Bullet": "- "}.get(p.style.name, "")
        out.append(marker + p.text)
    return out


def statutes_report(**changes) -> Report:
    fields = {
        "number": "LL-20240601-ABC123",
        "date": "2024年06月01日",
        "client": "王女士",
        "subject": "未签劳动合同被辞退",
        "purpose": "了解可以主张的款项",
        "facts": "咨询人于2023年7月入职。\n公司未与其订立书面劳动合同。",
        "analysis": "依照《中华人民共和国劳动合同法》第八十二条，公司应当支付二倍工资。",
        "advice": ["申请劳动仲裁", "保存工资流水"],
        "risks": ["仲裁时效为一年"],
        "generated_by": "openai · fake-model",
        "confirmed": ["公司未与咨询人订立书面劳动合同"],
        "denied": ["咨询人严重违反规章制度"],
        "statutes": [
            CitedStatute(
                citation="《中华人民共和国劳动合同法》第八十二条",
                verdict="verified",
                article="《中华人民共和国劳动合同法》第八十二条",
                text=ARTICLE_82 + "\n用人单位违反本法规定不与劳动者订立无固定期限劳动合同的，……",
            ),
            CitedStatute(
                citation="《中华人民共和国劳动合同法》第四十条",
                verdict="wrong_number",
                article="《中华人民共和国劳动合同法》第八十二条",
                text=ARTICLE_82,
            ),
            CitedStatute(citation="《劳动者保护法》第三条", verdict="not_found"),
        ],
    }
    return Report(**{**fields, **changes})


HOSTILE = "<b>粗体</b> & #标题 ![图](http://tracker.example/x.png) `代码` *星号*"


@pytest.mark.parametrize(
    "report",
    [
        statutes_report(),
        statutes_report(generated_by="no model", notice="未配置语言模型", statutes=[], confirmed=[]),
        statutes_report(client=HOSTILE, facts=HOSTILE + "\n- 第一项\n- 第二项", advice=[HOSTILE], risks=[]),
    ],
    ids=["with-statutes", "partial", "hostile"],
)
def test_the_md_and_the_docx_hold_the_same_text_paragraph_by_paragraph(report, tmp_path):
    docx = docx_paragraphs(render_docx(report, tmp_path / "report.docx"))
    assert markdown_paragraphs(render_markdown(report)) == docx
    assert len(docx) > 20


def test_the_report_lists_each_statute_with_its_verdict_in_words_and_its_real_text():
    markdown = render_markdown(statutes_report())
    assert re.findall(r"^## (.+)$", markdown, re.M) == [h for _, h in SECTIONS] + list(APPENDIX)
    records = markdown.split("## 咨询人确认和否认的事实")[1]
    assert "咨询人确认的事实：\n\n- 公司未与咨询人订立书面劳动合同" in records
    assert "咨询人否认的事实：\n\n- 咨询人严重违反规章制度" in records
    assert (
        f"**1. 《中华人民共和国劳动合同法》第八十二条：条文存在·内容相符**\n\n条文原文：{ARTICLE_82}"
        in records
    )
    assert (
        "**2. 《中华人民共和国劳动合同法》第四十条：条号错误**\n\n对应条文：《中华人民共和国劳动合同法》第八十二条"
        in records
    )
    assert "**3. 《劳动者保护法》第三条：查无此条**\n\n法规库中没有这一条的原文。" in records
    assert DISCLAIMER in records and records.rstrip().endswith("*生成方式：openai · fake-model*")


# -- through the tab ----------------------------------------------------------------------------------


def test_the_report_carries_the_name_typed_in_the_tab_the_facts_and_the_checked_statutes(
    firm_services, firm_server, tmp_path
):
    firm = make_firm(firm_services, firm_server)
    state = answered(firm)
    confirmed, denied = state.confirmed, state.denied
    ended = tab.end(firm, state, client="  王女士 ")
    markdown = ended.report
    assert "## 咨询人\n\n王女士\n" in markdown and state.client == "王女士"
    assert f"- {confirmed[0].removesuffix('？').replace('是否', '')}" in markdown
    assert f"- {denied[0].removesuffix('？').replace('是否', '')}" in markdown
    assert (
        f"《中华人民共和国劳动合同法》第八十二条：条文存在·内容相符**\n\n条文原文：{ARTICLE_82}" in markdown
    )
    assert "《中华人民共和国劳动合同法》第九百九十九条：查无此条**\n\n法规库中没有这一条的原文。" in markdown
    # the page marks the model's name as a code (no language); the files carry it as written
    assert DISCLAIMER in markdown and '生成方式：<span lang="zxx">openai · fake-model</span>' in markdown
    # the boss scored the report: in the trace, not in what the client keeps
    assert state.report_score is not None and any(e.action == "score report" for e in state.trace)
    md_path, docx_path = Path(ended.download_md["value"]), Path(ended.download_docx["value"])
    assert markdown_paragraphs(md_path.read_text(encoding="utf-8")) == docx_paragraphs(docx_path)
    assert "*生成方式：openai · fake-model*" in md_path.read_text(encoding="utf-8")  # no markup in the file
    assert "lang=" not in md_path.read_text(encoding="utf-8")
    server = firm_server.url.split("//")[1].split("/")[0]  # 127.0.0.1:port
    shown = "".join([markdown, md_path.read_text(encoding="utf-8"), *docx_paragraphs(docx_path)])
    shown += str(ended.chat) + ended.trace + ended.routing + ended.citations + ended.message + state.to_json()
    assert server not in shown and "http" not in markdown
    about = models_status_html(
        LanguageModels(load_settings(environ=model_environ(firm_server)).models).status()
    )
    assert "fake-model" in about and server not in about and "http" not in about


def test_a_report_without_a_name_says_so_instead_of_a_placeholder(firm_services, firm_server):
    firm = make_firm(firm_services, firm_server)
    state = answered(firm)
    assert "## 咨询人\n\n（未填写）\n" in tab.end(firm, state).report


def test_without_a_model_the_report_lists_the_extracts_statutes_verified_with_their_text(firm_services):
    firm = make_firm(firm_services)
    state = answered(firm)
    quoted = state.turns[-1].statutes[:3]
    markdown = tab.end(firm, state, client="李先生").report
    assert "## 咨询人\n\n李先生\n" in markdown and "未使用语言模型" in markdown
    for i, s in enumerate(quoted, start=1):
        assert f"**{i}. 《{s['law']}》{s['article_label']}：条文存在·内容相符**" in markdown
        assert f"条文原文：{s['text'].splitlines()[0].strip()}" in markdown
    assert DISCLAIMER in markdown
    assert "secretary" not in markdown and "no model" not in markdown  # no developer words


def test_a_script_names_the_client_through_the_api(tmp_path):
    from gradio_client import Client

    with live_app(model=False) as app:
        client = Client(app.url, verbose=False, download_files=str(tmp_path), analytics_enabled=False)
        client.predict(QUESTION, False, 2, 2, api_name="/ask")
        report, md_file, docx_file, *_ = client.predict("赵先生", api_name="/end_consultation")
        client.close()
    assert "## 咨询人\n\n赵先生\n" in report
    assert "赵先生" in Path(md_file["value"]).read_text(encoding="utf-8")
    assert "赵先生" in docx_paragraphs(Path(docx_file["value"]))
