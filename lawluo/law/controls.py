"""Controls for the citation checker's published precision (issue 40, item 4), built from public data.

Two controls, neither used to set the checker's thresholds (those were set on LawBench consultation
answers and ``tests/fixtures/checked_citations.jsonl``):

- **negative** — real, correct citations in realistic prose, which the checker must not call
  hallucinated. *judgment* style: real criminal judgments (JuDGE, ``oneal2000/JuDGE`` ``data/test.json``:
  full judgments from China Judgments Online) as the court wrote them, with the articles the court cited
  and, where the judgment appends them, the article texts it quoted. *answer* style: the 民法典 articles
  lawyer-llama's consultations were given (``legal_counsel_with_article_v2.jsonl``, field ``laws``:
  ``《民法典》第一千零七十六条：<text>``), cited in the forms answers use, inside the real answer's own
  sentences that cite nothing.
- **positive** — corrupted citations made from the same public articles: the wrong number, the wrong
  law, one word of legal meaning changed (应当↔可以, 以上↔以下, 醉酒↔饮酒, 不得 removed, a number or
  period or amount changed), a splice of one clause's subject with another clause's penalty, a repealed
  law, an older version of a law cited without a date, an article number the law does not have.

A citation counts as real and correct only when its law and article exist in the statute database (in
the version in force on the date the text was written where the database holds it) and any text quoted
for it is the article's text or contiguous parts of it: decided by string containment after light
normalisation (:func:`plain`), never by running the checker. Everything is seeded (:data:`SEED`), so a
rebuild writes the same bytes; the files are frozen by ``SHA256SUMS`` beside them.

    python -m lawluo bench checker --build-controls --judge-data JuDGE/data/test.json \
        [--data ../shared/data] [--controls benchmarks/data/checker_controls]

(JuDGE at commit :data:`JUDGE_COMMIT`; ``git clone https://github.com/oneal2000/JuDGE``.)

A held-out set (:class:`HeldOut`, ``--held-out-from``) is built by the same rules from what an earlier set
did not use: judgments not in it (by JuDGE ``text_id`` and by text), lawyer-llama consultations it did not
draw (the single-turn file's other lines and the multi-turn dialogues, :data:`MULTI_TURN_FILE`), another
seed, and corruptions preferably made from articles its positive rows did not use.
"""

from __future__ import annotations

import ast
import hashlib
import json
import random
import re
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from .database import Article, Law, StatuteDB
from .names import CIVIL_CODE_PARTS, CIVIL_CODE_SUCCESSOR_PARTS, civil_code_part_of
from .numerals import chinese_to_int, int_to_chinese

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
_ISSUER = (
    r"(?:最高人民法院|最高人民检察院|公安部|司法部)(?:、?(?:最高人民法院|最高人民检察院|公安部|司法部))*"
)
_NAME_RE = re.compile(
    rf"(?P<issuer>{_ISSUER})?《(?P<title>[^《》\n]{{2,100}})》"
    r"|(?<=依照|根据|依据|按照|违反|触犯|适用)(?P<bare>刑法|刑事诉讼法|民法典)(?=第)"
)
_ART_RE = re.compile(rf"第({_N})条(?:之({_N}))?")
_LIST_ART_RE = re.compile(rf"第?({_N})(?:条(?:之({_N}))?|(?=第{_N}款))")  # courts drop 第, or 条
_MULTI_ART_RE = re.compile(rf"第{_N}(?:、第?{_N})+条(?!之)")
_QUOTE_AFTER_RE = re.compile(r"\s*(?:的?规定)?\s*[：:]\s*[“\"「]([^“”\"」]{4,600})[”\"」]")
_LABEL_RE = re.compile(r"[^\s、，。；《第：:“”\"（）()]{2,12}?(?=\s*[、，]\s*(?:第|《)|\s*(?:的|之)规定)")
_PARA_RE = re.compile(rf"\s*第?({_N})(?:[、，和及](?:第)?{_N})*款")
_ASIDE_RE = re.compile(
    r"\s*[（(［【\[][^（）()［］【】\[\]\d一二三四五六七八九十]{1,16}[)）］】\]]"
)  # 第二百四十五条（非法侵入住宅罪）
_ITEM_RE = re.compile(rf"\s*(?:第\s*[（(]?{_N}[)）]?\s*项|[（(]{_N}[)）]项?)")
_JOIN_RE = re.compile(r"\s*(?:、|，|,|及|和|以及|与)\s*")
_APPENDIX_RE = re.compile(
    r"(?:附(?:件|录)?\s*[：:]?\s*(?:[^。，；《\s]{0,24}(?:法律|法条|条文|条款|法规|规定)[^。，；《\s]{0,14}\s*[：:]?)?"
    r"|[^。，；《\s]{0,24}(?:条文|条款|法条)[^。，；《\s]{0,14}\s*[：:]?)"
    r"\s*(?=(?:[一二三四五六七八九十\d]+[、.．])?\s*《)"
)
_VERDICT_RE = re.compile(r"判决如下|裁定如下")
_NUMBERING_RE = re.compile(
    r"(?:\d+|[一二三四五六七八九十]+)[、.．]\s*$|[（(](?:\d+|[一二三四五六七八九十]+)[)）]\s*$"
)
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


# -- the court's citations, read independently of the checker's extractor --------------------------


@dataclass
class Mention:
    """One article a text cites: the law as written, the number, and the text quoted for it (if any)."""

    law: str
    number: int
    suffix: int
    start: int  # where the law name (or, when unnamed, the article number) starts
    end: int  # where the article label and its 款/项 end
    paragraph: int | None = None
    header: bool = False  # an entry of the judgment's appendix of articles
    content: str | None = None
    entry_end: int | None = None  # the end of an appendix entry (its content included)
    at: int = -1  # where the article label itself starts

    def __post_init__(self) -> None:
        if self.at < 0:
            self.at = self.start


