"""Read-only access to the statute database built by :mod:`lawluo.law.build`.

The whole database (≈64,000 articles) is read into memory once: a lookup by law and article number
is a dictionary access, and the citation checker can compare a quote with every article of a law.
"""

from __future__ import annotations

import datetime
import re
import sqlite3
from collections import defaultdict
from dataclasses import dataclass, replace
from pathlib import Path

from ..i18n import EN, Message, message
from .names import CIVIL_CODE_PARTS, CIVIL_CODE_SUCCESSOR_PARTS, civil_code_part_of, name_key, split_part
from .numerals import int_to_chinese

#: The layout of the database this code reads; :mod:`lawluo.law.build` writes it into ``meta``. 2: the
#: versions' ``valid_from`` and ``first_in_force``, the repeals' ``date``.
SCHEMA_VERSION = 2

BUILD_COMMAND = "python -m lawluo build statutes --data ../shared/data"

_STRIP_PREFIXES = ("新", "现行", "我国", "国家", "最新", "修订后的", "修正后的", "修改后的")
#: Category labels some models put inside the title: 《社会法-社会保险法》, 《民法商法类中的公司法》.
_CATEGORY_PREFIX = re.compile(
    r"^(?:宪法相关法|民法商法|民法典|行政法规|行政法|经济法|社会法|刑法|诉讼与非诉讼程序法|司法解释|部门规章|其他)"
    r"(?:[-－—·:：]|类中的|类)"
)


_ISO_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
_VERSION_KIND = re.compile(r"修正|修订|修改")
_DATE_WORDS = r"(?P<y>(?:19|20)\d{2})年?(?:(?P<m>\d{1,2})月(?:(?P<d>\d{1,2})日)?)?"
#: A version written after the name, in brackets (name_key has made them half-width): (2017年修正), (2018).
_VERSION_SUFFIX = re.compile(
    rf"\((?P<named>{_DATE_WORDS}(?:第?[一二三四五六七八九十]次)?(?:修正|修订|修改|公布|施行)?(?:本|文本|版)?)\)$"
)
#: A version written before the name: 2018年修正的公司法, 1997年刑法, 2023年修订后的公司法.
_VERSION_PREFIX = re.compile(
    rf"^(?P<named>{_DATE_WORDS.replace('年?', '年')}(?:第?[一二三四五六七八九十]次)?(?:修正|修订|修改)?(?:后)?)"
    r"(?:的|版的|版)?(?=[^\d])"
)


def _split_version(key: str) -> tuple[str, str, str] | None:
    """``(name without the version, the version as written, its date prefix)`` when a name key carries
    a version: ``公司法(2018年修正)`` → ``('公司法', '2018年修正', '2018')``; None when it does not.

    >>> _split_version("刑法(2017年修正)"), _split_version("2018年10月26日修正的公司法")
    (('刑法', '2017年修正', '2017'), ('公司法', '2018年10月26日修正', '2018-10-26'))
    >>> _split_version("刑事诉讼法(2012)"), _split_version("公司法") is None
    (('刑事诉讼法', '2012', '2012'), True)
    """
    m = _VERSION_SUFFIX.search(key) or _VERSION_PREFIX.match(key)
    if not m or m.end() - m.start() == len(key):
        return None
    rest = key[: m.start()] if m.start() else key[m.end() :]
    prefix = m.group("y") + (f"-{int(m.group('m')):02d}" if m.group("m") else "")
    prefix += f"-{int(m.group('d')):02d}" if m.group("m") and m.group("d") else ""
    return rest, m.group("named"), prefix


def _iso_day(on: str | datetime.date) -> str:
    """``on`` as ``YYYY-MM-DD`` (a ``datetime`` is cut to its date); a string must already be one."""
    if isinstance(on, datetime.date):
        return on.isoformat()[:10]
    if isinstance(on, str) and _ISO_DAY.fullmatch(on):
        return on
    raise ValueError(f"expected a date or an ISO date string YYYY-MM-DD, got {on!r}")


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
    valid_from: str = ""  # when this version took effect (ISO date; '' unknown)
    first_in_force: str = ""  # when the law's first version took effect, as far as this version's file tells

    @property
    def is_current(self) -> bool:
        return self.superseded_by is None

    @property
    def effective(self) -> str:
        """``valid_from``, or the version date where that is unknown ('' when both are)."""
        return self.valid_from or self.version


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
    date: str = ""  # when the repeal took effect (ISO date; '' unknown)


