"""Building the clarification material: ``python -m lawluo build clarifications --data ../shared/data``.

Two kinds of yes/no elements, per consultation domain, are merged into ``assets/clarifications.jsonl.gz``
(read by :mod:`.material`), with ``assets/clarifications.PROVENANCE.md`` beside it:

1. **Statute elements** (``statute_elements.yaml``): the constituent facts of each domain's key articles,
   written by hand. Every entry names its law and articles; its elements are each other's follow-ups.
2. **Mined elements**, from the consultations of ``../shared/data`` (:data:`SOURCES`):

   - *asked*: the lawyer's questions in the lawyer-llama multi-turn dialogues (``[律师]`` turns), the
     clause that asks 是否/有没有/有无;
   - *conditions*: the conditions a lawyer's answer turns on (``如果/假如/倘若…，``) in the lawyer-llama
     dialogues and single-turn answers, the KINLED consultations and LawBench's consultation dev set.

   Each is normalised by :func:`yes_no` into a short 是否 statement (``您有没有签合同呢？`` →
   ``您是否有签合同？``; ``如果对方不同意离婚，`` → ``对方是否不同意离婚？``: 是否 goes before the first
   adverb, verb or preposition after the subject, found with jieba's part-of-speech tagger), and kept
   only when it is 6–40 characters long, names no number or date (a detail of one case), is not about
   the consultation itself (:data:`_META`: 需要帮助, 起诉, 律师 …) and contains a word of the legal
   vocabulary (its domain's keywords in the domain table, or :data:`FACT_WORDS`).

   A consultation's domain is its weak label (``lawluo/law/weak_labels.py``, the rules the receptionist
   was trained on: the laws its answer cites and the domain keywords of its question and answer);
   consultations whose label is ambiguous are skipped. An element's keywords are its domain's keywords
   found in the consultation's question or the element, and the first nouns of the question, so that
   BM25 matches a client's question against the consultation it came from. The same statement (up to
   punctuation, 是否 and 您) from several consultations of a domain is kept once, with its ``support``.

The build is deterministic: the same data and code give the same bytes (tests/test_tolc_material.py).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import yaml

from ..domains import PACKAGED, Domains
from ..files import asset_summary, rebuild_section, write_atomically
from .material import FILENAME, STATEMENT_MAX_CHARS, Item, is_yes_no, write_material
from .material import SOURCES as ITEM_SOURCES
from .tree import statement_key

STATUTE_FILE = Path(__file__).with_name("statute_elements.yaml")
PROVENANCE_FILENAME = "clarifications.PROVENANCE.md"
REBUILD_COMMAND = "python -m lawluo build clarifications --data ../shared/data"
STATEMENT_MIN_CHARS = 6
QUESTION_NOUNS = 6  # nouns of a consultation's question added to its elements' keywords
MAX_KEYWORDS = 12

#: The consultations mined: name → (file under the data folder, upstream, licence).
SOURCES = {
    "lawyer_llama_multi_turn": (
        "lawyer_llama/legal_counsel_multi_turn_with_article_v2.jsonl",
        "AndrewZhe/lawyer-llama @ abaa095",
        "Apache-2.0; README: academic research only",
    ),
    "lawyer_llama_single_turn": (
        "lawyer_llama/legal_counsel_with_article_v2.jsonl",
        "AndrewZhe/lawyer-llama @ abaa095",
        "Apache-2.0; README: academic research only",
    ),
    "lawyer_llama_zixun": (
        "lawyer_llama/zixun_gpt4.dev.jsonl",
        "AndrewZhe/lawyer-llama @ abaa095 (`data/zixun_gpt4.json`, dev half)",
        "Apache-2.0; README: academic research only",
    ),
    "lawyer_llama_advice": (
        "lawyer_llama/legal_advice.jsonl",
        "AndrewZhe/lawyer-llama @ abaa095",
        "Apache-2.0; README: academic research only",
    ),
    "kinled_consult": (
        "lawluo_kinled/consult_995.json",
        "NEFUJing/LawLuo @ 562fbe3",
        "no licence file; the authors state academic use only",
    ),
    "lawbench_consult": (
        "lawbench/consult.dev.jsonl",
        "open-compass/LawBench @ e30981b (`data/zero_shot/3-8.json`, dev half)",
        "Apache-2.0 repo; upstream data terms apply",
    ),
}

#: Words of the legal vocabulary an element may contain instead of one of its domain's keywords.
FACT_WORDS = tuple(
    """合同 协议 书面 约定 签订 签字 登记 证据 证明 凭证 借条 欠条 收据 发票 转账 记录 赔偿 补偿 责任 过错 故意 过失
    同意 承认 支付 交付 履行 违约 解除 到期 期限 超过 满 鉴定 认定 报警 伤残 受伤 死亡 损失 损害 财产 共同 婚前
    婚后 子女 抚养 遗嘱 继承 工资 社保 保险 劳动 单位 公司 股东 出资 担保 抵押 利息 定金 押金 房屋 产权 过户
    手续 许可 处罚 决定 通知 告知 医院 诊疗 病历 事故 驾驶 车辆 交警 商标 专利 著作权 作品 商品 质量 经营者""".split()
)
#: Clauses about the consultation, not the facts: dropped.
_META = re.compile(
    r"需要|帮助|疑问|咨询|律师|建议|了解|无法|不满意|以上|上述|进一步|仍然|依然|还是|想要|想|决定|打算|认为|觉得|"
    r"任何|不确定|困惑|起诉|诉讼|法院|仲裁|胜诉|败诉|选择|其他|具体|联系|可以|能够|能否|请|相关|这些|这种|这个|"
    r"该|此|哪|什么|怎么|如何|为什么|多少|问题|协商不成|协商无果|情况下|纠纷|案件|结案|立案"
)
_NUMBER = re.compile(r"[0-9０-９]|[一二三四五六七八九十两百千万]{2,}|[年月日号]份?$|\d")
_ASK = re.compile(r"是否|有没有|有无")
_CONDITION = re.compile(r"(?:如果|假如|倘若|如若|若是)([^，,。；;？?！!\n：:“”\"]{4,34}?)(?:的话)?[，,]")
_SENTENCE = re.compile(r"[^。？！?!\n]*[？?]")
_LEAD = re.compile(
    r"^(?:那么|另外|此外|所以|最后|同时|而且|但是|但|并且|然后|请问|我想问一下|我想问|您好|首先|其次)[，,]?"
)
_TAIL = re.compile(r"(?:呢|吗|么|嘛)?[？?]*$")
_SUBJECT_FLAGS = ("r", "n", "uj", "m", "q", "f", "s", "t", "b", "j", "l")
_BAD_ASK = re.compile(r"[仍还也都就又才再已未不没的]是否|是否[的了]|^是否是否")
_PREDICATE_WORDS = {
    "没有",
    "未",
    "已",
    "已经",
    "不",
    "在",
    "曾",
    "曾经",
    "确实",
    "因",
    "因为",
    "被",
    "对",
    "向",
    "与",
    "和",
}


@dataclass(frozen=True)
class Record:
    """One consultation: where it came from, the client's question, the lawyer's words, cited laws."""

    source: str
    index: int
    question: str
    lawyer: tuple[str, ...]  # the lawyer's turns (one for a single-turn answer)
    laws: tuple[str, ...] = ()

    @property
    def id(self) -> str:
        return f"{self.source}#{self.index}"


# -- reading the sources --------------------------------------------------------------------------------
def _jsonl(path: Path) -> Iterator[object]:
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            yield json.loads(line)


def read_records(data_dir: Path) -> list[Record]:
    """Every consultation of :data:`SOURCES` under ``data_dir``, in file order; ``FileNotFoundError``
    names the files that are missing."""
    data_dir = Path(data_dir)
    missing = [f for f, *_ in SOURCES.values() if not (data_dir / f).exists()]
    if missing:
        raise FileNotFoundError(f"{data_dir}: missing {', '.join(missing)} (see {REBUILD_COMMAND!r})")
    records: list[Record] = []
    for source, (name, *_) in SOURCES.items():
        path = data_dir / name
        rows = json.loads(path.read_text(encoding="utf-8")) if name.endswith(".json") else list(_jsonl(path))
        for i, row in enumerate(rows):
            row = row[0] if isinstance(row, list) and row else row  # legal_advice: one-row lists
            if not isinstance(row, dict):
                raise ValueError(f"{path}: row {i}: expected an object")
            records.append(_record(source, i, row))
    return records


def _record(source: str, i: int, row: dict) -> Record:
    laws = tuple(row.get("laws") or ())
    if "history" in row:  # [客户]/[律师] turns
        lawyer = tuple(t.removeprefix("[律师]").strip() for t in row["history"] if t.startswith("[律师]"))
        return Record(source, i, row.get("query", ""), lawyer, laws)
    question = row.get("query") or row.get("question") or row.get("instruction") or ""
    answer = row.get("response") or row.get("answer") or row.get("reference") or row.get("output") or ""
    return Record(source, i, question, (answer,), laws)


# -- yes/no statements ------------------------------------------------------------------------------------
def _posseg():
    from ..text import _jieba

    _jieba()  # initialised quietly
    import jieba.posseg

    return jieba.posseg


def yes_no(clause: str) -> str | None:
    """The clause as a short yes/no statement (是否…？), or ``None`` when it cannot be one.

    >>> yes_no("您有没有和单位签书面合同呢？")
    '您是否有和单位签书面合同？'
    >>> yes_no("对方不同意离婚")
    '对方是否不同意离婚？'
    """
    text = clause.strip(" ，,。\"“”'").replace("你", "您")
    text = _LEAD.sub("", text)
    text = _TAIL.sub("", text).removesuffix("的").strip(" ，,")
    if _ASK.search(text):
        statement = re.sub(r"有没有|有无", "是否有", text, count=1) if "是否" not in text else text
    else:
        out, placed = [], False
        for word, flag in _posseg().cut(text):
            if not placed and (word in _PREDICATE_WORDS or flag[:1] in ("d", "v", "p", "a", "c")):
                if out and out[-1] in ("的", "之"):
                    return None  # inside a noun phrase: no clean place for 是否
                out.append("是否")
                placed = True
            out.append(word)
        if not placed:
            return None
        statement = "".join(out)
    statement = statement.replace("是否是否", "是否")
    if _BAD_ASK.search(statement):
        return None  # 是否 after an adverb or inside a word: the rewriting went wrong
    if not STATEMENT_MIN_CHARS <= len(statement) <= STATEMENT_MAX_CHARS - 1:
        return None
    return statement + "？"


def asked(record: Record) -> list[str]:
    """The clauses of the lawyer's questions that ask 是否/有没有/有无, in order."""
    out = []
    for turn in record.lawyer:
        for sentence in _SENTENCE.findall(turn):
            clauses = [c for c in re.split(r"[，,；;]", sentence) if _ASK.search(c)]
            if clauses:
                out.append(clauses[-1])
    return out


