"""The consultation tab's handlers, called as plain functions: what each shows, and how it treats bad
input (an empty, over-long or hostile question, a click on a closed consultation) without losing work."""

from __future__ import annotations

import zipfile
from itertools import pairwise
from pathlib import Path

import pytest

from lawluo.config import load_settings
from lawluo.firm import Firm
from lawluo.firm.saved import Status
from lawluo.llm import LanguageModels
from lawluo.tolc import TreeBuilder
from lawluo.ui import consult_tab as tab

from .fakes.firm_models import FirmResponder
from .fakes.live_app import model_environ
from .fakes.openai_server import FakeOpenAIServer

pytestmark = pytest.mark.slow  # 10 s of the suite on 2 cores (4 s or more: left out of the inner loop)

QUESTION = "我在公司干了两年一直没签劳动合同，现在老板把我辞退了，我能要求什么赔偿？"
HOSTILE = '<script>alert(1)</script><img src=x onerror="alert(2)">我的工资被拖欠了三个月怎么办？'


def shown(view: tab.ConsultView) -> dict:
    """A handler's view as a dict of its fields (one per component: state, question, chat, message…)."""
    return vars(view)


def last(views) -> dict:
    return shown(list(views)[-1])


def make_firm(firm_services, firm_server=None, **env) -> Firm:
    environ = {**(model_environ(firm_server) if firm_server else {}), **env}
    settings = load_settings(environ=environ)
    return Firm.from_settings(settings, models=LanguageModels(settings.models), **firm_services)


def test_asking_routes_the_question_and_grows_the_tree_level_by_level(firm_services, firm_server):
    firm = make_firm(firm_services, firm_server)
    steps = [shown(o) for o in tab.ask(firm, None, QUESTION, True, 3, 2)]
    state = steps[-1]["state"]
    assert state.domain == "labor" and steps[-1]["domain"] == "labor"
    assert "劳动纠纷" in steps[0]["routing"] and "Top 3" in steps[0]["routing"]
    assert steps[0]["question"] == ""  # the question was taken: the box is emptied
    trees = list(dict.fromkeys(s["tree"] for s in steps if 'data-mark="yes"' in s["tree"]))
    assert len(trees) == 3  # H=3: the first level is shown before the second exists, then the tree to mark
    assert 'data-complete="false"' in trees[0] and 'data-node="1.1"' not in trees[0]
    assert 'data-complete="true"' in trees[1] and 'data-node="2.2"' in trees[1]
    assert (
        " disabled " in trees[0] + trees[1] and " disabled " not in trees[2]
    )  # marks wait for the whole tree
    assert "提交已标记的事实" in steps[-1]["message"]


def test_marks_fold_a_no_and_the_answer_streams_with_checked_citations(firm_services, firm_server):
    firm = make_firm(firm_services, firm_server)
    state = last(tab.ask(firm, None, QUESTION, True, 3, 2))["state"]
    yes = shown(tab.mark(firm, state, "1", "yes"))
    assert 'class="ll-node yes" data-node="1"' in yes["tree"] and "已标记 1：是" in yes["message"]
    no = shown(tab.mark(firm, state, "2", "no"))
    assert 'data-node="2.1"' not in no["tree"] and "已折叠 2 个下级要素" in no["tree"]

    firm_server.tokens_per_second = 60  # a model's pace: the chat is redrawn every STREAM_UPDATE_S
    try:
        steps = [shown(o) for o in tab.answer(firm, state)]
    finally:
        firm_server.tokens_per_second = None
    updates = [s for s in steps if s["message"] is tab.KEEP]  # while it streams, only the chat changes
    assert all(s["tree"] is tab.KEEP and s["citations"] is tab.KEEP for s in updates)
    partial = [s["chat"][-1]["content"] for s in updates]
    assert len(partial) >= 2  # streamed: the answer grew over several updates…
    assert all(b.startswith(a) for a, b in pairwise(partial))  # …each adding text at its end only
    final = steps[-1]
    assert (
        "二倍的工资" in final["chat"][-1]["content"]
        and "引用核查：条文存在·内容相符" in final["chat"][-1]["content"]
    )
    assert "条文存在·内容相符" in final["citations"] and "查无此条" in final["citations"]
    assert [e.agent for e in state.trace].count("checker") == 1 and 'data-agent="lawyer"' in final["trace"]
    confirmed = firm_lawyer_request(firm_server)
    assert "要素" in confirmed  # the confirmed fact reached the lawyer


