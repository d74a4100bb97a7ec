"""Read the shared data (``../shared/data``) into one record type, for every training script.

    from training.shared_data import SHARED_DATA, consultations, domain_questions
    for c in consultations(SHARED_DATA):            # every question with an answer, all sources
        c.source, c.id, c.question, c.answer, c.laws
    domain_questions(SHARED_DATA)                   # LawBench 2-4 dev: (id, question, LawBench label)

Each loader reads one file of ``../shared/data/README.md`` and returns :class:`Consultation` records;
:data:`SOURCES` names them. Nothing here labels or filters: scripts decide what to train on. The
converters into training datasets are in :mod:`training.data`, which re-exports everything here.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "data"


@dataclass(frozen=True)
class Consultation:
    """One question and what came with it.

    ``answer`` is the reference answer (a lawyer's, GPT-4's or a model's, per source; ``""`` if none);
    ``laws`` are statutes the record was built with (lawyer-llama's retrieved 民法典 articles, written
    ``《民法典》第X条：…``), empty for sources without them; ``turns`` are the client's turns of a
    multi-turn dialogue (the first is ``question``); ``dialogue`` is the whole multi-turn dialogue as
    ``("client"|"lawyer", text)`` pairs in order (empty for single-turn sources: see :func:`dialogue_of`);
    ``domain`` is the consultation domain id when the source knows it (LawLuo's own transcripts).
    """

    source: str
    id: str
    question: str
    answer: str = ""
    laws: tuple[str, ...] = ()
    turns: tuple[str, ...] = ()
    dialogue: tuple[tuple[str, str], ...] = ()
    domain: str = ""


def read_jsonl(path: Path) -> list[dict]:
    """Objects of a JSON Lines file (blank lines skipped)."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def read_json(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))


def legal_advice(data: Path) -> list[Consultation]:
    """lawyer_llama/legal_advice.jsonl: 5,000 scraped user questions, each line a one-element list."""
    rows = read_jsonl(data / "lawyer_llama" / "legal_advice.jsonl")
    out = []
    for n, row in enumerate(rows):
        rec = row[0] if isinstance(row, list) else row
        question = " ".join(x for x in (rec.get("instruction", ""), rec.get("input", "")) if x)
        out.append(Consultation("legal_advice", f"la-{n}", question, rec.get("output", "")))
    return out


def legal_counsel(data: Path) -> list[Consultation]:
    """lawyer_llama/legal_counsel_with_article_v2.jsonl: 1,000 single-turn consultations with articles."""
    rows = read_jsonl(data / "lawyer_llama" / "legal_counsel_with_article_v2.jsonl")
    return [
        Consultation("legal_counsel", f"lc-{n}", r["query"], r.get("response", ""), tuple(r.get("laws", ())))
        for n, r in enumerate(rows)
    ]


def legal_counsel_multi_turn(data: Path) -> list[Consultation]:
    """lawyer_llama/legal_counsel_multi_turn_with_article_v2.jsonl: 476 dialogues (``[客户]``/``[律师]``)."""
    rows = read_jsonl(data / "lawyer_llama" / "legal_counsel_multi_turn_with_article_v2.jsonl")
    out = []
    for n, r in enumerate(rows):
        history = r.get("history", [])
        client = tuple(h.removeprefix("[客户]").strip() for h in history if h.startswith("[客户]"))
        lawyer = "\n".join(h.removeprefix("[律师]").strip() for h in history if h.startswith("[律师]"))
        out.append(
            Consultation(
                "legal_counsel_mt",
                f"lcm-{n}",
                r["query"],
                lawyer,
                tuple(r.get("laws", ())),
                client,
                counsel_dialogue(history),
            )
        )
    return out


COUNSEL_SPEAKERS = {"[客户]": "client", "[律师]": "lawyer"}


def counsel_dialogue(history: Iterable[str]) -> tuple[tuple[str, str], ...]:
    """A lawyer-llama ``history`` (``[客户] …``/``[律师] …`` strings) as ("client"|"lawyer", text) turns.

    Consecutive turns of one speaker are joined (10 of the 476 dialogues have two in a row); a line
    with neither prefix continues the previous turn.

    >>> counsel_dialogue(["[客户] 能离婚吗", "[客户] 他打我", "[律师] 可以起诉。", "[客户] 谢谢"])
    (('client', '能离婚吗\\n他打我'), ('lawyer', '可以起诉。'), ('client', '谢谢'))
    """
    spoken: list[tuple[str, str]] = []
    last = "client"  # a line without a speaker continues the last turn that said something
    for line in history:
        prefix = next((p for p in COUNSEL_SPEAKERS if line.startswith(p)), None)
        role = COUNSEL_SPEAKERS[prefix] if prefix else last
        text = line.removeprefix(prefix) if prefix else line
        last = role if text.strip() else last
        spoken.append((role, text))
    return tuple((role, text) for role, text in _merged_turns(spoken))


def _merged_turns(spoken: Iterable[tuple[str, str]]) -> list[list[str]]:
    """Turns with their text stripped, empty ones dropped, consecutive turns of one speaker joined by newlines."""
    turns: list[list[str]] = []
    for role, text in spoken:
        text = text.strip()
        if not text:
            continue
        if turns and turns[-1][0] == role:
            turns[-1][1] += "\n" + text
        else:
            turns.append([role, text])
    return turns


def zixun_gpt4(data: Path) -> list[Consultation]:
    """lawyer_llama/zixun_gpt4.dev.jsonl: 500 questions, three 民法典 articles each, GPT-4 answers."""
    rows = read_jsonl(data / "lawyer_llama" / "zixun_gpt4.dev.jsonl")
    return [
        Consultation("zixun_gpt4", r["id"], r["query"], r.get("response", ""), tuple(r.get("laws", ())))
        for r in rows
    ]


def lawbench_consult(data: Path) -> list[Consultation]:
    """lawbench/consult.dev.jsonl: 250 real questions, a lawyer's answer ending in ``法律依据:``."""
    rows = read_jsonl(data / "lawbench" / "consult.dev.jsonl")
    return [Consultation("lawbench_consult", r["id"], r["question"], r.get("reference", "")) for r in rows]


def lawbench_consult_predictions(data: Path) -> dict[str, list[str]]:
    """lawbench/consult_predictions.dev.jsonl: the 14 systems' answers to consult.dev, by question id."""
    out: dict[str, list[str]] = {}
    for r in read_jsonl(data / "lawbench" / "consult_predictions.dev.jsonl"):
        out.setdefault(r["id"], []).append(r.get("answer") or "")
    return out


def scenario_statute(data: Path) -> list[Consultation]:
    """lawbench/scenario_statute.dev.jsonl: 250 ``场景:…`` questions; the answer names the governing law."""
    rows = read_jsonl(data / "lawbench" / "scenario_statute.dev.jsonl")
    return [
        Consultation("scenario_statute", r["id"], r["question"].removeprefix("场景:"), r.get("reference", ""))
        for r in rows
    ]


def disc_qa(data: Path) -> list[Consultation]:
    """disc/qa_short_answer.jsonl: 300 rows, case analyses (``请对以下案件…``) and short consultations."""
    rows = read_jsonl(data / "disc" / "qa_short_answer.jsonl")
    return [
        Consultation("disc", f"disc-{r.get('id', n)}", r["input"], r.get("output", ""))
        for n, r in enumerate(rows)
    ]


def _kinled(name: str, file: str) -> Callable[[Path], list[Consultation]]:
    def load(data: Path) -> list[Consultation]:
        rows = read_json(data / "lawluo_kinled" / file)
        return [
            Consultation(name, f"{name}-{n}", r["question"], r.get("answer", "")) for n, r in enumerate(rows)
        ]

    load.__doc__ = f"lawluo_kinled/{file}: the LawLuo paper's KINLED {{question, answer}} list."
    return load


#: Every source of questions with answers, by name (the name is ``Consultation.source``).
SOURCES: dict[str, Callable[[Path], list[Consultation]]] = {
    "legal_advice": legal_advice,
    "legal_counsel": legal_counsel,
    "legal_counsel_mt": legal_counsel_multi_turn,
    "zixun_gpt4": zixun_gpt4,
    "lawbench_consult": lawbench_consult,
    "scenario_statute": scenario_statute,
    "disc": disc_qa,
    "kinled_consult": _kinled("kinled_consult", "consult_995.json"),
    "kinled_exam": _kinled("kinled_exam", "exam_985.json"),
    "kinled_interp": _kinled("kinled_interp", "judicial_interp_4382.json"),
    "kinled_terms": _kinled("kinled_terms", "term_qa_3125.json"),
}


def check_sources(names: Iterable[str]) -> None:
    """Raise ValueError naming any of ``names`` that is not a key of :data:`SOURCES` (a script's flag check)."""
    unknown = [s for s in names if s not in SOURCES]
    if unknown:
        raise ValueError(f"unknown sources {unknown}; sources: {', '.join(SOURCES)}")


def consultations(data: Path = SHARED_DATA, sources: Iterable[str] | None = None) -> Iterator[Consultation]:
    """Records of the named sources (all of :data:`SOURCES` by default), in a fixed order."""
    for name in sources if sources is not None else SOURCES:
        if name not in SOURCES:
            raise KeyError(f"no source {name!r}; sources: {', '.join(SOURCES)}")
        yield from SOURCES[name](data)


def domain_questions(data: Path = SHARED_DATA) -> list[tuple[str, str, str]]:
    """lawbench/domain_questions.dev.jsonl as (id, question, LawBench label) — 250 rows, 20 labels."""
    rows = read_jsonl(data / "lawbench" / "domain_questions.dev.jsonl")
    return [(r["id"], r["question"], r["label"]) for r in rows]


_NOT_TEXT = re.compile(r"[\W_]+", re.UNICODE)


def dedupe_key(text: str) -> str:
    """A question reduced for duplicate detection: NFKC, lower case, punctuation and spaces removed.

    >>> dedupe_key("  你好，我想离婚！ ") == dedupe_key("你好我想离婚")
    True
    """
    return _NOT_TEXT.sub("", unicodedata.normalize("NFKC", text).lower())