def conditions(record: Record) -> list[str]:
    """The conditions the lawyer's words turn on (如果…，), in order."""
    return [m.group(1) for turn in record.lawyer for m in _CONDITION.finditer(turn)]


def keep(statement: str, domain_words: frozenset[str]) -> bool:
    """Whether a mined statement is worth offering: no number, not about the consultation itself, and
    at least one word of the legal vocabulary (its domain's keywords or :data:`FACT_WORDS`)."""
    body = statement.removesuffix("？")
    if _NUMBER.search(body) or _META.search(body) or not is_yes_no(statement):
        return False
    return any(w in body for w in domain_words) or any(w in body for w in FACT_WORDS)


# -- the build --------------------------------------------------------------------------------------------
def statute_items(domains: Domains = PACKAGED, path: Path = STATUTE_FILE) -> list[Item]:
    """The hand-written statute elements, validated: known domains, yes/no statements of at most
    :data:`STATEMENT_MAX_CHARS` characters, a law and articles for every entry."""
    data = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
    items = []
    for domain, entries in data.items():
        if domain not in domains.ids:
            raise ValueError(f"{path}: {domain!r} is not a domain id; ids: {', '.join(domains.ids)}")
        for n, entry in enumerate(entries, start=1):
            where = f"{path}: {domain} entry {n}"
            if not entry.get("law") or not entry.get("articles") or not entry.get("elements"):
                raise ValueError(f"{where}: needs law, articles and elements")
            ref = f"《{entry['law']}》第{'、'.join(str(a).replace('-', '条之') for a in entry['articles'])}条"
            ref = re.sub(r"条之(\d+)条", r"条之\1", ref)
            group = f"statute:{domain}:{n}"
            for m, statement in enumerate(entry["elements"], start=1):
                if not is_yes_no(statement) or len(statement) > STATEMENT_MAX_CHARS:
                    raise ValueError(f"{where}: {statement!r} is not a yes/no statement of ≤ 40 characters")
                items.append(
                    Item(
                        id=f"s-{domain}-{n}-{m}",
                        domain=domain,
                        statement=statement,
                        keywords=tuple(str(k) for k in entry.get("keywords", ())),
                        source="statute",
                        ref=ref,
                        groups=(group,),
                    )
                )
    return items


