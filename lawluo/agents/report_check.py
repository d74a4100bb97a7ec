"""Does a report's legal analysis deny what its advice tells the client to do? (issue 41 item 4)

A small model wrote "您的劳动合同未签订，因此无法要求赔偿" as the analysis and "您可以要求公司支付双倍工资赔偿" as
the advice. :func:`contradictions` finds such pairs: a claim the analysis (or the advice) says the client
*cannot* make — 无法/不能/无权/不得/不可以 + 要求/主张/申请/起诉/获得/索赔/请求 + what — and the same claim the
other section says the client *can* or should make (可以/能/有权/应当/建议 … + the same verb; in the advice
no modal is needed), where the affirmed object holds the denied one's first ideographs (赔偿 ⊂ 公司支付双倍工资赔偿).
:func:`repeated_sections` names the sections that hold the same text. The secretary puts each one in the
report's ``warnings``, which the report shows above its sections ("请律师核对"); nothing is rewritten.

A conditional denial is not a contradiction: "如果没有证据，则无法要求赔偿" beside "可以要求赔偿" is advice with
a condition, so a clause with 如果/若/除非/否则/假如/一旦/只有 before the denial is passed over.

    >>> [c.claim for c in contradictions("您未签合同，因此无法要求赔偿。", ["您可以要求公司支付双倍工资赔偿。"])]
    ['要求赔偿']
    >>> contradictions("如果没有证据，则无法要求赔偿。", ["可以要求赔偿。"])
    []
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

VERBS = "要求|主张|申请|起诉|获得|索赔|请求|索要|追回|解除"
_DENY = "无法|不能|不可以|不可|无权|不得|没有权利|不应|不能够"
_WHOM = r"(?:向[^，。；]{0,10})?"  # 向 whom the claim is made
_TO = rf"\s*(?:再)?\s*{_WHOM}"  # between a denial and the claim
_CLAIM = rf"({VERBS})([一-鿿]{{0,16}})"  # the verb and its object
_NEGATIVE = re.compile(rf"(?:{_DENY}){_TO}{_CLAIM}")
_POSITIVE = re.compile(
    rf"(?<![不无没])(?:可以|可|能够|能|有权|应当|应该|建议您?|尽快|及时)\s*{_WHOM}{_CLAIM}"
)
#: In the advice a claim needs no modal: each item tells the client what to do (申请仲裁，要求公司支付二倍工资).
_BARE = re.compile(_CLAIM)
_NEGATED = re.compile(rf"(?:{_DENY}|不要|别|勿){_TO}$")
_CONDITION = re.compile(r"如果|若(?!干)|除非|否则|假如|一旦|只有|倘若|要是")
_CLAUSE = re.compile(r"[^。；;！!？?\n]+")
_STEM = 2  # ideographs of an object that must be found in the other side's object
MAX_WARNINGS = 20  # a report keeps at most this many (a saved consultation holds no more)


@dataclass(frozen=True)
class Contradiction:
    claim: str  # the verb and the denied object, e.g. 要求赔偿
    denied: str  # the clause that denies it
    affirmed: str  # the clause that affirms it

    def warning(self) -> str:
        return f"报告的法律分析与法律建议相互矛盾：一处说「{self.denied}」，另一处说「{self.affirmed}」。请律师核对。"


#: The sections whose text a model may copy into one another, with their headings.
_SECTIONS = (("facts", "事实与背景"), ("analysis", "法律分析"), ("advice", "法律建议"), ("risks", "风险提示"))


def repeated_sections(draft: dict) -> list[str]:
    """A warning for each pair of sections that hold the same text (the 0.5B of issue 41 wrote one paragraph
    into facts, analysis and advice alike): same characters once punctuation and spaces are gone, 20 or more."""
    headings_of: dict[str, dict[str, None]] = {}  # the text, the headings holding it (in order, once)
    for name, heading in _SECTIONS:
        value = draft.get(name) or ""
        for item in value if isinstance(value, list) else [value]:
            key = re.sub(r"[\W_]+", "", item)
            if len(key) >= 20:
                headings_of.setdefault(key, {})[heading] = None
    warnings = [
        f"报告的「{'」「'.join(headings)}」内容相同，可能是模型照抄。请律师核对。"
        for headings in headings_of.values()
        if len(headings) > 1
    ]
    return list(dict.fromkeys(warnings))  # two texts copied between the same sections: one warning


def _clauses(text: str) -> list[str]:
    return [c.strip(" ，,") for c in _CLAUSE.findall(text) if c.strip(" ，,")]


def _denied(text: str) -> list[tuple[str, str, str]]:
    """(verb, object, clause) of each unconditional denial in ``text``."""
    return [
        (m.group(1), m.group(2), clause)
        for clause in _clauses(text)
        for m in _NEGATIVE.finditer(clause)
        if not _CONDITION.search(clause[: m.start()])
    ]


def _affirmed(text: str, imperative: bool) -> list[tuple[str, str, str]]:
    """(verb, object, clause) of each claim ``text`` affirms: with a modal (可以/有权/应当 …), or in the
    ``imperative`` advice any claim that is not negated."""
    out = []
    for clause in _clauses(text):
        if imperative:
            out += [
                (m.group(1), m.group(2), clause)
                for m in _BARE.finditer(clause)
                if not _NEGATED.search(clause[: m.start()]) and not _CONDITION.search(clause[: m.start()])
            ]
        else:
            out += [(m.group(1), m.group(2), clause) for m in _POSITIVE.finditer(clause)]
    return out


def _same_claim(denied: str, affirmed: str) -> bool:
    """The denied object's first ideographs are in the affirmed object (an empty object matches none):
    无法要求赔偿 against 要求公司支付双倍工资赔偿, not 不能要求经济补偿和赔偿金同时支付 against 可以要求赔偿金."""
    stem = denied[:_STEM]
    return len(stem) == _STEM and stem in affirmed


def contradictions(analysis: str, advice: Sequence[str]) -> list[Contradiction]:
    """Each claim one of the two sections denies and the other affirms (once per denied claim)."""
    advice_text = "。".join(advice)
    out, seen = [], set()
    for denying, affirming, imperative in ((analysis, advice_text, True), (advice_text, analysis, False)):
        positives = _affirmed(affirming, imperative)
        for verb, obj, clause in _denied(denying):
            for p_verb, p_obj, p_clause in positives:
                if verb == p_verb and _same_claim(obj, p_obj) and (verb, obj) not in seen:
                    seen.add((verb, obj))
                    out.append(Contradiction(verb + obj, clause, p_clause))
    return out
