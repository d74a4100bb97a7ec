"""What a yes/no element statement asks, and whether a client's question already says it (issue 42).

Lexical and explainable tests on the statements of the clarification material
(:mod:`lawluo.tolc.material`): :func:`restates` (an element that only restates the question is passed
over) and :func:`stated_answer` (the clause of the question that already answers an element, and whether
it says yes or no), over content words, paraphrases (社保 is 社会保险) and the statutory terms of colloquial
words; :func:`specificity` of a statute keyword among lay questions.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

from ..text import STOPWORDS, jieba_words

_YES_NO = re.compile(r"是否|有没有|有无")
#: How many lay questions use each statute keyword (``benchmarks/keyword_specificity.py``; first line ``N``).
KEYWORD_DF_FILE = Path(__file__).with_name("keyword_df.tsv")
#: Paraphrases the restatement filter treats as one word: on each line the word compared first, then a
#: client's or a statute's other words for the same thing (社保 is 社会保险, 走人 is 解除). General
#: lay/legal pairs, not words of any benchmark question; a phrase (two or more characters) is replaced
#: inside the text, a single character only when it is a word by itself (交 but not 交通).
PARAPHRASES = tuple(
    line.split()
    for line in """
社会保险 社保 五险一金 五险
缴纳 交 缴 交纳
单位 公司 老板 用人单位 厂里 东家
结婚登记 领证 领结婚证 结婚证
全部责任 全责
保质期 过期
工资 薪水 工钱 劳动报酬 薪资 薪酬
拖欠 拖 欠 没发 不发
停业 关门 倒闭 跑路 歇业
维修 修 返修
许可 同意 问过 授权 允许
住址 住哪 住所 地址 居住地
查找 找到 抓到 查到 抓
经济困难 没钱 穷
延误 等了 拖延 耽误
醉酒 喝酒 喝了酒 饮酒 酒后
解除 辞退 开除 走人 炒 解雇 辞了 不让我干
加班 延长工作时间
休息日 周末 双休日
死亡 去世 过世 死了 身亡
刑事拘留 刑拘
报案 报警
签订 签了 签
""".strip().splitlines()
)
_CANON = {v: group[0] for group in PARAPHRASES for v in group[1:]}
_PHRASES = sorted((v for v in _CANON if len(v) > 1), key=len, reverse=True)
#: Negations: 是否没有缴纳 and 没给我交 ask and say the same fact, one of them denied (rule 2 counts both).
_NEGATIONS = frozenset("未 无 非 没 没有 不 尚未 并未".split())
#: An element restates the question when at least this share of its content words are the question's.
#: On the dev half 0.6, 2/3 and 0.75 drop the same elements (3, all restatements, no relevant one);
#: the strictest is kept. 0.5 also drops 5 relevant elements (书面催告开发商交房 after 开发商还没交房).
RESTATE_SHARE = 0.75
#: Words that say how much or when, not what: an element made new only by them is not a new question.
_QUALIFIERS = frozenset(
    "以上 以下 达到 超过 满 不满 情况 存在 依法 相关 对方 已 曾 还 仍 内 且 并 其他 等 如 后 时 前 中 "
    "被 给 由 一方 双方 涉及 过 用 能".split()
)
#: A quantity (三年, 两个, 80, 十五日): the element asks about the legal boundary, which the client's own
#: number does not settle (孩子是否不满两周岁？ after 孩子才两岁 is a fair question).
_QUANTITY = re.compile(
    r"[\d一二两三四五六七八九十百千万半几]+[个多]?(年|月|日|天|周岁|岁|倍|万|元|次|毫升|毫克)?"
)
_WORD = re.compile(r"[\u4e00-\u9fffA-Za-z0-9]")


@lru_cache(maxsize=1)
def keyword_df() -> tuple[int, dict[str, int]]:
    """``(N, {keyword: df})`` of :data:`KEYWORD_DF_FILE`: how many of N lay questions say each keyword
    (``(0, {})`` when the file is missing)."""
    if not KEYWORD_DF_FILE.exists():
        return 0, {}
    rows = [line.split("\t") for line in KEYWORD_DF_FILE.read_text(encoding="utf-8").splitlines() if line]
    table = {word: int(count) for word, count in rows}
    return table.pop("N", 0), table


def specificity(keyword: str) -> float:
    """How specifically ``keyword`` names an issue: ``ln((N+1)/(df+1))`` over the lay questions of
    :data:`KEYWORD_DF_FILE` — 押金 or 加班费 (few questions say them) score high, 公司 or 房子 low.

    >>> specificity("加班费") > specificity("公司")
    True
    """
    n, table = keyword_df()
    return math.log((n + 1) / (table.get(keyword, 0) + 1))


def is_yes_no(statement: str) -> bool:
    """True for a statement a client can answer yes or no: it asks 是否/有没有/有无 and ends with ？.

    >>> is_yes_no("单位是否没有依法为您缴纳社会保险？"), is_yes_no("您的诉求是什么？")
    (True, False)
    """
    return bool(_YES_NO.search(statement)) and statement.endswith("？")


@lru_cache(maxsize=8192)
def content_words(text: str) -> tuple[str, ...]:
    """The words of ``text`` that say what it is about: jieba's words less stop words, qualifiers and
    quantities.

    >>> content_words("约定的还款日期至今是否已超过三年？")
    ('约定', '还款', '日期', '至今')
    """
    return tuple(
        w
        for w in jieba_words(text)
        if _WORD.match(w) and w not in STOPWORDS and w not in _QUALIFIERS and not _QUANTITY.fullmatch(w)
    )


def paraphrased(text: str) -> str:
    """``text`` with each phrase of :data:`PARAPHRASES` written as its group's first word.

    >>> paraphrased("公司一直没给我交社保")
    '单位一直没给我交社会保险'
    """
    for phrase in _PHRASES:
        if phrase in text:
            text = text.replace(phrase, _CANON[phrase])
    return text


def said_words(text: str) -> tuple[str, ...]:
    """What ``text`` says, for the restatement filter: :func:`content_words` of its
    :func:`paraphrased` form, single-character paraphrases mapped too, negations left out.

    >>> said_words("单位是否没有依法为您缴纳社会保险"), said_words("公司一直没给我交社保")
    (('单位', '缴纳', '社会保险'), ('单位', '缴纳', '社会保险'))
    """
    words = (_CANON.get(w, w) for w in content_words(paraphrased(text)))
    return tuple(w for w in words if w not in _NEGATIONS)


def asks_key(statement: str) -> frozenset[str]:
    """What a yes/no statement asks, for finding a reworded duplicate in one tree: its words (whose fact, and
    what is asked of it), :func:`paraphrased`, less stop words, qualifiers, denials and 是否 — but with its
    numbers (是否超过一年 and 是否超过三年 ask different things).

    >>> asks_key("用人单位是否没有为您缴纳社保？") == asks_key("单位是否未依法为您交社会保险？")
    True
    >>> asks_key("是否超过一年？") == asks_key("是否超过三年？")
    False
    """
    text = paraphrased(_YES_NO.sub(" ", statement))
    words = (_CANON.get(w, w) for w in jieba_words(text))
    return frozenset(
        w
        for w in words
        if _WORD.match(w)
        and w not in STOPWORDS
        and w not in _QUALIFIERS
        and w not in _NEGATIONS
        and w != "依法"
    )


def question_words(question: str, colloquial: dict[str, list[str]] | None = None) -> frozenset[str]:
    """The question's content words (as written and :func:`paraphrased`) and the statutory terms of its
    colloquial words (拆迁 → 征收 补偿)."""
    words = set(content_words(question)) | set(said_words(question))
    for word, terms in (colloquial or {}).items():
        if word in question:
            words.update(terms)
    return frozenset(words)


def restates(statement: str, words: frozenset[str], share: float = RESTATE_SHARE) -> bool:
    """True when the element ``statement`` only asks what the question already says: at least ``share``
    of the content words of what it asks (the words after 是否/有没有/有无) are in ``words``
    (:func:`question_words` of the question). Rule 2 of ``benchmarks/data/README.md``.

    >>> words = question_words("试用期第二个月老板说我不适合，直接让我走人")
    >>> restates("您被辞退时是否还在试用期内？", words), restates("单位是否事先告知过录用条件？", words)
    (True, False)
    """
    found = _YES_NO.search(statement)
    asked = said_words(statement[found.end() :] if found else statement)
    return bool(asked) and sum(w in words for w in asked) >= share * len(asked)


#: A denial in a statement or a question: 是否未缴纳, 没给我交, 一分都不退.
_DENIAL = re.compile(r"没有|没|未|不|无|拒绝|拒不")
#: Words that deny without saying the fact is absent (不满两周岁 is a boundary, 无法实现 a consequence).
_NOT_DENIAL = re.compile(
    r"不满|不足|不到|无法|不能|不得|不可|不同意见|不服|不当|不规范|不合格|不符|不一|不正常"
)
#: A wish, a plan, a suspicion or a question before the words: the fact is not stated (想申请, 怀疑…拖延).
_HEDGE = re.compile(r"想|打算|准备|要不要|能不能|能否|可以|怀疑|是不是|会不会|如果|万一|说要|要求")
#: An element about all or both of several (两个人是否都…): one name on the deed does not answer it.
_UNSETTLED = re.compile(r"都|均|全部|各自|双方")
#: How many characters before a word a denial may stand and still deny it (没给我交, 一直没跟我签).
DENIAL_REACH = 6
#: At most this many elements the question already answers are shown, pre-marked, beside the first level.
STATED_MAX = 2
#: A number in what an element asks (两周岁, 三年, 80): its boundary is a question even after the client's number.
_NUMBER = re.compile(r"\d|[两三四五六七八九十百千万半几]|一[年月日天周个次倍万元千百]")
_CLAUSE = re.compile(r"[，,。！!？?；;：:、\s]+")


def _denies(text: str) -> bool:
    """Whether ``text`` denies (没, 未, 不 …), a boundary or an inability (不满, 无法) not counted."""
    return bool(_DENIAL.search(_NOT_DENIAL.sub("", text)))


def stated_answer(
    statement: str, question: str, colloquial: dict[str, list[str]] | None = None
) -> tuple[str, str] | None:
    """``(mark, quote)`` when ``question`` already answers the yes/no ``statement`` — it :func:`restates` the
    question and asks no number (a number's boundary, 是否不满两周岁, the client's own number does not
    settle): ``quote`` is the clause of the question that says it, and ``mark`` is ``"yes"`` when both say
    the fact the same way, ``"no"`` when exactly one of them denies it (是否已签订书面合同？ after 没签合同).
    ``None`` when the question does not answer it (issue 42: shown as 您已说明：…, pre-marked, editable).

    >>> stated_answer("用人单位是否未依法为您缴纳社会保险？", "公司三年都没给我交社保，我想辞职")
    ('yes', '公司三年都没给我交社保')
    >>> stated_answer("单位是否与您签订了劳动合同？", "入职一年了公司一直没跟我签劳动合同")
    ('no', '入职一年了公司一直没跟我签劳动合同')
    >>> stated_answer("孩子是否不满两周岁？", "孩子五岁了") is None
    True
    """
    found = _YES_NO.search(statement)
    asked_text = statement[found.end() :] if found else statement
    if not question or not found or _NUMBER.search(asked_text):
        return None
    words = question_words(question, colloquial)
    if not restates(statement, words):
        return None
    asked = said_words(asked_text)
    clauses = [c for c in _CLAUSE.split(question) if c]
    if not clauses or not asked:
        return None
    scored = [
        (
            sum(w in question_words(c) for w in asked),
            sum(w in question_words(c, colloquial) for w in asked),
            -n,
            c,
        )
        for n, c in enumerate(clauses)
    ]
    hits, loose, _, quote = max(scored)
    if not loose or _UNSETTLED.search(asked_text) or _hedged(quote, asked):
        return None
    same = _denies(asked_text) == _denies_near(quote, asked)
    return ("yes" if same else "no"), quote


def _before_asked(text: str, asked: Sequence[str], pattern: re.Pattern) -> bool:
    """Whether ``pattern`` occurs in the :data:`DENIAL_REACH` characters before one of the ``asked`` words
    (or a word :data:`_CANON` reads as it) where ``text`` says it."""
    for word in asked:
        for spot in [word, *(v for v, canon in _CANON.items() if canon == word)]:
            at = text.find(spot)
            if at >= 0 and pattern.search(text[max(0, at - DENIAL_REACH) : at]):
                return True
    return False


def _hedged(clause: str, asked: Sequence[str]) -> bool:
    """Whether ``clause`` says the fact only as a wish, a plan or a suspicion (想申请, 怀疑, 说要): it does
    not answer the element."""
    return _before_asked(paraphrased(clause), asked, _HEDGE)


def _denies_near(clause: str, asked: Sequence[str]) -> bool:
    """Whether ``clause`` denies one of the ``asked`` words it says: a denial (没, 未, 不 …) in the few
    characters before it (不适合 elsewhere in the clause does not deny 试用期)."""
    return _before_asked(_NOT_DENIAL.sub("＿＿", paraphrased(clause)), asked, _DENIAL)