@dataclass(frozen=True)
class Resolution:
    """What a law name as written refers to.

    ``version`` is the version date of the database version that a version named in the name selects
    (``《公司法》(2018年修正)`` → ``2018-10-26``), ``''`` when no version was named or the database lacks it;
    ``version_named`` is that version as written (``2018年修正``), ``''`` when none was named.
    """

    written: str
    key: str | None  # key of a law in the database
    part: str | None  # Civil Code book named in the citation
    repeal: Repeal | None
    notes: tuple[Message, ...] = ()  # what is not exactly right about the name (the page shows them)
    version: str = ""
    version_named: str = ""

    @property
    def note(self) -> str:
        """The notes in English, ``"; "`` between them (the JSON, the command line): ``""`` for none."""
        return "; ".join(m.text(EN) for m in self.notes)


class StatuteDBError(RuntimeError):
    """The statute database is missing or unreadable. ``str(exc)`` names the file (the log, the command
    line); ``exc.message`` says what is wrong without it, for a page (a message of the catalogue)."""

    def __init__(self, text: str, message: Message | None = None) -> None:
        super().__init__(text)
        self.message = message


class StatuteDB:
    """Laws, their versions and articles, aliases, and the registry of repealed laws."""

    def __init__(self, path: Path | str):
        path = Path(path)
        self.path = path
        if not path.exists():
            raise StatuteDBError(
                f"statute database not found at {path}; build it with `{BUILD_COMMAND}`",
                message("statute.db_not_found"),
            )
        try:
            con = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)
            try:
                self._load(con)
            finally:
                con.close()
        except sqlite3.DatabaseError as exc:
            raise StatuteDBError(
                f"statute database {path} is unreadable: {exc}", message("statute.db_unreadable")
            ) from exc

    def _load(self, con: sqlite3.Connection) -> None:
        self.meta = dict(con.execute("SELECT key, value FROM meta"))
        schema = self.meta.get("schema_version", "1")
        if schema != str(SCHEMA_VERSION):
            raise StatuteDBError(
                f"statute database {self.path} has layout {schema}, this code reads layout {SCHEMA_VERSION}: "
                f"rebuild it with `{BUILD_COMMAND}`",
                message("statute.db_layout", layout=schema, expected=SCHEMA_VERSION),
            )
        self.laws: dict[int, Law] = {}
        self._versions: dict[str, list[Law]] = defaultdict(list)
        for row in con.execute(
            "SELECT id, name, key, level, category, version, superseded_by, in_force, valid_from, first_in_force"
            " FROM laws"
        ):
            law = Law(*row[:7], in_force=bool(row[7]), valid_from=row[8], first_in_force=row[9])
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
            "SELECT key, name, repealed_by, clause, successor_key, evidence, date FROM repealed"
        ):
            rep = Repeal(*row)
            # Prefer the most informative record: the Civil Code's own list, then repeal clauses.
            old = self._repeals.get(rep.key)
            if old is None or (old.evidence == "expired_in_index" and rep.evidence != "expired_in_index"):
                self._repeals[rep.key] = rep
        anagrams: dict[str, set[str]] = defaultdict(set)
        for alias, key in self.aliases.items():
            if len(alias) >= 5:
                anagrams["".join(sorted(alias))].add(key)
        # The same characters in another order mean a law only when they cannot mean two.
        self._alias_sorted = {chars: next(iter(keys)) for chars, keys in anagrams.items() if len(keys) == 1}
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

    # -- dates -------------------------------------------------------------------------------

    def version_in_force(self, key: str, on: str | datetime.date) -> Law | None:
        """The version of a law that was in force on a date: the newest whose ``valid_from`` is on or before
        ``on`` (a version whose ``valid_from`` is unknown counts from its version date, one with neither
        from the beginning).

        None when the database holds no such version: the law had not taken effect yet, it had been
        repealed by then (:meth:`repealed_on`), or the version in force then is older than any the
        database holds — :meth:`existed_on` tells the last case apart.

        Example (LawRefBook's 公司法 versions of 2018-10-26 and 2023-12-29, the latter in force from
        2024-07-01)::

            >>> db.version_in_force("公司法", "2024-06-30").version    # doctest: +SKIP
            '2018-10-26'
            >>> db.version_in_force("公司法", "2024-07-01").version    # doctest: +SKIP
            '2023-12-29'
        """
        day = _iso_day(on)
        rep = self._repeals.get(key)
        if rep is not None and rep.date and rep.date <= day:
            return None
        in_force = [law for law in self.versions(key) if law.effective <= day]
        return max(in_force, key=lambda law: (law.effective, law.version), default=None)

    def repealed_on(self, key: str, on: str | datetime.date) -> Repeal | None:
        """The repeal of a law if it had taken effect on or before ``on``; None otherwise.

        A repeal whose date is unknown (``Repeal.date == ''``) is returned for any date: the caller
        sees the empty date. ``repealed_on("合同法", "2020-12-31")`` is None and
        ``repealed_on("合同法", "2021-01-01")`` the Civil Code's art. 1260.
        """
        rep = self._repeals.get(key)
        if rep is None or (rep.date and rep.date > _iso_day(on)):
            return None
        return rep

    def existed_on(self, key: str, on: str | datetime.date) -> bool:
        """Whether the law had taken effect and was not repealed on ``on``, whether or not the database
        holds the text of the version in force then.

        The law took effect on its oldest version's ``first_in_force`` (that version's ``valid_from`` when
        it is the first version; else its header's earliest date, the first version's adoption, which may
        precede the effect by months). A law whose dates are unknown, or a repealed law with no version in
        the database, counts as existing before its repeal. ``existed_on("刑法", "2019-05-01")``
        is True though the database holds only the 2020 text, so ``version_in_force`` is None.
        """
        day = _iso_day(on)
        if self.repealed_on(key, day) is not None and self._repeals[key].date:
            return False
        versions = self.versions(key)
        if not versions:
            return key in self._repeals
        oldest = min(versions, key=lambda law: (law.effective, law.version))
        return (oldest.first_in_force or oldest.effective) <= day

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

        A version written into the name (``《中华人民共和国刑法（2017年修正）》``, ``公司法(2018年修正)``,
        ``2018年修正的公司法``) is taken off before the lookup; ``version`` is then the date of the
        database's version of that year (the newest of them; a full date must match exactly), and
        ``version_named`` the version as written. The database holds only some versions: one it lacks
        gives ``version == ''`` and a ``note``.

            >>> res = db.resolve("《公司法》(2018年修正)")    # doctest: +SKIP
            >>> res.key, res.version, res.version_named    # doctest: +SKIP
            ('公司法', '2018-10-26', '2018年修正')
        """
        key = name_key(written)
        split = None if split_part(key)[0] in self.aliases else _split_version(key)
        if split is None:
            return self._resolve(written, key)
        res = self._resolve(written, split[0])
        if res.key is None and res.repeal is None:
            return self._resolve(written, key)
        named, prefix = split[1], split[2]
        versions = self.versions(res.key) if res.key else []
        match = next((v for v in versions if v.version.startswith(prefix)), None)
        if match is None and len(prefix) == 4 and not _VERSION_KIND.search(named):
            match = next((v for v in versions if v.valid_from.startswith(prefix)), None)  # (2021): in force
        notes = res.notes
        if match is None:
            notes = (*notes, message("statute.note.version_missing", named=named))
        return replace(res, notes=notes, version=match.version if match else "", version_named=named)

    def _resolve(self, written: str, key: str) -> Resolution:
        key = re.sub(r"^民法典[-－—·:：]", "民法典", key)
        key = key if split_part(key)[0] in self.aliases else _CATEGORY_PREFIX.sub("", key)
        if split_part(key)[0] not in self.aliases:
            for prefix in _STRIP_PREFIXES:
                if key.startswith(prefix) and len(key) > len(prefix) + 1:
                    key = key[len(prefix) :]
        base, part = split_part(key)
        law_key = self.aliases.get(base)
        current = self.current(law_key) if law_key else None
        if current is None:  # no alias, or an alias of a law this database does not hold
            law_key = None
        repeal = self._repeals.get(base)
        if law_key:
            # A repeal record applies only when no version of the law is in force.
            if current.in_force:
                return Resolution(written, law_key, part, None)
            return Resolution(written, law_key, part, repeal or self._repeals.get(law_key))
        if repeal:
            return Resolution(written, None, part, repeal)
        if base + "法" in self.aliases:
            return Resolution(
                written,
                self.aliases[base + "法"],
                part,
                None,
                notes=(message("statute.note.name_incomplete", name=base + "法"),),
            )
        anagram = self._alias_sorted.get("".join(sorted(base)))
        if anagram:
            return Resolution(
                written, anagram, part, None, notes=(message("statute.note.name_garbled", name=anagram),)
            )
        return Resolution(written, None, part, None, notes=(message("statute.note.no_such_law"),))

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