def firm_lawyer_request(firm_server) -> str:
    return firm_server.responder.lawyer_requests[-1][-1]["content"]


def test_answering_twice_does_not_run_the_lawyer_again(firm_services, firm_server):
    firm = make_firm(firm_services, firm_server)
    state = last(tab.ask(firm, None, QUESTION, True, 2, 1))["state"]
    list(tab.answer(firm, state))
    again = last(tab.answer(firm, state))
    assert "已经回答过" in again["message"] and firm_server.responder.calls["lawyer"] == 1


def test_without_tolc_the_answer_streams_straight_away(firm_services, firm_server):
    firm = make_firm(firm_services, firm_server)
    final = last(tab.ask(firm, None, QUESTION, False, 3, 3))
    assert final["state"].tree is None and final["state"].turns[-1].role == "lawyer"
    assert "条文存在·内容相符" in final["citations"]


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("", "请输入您的问题"),
        ("   \n ", "请输入您的问题"),
        ("问" * 20_000, "问题过长：20,000 字，上限 4,000 字"),
    ],
)
def test_an_empty_or_overlong_question_gets_a_message_and_stays_in_the_box(firm_services, question, expected):
    firm = make_firm(firm_services)
    (out,) = [shown(o) for o in tab.ask(firm, None, question, True, 3, 3)]
    assert expected in out["message"] and out["question"] == question and out["state"] is None


def test_a_second_click_of_ask_while_the_tree_awaits_marks_says_what_to_do_next(firm_services):
    firm = make_firm(firm_services)  # no model: the tree comes from the material
    state = last(tab.ask(firm, None, QUESTION, True, 3, 3))["state"]
    assert state.tree is not None and state.status == Status.CLARIFYING
    (out,) = [shown(o) for o in tab.ask(firm, state, "", True, 3, 3)]  # the box was emptied by the first
    assert (
        "请逐条标记" in out["message"]
        and "warn" not in out["message"]
        and "请输入您的问题" not in out["message"]
    )
    assert out["state"] is state and len(state.turns) == 1  # nothing asked twice


def test_hostile_html_in_a_question_and_an_answer_is_shown_as_text(firm_services):
    with FakeOpenAIServer() as server:
        server.responder = FirmResponder(
            # Chinese enough to pass the answer check (lawluo/agents/answer_check.py), markup to escape
            lawyer_answer="答复：请保留工资条和考勤记录，向劳动监察大队投诉。<script>alert(3)</script><img src=x onerror=alert(4)>"
        )
        firm = make_firm(firm_services, server)
        final = last(tab.ask(firm, None, HOSTILE, False, 3, 3))
    question, answer = (m["content"] for m in final["chat"])
    assert "<script>" not in question + answer and "<img" not in question + answer
    assert (
        "&lt;script&gt;alert(1)&lt;/script&gt;" in question and "&lt;img src=x onerror=alert(4)&gt;" in answer
    )
    assert "<script>" not in final["routing"] + final["trace"]


def test_without_a_model_the_tree_comes_from_the_domains_material_and_the_answer_shows_what_was_retrieved(
    firm_services,
):
    firm = make_firm(firm_services)
    state = last(tab.ask(firm, None, QUESTION, True, 2, 3))["state"]
    assert state.tree.source == "material"  # the domain's statute elements and lawyers' questions
    final = last(tab.answer(firm, state))
    assert "未配置律师模型" in final["chat"][-1]["content"]
    assert "检索到的法条" in final["retrieved"] and "相似案例" in final["retrieved"]
    # the tree says where its elements came from, in a visitor's words (no H=…, K=…, no English)
    assert (
        "这些问题来自本领域法条要件与律师常问问题" in final["tree"]
        and "K=2" not in final["tree"].split("title=")[0]
    )


def test_the_domain_can_be_overridden_and_the_change_is_shown(firm_services):
    firm = make_firm(firm_services)
    state = last(tab.ask(firm, None, QUESTION, True, 2, 1))["state"]
    out = last(tab.set_domain(firm, state, "contract"))
    assert state.domain == "contract" and "合同纠纷" in out["routing"] and "改派" in out["routing"]
    assert "请先提问" in last(tab.set_domain(firm, None, "contract"))["message"]


