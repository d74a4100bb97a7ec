"""Build ``assets/statutes.sqlite`` from the LawRefBook Markdown files in ``../shared/data/laws``.

Every article of every document becomes a row (documents without numbered articles — amendment
acts, 批复 — become one row, article 0, holding the whole text). Each document version becomes a law
row with its canonical name, level, version date, the date it took effect (``valid_from``, see
:func:`_valid_from`), when the law first took effect (``first_in_force``), and whether a newer version
of the same law supersedes it. The older versions kept in ``data/laws_supplement/`` (LawRefBook's own
history, :data:`lawluo.data_sources.SUPPLEMENT`) follow the pinned tree's rows.

Aliases map name keys to canonical names: ``X法``/``中华人民共和国X法``, the Civil Code's books, short
names of judicial interpretations (``民法典婚姻家庭编解释(一)``, ``盗窃解释``, ``民间借贷规定``) and their
names without the issuers (``关于办理盗窃刑事案件适用法律若干问题的解释``). An alias that two documents
would share, or that is another document's own key, is left out (:func:`_unambiguous`).

A registry of repealed laws, each with the date the repeal took effect, is assembled from the nine
laws the Civil Code repealed (art. 1260), from every "《…》同时废止" clause in the corpus, and from
documents the source index marks as expired with no newer version.

Reading a document (its articles and dates) is :mod:`lawluo.law.documents`.

Run ``python -m lawluo build statutes --data ../shared/data`` (see :mod:`lawluo.cli`); it takes about
10 s on one core.
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
from collections import defaultdict
from pathlib import Path

from ..data_sources import SUPPLEMENT, SUPPLEMENT_APPLIES_TO, SUPPLEMENT_DIR, SUPPLEMENT_REPO, file_sha256
from .database import SCHEMA_VERSION
from .documents import (
    _DATE_IN_NAME,
    _TAKES_EFFECT,
    _TITLE_IN_CLAUSE,
    _VALID_FROM_RANK,
    SKIP_FILES,
    Document,
    _amended_by,
    _first_in_force,
    _iso,
    _level,
    _read_index,
    _valid_from,
    _version_date,
    parse_document,
)
from .names import PRC, case_short_names, issuer_free_name, judicial_short_names, name_key

#: A repeal clause (``…《X法》同时废止``): the repealed-laws registry reads the titles in it.
_REPEAL = re.compile(r"[^。；\n]*?同时废止")

SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE laws (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,          -- canonical name, e.g. 中华人民共和国公司法
    key TEXT NOT NULL,           -- name_key(name), e.g. 公司法
    level TEXT NOT NULL,         -- 宪法, 法律, 行政法规, 司法解释, 部门规章, 其他
    category TEXT NOT NULL,      -- the source folder, e.g. 民法商法
    version TEXT NOT NULL,       -- version date YYYY-MM-DD ('' when unknown)
    valid_from TEXT NOT NULL,    -- date this version took effect, YYYY-MM-DD ('' when unknown)
    first_in_force TEXT NOT NULL, -- when the law's first version took effect, as far as this file tells
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
    evidence TEXT NOT NULL,      -- civil_code_1260 | repeal_clause | expired_in_index
    date TEXT NOT NULL           -- when the repeal took effect, YYYY-MM-DD ('' when unknown)
);
"""

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
    "民诉解释": "最高人民法院关于适用民事诉讼法的解释",
    "民诉法司法解释": "最高人民法院关于适用民事诉讼法的解释",
    "刑诉解释": "最高人民法院关于适用刑事诉讼法的解释",
    "刑诉法司法解释": "最高人民法院关于适用刑事诉讼法的解释",
    "刑事诉讼法解释": "最高人民法院关于适用刑事诉讼法的解释",
    "刑事诉讼法司法解释": "最高人民法院关于适用刑事诉讼法的解释",
    "民间借贷司法解释": "最高人民法院关于审理民间借贷案件适用法律若干问题的规定",
    "民间借贷规定": "最高人民法院关于审理民间借贷案件适用法律若干问题的规定",
    "精神损害赔偿解释": "最高人民法院关于确定民事侵权精神损害赔偿责任若干问题的解释",
    "精神损害赔偿司法解释": "最高人民法院关于确定民事侵权精神损害赔偿责任若干问题的解释",
    "民事诉讼证据规定": "最高人民法院关于民事诉讼证据的若干规定",
    "民事证据规定": "最高人民法院关于民事诉讼证据的若干规定",
    "担保制度解释": "最高人民法院关于适用民法典有关担保制度的解释",
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

