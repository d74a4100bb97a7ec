"""The judgment-style negative control: the articles a court cites, read by a parser independent of the
checker (:func:`judgment_mentions`), and the rows made of them (:func:`judgment_row`)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from ..database import Article, StatuteDB
from ..numerals import chinese_to_int
from .common import (
    _N,
    JUDGE_COMMIT,
    JUDGE_PATH,
    JUDGE_REPO,
    _expected,
    contained,
    negative_row,
    plain,
    version_at,
    written_on,
)

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
