"""Honest degradation (issue 21, item 4) against the scripted OpenAI-compatible server, answering as a weak
real model did: a lawyer's answer that echoes LawLuo's prompt, an empty one, an English one to a Chinese
question is held back — the client reads why and the extract from the databases instead, the turn and the
trace record the reason, the boss does not score it, best-of-n and regenerate follow the same rule, and
``generate`` records it as a failure it retries — while a good answer is shown as before; and the tree says
where its elements came from when the clarifier fails for every node or for all but one."""

from __future__ import annotations

import itertools
import json
import threading

import pytest

from lawluo.agents.answer_check import HOLD_REASONS
from lawluo.agents.lawyer import REPLY_HELD_BACK, REPLY_NO_MODEL
from lawluo.config import load_settings
from lawluo.firm import Consultation, Firm
from lawluo.firm.batch import BatchGenerator
from lawluo.firm.saved import SavedConsultationError
from lawluo.llm import LanguageModels
from lawluo.ui import consult_render as cr
from lawluo.ui import consult_tab as tab

from .fakes.firm_models import LAWYER_ANSWER, FirmResponder
from .fakes.live_app import model_environ
from .fakes.openai_server import Emulation, FakeOpenAIServer

pytestmark = pytest.mark.slow  # 7 s of the suite on 2 cores (4 s or more: left out of the inner loop)

QUESTION = "我在公司干了两年一直没签劳动合同，现在老板把我辞退了，我能要求什么赔偿？"
ENGLISH = (
    "You may claim double wages for each month without a written contract, and compensation if the "
    "dismissal was unlawful. Keep your pay slips and apply for labour arbitration within one year."
)
#: Good answers as real systems wrote them (shown as before: no false positive).
GOOD = [
    LAWYER_ANSWER,
    "根据《劳动合同法》第八十二条，用人单位自用工之日起超过一个月不满一年未与劳动者订立书面劳动合同的，应当向劳动者"
    "每月支付二倍的工资。您工作已满两年，可以主张最多十一个月的二倍工资差额；若公司无正当理由辞退，还可以依据第八十七条"
    "要求支付赔偿金。建议尽快收集劳动关系证明，向当地劳动争议仲裁委员会申请仲裁。",
    "您好，您的情况属于用人单位未签订书面劳动合同且违法解除劳动关系。第一，可要求支付未签合同期间的双倍工资；"
    "第二，工作满一年未签合同的，视为已订立无固定期限劳动合同；第三，违法解除的，可要求按工作年限支付二倍经济补偿。"
    "注意仲裁时效为一年，请保留工资条、工作证、考勤等证据。",
]


def echo_of_the_prompt(messages: list[dict]) -> str:
    """What Gemma 3 270M wrote (issue 21): the turn's prompt back, 【客户的问题】（以下是客户的原话… first."""
    return messages[-1]["content"]


class WeakLawyer(FirmResponder):
    """The firm's scripted agents, but the lawyer answers with ``replies`` in turn (each a text or a
    function of the request's messages); the last one is repeated."""

    def __init__(self, *replies, **kwargs) -> None:
        super().__init__(**kwargs)
        self.replies = list(replies)
        self._turn = itertools.count()
        self._pick = threading.Lock()

    def __call__(self, body: dict) -> str:
        before = len(self.lawyer_requests)
        text = super().__call__(body)
        if len(self.lawyer_requests) == before:  # not the lawyer
            return text
        with self._pick:
            reply = self.replies[min(next(self._turn), len(self.replies) - 1)]
        return reply(body["messages"]) if callable(reply) else reply


def make_firm(firm_services, server, **environ) -> Firm:
    settings = load_settings(environ={**model_environ(server), **environ})
    return Firm.from_settings(settings, models=LanguageModels(settings.models), **firm_services)


@pytest.fixture
def server():
    with FakeOpenAIServer() as fake:
        yield fake


