"""Read-only access to the statute database built by :mod:`lawluo.law.build`.

The whole database (≈64,000 articles) is read into memory once: a lookup by law and article number
is a dictionary access, and the citation checker can compare a quote with every article of a law.
"""

from __future__ import annotations

import re
import sqlite3
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from .names import CIVIL_CODE_PARTS, CIVIL_CODE_SUCCESSOR_PARTS, civil_code_part_of, name_key, split_part
from .numerals import int_to_chinese

_STRIP_PREFIXES = ("新", "现行", "我国", "国家", "最新", "修订后的", "修正后的", "修改后的")
#: Category labels some models put inside the title: 《社会法-社会保险法》, 《民法商法类中的公司法》.
_CATEGORY_PREFIX = re.compile(
    r"^(?:宪法相关法|民法商法|民法典|行政法规|行政法|经济法|社会法|刑法|诉讼与非诉讼程序法|司法解释|部门规章|其他)"
    r"(?:[-－—·:：]|类中的|类)"
)


@dataclass(frozen=True)
class Law:
    """One version of one document."""

    id: int
    name: str
    key: str
    level: str
    category: str
    version: str
    superseded_by: str | None
    in_force: bool

    @property
    def is_current(self) -> bool:
        return self.superseded_by is None


@dataclass(frozen=True)
class Article:
    """One article of one version of a law; ``index`` is its position in :attr:`StatuteDB.articles`."""

    index: int
    law: Law
    number: int
    suffix: int
    label: str
    part: str | None
    chapter: str | None
    text: str

    def as_dict(self) -> dict:
        return {
            "law": self.law.name,
            "article": self.number,
            "article_label": self.label,
            "version": self.law.version,
            "current": self.law.is_current,
            "text": self.text,
        }


@dataclass(frozen=True)
class Repeal:
    """A law the corpus records as repealed, and by what."""

    key: str
    name: str
    repealed_by: str
    clause: str
    successor_key: str | None
    evidence: str


@dataclass(frozen=True)
class Resolution:
    """What a law name as written refers to."""

    written: str
    key: str | None  # key of a law in the database
    part: str | None  # Civil Code book named in the citation
    repeal: Repeal | None
    note: str = ""


class StatuteDBError(RuntimeError):
    """The statute database is missing or unreadable."""