def _parse_list(text: str, at: int, law: str, start: int) -> tuple[list[Mention], int]:
    """The articles ``第X条、第Y条第一款第（二）项…`` from ``at``; returns them and where the list ends.

    Takes the variants courts write: ``三百零七条之一`` (no 第), ``第二十五、二十六条``, ``第六十七第三款``,
    ``第三百四十七条一、四款``, ``第二百四十五条（非法侵入住宅罪）``, ``第一百三十三条之一危险驾驶罪、…``,
    and a quotation after an article (``第五十二条：“判处罚金，……”、``), kept as its content.

    >>> [(m.number, m.paragraph) for m in _parse_list("第二十五、二十六条，第六十七第三款之规定", 0, "刑法", 0)[0]]
    [(25, None), (26, None), (67, 3)]
    """
    mentions: list[Mention] = []
    pos = at
    while True:
        multi = _MULTI_ART_RE.match(text, pos)
        if multi:
            numbers = [chinese_to_int(n) for n in re.findall(_N, multi.group(0).replace("条", ""))]
            for n in numbers:
                mentions.append(Mention(law, n, 0, start if not mentions else multi.start(), multi.end()))
            pos = multi.end()
        else:
            m = _LIST_ART_RE.match(text, pos)
            if m is None:
                break
            mention = Mention(
                law,
                chinese_to_int(m.group(1)),
                chinese_to_int(m.group(2)) if m.group(2) else 0,
                start if not mentions else m.start(),
                m.end(),
                at=m.start(),
            )
            pos = m.end()
            while True:  # 款 and 项, also after a separator: 第七十二条第一款、第三款
                p = _PARA_RE.match(text, pos)
                if p:
                    mention.paragraph = mention.paragraph or chinese_to_int(p.group(1))
                    pos = p.end()
                    continue
                q = _ITEM_RE.match(text, pos) or _ASIDE_RE.match(text, pos)
                if q:
                    pos = q.end()
                    continue
                j = _JOIN_RE.match(text, pos)
                if j and (_PARA_RE.match(text, j.end()) or _ITEM_RE.match(text, j.end())):
                    if not _LIST_ART_RE.match(text, j.end()):
                        pos = j.end()
                        continue
                break
            mention.end = pos
            quote = _QUOTE_AFTER_RE.match(text, pos)
            while quote:  # 第七十三条第二款：“……”、第三款：“……”
                mention.content = (
                    quote.group(1) if mention.content is None else mention.content + "……" + quote.group(1)
                )
                pos = quote.end()
                j = _JOIN_RE.match(text, pos)
                p = _PARA_RE.match(text, j.end()) if j else None
                quote = _QUOTE_AFTER_RE.match(text, p.end()) if p else None
            if mention.content is None:
                label = _LABEL_RE.match(text, pos)
                if label and not label.group(0).startswith(("之", "的", "规")):
                    pos = label.end()
            mentions.append(mention)
        j = _JOIN_RE.match(text, pos)
        if j and (_LIST_ART_RE.match(text, j.end()) or _MULTI_ART_RE.match(text, j.end())):
            pos = j.end()
            continue
        break
    return mentions, pos


def _is_header(text: str, start: int, appendix_start: int) -> bool:
    """An appendix entry begins here: at the appendix's start, after a break, a full stop or a list number."""
    before = text[appendix_start:start]
    if not before.strip():
        return True
    if before[-1].isspace():
        return True
    before = _NUMBERING_RE.sub("", before.rstrip()).rstrip()
    return not before or before[-1] in '。；;：:”"…)）】］]》'


def judgment_mentions(text: str) -> list[Mention]:
    """Every article a judgment cites by name (``依照《中华人民共和国刑法》第…条之规定``, ``最高人民法院、
    最高人民检察院《关于…的解释》第一条``, ``依照刑法第X条``) and every entry of its appendix of articles
    (``附：相关法律条文 《中华人民共和国刑法》 第二百六十四条盗窃公私财物…``), with the text each entry quotes.

    >>> [(m.law, m.number, m.suffix, m.paragraph) for m in judgment_mentions(
    ...     "依照《中华人民共和国刑法》第一百三十三条之一第一款第（二）项，第六十七条第三款之规定")]
    [('中华人民共和国刑法', 133, 1, 1), ('中华人民共和国刑法', 67, 0, 3)]
    """
    verdict = _VERDICT_RE.search(text)
    appendix = _APPENDIX_RE.search(text, verdict.end() if verdict else 0)
    appendix_start = appendix.start() if appendix else len(text)
    mentions: list[Mention] = []
    taken: set[int] = set()
    for m in _NAME_RE.finditer(text):
        law = m.group("bare") or (m.group("issuer") or "") + m.group("title")
        after = m.end()
        gap = re.match(r"[\s的：:]*", text[after:])
        found, _end = _parse_list(text, after + gap.end(), law, m.start())
        for f in found:
            f.header = f.start >= appendix_start and _is_header(text, f.start, appendix_start)
            taken.add(f.start if f is not found[0] else after + gap.end())
        if found:
            taken.add(after + gap.end())
        mentions.extend(found)
    if appendix:  # unnamed entries of the appendix continue the law named last
        names = [
            (m.start(), (m.group("issuer") or "") + (m.group("title") or m.group("bare") or ""))
            for m in _NAME_RE.finditer(text, appendix_start)
        ]
        for a in _ART_RE.finditer(text, appendix_start):
            if a.start() in taken or not _is_header(text, a.start(), appendix_start):
                continue
            law = next((n for s, n in reversed(names) if s < a.start()), None)
            if law is None:
                continue
            found, _end = _parse_list(text, a.start(), law, a.start())
            for f in found:
                f.header = f is found[0] or _is_header(text, f.start, appendix_start)
                taken.add(f.start)
            mentions.extend(found)
    mentions.sort(key=lambda x: x.start)
    # An appendix entry's content runs to the next entry (its law name or list number included).
    headers = [m for m in mentions if m.header]
    for i, h in enumerate(headers):
        nxt = headers[i + 1].start if i + 1 < len(headers) else len(text)
        if i + 1 < len(headers) and headers[i + 1].start < h.end:
            continue
        body = text[h.end : nxt]
        cut = _NUMBERING_RE.search(body.rstrip())
        if cut:
            body = body.rstrip()[: cut.start()]
        # a law name that opens the next entry belongs to it
        name_tail = re.search(r"《[^《》]{2,100}》[\s：:]*(?:相关条文|有关条文)?[\s：:]*$", body)
        if name_tail:
            body = body[: name_tail.start()]
        later_in_list = any(o.header and h.end <= o.start < h.end + 3 for o in headers[i + 1 :])
        content = re.sub(r"^[\s：:]+", "", body).rstrip()
        if content and not later_in_list and len(plain(content)) >= 4:
            h.content = content
            h.entry_end = h.end + len(body.rstrip())
    return mentions


def _article_in(db: StatuteDB, key: str, number: int, suffix: int, as_of: str | None) -> Article | None:
    law = version_at(db, key, as_of)
    return db.article(law, number, suffix) if law is not None else None


