"""The scripted clarifier, simulated client, judge and lawyer of ``bench tolc`` (tests/test_bench_tolc.py).

The clarifier proposes the same three first-level elements for every case (then numbered placeholders);
the client says yes / no exactly to the elements its facts settle (:data:`SETTLES`) and leaves the
placeholders out; the judge recovers a fact when the element that settles it was answered, and in the
pairwise comparison prefers the answer that used the confirmed facts (position-biased on a question
about 越南; identical answers tie). Everything else goes to :class:`~tests.fakes.firm_models.FirmResponder`.

By hand, to see the pipeline run on the shared data (its figures mean nothing: the rules fit the fixture)::

    python -m tests.fakes.tolc_bench --limit 5 --json /tmp/tolc_scripted.json
"""

from __future__ import annotations

import itertools
import json
import re
import sys

from tests.fakes.firm_models import FirmResponder

FIRST_LEVEL = ["对方是否有重大过错？", "你们是否有孩子？", "是否存在共同债务？"]
#: A fact of a case → the first-level element that settles it, and the client's answer to it.
SETTLES = {
    "是有重大过错": (FIRST_LEVEL[0], "yes"),
    "没有孩子": (FIRST_LEVEL[1], "no"),
    "没有债务": (FIRST_LEVEL[2], "no"),
}
CLARIFIED_MARK = "结合您确认的情况"


def _quoted(content: str, heading: str) -> str:
    """The text between ``<<<`` and ``>>>`` after ``heading`` in a prompt ("" when it says （无）)."""
    match = re.search(re.escape(heading) + r"[^\n]*\n(?:<<<\n(.*?)\n>>>|（无）)", content, re.S)
    return (match.group(1) or "") if match else ""


class BenchResponder:
    """The clarifier, client, judge and lawyer of the bench, scripted; the rest of the firm as usual."""

    def __init__(
        self, client_junk: bool = False, judge_junk: bool = False, clarifier_junk: bool = False
    ) -> None:
        self.firm = FirmResponder()
        self.client_junk, self.judge_junk = client_junk, judge_junk
        self.clarifier_junk = clarifier_junk  # below the first level: never valid JSON
        self.client_prompts: list[str] = []
        self.placeholders = itertools.count(1)

    def __call__(self, body: dict) -> str:
        content = body["messages"][-1]["content"]
        first = body["messages"][0]["content"].splitlines()[0]
        if first.startswith("你在扮演一位来律所咨询的当事人"):
            self.client_prompts.append(content)
            return "我不知道怎么回答" if self.client_junk else self.client(content)
        if first.startswith("你是法律咨询评测的裁判"):
            return "{broken" if self.judge_junk else self.recovered(content)
        if first.startswith("你是资深执业律师，负责比较两个人工智能助手对同一位客户"):
            return "不是 JSON" if self.judge_junk else self.pairwise(content)
        if "澄清" in first:  # the firm's clarifier (tolc/system)
            if "（无，这是第一层）" in content:
                elements = FIRST_LEVEL
            elif self.clarifier_junk:
                return "要素如下：无"
            else:
                n = next(self.placeholders)
                elements = [f"要素{n}之{mark}是否成立？" for mark in "甲乙丙"]  # distinct as word sets too
            return json.dumps({"elements": [{"statement": s} for s in elements]}, ensure_ascii=False)
        if "【客户在澄清中确认的事实】" in content:  # the lawyer
            marked = re.findall(r"【客户在澄清中(?:确认|否认)的事实】\n<<<\n(.*?)\n>>>", content, re.S)
            settled = any(facts != "（无）" for facts in marked)
            return (CLARIFIED_MARK if settled else "") + self.firm.lawyer_answer
        return self.firm(body)

    @staticmethod
    def client(content: str) -> str:
        facts = _quoted(content, "【你知道的情况】")
        answers = []
        for node_id, statement in re.findall(
            r"^\[([\d.]+)\] (.+)$", _quoted(content, "【律师的问题】"), re.M
        ):
            if statement.startswith("要素"):
                continue  # left out: counted as omitted
            said = [
                answer
                for fact, (element, answer) in SETTLES.items()
                if element == statement and fact in facts
            ]
            answers.append({"id": node_id, "answer": said[0] if said else "不清楚"})
        return json.dumps({"answers": answers}, ensure_ascii=False)

    @staticmethod
    def recovered(content: str) -> str:
        answered = _quoted(content, "【客户回答“是”的问题】") + _quoted(content, "【客户回答“否”的问题】")
        verdicts = []
        for fact_id, text in re.findall(
            r"^\[(f\d+)\] ([^（\n]+)", _quoted(content, "【客户的关键事实】"), re.M
        ):
            element = SETTLES.get(text, ("—",))[0]
            verdicts.append({"id": fact_id, "recovered": element in answered})
        return json.dumps({"facts": verdicts})

    @staticmethod
    def pairwise(content: str) -> str:
        a, b = _quoted(content, "【回答 A】"), _quoted(content, "【回答 B】")
        if "越南" in _quoted(content, "【客户最初的问题】"):
            preference = "A"  # position bias: the two orders disagree
        elif (CLARIFIED_MARK in a) == (CLARIFIED_MARK in b):
            preference = "tie"
        else:
            preference = "A" if CLARIFIED_MARK in a else "B"
        scores = {"helpfulness": 3, "relevance": 1, "completeness": 1}
        return json.dumps({"a": scores, "b": scores, "preference": preference, "reason": "…"})


def main(argv: list[str]) -> int:
    """``python -m lawluo bench tolc ARGV…`` with every role on the fake server, scripted as above."""
    import os

    from lawluo.cli import main as lawluo

    from .live_app import model_environ
    from .openai_server import FakeOpenAIServer

    with FakeOpenAIServer() as server:
        server.responder = BenchResponder()
        os.environ.update(model_environ(server))
        return lawluo(["bench", "tolc", "--client-role", "secretary", *argv])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
