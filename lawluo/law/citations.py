"""Find the statutes a free-text legal answer cites, with the content it attributes to each.

Handles the forms real answers use (examples from LawBench's consultation answers):

- ``《中华人民共和国民法典》第一千零七十九条`` and ``《民法典》第1079条第二款`` (Chinese or Arabic numerals,
  paragraph 款 and item 项 recorded but not required);
- ``民法典婚姻家庭编第1079条``, ``《民法典》婚姻家庭编第1079条``, ``《民法典 侵权责任编》第1165条``;
- names without brackets, found by matching the longest known law name before the article:
  ``根据公司法的第六十三条``, ``刑法第264条``, ``社会法类中的工会法的第40条``;
- back-references ``该法/同法/此法/上述法律第X条`` (to the last law cited) — ``本法第X条`` inside a
  statute's own text refers to that statute and is not a citation of the answer;
- lists and ranges ``第X条、第Y条``, ``第X条和第Y条``, ``第X条至第Y条`` (a range is expanded), and a bare
  ``第Y条`` later in the same passage, which continues the last law cited;
- unknown names that look like laws (``劳动者保护法第3条``), kept so that the checker can call them
  ``not_found``.

The content attributed to a citation is, in order of preference: a quotation in “…” that follows it
(after ``规定``/``：``), text after ``规定：`` up to the end of the paragraph, or — as in LawBench
reference answers (``第九十一条饮酒后驾驶机动车的，…``) — text that directly follows the article
number, up to the next citation; a restatement after ``规定，`` is content too (``stated``). Text that
*applies* the article is not (``applied``, issue 40): ``…之规定，判决如下``, ``符合/违反/依照…的规定，<conclusion>``,
a citation inside the writer's own clause (``依据民法典第1085条主张权利``), and a sentence that names the
client, a party or the court's findings (:data:`_CASE_WORDS`). The readings and how the UI names them are
the table of :mod:`lawluo.law.content_kinds`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import NamedTuple

from .database import Resolution, StatuteDB
from .names import PRC, name_key, split_part
from .numerals import NUMERAL, article_label, chinese_to_int

_ART = rf"第\s*({NUMERAL})\s*条(?:之({NUMERAL}))?"
_ARTICLE_RE = re.compile(_ART)
#: 第一款, and the lists courts write: 第一、三款, 第一款、第三款, 第二至四款 (the first 款 is kept).
_PARA_RE = re.compile(
    rf"\s*第({NUMERAL})(?:\s*[、，,和及至到]\s*第?\s*{NUMERAL})*\s*款"
    rf"(?:\s*[、和及]\s*第\s*{NUMERAL}(?:\s*[、和及至到]\s*第?\s*{NUMERAL})*\s*款)*"
)
_ITEM = rf"(?:第\s*[(（]?{NUMERAL}[)）]?|[(（]{NUMERAL}[)）])"
_ITEM_RE = re.compile(
    rf"\s*(?:第\s*[(（]?({NUMERAL})[)）]?\s*项|[(（]({NUMERAL})[)）]项?)"
    rf"(?:\s*[、和及至到]\s*{_ITEM}\s*项?)*"
)
_BRACKET_NAME_RE = re.compile(
    r"《([^《》\n]{1,90})》\s*([(（]\s*\d{4}\s*年?[^()（）\n]{0,8}[)）])?\s*"
    r"(总则编|总则|物权编|合同编|人格权编|婚姻家庭编|继承编|侵权责任编|附则)?\s*(?:的|之|中|里|中的)?\s*$"
)
#: The issuer written before the brackets: 最高人民法院、最高人民检察院《关于办理盗窃刑事案件…的解释》.
_ISSUER_RE = re.compile(
    r"(最高人民法院(?:[、和与]最高人民检察院)?(?:[、和与]公安部)?(?:[、和与]司法部)?|最高人民检察院|[“\"]?两高[”\"]?)\s*$"
)
_BACKREF_RE = re.compile(  # 同法, but not the end of 合同法 / 劳动合同法
    r"(该法|(?<!合)同法|此法|该条例|该解释|该规定|该办法|该法律|上述法律|前述法律|上述法规|该部法律)\s*(?:的)?\s*$"
)
_INTERNAL_RE = re.compile(
    r"(本法|本条例|本解释|本规定|本办法|本细则|本规则|本决定|本编|本章|本节|前款|本条)\s*(?:的)?\s*$"
)
_UNKNOWN_NAME_RE = re.compile(
    r"([\u4e00-\u9fff]{2,30}(?:法|条例|规定|解释|办法|细则|规则|通则|法典))\s*(?:的|中的|之)?\s*$"
)
_LEAD_VERBS = re.compile(
    r"^.*(?:根据|依据|依照|按照|参照|参考|适用|违反|符合|按|据|依|见|由于|对于|关于|涉及|类中的|中的|及|和|与)"
)
_JOIN_RE = re.compile(r"^\s*(、|，|,|和|及|以及|与|或|或者)\s*$")
_RANGE_RE = re.compile(r"^\s*(至|到|-|－|—|～|~)\s*$")
_LEAD_IN = re.compile(
    r"\s*(?:[（(][^（）()\n]{0,20}[）)])?"  # an aside: 第五十三条（条文全文附后）之规定
    r"\s*(?:的)?\s*(?:相关)?\s*(?:也|还|亦|同时|则|中|更|均|都)?\s*(?:明确)?(?:规定|指出|载明|写道|之规定)?\s*(?:[:：，,]\s*)?"
)
_OPEN_QUOTES = {"“": "”", "「": "」", "『": "』", '"': '"', "‘": "’"}
_NOT_CONTENT_START = re.compile(
    r"(?:的|之|则|即|亦|又|也|便|就|并|将|可|为|是|中规定|规定|中|里|所|等|，|,|。|；|;|、|）|\)|款|项|及|和|与|至|到|也|还|都|是|已|有关|相关)"
)
_PARAGRAPH_END = re.compile(
    r"\n\s*\n|\n(?=\s*(?:[-•*·]|\d+[.、]|[一二三四五六七八九十]+、|法律依据|律师|回答|答))"
    # a new line where the writer turns back to the client or the case
    r"|\n(?=\s*(?:同时|此外|另外|如果|若|建议|因此|所以|综上|总之|需要|请|您|你|我|本案|本院|被告人|公诉机关))"
)
_APPLICATION_START = re.compile(
    r"(?:您|你|我|他|她|它|其(?![中他余次])|贵|因此|所以|故(?!意)|本案|这|那|即|也就是说|如|若|在本|题中|小[明王张李红刚]|甲|乙|丙|该[公人员单]|"
    r"如果|只要|虽然|但|但是|可以看出|可见|可知|应该|需要|请|建议|一般|通常|具体|结合|针对|上述|以上|关于)"
)
#: The verb of the next citation, not content: 第二条、第八十二条，参照…《关于确立劳动关系有关事项的通知》
_NEXT_CITATION = re.compile(r"(?:参照|依照|依据|根据|按照|适用)[^，。；,;\n《]{0,20}《")
#: 第X条规定，但是，…除外 — a partial quote may begin with the statute's own proviso (其中，… likewise: 其
#: is the client only when it is not 其中/其他/其余/其次).
_STATUTE_BUT = re.compile(r"但是[，,]")
_COMMENTARY = re.compile(
    r"律师解答|律师分析|律师回答|律师提示|综上|因此|所以|由此可见|据此|回答[:：]|答[:：]|[，,]\s*(?:您|你)"
)
#: Words that only a text about a case uses — the client, the parties by name, the court's findings —
#: never a statute (which does say 原告, 被告人, 申请人, 本案, 其他他人): content that has one applies the
#: article to facts, it does not state it (issue 40).
_CASE_WORDS = re.compile(
    r"您|你|我(?!国)|(?<!其)他(?![人们])|她|贵[方司公单]|老板|对方|该公司|"
    r"(?:被告人|被告|原告|上诉人|申请人|罪犯)[\u4e00-\u9fff]{0,2}[某×xX＊*]|"
    r"判决如下|裁定如下|决定如下|犯罪事实清楚|证据确实|事实清楚|其行为已|本院|应予支持|不予支持|予以支持|"
    r"提请|指控|依法判处|追究其刑事责任|以[\u4e00-\u9fff、]{1,12}罪(?:追究|论处|定罪)"
)
#: 符合/违反/适用/依照《…》第N条的规定，<conclusion> applies the article; 根据…的规定，<rule> may state it.
_APPLYING_VERBS = frozenset({"符合", "违反", "适用", "依照", "属于", "触犯"})
_INTRO_RE = re.compile(r"(符合|违反|适用|依照|依据|根据|按照|参照|属于|触犯)[^，。；,;：:！？!?\n]{0,100}$")
_SENTENCE_END = re.compile(r"[。！!？?\n]")
_TAG = re.compile(r"</?[a-zA-Z][^<>\n]{0,40}>")
_MIN_CONTENT = 8
_MAX_CONTENT = 1500


@dataclass
class Citation:
    """One cited article. ``law`` is the canonical name when the database knows it, else as written."""

    law: str
    article: int
    suffix: int = 0
    written: str = ""
    key: str | None = None
    part: str | None = None
    paragraph: int | None = None
    item: int | None = None
    quoted: str | None = None
    content_kind: str = "none"  # lawluo.law.content_kinds: quoted, colon, inline, stated, applied, none
    start: int = 0
    end: int = 0
    backref: bool = False
    resolution: Resolution | None = field(default=None, repr=False)

    @property
    def label(self) -> str:
        return article_label(self.article, self.suffix)


@dataclass
class _Mention:
    start: int
    end: int
    number: int
    suffix: int
    paragraph: int | None = None
    item: int | None = None


class _LawName(NamedTuple):
    """A law named before an article number: as written, what it resolves to, how it was found
    (``bracket``, ``name``, ``backref`` or ``unknown``) and where the name starts in the text."""

    written: str
    resolution: Resolution | None
    how: str
    start: int


#: In a court's list the later articles may lack 第 (第一百七十八条、五百七十七条) or the first its 条
#: (第六百七十六、第六百八十八条).
_BARE_IN_LIST_RE = re.compile(rf"\s*、\s*({NUMERAL})\s*条(?:之({NUMERAL}))?")
_NO_TIAO_RE = re.compile(rf"第\s*({NUMERAL})()(?=\s*、\s*第\s*{NUMERAL}\s*条)")


def _mention_at(text: str, m: re.Match) -> _Mention | None:
    """The mention of match ``m`` (groups: number, suffix), with the 款 and 项 that follow it."""
    try:
        number = chinese_to_int(m.group(1))
        suffix = chinese_to_int(m.group(2)) if m.group(2) else 0
    except ValueError:
        return None
    end = m.end()
    mention = _Mention(m.start(1) if m.re is _BARE_IN_LIST_RE else m.start(), end, number, suffix)
    p = _PARA_RE.match(text, end)
    if p:
        mention.paragraph = chinese_to_int(p.group(1))
        end = p.end()
    it = _ITEM_RE.match(text, end)
    if it:
        mention.item = chinese_to_int(it.group(1) or it.group(2))
        end = it.end()
    mention.end = end
    return mention


def _mentions(text: str) -> list[_Mention]:
    out = []
    for m in sorted([*_ARTICLE_RE.finditer(text), *_NO_TIAO_RE.finditer(text)], key=lambda m: m.start()):
        mention = _mention_at(text, m)
        while mention is not None:
            out.append(mention)
            bare = _BARE_IN_LIST_RE.match(text, mention.end)  # 、五百七十七条 after it
            mention = _mention_at(text, bare) if bare else None
    return out


class CitationExtractor:
    """Finds citations in text, resolving law names against a :class:`StatuteDB`."""

    def __init__(self, db: StatuteDB):
        self.db = db

    # -- law names ---------------------------------------------------------------------------

    def _known_suffix(self, window: str) -> tuple[str, Resolution, int] | None:
        """The longest suffix of ``window`` that names a known or repealed law, with its offset."""
        window = re.sub(r"\s*(?:的|之|中的|中|里)?\s*$", "", window)
        limit = min(len(window), self.db.max_alias_len + 12)
        for n in range(limit, 1, -1):
            candidate = window[-n:]
            if candidate[0].isspace() or (
                candidate[0] in "的之中和与及、，,。；;:：（(" and not candidate.startswith(PRC)
            ):
                continue
            key = name_key(candidate)
            base, _part = split_part(key)
            if base in self.db.aliases or self.db.repeal(base):
                return candidate, self.db.resolve(candidate), len(window) - n
        return None

    def _law_before(self, text: str, start: int, floor: int) -> _LawName | None:
        """Find the law named right before position ``start`` (not before ``floor``)."""
        offset = max(floor, start - 120)
        window = text[offset:start]
        m = _BRACKET_NAME_RE.search(window)
        if m:
            written = m.group(1) + (m.group(2) or "") + (m.group(3) or "")
            resolution = self.db.resolve(written)
            issuer = _ISSUER_RE.search(text, max(0, offset + m.start() - 30), offset + m.start())
            if issuer and m.group(1).startswith("关于"):
                name = issuer.group(1).strip('“”"')
                name = "最高人民法院、最高人民检察院" if name == "两高" else re.sub(r"[和与]", "、", name)
                with_issuer = self.db.resolve(name + written)
                if with_issuer.key is not None or resolution.key is None:
                    return _LawName(name + written, with_issuer, "bracket", issuer.start())
            return _LawName(written, resolution, "bracket", offset + m.start())
        if _INTERNAL_RE.search(window):
            return None
        b = _BACKREF_RE.search(window)
        if b:
            return _LawName(b.group(1), None, "backref", offset + b.start(1))
        known = self._known_suffix(window)
        if known:
            return _LawName(known[0], known[1], "name", offset + known[2])
        u = _UNKNOWN_NAME_RE.search(window)
        if u:
            name = _LEAD_VERBS.sub("", u.group(1))
            if len(name) >= 3 and name not in {
                "法律",
                "法规",
                "规定",
                "解释",
                "办法",
                "司法解释",
                "法律规定",
            }:
                return _LawName(name, self.db.resolve(name), "unknown", offset + u.end(1) - len(name))
        return None

    # -- content ----------------------------------------------------------------------------

    @staticmethod
    def _content_after(
        text: str, end: int, stop: int, intro: str = "", embedded: bool = False
    ) -> tuple[str | None, str, int]:
        """The content attributed to a citation ending at ``end``; ``stop`` is the next citation;
        ``intro`` the verb that introduced the citation in its clause (依照, 根据, 符合…), if any, and
        ``embedded`` whether the writer's own words precede that verb in the clause (应当依照…规定，加倍支付…)."""
        lead = _LEAD_IN.match(text, end)
        pos = lead.end() if lead else end
        said = bool(lead and re.search(r"规定|指出|载明|写道|[:：]", lead.group(0)))
        para = _PARAGRAPH_END.search(text, pos)
        para_end = para.start() if para else len(text)
        new_law = text.find("《", pos)  # unquoted content never runs into the next law's name
        if new_law != -1:
            stop = min(stop, new_law)
        if pos < len(text) and text[pos] in _OPEN_QUOTES:
            close = _OPEN_QUOTES[text[pos]]
            j = text.find(close, pos + 1)
            if j == -1:
                j = min(para_end, pos + 1 + _MAX_CONTENT)
            return text[pos + 1 : j], "quoted", j + 1
        if said and lead and re.search(r"[:：]", lead.group(0)):
            j = min(stop, para_end, pos + _MAX_CONTENT)
            commentary = _COMMENTARY.search(text, pos, j)
            return text[pos : commentary.start() if commentary else j], "colon", j
        if (
            (not lead or not lead.group(0).strip())
            and pos < len(text)
            and re.match(r"[\u4e00-\u9fff（(]", text[pos])
        ):
            if _NOT_CONTENT_START.match(text, pos):
                return None, "none", end
            if intro:  # 可以依据民法典第1064条主张权利: the citation is inside the writer's own clause
                return None, "applied", end
            j = min(stop, para_end, pos + _MAX_CONTENT)
            commentary = _COMMENTARY.search(text, pos, j)
            return text[pos : commentary.start() if commentary else j], "inline", j
        if lead and re.search(r"[，,]", lead.group(0)):
            # 依照…第X条之规定，判决如下 / 根据…第X条，您可以… — the article is applied to the case, not
            # stated: nothing to compare.
            if (
                _NEXT_CITATION.match(text, pos)  # 第八十二条，参照《…》的有关规定: the next citation's verb
                or "之规定" in lead.group(0)
                or ("的规定" in lead.group(0) and intro in _APPLYING_VERBS)
                or embedded  # 应当依照…第二百六十条规定，加倍支付… (embedded implies a verb)
                or (_APPLICATION_START.match(text, pos) and not _STATUTE_BUT.match(text, pos))
            ):
                return None, "applied", end
            # 第X条规定，<what the statute says>。 — the content the answer attributes to the article.
            limit = min(stop, para_end, pos + _MAX_CONTENT)
            j = pos
            while j < limit:  # whole sentences, until the answer turns to the client or to reasoning
                sentence = _SENTENCE_END.search(text, j, limit)
                nxt = sentence.end() if sentence else limit
                if j > pos and (
                    _APPLICATION_START.match(text, j)
                    or re.match(r"\s*(?:根据|依据|依照|按照|此外|另外|同时|而|并且|总之)", text[j:nxt])
                ):
                    break
                j = nxt
            commentary = _COMMENTARY.search(text, pos, j)
            stated = text[pos : commentary.start() if commentary else j]
            if _CASE_WORDS.search(stated):  # 根据…第四十七条，公司应当按您的工作年限支付经济补偿
                return None, "applied", end
            return stated, "stated", j
        return None, "none", end

    # -- main ------------------------------------------------------------------------------

    def extract(self, text: str) -> list[Citation]:
        """Every statute citation in ``text``, in order, with its law resolved and its content read."""
        text = _TAG.sub(lambda m: " " * len(m.group()), text)  # <p> from scraped answers; keeps offsets
        mentions = _mentions(text)
        internal = _internal_flags(text, mentions)
        citations: list[Citation] = []
        last: Citation | None = None
        skip_until = 0  # inside the content of the previous citation
        prev_end = 0
        i = 0
        while i < len(mentions):
            m = mentions[i]
            if m.start < skip_until:
                i += 1
                continue
            found = self._law_before(text, m.start, prev_end if last else 0)
            if found and found.how == "backref" and last is None:
                i += 1
                continue
            law_info = _law_of(found, last, text[prev_end : m.start], internal[id(m)])
            if law_info is None:
                i += 1
                prev_end = m.end
                continue
            group, i = _listed(text, mentions, i)
            quoted, kind, content_end = self._content_of(text, mentions, i, internal, group)
            for cit in self._group_citations(law_info, group, quoted, kind):
                citations.append(cit)
                last = cit
            if quoted is not None:
                skip_until = content_end
            prev_end = max(group[-1].end, skip_until)
            i += 1
        return citations

    def _content_of(
        self, text: str, mentions: list[_Mention], i: int, internal: dict[int, bool], group: list[_Mention]
    ) -> tuple[str | None, str, int]:
        """The content after the group of articles ending at mention ``i``: quoted (or stated) text, its
        kind, and where it ends (:meth:`_content_after`); ``None`` for content too short to compare."""
        next_start = next((nxt.start for nxt in mentions[i + 1 :] if not internal[id(nxt)]), len(text))
        if next_start < len(text):
            # Unquoted content stops where the next citation's own law name begins: in
            # "《劳动合同法》第四十七条…，另参见刑法第133条之一" the content ends before 刑法, so
            # that 第133条之一 is read with its own law, not continued from the previous one.
            named = self._law_before(text, next_start, group[-1].end)
            if named is not None:
                next_start = named.start
        intro = _INTRO_RE.search(text, max(0, group[0].start - 110), group[0].start)
        title = text.rfind("《", 0, group[0].start)
        embedded = bool(
            intro
            and intro.start() > 0
            and (title == -1 or intro.start() < title)  # the verb, not 适用 inside the law's title
            and re.match(r"[\u4e00-\u9fff]", text[intro.start() - 1])
        )
        quoted, kind, content_end = self._content_after(
            text, group[-1].end, next_start, intro.group(1) if intro else "", embedded
        )
        if quoted is not None and len(re.sub(r"\W", "", quoted)) < _MIN_CONTENT:
            quoted, kind = None, "none"
        return quoted, kind, content_end

    def _group_citations(
        self,
        law_info: tuple[str, Resolution | None, str],
        group: list[_Mention],
        quoted: str | None,
        kind: str,
    ) -> list[Citation]:
        """One citation per article of the group; the content goes with the last (an applied reading, with
        each: 第A条、第B条之规定，判决如下)."""
        written, resolution, how = law_info
        out = []
        for k, g in enumerate(group):
            last_in_group = k == len(group) - 1
            cit = self._make(written, resolution, g, how)
            if last_in_group and quoted is not None:
                cit.quoted, cit.content_kind = quoted.strip(), kind
            elif kind == "applied":  # each of 第A条、第B条之规定，判决如下 is applied
                cit.content_kind = kind
            out.append(cit)
        return out

    def _make(self, written: str, resolution: Resolution | None, m: _Mention, how: str) -> Citation:
        key = resolution.key if resolution else None
        law_name = written
        if key and self.db.current(key):
            law_name = self.db.current(key).name
        elif resolution and resolution.repeal:
            law_name = resolution.repeal.name
        return Citation(
            law=law_name,
            article=m.number,
            suffix=m.suffix,
            written=written,
            key=key,
            part=resolution.part if resolution else None,
            paragraph=m.paragraph,
            item=m.item,
            start=m.start,
            end=m.end,
            backref=how in ("backref", "continued"),
            resolution=resolution,
        )