def mined_items(records: list[Record], label, domains: Domains = PACKAGED) -> tuple[list[Item], dict]:
    """Elements mined from ``records``; ``label(record) -> domain id | None`` is the weak labeller.

    Returns the items (per domain: most consultations first, then by statement) and counts for the
    provenance."""
    from ..text import STOPWORDS

    words = {d.id: frozenset(d.keywords) | frozenset(d.weak) for d in domains}
    found: dict[tuple[str, str], dict] = {}
    stats: Counter = Counter()
    for record in records:
        domain = label(record)
        stats[f"records:{record.source}"] += 1
        if domain is None:
            stats["records without a clear domain"] += 1
            continue
        nouns = [
            w
            for w, f in _posseg().cut(record.question)
            if f in ("n", "nz", "vn", "nt", "nw") and len(w) >= 2 and w not in STOPWORDS
        ]
        kinds = [("dialogue", c) for c in asked(record)] + [("answer", c) for c in conditions(record)]
        group = f"{'dialogue' if record.source.endswith('multi_turn') else 'answer'}:{record.id}"
        for kind, clause in kinds:
            stats[f"clauses:{kind}"] += 1
            statement = yes_no(clause)
            if statement is None or not keep(statement, words[domain]):
                continue
            stats[f"kept:{kind}"] += 1
            key = (domain, statement_key(statement))
            hits = [w for w in words[domain] if w in record.question or w in statement]
            entry = found.setdefault(
                key,
                {"statement": statement, "source": kind, "refs": [], "groups": [], "keywords": Counter()},
            )
            if record.id not in entry["refs"]:
                entry["refs"].append(record.id)
            if group not in entry["groups"]:
                entry["groups"].append(group)
            entry["keywords"].update(dict.fromkeys(sorted(hits) + nouns[:QUESTION_NOUNS], 1))
            if kind == "dialogue":
                entry["source"] = "dialogue"  # asked outright somewhere: the stronger kind
    order = {d: i for i, d in enumerate(domains.ids)}
    items = []
    for (domain, key), entry in sorted(
        found.items(), key=lambda kv: (order[kv[0][0]], -len(kv[1]["refs"]), kv[1]["statement"], kv[0][1])
    ):
        keywords = [w for w, _ in sorted(entry["keywords"].items(), key=lambda kv: (-kv[1], kv[0]))]
        items.append(
            Item(
                id="m-" + hashlib.sha1(f"{domain}|{key}".encode()).hexdigest()[:12],
                domain=domain,
                statement=entry["statement"],
                keywords=tuple(keywords[:MAX_KEYWORDS]),
                source=entry["source"],
                ref=", ".join(entry["refs"][:3])
                + (f" (+{len(entry['refs']) - 3})" if len(entry["refs"]) > 3 else ""),
                groups=tuple(entry["groups"][:5]),
                support=len(entry["refs"]),
            )
        )
    return items, dict(stats)


