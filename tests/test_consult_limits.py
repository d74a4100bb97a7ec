"""A visitor cannot stall others, overlap their own steps, or make the firm run without bounds.

Each test reproduces something an attacker or a faulty model did to the consultation tab: a hung model
stalling every visitor, one request costing hundreds of calls, End during a streaming answer, an empty
answer reported as success, a saved file that names a path.
"""

from __future__ import annotations

import json
import stat
import threading
from pathlib import Path

import pytest

from lawluo.agents.answer_check import Held
from lawluo.agents.lawyer import REPLY_HELD_BACK
from lawluo.config import load_settings
from lawluo.firm import Consultation, Firm
from lawluo.llm import LanguageModels
from lawluo.tolc.tree import tree_calls
from lawluo.ui import consult_tab as tab
from lawluo.ui.visitors import Visit, VisitorLimits, Visitors, fit_tree, owner_of

from .fakes.firm_models import FirmResponder
from .fakes.live_app import model_environ
from .fakes.openai_server import FakeOpenAIServer, Fault, Reply

pytestmark = pytest.mark.slow  # 17 s of the suite on 2 cores (4 s or more: left out of the inner loop)

QUESTION = "我在公司干了两年一直没签劳动合同，现在老板把我辞退了，我能要求什么赔偿？"


def shown(view: tab.ConsultView) -> dict:
    """A handler's view as a dict of its fields (one per component: state, question, chat, message…)."""
    return vars(view)


def make_firm(firm_services, server=None, **env) -> Firm:
    settings = load_settings(environ={**(model_environ(server) if server else {}), **env})
    return Firm.from_settings(settings, models=LanguageModels(settings.models), **firm_services)


# -- the size of a tree ---------------------------------------------------------------------------


def test_a_tree_asked_for_beyond_the_limit_is_reduced_and_the_visitor_is_told(firm_services, firm_server):
    firm = make_firm(firm_services, firm_server)
    visitors = Visitors(VisitorLimits(tree_calls=13))
    steps = [shown(o) for o in tab.ask(firm, None, QUESTION, True, 5, 6, visitors)]
    calls = firm_server.responder.calls["clarifier"]
    assert calls == tree_calls(3, 6) == 7  # not the 259 calls of H=5, K=6
    assert steps[-1]["state"].tree.height == 3 and steps[-1]["state"].tree.k == 6
    assert (
        "澄清树已缩小为 3 层、每个问题下 6 个细问" in steps[-1]["message"] and "259" in steps[-1]["message"]
    )


@pytest.mark.parametrize(
    ("asked", "limit", "fitted"), [((5, 6), 13, (3, 6)), ((4, 3), 13, (4, 3)), ((5, 6), 1, (2, 6))]
)
def test_fit_tree_lowers_the_height_first_then_the_width(asked, limit, fitted):
    assert fit_tree(*asked, limit) == fitted
    assert tree_calls(*fitted) <= limit or fitted[0] == 2


def test_out_of_range_sizes_from_the_api_are_clamped_not_crashing(firm_services):
    firm = make_firm(firm_services)  # no model: a tree from cases
    final = shown(list(tab.ask(firm, None, QUESTION, True, 1000, -5))[-1])
    assert final["state"].tree.height == 5 and final["state"].tree.k == 1
    assert "出错了" not in final["message"]


# -- one step at a time per visitor ---------------------------------------------------------------


def test_a_second_model_step_of_the_same_session_is_refused_while_the_first_runs(firm_services):
    with FakeOpenAIServer(tokens_per_second=40) as server:
        server.responder = FirmResponder()
        firm = make_firm(firm_services, server)
        visitors, visit = Visitors(), Visit("session-a", "10.0.0.1")
        state = list(tab.ask(firm, None, QUESTION, False, 3, 3, visitors, visit))[-1].state
        streaming = tab.regenerate(firm, state, visitors, visit)
        next(streaming), next(streaming)  # the answer is streaming
        ended = tab.end(firm, state, visitors, visit)
        asked = list(tab.ask(firm, state, "还有一个问题", True, 3, 3, visitors, visit))
        rest = [shown(o) for o in streaming]
    assert tab.BUSY_MESSAGE in ended.message and state.report is None or state.status != "closed"
    assert tab.BUSY_MESSAGE in shown(asked[-1])["message"]
    assert shown(asked[-1])["question"] == "还有一个问题"  # the typed question stays in the box
    assert [t.role for t in state.turns] == ["client", "lawyer"] and state.turns[-1].text
    assert "二倍的工资" in rest[-1]["chat"][-1]["content"]
    closed = tab.end(firm, state, visitors, visit)  # once the answer is in, End works and includes it
    assert state.status == "closed" and "法律分析" in closed.report