def asked(firm: Firm) -> Consultation:
    state = firm.new()
    firm.receive(state, QUESTION)
    return state


def lawyer_event(state: Consultation):
    return [e for e in state.trace if e.agent == "lawyer" and e.action == "answer"][-1]


@pytest.mark.parametrize(
    ("reply", "reason"),
    [(echo_of_the_prompt, "echo"), ("", "empty"), ("  \n ", "empty"), (ENGLISH, "no_chinese")],
    ids=["echo", "empty", "blank", "english"],
)
def test_a_weak_models_answer_is_held_back_and_the_extract_shown_with_the_reason(
    firm_services, server, reply, reason
):
    server.responder = WeakLawyer(reply)
    firm = make_firm(firm_services, server)
    views = [vars(v) for v in tab.ask(firm, None, QUESTION, False, 3, 3)]
    state = views[-1]["state"]
    turn = state.turns[-1]
    assert turn.held_back == reason
    assert turn.text.endswith(REPLY_HELD_BACK) and REPLY_NO_MODEL not in turn.text  # a model is configured
    assert "可能相关的法条" in turn.text and "【客户的问题】" not in turn.text and ENGLISH not in turn.text
    assert HOLD_REASONS[reason][0] in turn.note and HOLD_REASONS[reason][1] in turn.note
    assert turn.note.index(HOLD_REASONS[reason][0]) < turn.note.index(HOLD_REASONS[reason][1])  # 中文 first
    assert turn.score is None and server.responder.calls.get("boss", 0) == 0  # the boss scored nothing
    assert turn.citations and all(c["verdict"] == "verified" for c in turn.citations)  # the extract's
    event = lawyer_event(state)
    assert not event.ok and f"held back ({reason})" in event.summary
    # the chat: the streamed junk replaced by the reason, then the extract
    last = views[-1]["chat"][-1]["content"]
    assert last.startswith("⚠") and HOLD_REASONS[reason][0] in last and "可能相关的法条" in last
    assert "客户的原话" not in last and "double wages" not in last
    assert "回答完毕" not in views[-1]["message"]
    # saved and resumed with its reason
    again = Consultation.from_json(state.to_json())
    assert again.turns[-1].held_back == reason and again.turns[-1].text == turn.text


def test_an_answer_cut_at_max_tokens_is_held_back_with_the_calls_limit(firm_services):
    with FakeOpenAIServer(emulate=Emulation()) as server:  # cuts at the request's max_tokens, as servers do
        server.responder = FirmResponder()
        firm = make_firm(
            firm_services, server, LAWLUO_LAWYER_MAX_TOKENS="20", LAWLUO_LAWYER_CONTINUATIONS="0"
        )
        state = asked(firm)
        pieces = "".join(firm.answer(state))
    assert len(pieces) == 20 and LAWYER_ANSWER.startswith(pieces)  # one character per token in the fake
    turn = state.turns[-1]
    assert turn.held_back == "cut" and "max_tokens=20" in turn.note and turn.text.endswith(REPLY_HELD_BACK)
    assert "held back (cut): cut at max_tokens=20" in lawyer_event(state).summary


def finishing_lawyer(messages: list[dict]) -> str:
    """A lawyer that overruns its limit, then, given its text back with lawyer/finish, ends it in 10."""
    if messages[-1]["content"].startswith("你上面的回答写到一半被截断了"):
        return "依法主张二倍工资。"
    return LAWYER_ANSWER


