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

import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from training.annotations import (  # noqa: F401  (re-exported: the annotation converters)
    _labelled_items,
    annotation_items,
    item_verdicts,
    preference_rows,
    read_annotation_labels,
    reward_rows_from_annotations,
)
from training.shared_data import (  # noqa: F401  (re-exported: the readers of ../shared/data)
    COUNSEL_SPEAKERS,
    ROOT,
    SHARED_DATA,
    SOURCES,
    Consultation,
    _merged_turns,
    check_sources,
    consultations,
    counsel_dialogue,
    dedupe_key,
    disc_qa,
    domain_questions,
    lawbench_consult,
    lawbench_consult_predictions,
    legal_advice,
    legal_counsel,
    legal_counsel_multi_turn,
    read_json,
    read_jsonl,
    scenario_statute,
    zixun_gpt4,
)


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
#   receptionist question, domain (a domain id of lawluo/domains.yaml), source

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
    from lawluo.agents.lawyer import Brief, Lawyer
    from lawluo.domains import domain

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


def preference_dataset(labels, items):
    """:func:`preference_rows` as a ``datasets.Dataset`` (columns prompt, chosen, rejected, id)."""
    return to_dataset(preference_rows(labels, items), ("prompt", "chosen", "rejected", "id"))


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
    from training import receptionist_data as tr

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
    from lawluo.agents.receptionist import prepare
    from lawluo.domains import domain

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