#: When the December 2020 clean-up below took effect: 最高人民法院关于废止部分司法解释及相关规范性文件的决定
#: (法释〔2020〕16号), in force with the Civil Code on 1 January 2021. The source index marks the withdrawn
#: interpretations expired without a date.
CIVIL_CODE_CLEANUP_DATE = "2021-01-01"

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


def _aliases_for(canonical: str) -> set[str]:
    """Names other than its key that people write for a document, as keys (see :func:`_unambiguous`)."""
    key = name_key(canonical)
    aliases = set(judicial_short_names(key)) | set(case_short_names(key))
    if key.endswith("法") and not key.startswith("最高"):
        aliases.add(key[:-1] + "法律")  # e.g. 劳动合同法律 is rare; harmless
    bare = issuer_free_name(key)
    if bare:
        aliases.add(bare)
    return aliases - {key}


def _unambiguous(derived: dict[str, set[str]], keys: set[str]) -> tuple[dict[str, str], dict[str, set[str]]]:
    """Keep the aliases that name one document and are no other document's key: an alias two documents
    share (盗窃解释 if both the 1998 and the 2013 interpretation were here) is dropped, not guessed.

    Returns (alias → key, alias → keys of the dropped ones).
    """
    kept, dropped = {}, {}
    for alias, owners in derived.items():
        if len(owners) == 1 and (alias not in keys or alias in owners):
            kept[alias] = next(iter(owners))
        else:
            dropped[alias] = owners | ({alias} & keys)
    return kept, dropped


