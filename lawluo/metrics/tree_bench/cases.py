"""Cases for ``python -m lawluo bench tolc``: a client's first question, and the facts the client revealed
later in the same consultation (the *hidden facts*, the key facts clarification should recover).

Source: the multi-turn consultations of lawyer-llama (``lawyer_llama/legal_counsel_multi_turn_with_article_v2.jsonl``
in ``../shared/data``: 476 dialogues whose ``history`` alternates ``[客户]`` and ``[律师]``). KINLED's
published consultations (``lawluo_kinled/consult_995.json``) are single-turn — a client reveals nothing
after the first question there — so they give no case.

**Key facts by a documented heuristic, not a model** (so a case set is the same on every machine and
needs no model to build). Every later client turn is cut into clauses at ``。！？；，`` and newlines; a
clause is a key fact unless it

- asks something (ends in ？/吗/呢, or says 怎么、如何、什么、哪、能否、是否、想知道、不知道 …),
- is a hypothetical or a new topic (starts with 那/如果/假如/要是 …),
- thanks, acknowledges, says how the client feels or what they will do next (好的、谢谢、很着急、我会 …),
- is a bare short reply (fewer than 4 characters, e.g. 没有、是的) to no factual question of the
  lawyer's, or a bare amount or date (28000元) to no question about one,
- talks about the conversation rather than the case (我明白了, 没有具体的法律名词, 您说的我都懂), or
- only repeats the first question.

Each fact keeps the lawyer's question it answered (``asked``: the question sentences of the lawyer's
turn before it, those about the conversation itself — 还有其他问题吗 — left out), so an elliptical reply
such as 他知道，同意去 stays interpretable. What this heuristic gets wrong: a clause can still carry a
feeling rather than a fact (心里很不舒服), and one fact spread over two clauses is two facts. The
trap of this data set: most later client turns ask a new question rather than add a fact, so about
half of the dialogues yield no key fact and are left out (:func:`dialogue_cases` counts them).

Reference: LeCoDe (Yuan et al., arXiv:2505.19667, ACL 2026), §4: clarification is scored by the share
of annotated atomic key facts the model's questions recover (GPT-4: 39.8 % in v1, 35.9 % in the
ACL version).

    cases, left_out = dialogue_cases(Path("../shared/data"))
    chosen = sample(cases, 20, seed=0)          # the first 20 of a seeded shuffle: a prefix of --limit 50
    write_cases(chosen, "cases.jsonl"); read_cases("cases.jsonl") == chosen
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError, field_validator

from ...jsonl import JSONLError, read_jsonl, report
from ...tolc.tree import statement_key

MULTI_TURN = Path("lawyer_llama") / "legal_counsel_multi_turn_with_article_v2.jsonl"
CLIENT, LAWYER = "[客户]", "[律师]"
MAX_QUESTION, MAX_FACT, MAX_ASKED, MAX_FACTS = 2_000, 200, 200, 20
MIN_FACT_CHARS = 4  # a shorter clause (没有, 是的) is a fact only as the answer to a lawyer's question

_CLAUSE = re.compile(r"[。！!？?；;，,\n]+")
_SENTENCE = re.compile(r"[^。！!？?\n]*[。！!？?]?")
_ASKS = re.compile(
    r"[？?]$|[吗呢吧呀]$|怎么|怎样|如何|什么|哪|谁|能否|可否|是否|要不要|会不会|能不能|可不可以|为什么|多少钱"
    r"|请问|想知道|想了解|想问|想咨询|不知道|不清楚|不太懂|不懂|帮我|麻烦"
)
_NEW_TOPIC = re.compile(r"^(那么?|如果|假如|要是|万一|若是?|另外)")
_POLITE = re.compile(
    r"^(好的?|嗯+|哦+|行$|可以$|明白|了解了?$|知道了|懂了|收到|谢谢|感谢|多谢|没有其他|没问题|我会|我再|我先)"
    r"|^(?:我|那|嗯|哦|好的?)+(?:已经|都|也)?(?:明白|了解|知道|懂|清楚)了?$"
    r"|^(我|现在)*(很|非常|特别|真的)*(困扰|着急|难过|痛苦|伤心|焦虑|无奈|崩溃)"
)
_FILLER = re.compile(r"^(就是说?|但是|但|而且|还有|其实|所以|不过|因为|嗯+|哦+)")
_META = re.compile(r"还有(其他|什么|别的)|其他问题|需要我|是否需要|您需要|帮您|进一步(了解|咨询|查询)")
#: A clause about the conversation, not the case: 没有具体的法律名词, 您说的我都懂.
_ABOUT_TALK = re.compile(r"法律名词|法律术语|专业术语|[您你]说的|[您你]的(?:回答|建议|解答)|听不懂|看不懂")
#: A bare amount, date or count (28000元, 3年): a fact only when the lawyer asked for a number.
_BARE_NUMBER = re.compile(r"^[\d０-９.,，万千百十零一二两三四五六七八九元块年月日天个次岁%％余多约左右]+$")
_ASKS_NUMBER = re.compile(r"多少|几|多久|多长|金额|数额|时间|日期|哪年|何时|什么时候")


class Fact(BaseModel):
    """One key fact: what the client said, and the lawyer's question it answered (may be empty)."""

    id: str = Field(min_length=1, max_length=20)
    text: str = Field(min_length=1, max_length=MAX_FACT)
    asked: str = Field(default="", max_length=MAX_ASKED)

    def shown(self) -> str:
        """The fact as the client and the judge read it: ``text``, with the question it answered."""
        return f"{self.text}（回答律师的问题：{self.asked}）" if self.asked else self.text


