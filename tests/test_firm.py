"""The whole SOP — receptionist, ToLC, lawyer, checker, boss, secretary — against scripted models served
by the fake OpenAI server: the happy path, broken JSON for the tree, a lawyer timing out mid-answer, a
client who answers No to everything, best-of-n, no model at all, and save/resume from JSON."""

from __future__ import annotations

import pytest

from lawluo.config import load_settings
from lawluo.firm import Consultation, Firm
from lawluo.firm.firm import BROKE_OFF_NOTE
from lawluo.firm.script import Script, run_script
from lawluo.llm import LanguageModels

from .fakes.firm_models import LAWYER_ANSWER, FirmResponder
from .fakes.live_app import model_environ

QUESTION = "我在公司干了两年一直没签劳动合同，现在老板把我辞退了，我能要求什么赔偿？"
FOLLOW_UP = "那二倍工资最多能要几个月？"


def make_firm(firm_services, firm_server=None, **environ) -> Firm:
    env = {}
    if firm_server is not None:  # every role on the fake server, but no judge
        env = {**model_environ(firm_server), "LAWLUO_DEFAULT_TIMEOUT": "5", "LAWLUO_JUDGE_BACKEND": "none"}
    settings = load_settings(environ={**env, **environ})
    return Firm.from_settings(settings, models=LanguageModels(settings.models), **firm_services)


def test_a_consultation_follows_the_sop_end_to_end(firm_services, firm_server):
    firm = make_firm(firm_services, firm_server)
    state = firm.new(client="张先生")
    routing = firm.receive(state, QUESTION)
    assert state.domain == "labor" and routing["name"] == "劳动纠纷"

    levels = list(firm.clarify(state))
    assert len(levels) == 2 and len(levels[0].elements) == 3  # the first level exists before the second
    tree = state.tree
    assert tree.source == "model" and (len(tree.level(1)), len(tree.level(2))) == (3, 9)
    firm.mark(state, "1", "yes")
    firm.mark(state, "2", "no")
    firm.mark(state, "2.1", "yes")  # under a No: does not count

    answer = "".join(firm.answer(state))
    assert answer == LAWYER_ANSWER
    lawyer = state.turns[-1]
    assert [c["verdict"] for c in lawyer.citations] == ["verified", "not_found"]
    assert lawyer.nhsr == 0.5 and lawyer.score["p_better"] == 0.8 and lawyer.score["method"] == "judge"
    assert lawyer.statutes and all(s["law"] for s in lawyer.statutes)
    request = firm_server.responder.lawyer_requests[0]
    assert "劳动" in request[0]["content"]  # the labour lawyer's role prompt
    grounding = request[-1]["content"]
    assert tree.node("1").statement in grounding.split("否认的事实")[0]
    assert tree.node("2").statement in grounding.split("否认的事实")[1]
    assert tree.node("2.1").statement not in grounding
    assert lawyer.statutes[0]["law"] in grounding

    firm.receive(state, FOLLOW_UP)
    # a new answer to the new question (the first one said again would be held back: the repeat rule)
    firm_server.responder.lawyer_answer = (
        "二倍工资差额从用工满一个月的次日起算，最多十一个月；超过一年未签合同的，视为已订立无固定期限劳动合同。"
        "建议收集工资流水和考勤记录，向劳动争议仲裁委员会申请仲裁。"
    )
    "".join(firm.answer(state))
    assert [t.role for t in state.turns] == ["client", "lawyer", "client", "lawyer"]
    assert (
        len(firm_server.responder.lawyer_requests[1]) == 4
    )  # system, earlier question, earlier answer, this turn

    report = firm.close(state)
    assert report["client"] == "张先生" and report["number"].startswith("LL-")
    assert report["advice"] == ["收集工资流水和考勤记录", "一年内申请劳动仲裁"]
    assert state.report_score["p_better"] == 0.8 and state.status == "closed"
    agents = [(e.agent, e.action) for e in state.trace]
    for step in [
        ("receptionist", "route"),
        ("clarifier", "build tree"),
        ("client", "mark"),
        ("retrieval", "statutes and cases"),
        ("lawyer", "answer"),
        ("checker", "check citations"),
        ("boss", "score answer"),
        ("secretary", "write report"),
        ("boss", "score report"),
    ]:
        assert step in agents
    assert all(e.ok for e in state.trace), [(e.agent, e.action, e.summary) for e in state.trace if not e.ok]
    assert all(e.duration_ms >= 0 for e in state.trace)
    with pytest.raises(ValueError, match="closed"):
        firm.receive(state, "还有一个问题")


