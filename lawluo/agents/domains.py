"""The 16 consultation domains as data (``domains.yaml``): the lawyers are rows, not classes.

    DOMAINS[0].name                      # "婚姻家庭"
    domain("labor").preferred_laws       # laws statute retrieval favours for the labour lawyer
    from_lawbench("抵押担保").name        # "债权债务" (LawBench's 20 labels → our 16 domains)

Reference: LawLuo paper §3.2 (15 common domains plus 其他); LawBench task 2-4 labels.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

TABLE = Path(__file__).with_name("domains.yaml")
OTHER = "other"


@dataclass(frozen=True)
class Domain:
    id: str
    name: str
    prompt: str  # the lawyer's role-enhancement template under lawluo/prompts/
    lawbench: tuple[str, ...]
    preferred_laws: tuple[str, ...]


def _load() -> tuple[Domain, ...]:
    rows = yaml.safe_load(TABLE.read_text(encoding="utf-8"))
    domains = tuple(
        Domain(r["id"], r["name"], r["prompt"], tuple(r["lawbench"]), tuple(r["preferred_laws"]))
        for r in rows
    )
    ids = [d.id for d in domains]
    if len(set(ids)) != len(ids) or OTHER not in ids:
        raise ValueError(f"{TABLE}: domain ids must be unique and include {OTHER!r}")
    return domains


DOMAINS: tuple[Domain, ...] = _load()
DOMAIN_IDS: tuple[str, ...] = tuple(d.id for d in DOMAINS)
DOMAIN_NAMES: tuple[str, ...] = tuple(d.name for d in DOMAINS)
_BY_ID = {d.id: d for d in DOMAINS}
_BY_NAME = {d.name: d for d in DOMAINS}
_BY_LAWBENCH = {label: d for d in DOMAINS for label in d.lawbench}


def domain(key: str) -> Domain:
    """The domain with this id or Chinese name; KeyError listing the valid ids otherwise."""
    found = _BY_ID.get(key) or _BY_NAME.get(key)
    if found is None:
        raise KeyError(f"no domain {key!r}; domains: {', '.join(DOMAIN_IDS)}")
    return found


def from_lawbench(label: str) -> Domain:
    """The domain a LawBench 2-4 label maps onto (综合咨询, 涉外法律 and 海事海商 → 其他)."""
    try:
        return _BY_LAWBENCH[label]
    except KeyError:
        raise KeyError(f"{label!r} is not a LawBench consultation label") from None