class BenchCase(BaseModel):
    """One case: the client's first ``question`` and the ``facts`` only the client knows."""

    id: str = Field(min_length=1, max_length=100, pattern=r"^[\w.:-]+$")
    question: str = Field(min_length=1, max_length=MAX_QUESTION)
    facts: list[Fact] = Field(min_length=1, max_length=MAX_FACTS)
    source: str = Field(default="", max_length=300)

    @field_validator("facts")
    @classmethod
    def _distinct_ids(cls, facts: list[Fact]) -> list[Fact]:
        ids = [f.id for f in facts]
        if len(set(ids)) != len(ids):
            raise ValueError(f"fact ids repeat: {', '.join(ids)}")
        return facts


def split_facts(client_text: str, lawyer_before: str, question: str) -> list[tuple[str, str]]:
    """The key facts of one later client turn as ``(text, asked)`` pairs (the module's heuristic).

    >>> split_facts("没有孩子，我老婆回越南是因为她家里有急事。还有，怎么离婚呢？",
    ...             "请问，您们是否有孩子？", "老婆回越南了")
    [('没有孩子', '请问，您们是否有孩子？'), ('我老婆回越南是因为她家里有急事', '请问，您们是否有孩子？')]
    >>> split_facts("需要，谢谢。", "请问您是否需要进一步了解？", "…")
    []
    >>> split_facts("我明白了，没有具体的法律名词，28000元。", "您还有什么补充？", "…")
    []
    >>> split_facts("28000元", "借款金额是多少？", "…")
    [('28000元', '借款金额是多少？')]
    """
    asked = lawyer_question(lawyer_before)
    said = statement_key(question)
    out: list[tuple[str, str]] = []
    for raw in _CLAUSE.split(client_text):
        clause = _FILLER.sub("", raw.strip()).strip("…~～ ")
        if not clause or _ASKS.search(raw.strip()) or _NEW_TOPIC.match(clause) or _POLITE.match(clause):
            continue
        if len(clause) < MIN_FACT_CHARS and not asked:
            continue
        if _ABOUT_TALK.search(clause) or (_BARE_NUMBER.match(clause) and not _ASKS_NUMBER.search(asked)):
            continue  # 没有具体的法律名词; 28000元 answering no question about an amount
        key = statement_key(clause)
        if not key or key in said or any(statement_key(t) == key for t, _ in out):
            continue
        out.append((clause[:MAX_FACT], asked))
    return out