def test_other_sessions_of_one_address_share_a_small_allowance(firm_services):
    visitors = Visitors(VisitorLimits(parallel=2))
    a, b, c = (Visit(f"s{i}", "203.0.113.9") for i in range(3))
    other = Visit("s9", "198.51.100.1")
    with visitors.model_work(a) as first, visitors.model_work(b) as second:
        with visitors.model_work(c) as third, visitors.model_work(other) as elsewhere:
            assert (first, second, third, elsewhere) == (True, True, False, True)
    with visitors.model_work(c) as later:
        assert later  # the allowance comes back when a step ends


def test_a_consultation_closed_while_its_answer_streams_stays_closed(firm_services, firm_server):
    firm = make_firm(firm_services, firm_server)
    state = firm.new()
    firm.receive(state, QUESTION)
    pieces = firm.answer(state)
    next(pieces)
    firm.close(state)
    list(pieces)
    assert state.status == "closed"
    with pytest.raises(ValueError, match="closed"):
        firm.receive(state, "再问一个")
    with pytest.raises(ValueError, match="closed"):
        list(firm.clarify(state))


# -- a hung or empty model ------------------------------------------------------------------------


def test_a_hung_clarifier_costs_one_step_budget_and_the_tree_comes_from_cases(firm_services):
    with FakeOpenAIServer() as server:
        server.responder = FirmResponder()
        server.script(Fault.hang(30))
        firm = make_firm(firm_services, server, LAWLUO_DEFAULT_TIMEOUT="30")
        visitors = Visitors(VisitorLimits(step_budget_s=1.0))
        final = shown(list(tab.ask(firm, None, QUESTION, True, 2, 3, visitors))[-1])
    tree = final["state"].tree
    assert tree.complete and tree.elements and any("澄清模型超时" in n for n in tree.notes)
    # the visitor reads plain words, never the error's type (issue 42: "BudgetExceeded: 澄清树 …" in the tree)
    assert not any("BudgetExceeded" in n or "Error" in n for n in tree.notes)
    assert final["tree"].count("部分要素改由") == 1  # one note for the tree, not one per node
    assert "时间预算" in final["message"] or "time budget" in final["message"]


def test_a_visitor_waiting_for_a_busy_model_gets_a_message_within_the_budget(firm_services):
    with FakeOpenAIServer() as server:
        server.responder = FirmResponder()
        server.script(Fault.hang(30))
        env = {"LAWLUO_DEFAULT_TIMEOUT": "30", "LAWLUO_DEFAULT_CONCURRENCY": "1"}
        firm = make_firm(firm_services, server, **env)
        hung = Visitors(VisitorLimits(step_budget_s=20))
        first = threading.Thread(target=lambda: list(tab.ask(firm, None, QUESTION, False, 3, 3, hung)))
        first.start()  # holds the lawyer's only slot, its model hanging
        while not server.requests:
            threading.Event().wait(0.01)
        waiting = Visitors(VisitorLimits(step_budget_s=0.5))
        steps = [shown(o) for o in tab.ask(firm, None, QUESTION, False, 3, 3, waiting, Visit("s2"))]
        first_done = not first.is_alive()
        server.close()
        first.join(timeout=5)
    assert "已收到问题" in steps[0]["message"]  # routing never waits for a model slot
    assert not first_done  # the second visitor was answered while the first still hung
    last_turn = steps[-1]["state"].turns[-1]
    # none of the hung model's words (the extract may quote 劳动合同法 82/87, which say 二倍 too)
    assert last_turn.role == "lawyer" and "建议您保存工资流水" not in last_turn.text
    # the visitor reads that the model did not answer, and gets the extract; "busy" is for the trace
    assert last_turn.held_back == "no_answer" and "busy" not in last_turn.note
    assert last_turn.text.endswith(REPLY_HELD_BACK)
    assert "busy" in [e for e in steps[-1]["state"].trace if e.agent == "lawyer"][-1].summary


@pytest.mark.parametrize("reply", [Reply(""), Fault.malformed()], ids=["empty", "not-json"])
def test_an_empty_answer_is_not_reported_as_a_success(firm_services, reply):
    with FakeOpenAIServer() as server:
        server.responder = FirmResponder()
        server.script(reply)
        firm = make_firm(firm_services, server)
        final = shown(list(tab.ask(firm, None, QUESTION, False, 3, 3))[-1])
    turn = final["state"].turns[-1]
    assert turn.note and "回答完毕" not in final["message"]
    assert "warn" in final["message"] or "error" in final["message"]
    if isinstance(reply, Reply):  # held back: the extract from the databases in its place, and why
        assert turn.held_back == "empty" and turn.note == Held("empty").message()
        assert turn.text.endswith(REPLY_HELD_BACK)
    else:  # a failed call: nothing written; the extract is shown with one plain sentence
        assert turn.held_back == "no_answer" and turn.note == Held("no_answer").message()
        assert turn.text.endswith(REPLY_HELD_BACK) and "JSON" not in turn.note
    lawyer_steps = [e for e in final["state"].trace if e.agent == "lawyer"]
    assert lawyer_steps and not lawyer_steps[-1].ok