def source_fingerprint(laws_dir: Path) -> str:
    """sha256 over the names and bytes of every Markdown file, to record what the asset was built from."""
    digest = hashlib.sha256()
    for path in sorted(laws_dir.rglob("*.md")):
        digest.update(path.relative_to(laws_dir).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _supplement_docs(supplement: Path | bool, laws_fingerprint: str) -> tuple[list[Document], Path | None]:
    """The documents of the supplement folder, and the folder ([] and None when none applies).

    ``True``: this repository's ``data/laws_supplement/`` (:data:`lawluo.data_sources.SUPPLEMENT`), read only
    when ``laws/`` is the tree it completes (a test's tiny laws folder gets nothing) and checked file by file
    against the recorded sha256; a path: every Markdown file under it; ``False``: none.
    """
    if supplement is False or (supplement is True and laws_fingerprint != SUPPLEMENT_APPLIES_TO):
        return [], None
    folder = SUPPLEMENT_DIR if supplement is True else Path(supplement)
    paths = sorted(folder.rglob("*.md"))
    if supplement is True:
        recorded = {f.target: f.sha256 for f in SUPPLEMENT}
        found = {p.relative_to(folder).as_posix(): file_sha256(p) for p in paths}
        if found != recorded:
            wrong = sorted(set(found.items()) ^ set(recorded.items()))
            raise ValueError(
                f"{folder} differs from lawluo.data_sources.SUPPLEMENT (data/SOURCES.md): {wrong[:3]}"
            )
    return [parse_document(p, folder) for p in paths], folder


def _documents(
    laws_dir: Path, supplement: Path | bool, fingerprint: str
) -> tuple[list[Document], set[int], Path | None]:
    """The documents of ``laws_dir`` (indexes, skipped files and 案例/ left out), then the supplement's; the
    ``id`` of each supplement document; the supplement folder (``None``: none)."""
    docs: list[Document] = []
    for path in sorted(laws_dir.rglob("*.md")):
        rel = path.relative_to(laws_dir).as_posix()
        if path.name == "_index.md" or path.name in SKIP_FILES or rel.startswith("案例/"):
            continue
        docs.append(parse_document(path, laws_dir))
    extra, supplement_dir = _supplement_docs(supplement, fingerprint)
    return docs + extra, {id(doc) for doc in extra}, supplement_dir


def _group_versions(
    docs: list[Document], index: dict, from_supplement: set[int]
) -> dict[tuple[str, str], dict]:
    """The documents grouped into versions of one law, by (name key, date): the Civil Code's books are one
    law; the same version under two file names keeps the first."""
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
        valid_from, how = _valid_from(doc, row, date)
        slot = versions.setdefault(
            (key, date),
            {
                "name": doc.title,
                "key": key,
                "level": _level(doc, row),
                "category": doc.category,
                "version": date,
                "valid_from": valid_from,
                "valid_from_how": how,
                "first_in_force": _first_in_force(doc, valid_from),
                "amended_by": _amended_by(doc),
                "articles": [],
                "sources": [],
                "expired": bool(row and row["expired"]),
                "supplement": id(doc) in from_supplement,
            },
        )
        if slot["articles"] and doc.title != PRC + "民法典":
            continue  # the same version under two file names (spacing/punctuation): keep the first
        if _VALID_FROM_RANK.index(how) < _VALID_FROM_RANK.index(slot["valid_from_how"]):
            slot["valid_from"], slot["valid_from_how"] = valid_from, how  # 民法典: 附则 says 自…起施行
        slot["articles"].extend(doc.articles)
        slot["sources"].append(f"supplement:{doc.path}" if id(doc) in from_supplement else doc.path)
    return versions


def _date_by_amending_acts(versions: dict[tuple[str, str], dict]) -> None:
    """A version no source dates takes effect with the amending act its header names, when the corpus
    holds that act of the same date with a date of its own (刑法 as amended by 修正案（十二）: 2024-03-01)."""
    for (_key, date), v in versions.items():
        act = versions.get(v["amended_by"] or ("", ""))
        if (
            v["valid_from_how"] in ("publish", "version")
            and act is not None
            and v["amended_by"][1] == date
            and act["valid_from_how"] in ("index", "header", "text")
            and act["valid_from"] > v["valid_from"]
        ):
            v["valid_from"], v["valid_from_how"] = act["valid_from"], "amendment"


def _repeal_clause_rows(key: str, v: dict) -> list[tuple]:
    """The repealed-table rows of the repeal clauses in a version's articles (``…同时废止``); a repeal takes
    effect with the article's own 自…起施行 (the text before the clause), else with the repealing version."""
    rows = []
    for art in v["articles"]:
        for m in _REPEAL.finditer(art.text):
            effective = [_iso(d) for d in _TAKES_EFFECT.finditer(art.text, 0, m.end())]
            date_ = effective[-1] if effective else v["valid_from"]
            for title in _TITLE_IN_CLAUSE.findall(m.group(0)):
                if "决定" in title:
                    continue
                rows.append(
                    (
                        name_key(title),
                        title,
                        v["name"],
                        f"{art.label} {m.group(0)}".strip(),
                        key,
                        "repeal_clause",
                        date_,
                    )
                )
    return rows


def _insert_versions(
    con: sqlite3.Connection, versions: dict[tuple[str, str], dict], newest: dict[str, str], counts: dict
) -> tuple[set[tuple[str, str]], dict[str, set[str]], list[tuple]]:
    """Insert every version and its articles (the supplement's last); return the key aliases, the aliases
    derived from the names, and the repealed rows (expired laws, repeal clauses)."""
    alias_rows: set[tuple[str, str]] = set()
    derived: dict[str, set[str]] = defaultdict(set)
    repealed_rows: list[tuple] = []
    for (key, date), v in sorted(versions.items(), key=lambda kv: (kv[1]["supplement"], kv[0])):
        superseded = newest[key] if date != newest[key] else None
        in_force = not (v["expired"] and superseded is None)
        cur = con.execute(
            "INSERT INTO laws (name, key, level, category, version, valid_from, first_in_force, superseded_by,"
            " in_force, source) VALUES (?,?,?,?,?,?,?,?,?,?)",
            (
                v["name"],
                key,
                v["level"],
                v["category"],
                date,
                v["valid_from"],
                v["first_in_force"],
                superseded,
                int(in_force),
                ";".join(v["sources"]),
            ),
        )
        counts[f"valid_from_{v['valid_from_how']}"] += 1
        counts["supplement_versions"] += v["supplement"]
        law_id = cur.lastrowid
        con.executemany(
            "INSERT INTO articles (law_id, number, suffix, label, part, chapter, text) VALUES (?,?,?,?,?,?,?)",
            [(law_id, a.number, a.suffix, a.label, a.part, a.chapter, a.text) for a in v["articles"]],
        )
        counts["versions"] += 1
        counts["articles"] += len(v["articles"])
        alias_rows.add((key, key))
        for alias in _aliases_for(v["name"]):
            derived[alias].add(key)
        if not in_force:
            successor = CURATED_SUCCESSORS.get(key)
            date_ = CIVIL_CODE_CLEANUP_DATE if successor else ""
            repealed_rows.append((key, v["name"], "", "", successor, "expired_in_index", date_))
        repealed_rows += _repeal_clause_rows(key, v)
    return alias_rows, derived, repealed_rows


def _kept_repeals(
    repealed_rows: list[tuple], versions: dict[tuple[str, str], dict], newest: dict[str, str]
) -> list[tuple]:
    """The repealed rows, with the 民法典 art. 1260 repeals, without a name repealed by a clause but still in
    force under the same key (an older version, not repealed) and without repeats."""
    civil_code = versions.get(("民法典", "2020-05-28"))
    civil_code_from = civil_code["valid_from"] if civil_code else ""
    for key in CIVIL_CODE_REPEALED:
        repealed_rows.append(
            (key, PRC + key, PRC + "民法典", "第一千二百六十条", "民法典", "civil_code_1260", civil_code_from)
        )
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
    return kept


def build_statute_db(
    laws_dir: Path,
    out_path: Path,
    source_commit: str = "LawRefBook/Laws@2f4c5c2",
    supplement: Path | bool = True,
) -> dict:
    """Parse every document under ``laws_dir`` and write the statute database to ``out_path``.

    The documents of the supplement (:func:`_supplement_docs`; older versions the pinned tree no longer
    holds) come after those of ``laws_dir``: their rows follow every row of the pinned tree, so adding them
    moves no article of it. A version both hold is taken from ``laws_dir``.

    Returns summary counts (laws, versions, articles, aliases, repealed) for the provenance record.
    """
    laws_dir = Path(laws_dir)
    fingerprint = source_fingerprint(laws_dir)
    docs, from_supplement, supplement_dir = _documents(laws_dir, supplement, fingerprint)
    versions = _group_versions(docs, _read_index(laws_dir), from_supplement)
    _date_by_amending_acts(versions)
    newest: dict[str, str] = {}
    for key, date in versions:
        newest[key] = max(newest.get(key, ""), date)

    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    tmp = out_path.with_suffix(".tmp")
    tmp.unlink(missing_ok=True)
    con = sqlite3.connect(tmp)
    con.executescript(SCHEMA)
    counts = defaultdict(int)
    alias_rows, derived, repealed_rows = _insert_versions(con, versions, newest, counts)
    for short, full in ABBREVIATIONS.items():
        derived[short].add(name_key(full))
    kept_aliases, dropped_aliases = _unambiguous(derived, {k for k, _ in versions})
    alias_rows.update((alias, key) for alias, key in kept_aliases.items())
    counts["aliases_dropped_ambiguous"] = len(dropped_aliases)
    kept = _kept_repeals(repealed_rows, versions, newest)
    con.executemany("INSERT OR IGNORE INTO aliases VALUES (?,?)", sorted(alias_rows))
    con.executemany("INSERT INTO repealed VALUES (?,?,?,?,?,?,?)", kept)
    counts["laws"] = len(newest)
    counts["aliases"] = len(alias_rows)
    counts["repealed"] = len({r[0] for r in kept})
    meta = {
        "schema_version": str(SCHEMA_VERSION),
        "source": source_commit
        + (
            f" + data/laws_supplement/ ({counts['supplement_versions']} older versions from the history of "
            f"{SUPPLEMENT_REPO}, see data/SOURCES.md)"
            if supplement_dir
            else ""
        ),
        "source_sha256": fingerprint,
        "supplement_sha256": source_fingerprint(supplement_dir) if supplement_dir else "",
        "builder": "lawluo.law.build",
        "counts": json.dumps(dict(sorted(counts.items())), ensure_ascii=False),
    }
    con.executemany("INSERT INTO meta VALUES (?,?)", meta.items())
    con.commit()
    con.execute("VACUUM")
    con.close()
    tmp.replace(out_path)
    return dict(counts)
