"""The statute tools over MCP (lawluo/ui/mcp_tools.py, docs/mcp.md): the plain functions against the shipped
statute database, then the real app on loopback with the setting on, driven by the ``mcp`` client library,
and with the setting off (no tool, no endpoint)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import threading

import gradio as gr
import httpx
import pytest

from lawluo.config import load_settings
from lawluo.domains import PACKAGED
from lawluo.ui import mcp_tools
from lawluo.ui.mcp_tools import MAX_PARALLEL, TOOL_NAMES, StatuteTools, build_mcp_tools

from .fakes.live_app import live_app

pytestmark = pytest.mark.slow  # 8 s of the suite on 2 cores (4 s or more: left out of the inner loop)

CIVIL_1087 = "离婚时，夫妻的共同财产由双方协议处理；协议不成的，由人民法院根据财产的具体情况"
WAGE_QUESTION = "公司拖欠我三个月工资一直不发，我该怎么办？"


@pytest.fixture(scope="module")
def tools(db, statute_searcher, checker, receptionist):
    return StatuteTools(db, statute_searcher, checker, receptionist.table, receptionist)


def _verdicts(out: str) -> list[str]:
    return [c["verdict"] for c in json.loads(out)["citations"]]


# -- the plain functions ----------------------------------------------------------------------------


def test_lookup_gives_the_article_text_and_its_version(tools, db):
    expected = db.find_article("民法典", 1087).text
    for article in ("第一千零八十七条", "1087", "1087条", "第1087条"):
        out = json.loads(tools.lookup_statute("民法典", article))
        assert out["found"] and out["text"] == expected
        assert out["law"] == "中华人民共和国民法典" and out["article_label"] == "第一千零八十七条"
        assert (out["version"], out["in_force_from"], out["as_of"]) == ("2020-05-28", "2021-01-01", None)
    assert json.loads(tools.lookup_statute("刑法", "133之一"))["article_label"] == "第一百三十三条之一"


def test_lookup_as_of_picks_the_version_in_force_that_day(tools, db):
    old, new = db.versions("公司法")[-1], db.versions("公司法")[0]  # 2018-10-26, 2023-12-29 (from 2024-07-01)
    n = next(a.number for a in db.articles_of(new) if (o := db.article(old, a.number)) and o.text != a.text)
    before = json.loads(tools.lookup_statute("公司法", str(n), "2024-06-30"))
    after = json.loads(tools.lookup_statute("公司法", str(n), "2024-07-01"))
    assert (before["version"], before["text"]) == (old.version, db.article(old, n).text)
    assert (after["version"], after["text"]) == (new.version, db.article(new, n).text)
    assert before["as_of"] == "2024-06-30"
    early = json.loads(
        tools.lookup_statute("民法典", "1087", "2019-06-01")
    )  # the Civil Code took effect in 2021
    assert not early["found"] and "2019-06-01" in early["message"]


def test_lookup_not_found_names_close_laws_or_the_successor(tools):
    unknown = json.loads(tools.lookup_statute("劳动合同条例", "5"))
    assert not unknown["found"] and "中华人民共和国劳动合同法" in unknown["close_names"]
    assert "劳动合同条例" in unknown["message"] and "中华人民共和国劳动合同法" in unknown["message"]
    repealed = json.loads(tools.lookup_statute("合同法", "52"))
    assert not repealed["found"] and "民法典" in repealed["message"]
    no_article = json.loads(tools.lookup_statute("民法典", "第五千条"))
    assert not no_article["found"] and "第五千条" in no_article["message"]


@pytest.mark.parametrize(
    ("law", "article", "as_of", "says"),
    [
        ("", "1087", "", "law is empty"),
        ("民" * 101, "1087", "", "at most 100"),
        ("民法典", "abc", "", "not an article number"),
        ("民法典", "0", "", "not an article number"),
        ("民法典", "1087", "yesterday", "YYYY-MM-DD"),
        (None, "1087", "", "law is empty"),
    ],
)
def test_lookup_refuses_bad_input_with_a_message(tools, law, article, as_of, says):
    with pytest.raises(gr.Error, match=says):
        tools.lookup_statute(law, article, as_of)


def test_search_finds_labour_contract_law_for_unpaid_wages(tools):
    out = json.loads(tools.search_statutes(WAGE_QUESTION, 5))
    assert len(out["hits"]) == 5 and out["k"] == 5 and out["domain"] is None
    assert "中华人民共和国劳动合同法" in [h["law"] for h in out["hits"][:3]]
    assert set(out["hits"][0]) == {
        "law",
        "article",
        "article_label",
        "text",
        "score",
        "relevance",
        "exact",
    } | {
        "version",
        "in_force",
        "repeal",
    }
    labour = json.loads(tools.search_statutes(WAGE_QUESTION, 5, "劳动纠纷"))
    assert labour["domain"] == "labor" and len(labour["hits"]) == 5


def test_search_caps_k_like_the_page_and_refuses_bad_input(tools):
    many = json.loads(tools.search_statutes("试用期 解除劳动合同", 500))
    assert (many["k"], len(many["hits"])) == (20, 20) and any("1–20" in n for n in many["notices"])
    assert json.loads(tools.search_statutes("试用期 解除劳动合同", 0))["k"] == 1
    named = json.loads(tools.search_statutes("合同法第五十二条", 3))
    assert any("民法典" in n for n in named["notices"])  # a repealed law named: the page's notice
    with pytest.raises(gr.Error, match="empty query"):
        tools.search_statutes("   ", 5)
    with pytest.raises(gr.Error, match="labor"):
        tools.search_statutes(WAGE_QUESTION, 5, "astrology")


def test_check_gives_the_cli_verdicts_with_labels(tools, checker):
    right = f"根据《中华人民共和国民法典》第一千零八十七条规定：“{CIVIL_1087}”。"
    wrong = f"根据《民法典》第一千零八十八条规定：“{CIVIL_1087}”。"
    out = json.loads(tools.check_citations(right + wrong))
    assert _verdicts(tools.check_citations(right + wrong)) == ["verified", "wrong_number"]
    cli = [
        c.as_dict() for c in checker.check(right + wrong).citations
    ]  # what `python -m lawluo check` prints
    for mine, printed in zip(out["citations"], cli, strict=True):
        assert {k: mine[k] for k in printed} == json.loads(json.dumps(printed, ensure_ascii=False))
    assert [c["label"] for c in out["citations"]] == ["条文存在·内容相符", "条号错误"]
    assert out["citations"][1]["meaning"] == "the content belongs to another article of this law"
    assert out["nhsr"] == 0.5 and out["counts"]["wrong_number"] == 1
    dated = json.loads(tools.check_citations(right, "2019-06-01"))
    assert dated["as_of"] == "2019-06-01" and dated["citations"][0]["verdict"] != "verified"


def test_check_refuses_empty_and_cuts_huge_text(tools):
    for empty in ("", "   ", None):
        with pytest.raises(gr.Error, match="Paste an answer"):
            tools.check_citations(empty)
    with pytest.raises(gr.Error, match="YYYY-MM-DD"):
        tools.check_citations("《民法典》第1087条", "not a date")
    huge = json.loads(tools.check_citations("<script>alert(1)</script>" + "啊" * 250_000))
    assert huge["citations"] == [] and "200,000" in huge["notices"][0]


def test_route_sends_a_wage_question_to_labour(tools):
    out = json.loads(tools.route_question(WAGE_QUESTION))
    assert out["domain"] == "labor" and out["name"] == "劳动纠纷" and not out["fallback"]
    assert len(out["scores"]) == len(PACKAGED) and out["confidence"] == max(out["scores"].values())
    with pytest.raises(gr.Error, match="empty"):
        tools.route_question("  ")
    with pytest.raises(gr.Error, match="4,000"):
        tools.route_question("工资" * 2001)
    with pytest.raises(gr.Error, match="not available"):
        StatuteTools(tools.db, tools.searcher, tools.checker, tools.domains).route_question(WAGE_QUESTION)


def test_a_busy_server_says_so(tools, monkeypatch):
    slots = threading.BoundedSemaphore(MAX_PARALLEL)
    for _ in range(MAX_PARALLEL):  # every place taken
        slots.acquire()
    monkeypatch.setattr(mcp_tools, "BUSY_WAIT_S", 0.01)
    busy = StatuteTools(tools.db, tools.searcher, tools.checker, tools.domains, slots=slots)
    with pytest.raises(gr.Error, match="busy"):
        busy.lookup_statute("民法典", "1087")
    slots.release()
    assert json.loads(busy.lookup_statute("民法典", "1087"))["found"]


def test_the_setting_is_off_by_default_and_registers_nothing(db, statute_searcher, checker):
    from app import launch_options

    off, on = load_settings(environ={}), load_settings(environ={"LAWLUO_MCP_SERVER": "true"})
    assert (off.mcp_server, on.mcp_server) == (False, True)
    assert (launch_options(off)["mcp_server"], launch_options(on)["mcp_server"]) == (False, True)
    with gr.Blocks() as demo:
        assert build_mcp_tools(off, db, statute_searcher, checker) is None
    assert demo.get_api_info()["named_endpoints"] == {}
    with gr.Blocks() as demo:
        build_mcp_tools(on, db, statute_searcher, checker)
    assert sorted(demo.get_api_info()["named_endpoints"]) == sorted(f"/mcp_{n}" for n in TOOL_NAMES)


# -- the live app over MCP ----------------------------------------------------------------------------


def _mcp(url: str, work):
    """Run ``await work(session)`` in an MCP client session on the app's Streamable HTTP endpoint."""
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async def go():
        async with streamable_http_client(url + "gradio_api/mcp/") as (read, write, _):
            async with ClientSession(read, write) as session:
                await session.initialize()
                return await work(session)

    # in a thread of its own: a browser test earlier in the session may have left this thread's event loop running
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, asyncio.wait_for(go(), 20)).result()


