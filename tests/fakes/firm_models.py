"""Scripted answers for every agent of the firm, served by the fake OpenAI server (or in process).

:func:`firm_responder` looks at a request's system prompt to tell which agent is asking — the
clarifier (ToLC), the secretary, the boss (judge) or a domain lawyer — and answers as that agent
would, in the format its code expects. The lawyer's answer cites a real article (verified by the
checker) and one that does not exist, so the verdicts that travel with an answer can be asserted.
"""

from __future__ import annotations

import itertools
import json
import re
import threading

LAWYER_ANSWER = (
    "根据《中华人民共和国劳动合同法》第八十二条规定：“用人单位自用工之日起超过一个月不满一年未与劳动者订立书面劳动合同的，"
    "应当向劳动者每月支付二倍的工资。”另依据《中华人民共和国劳动合同法》第九百九十九条：“劳动者可以要求赔偿。”"
    "建议您保存工资流水、考勤记录和辞退通知，并在一年内申请劳动仲裁。"
)
REPORT_DRAFT = {
    "subject": "未签订书面劳动合同被辞退的权利救济",
    "purpose": "了解能否主张二倍工资和经济补偿",
    "facts": "咨询人在公司工作两年，未签订书面劳动合同，现被辞退。",
    "analysis": "用人单位未依法订立书面劳动合同的，应支付二倍工资；违法解除的，应支付赔偿金。",
    "advice": ["收集工资流水和考勤记录", "一年内申请劳动仲裁"],
    "risks": ["仲裁时效为一年，逾期可能丧失胜诉权"],
}


ROLE_WORDS = (("澄清", "clarifier"), ("主任", "boss"), ("秘书", "secretary"))


class FirmResponder:
    """Callable as the fake server's ``responder`` (request body → text); counts calls per agent."""

    def __init__(
        self, clarifier_reply: str | None = None, judge_score=None, lawyer_answer: str = LAWYER_ANSWER
    ) -> None:
        self.clarifier_reply = clarifier_reply  # e.g. broken JSON; None = well-formed elements
        self.lawyer_answer = lawyer_answer
        self.judge_score = judge_score or (lambda answer: 8)
        self.calls: dict[str, int] = {}
        self.lawyer_requests: list[list[dict]] = []
        self._counter = itertools.count(1)
        self._lock = threading.Lock()

    def __call__(self, body: dict) -> str:
        messages = body["messages"]
        system = messages[0]["content"].splitlines()[0]  # the role line of the system (or the boss's) prompt
        # The first line of each agent's prompt says who it is: …“法律要素澄清树”… / 律所的主任 / …的秘书 / …律师.
        agent = next((name for word, name in ROLE_WORDS if word in system), "lawyer")
        with self._lock:
            self.calls[agent] = self.calls.get(agent, 0) + 1
            n = next(self._counter)
            if agent == "lawyer":
                self.lawyer_requests.append(messages)
        if agent == "clarifier":
            if self.clarifier_reply is not None:
                return self.clarifier_reply
            k = int(re.search(r"提出 (\d+) 个", messages[-1]["content"]).group(1))
            ids = re.findall(r"^\[([^\]]+)\]", messages[-1]["content"], re.M)
            return json.dumps(
                {
                    "elements": [
                        {"statement": f"要素{n}-{i}是否成立？", "case_ids": ids[:1]} for i in range(1, k + 1)
                    ]
                },
                ensure_ascii=False,
            )
        if agent == "secretary":
            return json.dumps(REPORT_DRAFT, ensure_ascii=False)
        if agent == "boss":
            quoted = re.findall(r"<<<\n?(.*?)\n?>>>", messages[-1]["content"], re.S)  # question, answer
            score = self.judge_score(quoted[-1] if quoted else "")
            return json.dumps({"score": score, "reason": "引用了正确的法条"}, ensure_ascii=False)
        return self.lawyer_answer
