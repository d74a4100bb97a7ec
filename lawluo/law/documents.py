"""LawRefBook's Markdown documents as the statute database's builder reads them: the articles of a document
(:func:`parse_document`), the date of its version, the day it took effect (:func:`_valid_from`) and first
took effect, and its row of the source index (``_index.md``: level, dates, expired)."""

from __future__ import annotations

import re
import sqlite3
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

from .names import CIVIL_CODE_PARTS, PRC, name_key
from .numerals import NUMERAL, chinese_to_int

LEVEL_BY_FOLDER = {
    "宪法": "宪法",
    "司法解释": "司法解释",
    "行政法规": "行政法规",
    "部门规章": "部门规章",
    "其他": "其他",
}


_ARTICLE_LINE = re.compile(rf"^第({NUMERAL})条(?:之({NUMERAL}))?[ \u3000]+")
_DATE_IN_NAME = re.compile(r"\((\d{4}-\d{2}-\d{2})\)$")
_HEADER_DATE = re.compile(r"(\d{4})年(\d{1,2})月(\d{1,2})日")
_TAKES_EFFECT_LINE = re.compile(r"施行|实行")  # a header line giving the date of effect (2015年2月4日 实行)
_INNERMOST_TITLE = re.compile(r"《[^《》]*》")
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_TAKES_EFFECT = re.compile(r"自(\d{4})年(\d{1,2})月(\d{1,2})日起?(?:施行|实施|生效)")
_TITLE_IN_CLAUSE = re.compile(r"《([^《》]+?)》")
_ZW = re.compile(r"[\u200b\ufeff]")
SKIP_FILES = {"法律法规模版.md", "劳动仲裁和劳动诉讼的攻略.md"}


@dataclass
class Article:
    number: int
    suffix: int
    label: str
    part: str | None
    chapter: str | None
    paragraphs: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "\n".join(p for p in self.paragraphs if p)


@dataclass
class Document:
    title: str
    subtitle: str | None
    header: list[str]
    articles: list[Article]
    path: str
    category: str


def parse_document(path: Path, root: Path) -> Document:
    """Parse one LawRefBook Markdown file into its title, header lines and articles."""
    raw = _ZW.sub("", path.read_text(encoding="utf-8"))
    head, _, body = raw.partition("<!-- INFO END -->")
    if not body:
        head, body = "", raw
    titles = [ln[2:].strip() for ln in head.splitlines() if ln.startswith("# ")]
    header = [ln.strip() for ln in head.splitlines() if ln.strip() and not ln.startswith("#")]
    title = titles[0] if titles else path.stem
    subtitle = titles[1] if len(titles) > 1 else None
    rel = path.relative_to(root).as_posix()
    part = None
    if title == PRC + "民法典" and subtitle:
        part = subtitle if subtitle in CIVIL_CODE_PARTS else ("总则编" if subtitle == "总则" else subtitle)
    articles: list[Article] = []
    chapter: str | None = None
    loose: list[str] = []
    for line in body.splitlines():
        line = line.strip()
        if not line or line.startswith("<!--"):
            continue
        if line.startswith("#"):
            chapter = line.lstrip("#").strip() or chapter
            continue
        m = _ARTICLE_LINE.match(line)
        if m:
            number = chinese_to_int(m.group(1))
            suffix = chinese_to_int(m.group(2)) if m.group(2) else 0
            label = line[: m.end()].strip()
            articles.append(Article(number, suffix, label, part, chapter, [line[m.end() :].strip()]))
        elif articles:
            articles[-1].paragraphs.append(line)
        else:
            loose.append(line)
    if not articles and loose:
        articles.append(Article(0, 0, "全文", part, None, loose))
    return Document(title, subtitle, header, articles, rel, rel.split("/")[0])


def _version_date(doc: Document, index_row: dict | None) -> str:
    """The date in the file name; else the index's ``publish`` unless the header names a later
    amendment (the index gives 刑法.md 2020-12-26, its header ends with 修正案（十二） of 2023-12-29);
    else the header's latest date."""
    m = _DATE_IN_NAME.search(Path(doc.path).stem)
    if m:
        return m.group(1)
    adopted = max(
        (_iso(d) for h in doc.header if not _TAKES_EFFECT_LINE.search(h) for d in _HEADER_DATE.finditer(h)),
        default="",
    )
    if index_row and _index_date(index_row.get("publish")):
        return max(_index_date(index_row["publish"]), adopted)
    dates = [_iso(d) for d in map(_HEADER_DATE.search, doc.header) if d]
    return max(dates) if dates else ""


