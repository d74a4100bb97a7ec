"""The firm decides, the page shows (issue 44): what each control may do (``Firm.allowed``), what a choice of
domain does (``Firm.change_domain``), where a tree's elements were drawn from (``Tree.drawn_from``) and what a
tree costs (``tolc.tree.tree_calls``)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from lawluo.config import load_settings
from lawluo.firm import Allowed, Consultation, Firm, Status
from lawluo.llm import LanguageModels
from lawluo.tolc.tree import Tree, tree_calls

QUESTION = "我在公司干了两年一直没签劳动合同，现在被辞退了怎么办？"
#: Routed to 交通事故 (unsure), its tree drawn from 劳动纠纷: soft routing (tests/test_consult_tab.py).
RIDER = "我走在路上被一个骑电动车的外卖员撞倒了，他说是平台的事，平台说他不是员工。"
UI = Path(__file__).resolve().parents[1] / "lawluo" / "ui"


@pytest.fixture
def firm(firm_services) -> Firm:
    settings = load_settings(environ={})
    return Firm.from_settings(settings, models=LanguageModels(settings.models), **firm_services)


def test_what_each_control_may_do_follows_the_consultation(firm):
    assert firm.allowed(None) == Allowed(ask=True, change_domain=True)
    state = firm.new()
    firm.receive(state, QUESTION)
    asked = firm.allowed(state)
    assert asked.ask and asked.answer and asked.end and not asked.mark and not asked.regenerate
    list(firm.clarify(state, 2, 2))
    clarifying = firm.allowed(state)
    assert clarifying.mark and clarifying.answer and clarifying.change_domain and not clarifying.closed
    list(firm.answer(state))
    answered = firm.allowed(state)
    assert answered.regenerate and not answered.mark and not answered.answer
    firm.close(state)
    closed = firm.allowed(state)
    assert closed.closed and not (closed.ask or closed.mark or closed.change_domain or closed.end)


def test_a_tree_drawn_from_another_domain_says_which_and_choosing_the_routed_domain_rebuilds_it(firm):
    state = firm.new()
    firm.receive(state, RIDER)
    list(firm.clarify(state, 2, 3))
    assert state.domain == "traffic" and state.tree.drawn_from == "labor"
    assert firm.rebuilds(state, "traffic") and not firm.rebuilds(state, None)
    list(firm.change_domain(state, "traffic"))
    assert state.tree.drawn_from == "" and state.domain == "traffic"
    assert not firm.rebuilds(state, "traffic") and firm.change_domain(state, "traffic") is None
    saved = Consultation.from_json(state.to_json())
    assert saved.tree.drawn_from == ""


def test_after_the_answer_a_choice_of_domain_is_set_at_once_and_nothing_is_rebuilt(firm):
    state = firm.new()
    firm.receive(state, QUESTION)
    list(firm.clarify(state, 2, 2))
    list(firm.answer(state))
    tree = state.tree
    assert not firm.rebuilds(state, "contract")
    assert list(firm.change_domain(state, "contract")) == [] and state.domain == "contract"
    assert state.tree is tree and state.status is Status.ANSWERED


def test_a_full_trees_calls_are_what_the_formula_says():
    tree = Tree.start("问题", 3, 2)
    for parent in ("0", "0", "1", "1", "2", "2"):
        tree.add_child(parent, f"要素{len(tree.nodes)}？", [])
    assert tree.calls == tree_calls(3, 2) == 3


def test_the_consultation_tab_reads_no_status_and_no_firm_internals():
    sources = [UI / "consult_tab.py", UI / "consult_render.py", *sorted((UI / "consult").glob("*.py"))]
    for path in sources:
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"\bStatus\b", text), path
        assert not re.search(r"firm\.(receptionist|case_searcher|tree_builder|material)\b", text), path