@pytest.mark.parametrize("best_of", ["1", "2"], ids=["streamed", "best-of-2"])
def test_an_answer_cut_at_max_tokens_is_asked_to_finish_and_shown_whole(firm_services, best_of):
    with FakeOpenAIServer(emulate=Emulation()) as server:
        server.responder = WeakLawyer(finishing_lawyer)
        firm = make_firm(firm_services, server, LAWLUO_LAWYER_MAX_TOKENS="20", LAWLUO_BEST_OF=best_of)
        state = asked(firm)
        "".join(firm.answer(state))
    turn = state.turns[-1]
    assert not turn.held_back and not turn.note
    assert (
        turn.text == LAWYER_ANSWER[:20] + "依法主张二倍工资。"
    )  # the cut text, then its end: nothing repeated
    follow_ups = [m for m in server.responder.lawyer_requests if m[-1]["content"].startswith("你上面的回答")]
    assert len(follow_ups) == int(best_of)  # one continuation per draft
    sent = follow_ups[0]
    assert sent[-2] == {"role": "assistant", "content": LAWYER_ANSWER[:20]}
    assert sent[:-2] == server.responder.lawyer_requests[0]  # the same conversation, then the two turns


def test_a_cut_answer_going_round_in_circles_is_not_continued_but_held_back(firm_services):
    looping = "\n".join(
        f"{i}. 甲因擅自更改房屋承重结构，导致甲可以请求乙承担违约责任。" for i in range(1, 40)
    )
    with FakeOpenAIServer(emulate=Emulation()) as server:
        server.responder = WeakLawyer(looping)
        firm = make_firm(firm_services, server, LAWLUO_LAWYER_MAX_TOKENS="600")
        state = asked(firm)
        "".join(firm.answer(state))
    assert len(server.responder.lawyer_requests) == 1  # a loop is not worth finishing
    turn = state.turns[-1]
    assert turn.held_back == "loop" and "重复同样的句子" in turn.note and turn.text.endswith(REPLY_HELD_BACK)


def test_an_answer_still_cut_after_its_continuation_is_held_back(firm_services):
    with FakeOpenAIServer(emulate=Emulation()) as server:
        server.responder = FirmResponder()  # writes the same long answer whatever it is asked
        firm = make_firm(firm_services, server, LAWLUO_LAWYER_MAX_TOKENS="20")
        state = asked(firm)
        pieces = "".join(firm.answer(state))
    assert pieces == LAWYER_ANSWER[:20] * 2  # the default: one continuation, cut again
    assert len(server.responder.lawyer_requests) == 2
    assert state.turns[-1].held_back == "cut" and "max_tokens=20" in state.turns[-1].note


def test_a_clarifier_cut_at_max_tokens_is_not_called_bad_json(firm_services):
    with FakeOpenAIServer(emulate=Emulation()) as server:
        server.responder = FirmResponder()
        firm = make_firm(firm_services, server, LAWLUO_CLARIFIER_MAX_TOKENS="10")
        state = asked(firm)
        list(firm.clarify(state, 2, 2))
    assert state.tree.elements and {n.fallback for n in state.tree.elements} == {"cut"}
    (event,) = [e for e in state.trace if e.agent == "clarifier"]
    assert "(not from the model: cut at max_tokens " in event.summary and "bad JSON" not in event.summary


def test_an_echo_streamed_to_the_screen_is_replaced_when_the_answer_is_complete(firm_services, server):
    server.responder = WeakLawyer(echo_of_the_prompt)
    firm = make_firm(firm_services, server)
    state = asked(firm)
    pieces = "".join(firm.answer(state))
    assert pieces.startswith("【客户的问题】（以下是客户的原话")  # what went out while it streamed
    assert state.turns[-1].held_back == "echo" and "【客户的问题】" not in state.turns[-1].text
    assert "it began '【客户的问题】" in lawyer_event(state).summary  # the operator sees what it was


@pytest.mark.parametrize("good", GOOD, ids=["scripted", "cites-82", "plain"])
def test_a_good_answer_is_shown_as_before_and_scored(firm_services, server, good):
    server.responder = WeakLawyer(good)
    firm = make_firm(firm_services, server)
    state = asked(firm)
    assert "".join(firm.answer(state)) == good
    turn = state.turns[-1]
    assert turn.text == good and not turn.held_back and not turn.note
    assert turn.score is not None and server.responder.calls["boss"] == 1
    assert lawyer_event(state).ok


