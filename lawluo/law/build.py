"""Build ``assets/statutes.sqlite`` from the LawRefBook Markdown files in ``../shared/data/laws``.

Every article of every document becomes a row (documents without numbered articles — amendment
acts, 批复 — become one row, article 0, holding the whole text). Each document version becomes a law
row with its canonical name, level, version date, and whether a newer version of the same law
supersedes it. Aliases (``X法``/``中华人民共和国X法``, the Civil Code's books, short names of judicial
interpretations) map name keys to canonical names. A registry of repealed laws is assembled from the
nine laws the Civil Code repealed (art. 1260), from every "《…》同时废止" clause in the corpus, and from
documents the source index marks as expired with no newer version.

Run ``python -m lawluo build statutes --laws ../shared/data/laws`` (see :mod:`lawluo.cli`).
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from .names import CIVIL_CODE_PARTS, PRC, judicial_short_names, name_key
from .numerals import NUMERAL, chinese_to_int

SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE laws (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,          -- canonical name, e.g. 中华人民共和国公司法
    key TEXT NOT NULL,           -- name_key(name), e.g. 公司法
    level TEXT NOT NULL,         -- 宪法, 法律, 行政法规, 司法解释, 部门规章, 其他
    category TEXT NOT NULL,      -- the source folder, e.g. 民法商法
    version TEXT NOT NULL,       -- version date YYYY-MM-DD ('' when unknown)
    superseded_by TEXT,          -- version date of the newest version when this one is older
    in_force INTEGER NOT NULL,   -- 0 when repealed (expired with no newer version)
    source TEXT NOT NULL         -- file(s) under laws/, ';'-separated
);
CREATE TABLE aliases (alias TEXT NOT NULL, key TEXT NOT NULL, PRIMARY KEY (alias, key));
CREATE TABLE articles (
    id INTEGER PRIMARY KEY,
    law_id INTEGER NOT NULL REFERENCES laws(id),
    number INTEGER NOT NULL,     -- 1079; 0 for a document without numbered articles
    suffix INTEGER NOT NULL,     -- 1 for 第一百三十三条之一, else 0
    label TEXT NOT NULL,         -- 第一千零七十九条
    part TEXT,                   -- the Civil Code book, e.g. 婚姻家庭编
    chapter TEXT,                -- nearest heading, e.g. 第四章 离婚
    text TEXT NOT NULL
);
CREATE INDEX articles_law ON articles (law_id, number, suffix);
CREATE TABLE repealed (
    key TEXT NOT NULL,           -- name_key of the repealed law
    name TEXT NOT NULL,          -- its name as the repealing clause writes it
    repealed_by TEXT NOT NULL,   -- canonical name of the repealing document
    clause TEXT NOT NULL,        -- article label or '' and the clause text
    successor_key TEXT,          -- key of the law that took over its subject matter, if known
    evidence TEXT NOT NULL       -- civil_code_1260 | repeal_clause | expired_in_index
);
"""

LEVEL_BY_FOLDER = {
    "宪法": "宪法",
    "司法解释": "司法解释",
    "行政法规": "行政法规",
    "部门规章": "部门规章",
    "其他": "其他",
}

#: Abbreviations lawyers write that no rule derives; key → key.
ABBREVIATIONS = {
    "民诉法": "民事诉讼法",
    "刑诉法": "刑事诉讼法",
    "行诉法": "行政诉讼法",
    "消法": "消费者权益保护法",
    "消保法": "消费者权益保护法",
    "道交法": "道路交通安全法",
    "劳动法实施条例": "劳动合同法实施条例",
    "民诉法解释": "最高人民法院关于适用民事诉讼法的解释",
    "民事诉讼法解释": "最高人民法院关于适用民事诉讼法的解释",
    "民事诉讼法司法解释": "最高人民法院关于适用民事诉讼法的解释",
    "刑诉法解释": "最高人民法院关于适用刑事诉讼法的解释",
    "民间借贷司法解释": "最高人民法院关于审理民间借贷案件适用法律若干问题的规定",
    "民间借贷规定": "最高人民法院关于审理民间借贷案件适用法律若干问题的规定",
    "工伤保险条例": "工伤保险条例",
}

CIVIL_CODE_REPEALED = [
    "婚姻法",
    "继承法",
    "民法通则",
    "收养法",
    "担保法",
    "合同法",
    "物权法",
    "侵权责任法",
    "民法总则",
]

