"""The consultation domains as data (``domains.yaml``): the lawyers are rows, not classes.

    table = load_domains(settings.domains_file)  # the table the app serves (default: the packaged one)
    table["labor"].preferred_laws                # laws statute retrieval favours for the labour lawyer
    table.from_lawbench("抵押担保").name          # "债权债务" (LawBench's 20 labels → the 16 shipped domains)
    table.domain_for_cause("民间借贷纠纷")         # "债权债务": the case bank's hint for a case
    len(table), table.ids                        # every count comes from the table

One row holds everything LawLuo knows about a domain: its id and Chinese name, the lawyer's role prompt,
the LawBench labels that map onto it, the laws statute retrieval prefers, the receptionist's
weak-labelling rules (``lawluo/law/weak_labels.py``) and the case bank's cause-of-action hints. The
module-level :data:`DOMAINS`, :func:`domain` and :func:`from_lawbench` read the packaged table, for code
that has no settings (training, benchmarks); the app, the firm, the receptionist, the case bank and the
saved-consultation schema use the table of the settings' ``domains_file``.

Reference: LawLuo paper §3.2 (15 common domains plus 其他); LawBench task 2-4 labels.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import yaml

from . import prompts

PACKAGED_FILE = Path(__file__).with_name("domains.yaml")
OTHER = "other"  # the general lawyer: the receptionist's fallback; every table has it
GENERIC_PROMPT = "lawyer/generic"  # the role prompt of a domain without a template of its own
#: Fields a role template may use; each is filled from the domain's row (see :meth:`Domain.role_prompt`).
ROLE_FIELDS = ("domain", "laws")
ROW_KEYS = (
    "id",
    "name",
    "prompt",
    "lawbench",
    "preferred_laws",
    "laws",
    "civil_code",
    "keywords",
    "weak",
    "cause_hints",
    "guarded_by",
    "case_key",
)
_ID = re.compile(r"^[a-z][a-z0-9_]{0,39}$")
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's safe loader when built with it: 7× faster


class DomainTableError(ValueError):
    """A domains file that cannot work; the message names the file, the row and the key."""


@dataclass(frozen=True)
class Domain:
    """One row of the table (the keys are described at the top of ``domains.yaml``)."""

    id: str
    name: str
    prompt: str  # the lawyer's role-enhancement template under lawluo/prompts/
    lawbench: tuple[str, ...] = ()
    preferred_laws: tuple[str, ...] = ()
    laws: tuple[str, ...] = ()  # weak labelling: substrings of a cited law's name key
    civil_code: tuple[tuple[int, int], ...] = ()  # weak labelling: 民法典 article ranges
    keywords: tuple[str, ...] = ()  # weak labelling: question words (weight 1)
    weak: tuple[str, ...] = ()  # weak labelling: question words (weight 0.5)
    cause_hints: tuple[tuple[int, str], ...] = ()  # (rank, regex over a case's cause of action)
    guarded_by: str = ""  # regex: its material reaches another consultation only when the question says it
    case_key: str = ""  # what the case bank's ``domain_hint`` calls it; "" → its name

    @property
    def cases_as(self) -> str:
        """The case bank's key for this domain (a case's ``domain_hint``): ``case_key``, else the name."""
        return self.case_key or self.name

    @property
    def guarded(self) -> bool:
        """Its cases and tree elements are its own (the criminal domain's): they reach another
        consultation only when the question says one of the ``guarded_by`` words."""
        return bool(self.guarded_by)

    def said_in(self, question: str) -> bool:
        """``question`` says one of the ``guarded_by`` words (always ``False`` for an unguarded domain).

        >>> PACKAGED["criminal"].said_in("他被刑拘了"), PACKAGED["criminal"].said_in("楼上漏水")
        (True, False)
        """
        return bool(self.guarded_by) and re.search(self.guarded_by, question) is not None

    def role_prompt(self) -> str:
        """The lawyer's system prompt for this domain: its template, with the :data:`ROLE_FIELDS` it
        declares filled from the row (the 16 shipped templates declare none)."""
        values = {
            "domain": self.name,
            "laws": "、".join(f"《{law}》" for law in self.preferred_laws) or "（未列出）",
        }
        template = prompts.load(self.prompt)
        return template.render(**{f: values[f] for f in template.fields})


@dataclass(frozen=True)
class Domains:
    """The table: its rows in file order, looked up by id, Chinese name or LawBench label.

    ``table[key]`` is the row with that id or name (KeyError listing the ids otherwise); iterating gives
    the rows; ``len(table)`` is the number of domains.
    """

    rows: tuple[Domain, ...]
    source: Path = PACKAGED_FILE

    def __post_init__(self) -> None:
        by_key = {d.id: d for d in self.rows} | {d.name: d for d in self.rows}
        lawbench = {label: d for d in self.rows for label in d.lawbench}
        hints = sorted(
            (
                (rank, i, re.compile(pattern), d.cases_as)
                for i, d in enumerate(self.rows)
                for rank, pattern in d.cause_hints
            ),
            key=lambda h: h[:2],
        )
        object.__setattr__(self, "_by_key", by_key)
        object.__setattr__(self, "_lawbench", lawbench)
        object.__setattr__(self, "_hints", tuple((regex, name) for _, _, regex, name in hints))

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(d.id for d in self.rows)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(d.name for d in self.rows)

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[Domain]:
        return iter(self.rows)

    def __contains__(self, key: object) -> bool:
        return key in self._by_key

    def __getitem__(self, key: str) -> Domain:
        """The domain with this id or Chinese name; KeyError listing the valid ids otherwise."""
        found = self._by_key.get(key) if isinstance(key, str) else None
        if found is None:
            raise KeyError(f"no domain {key!r}; domains: {', '.join(self.ids)}")
        return found

    def from_lawbench(self, label: str) -> Domain:
        """The domain a LawBench 2-4 label maps onto (综合咨询, 涉外法律 and 海事海商 → 其他 when shipped)."""
        try:
            return self._lawbench[label]
        except KeyError:
            raise KeyError(f"{label!r} is not a LawBench consultation label") from None

    def domain_for_cause(self, cause: str) -> str:
        """The case-bank key (:attr:`Domain.cases_as`: its Chinese name unless the row sets ``case_key``) of
        the domain a cause of action obviously belongs to, else ``""``: the first ``cause_hints`` pattern,
        by rank over all rows, found in ``cause``.

        >>> PACKAGED.domain_for_cause("民间借贷纠纷"), PACKAGED.domain_for_cause("盗窃")
        ('债权债务', '')
        """
        return next((name for regex, name in self._hints if regex.search(cause)), "")

    @property
    def guarded(self) -> tuple[Domain, ...]:
        """The rows whose material is their own (``guarded_by``): the criminal domain, shipped."""
        return tuple(d for d in self.rows if d.guarded)

    def by_case_key(self, key: str) -> Domain | None:
        """The row a case bank ``domain_hint`` names, or ``None`` (``""``: a case of no clear domain)."""
        return next((d for d in self.rows if d.cases_as == key), None) if key else None


def load_domains(path: str | Path = PACKAGED_FILE) -> Domains:
    """The table in ``path`` (a YAML list of rows), checked whole; :class:`DomainTableError` naming the
    row and key of the first problem otherwise (ids and names unique, :data:`OTHER` present, LawBench
    labels in one row each, role prompts that exist, cause hints that compile)."""
    path = Path(path)
    try:
        rows = yaml.load(path.read_text(encoding="utf-8"), Loader=_LOADER)
    except (OSError, yaml.YAMLError) as exc:
        raise DomainTableError(f"cannot read the domains file {path}: {exc}") from None
    if not isinstance(rows, list) or not rows:
        raise DomainTableError(f"{path}: expected a list of domain rows")
    domains = tuple(_row(path, i, row) for i, row in enumerate(rows, start=1))
    for what, values in (
        ("id", [d.id for d in domains]),
        ("name", [d.name for d in domains]),
        ("lawbench label", [label for d in domains for label in d.lawbench]),
    ):
        twice = sorted({v for v in values if values.count(v) > 1})
        if twice:
            raise DomainTableError(f"{path}: each {what} must appear once; repeated: {', '.join(twice)}")
    if OTHER not in {d.id for d in domains}:
        raise DomainTableError(f"{path}: the table must have the general domain {OTHER!r} (the fallback)")
    return Domains(domains, path)


def _row(path: Path, number: int, row: object) -> Domain:
    where = f"{path}: row {number}"
    if not isinstance(row, dict):
        raise DomainTableError(f"{where}: expected a mapping of {', '.join(ROW_KEYS)}")
    where += f" ({row.get('id', '?')})"
    unknown = sorted(set(map(str, row)) - set(ROW_KEYS))
    if unknown:
        raise DomainTableError(f"{where}: unknown key(s) {', '.join(unknown)}; valid: {', '.join(ROW_KEYS)}")
    id_, name = row.get("id"), row.get("name")
    if not isinstance(id_, str) or not _ID.match(id_):
        raise DomainTableError(f"{where}: id must be lower case letters, digits and _ (got {id_!r})")
    if not isinstance(name, str) or not name.strip():
        raise DomainTableError(f"{where}: name must be the domain's Chinese name (got {name!r})")
    try:
        words = {
            key: _words(row.get(key)) for key in ("lawbench", "preferred_laws", "laws", "keywords", "weak")
        }
        ranges = tuple((int(lo), int(hi)) for lo, hi in row.get("civil_code") or ())
        hints = tuple((int(rank), str(p)) for rank, p in (row.get("cause_hints") or {}).items())
    except (TypeError, ValueError, AttributeError) as exc:
        raise DomainTableError(
            f"{where}: {exc} (lists of words; civil_code [[first, last], …]; cause_hints {{rank: regex}})"
        ) from None
    for what, pattern in [(f"cause_hints {rank}", p) for rank, p in hints] + [
        ("guarded_by", str(row.get("guarded_by") or ""))
    ]:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise DomainTableError(f"{where}: {what}: {pattern!r} is not a regex ({exc})") from None
    prompt = row.get("prompt") or (
        f"lawyer/{id_}" if f"lawyer/{id_}" in prompts.declared() else GENERIC_PROMPT
    )
    if prompt not in prompts.declared():
        raise DomainTableError(f"{where}: no prompt template {prompt!r} under {prompts.PROMPTS_DIR}")
    extra = sorted(set(prompts.load(prompt).fields) - set(ROLE_FIELDS))
    if extra:
        raise DomainTableError(
            f"{where}: role prompt {prompt} asks for {extra}; it may use {list(ROLE_FIELDS)}"
        )
    extras = {key: str(row.get(key) or "") for key in ("guarded_by", "case_key")}
    return Domain(id_, name, prompt, civil_code=ranges, cause_hints=hints, **words, **extras)


def _words(value: object) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise TypeError(f"expected a list, got {value!r}")
    return tuple(str(v) for v in value)  # YAML reads 12315 as a number


PACKAGED: Domains = load_domains(PACKAGED_FILE)
DOMAINS: tuple[Domain, ...] = PACKAGED.rows
DOMAIN_IDS: tuple[str, ...] = PACKAGED.ids
DOMAIN_NAMES: tuple[str, ...] = PACKAGED.names


def domain(key: str) -> Domain:
    """The packaged table's domain with this id or Chinese name; KeyError listing the valid ids otherwise."""
    return PACKAGED[key]


def from_lawbench(label: str) -> Domain:
    """The packaged domain a LawBench 2-4 label maps onto (综合咨询, 涉外法律 and 海事海商 → 其他)."""
    return PACKAGED.from_lawbench(label)