def test_best_of_n_keeps_only_drafts_that_pass_and_the_boss_sees_only_those(firm_services, server):
    server.responder = WeakLawyer(echo_of_the_prompt, GOOD[1], "")
    firm = make_firm(firm_services, server, LAWLUO_BEST_OF="3")
    state = asked(firm)
    assert "".join(firm.answer(state)) == GOOD[1]
    turn = state.turns[-1]
    assert turn.text == GOOD[1] and not turn.held_back and turn.score is not None
    assert server.responder.calls["boss"] == 1  # one draft scored, not three
    summary = lawyer_event(state).summary
    assert summary.startswith("1 drafts (2 held back:") and "echo 1" in summary and "empty 1" in summary


def test_best_of_n_with_every_draft_junk_is_held_back_unscored(firm_services, server):
    server.responder = WeakLawyer(ENGLISH, echo_of_the_prompt, ENGLISH)
    firm = make_firm(firm_services, server, LAWLUO_BEST_OF="3")
    state = asked(firm)
    "".join(firm.answer(state))
    turn = state.turns[-1]
    assert turn.held_back == "no_chinese"  # the most frequent reason
    assert turn.text.endswith(REPLY_HELD_BACK) and turn.score is None
    assert server.responder.calls.get("boss", 0) == 0
    event = lawyer_event(state)
    assert not event.ok and "all held back (no_chinese 2, echo 1)" in event.summary


def test_regenerate_follows_the_same_rule(firm_services, server):
    server.responder = WeakLawyer(GOOD[2], echo_of_the_prompt, GOOD[1])
    firm = make_firm(firm_services, server)
    state = asked(firm)
    "".join(firm.answer(state))
    assert not state.turns[-1].held_back
    "".join(firm.regenerate(state))
    assert state.turns[-1].held_back == "echo" and [t.role for t in state.turns] == ["client", "lawyer"]
    "".join(firm.regenerate(state))
    assert state.turns[-1].text == GOOD[1] and not state.turns[-1].held_back and not state.turns[-1].note


def test_a_saved_consultation_from_before_loads_and_a_forged_reason_is_refused(firm_services, server):
    server.responder = WeakLawyer("")
    firm = make_firm(firm_services, server)
    state = asked(firm)
    list(firm.clarify(state, 2, 2))
    "".join(firm.answer(state))
    data = state.to_dict()
    old = json.loads(json.dumps(data))
    for turn in old["turns"]:
        del turn["held_back"]
    for node in old["tree"]["nodes"]:
        del node["source"], node["fallback"]
    resumed = Consultation.from_dict(old)
    assert resumed.turns[-1].held_back == "" and all(n.source == "" for n in resumed.tree.nodes)
    assert resumed.tree.origins()[0] == {"model": len(resumed.tree.elements)}  # the tree's own word
    for forged in ({"held_back": "<script>"}, {"held_back": 1}):
        bad = json.loads(json.dumps(data))
        bad["turns"][-1].update(forged)
        with pytest.raises(SavedConsultationError, match="held_back"):
            Consultation.from_dict(bad)
    bad = json.loads(json.dumps(data))
    bad["tree"]["nodes"][1]["fallback"] = "whatever"
    with pytest.raises(SavedConsultationError, match="fallback"):
        Consultation.from_dict(bad)


# -- the tree ---------------------------------------------------------------------------------------


def clarifier_then_junk(good_calls: int):
    """The clarifier's replies: well-formed elements for the first ``good_calls`` calls, then junk."""
    calls, lock = itertools.count(1), threading.Lock()

    def reply(messages):
        with lock:
            n = next(calls)
        if n > good_calls or "提出 " not in messages[-1]["content"]:  # junk, and junk again when corrected
            return "好的，我来列出要素：1. 是否签了合同 2. 是否被辞退"  # no JSON, as a weak model answers
        k = int(messages[-1]["content"].split("提出 ")[1].split(" 个")[0])
        elements = [{"statement": f"模型的要素{n}-{i}是否成立？", "case_ids": []} for i in range(1, k + 1)]
        return json.dumps({"elements": elements}, ensure_ascii=False)

    return reply