def weak_labeller(db, domains_file: Path | None = None):
    """``label(record)``: the record's weak domain label (``lawluo/law/weak_labels.py``), or ``None``.

    The rules live with the receptionist's training (one home for the weak-labelling rules); the build
    step imports them from the repository's ``training`` package."""
    from lawluo.law.weak_labels import RULES, load_rules, weak_label

    rules = load_rules(domains_file or RULES)

    def label(record: Record) -> str | None:
        return weak_label(record.question, "\n".join(record.lawyer), record.laws, rules, db).domain

    return label


def build_material(data_dir: Path, db, domains: Domains = PACKAGED) -> tuple[list[Item], dict]:
    """Statute elements, then mined elements, for every domain; raises when two items share an id."""
    statutes = statute_items(domains)
    taken = {(i.domain, statement_key(i.statement)) for i in statutes}
    mined, stats = mined_items(read_records(data_dir), weak_labeller(db, domains.source), domains)
    mined = [i for i in mined if (i.domain, statement_key(i.statement)) not in taken]
    items = statutes + mined
    if len({i.id for i in items}) != len(items):
        raise ValueError("duplicate clarification ids")
    return items, stats


def build_and_write(data_dir: Path, assets_dir: Path, db, domains: Domains = PACKAGED) -> dict:
    """Build the material and write ``clarifications.jsonl.gz`` and its ``PROVENANCE.md`` into
    ``assets_dir``; returns a summary for the CLI."""
    items, stats = build_material(data_dir, db, domains)
    path = Path(assets_dir) / FILENAME
    asset = write_material(items, path)
    provenance = Path(assets_dir) / PROVENANCE_FILENAME
    write_atomically(provenance, provenance_markdown(items, stats, asset, domains))
    by_source = {s: sum(i.source == s for i in items) for s in ITEM_SOURCES}
    return asset_summary(path, asset, provenance, items=len(items), by_source=by_source)


