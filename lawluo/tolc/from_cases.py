"""Legal elements without a language model: read off the retrieved cases, honestly labelled as such.

For each retrieved case, in rank order, the candidates are: the decisive facts its text matches in
``fact_patterns.yaml``, the dispute focus its outcome states ("争议焦点是……"), and its cause of action or
charge. The first ``k`` candidates not already in the tree become the node's children, each with the
case it came from. Nothing here is invented: every element is traceable to a case. When the
consultation's domain is known, a decisive fact is offered only to the domains its pattern names (自首
and 前科 to criminal consultations only).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from ..retrieval.casebank import Case
from .tree import statement_key

PATTERNS_FILE = Path(__file__).with_name("fact_patterns.yaml")
FOCUS = re.compile(r"争议焦点(?:之一)?(?:是|为|在于)[：:]?(.{4,60}?)[。；;\n]")
#: A dispute focus the client can answer yes or no (``张某…能否主张加班费``), unlike ``如何分配…的举证责任``.
YES_NO_FOCUS = re.compile(r"是否|有没有|有无|能否|可否|能不能|可不可以|是不是|应否|应当否")
NO_MODEL_NOTE = (
    "未配置语言模型：以下法律要素由检索到的相似案例（争议焦点、关键事实、案由或罪名）生成，仅供参考。"
)


@dataclass(frozen=True)
class Candidate:
    statement: str
    case_id: str


@functools.cache
def fact_patterns() -> tuple[tuple[re.Pattern[str], str, frozenset[str]], ...]:
    """``(pattern, element, domains)`` rows of ``fact_patterns.yaml`` (empty domains: every domain)."""
    rows = yaml.safe_load(PATTERNS_FILE.read_text(encoding="utf-8"))
    return tuple((re.compile(r["pattern"]), r["element"], frozenset(r.get("domains", ()))) for r in rows)


def candidates(case: Case, domain: str | None = None, causes: bool = True) -> list[Candidate]:
    """The yes/no elements one case offers: its decisive facts (phrased for any client; with ``domain``,
    those of that domain), then its dispute focus (phrased with the case's parties) when it asks a yes/no
    question (:data:`YES_NO_FOCUS`; 如何分配…的举证责任 has no yes or no for the client), then, with ``causes``,
    its cause of action or charges (您的情况是否涉及「劳动争议」？).

    >>> case = Case("c1", "test", "案", "劳动争议", "劳动纠纷", "", "本案的争议焦点是如何分配林某与某公司的举证责任。")
    >>> [c.statement for c in candidates(case)]
    ['您的情况是否涉及「劳动争议」？']
    >>> case = Case("c2", "test", "案", "劳动争议", "劳动纠纷", "", "本案的争议焦点是张某能否主张加班费。")
    >>> [c.statement for c in candidates(case)]
    ['是否存在加班而未获得加班费的情况？', '张某能否主张加班费？', '您的情况是否涉及「劳动争议」？']
    """
    body = f"{case.facts}\n{case.outcome}"
    out = [
        Candidate(element, case.id)
        for pattern, element, domains in fact_patterns()
        if (domain is None or not domains or domain in domains) and pattern.search(body)
    ]
    focus = FOCUS.search(case.outcome or "")
    if focus and YES_NO_FOCUS.search(focus.group(1)):
        text = focus.group(1).strip("，, ")
        out.append(Candidate(text if text.endswith("？") else f"{text}？", case.id))
    for cause in re.split(r"[；;]", case.cause or "") if causes else ():
        if cause.strip():
            out.append(Candidate(f"您的情况是否涉及「{cause.strip()}」？", case.id))
    return out


def elements_from_cases(
    cases: list[Case], k: int, taken: set[str], domain: str | None = None, causes: bool = True
) -> list[Candidate]:
    """Up to ``k`` candidates from ``cases`` (in rank order, round-robin) whose :func:`statement_key` is not
    in ``taken``; with ``domain`` (an id), only that domain's decisive facts; without ``causes``, no
    您的情况是否涉及「…」？ (:func:`candidates`)."""
    per_case = [candidates(case, domain, causes) for case in cases]
    chosen: list[Candidate] = []
    seen = set(taken)
    for rank in range(max((len(c) for c in per_case), default=0)):
        for options in per_case:
            key = statement_key(options[rank].statement) if rank < len(options) else None
            if key and key not in seen and len(chosen) < k:
                chosen.append(options[rank])
                seen.add(key)
    return chosen
