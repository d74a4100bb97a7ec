"""Chinese numerals as article numbers: ``一千零七十九`` ↔ 1079, ``第一百三十三条之一`` → (133, 1)."""

from __future__ import annotations

import re

_DIGITS = {
    "零": 0,
    "〇": 0,
    "○": 0,
    "Ｏ": 0,
    "一": 1,
    "二": 2,
    "两": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
}
_UNITS = {"十": 10, "百": 100, "千": 1000, "万": 10000}
_FULLWIDTH = str.maketrans("０１２３４５６７８９", "0123456789")

NUMERAL_CHARS = "零〇○一二三四五六七八九十百千万两0-9０-９"
NUMERAL = f"[{NUMERAL_CHARS}]+"


def chinese_to_int(text: str) -> int:
    """Parse an article number written in Chinese or Arabic numerals.

    >>> chinese_to_int("一千零七十九"), chinese_to_int("十一"), chinese_to_int("1079"), chinese_to_int("二零二一")
    (1079, 11, 1079, 2021)
    """
    text = text.strip().translate(_FULLWIDTH)
    if not text:
        raise ValueError("empty numeral")
    if text.isdigit():
        return int(text)
    if all(ch in _DIGITS for ch in text):  # digit-by-digit, e.g. 二零二一
        return int("".join(str(_DIGITS[ch]) for ch in text))
    total, section, digit = 0, 0, 0
    for ch in text:
        if ch in _DIGITS:
            digit = _DIGITS[ch]
        elif ch in _UNITS:
            unit = _UNITS[ch]
            if unit == 10000:
                total += (section + digit) * unit
                section, digit = 0, 0
            else:
                section += (digit or 1) * unit
                digit = 0
        else:
            raise ValueError(f"not a numeral: {text!r}")
    return total + section + digit


def int_to_chinese(n: int) -> str:
    """Write an article number the way statutes do.

    >>> int_to_chinese(1079), int_to_chinese(10), int_to_chinese(110), int_to_chinese(1005)
    ('一千零七十九', '十', '一百一十', '一千零五')
    """
    if n < 0:
        raise ValueError("negative numeral")
    digits = "零一二三四五六七八九"
    if n < 10:
        return digits[n]
    if n < 20:
        return "十" + (digits[n % 10] if n % 10 else "")
    parts: list[str] = []
    zero_pending = False
    for value, name in ((1000, "千"), (100, "百"), (10, "十"), (1, "")):
        d = (n // value) % 10
        if d:
            if zero_pending:
                parts.append("零")
                zero_pending = False
            parts.append(digits[d] + name)
        elif parts:
            zero_pending = True
    if n >= 10000:
        return (
            int_to_chinese(n // 10000)
            + "万"
            + ("零" if (n % 10000) < 1000 and n % 10000 else "")
            + (int_to_chinese(n % 10000) if n % 10000 else "")
        )
    return "".join(parts)


_ARTICLE_RE = re.compile(rf"第({NUMERAL})条(?:之({NUMERAL}))?")


def parse_article_label(label: str) -> tuple[int, int]:
    """``第一百三十三条之一`` → ``(133, 1)``; ``第1079条`` → ``(1079, 0)``."""
    m = _ARTICLE_RE.fullmatch(label.strip())
    if not m:
        raise ValueError(f"not an article label: {label!r}")
    return chinese_to_int(m.group(1)), chinese_to_int(m.group(2)) if m.group(2) else 0


def article_label(number: int, suffix: int = 0) -> str:
    """``(133, 1)`` → ``第一百三十三条之一``."""
    label = f"第{int_to_chinese(number)}条"
    return label + (f"之{int_to_chinese(suffix)}" if suffix else "")
