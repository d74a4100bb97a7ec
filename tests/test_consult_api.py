"""The consultation tab is scriptable with gradio_client: each client keeps its own consultation."""

from __future__ import annotations

import re

import pytest

from .fakes.live_app import live_app

pytestmark = pytest.mark.slow  # 12 s of the suite on 2 cores (4 s or more: left out of the inner loop)

QUESTION = "我在公司干了两年一直没签劳动合同，现在老板把我辞退了，我能要求什么赔偿？"
ENDPOINTS = {
    "/ask",
    "/answer",
    "/mark",
    "/regenerate",
    "/set_domain",
    "/set_issue",
    "/end_consultation",
    "/new_consultation",
    "/consultation",
}


@pytest.fixture(scope="module")
def app():
    with live_app() as running:
        yield running


def client_for(app):
    from gradio_client import Client

    return Client(app.url, verbose=False, download_files=False, analytics_enabled=False)


def test_a_whole_consultation_through_the_api(app):
    client = client_for(app)
    api = client.view_api(print_info=False, return_format="dict")["named_endpoints"]
    assert ENDPOINTS <= set(api)

    asked = client.predict(QUESTION, True, 3, 2, api_name="/ask")
    question_box, chat, routing, domain, tree, *_ = asked
    assert question_box == "" and domain == "labor" and "劳动纠纷" in routing
    assert 'data-node="2.2"' in tree

    tree = client.predict("1", "yes", api_name="/mark")[3]
    assert 'class="ll-node yes" data-node="1"' in tree
    tree = client.predict("2", "no", api_name="/mark")[3]
    assert 'data-node="2.1"' not in tree

    chat, _, _, _, citations, *_ = client.predict(api_name="/answer")
    answer = chat[-1]["content"][0]["text"]  # the API returns a message's content as typed parts
    assert "二倍的工资" in answer and "条文存在·内容相符" in citations

    report, md_file, docx_file, *_ = client.predict(api_name="/end_consultation")
    assert "法律建议" in report and md_file and docx_file

    state = client.predict(api_name="/consultation")
    assert state["status"] == "closed" and [t["role"] for t in state["turns"]] == ["client", "lawyer"]
    assert state["tree"]["nodes"][1]["mark"] == "yes" and state["report"]["advice"]

    other = client_for(app).predict(api_name="/consultation")
    assert other == {}  # another client has its own (empty) consultation
    client.close()


def test_bad_calls_get_messages_not_errors(app):
    client = client_for(app)
    assert "请先提问" in client.predict(api_name="/answer")[-1]
    assert "还没有澄清树" in client.predict("1", "yes", api_name="/mark")[-1]
    assert "请输入您的问题" in client.predict("", True, 3, 3, api_name="/ask")[-1]
    client.predict(QUESTION, True, 2, 1, api_name="/ask")
    assert "无法标记" in client.predict("9.9", "yes", api_name="/mark")[-1]
    assert "无法标记" in client.predict("1", "maybe", api_name="/mark")[-1]
    client.close()


def test_set_domain_before_the_answer_returns_the_rebuilt_tree(app):
    client = client_for(app)
    client.predict(QUESTION, True, 2, 2, api_name="/ask")
    client.predict("1", "yes", api_name="/mark")
    *_, tree, _, _, _, message = client.predict("contract", api_name="/set_domain")
    assert "已改派为「合同纠纷」" in message and 'data-complete="true"' in tree
    state = client.predict(api_name="/consultation")
    assert state["domain"] == "contract" and state["status"] == "clarifying"
    assert any(e["action"] == "marks kept" for e in state["trace"])
    client.close()


def test_set_issue_rebuilds_the_tree_from_the_chosen_issue_and_refuses_one_the_menu_lacks(app):
    client = client_for(app)
    client.predict(
        "公司的大股东要把股份卖给外面的人，我作为老股东想买，他说外面的人出价更高。",
        True,
        2,
        3,
        api_name="/ask",
    )
    *_, message = client.predict("statute:labor:22", api_name="/set_issue")
    assert "无法按该问题类型重新生成" in message
    *_, tree, _, _, _, message = client.predict("statute:company:3", api_name="/set_issue")
    assert "股权转让、转股、卖股份" in message
    assert re.search(r'value="statute:company:3"[^>]* selected', tree)  # the issue in force is the one shown
    state = client.predict(api_name="/consultation")
    assert state["tree"]["issue"] == "statute:company:3" and state["status"] == "clarifying"
    client.close()