def judgment_row(db: StatuteDB, text: str, as_of: str | None) -> tuple[str, list[dict], list[dict], int]:
    """The row's text (appendix entries whose quote is not the article's text removed), its expected and
    excluded citations, and how many entries were removed."""
    mentions = judgment_mentions(text)
    by_key: dict[tuple[str, int, int], list[Mention]] = {}
    excluded: dict[tuple[str, int, int], dict] = {}
    drop: list[tuple[int, int]] = []
    for m in mentions:
        res = db.resolve(m.law)
        ident = (res.key or (res.repeal.key if res.repeal else m.law), m.number, m.suffix)
        why = None
        if res.key is None:
            why = (
                "repealed law: the database holds no text of it"
                if res.repeal
                else "law not in the statute database"
            )
        elif res.repeal is not None:
            why = "law no longer in force"
        else:
            art = _article_in(db, res.key, m.number, m.suffix, as_of)
            if art is None:
                why = "no such article in the version in force then (or the oldest the database holds)"
            elif m.content is not None and not _content_is_real(db, res.key, m, as_of):
                if m.header and m.entry_end is not None:  # the entry goes, the law's name stays
                    drop.append((m.at, m.entry_end))
                    continue
                why = "the quoted text is not the article's text in any version the database holds"
        if why:
            excluded.setdefault(ident, {"law": m.law, "article": m.number, "suffix": m.suffix, "reason": why})
        else:
            by_key.setdefault(ident, []).append(m)
    for ident in excluded:
        by_key.pop(ident, None)
    # a mention inside a removed entry is gone from the text (an entry can run on into other text)
    for ident, ms in list(by_key.items()):
        ms = [m for m in ms if not any(s <= m.start < e for s, e in drop)]
        if ms:
            by_key[ident] = ms
        else:
            del by_key[ident]
    kept = _cut(text, drop)
    expected = []
    for (key, number, suffix), ms in by_key.items():
        content = [m for m in ms if m.content is not None]
        current = db.article(db.current(key), number, suffix)
        if content:
            verdict = (
                "verified"
                if current is not None and all(contained(m.content, current.text) for m in content)
                else "amended_since"
            )
        else:
            verdict = "no_content" if current is not None else "amended_since"
        expected.append(
            _expected(
                ms[0].law,
                key,
                number,
                suffix,
                "not_hallucinated",
                verdict,
                paragraph=ms[0].paragraph,
                mentions=len(ms),
                content=bool(content),
            )
        )
    return kept, expected, list(excluded.values()), len(drop)


def _content_is_real(db: StatuteDB, key: str, m: Mention, as_of: str | None) -> bool:
    for law in db.versions(key):
        art = db.article(law, m.number, m.suffix)
        if art is not None and contained(m.content or "", art.text):
            return True
    return False


def _cut(text: str, spans: list[tuple[int, int]]) -> str:
    out, at = [], 0
    for s, e in sorted(spans):
        if s < at:
            continue
        out.append(text[at:s])
        at = e
    out.append(text[at:])
    return "".join(out)


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


def judgment_rows(
    db: StatuteDB, judgments: Iterable[tuple[str, str | None, dict]]
) -> tuple[list[dict], dict]:
    """Rows of the judgment style from (full text, as_of, source) triples (:func:`judgment_row` each)."""
    rows, stats = [], {"judgments": 0, "rows": 0, "expected": 0, "excluded": 0, "entries_removed": 0}
    for full, as_of, source in judgments:
        stats["judgments"] += 1
        text, expected, excluded, removed = judgment_row(db, full, as_of)
        stats["entries_removed"] += removed
        stats["excluded"] += len(excluded)
        if not expected:
            continue
        source = {**source, "appendix_entries_removed": removed}
        rows.append(negative_row(len(rows) + 1, "judgment", text, as_of, expected, excluded, source))
        stats["expected"] += len(expected)
    stats["rows"] = len(rows)
    return rows, stats


def negative_judgment(
    db: StatuteDB, judge_rows: Iterable[dict], judge_path: str = JUDGE_PATH
) -> tuple[list[dict], dict]:
    """Rows of the judgment style from JuDGE's judgments (``text_id``, ``fd``: the full judgment)."""
    source = {"repository": JUDGE_REPO, "commit": JUDGE_COMMIT, "path": judge_path}
    return judgment_rows(
        db,
        (
            (full, written_on(full), {**source, "text_id": src["text_id"]})
            for src in judge_rows
            for full in (src["fd"].strip(),)
        ),
    )


# -- answer style --------------------------------------------------------------------------------

_LAWS_ENTRY = re.compile(
    rf"^《(?P<name>[^》]+)》(?P<label>第(?P<num>{_N})条(?:之(?P<suf>{_N}))?)[：:]\s*(?P<text>.+)$", re.S
)
_CITING = re.compile(r"第.{1,10}条|《|》|民法典|法律规定|规定|法条|条款")
_SENTENCE = re.compile(r"[^。！？\n]+[。！？]?")


@dataclass
class Source:
    """A real article, as the pool of public articles holds it."""

    article: Article
    written: str = ""  # the law's name as the source wrote it

    @property
    def key(self) -> str:
        return self.article.law.key


def paragraphs(article_text: str) -> list[str]:
    """The 款 of an article: its lines, each item line ``（一）…`` joined to the 款 it belongs to.

    >>> paragraphs("有下列情形之一的：\\n（一）甲；\\n（二）乙。\\n前款规定。")
    ['有下列情形之一的：\\n（一）甲；\\n（二）乙。', '前款规定。']
    """
    out: list[str] = []
    for line in article_text.split("\n"):
        if out and re.match(r"^\s*[（(][一二三四五六七八九十]+[)）]", line):
            out[-1] += "\n" + line
        elif line.strip():
            out.append(line)
    return out


def sentences(text: str) -> list[str]:
    return [s for s in (m.group().strip() for m in _SENTENCE.finditer(text)) if s]


def _part(rng: random.Random, text: str) -> str:
    """A contiguous part of an article for a quote: all of it, one 款, or one sentence of some length."""
    choice = rng.random()
    paras = paragraphs(text)
    if choice < 0.4 or len(paras) == 1 and len(sentences(text)) == 1:
        return text
    if choice < 0.7 and len(paras) > 1:
        return rng.choice(paras)
    long = [s for s in sentences(text) if len(plain(s)) >= MIN_QUOTE]
    return rng.choice(long) if long else text


def _short(law: Law) -> str:
    return law.name[len(PRC) :] if law.name.startswith(PRC) else law.name


def _cn(n: int, suffix: int = 0) -> str:
    return int_to_chinese(n) + (f"条之{int_to_chinese(suffix)}" if suffix else "条")


def _ar(n: int, suffix: int = 0) -> str:
    return f"{n}" + (f"条之{int_to_chinese(suffix)}" if suffix else "条")