class StatuteDB:
    """Laws, their versions and articles, aliases, and the registry of repealed laws."""

    def __init__(self, path: Path | str):
        path = Path(path)
        if not path.exists():
            raise StatuteDBError(
                f"statute database not found at {path}; build it with "
                "`python -m lawluo build statutes --laws ../shared/data/laws`"
            )
        try:
            con = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)
            self._load(con)
            con.close()
        except sqlite3.DatabaseError as exc:
            raise StatuteDBError(f"statute database {path} is unreadable: {exc}") from exc
        self.path = path

    def _load(self, con: sqlite3.Connection) -> None:
        self.meta = dict(con.execute("SELECT key, value FROM meta"))
        self.laws: dict[int, Law] = {}
        self._versions: dict[str, list[Law]] = defaultdict(list)
        for row in con.execute(
            "SELECT id, name, key, level, category, version, superseded_by, in_force FROM laws"
        ):
            law = Law(*row[:7], in_force=bool(row[7]))
            self.laws[law.id] = law
            self._versions[law.key].append(law)
        for versions in self._versions.values():
            versions.sort(key=lambda law: law.version, reverse=True)
        self.articles: list[Article] = []
        self._by_number: dict[tuple[int, int, int], Article] = {}
        self._by_law: dict[int, list[Article]] = defaultdict(list)
        rows = con.execute(
            "SELECT law_id, number, suffix, label, part, chapter, text FROM articles ORDER BY id"
        )
        for i, (law_id, number, suffix, label, part, chapter, text) in enumerate(rows):
            art = Article(i, self.laws[law_id], number, suffix, label, part, chapter, text)
            self.articles.append(art)
            self._by_number.setdefault((law_id, number, suffix), art)
            self._by_law[law_id].append(art)
        self.aliases: dict[str, str] = {}
        for alias, key in con.execute("SELECT alias, key FROM aliases ORDER BY alias, key"):
            self.aliases.setdefault(alias, key)
        self._repeals: dict[str, Repeal] = {}
        for row in con.execute(
            "SELECT key, name, repealed_by, clause, successor_key, evidence FROM repealed"
        ):
            rep = Repeal(*row)
            # Prefer the most informative record: the Civil Code's own list, then repeal clauses.
            old = self._repeals.get(rep.key)
            if old is None or (old.evidence == "expired_in_index" and rep.evidence != "expired_in_index"):
                self._repeals[rep.key] = rep
        self._alias_sorted = {"".join(sorted(a)): k for a, k in self.aliases.items() if len(a) >= 5}
        self.max_alias_len = max(len(a) for a in self.aliases) if self.aliases else 0

    # -- names -------------------------------------------------------------------------------

    def versions(self, key: str) -> list[Law]:
        """All versions of a law, newest first."""
        return self._versions.get(key, [])

    def current(self, key: str) -> Law | None:
        versions = self.versions(key)
        return versions[0] if versions else None

    def repeal(self, key: str) -> Repeal | None:
        return self._repeals.get(key)

    def successor(self, repeal: Repeal) -> Law | None:
        """The current version of the law that took over a repealed law's subject matter, if known."""
        return self.current(repeal.successor_key) if repeal.successor_key else None

    def repeal_note(self, key: str) -> str:
        """Plain words for a law that is no longer in force, with what replaced it where recorded.

        ``repeal_note("合同法")`` →
        ``已废止，由《中华人民共和国民法典》取代（见其第一千二百六十条）；相应内容在其合同编（第四百六十三条至第九百八十八条）``.
        Only the successor law and, for the Civil Code, its book are named: the data holds no table of
        which new article replaced which old one, so none is given. ``""`` for a law in force or a key
        with no repeal record.
        """
        rep = self._repeals.get(key)
        current = self.current(key)
        if rep is None or (current is not None and current.in_force):
            return ""
        successor = self.successor(rep)
        if successor is not None:
            note = f"已废止，由《{successor.name}》取代"
        elif rep.repealed_by:
            note = f"已废止（由《{rep.repealed_by}》废止）"
        else:
            return "已废止"
        clause = rep.clause.split(" ")[0]
        if rep.repealed_by and clause.startswith("第"):
            by = (
                "其"
                if successor is not None and successor.name == rep.repealed_by
                else f"《{rep.repealed_by}》"
            )
            note += f"（见{by}{clause}）"
        parts = CIVIL_CODE_SUCCESSOR_PARTS.get(key) if rep.successor_key == "民法典" else None
        if parts:
            note += "；相应内容在其" + "、".join(
                f"{p}（第{int_to_chinese(CIVIL_CODE_PARTS[p][0])}条至第{int_to_chinese(CIVIL_CODE_PARTS[p][1])}条）"
                for p in parts
            )
        return note

    def is_known_key(self, key: str) -> bool:
        return key in self.aliases or key in self._repeals

    def resolve(self, written: str) -> Resolution:
        """Resolve a law name as written to a law of the database or a repealed law.

        Tries, in order: the alias table (after :func:`name_key`), the Civil Code's books, dropping
        words like 新/现行/我国, the registry of repealed laws, a missing final 法 (``治安管理处罚``),
        and the same characters in another order (``劳动争议仲裁调解法``). The last two are recorded
        in ``note`` because the name as written is not exactly right.
        """
        key = re.sub(r"^民法典[-－—·:：]", "民法典", name_key(written))
        key = key if split_part(key)[0] in self.aliases else _CATEGORY_PREFIX.sub("", key)
        if split_part(key)[0] not in self.aliases:
            for prefix in _STRIP_PREFIXES:
                if key.startswith(prefix) and len(key) > len(prefix) + 1:
                    key = key[len(prefix) :]
        base, part = split_part(key)
        law_key = self.aliases.get(base)
        repeal = self._repeals.get(base)
        if law_key:
            # A repeal record applies only when no version of the law is in force.
            if self.current(law_key).in_force:
                return Resolution(written, law_key, part, None)
            return Resolution(written, law_key, part, repeal or self._repeals.get(law_key))
        if repeal:
            return Resolution(written, None, part, repeal)
        if base + "法" in self.aliases:
            return Resolution(
                written, self.aliases[base + "法"], part, None, note=f"name incomplete: {base}法"
            )
        anagram = self._alias_sorted.get("".join(sorted(base)))
        if anagram:
            return Resolution(written, anagram, part, None, note=f"name garbled: means {anagram}")
        return Resolution(written, None, part, None, note="no such law in the database")

    # -- articles ----------------------------------------------------------------------------

    def article(self, law: Law, number: int, suffix: int = 0) -> Article | None:
        return self._by_number.get((law.id, number, suffix))

    def articles_of(self, law: Law) -> list[Article]:
        return self._by_law.get(law.id, [])

    def find_article(self, key: str, number: int, suffix: int = 0) -> Article | None:
        """The article of the newest version of a law that has it."""
        for law in self.versions(key):
            art = self.article(law, number, suffix)
            if art is not None:
                return art
        return None

    @staticmethod
    def civil_code_part(number: int) -> str | None:
        return civil_code_part_of(number)
