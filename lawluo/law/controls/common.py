"""What every control shares: its sources and sizes, the rule of a real citation (:func:`contained`
under :func:`plain`), the date a judgment was written, and the shape of a row."""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterator
from pathlib import Path

from ..database import Law, StatuteDB
from ..numerals import chinese_to_int, int_to_chinese

SEED = 40
JUDGE_REPO = "oneal2000/JuDGE"
JUDGE_COMMIT = "2457c65eb4fbeff65f60dba617f6c9cbc221e71b"
JUDGE_PATH = "data/test.json"
LAWYER_LLAMA_FILE = "lawyer_llama/legal_counsel_with_article_v2.jsonl"
#: Multi-turn dialogues with the articles used (held-out builds only): the first lawyer turn is the answer.
MULTI_TURN_FILE = "lawyer_llama/legal_counsel_multi_turn_with_article_v2.jsonl"
#: Held-out builds widen the positive control's pool of public articles with these lists of articles
#: applied: 刑法 articles of CAIL2018 cases (LawBench 3-1, ``法条:刑法第264条``) and the 民法典 articles
#: lawyer-llama's GPT-4 consultations were given (``laws``); only the article numbers are read.
CAIL_ARTICLES_FILE = "lawbench/criminal_facts_articles.jsonl"
ZIXUN_FILE = "lawyer_llama/zixun_gpt4.dev.jsonl"
FILES = ("negative_judgment.jsonl", "negative_answer.jsonl", "positive.jsonl")
SUMS = "SHA256SUMS"
#: Answer-style rows drawn (seeded) from lawyer-llama's 1,000 consultations.
ANSWER_ROWS = 400
#: Rows per corruption kind (fewer where fewer candidates exist).
POSITIVE_SIZES: dict[str, int] = {
    "wrong_number": 70,
    "wrong_law": 60,
    "should_may": 50,
    "above_below": 50,
    "drink_drunk": 30,
    "must_not_removed": 50,
    "number_changed": 60,
    "splice": 50,
    "repealed": 60,
    "outdated_version": 60,
    "no_such_article": 30,
}
#: The verdict each corruption should get (any hallucinated verdict counts as caught).
POSITIVE_VERDICT: dict[str, str] = {
    "wrong_number": "wrong_number",
    "wrong_law": "content_mismatch",
    "should_may": "content_mismatch",
    "above_below": "content_mismatch",
    "drink_drunk": "content_mismatch",
    "must_not_removed": "content_mismatch",
    "number_changed": "content_mismatch",
    "splice": "content_mismatch",
    "repealed": "repealed",
    "outdated_version": "outdated_version",
    "no_such_article": "not_found",
}
#: Laws whose 饮酒/醉酒 clauses the 醉酒↔饮酒 swaps and splices also draw on (beside the pool).
DRINK_LAWS = ("道路交通安全法", "治安管理处罚法")
#: Laws a real article's content is misattributed to (``wrong_law``).
OTHER_LAWS = (
    "劳动合同法",
    "消费者权益保护法",
    "公司法",
    "民事诉讼法",
    "劳动法",
    "治安管理处罚法",
    "道路交通安全法",
)
#: Repealed laws (民法典 art. 1260) and how many articles each had, for a plausible article number.
REPEALED_SIZES: dict[str, int] = {
    "合同法": 428,
    "婚姻法": 51,
    "物权法": 247,
    "继承法": 37,
    "侵权责任法": 92,
    "担保法": 96,
    "民法通则": 156,
    "民法总则": 206,
    "收养法": 34,
}
PRC = "中华人民共和国"
MIN_QUOTE = 15  # normalised characters a quote of the positive control has at least

_N = "[零〇○Ｏ一二三四五六七八九十百千两0-9０-９]+"
_HEADING_RE = re.compile(r"[【［\[][^】］\]]{1,14}[】］\]]")
_DATE_CN = re.compile(
    r"([二〇○Ｏ零一三四五六七八九]{4})年([一二三四五六七八九十]{1,2})月([一二三四五六七八九十]{1,3})日"
)
_DATE_AR = re.compile(r"((?:19|20)\d\d)年(\d{1,2})月(\d{1,2})日")
_ELLIPSIS = re.compile(r"…+|\.{3,}|\s+")
_NON_WORD = re.compile(r"[^\u4e00-\u9fff0-9a-zA-Z]")