def _cite(
    rng: random.Random,
    law: Law,
    number: int,
    suffix: int,
    quote: str | None,
    *,
    part: str | None = None,
    forms: tuple[str, ...] | None = None,
) -> tuple[str, str]:
    """A citation of ``law`` art. ``number`` in one of the forms answers use, with ``quote`` (or none)."""
    full, short = (n.replace("《", "〈").replace("》", "〉") for n in (law.name, _short(law)))
    book = civil_code_part_of(number) if law.key == "民法典" else None
    if quote is None:
        bare = (
            "具体可参见《{s}》第{c}的相关规定。",
            "这一点在《{f}》第{c}中有明确规定。",
            "可以依据{s}第{a}主张权利。",
            "相关依据为《{s}》第{c}。",
        )
        form = rng.choice(bare)
        return "bare", form.format(s=short, f=full, c=_cn(number, suffix), a=_ar(number, suffix))
    q = quote.strip()
    options = {
        "colon": f"《{short}》第{_cn(number, suffix)}：{q}",
        "quoted": f"根据《{full}》第{_cn(number, suffix)}规定：“{q}”",
        "arabic": f"《{short}》第{_ar(number, suffix)}规定，{q}",
        "book": f"《{short}》{book}第{_cn(number, suffix)}规定：{q}"
        if book
        else f"《{full}》第{_ar(number, suffix)}规定：{q}",
        "paragraph": f"《{full}》第{_cn(number, suffix)}第{int_to_chinese(_paragraph_no(part, q))}款规定：“{q}”"
        if part is not None and _paragraph_no(part, q)
        else f"依据《{short}》第{_cn(number, suffix)}：“{q}”",
        "unbracketed": f"{short}第{_ar(number, suffix)}明确规定：“{q}”",
    }
    name = rng.choice(forms or tuple(options))
    return name, options[name]


def _paragraph_no(article_text: str | None, quote: str) -> int | None:
    if article_text is None:
        return None
    paras = paragraphs(article_text)
    if len(paras) < 2:
        return None
    for i, p in enumerate(paras, 1):
        if p.strip() == quote.strip():
            return i
    return None


def _plain_sentences(response: str) -> list[str]:
    return [s for s in sentences(response) if not _CITING.search(s) and len(s) >= 8]


def negative_answer(
    db: StatuteDB, counsel_rows: list[dict], rng: random.Random
) -> tuple[list[dict], dict, set[int]]:
    """Rows of the answer style; also the indices of the lawyer-llama rows used (the positive control
    takes its prose from the others)."""
    stats = {
        "consultations": len(counsel_rows),
        "laws_entries": 0,
        "entries_real": 0,
        "entries_kept": 0,
        "rows": 0,
        "expected": 0,
    }
    usable: list[tuple[int, list[tuple[Source, str]]]] = []
    for i, row in enumerate(counsel_rows):
        kept = []
        for entry in row.get("laws") or []:
            stats["laws_entries"] += 1
            m = _LAWS_ENTRY.match(entry.strip())
            if not m:
                continue
            res = db.resolve(m.group("name"))
            if res.key is None or res.repeal is not None:
                continue
            number = chinese_to_int(m.group("num"))
            suffix = chinese_to_int(m.group("suf")) if m.group("suf") else 0
            art = db.article(db.current(res.key), number, suffix)
            if art is None or not contained(m.group("text"), art.text):
                continue
            if any(s.article is art for s, _e in kept):
                continue
            kept.append((Source(art, m.group("name")), entry.strip()))
        stats["entries_real"] += len(kept)  # entries whose article exists and whose text is its text
        if kept:
            usable.append((i, kept))
    chosen = sorted(rng.sample(range(len(usable)), min(ANSWER_ROWS, len(usable))))
    rows, used = [], set()
    for c in chosen:
        i, kept = usable[c]
        used.add(i)
        prose = _plain_sentences(counsel_rows[i].get("response", ""))
        paras, expected = [], {}
        if prose:
            paras.append("".join(prose[:2]))
        bare_list = len(kept) >= 2 and rng.random() < 0.3
        for j, (src, entry) in enumerate(kept):
            art = src.article
            stats["entries_kept"] += 1  # entries of the rows drawn
            if bare_list and j == len(kept) - 1:
                continue
            if rng.random() < 0.15:
                form, cite = _cite(rng, art.law, art.number, art.suffix, None)
                verdict = "no_content"
            elif rng.random() < 0.25:
                form, cite, verdict = "laws_field", entry, "verified"
            else:
                part = _part(rng, art.text)
                form, cite = _cite(rng, art.law, art.number, art.suffix, part, part=art.text)
                verdict = "verified"
            paras.append(cite)
            _add(expected, src, verdict, form)
        if bare_list:
            a, b = kept[-2][0].article, kept[-1][0].article
            paras.append(
                f"此外，《{_short(a.law)}》第{_cn(a.number, a.suffix)}、第{_cn(b.number, b.suffix)}也与您的问题相关。"
            )
            _add(expected, kept[-2][0], "no_content", "bare_list")
            _add(expected, kept[-1][0], "no_content", "bare_list")
        if len(prose) > 2:
            paras.append(prose[-1])
        source = {
            "file": counsel_rows[i].get("_file", LAWYER_LLAMA_FILE),
            "line": counsel_rows[i].get("_line", i + 1),
        }
        rows.append(
            negative_row(len(rows) + 1, "answer", "\n".join(paras), None, list(expected.values()), [], source)
        )
        stats["expected"] += len(expected)
    stats["rows"] = len(rows)
    return rows, stats, used


def _add(expected: dict, src: Source, verdict: str, form: str) -> None:
    art = src.article
    ident = (art.law.key, art.number, art.suffix)
    old = expected.get(ident)
    if old is None:
        expected[ident] = _expected(
            art.law.name, art.law.key, art.number, art.suffix, "not_hallucinated", verdict, forms=[form]
        )
    else:
        old["forms"].append(form)
        if verdict == "verified":
            old["verdict"] = "verified"


# -- positive control: corruptions ---------------------------------------------------------------

SWAPS: dict[str, tuple[tuple[str, str], ...]] = {
    "should_may": (("应当", "可以"), ("可以", "应当")),
    "above_below": (("以上", "以下"), ("以下", "以上")),
    "drink_drunk": (("醉酒", "饮酒"), ("饮酒", "醉酒")),
    "must_not_removed": (("不得", ""),),
}
_AMOUNT = re.compile(
    r"(?<![第（(])([零一二三四五六七八九十百千万两]+|\d+)(周岁|年|个月|日|天|小时|元|万元|倍|次|人)"
)


@dataclass
class Corruption:
    """A corrupted quote: what it is, the text cited, and what it was made from."""

    kind: str
    quote: str
    source: Article
    detail: dict = field(default_factory=dict)