#: Routed to 交通事故 (unsure), its tree drawn from 劳动纠纷 (外卖员, 平台 name a platform worker's entry): soft
#: routing. (Until issue 42 a cashier's wage deduction served here, drawn from 消费权益 on the word 超市; the routed
#: domain now keeps its own best element when the question names none of its entries, so it stays 劳动纠纷.)
RIDER = "我走在路上被一个骑电动车的外卖员撞倒了，他说是平台的事，平台说他不是员工。"


def statements(state) -> list[str]:
    return [n.statement for n in state.tree.elements]


def test_choosing_a_domain_while_the_tree_awaits_marks_rebuilds_it_and_keeps_the_marks_that_still_apply(
    firm_services,
):
    firm = make_firm(firm_services)
    state = last(
        tab.ask(firm, None, "我老婆起诉离婚，我不同意，我们有一套婚后买的房子和一个孩子。", True, 3, 3)
    )["state"]
    assert state.domain == "marriage_family"
    first = state.tree.level(1)
    tab.mark(firm, state, first[0].id, "yes")
    kept = first[0].statement
    steps = [shown(v) for v in tab.set_domain(firm, state, "real_estate")]
    assert tab.REBUILDING in steps[0]["message"]  # shown while the new tree grows
    assert state.domain == "real_estate" and state.status == Status.CLARIFYING
    assert not set(statements(state)) & {n.statement for n in first[1:]}  # another domain's elements
    assert "已改派为「房产纠纷」" in steps[-1]["message"] and kept not in statements(state)
    assert "保留了 0 / 1 个标记" in steps[-1]["message"]
    assert 'data-complete="true"' in steps[-1]["tree"] and " disabled " not in steps[-1]["tree"]
    # back to the first domain: its elements again, and a mark on one of them is kept
    tab.mark(firm, state, state.tree.level(1)[0].id, "no")
    back = last(tab.set_domain(firm, state, "marriage_family"))
    assert kept in statements(state) and state.tree.level(1)[0].statement == kept
    assert "保留了 0 / 1 个标记" in back["message"]  # the real-estate "no" had no place in this tree


def test_a_mark_on_an_element_of_both_trees_survives_the_rebuild(firm_services):
    firm = make_firm(firm_services)
    state = last(tab.ask(firm, None, RIDER, True, 2, 3))["state"]
    node = state.tree.level(1)[1]
    tab.mark(firm, state, node.id, "yes")
    last(tab.set_domain(firm, state, "labor"))  # the domain the tree was drawn from: the same elements
    assert node.statement in state.confirmed and state.domain == "labor"
    assert any(e.action == "marks kept" and e.summary == "1 of 1" for e in state.trace)


def test_choosing_the_routed_domain_again_replaces_elements_drawn_from_another_domain(firm_services):
    firm = make_firm(firm_services)
    state = last(tab.ask(firm, None, RIDER, True, 2, 3))["state"]
    assert state.domain == "traffic" and "劳动纠纷" in state.tree.notes[-1]  # soft routing moved the tree
    assert "派单" in "".join(statements(state))
    out = last(tab.set_domain(firm, state, "traffic"))  # the same domain, chosen by the client
    assert "已改派为「交通事故」" in out["message"] and state.domain == "traffic"
    assert not any("劳动纠纷" in note for note in state.tree.notes)
    assert "派单" not in "".join(statements(state))
    assert any("交强险" in s for s in statements(state))  # the traffic material's insurance elements
    rebuilt = statements(state)
    last(tab.set_domain(firm, state, "traffic"))  # chosen once more: nothing left to replace
    assert statements(state) == rebuilt and sum(e.action == "override" for e in state.trace) == 1


def test_after_the_answer_a_domain_change_applies_to_the_next_answers_and_the_tree_stays(firm_services):
    firm = make_firm(firm_services)
    state = last(tab.ask(firm, None, QUESTION, True, 2, 2))["state"]
    last(tab.answer(firm, state))
    before = statements(state)
    out = last(tab.set_domain(firm, state, "contract"))
    assert state.domain == "contract" and statements(state) == before
    assert tab.DOMAIN_CHANGED in out["message"]


def test_a_rebuild_that_fails_puts_the_old_tree_and_its_marks_back(firm_services, monkeypatch):
    firm = make_firm(firm_services)
    state = last(tab.ask(firm, None, QUESTION, True, 2, 2))["state"]
    tab.mark(firm, state, "1", "yes")
    before = state.tree.to_dict()

    def broken(*args, **kwargs):
        raise RuntimeError("the case bank went away")
        yield  # a generator, like the real one

    monkeypatch.setattr(TreeBuilder, "levels", broken)
    out = last(tab.set_domain(firm, state, "contract"))
    # plain words for the visitor; the error itself is for the log (issue 42)
    assert tab.FAILED_MESSAGE in out["message"] and "the case bank went away" not in out["message"]
    assert state.tree.to_dict() == before and state.confirmed == [state.tree.node("1").statement]
    assert state.status == Status.CLARIFYING and state.domain == "labor"  # the choice did not happen
    assert "咨询人改派" not in out["routing"] and "置信度" in out["routing"]