def _call(url: str, name: str, **arguments):
    result = _mcp(url, lambda session: session.call_tool(name, arguments))
    return result.isError, result.content[0].text


@pytest.fixture(scope="module")
def mcp_app():
    with live_app(model=False, LAWLUO_MCP_SERVER="true") as running:
        yield running.url


def test_the_app_lists_the_four_tools_alone(mcp_app):
    listed = _mcp(mcp_app, lambda session: session.list_tools()).tools
    assert sorted(t.name for t in listed) == sorted(TOOL_NAMES)  # none of the page's events
    for tool in listed:
        assert "Returns:" in tool.description and "Example:" in tool.description, tool.name
        assert all(p.get("description") for p in tool.inputSchema["properties"].values()), tool.name
    route = next(t for t in listed if t.name == "route_question")
    assert "{domains}" not in route.description and "劳动纠纷 labor" in route.description  # from the table
    search = next(t for t in listed if t.name == "search_statutes")
    assert search.inputSchema["properties"]["k"]["type"] == "integer" and search.inputSchema["required"] == [
        "query"
    ]


def test_each_tool_answers_over_mcp(mcp_app, db):
    error, text = _call(mcp_app, "lookup_statute", law="民法典", article="第一千零八十七条")
    assert not error and json.loads(text)["text"] == db.find_article("民法典", 1087).text
    right = f"《民法典》第一千零八十七条规定：“{CIVIL_1087}”"
    wrong = f"《民法典》第一千零八十八条规定：“{CIVIL_1087}”"
    error, text = _call(mcp_app, "check_citations", text=right + "。" + wrong)
    assert not error and [c["verdict"] for c in json.loads(text)["citations"]] == ["verified", "wrong_number"]
    error, text = _call(mcp_app, "search_statutes", query=WAGE_QUESTION, k=5)
    assert not error and "中华人民共和国劳动合同法" in [h["law"] for h in json.loads(text)["hits"]]
    error, text = _call(mcp_app, "route_question", question=WAGE_QUESTION)
    assert not error and json.loads(text)["domain"] == "labor"


