"""Law names as people write them, reduced to one lookup key.

``《中华人民共和国民法典》``, ``民法典``, ``《民法典 侵权责任编》`` and ``中华人民共和国民法典侵权责任编`` all
name the same law; answers also write ``〈〉`` inside titles, half-width brackets, stray spaces and
``最高人民法院、最高人民检察院`` with or without the ``、``. :func:`name_key` removes those differences
so that one dictionary lookup resolves a name; :func:`split_part` separates a 民法典 book (编).
"""

from __future__ import annotations

import re

PRC = "中华人民共和国"

#: The seven books (编) and the supplementary provisions of the Civil Code, with their article ranges.
CIVIL_CODE_PARTS: dict[str, tuple[int, int]] = {
    "总则编": (1, 204),
    "物权编": (205, 462),
    "合同编": (463, 988),
    "人格权编": (989, 1039),
    "婚姻家庭编": (1040, 1118),
    "继承编": (1119, 1163),
    "侵权责任编": (1164, 1258),
    "附则": (1259, 1260),
}

#: The Civil Code book(s) that took over the subject matter of each law it repealed (art. 1260). This
#: says where to look, not which article replaced which: the data holds no article correspondence table.
CIVIL_CODE_SUCCESSOR_PARTS: dict[str, tuple[str, ...]] = {
    "民法通则": ("总则编",),
    "民法总则": ("总则编",),
    "物权法": ("物权编",),
    "担保法": ("物权编", "合同编"),
    "合同法": ("合同编",),
    "婚姻法": ("婚姻家庭编",),
    "收养法": ("婚姻家庭编",),
    "继承法": ("继承编",),
    "侵权责任法": ("侵权责任编",),
}

_BRACKETS = str.maketrans(
    {"（": "(", "）": ")", "〔": "(", "〕": ")", "［": "(", "］": ")", "【": "(", "】": ")"}
)
_DROP = re.compile(r"[《》〈〉<>\"'“”‘’「」『』\s\u3000\u200b、,，·・]")
_PART_RE = re.compile(r"(总则编?|物权编|合同编|人格权编|婚姻家庭编|继承编|侵权责任编|附则)$")


#: How courts and lawyers abbreviate the issuers at the start of a name: 两高 is the two supreme organs.
_ISSUER_ABBREVIATIONS = (
    ("两高", "最高人民法院最高人民检察院"),
    ("最高法院", "最高人民法院"),
    ("最高法", "最高人民法院"),
    ("最高院", "最高人民法院"),
    ("最高检", "最高人民检察院"),
)
#: A document number written without brackets at the end: 婚姻家庭编解释一 → 婚姻家庭编解释(一).
_BARE_NUMBER = re.compile(r"(解释|规定)([一二三四五六七八九十])$")


def name_key(name: str) -> str:
    """Reduce a law name to its lookup key.

    >>> name_key("《中华人民共和国民法典》")
    '民法典'
    >>> name_key("最高人民法院关于适用〈中华人民共和国民法典〉婚姻家庭编的解释（一）")
    '最高人民法院关于适用民法典婚姻家庭编的解释(一)'
    >>> name_key("最高人民法院 最高人民检察院关于办理案件的解释")
    '最高人民法院最高人民检察院关于办理案件的解释'
    >>> name_key("两高《关于办理盗窃刑事案件适用法律若干问题的解释》"), name_key("婚姻家庭编解释一")
    ('最高人民法院最高人民检察院关于办理盗窃刑事案件适用法律若干问题的解释', '婚姻家庭编解释(一)')
    """
    key = _DROP.sub("", name.translate(_BRACKETS)).replace(PRC, "")
    for short, full in _ISSUER_ABBREVIATIONS:
        if key.startswith(short):
            key = full + key[len(short) :]
            break
    return _BARE_NUMBER.sub(r"\1(\2)", key)


def split_part(key: str) -> tuple[str, str | None]:
    """Split a Civil Code book off a name key: ``民法典侵权责任编`` → ``("民法典", "侵权责任编")``.

    >>> split_part("民法典总则"), split_part("公司法")
    (('民法典', '总则编'), ('公司法', None))
    """
    if key.startswith("民法典") and key != "民法典":
        m = _PART_RE.search(key[3:])
        if m and m.start() == 0:
            part = m.group(1)
            return "民法典", "总则编" if part.startswith("总则") else part
    return key, None


def civil_code_part_of(article: int) -> str | None:
    """The book of the Civil Code an article number belongs to."""
    for part, (lo, hi) in CIVIL_CODE_PARTS.items():
        if lo <= article <= hi:
            return part
    return None