def test_a_rebuild_stopped_halfway_by_a_page_that_left_leaves_the_consultation_as_it_was(firm_services):
    firm = make_firm(firm_services)
    state = last(tab.ask(firm, None, QUESTION, True, 3, 2))["state"]
    tab.mark(firm, state, "1", "yes")
    before, trace = state.tree.to_dict(), len(state.trace)
    steps = tab.set_domain(firm, state, "contract")
    assert tab.REBUILDING in next(steps).message  # the first level of the new tree exists
    assert state.domain == "contract" and state.tree.to_dict() != before
    steps.close()  # Gradio closes the handler when the page goes away
    assert state.domain == "labor" and state.tree.to_dict() == before and len(state.trace) == trace


#: Routed to 公司法; its first level asks about a nominal shareholder, the question is a sale to an outsider.
SHARES = "公司的大股东要把股份卖给外面的人，我作为老股东想买，他说外面的人出价更高。"
TRANSFER = "statute:company:3"  # 股权转让、转股、卖股份: the right of first refusal (公司法 84)


def test_the_issue_menu_offers_the_domains_issues_and_choosing_one_rebuilds_the_tree_from_it(firm_services):
    firm = make_firm(firm_services)
    asked = last(tab.ask(firm, None, SHARES, True, 3, 3))
    state = asked["state"]
    issues, current = firm.issue_menu(state)
    own = [i for i in issues if i.domain == "company"]
    assert (
        state.domain == "company" and issues[: len(own)] == own
    )  # the domain's issues, then the runner-ups'
    assert {i.domain for i in issues[len(own) :]} <= {d["domain"] for d in state.routing["top"]} - {"company"}
    assert current and current != TRANSFER and TRANSFER in {i.id for i in own}
    assert "data-issue" in asked["tree"] and "股权转让、转股、卖股份" in asked["tree"]
    assert '<optgroup label="公司法">' in asked["tree"]
    tab.mark(firm, state, state.tree.level(1)[0].id, "yes")
    steps = [shown(v) for v in tab.choose_issue(firm, state, TRANSFER)]
    assert tab.ISSUE_REBUILDING in steps[0]["message"] and " disabled" in steps[0]["tree"]
    entry = [i.statement for i in firm.material.issue_elements(TRANSFER, SHARES, question=SHARES)]
    assert [n.statement for n in state.tree.level(1)] == entry[:3] and state.tree.issue == TRANSFER
    assert "已按问题类型「股权转让、转股、卖股份」重新生成澄清树" in steps[-1]["message"]
    assert f'<option value="{TRANSFER}" data-domain="公司法" selected>' in steps[-1]["tree"]
    assert state.status == Status.CLARIFYING and state.domain == "company"
    assert any(e.action == "issue" and TRANSFER in e.summary for e in state.trace)
    assert firm.issue_menu(state)[1] == TRANSFER
    # saved and read back, the choice is still the tree's
    assert type(state).from_json(state.to_json(), firm.domains).tree.issue == TRANSFER


def test_an_issue_the_menu_does_not_offer_is_refused_and_changes_nothing(firm_services):
    firm = make_firm(firm_services)
    state = last(tab.ask(firm, None, SHARES, True, 2, 3))["state"]
    before, trace = state.tree.to_dict(), len(state.trace)
    for hostile in ("statute:labor:22", "<script>alert(1)</script>", "x" * 10_000):
        out = last(tab.choose_issue(firm, state, hostile))
        assert "无法按该问题类型重新生成" in out["message"] and "<script>" not in out["message"]
    assert state.tree.to_dict() == before and len(state.trace) == trace
    current = firm.issue_menu(state)[1]
    assert (
        last(tab.choose_issue(firm, state, current))["message"] == ""
    )  # the tree's own issue: nothing to do
    assert state.tree.to_dict() == before