class Clarifier(FirmResponder):
    def __init__(self, reply) -> None:
        super().__init__()
        self.reply = reply

    def __call__(self, body: dict) -> str:
        if "澄清" in body["messages"][0]["content"].splitlines()[0]:  # FirmResponder's test of the agent
            return self.reply(body["messages"])
        return super().__call__(body)


def built_tree(firm_services, server, good_calls: int) -> Consultation:
    server.responder = Clarifier(clarifier_then_junk(good_calls))
    firm = make_firm(firm_services, server)
    state = asked(firm)
    list(firm.clarify(state, 3, 2))
    return state


def test_a_clarifier_that_always_fails_is_not_called_the_source(firm_services, server):
    state = built_tree(firm_services, server, good_calls=0)
    tree = state.tree
    assert tree.elements and tree.failures == 3  # the root and its two children: three calls, all junk
    assert {n.source for n in tree.elements} <= {"material", "cases"}
    assert {n.fallback for n in tree.elements} == {"bad_json"}
    (event,) = [e for e in state.trace if e.agent == "clarifier"]
    assert "clarifier model" not in event.summary.split("(")[0]
    assert f"(not from the model: bad JSON {len(tree.elements)})" in event.summary
    assert "3 of 3 model call(s) failed" in event.summary and not event.ok
    html = cr.tree_html(tree)
    assert "这些问题来自澄清模型" not in html
    assert html.count('data-fallback="bad_json"') == len(tree.elements)
    assert "澄清模型的输出不是有效的 JSON" in html
    assert all("澄清模型的输出不是有效的 JSON" in note for note in tree.notes if "部分要素" in note)


def test_a_clarifier_that_succeeds_for_one_node_only_is_counted_per_source(firm_services, server):
    state = built_tree(firm_services, server, good_calls=1)  # the root's call only
    tree = state.tree
    assert [n.source for n in tree.level(1)] == ["model", "model"]
    assert all(n.fallback == "" and n.statement.startswith("模型的要素1-") for n in tree.level(1))
    assert tree.level(2) and all(n.source != "model" and n.fallback == "bad_json" for n in tree.level(2))
    sources, fallbacks = tree.origins()
    assert sources["model"] == 2 and sum(sources.values()) == len(tree.elements)
    assert fallbacks == {"bad_json": len(tree.level(2))}
    (event,) = [e for e in state.trace if e.agent == "clarifier"]
    assert f"{len(tree.elements)} elements: 2 from clarifier model, " in event.summary
    assert "2 of 3 model call(s) failed" in event.summary
    html = cr.tree_html(tree)
    assert "澄清模型 2 条" in html and html.count("data-fallback=") == len(tree.level(2))


def one_element_then_a_repeat(messages):
    """A weak clarifier: one element for the first level, then only that same element again."""
    return json.dumps(
        {"elements": [{"statement": "是否签了书面劳动合同？", "case_ids": []}]}, ensure_ascii=False
    )


def test_a_clarifier_that_proposes_fewer_than_k_is_topped_up_and_each_top_up_says_why(firm_services, server):
    server.responder = Clarifier(one_element_then_a_repeat)
    firm = make_firm(firm_services, server)
    state = asked(firm)
    list(firm.clarify(state, 3, 2))
    tree = state.tree
    first = tree.level(1)
    assert len(first) == 2 and first[0].source == "model" and first[0].statement == "是否签了书面劳动合同？"
    assert first[1].source != "model" and first[1].fallback == "too_few"
    # below, the model only repeats the first level's element: every child is a labelled top-up
    assert tree.level(2) and all(n.source != "model" and n.fallback == "too_few" for n in tree.level(2))
    assert tree.failures == 0  # too few is not a failed call
    html = cr.tree_html(tree)
    assert html.count('data-fallback="too_few"') == len(tree.elements) - 1


