"""An answer cut at max_tokens is asked to finish (issue 41 item 4): the model gets its own text back as the
assistant's turn and the follow-up as the user's, the pieces make one answer, and how the last call ended is
how the answer ended — so one still cut is reported cut, and one that ended by itself costs no second call."""

from __future__ import annotations

import pytest

from lawluo.llm import ChatAnswer, Finish, LLMError, cut_at
from lawluo.llm.continuation import chat_to_the_end, stream_to_the_end

from .fakes.scripted_backend import ScriptedBackend

QUESTION = [{"role": "system", "content": "你是律师"}, {"role": "user", "content": "欠薪怎么办？"}]
FOLLOW_UP = "请接着写完。"


def cut(text: str) -> ChatAnswer:
    return ChatAnswer(text, Finish("length", 8))


def ended(text: str) -> ChatAnswer:
    return ChatAnswer(text, Finish("stop", 8))


@pytest.mark.parametrize("how", ["chat", "stream"])
def test_a_cut_answer_is_continued_and_the_pieces_make_one_answer(how):
    model = ScriptedBackend(cut("可以申请劳动"), ended("仲裁。"))
    if how == "chat":
        answer = chat_to_the_end(model, QUESTION, FOLLOW_UP)
        text = str(answer)
    else:
        answer = stream_to_the_end(model, QUESTION, FOLLOW_UP)
        text = "".join(answer)
    assert text == "可以申请劳动仲裁。" and cut_at(answer) is None
    (first, _), (second, _) = model.calls
    assert first == QUESTION
    assert second == [
        *QUESTION,
        {"role": "assistant", "content": "可以申请劳动"},
        {"role": "user", "content": FOLLOW_UP},
    ]


@pytest.mark.parametrize("how", ["chat", "stream"])
def test_an_answer_cut_after_every_continuation_is_reported_cut(how):
    model = ScriptedBackend(cut("一"), cut("二"), cut("三"), cut("四"))
    if how == "chat":
        answer = chat_to_the_end(model, QUESTION, FOLLOW_UP, times=2)
        text = str(answer)
    else:
        answer = stream_to_the_end(model, QUESTION, FOLLOW_UP, times=2)
        text = "".join(answer)
    assert text == "一二三" and cut_at(answer) == 8 and len(model.calls) == 3
    assert model.calls[2][0][-2] == {"role": "assistant", "content": "一二"}  # all the text so far


@pytest.mark.parametrize(
    "first",
    [ended("可以申请劳动仲裁。"), "可以申请劳动仲裁。", cut("   ")],
    ids=["ended by itself", "a backend that does not say", "cut with no text"],
)
def test_no_second_call_unless_a_written_answer_was_cut(first):
    model = ScriptedBackend(first)
    assert str(chat_to_the_end(model, QUESTION, FOLLOW_UP)) == str(first)
    streamed = ScriptedBackend(first)
    assert "".join(stream_to_the_end(streamed, QUESTION, FOLLOW_UP)) == str(first)
    assert len(model.calls) == len(streamed.calls) == 1


def test_no_continuation_when_told_none():
    model = ScriptedBackend(cut("可以申请"))
    answer = stream_to_the_end(model, QUESTION, FOLLOW_UP, times=0)
    assert "".join(answer) == "可以申请" and cut_at(answer) == 8 and len(model.calls) == 1


def test_a_failing_continuation_raises_after_the_text_already_given():
    model = ScriptedBackend(cut("可以申请"), LLMError("the server went away"))
    pieces = stream_to_the_end(model, QUESTION, FOLLOW_UP)
    got = []
    with pytest.raises(LLMError, match="went away"):
        for piece in pieces:
            got.append(piece)
    assert "".join(got) == "可以申请"  # what was streamed stays the caller's


def test_closing_the_stream_early_makes_no_further_call():
    model = ScriptedBackend(cut("可以申请劳动"), ended("仲裁。"))
    pieces = stream_to_the_end(model, QUESTION, FOLLOW_UP)
    assert next(pieces) == "可"
    pieces.close()
    assert len(model.calls) == 1 and list(pieces) == []


@pytest.mark.parametrize("how", ["chat", "stream"])
def test_an_answer_the_caller_finds_not_worth_finishing_is_left_cut(how):
    model = ScriptedBackend(cut("一一一一"), ended("完。"))
    looping = lambda text: "一一" not in text  # noqa: E731
    if how == "chat":
        answer = chat_to_the_end(model, QUESTION, FOLLOW_UP, worth=looping)
    else:
        answer = stream_to_the_end(model, QUESTION, FOLLOW_UP, worth=looping)
        "".join(answer)
    assert cut_at(answer) == 8 and len(model.calls) == 1