def replace_at(text: str, at: int, old: str, new: str) -> str:
    """``text`` with the ``old`` that starts at ``at`` replaced by ``new``; everything else unchanged.

    >>> replace_at("处三年以上七年以下有期徒刑", 3, "以上", "以下")
    '处三年以下七年以下有期徒刑'
    """
    if text[at : at + len(old)] != old:
        raise ValueError(f"{old!r} is not at {at} of {text!r}")
    return text[:at] + new + text[at + len(old) :]


def change_number(text: str, at: int, rng: random.Random) -> tuple[str, str, str]:
    """``text`` with the number-with-unit (``三年``, ``一千元``, ``十五日``) that starts at ``at`` changed to
    another value (doubled, tripled, one more or less, five more; seeded). Returns the new text and the
    number as written before and after.

    >>> change_number("处三年以下有期徒刑", 1, random.Random(0))[1:]
    ('三', '八')
    """
    m = _AMOUNT.match(text, at)
    if m is None:
        raise ValueError(f"no number with a unit at {at} of {text!r}")
    raw = m.group(1)
    value = chinese_to_int(raw)
    choices = sorted(
        v for v in {value * 2, value + 1, value - 1, value * 3, value + 5} if v != value and v > 0
    )
    new_value = rng.choice(choices)
    new = str(new_value) if raw.isdigit() else int_to_chinese(new_value)
    return text[: m.start(1)] + new + text[m.end(1) :], raw, new


#: A clause ``<subject>的，<consequence>``: the consequence starts with what the law does or allows.
_CLAUSE_RE = re.compile(
    r"^(.{3,80}的)，((?:处|由|依照|依法|给予|应当|可以|不得|承担|并处|责令|吊销|没收|构成|免除|从重|从轻|减轻|视为|属于|是).{3,})$"
)


def splice_clauses(article_text: str) -> list[tuple[str, str, str]]:
    """Every splice of one clause's subject (``…的``) with another clause's consequence, in one article.

    Returns ``(spliced, clause the subject is from, clause the consequence is from)``.

    >>> splice_clauses("饮酒后驾驶机动车的，处暂扣六个月机动车驾驶证。\\n醉酒驾驶机动车的，吊销机动车驾驶证。")[0][0]
    '饮酒后驾驶机动车的，吊销机动车驾驶证'
    """
    clauses = []
    for c in re.split(r"[。；;\n]", article_text):
        m = _CLAUSE_RE.match(c.strip())
        if m and not m.group(1).endswith("目的") and not m.group(2).endswith(("：", ":")):
            clauses.append((m.group(1), m.group(2), c.strip()))
    out = []
    for a in clauses:
        for b in clauses:
            if a[0] != b[0] and a[1] != b[1]:
                out.append((f"{a[0]}，{b[1]}", a[2], b[2]))
    return out


class Corrupter:
    """Builds corrupted quotes from a pool of real articles, checking each against every article of the law."""

    def __init__(self, db: StatuteDB, rng: random.Random):
        self.db = db
        self.rng = rng
        self._plain: dict[int, str] = {}

    def plain_of(self, art: Article) -> str:
        p = self._plain.get(art.index)
        if p is None:
            p = self._plain[art.index] = plain(art.text)
        return p

    def in_any_article(self, quote: str, key: str) -> bool:
        """The quote (normalised) is part of some article of any version of the law."""
        q = plain(quote)
        return any(
            q in self.plain_of(art) for law in self.db.versions(key) for art in self.db.articles_of(law)
        )

    def span_around(self, text: str, at: int) -> tuple[int, int]:
        """The span of the sentence of ``text`` holding position ``at`` (70 %), else of the whole text."""
        if self.rng.random() < 0.3:
            return 0, len(text)
        start = max(text.rfind(p, 0, at) for p in "。\n") + 1
        ends = [e for e in (text.find(p, at) for p in "。\n") if e >= 0]
        end = min(ends) + 1 if ends else len(text)
        while start < end and text[start].isspace():
            start += 1
        return start, end

    def word_swaps(self, kind: str, pool: list[Article]) -> list[Corruption]:
        out = []
        for art in pool:
            for old, new in SWAPS[kind]:
                at = art.text.find(old)
                while at >= 0:
                    start, end = self.span_around(art.text, at)
                    quote = art.text[start:end]
                    changed = replace_at(quote, at - start, old, new)
                    if len(plain(changed)) >= MIN_QUOTE and not self.in_any_article(changed, art.law.key):
                        out.append(
                            Corruption(kind, changed, art, {"from": old, "to": new, "quote_before": quote})
                        )
                    at = art.text.find(old, at + len(old))
        return out

    def number_changes(self, pool: list[Article]) -> list[Corruption]:
        out = []
        for art in pool:
            for m in _AMOUNT.finditer(art.text):
                start, end = self.span_around(art.text, m.start())
                quote = art.text[start:end]
                changed, before, after = change_number(quote, m.start() - start, self.rng)
                if len(plain(changed)) < MIN_QUOTE or self.in_any_article(changed, art.law.key):
                    continue
                out.append(
                    Corruption(
                        "number_changed",
                        changed,
                        art,
                        {"from": before + m.group(2), "to": after + m.group(2), "quote_before": quote},
                    )
                )
        return out

    def splices(self, pool: list[Article]) -> list[Corruption]:
        out = []
        for art in pool:
            for spliced, subject_of, consequence_of in splice_clauses(art.text):
                quote = spliced + "。"
                if len(plain(quote)) < MIN_QUOTE or self.in_any_article(quote, art.law.key):
                    continue
                out.append(
                    Corruption(
                        "splice", quote, art, {"subject_from": subject_of, "consequence_from": consequence_of}
                    )
                )
        return out

    def wrong_numbers(self, pool: list[Article]) -> list[Corruption]:
        out = []
        for art in pool:
            articles = self.db.articles_of(art.law)
            numbers = sorted({(a.number, a.suffix) for a in articles} - {(art.number, art.suffix)})
            if not numbers:
                continue
            near = [n for n in numbers if n[1] == 0 and 0 < abs(n[0] - art.number) <= 5]
            target = self.rng.choice(near) if near and self.rng.random() < 0.6 else self.rng.choice(numbers)
            quote = _part(self.rng, art.text)
            cited = self.db.article(art.law, *target)
            if len(plain(quote)) < MIN_QUOTE or cited is None or plain(quote) in self.plain_of(cited):
                continue
            if self._elsewhere(quote, art):
                continue
            out.append(
                Corruption(
                    "wrong_number", quote, art, {"cited_article": target[0], "cited_suffix": target[1]}
                )
            )
        return out

    def _elsewhere(self, quote: str, art: Article) -> bool:
        """The quote is also part of another article of the law (then no number is wrong for it)."""
        q = plain(quote)
        return any(q in self.plain_of(a) for a in self.db.articles_of(art.law) if a is not art)

    def wrong_laws(self, pool: list[Article]) -> list[Corruption]:
        out = []
        for art in pool:
            others = [k for k in OTHER_LAWS if k != art.law.key and self.db.current(k) is not None]
            key = self.rng.choice(others)
            target_law = self.db.current(key)
            target = self.rng.choice(self.db.articles_of(target_law))
            quote = _part(self.rng, art.text)
            if len(plain(quote)) < MIN_QUOTE or self.in_any_article(quote, key):
                continue
            out.append(
                Corruption(
                    "wrong_law",
                    quote,
                    art,
                    {"cited_law": key, "cited_article": target.number, "cited_suffix": target.suffix},
                )
            )
        return out

    def repealed(self, civil_pool: list[Article]) -> list[Corruption]:
        out = []
        for name, size in REPEALED_SIZES.items():
            parts = CIVIL_CODE_SUCCESSOR_PARTS[name]
            ranges = [CIVIL_CODE_PARTS[p] for p in parts]
            candidates = [a for a in civil_pool if any(lo <= a.number <= hi for lo, hi in ranges)]
            for art in candidates:
                quote = _part(self.rng, art.text)
                if len(plain(quote)) < MIN_QUOTE:
                    continue
                out.append(
                    Corruption(
                        "repealed",
                        quote,
                        art,
                        {"cited_law": name, "cited_article": self.rng.randint(1, size)},
                    )
                )
        return out

    def outdated(self) -> list[Corruption]:
        out = []
        for key in sorted({law.key for law in self.db.laws.values()}):
            versions = self.db.versions(key)
            if len(versions) < 2 or versions[0].level not in ("法律", "司法解释"):
                continue
            current = self.db.articles_of(versions[0])
            current_plain = [self.plain_of(a) for a in current]
            for old_law in versions[1:]:
                for old in self.db.articles_of(old_law):
                    p = self.plain_of(old)
                    if len(p) < 30 or any(p in c or c in p for c in current_plain):
                        continue
                    out.append(
                        Corruption(
                            "outdated_version",
                            old.text,
                            old,
                            {
                                "cited_law": key,
                                "old_version": old_law.version,
                                "current_version": versions[0].version,
                            },
                        )
                    )
        return out

    def no_such_articles(self, pool: list[Article]) -> list[Corruption]:
        out = []
        for art in pool:
            top = max(a.number for law in self.db.versions(art.law.key) for a in self.db.articles_of(law))
            quote = _part(self.rng, art.text)
            if len(plain(quote)) < MIN_QUOTE:
                continue
            out.append(
                Corruption("no_such_article", quote, art, {"cited_article": top + self.rng.randint(1, 60)})
            )
        return out


