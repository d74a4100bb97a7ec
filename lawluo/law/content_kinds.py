"""How the checker read what a citation says (``content_kind``): one table of rows, read by every consumer.

The extractor (:mod:`lawluo.law.citations`) gives each citation a ``content_kind`` — where the content
it attributes to the article comes from — and the checker compares that content with the article or,
when there is none to compare, says ``no_content``. The app shows the reading as a small tag next to the
verdict's badge (``tag_zh``), the evaluator writes the code in its per-citation table
(``citations.csv``), and the help text explains it. ``tests/test_content_kinds.py`` fails when a kind
the extractor gives has no row here.

A tag says what was compared, not whether it was right (that is the verdict): 原文引用 — the answer gives
the article's words (in quotation marks, after 规定：, or right after the number as LawBench writes
them); 转述 — it paraphrases them (规定，…), compared more leniently; 适用 — it applies the article to the
facts (…之规定，判决如下; 根据…第N条，公司应当…), so nothing is compared; 仅引条号 — name and number only.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ContentKind:
    code: str  # Citation.content_kind, Checked.as_dict()["content_kind"]
    tag_zh: str  # the app's tag next to the verdict badge
    compared: bool  # the checker compares this content with the article
    meaning_zh: str  # the tag's tooltip, for a visitor
    meaning: str  # one line, for help texts


CONTENT_KIND_TABLE: tuple[ContentKind, ...] = (
    ContentKind(
        "quoted",
        "原文引用",
        True,
        "回答用引号写出条文内容，核查比对的是这段内容",
        "the article's words, in quotation marks",
    ),
    ContentKind(
        "colon",
        "原文引用",
        True,
        "回答在“规定：”之后写出条文内容，核查比对的是这段内容",
        "the article's words, after 规定： or a colon",
    ),
    ContentKind(
        "inline",
        "原文引用",
        True,
        "回答紧接条号写出条文内容，核查比对的是这段内容",
        "the article's words right after its number (LawBench style)",
    ),
    ContentKind(
        "stated",
        "转述",
        True,
        "回答转述条文的意思，核查按较宽的标准比对",
        "a paraphrase after 规定，, compared more leniently",
    ),
    ContentKind(
        "applied",
        "适用",
        False,
        "回答把这一条用于案情，没有写出条文内容，无可比对",
        "the article applied to the facts: nothing to compare",
    ),
    ContentKind("none", "仅引条号", False, "回答只写了法律名称和条号，无可比对", "name and number only"),
)

CONTENT_KINDS: tuple[str, ...] = tuple(k.code for k in CONTENT_KIND_TABLE)
BY_CODE: dict[str, ContentKind] = {k.code: k for k in CONTENT_KIND_TABLE}


def tag_zh(code: str | None) -> str:
    """The app's tag of a reading; ``""`` for a missing or unknown one (an old saved file has none).

    >>> tag_zh("colon"), tag_zh("applied"), tag_zh(None)
    ('原文引用', '适用', '')
    """
    row = BY_CODE.get(code or "")
    return row.tag_zh if row else ""
