"""JSON from models: tolerant parsing, schema validation, one corrective retry, then a clear error."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, TypeAdapter

from lawluo.llm import StructuredOutputError
from lawluo.llm.answer import ChatAnswer, Finish
from lawluo.llm.errors import AnswerCut
from lawluo.llm.structured import JSONParseError, parse_json

from .fakes.scripted_backend import ScriptedBackend


class Element(BaseModel):
    question: str
    children: list[Element] = []


@pytest.mark.parametrize(
    ("answer", "value"),
    [
        ('{"a": 1}', {"a": 1}),
        ('```json\n{"a": 1}\n```', {"a": 1}),
        ("```\n[1, 2]\n```\n以上是结果。", [1, 2]),
        ('好的，以下是要素：{"a": "x"} 希望对您有帮助！', {"a": "x"}),
        (
            "{“question”：“是否签订书面劳动合同？”，“children”：[]}",
            {"question": "是否签订书面劳动合同？", "children": []},
        ),
        ('{"q": "根据“劳动合同法”第十条", "n": [1, 2,],}', {"q": "根据“劳动合同法”第十条", "n": [1, 2]}),
        ('{"text": "第一行\n第二行"}', {"text": "第一行\n第二行"}),
        ('答案 [{"q": 1}] 和 {"ignored": true}', [{"q": 1}]),
    ],
    ids=[
        "plain",
        "fenced",
        "fence-then-prose",
        "prose-around",
        "chinese-quotes",
        "quotes-inside-ascii-string",
        "raw-newline",
        "first-value-wins",
    ],
)
def test_parse_json_recovers_what_models_commonly_write(answer, value):
    assert parse_json(answer) == value


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ("", "the answer is empty"),
        ("我无法回答这个问题。", "contains no JSON"),
        ('{"a": [1, 2', "invalid JSON"),
    ],
)
def test_parse_json_says_why_it_failed(answer, message):
    with pytest.raises(JSONParseError, match=message):
        parse_json(answer)


def test_chat_json_returns_validated_objects_and_tells_the_model_the_schema():
    model = ScriptedBackend('```json\n[{"question": "是否已经签订劳动合同？", "children": []}]\n```')
    elements = model.chat_json([{"role": "user", "content": "列出法律要素"}], list[Element])
    assert elements == [Element(question="是否已经签订劳动合同？")]
    ((messages, gen),) = model.calls
    assert gen == {
        "json": True,
        "json_schema": TypeAdapter(list[Element]).json_schema(),
    }  # for response_format
    assert messages[-1]["content"].startswith("列出法律要素")
    assert '"question"' in messages[-1]["content"]  # the JSON schema is in the prompt


def test_chat_json_retries_once_with_the_error_and_the_bad_answer():
    model = ScriptedBackend('{"question": 3}', '{"question": "是否存在书面合同？"}')
    element = model.chat_json([{"role": "user", "content": "q"}], Element)
    assert element.question == "是否存在书面合同？"
    retry_messages, _ = model.calls[1]
    assert retry_messages[-2] == {"role": "assistant", "content": '{"question": 3}'}
    assert "question: Input should be a valid string" in retry_messages[-1]["content"]


def test_chat_json_gives_up_after_the_retry_keeping_the_raw_answer():
    model = ScriptedBackend("对不起，我不能回答。", "仍然不是 JSON")
    with pytest.raises(StructuredOutputError) as caught:
        model.chat_json([{"role": "user", "content": "q"}], Element)
    assert "scripted test model did not return valid JSON for Element after 2 attempt(s)" in str(caught.value)
    assert "contains no JSON" in str(caught.value)
    assert caught.value.raw == "仍然不是 JSON"
    assert len(model.calls) == 2


def test_chat_json_needs_a_final_user_message():
    with pytest.raises(ValueError, match="end with a user message"):
        ScriptedBackend().chat_json([{"role": "assistant", "content": "hi"}], Element)


def test_a_cut_answer_is_reported_as_cut_at_the_calls_max_tokens_and_not_retried():
    cut = ChatAnswer('{"question": "是否签订了书面劳动合同，以及', Finish("length", 32))
    model = ScriptedBackend(cut, '{"question": "不会被用到"}')
    with pytest.raises(
        AnswerCut, match=r"cut at max_tokens=32 .*Raise `max_tokens` for the test role"
    ) as caught:
        model.chat_json([{"role": "user", "content": "q"}], Element, max_tokens=32)
    assert "invalid JSON" not in str(caught.value)
    assert isinstance(caught.value, StructuredOutputError)  # callers that catch those keep working
    assert caught.value.max_tokens == 32 and caught.value.raw == cut
    assert len(model.calls) == 1  # the corrective retry would be cut the same way


def test_a_cut_answer_whose_json_was_already_complete_is_used():
    model = ScriptedBackend(ChatAnswer('{"question": "是否存在书面合同？"} 另外，根据', Finish("length", 64)))
    assert model.chat_json([{"role": "user", "content": "q"}], Element).question == "是否存在书面合同？"


def test_a_cut_answer_is_not_salvaged_from_a_value_inside_the_broken_one():
    cut = ChatAnswer('{"ids": [3, 1, 2], "reason": "按相关程度', Finish("length", 16))
    with pytest.raises(AnswerCut, match="cut at max_tokens=16"):
        ScriptedBackend(cut).chat_json([{"role": "user", "content": "q"}], list[int])
    assert parse_json(cut) == [3, 1, 2]  # what salvaging would have made of it