def extract_citations(text: str, db: StatuteDB) -> list[Citation]:
    """Every statute citation in ``text`` (see the module docstring for the forms recognised), names
    resolved against ``db``."""
    return CitationExtractor(db).extract(text)


def _internal_flags(text: str, mentions: list[_Mention]) -> dict[int, bool]:
    """Each mention (by ``id``) that refers to the quoted statute itself: 本法第五十条、第六十九条 inside a
    quoted article (the whole list)."""
    internal: dict[int, bool] = {}
    for k, m in enumerate(mentions):
        before = text[max(0, m.start - 6) : m.start]
        listed = (
            k > 0 and internal[id(mentions[k - 1])] and _JOIN_RE.match(text[mentions[k - 1].end : m.start])
        )
        internal[id(m)] = bool(_INTERNAL_RE.search(before) or listed)
    return internal


def _law_of(
    found: _LawName | None, last: Citation | None, between: str, internal: bool
) -> tuple[str, Resolution | None, str] | None:
    """The law a mention cites — (as written, its resolution, how it was found): the name before it, the
    previous citation's law (``该法``, or a bare article right after it), or ``None``."""
    if found and found.how == "backref":
        return (last.written, last.resolution, "backref")
    if found:
        return found.written, found.resolution, found.how
    if last is not None and not internal:
        if not re.search(r"[《》]", between) and "\n\n" not in between:
            return (last.written, last.resolution, "continued")
    return None


def _listed(text: str, mentions: list[_Mention], i: int) -> tuple[list[_Mention], int]:
    """Mention ``i`` with the ones listed after it (第X条、第Y条) or the range it opens (第X条至第Y条, every
    article between filled in); and the index of the group's last mention."""
    group = [mentions[i]]
    while i + 1 < len(mentions):
        nxt = mentions[i + 1]
        gap = text[group[-1].end : nxt.start]
        if _RANGE_RE.match(gap) and nxt.number >= group[-1].number and nxt.number - group[-1].number <= 30:
            lo = group[-1].number
            group.extend(_Mention(nxt.start, nxt.end, n, 0) for n in range(lo + 1, nxt.number))
            group.append(nxt)
            i += 1
        elif _JOIN_RE.match(gap):
            group.append(nxt)
            i += 1
        else:
            break
    return group, i