def test_junk_elements_of_a_weak_clarifier_are_never_shown(firm_services, server):
    junk = ["……", "yes", "我在公司干了两年一直没签劳动合同，现在老板把我辞退了，我能要求什么赔偿？"]
    server.responder = Clarifier(
        lambda messages: json.dumps({"elements": [{"statement": s} for s in junk]}, ensure_ascii=False)
    )
    firm = make_firm(firm_services, server)
    state = asked(firm)
    list(firm.clarify(state, 3, 3))
    statements = [n.statement for n in state.tree.elements]
    assert statements and not set(junk) & set(statements)
    # turned away by the element check (too short, the question said back): the top-ups say so
    assert all(n.source != "model" and n.fallback == "rejected" for n in state.tree.elements)


def test_a_tree_without_a_model_says_so_per_element_without_failure_tags(firm_services):
    settings = load_settings(environ={})
    firm = Firm.from_settings(settings, models=LanguageModels(settings.models), **firm_services)
    state = asked(firm)
    list(firm.clarify(state, 2, 3))
    tree = state.tree
    assert {n.fallback for n in tree.elements} == {"no_model"} and tree.failures == 0
    (event,) = [e for e in state.trace if e.agent == "clarifier"]
    assert event.ok and "no clarifier model" in event.summary and "clarifier model," not in event.summary
    assert "data-fallback" not in cr.tree_html(tree)  # nothing failed: the header says it all


# -- generate ---------------------------------------------------------------------------------------

QUESTIONS = [
    ("a", "公司一直没和我签劳动合同，现在把我辞退了怎么办？"),
    ("b", "离婚时孩子的抚养权一般归谁？"),
    ("c", "醉酒驾驶会被判刑吗？"),
]


def test_generate_records_held_back_answers_as_failures_and_retries_exactly_them(
    firm_services, server, tmp_path
):
    def by_question(messages):
        question = messages[-1]["content"]
        if "抚养权" in question:
            return echo_of_the_prompt(messages)
        return ENGLISH if "醉酒" in question else GOOD[0]

    server.responder = WeakLawyer(by_question)
    firm = make_firm(firm_services, server)
    out = tmp_path / "answers.jsonl"
    report = BatchGenerator(firm, "LawLuo", concurrency=1).run(QUESTIONS, out)
    assert report.written == 1 and report.held_back == {"echo": 1, "no_chinese": 1}
    failed = dict(report.failed)
    assert set(failed) == {"b", "c"}
    assert (
        failed["b"].startswith("HeldBack: held back (echo): ") and "6-grams are in the prompt" in failed["b"]
    )
    assert failed["c"].startswith("HeldBack: held back (no_chinese): ")
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [(r["id"], r["answer"]) for r in rows] == [("a", GOOD[0])]  # nothing written for b and c

    server.responder = WeakLawyer(GOOD[1])  # a better model: the same command finishes the run
    again = BatchGenerator(firm, "LawLuo", concurrency=1).run(QUESTIONS, out)
    assert (again.skipped, again.written, again.failed, dict(again.held_back)) == (1, 2, [], {})
    assert server.responder.lawyer_requests and len(server.responder.lawyer_requests) == 2  # b and c only


def test_the_baseline_is_checked_the_same_way(firm_services, server, tmp_path):
    server.responder = WeakLawyer(lambda messages: messages[-1]["content"] * 2)  # the question, twice
    firm = make_firm(firm_services, server)
    report = BatchGenerator(firm, "base", baseline=True).run(QUESTIONS[:1], tmp_path / "b.jsonl")
    assert report.written == 0 and report.held_back == {"echo": 1}