_JUDICIAL_RE = re.compile(
    r"^最高人民(?:法院|检察院)(?:最高人民(?:法院|检察院))?关于(?:适用)?(?P<law>[^(]+?法典?)(?![院律庭官规])(?P<rest>.*?)的?(?P<kind>解释|规定)(?P<no>\([一二三四五六七八九十]+\))?$"
)
_REST_FILLER = re.compile(r"若干问题|若干|有关")
#: What the law part of _JUDICIAL_RE holds when the title is not "关于适用《某法》…" but "关于审理…适用法律…".
_NOT_A_LAW = re.compile(r"案件|审理|办理|依法|法院|执行|犯罪|问题|规定|解释|(?<!公)司法$|[非合违]法$")


def judicial_short_names(key: str) -> list[str]:
    """Short names people use for a judicial interpretation of one law, as keys.

    >>> judicial_short_names("最高人民法院关于适用民法典婚姻家庭编的解释(一)")
    ['民法典婚姻家庭编解释(一)', '民法典婚姻家庭编司法解释(一)', '婚姻家庭编解释(一)', '婚姻家庭编司法解释(一)']
    >>> judicial_short_names("最高人民法院关于适用公司法若干问题的规定(三)")
    ['公司法规定(三)', '公司法司法解释(三)', '公司法解释(三)']
    >>> judicial_short_names("最高人民法院关于适用民法典有关担保制度的解释")
    ['民法典担保制度解释', '民法典担保制度司法解释']
    """
    m = _JUDICIAL_RE.match(key)
    if not m:
        return []
    law, rest, kind, no = m.group("law"), m.group("rest"), m.group("kind"), m.group("no") or ""
    if _NOT_A_LAW.search(law) or re.search("解释|规定", m.group("rest")):
        return []
    rest = _REST_FILLER.sub("", rest).removesuffix("的")
    base = law + rest
    names = [f"{base}{kind}{no}", f"{base}司法解释{no}"]
    if kind == "规定":
        names.append(f"{base}解释{no}")
    if law == "民法典" and rest.endswith("编"):  # 婚姻家庭编解释(一): the book names the Code
        names += [f"{rest}{kind}{no}", f"{rest}司法解释{no}"]
    return names


_CASE_RE = re.compile(
    r"^(?:最高人民(?:法院|检察院))+(?:公安部|司法部|国家安全部)*关于(?:办理|审理)(?P<cases>.+?)案件"
    r"(?:适用|具体应用)?法律(?:若干|有关)?问题的(?P<kind>解释|规定|意见)(?P<no>\([一二三四五六七八九十]+\))?$"
)
_CASE_FILLER = re.compile(r"(?:的|等|刑事|民事|纠纷|犯罪)$")


def case_short_names(key: str) -> list[str]:
    """Short names for an interpretation of the cases it governs (``关于审理/办理…案件适用法律若干问题的解释``),
    as keys: the kind of case, with and without words like 刑事/纠纷, then 解释/规定/意见 (and 司法解释).

    >>> case_short_names("最高人民法院最高人民检察院关于办理盗窃刑事案件适用法律若干问题的解释")
    ['盗窃刑事解释', '盗窃刑事司法解释', '盗窃解释', '盗窃司法解释']
    >>> case_short_names("最高人民法院关于审理民间借贷案件适用法律若干问题的规定")
    ['民间借贷规定', '民间借贷司法解释', '民间借贷解释']
    """
    m = _CASE_RE.match(key)
    if not m:
        return []
    kind, no = m.group("kind"), m.group("no") or ""
    cases = [m.group("cases")]
    while _CASE_FILLER.search(cases[-1]) and len(cases[-1]) > 3:
        cases.append(_CASE_FILLER.sub("", cases[-1]))
    names: list[str] = []
    for case in cases:
        if 2 <= len(case) <= 16:
            names += [f"{case}{kind}{no}"]
            names += [f"{case}司法解释{no}"] if kind != "意见" else []
            names += [f"{case}解释{no}"] if kind == "规定" else []
    return list(dict.fromkeys(names))


_ISSUERS = re.compile(
    r"^(?:最高人民法院|最高人民检察院|公安部|司法部|国家安全部|国务院|中央军委|全国人民代表大会常务委员会)+(?=关于)"
)


def issuer_free_name(key: str) -> str | None:
    """The name without its issuers, as courts write it after naming them outside the brackets
    (最高人民法院、最高人民检察院《关于办理盗窃刑事案件适用法律若干问题的解释》); None without issuers.

    >>> issuer_free_name("最高人民法院最高人民检察院关于办理盗窃刑事案件适用法律若干问题的解释")
    '关于办理盗窃刑事案件适用法律若干问题的解释'
    """
    m = _ISSUERS.match(key)
    return key[m.end() :] if m and len(key) - m.end() >= 8 else None