def test_after_soft_routing_the_menu_offers_both_domains_and_an_issue_of_the_routed_one_can_be_chosen(
    firm_services,
):
    firm = make_firm(firm_services)
    state = last(tab.ask(firm, None, RIDER, True, 2, 3))["state"]
    issues, current = firm.issue_menu(state)
    assert firm.material.issue(current).domain == "labor"  # the tree drawn from 劳动纠纷
    domains = list(dict.fromkeys(i.domain for i in issues))
    assert domains[:2] == ["labor", "traffic"]  # the drawing domain's issues, then the consultation's
    assert "statute:traffic:14" in {i.id for i in issues}  # 抢救费、垫付、交强险
    last(tab.choose_issue(firm, state, "statute:traffic:14"))
    assert state.domain == "traffic" and "派单" not in "".join(statements(state))
    assert not any(e.kind == "override" for e in state.trace)  # the consultation's own domain: no override
    first = firm.material.issue_elements("statute:traffic:14", RIDER, question=RIDER)[0].statement
    assert first in statements(state) and firm.issue_menu(state)[1] == "statute:traffic:14"


def test_an_issue_of_a_runner_up_domain_makes_that_domain_the_consultations(firm_services):
    firm = make_firm(firm_services)
    state = last(tab.ask(firm, None, SHARES, True, 2, 3))["state"]
    other = next(i for i in firm.issue_menu(state)[0] if i.domain != "company")
    out = last(tab.choose_issue(firm, state, other.id))
    assert state.domain == other.domain and state.tree.issue == other.id
    assert any(e.kind == "override" for e in state.trace) and "由您选择" in out["routing"]
    assert firm.issue_menu(state)[1] == other.id


def test_after_the_answer_there_is_no_issue_menu_and_a_choice_is_refused(firm_services):
    firm = make_firm(firm_services)
    state = last(tab.ask(firm, None, SHARES, True, 2, 2))["state"]
    out = last(tab.answer(firm, state))
    assert firm.issue_menu(state) == ([], "") and "data-issue" not in out["tree"]
    before = state.tree.to_dict()
    assert "无法按该问题类型重新生成" in last(tab.choose_issue(firm, state, TRANSFER))["message"]
    assert state.tree.to_dict() == before


def test_an_issue_rebuild_that_fails_puts_the_old_tree_and_its_marks_back(firm_services, monkeypatch):
    firm = make_firm(firm_services)
    state = last(tab.ask(firm, None, SHARES, True, 2, 2))["state"]
    tab.mark(firm, state, "1", "yes")
    before, trace = state.tree.to_dict(), len(state.trace)

    def broken(*args, **kwargs):
        raise RuntimeError("the material went away")
        yield  # a generator, like the real one

    monkeypatch.setattr(TreeBuilder, "levels", broken)
    out = last(tab.choose_issue(firm, state, TRANSFER))
    assert tab.FAILED_MESSAGE in out["message"]
    assert state.tree.to_dict() == before and len(state.trace) == trace and state.status == Status.CLARIFYING
    other = next(i for i in firm.issue_menu(state)[0] if i.domain != "company")  # an override too: undone
    assert "出错了" in last(tab.choose_issue(firm, state, other.id))["message"]
    assert state.domain == "company" and state.tree.to_dict() == before and len(state.trace) == trace


def test_with_a_model_the_chosen_issues_elements_lead_the_clarifiers_reference_material(
    firm_services, firm_server
):
    firm = make_firm(firm_services, firm_server)
    state = last(tab.ask(firm, None, SHARES, True, 2, 2))["state"]
    out = shown(tab.view(firm, state))
    assert '<option value="" selected disabled>' in out["tree"]  # a model's elements belong to no issue
    sent = len(firm_server.requests)
    last(tab.choose_issue(firm, state, TRANSFER))
    prompt = firm_server.requests[sent]["messages"][-1]["content"]  # the first level's call
    block = prompt.split("【本领域可参考的法律要素", 1)[1]
    first = firm.material.issue_elements(TRANSFER, SHARES, question=SHARES)[0].statement
    assert block.split("\n- ", 1)[1].startswith(first)
    assert state.tree.issue == TRANSFER and firm.issue_menu(state)[1] == TRANSFER


def test_regenerate_replaces_the_last_answer(firm_services, firm_server):
    firm = make_firm(firm_services, firm_server)
    state = last(tab.ask(firm, None, QUESTION, False, 3, 3))["state"]
    final = last(tab.regenerate(firm, state))
    assert [t.role for t in state.turns] == ["client", "lawyer"] and firm_server.responder.calls[
        "lawyer"
    ] == 2
    assert any(e.action == "regenerate" for e in state.trace) and "二倍的工资" in final["chat"][-1]["content"]