_LEADS = (
    "根据您描述的情况，",
    "关于这个问题，法律有明确规定。",
    "您好，针对您的咨询，相关法律依据如下。",
    "这种情况需要看法律的具体规定。",
    "",
)


def positive_rows(
    db: StatuteDB,
    pool: list[Article],
    civil_pool: list[Article],
    drink_pool: list[Article],
    rng: random.Random,
    avoid: frozenset[tuple] = frozenset(),
) -> tuple[list[dict], dict]:
    """The positive control: :data:`POSITIVE_SIZES` rows per corruption kind, each one corrupted citation.

    Corruptions of the articles in ``avoid`` (:func:`article_id`) are taken only when the others run out."""
    c = Corrupter(db, rng)
    candidates: dict[str, list[Corruption]] = {
        "wrong_number": c.wrong_numbers(pool),
        "wrong_law": c.wrong_laws(pool),
        "should_may": c.word_swaps("should_may", pool),
        "above_below": c.word_swaps("above_below", pool),
        "drink_drunk": c.word_swaps("drink_drunk", pool + drink_pool),
        "must_not_removed": c.word_swaps("must_not_removed", pool),
        "number_changed": c.number_changes(pool),
        "splice": c.splices(pool + drink_pool),
        "repealed": c.repealed(civil_pool),
        "outdated_version": c.outdated(),
        "no_such_article": c.no_such_articles(pool),
    }
    rows, stats = [], {}
    for kind, size in POSITIVE_SIZES.items():
        found = candidates[kind]
        picked = _spread(rng, found, size, by_law=kind == "outdated_version", avoid=avoid)
        stats[kind] = {"candidates": len(found), "rows": len(picked)}
        if avoid:
            stats[kind]["from_avoided_articles"] = sum(article_id(c.source) in avoid for c in picked)
        for corr in picked:
            rows.append(_positive_row(db, corr, rng, len(rows) + 1))
    return rows, stats


def _spread(
    rng: random.Random,
    found: list[Corruption],
    size: int,
    by_law: bool = False,
    avoid: frozenset[tuple] = frozenset(),
) -> list[Corruption]:
    """A seeded sample, at most one per source article (or law) while they last, then at most two, …

    Corruptions of an article in ``avoid`` come after the others (in each group, and groups made only of
    them after the other groups); with ``avoid`` empty the sample is the same as without it."""
    by_article: dict[object, list[Corruption]] = {}
    for corr in found:
        by_article.setdefault(corr.source.law.key if by_law else corr.source.index, []).append(corr)
    groups = [by_article[k] for k in sorted(by_article)]
    for g in groups:
        rng.shuffle(g)
    rng.shuffle(groups)
    if avoid:  # stable: the seeded order is kept within the fresh and within the avoided
        for g in groups:
            g.sort(key=lambda c: article_id(c.source) in avoid)
        groups.sort(key=lambda g: all(article_id(c.source) in avoid for c in g))
    picked: list[Corruption] = []
    depth = 0
    while len(picked) < size and any(len(g) > depth for g in groups):
        for g in groups:
            if len(g) > depth and len(picked) < size:
                picked.append(g[depth])
        depth += 1
    return picked


def article_id(art: Article) -> tuple[str, str, int, int]:
    """An article as a positive row's ``source`` names it: law key, version, number, suffix."""
    return (art.law.key, art.law.version, art.number, art.suffix)


