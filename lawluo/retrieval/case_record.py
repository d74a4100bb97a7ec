"""The case record of the ToLC case bank and its file format (``assets/cases.jsonl.gz``).

One :class:`Case` per line, gzip JSONL with sorted keys, so the same cases always give the same bytes.
:mod:`lawluo.retrieval.casebank` builds the cases from ``../shared/data``; this module only validates,
writes and reads them.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from ..domains import PACKAGED, Domains
from ..files import write_gzip_lines

SOURCES = ("cail", "typical", "disc")

# ---------------------------------------------------------------------------------------------
# The record
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """One case of the bank.

    ``cause`` is the cause of action (案由, e.g. ``买卖合同纠纷``) of a civil or administrative case and
    the charge (罪名, e.g. ``盗窃``; several joined by ``；``) of a criminal one. ``articles`` lists the
    statutes the case cites as ``{"law": canonical name, "article": n, "suffix": m}`` (``suffix`` is 1
    for 第一百三十三条之一, else 0). ``sentence`` is CAIL's 刑期 label (``4个月``, ``0个月`` for no prison
    term, ``无期徒刑``, ``死刑``) and ``""`` for other sources.
    """

    id: str
    source: str
    title: str
    cause: str
    domain_hint: str
    facts: str
    outcome: str = ""
    articles: list[dict[str, str | int]] = field(default_factory=list)
    sentence: str = ""

    @property
    def search_text(self) -> str:
        """What a retriever indexes: the headline, the cause and the facts (not the outcome)."""
        return "\n".join(part for part in (self.title, self.cause, self.facts) if part)

    def to_json(self) -> str:
        """One line of the asset: sorted keys, no ASCII escaping, so the bytes are reproducible."""
        return json.dumps(asdict(self), ensure_ascii=False, sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_dict(cls, obj: object, domains: Domains = PACKAGED) -> Case:
        """Validate one decoded line (``domain_hint`` against ``domains``' names); raises ``ValueError``
        saying what is wrong."""
        if not isinstance(obj, dict):
            raise ValueError(f"expected a JSON object, got {type(obj).__name__}")
        names = {f.name for f in fields(cls)}
        missing = {"id", "source", "title", "cause", "domain_hint", "facts"} - obj.keys()
        if missing or obj.keys() - names:
            raise ValueError(f"missing fields {sorted(missing)}, unknown fields {sorted(obj.keys() - names)}")
        for name in names - {"articles"}:
            if name in obj and not isinstance(obj[name], str):
                raise ValueError(f"field {name!r} must be a string")
        if obj["source"] not in SOURCES:
            raise ValueError(f"source {obj['source']!r} is not one of {SOURCES}")
        if obj["domain_hint"] and domains.by_case_key(obj["domain_hint"]) is None:
            raise ValueError(f"domain_hint {obj['domain_hint']!r} is not a consultation domain")
        articles = obj.get("articles", [])
        if not isinstance(articles, list) or not all(
            isinstance(a, dict)
            and isinstance(a.get("law"), str)
            and isinstance(a.get("article"), int)
            and isinstance(a.get("suffix", 0), int)
            for a in articles
        ):
            raise ValueError('articles must be a list of {"law": str, "article": int, "suffix": int}')
        return cls(**obj)


# ---------------------------------------------------------------------------------------------
# Reading and writing the asset
# ---------------------------------------------------------------------------------------------


def write_case_bank(cases: Iterable[Case], path: Path) -> None:
    """Write ``cases`` as gzip JSONL to ``path``, atomically and byte-for-byte reproducibly.

    Lines keep the order given (:func:`build_case_bank` returns a deterministic order); keys are sorted
    and the gzip header carries no file name and mtime 0, so the same cases always give the same bytes.
    """
    write_gzip_lines(path, (case.to_json() for case in cases))


def load_case_bank(path: Path, domains: Domains = PACKAGED) -> list[Case]:
    """Read a case bank written by :func:`write_case_bank`; its domain hints must be ``domains``' names.

    Raises ``ValueError`` naming the file and the 1-based line number when a line is not valid JSON or
    not a valid case, and naming the file when it is not a readable gzip stream.
    """
    path = Path(path)
    try:
        with gzip.open(path, "rb") as gz:
            raw = gz.read()
    except (OSError, EOFError) as exc:  # gzip.BadGzipFile is an OSError
        raise ValueError(f"{path}: not a readable gzip file: {exc}") from exc
    cases = []
    for lineno, line in enumerate(raw.split(b"\n"), start=1):
        if not line.strip():
            continue
        try:
            cases.append(Case.from_dict(json.loads(line.decode("utf-8")), domains))
        except (ValueError, TypeError) as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
            raise ValueError(f"{path}: line {lineno}: corrupt case record: {exc}") from exc
    return cases