@pytest.mark.parametrize(
    ("name", "arguments", "says"),
    [
        ("check_citations", {"text": ""}, "Paste an answer"),
        ("lookup_statute", {"law": "../../etc/passwd", "article": "1"}, "No law named"),
        ("lookup_statute", {"law": "民法典", "article": "1; DROP TABLE laws"}, "not an article number"),
        ("search_statutes", {"query": "", "k": 5}, "empty query"),
        ("route_question", {"question": "问" * 5000}, "4,000"),
        ("lookup_statute", {"law": 7, "article": "1"}, "validation"),  # the MCP schema: law is a string
        ("on_ask", {"question": "?"}, "Unknown tool"),  # the page's events are not tools
    ],
)
def test_hostile_input_gets_a_clear_message(mcp_app, name, arguments, says):
    error, text = _call(mcp_app, name, **arguments)
    assert says in text and "Traceback" not in text and len(text) < 2000
    assert error or json.loads(text)["found"] is False


def test_with_the_setting_off_nothing_is_served(monkeypatch):
    monkeypatch.setenv("GRADIO_MCP_SERVER", "true")  # Gradio's own switch: the setting overrides it
    with live_app(model=False) as running:
        with httpx.Client(base_url=running.url, trust_env=False, timeout=30) as http:
            info = http.get("gradio_api/info").json()
            assert not [name for name in info["named_endpoints"] if name.startswith("/mcp_")]
            initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
            accept = {"accept": "application/json, text/event-stream"}
            assert http.post("gradio_api/mcp/", json=initialize, headers=accept).status_code == 404
            assert http.get("gradio_api/mcp/schema").status_code == 404