def _amended_by(doc: Document) -> tuple[str, str] | None:
    """(name key, date) of the document the header's last amendment line names: ``2023年12月29日 …通过的
    《中华人民共和国刑法修正案（十二）》`` → ``('刑法修正案(十二)', '2023-12-29')``; None without one."""
    lines = [h for h in doc.header if not _TAKES_EFFECT_LINE.search(h) and _HEADER_DATE.search(h)]
    if not lines:
        return None
    titles = _TITLE_IN_CLAUSE.findall(lines[-1].replace("〈", "<").replace("〉", ">"))
    return (name_key(titles[-1]), _iso(_HEADER_DATE.search(lines[-1]))) if titles else None


def _iso(m: re.Match) -> str:
    """``YYYY-MM-DD`` of a (year, month, day) match; int() reads the full-width digits some headers use."""
    return f"{int(m.group(1)):04d}-{int(m.group(2)):02d}-{int(m.group(3)):02d}"


def _first_in_force(doc: Document, valid_from: str) -> str:
    """When the law's first version took effect, as far as this version's file tells.

    This version's ``valid_from`` when its header shows no earlier version; otherwise (a line says
    修正/修订/修改, or several say 通过: ``1979年7月1日 …通过``, ``1997年3月14日 …修订``) the header's
    earliest date, the first version's adoption — its effect may have come months later. A line that only
    names another document (``2012年8月31日 …审议通过了《关于修改〈民事诉讼法〉的决定》`` atop the 2015
    民诉法解释) says nothing of this document's own versions and is left out; one naming a 修正案 (宪法,
    刑法) is this document's amendment.
    """
    own = []
    for line in filter(_HEADER_DATE.search, doc.header):
        outside = line
        while _INNERMOST_TITLE.search(outside):
            outside = _INNERMOST_TITLE.sub("", outside)
        if "《" in line and not re.search("修正|修订|修改", outside) and "修正案" not in line:
            continue
        own.append(outside)
    amended = any(re.search("修正|修订|修改", h) for h in own) or sum("通过" in h for h in own) > 1
    dates = sorted(_iso(d) for h in own for d in _HEADER_DATE.finditer(h))
    return dates[0] if amended and dates else valid_from


def _effective_in_text(doc: Document) -> str:
    """The date of the last ``自…起施行`` in the document's last three articles ('' if none)."""
    dates = [_iso(m) for a in doc.articles[-3:] for m in _TAKES_EFFECT.finditer(a.text)]
    return dates[-1] if dates else ""


_VALID_FROM_RANK = ("index", "header", "text", "amendment", "publish", "version", "unknown")


def _valid_from(doc: Document, index_row: dict | None, version: str) -> tuple[str, str]:
    """When this version took effect, and where that was read (for the build's counts).

    The first of these that is not before the version date (a version cannot take effect before it
    exists: the index gives the 2018 宪法 the original's 1982-12-04, and a consolidated text keeps the
    original's ``本法自1997年10月1日起施行``): the source index's ``valid_from``; the latest date of a
    header line that says 施行 (``2022年5月1日 施行``); the date of the document's own last ``自…起施行``;
    the index's ``publish``. Else the version date; ``('', 'unknown')`` when there is none.
    """
    row = index_row or {}
    header = [_iso(d) for h in doc.header if _TAKES_EFFECT_LINE.search(h) for d in _HEADER_DATE.finditer(h)]
    for how, date in (
        ("index", _index_date(row.get("valid_from"))),
        ("header", max(header, default="")),
        ("text", _effective_in_text(doc)),
        ("publish", _index_date(row.get("publish"))),
    ):
        if date and date >= version:
            return date, how
    return version, "version" if version else "unknown"


def _index_date(value: str | None) -> str:
    """An index date as ``YYYY-MM-DD`` ('' when it is not one: the index writes a few in full-width digits)."""
    value = unicodedata.normalize("NFKC", value or "")
    return value if _ISO_DATE.fullmatch(value) else ""


def _read_index(laws_dir: Path) -> dict[tuple[str, str], dict]:
    """Rows of the source's ``db.sqlite3`` keyed by (name key, publish date) and (name key, '')."""
    out: dict[tuple[str, str], dict] = {}
    db = laws_dir / "db.sqlite3"
    if not db.exists():
        return out
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    con.row_factory = sqlite3.Row
    for row in con.execute("SELECT name, level, publish, valid_from, expired FROM law"):
        key = name_key(row["name"])
        out[(key, row["publish"] or "")] = dict(row)
        out.setdefault((key, ""), dict(row))
    con.close()
    return out


def _level(doc: Document, index_row: dict | None) -> str:
    if index_row and index_row["level"] not in ("案例",):
        return index_row["level"]
    return LEVEL_BY_FOLDER.get(doc.category, "法律")