def provenance_markdown(items: list[Item], stats: dict, asset: bytes, domains: Domains = PACKAGED) -> str:
    """The text of ``clarifications.PROVENANCE.md`` (no timestamps: rebuilding gives the same text)."""
    lines = [
        "# clarifications.jsonl.gz — the clarification material",
        "",
        "Yes/no legal elements per consultation domain, which the Tree of Legal Clarifications offers",
        "without a language model (BM25 over statement and keywords, within the consultation's domain) and",
        "gives the clarifier model as reference material. One JSON object per line (`id`, `domain`,",
        "`statement`, `keywords`, `source`, `ref`, `groups`, `support`), gzip; built by",
        "`lawluo/tolc/mining.py` (its docstring says how each kind is mined and filtered).",
        "",
        *rebuild_section(REBUILD_COMMAND),
        f"- items: {len(items)}",
        f"- sha256 of `{FILENAME}`: `{hashlib.sha256(asset).hexdigest()}`",
        "",
        "## Items by domain and source",
        "",
        "| domain | statute | dialogue | answer |",
        "|---|---|---|---|",
    ]
    for d in domains:
        counts = [sum(i.domain == d.id and i.source == s for i in items) for s in ITEM_SOURCES]
        lines.append(f"| {d.id} ({d.name}) | " + " | ".join(str(c) for c in counts) + " |")
    lines += [
        "",
        "- `statute`: hand-written constituent elements of each domain's key articles",
        "  (`lawluo/tolc/statute_elements.yaml`, each entry with its law and articles; statutes are not",
        "  protected by copyright, PRC Copyright Law art. 5).",
        "- `dialogue`: a lawyer's clarifying question in a multi-turn consultation, made a yes/no statement.",
        "- `answer`: a condition a lawyer's answer turns on (如果…), made a yes/no statement.",
        "",
        "## Mined consultations",
        "",
        "| source | file in ../shared/data | consultations | upstream (commit) | licence / terms |",
        "|---|---|---|---|---|",
    ]
    for source, (name, upstream, licence) in SOURCES.items():
        lines.append(
            f"| `{source}` | `{name}` | {stats.get(f'records:{source}', 0)} | {upstream} | {licence} |"
        )
    lines += [
        "",
        f"- consultations without a clear weak domain label (skipped): {stats.get('records without a clear domain', 0)}",
        f"- clauses asked (是否/有没有/有无 in a lawyer's question): {stats.get('clauses:dialogue', 0)}, kept "
        f"{stats.get('kept:dialogue', 0)}",
        f"- conditions (如果…，): {stats.get('clauses:answer', 0)}, kept {stats.get('kept:answer', 0)}",
        "- kept statements are merged per domain (same text up to punctuation, 是否 and 您); `support` counts",
        "  the consultations a statement came from, `ref` names up to three (`<source>#<row index>`).",
        "",
        "## Known limitations",
        "",
        "- Domains come from weak labels (cited laws and keywords), not from a person: a consultation about",
        "  two matters gives its elements to one domain.",
        "- The yes/no rewriting is mechanical (jieba part-of-speech tags); a few statements read awkwardly.",
        "- Mined conditions are as specific as the consultation they came from; the ranking offers one only",
        "  when it matches the question at least as well as the best statute element (`MINED_MIN_SHARE`).",
        "- The lawyer-llama and KINLED data are for academic research only (their authors' terms).",
        "",
    ]
    return "\n".join(lines)
