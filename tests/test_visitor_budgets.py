"""Budgets per client address over HTTP: model calls per minute (issue 38: one address made 421 model calls
in 60 s, about 25,000 an hour on the operator's bill) and resumed consultations per hour (each may hold a
few MB of memory for the session's life). The app runs on loopback with every role on the fake server."""

from __future__ import annotations

import json

import pytest

from lawluo.llm import Deadline
from lawluo.llm.budget import CallsSpent, spend_call
from lawluo.ui import consult_tab as tab
from lawluo.ui.visitors import AddressAllowance, Windows

from .fakes.live_app import live_app

pytestmark = pytest.mark.slow  # 5 s of the suite on 2 cores (4 s or more: left out of the inner loop)

QUESTION = "公司一直没和我签劳动合同，干了两年被辞退了，能要求什么赔偿？"


def client_for(app, address: str):
    from gradio_client import Client

    return Client(
        app.url,
        verbose=False,
        download_files=False,
        analytics_enabled=False,
        headers={"X-Forwarded-For": address},
    )


@pytest.fixture(scope="module")
def app():
    with live_app(LAWLUO_VISITOR_CALLS_PER_MINUTE="6", LAWLUO_RESUMES_PER_HOUR="2") as running:
        yield running


def test_an_address_that_spent_its_model_calls_gets_a_plain_message_and_the_model_no_more_calls(app):
    visitor = client_for(app, "198.51.100.20")
    before = sum(app.responder.calls.values())
    messages = []
    for _ in range(4):  # each consultation: a tree of 1 call (H=2), an answer, a boss score…
        visitor.predict(QUESTION, True, 2, 2, api_name="/ask")
        messages.append(visitor.predict(api_name="/answer")[-1])
        visitor.predict(api_name="/new_consultation")
    made = sum(app.responder.calls.values()) - before
    assert made <= 6, app.responder.calls
    assert any("额度已用完" in m for m in messages), messages
    # another address still has its own budget
    other = client_for(app, "198.51.100.21")
    other.predict(QUESTION, True, 2, 2, api_name="/ask")
    answered = other.predict(api_name="/consultation")
    assert answered["tree"] is not None and "额度" not in json.dumps(answered, ensure_ascii=False)


def test_an_address_resumes_at_most_its_share_of_consultations(app, tmp_path):
    from gradio_client import handle_file

    owner = client_for(app, "198.51.100.30")
    owner.predict(QUESTION, False, 2, 2, api_name="/ask")
    saved = tmp_path / "saved.json"
    saved.write_text(
        json.dumps(owner.predict(api_name="/consultation"), ensure_ascii=False), encoding="utf-8"
    )
    replies = [
        client_for(app, "198.51.100.31").predict(handle_file(str(saved)), api_name="/resume_consultation")[-1]
        for _ in range(3)
    ]
    assert "已恢复咨询" in replies[0] and "已恢复咨询" in replies[1]
    assert tab.RESUME_REFUSED in replies[2] and "每小时最多恢复 2 次" in replies[2]
    resumed_elsewhere = client_for(app, "198.51.100.32").predict(
        handle_file(str(saved)), api_name="/resume_consultation"
    )[-1]
    assert "已恢复咨询" in resumed_elsewhere


def test_every_model_call_inside_a_step_counts_against_its_address():
    now = [0.0]
    calls = Windows({60: 2, 3600: 5}, clock=lambda: now[0])
    allowance = AddressAllowance(calls, "203.0.113.1")
    with Deadline.after(30, "a step", allowance=allowance).active():
        spend_call()
        spend_call()
        with pytest.raises(CallsSpent, match="每分钟最多调用模型 2 次"):
            spend_call()
    spend_call()  # outside a visitor's step (the CLI, batch runs): no budget
    with Deadline.after(30, "a step", allowance=allowance).active():
        now[0] = 61.0
        spend_call()
        spend_call()
        now[0] = 122.0
        spend_call()  # the fifth call within the hour
        with pytest.raises(CallsSpent, match="每小时最多调用模型 5 次"):
            spend_call()


def test_resumed_consultations_of_all_visitors_hold_at_most_their_memory_budget():
    """Issue 38: a 2 MB resume costs ~5 MB for the session's hour; 2,000 sessions could hold ~10 GB."""
    from lawluo.ui.visitors import RESUMED_FULL, Visit, VisitorLimits, Visitors

    visitors = Visitors(VisitorLimits(resumes_per_hour=100, resumed_memory_mb=10))
    two_mb = 2 * 1024 * 1024
    first = Visit("s1", "203.0.113.1", "o1")
    assert visitors.resume(first, two_mb) is None  # 6 MB held
    assert visitors.resume(Visit("s2", "203.0.113.2", "o2"), two_mb).key == RESUMED_FULL
    assert visitors.resume(first, two_mb) is None  # the same session resuming again replaces its own
    visitors.forget("s1")  # its visitor left or started over: the memory is free again
    assert visitors.resume(Visit("s2", "203.0.113.2", "o2"), two_mb) is None