def test_broken_json_for_the_tree_falls_back_to_the_domains_material_and_the_turn_goes_on(
    firm_services, firm_server
):
    firm_server.responder = FirmResponder(clarifier_reply="好的，我来列出要素：1. 是否签了合同 2. 是否被辞退")
    firm = make_firm(firm_services, firm_server)
    state = firm.new()
    firm.receive(state, QUESTION)
    for _ in firm.clarify(state):
        pass
    labour = firm.material.find  # the labour material's elements, else a labour case's
    assert state.tree.elements and all(
        n.case_ids or labour(n.statement, "labor") for n in state.tree.elements
    )
    assert any("澄清模型的输出不是有效的 JSON" in note and "Error" not in note for note in state.tree.notes)
    assert not state.trace[-1].ok  # the tree event records that the model failed
    assert "".join(firm.answer(state)) == LAWYER_ANSWER


def test_a_lawyer_timing_out_mid_answer_keeps_the_partial_answer(firm_services, firm_server):
    firm = make_firm(firm_services, firm_server, LAWLUO_LAWYER_TIMEOUT="0.3")
    state = firm.new()
    firm.receive(state, QUESTION)
    firm_server.tokens_per_second = 1  # one piece, then a stall longer than the lawyer's timeout
    pieces = list(firm.answer(state))
    turn = state.turns[-1]
    assert turn.role == "lawyer" and pieces and turn.text == "".join(pieces)
    assert LAWYER_ANSWER.startswith(turn.text) and len(turn.text) < len(LAWYER_ANSWER)
    assert turn.note == BROKE_OFF_NOTE and turn.score is None
    lawyer_events = [e for e in state.trace if e.agent == "lawyer"]
    assert not lawyer_events[-1].ok
    firm_server.tokens_per_second = None  # the client asks again: the consultation goes on
    firm.receive(state, "请再回答一次")
    assert "".join(firm.answer(state)) == LAWYER_ANSWER


def test_a_client_who_answers_no_to_everything(firm_services, firm_server):
    firm = make_firm(firm_services, firm_server)
    script = Script.model_validate({"turns": [{"text": QUESTION, "default_mark": "no"}], "report": False})
    state = run_script(firm, script)
    first_level = [n.statement for n in state.tree.level(1)]
    assert state.confirmed == [] and state.denied == first_level
    assert [n.mark for n in state.tree.level(2)] == ["unknown"] * 9  # pruned before being reached
    grounding = firm_server.responder.lawyer_requests[0][-1]["content"]
    confirmed_part, denied_part = grounding.split("【客户在澄清中否认的事实】")
    assert "（无）" in confirmed_part.split("确认的事实】")[1]
    assert all(s in denied_part for s in first_level)


