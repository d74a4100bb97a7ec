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


def name_key(name: str) -> str:
    """Reduce a law name to its lookup key.

    >>> name_key("《中华人民共和国民法典》")
    '民法典'
    >>> name_key("最高人民法院关于适用〈中华人民共和国民法典〉婚姻家庭编的解释（一）")
    '最高人民法院关于适用民法典婚姻家庭编的解释(一)'
    >>> name_key("最高人民法院 最高人民检察院关于办理案件的解释")
    '最高人民法院最高人民检察院关于办理案件的解释'
    """
    key = _DROP.sub("", name.translate(_BRACKETS))
    return key.replace(PRC, "")


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
    r"^最高人民(?:法院|检察院)(?:最高人民(?:法院|检察院))?关于(?:适用)?(?P<law>[^(]+?法典?)(?P<rest>.*?)的?(?P<kind>解释|规定)(?P<no>\([一二三四五六七八九十]+\))?$"
)


def judicial_short_names(key: str) -> list[str]:
    """Short names people use for a judicial interpretation of one law, as keys.

    >>> judicial_short_names("最高人民法院关于适用民法典婚姻家庭编的解释(一)")
    ['民法典婚姻家庭编解释(一)', '民法典婚姻家庭编司法解释(一)']
    >>> judicial_short_names("最高人民法院关于适用公司法若干问题的规定(三)")
    ['公司法规定(三)', '公司法司法解释(三)', '公司法解释(三)']
    """
    m = _JUDICIAL_RE.match(key)
    if not m:
        return []
    law, rest, kind, no = m.group("law"), m.group("rest"), m.group("kind"), m.group("no") or ""
    rest = rest.replace("若干问题", "")
    if rest and not rest.endswith("编"):
        return []
    base = law + rest
    names = [f"{base}{kind}{no}", f"{base}司法解释{no}"]
    if kind == "规定":
        names.append(f"{base}解释{no}")
    return names