def _positive_row(db: StatuteDB, corr: Corruption, rng: random.Random, n: int) -> dict:
    src = corr.source
    d = corr.detail
    if corr.kind in ("wrong_number", "no_such_article"):
        law, number, suffix = src.law, d["cited_article"], d.get("cited_suffix", 0)
        key, written = law.key, None
    elif corr.kind == "wrong_law":
        law = db.current(d["cited_law"])
        number, suffix, key, written = d["cited_article"], d["cited_suffix"], law.key, None
    elif corr.kind == "repealed":
        law, number, suffix = None, d["cited_article"], 0
        written = rng.choice((PRC + d["cited_law"], d["cited_law"]))
        res = db.resolve(written)
        if res.repeal is None or res.key is not None:
            raise ValueError(f"{written} is not recorded as repealed in the statute database")
        key = res.repeal.key
    elif corr.kind == "outdated_version":
        law = db.current(d["cited_law"])
        number, suffix, key, written = src.number, src.suffix, law.key, None
    else:
        law, number, suffix, key, written = src.law, src.number, src.suffix, src.law.key, None
    forms = ("colon", "quoted", "arabic", "unbracketed", "book")
    if law is not None:
        _form, cite = _cite(rng, law, number, suffix, corr.quote, forms=forms)
        written = law.name
    else:
        fake = Law(-1, written, key, "", "", "", None, False)
        _form, cite = _cite(rng, fake, number, suffix, corr.quote, forms=("colon", "quoted", "arabic"))
    text = rng.choice(_LEADS) + cite
    return {
        "id": f"pos-{n:04d}",
        "control": "positive",
        "style": "answer",
        "kind": corr.kind,
        "text": text,
        "as_of": None,
        "citations": [_expected(written, key, number, suffix, "hallucinated", POSITIVE_VERDICT[corr.kind])],
        "excluded": [],
        "source": {
            "law": src.law.name,
            "key": src.law.key,
            "version": src.law.version,
            "article": src.number,
            "suffix": src.suffix,
        },
        "corruption": {k: v for k, v in d.items() if k not in ("cited_law", "cited_article", "cited_suffix")},
    }


# -- building and freezing ----------------------------------------------------------------------


def read_jsonl_rows(path: Path) -> Iterator[dict]:
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                yield json.loads(line)


def article_pools(
    db: StatuteDB, judge_rows: list[dict], counsel_rows: list[dict]
) -> tuple[list[Article], list[Article], list[Article]]:
    """The public articles the corruptions are made from: the 刑法 articles JuDGE's judgments apply
    (field ``la``), the 民法典 articles lawyer-llama's consultations were given, and the 饮酒/醉酒 laws."""
    criminal_law = db.current("刑法")
    criminal = sorted({n for r in judge_rows for n in r.get("la", [])})
    pool = [a for n in criminal if (a := db.article(criminal_law, n, 0)) is not None]
    civil_code = db.current("民法典")
    civil_numbers = set()
    for row in counsel_rows:
        for entry in row.get("laws") or []:
            m = _LAWS_ENTRY.match(entry.strip())
            if m and db.resolve(m.group("name")).key == "民法典":
                civil_numbers.add(chinese_to_int(m.group("num")))
    civil = [a for n in sorted(civil_numbers) if (a := db.article(civil_code, n, 0)) is not None]
    drink = [a for k in DRINK_LAWS for a in db.articles_of(db.current(k)) if "酒" in a.text]
    return pool + civil, civil, drink


def build(
    db: StatuteDB, judge_path: Path, data_dir: Path, held_out: HeldOut | None = None
) -> tuple[dict[str, list[dict]], dict]:
    """All three files' rows and the build's statistics (a held-out set's: :func:`build_held_out`)."""
    if held_out is not None:
        return build_held_out(db, judge_path, data_dir, held_out)
    judge_rows = list(read_jsonl_rows(judge_path))
    counsel_rows = list(read_jsonl_rows(data_dir / LAWYER_LLAMA_FILE))
    rng = random.Random(SEED)
    judgment, j_stats = negative_judgment(db, judge_rows)
    answer, a_stats, _used = negative_answer(db, counsel_rows, rng)
    pool, civil, drink = article_pools(db, judge_rows, counsel_rows)
    positive, p_stats = positive_rows(db, pool, civil, drink, rng)
    stats = {
        "negative_judgment": j_stats,
        "negative_answer": a_stats,
        "positive": p_stats,
        "pool": {"articles": len(pool), "civil_code": len(civil), "drink_laws": len(drink)},
        "inputs": {
            "judge": {
                "repository": JUDGE_REPO,
                "commit": JUDGE_COMMIT,
                "path": JUDGE_PATH,
                "sha256": sha256(judge_path),
            },
            "lawyer_llama": {"path": LAWYER_LLAMA_FILE, "sha256": sha256(data_dir / LAWYER_LLAMA_FILE)},
            "statute_db": {"sha256": sha256(db.path), "source": db.meta.get("source", "")},
        },
    }
    return {
        "negative_judgment.jsonl": judgment,
        "negative_answer.jsonl": answer,
        "positive.jsonl": positive,
    }, stats


@dataclass(frozen=True)
class HeldOut:
    """A held-out set built by the same rules as ``exclude`` (an earlier, frozen set) from what it did not use."""

    exclude: Path  #: the earlier controls folder
    seed: int  #: replaces :data:`SEED`
    judgments: int = 500  #: judgments drawn (seeded) from those of ``--judge-data`` the earlier set lacks
    judge_path: str = ""  #: the judgment file's path in JuDGE's repository (default ``data/<file name>``)


def _key_text(text: str) -> str:
    """A judgment's opening, normalised: the same judgment in two files (or in a row, whose appendix
    entries may be cut) has the same key."""
    return plain(text)[:300]


def _used_by(folder: Path) -> dict[str, set]:
    """What the controls in ``folder`` used: judgments (text_id, opening), lawyer-llama (file, line) and
    the queries of those lines, the positive rows' source articles."""
    used: dict[str, set] = {"text_id": set(), "opening": set(), "counsel": set(), "articles": set()}
    for path in sorted(folder.glob("*.jsonl")):
        for row in read_jsonl_rows(path):
            src = row.get("source") or {}
            if row.get("style") == "judgment":
                used["text_id"].add(src.get("text_id"))
                used["opening"].add(_key_text(row["text"]))
            elif row.get("control") == "negative" and "file" in src:
                used["counsel"].add((src["file"], src["line"]))
            if row.get("control") == "positive":
                used["articles"].add((src["key"], src["version"], src["article"], src["suffix"]))
    return used


def _first_lawyer_turn(history: list[str]) -> str:
    for turn in history or []:
        if turn.startswith("[律师]"):
            return turn[len("[律师]") :].strip()
    return ""


