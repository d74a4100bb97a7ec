"""Does a report's legal analysis deny what its advice tells the client to do? (issue 41 item 4)

A small model wrote "您的劳动合同未签订，因此无法要求赔偿" as the analysis and "您可以要求公司支付双倍工资赔偿" as
the advice. :func:`contradictions` finds such pairs: a claim the analysis (or the advice) says the client
*cannot* make — 无法/不能/无权/不得/不可以 + 要求/主张/申请/起诉/获得/索赔/请求 + what — and the same claim the
other section says the client *can* or should make (可以/能/有权/应当/建议 … + the same verb), where one
object holds the other's first ideographs (赔偿 ⊂ 公司支付双倍工资赔偿). The secretary puts each one in the
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
_NEGATIVE = re.compile(
    rf"(?:无法|不能|不可以|不可|无权|不得|没有权利|不应|不能够)\s*(?:再)?\s*(?:向[^，。；]{{0,10}})?({VERBS})"
    r"([一-鿿]{0,16})"
)
_POSITIVE = re.compile(
    rf"(?<![不无没])(?:可以|可|能够|能|有权|应当|应该|建议您?|尽快|及时)\s*(?:向[^，。；]{{0,10}})?({VERBS})"
    r"([一-鿿]{0,16})"
)
#: In the advice a claim needs no modal: each item tells the client what to do (申请仲裁，要求公司支付二倍工资).
_BARE = re.compile(rf"({VERBS})([一-鿿]{{0,16}})")
_NEGATED = re.compile(
    r"(?:无法|不能|不可以?|无权|不得|没有权利|不应|不能够|不要|别|勿)\s*(?:再)?\s*(?:向[^，。；]{0,10})?$"
)
_CONDITION = re.compile(r"如果|若(?!干)|除非|否则|假如|一旦|只有|倘若|要是")
_CLAUSE = re.compile(r"[^。；;！!？?\n]+")
_STEM = 2  # ideographs of an object that must be found in the other side's object


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
    texts = {}
    for name, heading in _SECTIONS:
        value = draft.get(name) or ""
        items = value if isinstance(value, list) else [value]
        for item in items:
            key = re.sub(r"[\W_]+", "", item)
            if len(key) >= 20:
                texts.setdefault(key, []).append(heading)
    return [
        f"报告的「{'」「'.join(dict.fromkeys(headings))}」内容相同，可能是模型照抄。请律师核对。"
        for headings in texts.values()
        if len(dict.fromkeys(headings)) > 1
    ]


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