def lawyer_question(turn: str) -> str:
    """The question sentences of a lawyer's turn (at most the last two), those about the conversation
    itself left out; ``""`` when the lawyer asked nothing about the facts.

    >>> lawyer_question("根据规定……。请问您的丈夫是否知情？还有其他问题吗？")
    '请问您的丈夫是否知情？'
    """
    sentences = [s.strip().lstrip("…，,、：: ") for s in _SENTENCE.findall(turn)]
    asked = [s for s in sentences if s and (s.endswith(("？", "?")) or "请问" in s) and not _META.search(s)]
    return "".join(asked[-2:])[-MAX_ASKED:]


def dialogue_cases(data: Path) -> tuple[list[BenchCase], int]:
    """Every multi-turn consultation of ``data`` with at least one key fact, and how many had none.

    A malformed dialogue (no client first turn, not a list of strings) is skipped and counted with those."""
    path = Path(data) / MULTI_TURN
    try:
        rows = read_jsonl(path)
    except JSONLError as exc:
        raise ValueError(f"{exc} (the multi-turn consultations of the shared data, see --data)") from None
    cases, left_out = [], 0
    for n, row in rows:
        history = row.get("history")
        ok = isinstance(history, list) and history and all(isinstance(t, str) for t in history)
        if not ok or not history[0].startswith(CLIENT):
            left_out += 1
            continue
        question = history[0][len(CLIENT) :].strip()[:MAX_QUESTION]
        facts: list[tuple[str, str]] = []
        for before, turn in zip(history, history[1:], strict=False):
            if turn.startswith(CLIENT) and before.startswith(LAWYER):
                for fact in split_facts(turn[len(CLIENT) :], before[len(LAWYER) :], question):
                    if all(statement_key(fact[0]) != statement_key(f[0]) for f in facts):
                        facts.append(fact)
        if not question or not facts:
            left_out += 1
            continue
        cases.append(
            BenchCase(
                id=f"lawyer_llama-mt-{n:04d}",
                question=question,
                facts=[Fact(id=f"f{i}", text=t, asked=a) for i, (t, a) in enumerate(facts[:MAX_FACTS], 1)],
                source=f"{MULTI_TURN.as_posix()}:{n}",
            )
        )
    return cases, left_out


def sample(cases: list[BenchCase], limit: int | None, seed: int) -> list[BenchCase]:
    """The first ``limit`` cases of a shuffle seeded by ``seed`` (all of them when ``limit`` is None), so
    the cases of ``--limit 20`` are the first 20 of ``--limit 50`` with the same seed.

    >>> c = [BenchCase(id=f"c{i}", question="q", facts=[Fact(id="f1", text="t")]) for i in range(5)]
    >>> [x.id for x in sample(c, 3, 0)] == [x.id for x in sample(c, 4, 0)][:3]
    True
    """
    order = list(range(len(cases)))
    random.Random(seed).shuffle(order)
    return [cases[i] for i in order[:limit]]


def read_cases(path: str | Path) -> list[BenchCase]:
    """The cases of a JSONL file written by :func:`write_cases` (or by hand); every bad line is reported
    in one :class:`ValueError` naming its line."""
    try:
        rows = read_jsonl(path)
    except JSONLError as exc:
        raise ValueError(str(exc)) from None
    cases, errors, seen = [], [], set()
    for n, obj in rows:
        try:
            case = BenchCase.model_validate(obj)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "line"
            errors.append(f"{path}:{n}: {where}: {first['msg']}")
            continue
        if case.id in seen:
            errors.append(f"{path}:{n}: case id {case.id!r} appears twice")
            continue
        seen.add(case.id)
        cases.append(case)
    if errors:
        raise ValueError("用例文件有误 the cases file is not valid:\n" + report(errors))
    if not cases:
        raise ValueError(f"{path}: 没有用例 no case in the file")
    return cases


def cases_jsonl(cases: list[BenchCase]) -> str:
    """The cases as JSON Lines (what ``--save-cases`` writes and ``--cases`` reads)."""
    return "".join(json.dumps(c.model_dump(), ensure_ascii=False) + "\n" for c in cases)