def plain(text: str) -> str:
    """The light normalisation under which quoted content must be contained in the article's text.

    Width-folded (NFKC), bracketed headings such as ``【盗窃罪】`` removed, Arabic numbers written in
    Chinese numerals as statutes write them, then everything but CJK, digits and Latin letters removed.

    >>> plain("第二百六十四条【盗窃罪】盗窃公私财物，数额较大的；处3年以下")
    '第二百六十四条盗窃公私财物数额较大的处三年以下'
    """
    text = _HEADING_RE.sub("", unicodedata.normalize("NFKC", text))
    text = re.sub(r"\d{1,8}", lambda m: int_to_chinese(int(m.group())), text)
    return _NON_WORD.sub("", text)


def contained(content: str, article_text: str) -> bool:
    """Every piece of ``content`` (split at ellipses and line breaks) is in the article, in order.

    >>> contained("对于未遂犯，……可以比照既遂犯从轻", "已经着手实行犯罪。对于未遂犯，可以比照既遂犯从轻或者减轻处罚。")
    True
    >>> contained("对于未遂犯，应当比照既遂犯从轻", "对于未遂犯，可以比照既遂犯从轻或者减轻处罚。")
    False
    """
    target = plain(article_text)
    at = 0
    pieces = [plain(p) for p in _ELLIPSIS.split(unicodedata.normalize("NFKC", content))]
    pieces = [p for p in pieces if p]
    if not pieces:
        return False
    for piece in pieces:
        found = target.find(piece, at)
        if found < 0:
            return False
        at = found + len(piece)
    return True


def written_on(text: str) -> str | None:
    """The date a judgment was written, ISO: its latest date in Chinese numerals (the date above the
    signatures) not earlier than the year of its case number (``（2017）浙0602刑初770号``), else its latest
    date; dates that end a term (``至2018年10月18日止``) are not candidates; ``None`` when none is left.

    >>> written_on("（2017）沪0120刑初684号 2017年4月28日案发，刑期至二〇二一年八月十日止。二〇一七年六月二十八日 书记员")
    '2017-06-28'
    >>> written_on("（2017）鄂0191刑初28号 二○一二年因盗窃被判刑，2017年6月1日立案，刑期至2021年8月10日止。")
    '2017-06-01'
    """
    chinese, arabic = [], []
    for m in _DATE_CN.finditer(text):
        try:
            year = int("".join(str(chinese_to_int(ch)) for ch in m.group(1)))
            date = (year, chinese_to_int(m.group(2)), chinese_to_int(m.group(3)))
        except ValueError:
            continue
        if not _ENDS_TERM.match(text, m.end()):
            chinese.append(date)
    arabic = [
        (int(m.group(1)), int(m.group(2)), int(m.group(3)))
        for m in _DATE_AR.finditer(text)
        if not _ENDS_TERM.match(text, m.end())
    ]
    case = re.search(r"[（(]((?:19|20)\d\d)[)）]", text[:200])
    case_year = int(case.group(1)) if case else 0
    valid = [d for d in chinese + arabic if 1949 <= d[0] <= 2100 and 1 <= d[1] <= 12 and 1 <= d[2] <= 31]
    signed = [d for d in valid if d in chinese and d[0] >= case_year]
    pick = max(signed) if signed else max(valid) if valid else None
    return f"{pick[0]:04d}-{pick[1]:02d}-{pick[2]:02d}" if pick else None


_ENDS_TERM = re.compile(r"\s*(?:止|为止|届满)")


def version_at(db: StatuteDB, key: str, as_of: str | None) -> Law | None:
    """The version of a law in force on ``as_of`` (the newest not later than it), else the oldest held."""
    versions = db.versions(key)
    if not versions:
        return None
    if as_of is None:
        return versions[0]
    older = [law for law in versions if law.version <= as_of]
    return older[0] if older else versions[-1]


def _expected(law: str, key: str, number: int, suffix: int, expect: str, verdict: str, **extra) -> dict:
    return {
        "law": law,
        "key": key,
        "article": number,
        "suffix": suffix,
        "expect": expect,
        "verdict": verdict,
        **extra,
    }


def negative_row(n: int, style: str, text: str, as_of, citations: list, excluded: list, source: dict) -> dict:
    """Row ``n`` of a negative control (every set, both styles)."""
    return {
        "id": f"neg-{style}-{n:04d}",
        "control": "negative",
        "style": style,
        "text": text,
        "as_of": as_of,
        "citations": citations,
        "excluded": excluded,
        "source": source,
    }


def read_jsonl_rows(path: Path) -> Iterator[dict]:
    """The rows of a JSON Lines file, blank lines skipped."""
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                yield json.loads(line)
