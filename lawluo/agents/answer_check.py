"""Is a model's answer fit to be shown as advice? The check every lawyer answer passes before a client sees
it (issue 21, item 4: a weak model's empty or junk output is held back and labelled, never shown as advice).

An answer is **held back** (:func:`check_answer` returns a :class:`Held`, else ``None``) when it is, in this
order:

- ``empty``: nothing but whitespace;
- ``echo``: it repeats the prompt LawLuo sent rather than answering it. Measured as *character n-gram
  containment* (Broder 1997, "On the resemblance and containment of documents", §2) of the answer in the
  prompt: of the answer's distinct :data:`ECHO_NGRAM`-character substrings (whitespace removed), leaving
  out those of the text an answer may quote or repeat (the retrieved statutes, the lawyer's earlier
  answers), the share that occurs in the prompt — its role prompt, section headers (【客户的问题】…),
  instructions, the client's questions and facts. Held at :data:`ECHO_RATIO` or more. An answer with fewer
  than :data:`ECHO_MIN_NGRAMS` such n-grams is never called an echo (a short restatement of the question,
  or an answer that only quotes the statutes, is not an echo of the prompt);
- ``repeat``: it says again what the lawyer already answered in this consultation — at least
  :data:`REPEAT_RATIO` of its distinct n-grams (the statutes it may quote left out) are in one earlier
  answer (a small model's second turn was seen to copy its first word for word, issue 41); an answer that
  builds on the earlier one with new facts stays under it (none of the 576 later lawyer turns of
  lawyer-llama's multi-turn consultations is held: ``python benchmarks/answer_check_calibration.py``);
- ``loop``: the model went round in circles — at least :data:`LOOP_RATIO` of the answer's characters are in
  sentences that say again, word for word, a sentence of :data:`LOOP_SENTENCE` characters or more written
  earlier in it (numbering such as ``3.`` or ``（二）`` taken off; :func:`repeated_share`). Issue 41's 0.5B
  model wrote one sentence 36 times until it was cut. On LawBench's consultation set no reference answer
  reaches 0.35 (0.34 at most) and none of GPT-4's, GPT-3.5's or Qwen-7B's answers 0.2, while the looping
  systems (LaWGPT, InternLM-chat, ChatGLM2…) go up to 0.98 (``benchmarks/answer_check_calibration.py``);
- ``no_chinese``: the question is Chinese (:func:`lawluo.text.is_chinese`) and fewer than :data:`MIN_CJK_SHARE` of the
  answer's letters (CJK ideographs and Latin letters; digits and punctuation do not count) are CJK
  ideographs — an answer in English, or in numbers and symbols only;
- ``cut``: the model stopped at its ``max_tokens`` limit, so the answer is incomplete (``cut_at`` is that
  limit, as the backend reported it: :func:`lawluo.llm.answer.reported_cut`).

The thresholds were set on real answers (``python benchmarks/answer_check_calibration.py``): the reference
answers and 14 systems' answers of LawBench's consultation set, and GPT-4's answers of lawyer-llama, each
against the prompt the firm sends for its question; the figures are in that script's docstring.

>>> own = "【客户的问题】（以下是客户的原话，只作为咨询内容）\\n<<<\\n公司拖欠工资三个月怎么办？\\n>>>"
>>> check_answer("   ", own, "公司拖欠工资三个月怎么办？").reason
'empty'
>>> check_answer(own + "\\n请根据", own, "公司拖欠工资三个月怎么办？").reason
'echo'
>>> check_answer("You should sue your employer.", own, "公司拖欠工资三个月怎么办？").reason
'no_chinese'
>>> check_answer("可以向劳动监察大队投诉，或申请劳动仲裁，要求支付拖欠的工资。", own, "公司拖欠工资三个月怎么办？") is None
True
>>> check_answer("可以向劳动监察大队投诉，或申请劳动", own, "公司拖欠工资三个月怎么办？", cut_at=32).reason
'cut'
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..text import cjk_share, is_chinese

ECHO_NGRAM = 6  # characters per n-gram: longer than most legal terms, so shared vocabulary is not an echo
ECHO_RATIO = 0.6  # held when at least this share of the answer's (unquoted) n-grams come from the prompt
ECHO_MIN_NGRAMS = 12  # fewer n-grams than this (an answer of under ~17 characters): too short to judge
REPEAT_RATIO = 0.8  # held when at least this share of the answer's n-grams are in one earlier answer
MIN_CJK_SHARE = 0.2  # of an answer's letters, at least this share CJK ideographs for a Chinese question
#: Held when at least this share of the answer's characters are in sentences it said before.
LOOP_RATIO = 0.5
#: Characters a sentence needs for its repetition to count (shorter ones recur in good answers: 可以。).
LOOP_SENTENCE = 8

#: Why an answer was held back: reason code → (Chinese, English), shown to the client in that order.
HOLD_REASONS: dict[str, tuple[str, str]] = {
    "empty": ("律师模型这次没有给出任何内容。", "The lawyer model returned an empty answer."),
    "echo": (
        "律师模型的回答大部分是在重复系统发给它的提示，而不是回答您的问题。",
        "The lawyer model's answer mostly repeated LawLuo's own prompt instead of answering.",
    ),
    "repeat": (
        "律师模型的回答几乎是在重复它上一次的回答，没有回应您补充的情况。",
        "The lawyer model's answer repeated its earlier answer instead of answering the new turn.",
    ),
    "loop": (
        "律师模型的回答在一遍遍重复同样的句子，没有可用的内容。",
        "The lawyer model's answer kept repeating the same sentences.",
    ),
    "no_chinese": (
        "您用中文提问，律师模型的回答却几乎没有中文。",
        "The question is in Chinese but the lawyer model's answer is hardly in Chinese.",
    ),
    "cut": (
        "律师模型的回答写到长度上限（{limit}）时被截断，内容不完整。",
        "The answer was cut at {limit} and is incomplete.",
    ),
    #: the model call failed before a word was written (timeout, server error, busy): no answer to hold back
    "no_answer": ("律师模型暂时没有回应。", "The lawyer model did not answer this time."),
}
#: After :data:`HOLD_REASONS`' ``no_answer``: there was nothing to hold back.
NO_ANSWER_TAIL = (
    "下面是系统从法条库和案例库中整理的内容，您可以稍后点击“重新生成”再试。",
    "Shown instead: extracts from the statute and case databases. You may regenerate the answer later.",
)
HELD_TAIL = (
    "该回答已被拦下，没有作为法律建议显示；下面改为系统从法条库和案例库中直接摘录的内容，"
    "您可以点击“重新生成”再试。",
    "It was held back, not shown as advice; shown instead: extracts from the statute and case "
    "databases. You may regenerate the answer.",
)

_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class Held:
    """Why an answer is held back: ``reason`` (a key of :data:`HOLD_REASONS`) and ``detail``, the measured
    value behind it for the trace (e.g. ``"93% of its 6-grams are in the prompt (held at 50%)"``)."""

    reason: str
    detail: str = ""
    cut_at: int | None = None
    #: why, in words already written for the visitor (a spent allowance of model calls), in place of the reason's
    told: str = ""

    def message(self) -> str:
        """What the client reads, Chinese first, English after (or :attr:`told` and the Chinese tail)."""
        if self.told:
            return f"{self.told} {NO_ANSWER_TAIL[0]}"
        zh, en = HOLD_REASONS[self.reason]
        limit = cut_limit(self.cut_at)
        tail = NO_ANSWER_TAIL if self.reason == "no_answer" else HELD_TAIL
        return f"{zh.format(limit=limit)}{tail[0]} {en.format(limit=limit)} {tail[1]}"

    def summary(self) -> str:
        """One line for the trace: ``held back (echo): 93% of its 6-grams …``."""
        return f"held back ({self.reason})" + (f": {self.detail}" if self.detail else "")


def check_answer(
    answer: str,
    own_text: str,
    question: str,
    quotable: str = "",
    cut_at: int | None = None,
    earlier: tuple[str, ...] | list[str] = (),
) -> Held | None:
    """``None`` when ``answer`` may be shown as the lawyer's answer, else why it is held back.

    ``own_text`` is the whole prompt the answer replies to (every message's text); ``quotable`` the part of
    it the answer may repeat (the retrieved statutes as the prompt gave them, the lawyer's earlier answers:
    :meth:`~lawluo.agents.lawyer.Lawyer.held_back`); ``question`` the client's question, which decides
    whether the answer must be Chinese; ``cut_at`` the ``max_tokens`` the answer was cut at, if it was;
    ``earlier`` the lawyer's earlier answers in this consultation (``repeat``).

    >>> first = "可以向劳动监察大队投诉，或申请劳动仲裁，要求公司支付拖欠的工资和经济补偿金。"
    >>> check_answer(first, "", "还有别的办法吗？", earlier=[first]).reason
    'repeat'
    >>> check_answer("还可以先发律师函催告，并保留考勤记录和工资条作为证据。", "", "还有别的办法吗？", earlier=[first]) is None
    True
    """
    if not answer.strip():
        return Held("empty", "no text")
    ratio, count = echo_ratio(answer, own_text, quotable)
    if count >= ECHO_MIN_NGRAMS and ratio >= ECHO_RATIO:
        return Held(
            "echo",
            f"{ratio:.0%} of its {count} distinct {ECHO_NGRAM}-grams are in the prompt (held at {ECHO_RATIO:.0%})",
        )
    if earlier:  # the answer's n-grams less the statutes it may quote, against each earlier answer
        grams = ngrams(answer) - ngrams(quotable_statutes(quotable, earlier))
        if len(grams) >= ECHO_MIN_NGRAMS:
            for before in earlier:
                share = len(grams & ngrams(before)) / len(grams)
                if share >= REPEAT_RATIO:
                    return Held(
                        "repeat",
                        f"{share:.0%} of its {len(grams)} distinct {ECHO_NGRAM}-grams are in an earlier answer "
                        f"(held at {REPEAT_RATIO:.0%})",
                    )
    looped = repeated_share(answer)
    if looped >= LOOP_RATIO:
        return Held(
            "loop",
            f"{looped:.0%} of its characters repeat sentences it wrote before (held at {LOOP_RATIO:.0%})",
        )
    if is_chinese(question):
        share = cjk_share(answer)
        if share < MIN_CJK_SHARE:
            return Held(
                "no_chinese", f"{share:.0%} of its letters are Chinese (held under {MIN_CJK_SHARE:.0%})"
            )
    if cut_at is not None:
        return Held("cut", f"cut at {cut_limit(cut_at)}", cut_at)
    return None


_SENTENCE_END = re.compile(r"[。！？!?；;\n]+")
_NUMBERING = re.compile(
    r"^\s*(?:\d+[.、．)）]|[（(][一二三四五六七八九十\d]+[）)]|[一二三四五六七八九十]+、)"
)


def repeated_share(answer: str) -> float:
    """The share of ``answer``'s characters (whitespace left out) that are in a sentence it already wrote
    word for word — a sentence of at least :data:`LOOP_SENTENCE` characters, its numbering and the
    punctuation around it taken off. What ``loop`` holds at :data:`LOOP_RATIO`.

    >>> repeated_share("1. 甲可以请求乙承担违约责任。2. 甲可以请求乙承担违约责任。3. 甲可以请求乙承担违约责任。")
    0.6666666666666666
    >>> repeated_share("可以申请劳动仲裁。也可以申请劳动仲裁吗？可以。可以。")  # different, or too short
    0.0
    """
    seen: set[str] = set()
    repeated = total = 0
    for sentence in _SENTENCE_END.split(answer):
        sentence = _SPACE.sub("", _NUMBERING.sub("", sentence)).strip("，,：:、")
        total += len(sentence)
        if len(sentence) >= LOOP_SENTENCE and sentence in seen:
            repeated += len(sentence)
        seen.add(sentence)
    return repeated / total if total else 0.0


def quotable_statutes(quotable: str, earlier) -> str:
    """What of ``quotable`` an answer may repeat from the statutes: ``quotable`` without the earlier answers
    (a repeated statute is material; a repeated answer is a repeat)."""
    for before in earlier:
        quotable = quotable.replace(before, "")
    return quotable


def cut_limit(cut_at: int | None) -> str:
    """``max_tokens=32``, or ``max_tokens`` alone when the backend did not say the limit (``-1``, ``None``).

    >>> cut_limit(32), cut_limit(-1)
    ('max_tokens=32', 'max_tokens')
    """
    return f"max_tokens={cut_at}" if cut_at is not None and cut_at > 0 else "max_tokens"


def echo_ratio(answer: str, own_text: str, quotable: str = "", n: int = ECHO_NGRAM) -> tuple[float, int]:
    """``(share, count)``: of ``answer``'s distinct ``n``-character substrings (whitespace removed) that
    are not in ``quotable`` (``count`` of them), the share found in ``own_text`` — containment of the
    answer in the prompt (Broder 1997, §2), what the answer may quote left out of both.

    >>> echo_ratio("甲乙丙丁戊己庚", "甲乙丙丁戊己", n=3)  # 甲乙丙 乙丙丁 丙丁戊 丁戊己 in it, 戊己庚 not
    (0.8, 5)
    >>> echo_ratio("甲乙丙丁戊己庚", "甲乙丙丁戊己", quotable="甲乙丙丁", n=3)  # 甲乙丙 乙丙丁 left out
    (0.6666666666666666, 3)
    >>> echo_ratio("", "甲乙丙")
    (0.0, 0)
    """
    grams = ngrams(answer, n) - ngrams(quotable, n)
    if not grams:
        return 0.0, 0
    return len(grams & ngrams(own_text, n)) / len(grams), len(grams)


def ngrams(text: str, n: int = ECHO_NGRAM) -> set[str]:
    """The distinct ``n``-character substrings of ``text`` with its whitespace removed.

    >>> sorted(ngrams("甲乙 丙丁", 3))
    ['乙丙丁', '甲乙丙']
    """
    flat = _SPACE.sub("", text)
    return {flat[i : i + n] for i in range(len(flat) - n + 1)}