def test_ending_writes_the_report_as_markdown_and_docx_and_closes_the_consultation(
    firm_services, firm_server
):
    firm = make_firm(firm_services, firm_server)
    state = last(tab.ask(firm, None, QUESTION, False, 3, 3))["state"]
    ended = tab.end(firm, state)
    markdown, md_file, docx_file = ended.report, ended.download_md, ended.download_docx
    assert "法律分析" in markdown and "声明" in markdown and state.status == "closed"
    assert state.report_score is not None and "P(更好" not in markdown  # the boss's score is in the trace
    md_path, docx_path = Path(md_file["value"]), Path(docx_file["value"])
    assert md_path.read_text(encoding="utf-8").startswith("# ") and "风险提示" in md_path.read_text(
        encoding="utf-8"
    )
    with zipfile.ZipFile(docx_path) as docx:
        assert "法律建议" in docx.read("word/document.xml").decode("utf-8")
    closed = list(tab.ask(firm, state, "还有一个问题", True, 3, 3))[-1]
    assert "已结束" in shown(closed)["message"] and shown(closed)["question"] == "还有一个问题"


def test_a_failing_step_is_shown_as_a_message_and_keeps_the_consultation(firm_services, monkeypatch):
    firm = make_firm(firm_services)
    state = last(tab.ask(firm, None, QUESTION, True, 2, 1))["state"]
    monkeypatch.setattr(firm, "close", lambda *a: (_ for _ in ()).throw(RuntimeError("disk full")))
    out = tab.end(firm, state)
    assert tab.FAILED_MESSAGE in out.message and "disk full" not in out.message  # the log has it
    assert out.state is state and state.turns


def test_new_consultation_forgets_the_session(firm_services):
    firm = make_firm(firm_services)
    out = tab.new_consultation(firm)
    assert out.state is None and out.question == "" and out.chat == [] and out.download_md["visible"] is False


def test_without_a_model_ending_gives_a_partial_report_that_says_so(firm_services):
    firm = make_firm(firm_services)
    state = last(tab.ask(firm, None, QUESTION, False, 3, 3))["state"]
    out = tab.end(firm, state)
    assert state.status == "closed" and Path(out.download_md["value"]).exists()
    assert Path(out.download_docx["value"]).exists()
    assert "咨询事项" in out.report and "未配置" in out.message  # the notice says why the report is partial


def test_a_saved_consultation_resumes_where_it_stopped(firm_services, tmp_path):
    firm = make_firm(firm_services)
    state = last(tab.ask(firm, None, QUESTION, True, 2, 2))["state"]
    tab.mark(firm, state, "1", "yes")
    saved = tab.save_consultation(firm, state).saved
    resumed = shown(tab.resume_consultation(firm, None, saved["value"]))
    assert resumed["state"].to_dict() == state.to_dict() and "已恢复" in resumed["message"]
    assert 'class="ll-node yes" data-node="1"' in resumed["tree"]


@pytest.mark.parametrize(
    ("content", "expected"),
    [("{not json", "invalid JSON"), ('{"version": 99}', "version 99"), ("[1, 2]", "JSON object")],
)
def test_a_bad_saved_file_changes_nothing_and_says_why(firm_services, tmp_path, content, expected):
    firm = make_firm(firm_services)
    state = last(tab.ask(firm, None, QUESTION, True, 2, 1))["state"]
    bad = tmp_path / "bad.json"
    bad.write_text(content, encoding="utf-8")
    out = shown(tab.resume_consultation(firm, state, str(bad)))
    assert out["state"] is state and "无法恢复" in out["message"] and expected in out["message"]
    assert (
        "没有收到文件。" in (nothing := shown(tab.resume_consultation(firm, state, None))["message"])
        and "No file was uploaded." in nothing
    )


def test_a_view_becomes_an_events_outputs_by_name_and_keeps_what_it_does_not_set():
    import gradio as gr

    shown_view = tab.ConsultView(state=None, question="", message="<p>hi</p>")
    assert shown_view.outputs(("question", "message", "chat")) == ("", "<p>hi</p>", gr.skip())
    assert len(shown_view.outputs(tab.ENDED)) == len(tab.ENDED) and shown_view.outputs(tab.ENDED)[0] is None
    with pytest.raises(KeyError, match="no field answer"):
        shown_view.outputs(("chat", "answer"))
