"""A scripted LLM judge for the metrics: answers each metrics prompt (``lawluo/prompts/metrics/``) in
the format its code expects, with behaviour a test can set — including the judge's failure modes
(malformed JSON, out-of-range scores, position bias).

Usable in process (``ScriptedBackend(responder=judge)``, called with the messages) and behind the
fake OpenAI server (``server.responder = judge``, called with the request body). ``calls`` counts
requests per template name (``metrics/pairwise``); the template is recognised by matching the prompt
against each judge's template (:func:`lawluo.prompts.rendered_from`), so no phrase is copied here.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable

from lawluo import prompts

#: The judges it answers, by template name: the metrics' judge folders (``lawluo/prompts/metrics/<name>/``).
JUDGES = [name for name in prompts.judges() if name.startswith("metrics/")]
QUOTED = re.compile(r"<<<\n?(.*?)\n?>>>", re.S)
REAL_STATUTE = {
    "law": "中华人民共和国劳动合同法",
    "article": "第八十二条",
    "content": "用人单位自用工之日起超过一个月不满一年未与劳动者订立书面劳动合同的，应当向劳动者每月支付二倍的工资。",
}


def template_of(messages: list[dict]) -> str:
    """The judge template the first user message was rendered from (:func:`lawluo.prompts.rendered_from`)."""
    first = next(m["content"] for m in messages if m["role"] == "user")
    name = prompts.rendered_from(first, JUDGES)
    if name is None:
        raise AssertionError(f"not a metrics prompt: {first[:80]!r}")
    return name


def _json(value) -> str:
    return json.dumps(value, ensure_ascii=False)


def longer(answer_a: str, answer_b: str) -> str:
    """A consistent judge: prefers the longer answer whatever its position."""
    if len(answer_a) == len(answer_b):
        return "tie"
    return "A" if len(answer_a) > len(answer_b) else "B"


class JudgeResponder:
    def __init__(
        self,
        statutes: list[dict] | None = None,
        relevance: int | str = 10,
        consistency: int | str = 10,
        claims: list[str] | str | Callable[[str], list[str]] | None = None,
        claim_rating: Callable[[str], int | str] = lambda claim: 5 if "二倍" in claim else 3,
        prefer: Callable[[str, str], str] = longer,
        score: Callable[[str], object] = lambda answer: 7,
    ) -> None:
        self.statutes = [REAL_STATUTE] if statutes is None else statutes
        self.relevance = relevance
        self.consistency = consistency
        self.claims = (
            ["未签书面劳动合同的，应当支付二倍工资", "建议申请劳动仲裁"] if claims is None else claims
        )
        self.claim_rating = claim_rating
        self.prefer = prefer
        self.score = score
        self.calls: dict[str, int] = {}
        self.prompts: list[str] = []
        self._lock = threading.Lock()

    def __call__(self, messages_or_body) -> str:
        messages = messages_or_body["messages"] if isinstance(messages_or_body, dict) else messages_or_body
        template = template_of(messages)
        first = next(m["content"] for m in messages if m["role"] == "user")
        with self._lock:
            self.calls[template] = self.calls.get(template, 0) + 1
            self.prompts.append(first)
        quoted = QUOTED.findall(first)
        if template == "metrics/extract_statutes":
            return _json(self.statutes)
        if template == "metrics/relevance":
            return _raw_or(self.relevance, lambda v: _json({"score": v, "reason": "直接适用"}))
        if template == "metrics/consistency":
            return _raw_or(self.consistency, lambda v: _json({"score": v, "reason": "与真实法条一致"}))
        if template == "metrics/extract_claims":
            claims = self.claims(quoted[-1]) if callable(self.claims) else self.claims
            return claims if isinstance(claims, str) else _json(claims)
        if template == "metrics/judge_claim":
            # quoted: question, statutes, claim
            return _raw_or(self.claim_rating(quoted[2]), lambda v: _json({"score": v, "reason": "依据法条"}))
        if template == "metrics/pairwise":
            # quoted: question, reference, answer A, answer B (the reference may be "（无）", unquoted)
            answer_a, answer_b = quoted[-2], quoted[-1]
            preference = self.prefer(answer_a, answer_b)
            if preference not in ("A", "B", "tie"):
                return preference  # a malformed verdict, as given
            return _json(
                {
                    "a": {"helpfulness": 3, "relevance": 1, "completeness": 1},
                    "b": {"helpfulness": 2, "relevance": 1, "completeness": 1},
                    "preference": preference,
                    "reason": "更完整",
                }
            )
        value = self.score(quoted[-1])
        return value if isinstance(value, str) else f"回答专业，建议可行。\n[分数={value}]"


def _raw_or(value, render: Callable[[int], str]) -> str:
    """A string is returned as the judge's raw (malformed) answer; a number is rendered as JSON."""
    return value if isinstance(value, str) else render(value)