#: Judicial interpretations the Supreme People's Court withdrew in its December 2020 clean-up for the
#: Civil Code, and the interpretation that took over their subject matter (name keys). The source
#: index marks them expired but does not say what replaced them.
CURATED_SUCCESSORS = {
    "最高人民法院关于适用婚姻法若干问题的解释(一)": "最高人民法院关于适用民法典婚姻家庭编的解释(一)",
    "最高人民法院关于适用婚姻法若干问题的解释(二)": "最高人民法院关于适用民法典婚姻家庭编的解释(一)",
    "最高人民法院关于适用婚姻法若干问题的解释(三)": "最高人民法院关于适用民法典婚姻家庭编的解释(一)",
    "最高人民法院关于适用婚姻法若干问题的解释(二)的补充规定": "最高人民法院关于适用民法典婚姻家庭编的解释(一)",
    "最高人民法院关于审理涉及夫妻债务纠纷案件适用法律有关问题的解释": "最高人民法院关于适用民法典婚姻家庭编的解释(一)",
    "最高人民法院关于审理劳动争议案件适用法律若干问题的解释": "最高人民法院关于审理劳动争议案件适用法律问题的解释(一)",
    "最高人民法院关于审理劳动争议案件适用法律若干问题的解释(二)": "最高人民法院关于审理劳动争议案件适用法律问题的解释(一)",
    "最高人民法院关于审理劳动争议案件适用法律若干问题的解释(三)": "最高人民法院关于审理劳动争议案件适用法律问题的解释(一)",
    "最高人民法院关于审理劳动争议案件适用法律若干问题的解释(四)": "最高人民法院关于审理劳动争议案件适用法律问题的解释(一)",
    "最高人民法院关于审理建设工程施工合同纠纷案件适用法律问题的解释": "最高人民法院关于审理建设工程施工合同纠纷案件适用法律问题的解释(一)",
    "最高人民法院关于审理建设工程施工合同纠纷案件适用法律问题的解释(二)": "最高人民法院关于审理建设工程施工合同纠纷案件适用法律问题的解释(一)",
    "最高人民法院关于适用担保法若干问题的解释": "最高人民法院关于适用民法典有关担保制度的解释",
    "最高人民法院关于适用物权法若干问题的解释(一)": "最高人民法院关于适用民法典物权编的解释(一)",
    "最高人民法院关于适用合同法若干问题的解释(一)": "最高人民法院关于适用民法典合同编通则若干问题的解释",
    "最高人民法院关于适用合同法若干问题的解释(二)": "最高人民法院关于适用民法典合同编通则若干问题的解释",
    "最高人民法院关于适用民法总则诉讼时效制度若干问题的解释": "最高人民法院关于审理民事案件适用诉讼时效制度若干问题的规定",
}

_ARTICLE_LINE = re.compile(rf"^第({NUMERAL})条(?:之({NUMERAL}))?[ \u3000]+")
_DATE_IN_NAME = re.compile(r"\((\d{4}-\d{2}-\d{2})\)$")
_HEADER_DATE = re.compile(r"(\d{4})年(\d{1,2})月(\d{1,2})日")
_REPEAL = re.compile(r"[^。；\n]*?同时废止")
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
    m = _DATE_IN_NAME.search(Path(doc.path).stem)
    if m:
        return m.group(1)
    if index_row and index_row.get("publish"):
        return index_row["publish"]
    dates = [_HEADER_DATE.search(h) for h in doc.header]
    dates = [f"{d.group(1)}-{int(d.group(2)):02d}-{int(d.group(3)):02d}" for d in dates if d]
    return max(dates) if dates else ""


def _read_index(laws_dir: Path) -> dict[tuple[str, str], dict]:
    """Rows of the source's ``db.sqlite3`` keyed by (name key, publish date) and (name key, '')."""
    out: dict[tuple[str, str], dict] = {}
    db = laws_dir / "db.sqlite3"
    if not db.exists():
        return out
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    con.row_factory = sqlite3.Row
    for row in con.execute("SELECT name, level, publish, expired FROM law"):
        key = name_key(row["name"])
        out[(key, row["publish"] or "")] = dict(row)
        out.setdefault((key, ""), dict(row))
    con.close()
    return out


def _level(doc: Document, index_row: dict | None) -> str:
    if index_row and index_row["level"] not in ("案例",):
        return index_row["level"]
    return LEVEL_BY_FOLDER.get(doc.category, "法律")


def _aliases_for(canonical: str) -> set[str]:
    key = name_key(canonical)
    aliases = {key, name_key(canonical.replace(PRC, ""))}
    aliases.update(judicial_short_names(key))
    if key.endswith("法") and not key.startswith("最高"):
        aliases.add(key[:-1] + "法律")  # e.g. 劳动合同法律 is rare; harmless
    return aliases


