"""Read the shared data (``../shared/data``) into one record type, for every training script.

    from training.data import SHARED_DATA, consultations, domain_questions
    for c in consultations(SHARED_DATA):            # every question with an answer, all sources
        c.source, c.id, c.question, c.answer, c.laws
    domain_questions(SHARED_DATA)                   # LawBench 2-4 dev: (id, question, LawBench label)

Each loader reads one file of ``../shared/data/README.md`` and returns :class:`Consultation` records;
:data:`SOURCES` names them. Nothing here labels or filters: scripts decide what to train on.

The converters below turn them, and LawLuo's own exports, into the chat-format datasets of step 7
(one module, so that no training script pastes its own loading code):

    sft_dataset(consultations(SHARED_DATA, ["kinled_consult", "legal_counsel_mt"]))   # messages (SFT)
    sft_dataset([transcript_record(s) for s in read_transcripts(["saved/"])], prompt_format="app")
    preference_dataset("labels.csv", "annotations.sqlite")      # prompt / chosen / rejected (DPO)
    reward_dataset(reward_rows_from_annotations("labels.csv", "items.jsonl")
                   + read_labelled_outputs("labelled.jsonl"))   # question, answer, label 1/0 (boss)
    receptionist_rows(SHARED_DATA, max_per_domain=200)          # question, domain id (receptionist)
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping
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


def sample_questions(
    data: Path,
    sources: Iterable[str],
    seed: int,
    max_samples: int | None = None,
    answered: bool = False,
) -> list[dict]:
    """``{id, question, answer}`` for the questions of ``sources`` (with ``answered``: only those with a
    reference answer), duplicates dropped (:func:`dedupe_key`, the first wins), shuffled with ``seed``,
    at most ``max_samples``: what a policy answers in HIPO and RL."""
    import random

    rows, seen = [], set()
    for c in consultations(Path(data), sources):
        key = dedupe_key(c.question)
        if not key or (answered and not c.answer.strip()) or key in seen:
            continue
        seen.add(key)
        rows.append({"id": f"{c.source}:{c.id}", "question": c.question.strip(), "answer": c.answer.strip()})
    random.Random(seed).shuffle(rows)
    return rows[:max_samples] if max_samples else rows


def prompt_messages(question: str, system_prompt: str | None = None) -> list[dict]:
    """The conversation a policy answers: the question as one user message (after ``system_prompt``).

    >>> prompt_messages("押金不退怎么办？", "你是律师。")
    [{'role': 'system', 'content': '你是律师。'}, {'role': 'user', 'content': '押金不退怎么办？'}]
    """
    system = [{"role": "system", "content": system_prompt}] if system_prompt else []
    return [*system, {"role": "user", "content": question}]


# -- chat-format datasets for the step-7 trainers ---------------------------------------------------
#
# Every converter returns plain rows (lists of dicts) or a ``datasets.Dataset`` in the column layout the
# trainer expects (TRL's "conversational" formats):
#   SFT          messages: [{"role": "system"|"user"|"assistant", "content": …}, …]   (+ source, id)
#   preference   prompt: [user message], chosen: [assistant message], rejected: [assistant message]  (+ id)
#   reward (BCE) question, answer, label (1 better / 0 worse), kind ("answer"|"report"), source
#   receptionist question, domain (a domain id of lawluo/agents/domains.yaml), source

CHAT_ROLES = {"client": "user", "lawyer": "assistant"}
PROMPT_FORMATS = ("plain", "app")
STATUTE_LINE = re.compile(
    r"^\s*《(?P<law>[^》]+)》\s*(?P<label>第[^：:\s]+条)\s*[：:]?\s*(?P<text>.*)$", re.S
)


def dialogue_of(record: Consultation) -> tuple[tuple[str, str], ...]:
    """The record as alternating ("client"|"lawyer", text) turns that start with the client and end with
    the lawyer: its ``dialogue``, or (question, answer). Empty turns are dropped, turns of one speaker in
    a row joined, trailing client turns dropped; ``()`` when no lawyer turn is left (nothing to learn).

    >>> dialogue_of(Consultation("s", "1", "能离婚吗", "可以。"))
    (('client', '能离婚吗'), ('lawyer', '可以。'))
    >>> dialogue_of(Consultation("s", "2", "能离婚吗", ""))
    ()
    """
    turns = _merged_turns(record.dialogue or (("client", record.question), ("lawyer", record.answer)))
    while turns and turns[-1][0] != "lawyer":
        turns.pop()
    if not turns or turns[0][0] != "client":
        return ()
    return tuple((role, text) for role, text in turns)


def chat_messages(dialogue: Iterable[tuple[str, str]], system: str | None = None) -> list[dict[str, str]]:
    """("client"|"lawyer", text) turns as chat messages (client → user, lawyer → assistant), with an
    optional system message first.

    >>> chat_messages([("client", "问"), ("lawyer", "答")], system="你是律师。")[0]
    {'role': 'system', 'content': '你是律师。'}
    """
    out = [{"role": "system", "content": system}] if system else []
    return out + [{"role": CHAT_ROLES[role], "content": text} for role, text in dialogue]


def statutes_of(laws: Iterable[str]) -> list[dict]:
    """Statutes written ``《民法典》第X条：text`` (lawyer-llama's ``laws``) as the dicts the lawyer's
    prompt lists (``law``, ``article_label``, ``text``); other lines are skipped.

    >>> statutes_of(["《民法典》第一千零七十九条：夫妻一方要求离婚的……", "无关"])
    [{'law': '民法典', 'article_label': '第一千零七十九条', 'text': '夫妻一方要求离婚的……'}]
    """
    out = []
    for line in laws:
        m = STATUTE_LINE.match(line)
        if m:
            out.append({"law": m["law"], "article_label": m["label"], "text": m["text"].strip()})
    return out


def app_messages(
    dialogue: tuple[tuple[str, str], ...], laws: Iterable[str] = (), domain_id: str = "other"
) -> list[dict[str, str]]:
    """The messages LawLuo's lawyer sends for the dialogue's last answer, followed by that answer.

    Built by :meth:`lawluo.agents.lawyer.Lawyer.messages` itself — the domain's role prompt as system
    message, the earlier turns, the last question inside the ``lawyer/turn`` template with ``laws`` as
    the retrieved statutes (no clarified facts) — so a lawyer fine-tuned on these rows is trained on the
    prompt the app sends.
    """
    from lawluo.agents.domains import domain
    from lawluo.agents.lawyer import Brief, Lawyer

    if len(dialogue) < 2 or dialogue[-1][0] != "lawyer" or dialogue[-2][0] != "client":
        raise ValueError("a dialogue for app_messages ends with a client turn and the lawyer's answer")
    brief = Brief(domain(domain_id), dialogue[-2][1], list(dialogue[:-2]), [], [], statutes_of(laws))
    messages = Lawyer(None).messages(brief)
    return messages + [{"role": "assistant", "content": dialogue[-1][1]}]


def sft_rows(
    records: Iterable[Consultation],
    prompt_format: str = "plain",
    system: str | None = None,
    route: Callable[[str], str] | None = None,
) -> list[dict]:
    """SFT rows ``{"messages", "source", "id"}`` (TRL's conversational language-modeling format) of every
    record that has a lawyer turn (:func:`dialogue_of`); multi-turn records keep all their turns.

    ``prompt_format="plain"``: the turns as they are, after ``system`` if given. ``"app"``: as the app's
    lawyer prompts (:func:`app_messages`), with the role prompt of the record's ``domain``, else of
    ``route(question)`` (e.g. the receptionist's routing), else the general lawyer's (其他).
    """
    if prompt_format not in PROMPT_FORMATS:
        raise ValueError(f"prompt_format {prompt_format!r} is not one of {', '.join(PROMPT_FORMATS)}")
    rows = []
    for rec in records:
        dialogue = dialogue_of(rec)
        if not dialogue:
            continue
        if prompt_format == "plain":
            messages = chat_messages(dialogue, system)
        else:
            domain_id = rec.domain or (route(dialogue[0][1]) if route else "other")
            messages = app_messages(dialogue, rec.laws, domain_id)
        rows.append({"messages": messages, "source": rec.source, "id": rec.id})
    return rows


def to_dataset(rows: list[dict], columns: Iterable[str]):
    """``rows`` as a ``datasets.Dataset`` with exactly ``columns`` (an empty one keeps the columns)."""
    from datasets import Dataset

    columns = list(columns)
    return Dataset.from_dict({c: [r[c] for r in rows] for c in columns})


def sft_dataset(records: Iterable[Consultation], **kwargs):
    """:func:`sft_rows` as a ``datasets.Dataset`` (columns messages, source, id)."""
    return to_dataset(sft_rows(records, **kwargs), ("messages", "source", "id"))


def general_messages(row: Mapping) -> list[dict[str, str]] | None:
    """A row of a general instruction dataset as chat messages, or None when it has no usable shape.

    Understood: ``messages`` (or ShareGPT's ``conversations`` with ``from``/``value``), Alpaca's
    ``instruction``/``input``/``output``, ``prompt``/``completion`` (or ``response``) and
    ``question``/``answer``.

    >>> general_messages({"instruction": "翻译", "input": "hello", "output": "你好"})
    [{'role': 'user', 'content': '翻译\\nhello'}, {'role': 'assistant', 'content': '你好'}]
    """
    if isinstance(row.get("messages"), list):
        messages = [{"role": m["role"], "content": m["content"]} for m in row["messages"]]
    elif isinstance(row.get("conversations"), list):
        roles = {
            "human": "user",
            "user": "user",
            "gpt": "assistant",
            "assistant": "assistant",
            "system": "system",
        }
        messages = [
            {"role": roles.get(m.get("from"), ""), "content": m.get("value", "")}
            for m in row["conversations"]
        ]
    else:
        pairs = (
            ("instruction", "output"),
            ("prompt", "completion"),
            ("prompt", "response"),
            ("question", "answer"),
        )
        key = next(
            ((q, a) for q, a in pairs if isinstance(row.get(q), str) and isinstance(row.get(a), str)), None
        )
        if key is None:
            return None
        user = "\n".join(x for x in (row[key[0]], row.get("input") or "") if isinstance(x, str) and x.strip())
        messages = [{"role": "user", "content": user}, {"role": "assistant", "content": row[key[1]]}]
    if any(
        m["role"] not in ("system", "user", "assistant") or not isinstance(m["content"], str)
        for m in messages
    ):
        return None
    if not messages or messages[-1]["role"] != "assistant" or not messages[-1]["content"].strip():
        return None
    return messages


def load_rows(name: str, split: str = "train"):
    """A dataset by local path (``.json``/``.jsonl``/``.csv``/``.parquet`` file, or a folder written by
    ``save_to_disk``) or hub id (needs network or the local cache), as a ``datasets.Dataset``."""
    import datasets

    path = Path(name).expanduser()
    if path.is_dir() and (path / "dataset_info.json").exists():
        loaded = datasets.load_from_disk(str(path))
        return loaded[split] if isinstance(loaded, datasets.DatasetDict) else loaded
    if path.is_file():
        kind = {".jsonl": "json", ".json": "json", ".csv": "csv", ".parquet": "parquet"}.get(path.suffix)
        if kind is None:
            raise ValueError(f"{name}: expected a .json, .jsonl, .csv or .parquet file")
        return datasets.load_dataset(kind, data_files=str(path), split="train")
    if name.startswith(("/", ".", "~")):
        raise FileNotFoundError(f"{name}: no such file or folder")
    return datasets.load_dataset(name, split=split)


# -- LawLuo's own consultation transcripts (lawluo.firm.state.Consultation.to_json) -------------------
def read_transcripts(paths: Iterable[str | Path]) -> list:
    """Saved consultations (``lawluo.firm.state.Consultation``): ``.json`` files of one ``to_json`` each,
    ``.jsonl`` files of one per line, or folders of those (sorted by name)."""
    from lawluo.firm.state import Consultation as State

    files: list[Path] = []
    for p in map(Path, paths):
        files += sorted(f for f in p.iterdir() if f.suffix in (".json", ".jsonl")) if p.is_dir() else [p]
    states = []
    for f in files:
        text = f.read_text(encoding="utf-8")
        try:
            if f.suffix == ".jsonl":
                states += [State.from_json(line) for line in text.splitlines() if line.strip()]
            else:
                states.append(State.from_json(text))
        except ValueError as exc:
            raise ValueError(f"{f}: {exc}") from None
    return states


def _answered(turn) -> bool:
    """A lawyer turn that is a real answer: text, and no note (no model, interrupted, failed)."""
    return turn.role == "lawyer" and bool(turn.text.strip()) and not turn.note


def transcript_record(state) -> Consultation:
    """A saved consultation as a :class:`Consultation` (source ``transcript``): the client's turns and
    the lawyer's real answers (turns with a note — no model, interrupted, failed — are left out), the
    domain it was routed to, and as ``laws`` the statutes retrieved for the last answer."""
    dialogue = tuple((t.role, t.text) for t in state.turns if t.role == "client" or _answered(t))
    answers = [t for t in state.turns if _answered(t)]
    laws = tuple(
        f"《{s['law']}》{s['article_label']}：{s.get('text', '')}"
        for s in (answers[-1].statutes if answers else [])
        if s.get("law") and s.get("article_label")
    )
    return Consultation(
        "transcript",
        state.id,
        state.first_question,
        answers[-1].text if answers else "",
        laws,
        tuple(state.client_turns),
        dialogue,
        state.domain or "",
    )


def transcript_outputs(state) -> list[dict]:
    """What the boss scores in a saved consultation: each real answer with the client turn before it
    (kind ``answer``) and the secretary's report as Markdown with the first question (kind ``report``;
    not a partial report written without a model)."""
    from lawluo.agents.secretary import Report, render_markdown

    out, question = [], ""
    for t in state.turns:
        if t.role == "client":
            question = t.text
        elif _answered(t) and question:
            out.append({"question": question, "answer": t.text, "kind": "answer"})
    if state.report:
        report = Report(**state.report)
        if not report.partial:
            out.append(
                {"question": state.first_question, "answer": render_markdown(report), "kind": "report"}
            )
    return out


# -- annotation labels (eval_ui.store.AnnotationStore.export / labels_frame) -------------------------
def read_annotation_labels(source) -> list[dict]:
    """The current labels of an annotation export: a ``.csv`` or ``.jsonl`` file written by
    ``AnnotationStore.export``, a ``labels_frame()`` DataFrame, or an iterable of such rows. Rows of
    edited-away versions (``current`` false) are dropped; every row needs ``item_id`` and ``verdict``."""
    import csv

    from eval_ui.verdicts import VERDICTS  # imported here: only the annotation converters need eval_ui

    if isinstance(source, str | Path):
        path = Path(source)
        if path.suffix == ".csv":
            with path.open(encoding="utf-8-sig", newline="") as f:
                rows = list(csv.DictReader(f))
        elif path.suffix == ".jsonl":
            rows = read_jsonl(path)
        else:
            raise ValueError(f"{path}: expected the .csv or .jsonl of an annotation export")
    elif hasattr(source, "to_dict"):
        rows = source.to_dict("records")
    else:
        rows = list(source)
    out = []
    for n, row in enumerate(rows, start=1):
        if not row.get("item_id") or row.get("verdict") not in VERDICTS:  # eval_ui/verdicts.py
            raise ValueError(
                f"label row {n}: needs an item_id and a verdict in {VERDICTS}, got {dict(row)!r:.200}"
            )
        if str(row.get("current", True)).strip().lower() in ("false", "0"):
            continue
        out.append(dict(row))
    return out


def item_verdicts(labels: Iterable[Mapping]) -> dict[str, str]:
    """Each item's verdict over its annotators: the verdict most of them gave, or ``"tie"`` when two
    verdicts have the same top count (the annotators disagree; no preference is read into it).

    >>> item_verdicts([{"item_id": "1", "verdict": v} for v in "AAB"] + [{"item_id": "2", "verdict": "A"},
    ...                {"item_id": "2", "verdict": "B"}, {"item_id": "3", "verdict": "both_bad"}])
    {'1': 'A', '2': 'tie', '3': 'both_bad'}
    """
    from collections import Counter

    votes: dict[str, Counter] = {}
    for row in labels:
        votes.setdefault(str(row["item_id"]), Counter())[row["verdict"]] += 1
    out = {}
    for item_id, counter in votes.items():
        (top, n), *rest = counter.most_common()
        out[item_id] = "tie" if rest and rest[0][1] == n else top
    return out


def annotation_items(source) -> Callable[[str], object]:
    """A lookup item id → ``eval_ui.items.Item`` (or None) over an ``AnnotationStore``, the store's
    ``.sqlite`` file, an items file (``.jsonl``/``.csv`` as ``eval_ui.items.read_items`` reads), a
    mapping id → Item, or an iterable of Items."""
    if hasattr(source, "item"):
        return source.item
    if isinstance(source, str | Path):
        path = Path(source)
        if path.suffix in (".sqlite", ".sqlite3", ".db"):
            from eval_ui.store import AnnotationStore

            return AnnotationStore(path).item
        from eval_ui.items import read_items

        source = read_items(path)
    if not isinstance(source, Mapping):
        source = {item.id: item for item in source}
    return source.get


def _labelled_items(labels, items) -> list[tuple[object, str]]:
    lookup = annotation_items(items)
    verdicts = item_verdicts(read_annotation_labels(labels))
    found = [(lookup(item_id), verdict) for item_id, verdict in verdicts.items()]
    missing = [item_id for (item, _), item_id in zip(found, verdicts, strict=True) if item is None]
    if missing:
        raise ValueError(f"{len(missing)} labelled item(s) not among the items: {', '.join(missing[:5])}")
    return found


def preference_rows(labels, items) -> list[dict]:
    """DPO pairs from pairwise labels (TRL's conversational preference format): for every item whose
    verdict (:func:`item_verdicts`) is ``A`` or ``B``, ``prompt`` = the question as a user message,
    ``chosen``/``rejected`` = the winner's/loser's answer as an assistant message. ``tie`` and
    ``both_bad`` carry no preference and are dropped. ``labels``: see :func:`read_annotation_labels`;
    ``items``: see :func:`annotation_items`."""
    rows = []
    for item, verdict in _labelled_items(labels, items):
        if verdict not in ("A", "B"):
            continue
        win, lose = (item.answer_a, item.answer_b) if verdict == "A" else (item.answer_b, item.answer_a)
        rows.append(
            {
                "prompt": [{"role": "user", "content": item.question}],
                "chosen": [{"role": "assistant", "content": win}],
                "rejected": [{"role": "assistant", "content": lose}],
                "id": item.id,
            }
        )
    return rows


def preference_dataset(labels, items):
    """:func:`preference_rows` as a ``datasets.Dataset`` (columns prompt, chosen, rejected, id)."""
    return to_dataset(preference_rows(labels, items), ("prompt", "chosen", "rejected", "id"))


def reward_rows_from_annotations(labels, items) -> list[dict]:
    """Labelled answers from pairwise labels: the winner of ``A``/``B`` is better (1) and the loser worse
    (0); with ``both_bad`` both answers are worse (0); ``tie`` items are dropped."""
    rows = []
    for item, verdict in _labelled_items(labels, items):
        if verdict == "tie":
            continue
        good = {"A": (1, 0), "B": (0, 1), "both_bad": (0, 0)}[verdict]
        for answer, label in zip((item.answer_a, item.answer_b), good, strict=True):
            rows.append(
                {
                    "question": item.question,
                    "answer": answer,
                    "label": label,
                    "kind": "answer",
                    "source": f"annotation:{item.id}",
                }
            )
    return rows


LABEL_WORDS = {"1": 1, "better": 1, "true": 1, "good": 1, "0": 0, "worse": 0, "false": 0, "bad": 0}


def read_labelled_outputs(path: str | Path) -> list[dict]:
    """Labelled answers and reports from a JSONL file: ``question``, ``answer`` (or ``report``),
    ``label`` (1/0, true/false, ``better``/``worse``), optional ``kind`` (``answer``/``report``; a row
    with ``report`` is a report). Any bad line raises ValueError naming it."""
    rows, errors = [], []
    for n, r in enumerate(read_jsonl(Path(path)), start=1):
        text = r.get("answer", r.get("report"))
        label = LABEL_WORDS.get(str(r.get("label")).strip().lower())
        kind = r.get("kind") or ("report" if "report" in r else "answer")
        if (
            not isinstance(r.get("question"), str)
            or not isinstance(text, str)
            or label is None
            or kind not in ("answer", "report")
        ):
            errors.append(f"{path}:{n}: needs question, answer (or report) and label 1/0, better/worse")
            continue
        rows.append(
            {
                "question": r["question"],
                "answer": text,
                "label": label,
                "kind": kind,
                "source": f"{Path(path).name}:{n}",
            }
        )
    if errors:
        raise ValueError("\n".join(errors[:20]))
    return rows


def transcript_reward_rows(states: Iterable, label: int) -> list[dict]:
    """Every answer and report of saved consultations (:func:`transcript_outputs`) with one ``label``:
    e.g. consultations a lawyer reviewed and sorted into good (1) and bad (0)."""
    return [
        {**o, "label": int(label), "source": f"transcript:{s.id}"}
        for s in states
        for o in transcript_outputs(s)
    ]


def weak_reward_rows(records: Iterable[Consultation], seed: int = 0) -> list[dict]:
    """Weak labels when nobody has labelled answers yet: each record's own answer is better (1) and the
    answer of another question of the same source worse (0) — an answer that does not address the
    question. It teaches relevance, not legal quality; use real labels for the boss."""
    import random

    by_source: dict[str, list[Consultation]] = {}
    for rec in records:
        if rec.question.strip() and rec.answer.strip():
            by_source.setdefault(rec.source, []).append(rec)
    rng, rows = random.Random(seed), []
    for source, recs in by_source.items():
        if len(recs) < 2:
            continue
        for i, rec in enumerate(recs):
            other = recs[(i + rng.randrange(1, len(recs))) % len(recs)]
            if other.answer.strip() == rec.answer.strip():
                continue  # a duplicate answer is no worse
            rows.append(
                {
                    "question": rec.question,
                    "answer": rec.answer,
                    "label": 1,
                    "kind": "answer",
                    "source": source,
                }
            )
            rows.append(
                {
                    "question": rec.question,
                    "answer": other.answer,
                    "label": 0,
                    "kind": "answer",
                    "source": source,
                }
            )
    return rows


def reward_dataset(rows: list[dict]):
    """Reward rows as a ``datasets.Dataset`` (columns question, answer, label, kind, source)."""
    return to_dataset(rows, ("question", "answer", "label", "kind", "source"))


# -- labelled questions for the receptionist -------------------------------------------------------
def receptionist_rows(
    data: Path = SHARED_DATA,
    sources: Iterable[str] = ("legal_advice", "legal_counsel", "legal_counsel_mt", "zixun_gpt4", "disc"),
    max_per_domain: int | None = None,
    seed: int = 0,
    with_dev: bool = True,
    lawluo_config: str | None = None,
) -> list[dict]:
    """Questions with a domain id: the weakly labelled questions of ``sources`` that
    ``training/train_receptionist.py`` trains on (``build_weak_set``: cited laws + keywords, LawBench
    dev questions and duplicates excluded; the statute database of the LawLuo settings
    ``lawluo_config``) and, with ``with_dev``, the 250 LawBench dev questions (source ``lawbench_dev``,
    labels mapped by ``domains.from_lawbench``). Questions are as
    :func:`lawluo.agents.receptionist.prepare` leaves them."""
    from lawluo.agents.receptionist import prepare
    from training import train_receptionist as tr

    cfg = tr.ReceptionistConfig(
        data_dir=str(data),
        lawluo_config=lawluo_config,
        sources=list(sources),
        max_per_domain=max_per_domain,
        seed=seed,
        tune=False,
    )
    _, dev_texts, dev_labels = tr.dev_set(Path(data), cfg.domains())
    weak = tr.build_weak_set(cfg, exclude=dev_texts)
    rows = [
        {"question": q, "domain": d, "source": s}
        for q, d, s in zip(weak.texts, weak.labels, weak.sources, strict=True)
    ]
    if with_dev:
        rows += [
            {"question": prepare(q), "domain": d, "source": "lawbench_dev"}
            for q, d in zip(dev_texts, dev_labels, strict=True)
        ]
    return rows


def read_labelled_questions(path: str | Path) -> list[dict]:
    """Questions with a domain from a JSONL file: ``question`` and ``domain`` (an id or Chinese name of
    ``domains.yaml``), optional ``source``."""
    from lawluo.agents.domains import domain
    from lawluo.agents.receptionist import prepare

    rows = []
    for n, r in enumerate(read_jsonl(Path(path)), start=1):
        try:
            rows.append(
                {
                    "question": prepare(r["question"]),
                    "domain": domain(r["domain"]).id,
                    "source": r.get("source") or Path(path).name,
                }
            )
        except KeyError as exc:
            raise ValueError(f"{path}:{n}: {exc}") from None
    return rows
