"""The consultation is a state machine: each step of the firm accepts only some statuses and says so."""

from __future__ import annotations

import json

import pytest

from lawluo.config import load_settings
from lawluo.firm import Consultation, ConsultationClosed, Firm, Status, StepNotAllowed
from lawluo.llm import LanguageModels

pytestmark = pytest.mark.slow  # 7 s of the suite on 2 cores (4 s or more: left out of the inner loop)

QUESTION = "我在公司干了两年一直没签劳动合同，现在老板把我辞退了，我能要求什么赔偿？"


@pytest.fixture
def firm(firm_services) -> Firm:
    settings = load_settings(environ={})
    return Firm.from_settings(settings, models=LanguageModels(settings.models), **firm_services)


def test_the_statuses_follow_the_sop(firm):
    state = firm.new()
    assert state.status is Status.NEW
    firm.receive(state, QUESTION)
    list(firm.clarify(state, 2, 2))
    assert state.status is Status.CLARIFYING
    firm.mark(state, "1", "yes")
    list(firm.answer(state))
    assert state.status is Status.ANSWERED
    firm.close(state)
    assert state.status is Status.CLOSED
    assert json.loads(state.to_json())["status"] == "closed"  # saved as its value
    assert Consultation.from_json(state.to_json()).status is Status.CLOSED


def test_marks_after_the_answer_and_regenerating_before_one_are_refused(firm):
    state = firm.new()
    firm.receive(state, QUESTION)
    with pytest.raises(StepNotAllowed, match="regenerat"):
        list(firm.regenerate(state))
    list(firm.clarify(state, 2, 2))
    list(firm.answer(state))
    with pytest.raises(StepNotAllowed, match="ask a new question"):
        firm.mark(state, "1", "no")
    assert state.tree.node("1").mark == "unknown"


@pytest.mark.parametrize(
    "step",
    [
        lambda f, s: f.receive(s, "再问一个"),
        lambda f, s: list(f.clarify(s)),
        lambda f, s: f.mark(s, "1", "yes"),
        lambda f, s: list(f.answer(s)),
        lambda f, s: list(f.regenerate(s)),
        lambda f, s: f.set_domain(s, "contract"),
        lambda f, s: f.close(s),
    ],
    ids=["receive", "clarify", "mark", "answer", "regenerate", "set_domain", "close"],
)
def test_a_closed_consultation_refuses_every_step_and_keeps_its_report(firm, step):
    state = firm.new()
    firm.receive(state, QUESTION)
    list(firm.clarify(state, 2, 2))
    list(firm.answer(state))
    report = firm.close(state)
    before = state.to_json()
    with pytest.raises(ConsultationClosed):
        step(firm, state)
    assert state.to_json() == before and state.report == report


HANDLERS = {  # each handler of the tab, and the firm's step it calls
    "receive": lambda tab, f, s: list(tab.ask(f, s, "再问一个", False, 2, 2))[-1],
    "answer": lambda tab, f, s: list(tab.answer(f, s))[-1],
    "regenerate": lambda tab, f, s: list(tab.regenerate(f, s))[-1],
    "mark": lambda tab, f, s: tab.mark(f, s, "1", "yes"),
    "set_domain": lambda tab, f, s: list(tab.set_domain(f, s, "contract"))[-1],
    "close": lambda tab, f, s: tab.end(f, s),
}


@pytest.mark.parametrize(
    ("method", "error"),
    [(m, StepNotAllowed("the firm says no")) for m in HANDLERS]
    # ending a closed consultation offers its report again (tests/test_consult_limits.py)
    + [(m, ConsultationClosed("closed, says the firm")) for m in HANDLERS if m != "close"],
)
def test_the_tab_shows_whatever_the_firm_refuses_and_changes_nothing(firm, monkeypatch, method, error):
    from lawluo.ui import consult_tab as tab

    state = firm.new()
    firm.receive(state, QUESTION)
    list(firm.clarify(state, 2, 2))  # a state every step accepts: the tab itself refuses nothing

    def refuse(*args, **kwargs):
        raise error

    monkeypatch.setattr(firm, method, refuse)
    before = state.to_json()
    shown = HANDLERS[method](tab, firm, state)
    expected = tab.CLOSED_MESSAGE if isinstance(error, ConsultationClosed) else "the firm says no"
    assert expected in shown.message and "出错了" not in shown.message
    assert state.to_json() == before