def source_fingerprint(laws_dir: Path) -> str:
    """sha256 over the names and bytes of every Markdown file, to record what the asset was built from."""
    digest = hashlib.sha256()
    for path in sorted(laws_dir.rglob("*.md")):
        digest.update(path.relative_to(laws_dir).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def build_statute_db(laws_dir: Path, out_path: Path, source_commit: str = "LawRefBook/Laws@2f4c5c2") -> dict:
    """Parse every document under ``laws_dir`` and write the statute database to ``out_path``.

    Returns summary counts (laws, versions, articles, aliases, repealed) for the provenance record.
    """
    laws_dir = Path(laws_dir)
    index = _read_index(laws_dir)
    docs: list[Document] = []
    for path in sorted(laws_dir.rglob("*.md")):
        rel = path.relative_to(laws_dir).as_posix()
        if path.name == "_index.md" or path.name in SKIP_FILES or rel.startswith("案例/"):
            continue
        docs.append(parse_document(path, laws_dir))

    # Group into versions of one law: the Civil Code's books are one law; otherwise (name key, date).
    versions: dict[tuple[str, str], dict] = {}
    for doc in docs:
        key = name_key(doc.title)
        stem = Path(doc.path).stem
        stem_key = name_key(_DATE_IN_NAME.sub("", stem))
        m = _DATE_IN_NAME.search(stem)
        if m:
            row = index.get((key, m.group(1))) or index.get((stem_key, m.group(1)))
        else:
            row = index.get((stem_key, "")) or index.get((key, ""))
        date = _version_date(doc, row)
        if doc.title == PRC + "民法典":
            date = "2020-05-28"
        slot = versions.setdefault(
            (key, date),
            {
                "name": doc.title,
                "key": key,
                "level": _level(doc, row),
                "category": doc.category,
                "version": date,
                "articles": [],
                "sources": [],
                "expired": bool(row and row["expired"]),
            },
        )
        if slot["articles"] and doc.title != PRC + "民法典":
            continue  # the same version under two file names (spacing/punctuation): keep the first
        slot["articles"].extend(doc.articles)
        slot["sources"].append(doc.path)

    newest: dict[str, str] = {}
    for key, date in versions:
        newest[key] = max(newest.get(key, ""), date)

    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    tmp = out_path.with_suffix(".tmp")
    tmp.unlink(missing_ok=True)
    con = sqlite3.connect(tmp)
    con.executescript(SCHEMA)
    alias_rows: set[tuple[str, str]] = set()
    repealed_rows: list[tuple] = []
    counts = defaultdict(int)
    for (key, date), v in sorted(versions.items()):
        superseded = newest[key] if date != newest[key] else None
        in_force = not (v["expired"] and superseded is None)
        cur = con.execute(
            "INSERT INTO laws (name, key, level, category, version, superseded_by, in_force, source)"
            " VALUES (?,?,?,?,?,?,?,?)",
            (
                v["name"],
                key,
                v["level"],
                v["category"],
                date,
                superseded,
                int(in_force),
                ";".join(v["sources"]),
            ),
        )
        law_id = cur.lastrowid
        con.executemany(
            "INSERT INTO articles (law_id, number, suffix, label, part, chapter, text) VALUES (?,?,?,?,?,?,?)",
            [(law_id, a.number, a.suffix, a.label, a.part, a.chapter, a.text) for a in v["articles"]],
        )
        counts["versions"] += 1
        counts["articles"] += len(v["articles"])
        for alias in _aliases_for(v["name"]):
            alias_rows.add((alias, key))
        if not in_force:
            repealed_rows.append((key, v["name"], "", "", CURATED_SUCCESSORS.get(key), "expired_in_index"))
        for art in v["articles"]:
            for m in _REPEAL.finditer(art.text):
                for title in _TITLE_IN_CLAUSE.findall(m.group(0)):
                    if "决定" in title:
                        continue
                    repealed_rows.append(
                        (
                            name_key(title),
                            title,
                            v["name"],
                            f"{art.label} {m.group(0)}".strip(),
                            key,
                            "repeal_clause",
                        )
                    )
    for short, full in ABBREVIATIONS.items():
        alias_rows.add((short, name_key(full)))
    for key in CIVIL_CODE_REPEALED:
        repealed_rows.append(
            (key, PRC + key, PRC + "民法典", "第一千二百六十条", "民法典", "civil_code_1260")
        )
    # A name repealed by a clause but still in force under the same key is an older version, not repealed.
    current_keys = {k for (k, d), v in versions.items() if d == newest[k] and not v["expired"]}
    seen: set[tuple[str, str]] = set()
    kept = []
    for row in repealed_rows:
        if row[5] == "repeal_clause" and (row[0] in current_keys or row[0] == row[4]):
            continue
        if (row[0], row[5]) in seen:
            continue
        seen.add((row[0], row[5]))
        kept.append(row)
    con.executemany("INSERT OR IGNORE INTO aliases VALUES (?,?)", sorted(alias_rows))
    con.executemany("INSERT INTO repealed VALUES (?,?,?,?,?,?)", kept)
    counts["laws"] = len(newest)
    counts["aliases"] = len(alias_rows)
    counts["repealed"] = len({r[0] for r in kept})
    meta = {
        "source": source_commit,
        "source_sha256": source_fingerprint(laws_dir),
        "builder": "lawluo.law.build",
        "counts": json.dumps(dict(counts), ensure_ascii=False),
    }
    con.executemany("INSERT INTO meta VALUES (?,?)", meta.items())
    con.commit()
    con.execute("VACUUM")
    con.close()
    tmp.replace(out_path)
    return dict(counts)