def test_best_of_n_keeps_the_answer_the_boss_scores_highest(firm_services, firm_server):
    answers = iter(["回答甲", "回答乙：" + LAWYER_ANSWER, "回答丙"])
    firm_server.responder = FirmResponder(judge_score=lambda answer: 9 if answer.startswith("回答乙") else 3)
    base = firm_server.responder

    def responder(body):
        text = base(body)
        return next(answers) if text == LAWYER_ANSWER else text

    firm_server.responder = responder
    firm = make_firm(firm_services, firm_server, LAWLUO_BEST_OF="3")
    state = firm.new()
    firm.receive(state, QUESTION)
    assert list(firm.answer(state)) == ["回答乙：" + LAWYER_ANSWER]
    assert state.turns[-1].score["p_better"] == 0.9
    (event,) = [e for e in state.trace if e.action == "best of n"]
    scores = event.summary.split("→")[0].removeprefix("P(better) ").replace(",", " ").split()
    assert sorted(scores) == ["0.30", "0.30", "0.90"]  # drafts run in parallel: in any order


def test_without_any_model_the_sop_still_runs_and_says_what_is_missing(firm_services):
    firm = make_firm(firm_services)
    state = run_script(
        firm,
        Script.model_validate({"client": "李女士", "turns": [{"text": QUESTION, "marks": {"1": "yes"}}]}),
    )
    assert state.tree.source == "material" and "未配置语言模型" in state.tree.notes[0]
    lawyer = state.turns[-1]
    assert "可能相关的法条" in lawyer.text and "未配置律师模型" in lawyer.text and not lawyer.note
    assert lawyer.citations and {c["verdict"] for c in lawyer.citations} == {"verified"}
    assert lawyer.statutes and lawyer.cases and lawyer.score is None
    assert state.report["generated_by"] == "no model" and state.report["client"] == "李女士"
    assert state.report_score is None


def test_an_answer_uses_a_retrieval_prepared_for_it_and_redoes_a_stale_one(firm_services):
    firm = make_firm(firm_services)
    state = firm.new()
    firm.receive(state, QUESTION)
    prepared = firm.retrieve(state)
    assert prepared.statutes and prepared.query == QUESTION and prepared.domain == state.domain
    "".join(firm.answer(state, retrieval=prepared))
    assert [e.action for e in state.trace].count("statutes and cases") == 1  # not searched again
    assert state.turns[-1].statutes == prepared.statutes

    firm.receive(state, FOLLOW_UP)
    "".join(firm.answer(state, retrieval=prepared))  # prepared for the first question, not this one
    assert [e.action for e in state.trace].count("statutes and cases") == 2  # searched for the follow-up
    assert state.turns[-1].statutes == firm.retrieve(state).statutes


def test_a_consultation_saved_as_json_resumes_where_it_stopped(firm_services, firm_server):
    firm = make_firm(firm_services, firm_server)
    state = firm.new(client="王先生")
    firm.receive(state, QUESTION)
    for _ in firm.clarify(state):
        pass
    firm.mark(state, "1", "yes")
    "".join(firm.answer(state))
    saved = state.to_json()

    resumed = Consultation.from_json(saved)
    assert resumed == state
    other_firm = make_firm(firm_services, firm_server)  # a new process would build a new firm
    other_firm.receive(resumed, FOLLOW_UP)
    "".join(other_firm.answer(resumed))
    assert resumed.domain == "labor" and resumed.confirmed == [state.tree.node("1").statement]
    assert [t.role for t in resumed.turns] == ["client", "lawyer", "client", "lawyer"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "invalid JSON"),
        ('{"version": 99}', "version 99"),
        ('{"version": 1, "colour": 1}', "unknown field"),
        ('{"version": 1, "status": "lost"}', "status 'lost'"),
        ("[1]", "JSON object"),
    ],
)
def test_a_malformed_saved_consultation_is_refused_clearly(text, message):
    with pytest.raises(ValueError, match=message):
        Consultation.from_json(text)


def test_empty_questions_and_marks_without_a_tree_are_refused(firm_services):
    firm = make_firm(firm_services)
    state = firm.new()
    with pytest.raises(ValueError, match="empty"):
        firm.receive(state, "   ")
    with pytest.raises(ValueError, match="no clarification tree"):
        firm.mark(state, "1", "yes")
    with pytest.raises(ValueError, match="not a client question"):
        list(firm.answer(state))
