"""Behaviour follows facts the code records, never the wording of a message (rewording changes nothing)."""

from __future__ import annotations

import pytest

from lawluo.agents.secretary import ReportInput
from lawluo.config import load_settings
from lawluo.firm import Firm, TraceEvent
from lawluo.llm import LanguageModels
from lawluo.tolc import builder as tolc_builder
from lawluo.ui import consult_tab as tab

from .fakes.firm_models import FirmResponder
from .fakes.live_app import model_environ
from .fakes.openai_server import FakeOpenAIServer

QUESTION = "我在公司干了两年一直没签劳动合同，现在老板把我辞退了，我能要求什么赔偿？"


def make_firm(firm_services, server=None) -> Firm:
    settings = load_settings(environ=model_environ(server) if server else {})
    return Firm.from_settings(settings, models=LanguageModels(settings.models), **firm_services)


@pytest.mark.parametrize("wording", ["部分要素由相似案例生成", "the clarifier's call did not work out"])
def test_a_tree_step_fails_when_a_model_call_failed_whatever_its_note_says(
    firm_services, monkeypatch, wording
):
    with FakeOpenAIServer() as server:
        server.responder = FirmResponder(clarifier_reply="这不是 JSON")
        firm = make_firm(firm_services, server)
        state = firm.new()
        firm.receive(state, QUESTION)
        original = tolc_builder.TreeBuilder._expand

        def reworded(self, tree, node_id, *scope):
            children, note = original(self, tree, node_id, *scope)
            return children, (wording if note else None)

        monkeypatch.setattr(tolc_builder.TreeBuilder, "_expand", reworded)
        list(firm.clarify(state, 2, 2))
    (event,) = [e for e in state.trace if e.agent == "clarifier"]
    assert state.tree.failures == 1 and event.ok is False and state.tree.notes == [wording]


def test_a_tree_without_model_failures_is_a_success_even_if_a_note_mentions_failure(firm_services):
    firm = make_firm(firm_services)  # no model: elements from cases, a note, no failed call
    state = firm.new()
    firm.receive(state, QUESTION)
    list(firm.clarify(state, 2, 2))
    state.tree.notes.append("失败 failure")  # wording has no say
    (event,) = [e for e in state.trace if e.agent == "clarifier"]
    assert state.tree.failures == 0 and event.ok is True


def test_the_routing_history_lists_steps_by_kind_not_by_summary(firm_services):
    firm = make_firm(firm_services)
    state = firm.new()
    firm.receive(state, QUESTION)
    state.trace.append(TraceEvent("receptionist", "route", "moved elsewhere", 1.0, kind="reroute"))
    state.trace.append(TraceEvent("receptionist", "route", "re-routed (only words)", 1.0))
    routing = tab.view(firm, state).routing
    assert "moved elsewhere" in routing and "only words" not in routing
    firm.set_domain(state, "contract")
    assert state.trace[-1].kind == "override" and "合同纠纷" in tab.view(firm, state).routing


def test_the_secretary_gets_citations_with_verdict_codes_and_refuses_unknown_codes():
    fields = dict(client="张先生", domain_name="劳动纠纷", turns=[("client", "问")], confirmed=[], denied=[])
    fields.update(number="LL-20240601-ABC123", date="2024年06月01日")
    ok = ReportInput(**fields, statutes=[["《中华人民共和国劳动合同法》第八十二条", "verified"]])
    assert ok.statutes == [("《中华人民共和国劳动合同法》第八十二条", "verified")]
    with pytest.raises(ValueError, match="unknown verdict"):
        ReportInput(**fields, statutes=[("《劳动合同法》第八十二条", "核实无误")])