def build_held_out(
    db: StatuteDB, judge_path: Path, data_dir: Path, held_out: HeldOut
) -> tuple[dict[str, list[dict]], dict]:
    """A held-out set: the same rules, sizes and row format as :func:`build`, from the rows ``held_out.exclude``
    did not use. Judgments: those of ``judge_path`` whose ``text_id`` and opening (:func:`_key_text`) the
    earlier set lacks, duplicates within the file dropped, ``held_out.judgments`` drawn (seeded); none left,
    no ``negative_judgment.jsonl``. Answers: the single-turn consultations the earlier set did not draw and
    the multi-turn dialogues (first lawyer turn as the answer), a query the earlier set drew dropped.
    Positive: the same kinds of public articles (JuDGE's ``la``, lawyer-llama's ``laws`` of both files, the
    饮酒/醉酒 laws), widened by :data:`CAIL_ARTICLES_FILE` and :data:`ZIXUN_FILE`; corruptions of the earlier
    positive rows' articles taken last."""
    used = _used_by(held_out.exclude)
    label = held_out.judge_path or f"data/{judge_path.name}"
    judge_all = list(read_jsonl_rows(judge_path))
    j_seen: set[str] = set()
    fresh, dropped = [], {"text_id_in_earlier": 0, "text_in_earlier": 0, "duplicate_in_file": 0}
    for r in judge_all:
        key = _key_text(r["fd"].strip())
        if r["text_id"] in used["text_id"]:
            dropped["text_id_in_earlier"] += 1
        elif key in used["opening"]:
            dropped["text_in_earlier"] += 1
        elif key in j_seen:
            dropped["duplicate_in_file"] += 1
        else:
            j_seen.add(key)
            fresh.append(r)
    rng = random.Random(held_out.seed)
    picked = sorted(rng.sample(range(len(fresh)), min(held_out.judgments, len(fresh))))
    judgment, j_stats = negative_judgment(db, [fresh[i] for i in picked], label)
    j_stats.update({"in_file": len(judge_all), "not_in_earlier": len(fresh), "dropped": dropped})

    single = list(read_jsonl_rows(data_dir / LAWYER_LLAMA_FILE))
    multi = list(read_jsonl_rows(data_dir / MULTI_TURN_FILE))
    used_queries = {
        single[line - 1].get("query", "").strip()
        for f, line in used["counsel"]
        if f == LAWYER_LLAMA_FILE and 0 < line <= len(single)
    }
    counsel, c_dropped = [], {"drawn_by_earlier": 0, "query_drawn_by_earlier": 0, "duplicate_query": 0}
    seen_q: set[str] = set()
    for name, rows in ((LAWYER_LLAMA_FILE, single), (MULTI_TURN_FILE, multi)):
        for i, r in enumerate(rows):
            q = r.get("query", "").strip()
            if (name, i + 1) in used["counsel"]:
                c_dropped["drawn_by_earlier"] += 1
            elif q in used_queries:
                c_dropped["query_drawn_by_earlier"] += 1
            elif q in seen_q:
                c_dropped["duplicate_query"] += 1
            else:
                seen_q.add(q)
                response = r["response"] if "response" in r else _first_lawyer_turn(r.get("history", []))
                counsel.append({**r, "response": response, "_file": name, "_line": i + 1})
    answer, a_stats, _used = negative_answer(db, counsel, rng)
    a_stats["dropped"] = c_dropped
    a_stats["from_multi_turn"] = sum(r["source"]["file"] == MULTI_TURN_FILE for r in answer)

    cail = [
        {"la": [int(n) for n in re.findall(r"刑法第(\d+)条", r.get("output", ""))]}
        for r in read_jsonl_rows(data_dir / CAIL_ARTICLES_FILE)
    ]
    zixun = [
        {"laws": ast.literal_eval(r["laws"]) if isinstance(r.get("laws"), str) else r.get("laws") or []}
        for r in read_jsonl_rows(data_dir / ZIXUN_FILE)
    ]
    pool, civil, drink = article_pools(db, judge_all + cail, single + multi + zixun)
    avoid = frozenset(used["articles"])
    positive, p_stats = positive_rows(db, pool, civil, drink, rng, avoid=avoid)
    stats = {
        "held_out_from": {"folder": held_out.exclude.name, "sums": read_sums(held_out.exclude)},
        "seed": held_out.seed,
        "negative_judgment": j_stats,
        "negative_answer": a_stats,
        "positive": p_stats,
        "pool": {
            "articles": len(pool),
            "civil_code": len(civil),
            "drink_laws": len(drink),
            "avoided_articles": len(avoid),
        },
        "inputs": {
            "judge": {
                "repository": JUDGE_REPO,
                "commit": JUDGE_COMMIT,
                "path": label,
                "sha256": sha256(judge_path),
            },
            "lawyer_llama": {"path": LAWYER_LLAMA_FILE, "sha256": sha256(data_dir / LAWYER_LLAMA_FILE)},
            "lawyer_llama_multi_turn": {
                "path": MULTI_TURN_FILE,
                "sha256": sha256(data_dir / MULTI_TURN_FILE),
            },
            "pool_only": {
                name: {"path": name, "sha256": sha256(data_dir / name)}
                for name in (CAIL_ARTICLES_FILE, ZIXUN_FILE)
            },
            "statute_db": {"sha256": sha256(db.path), "source": db.meta.get("source", "")},
        },
    }
    files = {"negative_judgment.jsonl": judgment, "negative_answer.jsonl": answer, "positive.jsonl": positive}
    if not judgment:
        del files["negative_judgment.jsonl"]
    return files, stats


def sha256(path: Path | str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def dumps(rows: list[dict]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows)


def read_sums(folder: Path) -> dict[str, str]:
    """``SHA256SUMS`` (``sha256sum`` format) as {file name: digest}; empty when there is none."""
    path = folder / SUMS
    if not path.is_file():
        return {}
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        parts = line.split()
        if len(parts) == 2:
            out[parts[1].lstrip("*")] = parts[0]
    return out


def write(folder: Path, files: dict[str, list[dict]], stats: dict, force: bool = False) -> dict[str, str]:
    """Write the controls and ``SHA256SUMS``; refuses to replace frozen files that differ unless ``force``.

    Returns {file name: sha256}. ``build_stats.json`` records what the build kept and dropped.
    """
    from ..files import write_atomically

    payloads = {name: dumps(rows).encode("utf-8") for name, rows in files.items()}
    digests = {name: hashlib.sha256(p).hexdigest() for name, p in payloads.items()}
    frozen = read_sums(folder)
    changed = [n for n in digests if n in frozen and frozen[n] != digests[n]]
    if changed and not force:
        raise FrozenError(
            f"{folder}: the frozen controls differ from this build ({', '.join(changed)}); they are not replaced "
            "(--force replaces them: say why in the README)"
        )
    for name, payload in payloads.items():
        write_atomically(folder / name, payload)
    write_atomically(
        folder / "build_stats.json", json.dumps(stats, ensure_ascii=False, indent=1, sort_keys=True) + "\n"
    )
    digests["build_stats.json"] = sha256(folder / "build_stats.json")
    write_atomically(folder / SUMS, "".join(f"{digests[n]}  {n}\n" for n in sorted(digests)))
    return digests


class FrozenError(RuntimeError):
    """A rebuild would change frozen controls."""
