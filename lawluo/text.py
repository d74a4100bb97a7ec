"""Text at the bottom of the library: Chinese tokenisation for BM25, and how Chinese a text is.

**Tokenisation** is jieba's search-engine mode, minus punctuation and function words.

Search mode (``lcut_for_search``) also emits the words inside long compounds (拖欠工资 → 拖欠, 工资,
拖欠工资), so a client's compound still matches the statute's separate words; it raised consultation
recall@5 from 0.234 to 0.268 over precise mode (``benchmarks/statute_recall.py``).
"""

from __future__ import annotations

import logging
import re
from functools import lru_cache

CHINESE_QUESTION_SHARE = 0.3  # a question whose letters are at least this share CJK ideographs is Chinese
_IDEOGRAPH = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f"
_IDEOGRAPHS = re.compile(f"[{_IDEOGRAPH}]")
_LATIN = re.compile(r"[A-Za-z]")

#: Bump when tokenisation changes: cached indexes built with another version are rebuilt.
TOKENIZER_VERSION = "jieba-0.42.1-search-v1"

_KEEP = re.compile(r"[\u4e00-\u9fffA-Za-z0-9]")
#: Function words and question boilerplate that carry no legal content (query and documents alike).
STOPWORDS = frozenset(
    """的 了 是 在 和 与 及 或 或者 等 把 被 对 对于 从 向 为 以 于 之 其 这 那 这个 那个 这样 什么 怎么 怎么办 怎样 如何
    吗 呢 吧 啊 呀 么 嘛 哦 我 你 您 他 她 它 我们 你们 他们 自己 有 没有 没 不 也 都 就 还 又 很 会 要 能 可以 可 请问
    问 想 请 一下 一个 一些 情况 问题 这种 哪些 哪个 多少 需要 应该 是否 因为 所以 但是 但 如果 现在 已经 之后 以后
    时候 可能 还是 一直 谁 该 按照 根据 依照 规定 场景 小明 小张 小王 小李 小红 某 某某""".split()
)


@lru_cache(maxsize=1)
def _jieba():
    import jieba

    jieba.setLogLevel(logging.WARNING)
    jieba.initialize()
    return jieba


def tokenize(text: str) -> list[str]:
    """Tokens BM25 indexes and queries with.

    >>> tokenize("用人单位拖欠工资怎么办？")
    ['用人', '单位', '用人单位', '拖欠', '工资', '拖欠工资']
    """
    jieba = _jieba()
    return [t for t in jieba.lcut_for_search(text) if _KEEP.match(t) and t not in STOPWORDS]


def jieba_words(text: str) -> list[str]:
    """jieba's precise-mode words of ``text``, punctuation included (no compound split into its parts).

    >>> jieba_words("拖欠工资")
    ['拖欠工资']
    """
    return _jieba().lcut(text)


def cjk_share(text: str) -> float:
    """The share of ``text``'s letters (CJK ideographs and Latin letters) that are CJK ideographs; ``0.0``
    for a text with no letters.

    >>> cjk_share("依据《劳动合同法》第82条")
    1.0
    >>> cjk_share("劳动法 law")
    0.5
    >>> cjk_share("1. 2. 3.")
    0.0
    """
    cjk = ideographs(text)
    letters = cjk + len(_LATIN.findall(text))
    return cjk / letters if letters else 0.0


def ideographs(text: str) -> int:
    """How many CJK ideographs ``text`` holds.

    >>> ideographs("《劳动合同法》第82条 law")
    7
    """
    return len(_IDEOGRAPHS.findall(text))


def is_chinese(question: str) -> bool:
    """A question whose letters are at least :data:`CHINESE_QUESTION_SHARE` CJK ideographs.

    >>> is_chinese("公司不给我交社保怎么办？"), is_chinese("Can my boss fire me?"), is_chinese("HR说我的offer作废了")
    (True, False, True)
    """
    return cjk_share(question) >= CHINESE_QUESTION_SHARE