# -- files and saved consultations ----------------------------------------------------------------


def closed_consultation(firm: Firm) -> Consultation:
    state = firm.new()
    firm.receive(state, QUESTION)
    list(firm.answer(state))
    firm.close(state)
    return state


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        (("report", "number"), "../../assets/eval/guidelines", "report.number"),
        (("id",), "../../etc", "id"),
        (("turns", 1, "score"), {"p_better": "high", "raw": None, "method": "judge"}, "p_better"),
        (("status",), "archived", "status"),
        (("tree",), {"question": "q", "height": 9, "k": 3, "nodes": []}, "tree"),
        (("turns", 0, "role"), "admin", "role"),
    ],
)
def test_a_saved_consultation_with_a_hostile_or_malformed_value_is_refused_and_names_it(
    firm_services, tmp_path, field, value, message
):
    firm = make_firm(firm_services)
    data = closed_consultation(firm).to_dict()
    data["turns"][1]["score"] = {"p_better": 0.5, "raw": 5.0, "method": "judge", "note": ""}
    target = data
    for key in field[:-1]:
        target = target[key]
    target[field[-1]] = value
    upload = tmp_path / "saved.json"
    upload.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    out = shown(tab.resume_consultation(firm, None, str(upload)))
    assert out["state"] is None and "无法恢复" in out["message"] and message in out["message"]


def test_report_files_are_named_by_the_server_private_and_removed_when_the_visitor_leaves(
    firm_services, tmp_path
):
    firm = make_firm(firm_services)
    visitors, visit = Visitors(root=tmp_path / "sessions"), Visit("session-x", "127.0.0.1")
    state = closed_consultation(firm)
    ended = tab.end(firm, state, visitors, visit)
    paths = [Path(ended.download_md["value"]), Path(ended.download_docx["value"])]
    assert [p.name for p in paths] == ["LawLuo-consultation-report.md", "LawLuo-consultation-report.docx"]
    for path in paths:
        assert path.is_relative_to(tmp_path / "sessions") and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "sessions").stat().st_mode) == 0o700
    tab.end(firm, state, visitors, visit)  # a second download replaces the first
    assert not paths[0].exists() and len(list((tmp_path / "sessions").rglob("*.md"))) == 1
    visitors.forget(visit.session)
    assert not list((tmp_path / "sessions").rglob("*.md"))


def test_a_consultation_answers_only_the_browser_it_belongs_to(firm_services):
    firm = make_firm(firm_services)
    visitors = Visitors()
    mine, thief = Visit("hash-1", "1.1.1.1", owner="cookie-a"), Visit("hash-1", "2.2.2.2", owner="cookie-b")
    state = list(tab.ask(firm, None, QUESTION, True, 2, 2, visitors, mine))[-1].state
    assert state.owner == "cookie-a" and owner_of(state, mine) and not owner_of(state, thief)
    assert tab.consultation_json(state, thief) == {} and tab.consultation_json(state, mine)["id"] == state.id
    stolen = shown(tab.mark(firm, state, "1", "yes", thief))
    assert tab.FOREIGN_MESSAGE in stolen["message"] and QUESTION not in str(stolen["chat"])
    assert state.tree.node("1").mark == "unknown"
    assert "owner" not in state.to_dict()  # never written to a saved file


def test_a_consultation_in_memory_never_outgrows_what_a_saved_file_may_hold(firm_services, monkeypatch):
    from lawluo.firm import saved

    monkeypatch.setattr("lawluo.firm.firm.MAX_TURNS", 3)
    monkeypatch.setattr("lawluo.firm.firm.MAX_TRACE", 110)
    firm = make_firm(firm_services)
    state = firm.new()
    firm.receive(state, QUESTION)
    list(firm.answer(state))
    with pytest.raises(ValueError, match="the most one can hold"):
        firm.receive(state, "第二个问题")
    list(firm.clarify(state, 2, 2))
    for i in range(300):  # a visitor clicking marks without end
        firm.mark(state, "1", "yes" if i % 2 else "no")
    assert len(state.trace) <= 110 and state.trace[-1].summary == "1 = yes"
    assert saved.validate_saved(json.loads(state.to_json()))
