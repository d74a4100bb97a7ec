"""The case bank: the cases the Tree of Legal Clarifications (ToLC) retrieves before it asks the client.

ToLC (LawLuo paper, "Tree of Legal Clarifications") first retrieves the top-K cases most similar to a
vague question and lets an LLM derive the legal elements that decide them. This module builds those
cases from ``../shared/data`` into one committed asset, ``assets/cases.jsonl.gz`` (one JSON object per
line, gzip), records where they came from in ``assets/cases.PROVENANCE.md``, and loads them back.

Sources (see ``../shared/data/README.md``):

- ``lawbench/criminal_facts_articles.jsonl`` and ``criminal_facts_terms.jsonl`` — CAIL2018 criminal
  facts (LawBench tasks 3-1 and 3-4). Both files describe the same facts; records with identical fact
  text are merged into one case carrying the charge, the cited 刑法 articles and the sentence.
- ``laws/案例/**.md`` — official typical cases published by the courts (LawRefBook/Laws).
- ``disc/qa_short_answer.jsonl`` — the case analyses of DISC-LawLLM's evaluation set (inputs starting
  with ``请对以下案件做出分析并给出可能的判决``); its short Q&A and exam questions are left out.

Rebuild with ``python -m lawluo build cases --data ../shared/data`` (:func:`build_and_write`).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable
from pathlib import Path

from ..domains import PACKAGED, Domains
from ..files import asset_summary, rebuild_section, write_atomically
from .case_record import SOURCES, Case, load_case_bank, write_case_bank  # noqa: F401  (the record, re-exported)

#: The consultation domains a ``domain_hint`` may name, by default (the names of the packaged table's
#: rows; a case's domain_hint is the Chinese name of a consultation domain).
DOMAINS = PACKAGED.names

CRIMINAL_LAW = "中华人民共和国刑法"
REBUILD_COMMAND = "python -m lawluo build cases --data ../shared/data"
CASES_FILENAME = "cases.jsonl.gz"
PROVENANCE_FILENAME = "cases.PROVENANCE.md"

# ---------------------------------------------------------------------------------------------
# Cause of action heuristics (data, applied in order; first match wins). The cause → domain hints are
# the ``cause_hints`` of the domain table's rows (lawluo/domains.yaml).
# ---------------------------------------------------------------------------------------------

#: Phrases in which a judgment or report names the cause of action outright.
_EXPLICIT_CAUSE = (
    re.compile(r"本案(?:系|为|是|属于?)([^，。；、\s]{2,14}?纠纷)"),
    re.compile(r"以([^，。；、\s]{2,14}?纠纷)为由"),
    re.compile(r"提起([^，。；、\s]{2,14}?纠纷)诉讼"),
)

#: Keyword rules for cases that do not name their cause (DISC's civil judgments, news-style reports).
#: Each pattern is searched in the facts and the outcome; order matters (specific before general).
_CAUSE_RULES: tuple[tuple[str, str], ...] = (
    (r"信用卡", "信用卡纠纷"),
    (r"物业费|物业服务", "物业服务合同纠纷"),
    (r"挂靠", "挂靠经营合同纠纷"),
    (r"交通事故|交强险", "机动车交通事故责任纠纷"),
    (r"提供劳务.{0,12}(?:受到|损害|受伤|意外)", "提供劳务者受害责任纠纷"),
    (r"劳动合同|劳动关系|劳动争议|用人单位|劳动者|入职|加班费|经济补偿金", "劳动争议"),
    (r"合伙", "合伙合同纠纷"),
    (r"承建|施工合同", "建设工程施工合同纠纷"),
    (r"劳务", "劳务合同纠纷"),
    (r"收养", "收养关系纠纷"),
    (r"遗嘱", "遗嘱继承纠纷"),
    (r"继承", "继承纠纷"),
    (r"撤销婚姻", "撤销婚姻纠纷"),
    (r"离婚", "离婚纠纷"),
    # A bank or credit cooperative, by its registered name, as the plaintiff or as a party to a loan
    # contract; not 银行间同业拆借 rates, nor a transfer 通过银行.
    (
        r"原告[\u4e00-\u9fff]{0,20}?(?:银行|信用社|信用合作联社)(?:股份)?(?:有限|支行|分行)"
        r"|(?:银行|支行|分行|信用社)[^，。；]{0,30}?(?:借款合同|贷款合同)",
        "金融借款合同纠纷",
    ),
    (r"借款|借条|借据|借贷", "民间借贷纠纷"),
    (r"保证人|连带保证|保证责任|担保人", "保证合同纠纷"),
    (r"商品房", "商品房买卖合同纠纷"),
    (r"房屋租赁|租房|出租.{0,8}房屋", "房屋租赁合同纠纷"),
    (r"租赁", "租赁合同纠纷"),
    (r"运输合同", "运输合同纠纷"),
    (r"停车|保管", "保管合同纠纷"),
    (r"培训|课程", "教育培训合同纠纷"),
    (r"承揽|加工", "承揽合同纠纷"),
    (r"货款|供货|买卖合同|购买|欠条", "买卖合同纠纷"),
    (r"不正当.{0,2}关系|死亡|身亡|受伤|摔伤|坠落|伤残", "生命权、身体权、健康权纠纷"),
    (r"侵权|损害赔偿", "侵权责任纠纷"),
    (r"服务|咨询", "服务合同纠纷"),
    (r"合同|协议", "合同纠纷"),
)
_CAUSE_RULES_RE = tuple((re.compile(p, re.S), cause) for p, cause in _CAUSE_RULES)

#: Folder of ``laws/案例`` → (default cause when the case names none, consultation domain).
_TYPICAL_FOLDERS: dict[str, tuple[str, str]] = {
    "劳动人事": ("劳动争议", "劳动纠纷"),
    "消费购物": ("", "消费权益"),
    "行政协议诉讼": ("", "行政诉讼"),
    "民法典": ("", ""),
}


def infer_cause(*texts: str) -> str:
    """The cause of action a civil text names (``本案系…纠纷``) or, failing that, the first keyword rule
    of :data:`_CAUSE_RULES` that matches; ``""`` when nothing matches.

    >>> infer_cause("马某以网络服务合同纠纷为由将X公司诉至法院")
    '网络服务合同纠纷'
    >>> infer_cause("被告向原告借款5万元，出具借条一张")
    '民间借贷纠纷'
    """
    for text in texts:
        for pattern in _EXPLICIT_CAUSE:
            m = pattern.search(text)
            if m:
                return m.group(1)
    joined = "\n".join(texts)
    for pattern, cause in _CAUSE_RULES_RE:
        if pattern.search(joined):
            return cause
    return ""


def domain_for_cause(cause: str, domains: Domains = PACKAGED) -> str:
    """The consultation domain a cause obviously belongs to, else ``""``: the ``cause_hints`` of the
    domain table's rows (``lawluo/domains.yaml``), tried by rank, first match wins.

    >>> domain_for_cause("民间借贷纠纷"), domain_for_cause("网络购物合同纠纷"), domain_for_cause("盗窃")
    ('债权债务', '合同纠纷', '')
    """
    return domains.domain_for_cause(cause)


# A defendant (or respondent) at the start of what follows 诉/与/申请执行 in a case name: an anonymised
# person (杨某, 罗某某) or an organisation ending in one of these words, optionally with a branch (江宁店).
_PERSON = r"[\u4e00-\u9fff]某+[甲乙丙丁]?"
_ORG = (
    r".*?(?:公司|局|政府|办事处|委员会|办公室|医院|报社|网站|影楼|书店|广场|机构|银行|中心)"
    r"(?:[\u4e00-\u9fff]{1,6}?(?:分公司|支行|分行|店))?"
)
_PARTY_RE = re.compile(rf"^(?:{_PERSON}|{_ORG})(?:等|、)?")
_CASE_NAME_RE = re.compile(r"(?:诉|与|申请执行).+案$")


def cause_from_case_name(name: str, *, administrative: bool = False) -> str:
    """The cause of action in a case name: what follows the (last) defendant, without ``案``/``一案``.

    Civil causes get the conventional ``纠纷`` suffix; administrative ones (``administrative=True``) are
    kept as the court wrote them. Returns ``""`` when ``name`` is not a ``X诉Y…案`` case name.

    >>> cause_from_case_name("张某等人诉某销售公司、孟某某服务合同纠纷案")
    '服务合同纠纷'
    >>> cause_from_case_name("孙银山诉南京欧尚超市有限公司江宁店买卖合同纠纷案")
    '买卖合同纠纷'
    >>> cause_from_case_name("某海外代购公司诉某商业通讯报社、某门户网站侵犯名誉权案")
    '名誉权纠纷'
    >>> cause_from_case_name("王某诉安徽省怀宁县国土资源局土地管理行政出让案", administrative=True)
    '土地管理行政出让'
    """
    name = name.strip()
    if not _CASE_NAME_RE.search(name):
        return ""
    rest = re.split(r"申请执行|诉|与", name)[-1]
    rest = re.sub(r"(?:一案|案)$", "", rest)
    for _ in range(4):  # several defendants: 某商业通讯报社、某门户网站…
        m = _PARTY_RE.match(rest)
        if not m or m.end() == len(rest):
            break
        rest = rest[m.end() :]
        if not m.group(0).endswith("、"):
            break
    rest = re.sub(r"^侵犯(.+权)$", r"\1", rest)
    if not rest:
        return ""
    if administrative or rest.endswith("纠纷"):
        return rest
    return rest + "纠纷"


# ---------------------------------------------------------------------------------------------
# Articles
# ---------------------------------------------------------------------------------------------

Extractor = Callable[[str], list]


#: Names the extractor may return that are not statutes: the parties' own contracts and agreements
#: (``《商品房买卖合同补充协议》第24条``) and DISC's judgments whose interpretation titles were cut to
#: ``《最高人民法院》``.
_NOT_A_STATUTE = re.compile(r"(?:合同|协议|^最高人民法院)$")


def _articles(citations: Iterable[object]) -> list[dict[str, str | int]]:
    """Distinct ``(law, article, suffix)`` of citations with a known article number, first-seen order;
    citations of contracts/agreements (see :data:`_NOT_A_STATUTE`) are left out."""
    seen: set[tuple[str, int, int]] = set()
    out: list[dict[str, str | int]] = []
    for c in citations:
        key = (str(c.law), int(c.article), int(getattr(c, "suffix", 0) or 0))
        if key[1] <= 0 or not key[0] or _NOT_A_STATUTE.search(key[0]) or key in seen:
            continue
        seen.add(key)
        out.append({"law": key[0], "article": key[1], "suffix": key[2]})
    return out


# ---------------------------------------------------------------------------------------------
# Source readers
# ---------------------------------------------------------------------------------------------


def _clean(text: str) -> str:
    """Normalise line ends and blank lines; strip each line."""
    lines = (line.strip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"))
    return "\n".join(line for line in lines if line)


def _read_jsonl(path: Path) -> list[dict]:
    rows = []
    with path.open(encoding="utf-8") as f:
        for lineno, line in enumerate(f, start=1):
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    raise ValueError(f"{path}: line {lineno}: {exc}") from exc
    return rows


_CAIL_LABELS = re.compile(r"罪名:(?P<charges>[^。]*)。?\s*(?:法条:(?P<articles>.*))?$", re.S)
_CAIL_ARTICLES = re.compile(r"刑法第([\d、]+)条")


def _parse_cail_articles(text: str) -> list[dict[str, str | int]]:
    """``刑法第264、67条`` → articles 264 and 67 of the Criminal Law."""
    m = _CAIL_ARTICLES.search(text or "")
    if not m:
        return []
    return [{"law": CRIMINAL_LAW, "article": int(n), "suffix": 0} for n in m.group(1).split("、") if n]


def _cail_cases(lawbench: Path) -> list[Case]:
    """Merge the two CAIL files by fact text: one case per distinct fact, id ``cail-<n>`` after the
    smallest LawBench record index ``n`` (``lb31-n``/``lb34-n``) that carries it."""
    merged: dict[str, dict] = {}
    for filename in ("criminal_facts_articles.jsonl", "criminal_facts_terms.jsonl"):
        for row in _read_jsonl(lawbench / filename):
            text = row["input"]
            cut = text.rfind("罪名:")
            m = _CAIL_LABELS.match(text, cut) if cut >= 0 else None
            if not text.startswith("事实:") or m is None:
                raise ValueError(f"{filename} {row['id']}: expected '事实:…罪名:…', got {text[-60:]!r}")
            facts = _clean(text[len("事实:") : cut])
            n = int(row["id"].rsplit("-", 1)[1])
            entry = merged.setdefault(facts, {"n": n, "charges": [], "articles": [], "sentence": ""})
            entry["n"] = min(entry["n"], n)
            for charge in re.split(r"[;；]", m.group("charges")):
                if charge.strip() and charge.strip() not in entry["charges"]:
                    entry["charges"].append(charge.strip())
            output = row.get("output", "")
            for art in _parse_cail_articles(m.group("articles") or "") + _parse_cail_articles(output):
                if art not in entry["articles"]:
                    entry["articles"].append(art)
            if output.startswith("刑期:"):
                value = output[len("刑期:") :].strip()
                entry["sentence"] = {"无期": "无期徒刑"}.get(value, value)
    cases = []
    for facts, e in merged.items():
        charges = "；".join(e["charges"])
        cases.append(
            Case(
                id=f"cail-{e['n']}",
                source="cail",
                title=f"{charges}案",
                cause=charges,
                domain_hint=PACKAGED["criminal"].cases_as,  # CAIL: criminal facts only
                facts=facts,
                outcome="",
                articles=sorted(e["articles"], key=lambda a: (a["article"], a["suffix"])),
                sentence=e["sentence"],
            )
        )
    ids = [c.id for c in cases]
    if len(ids) != len(set(ids)):
        raise ValueError("CAIL: two distinct facts share a record index; ids would collide")
    return sorted(cases, key=lambda c: int(c.id.split("-")[1]))


#: Sections of a typical case that describe the facts (the rest is outcome and commentary).
_FACT_SECTIONS = ("基本案情", "简要案情", "案情回顾")
_CLAIM_SECTIONS = ("原告诉讼请求", "申请人请求")
_SKIP_SECTIONS = ("关键词",)


def _markdown_sections(body: str) -> list[tuple[str, str]]:
    """``## heading`` sections of a LawRefBook case body, in order, with cleaned text."""
    sections: list[tuple[str, list[str]]] = [("", [])]
    for line in body.split("\n"):
        m = re.match(r"^#{2,6}\s*(.*?)\s*$", line)
        if m:
            sections.append((m.group(1).strip(" \u3000"), []))
        elif not re.match(r"^\s*(?:<!--.*-->|文/.*)\s*$", line):
            sections[-1][1].append(line)
    return [(h, _clean("\n".join(lines))) for h, lines in sections]


def _typical_case(path: Path, root: Path, extract: Extractor, domains: Domains = PACKAGED) -> Case:
    """One ``laws/案例/<folder>/<name>.md`` file → a case; raises ``ValueError`` when it has no facts."""
    rel = path.relative_to(root).as_posix()
    folder = rel.split("/", 1)[0]
    text = path.read_text(encoding="utf-8").replace("\r\n", "\n")
    m = re.match(r"\s*#\s+(.+?)\s*\n", text)
    if not m:
        raise ValueError(f"{rel}: no '# title' line")
    title = m.group(1).strip()
    body = text.split("<!-- INFO END -->", 1)[1] if "<!-- INFO END -->" in text else text[m.end() :]
    facts, claims, outcome, case_name = [], [], [], ""
    for heading, content in _markdown_sections(body):
        if not content:
            if _CASE_NAME_RE.search(heading):
                case_name = heading
            continue
        if heading in _FACT_SECTIONS:
            facts.append(content)
        elif heading in _CLAIM_SECTIONS:
            claims.append(f"{heading}：{content}")
        elif heading not in _SKIP_SECTIONS:
            outcome.append(f"【{heading}】\n{content}" if heading else content)
    if not facts:
        raise ValueError(f"{rel}: no facts section ({'/'.join(_FACT_SECTIONS)})")
    if not case_name and _CASE_NAME_RE.search(title):
        case_name = title
    default_cause, folder_domain = _TYPICAL_FOLDERS.get(folder, ("", ""))
    facts_text = "\n".join(facts + claims)
    outcome_text = "\n".join(outcome)
    cause = (
        cause_from_case_name(case_name, administrative=folder == "行政协议诉讼")
        or next((m.group(1) for p in _EXPLICIT_CAUSE if (m := p.search(facts_text))), "")
        or default_cause
        or infer_cause(facts_text, outcome_text)
        or "民事纠纷"
    )
    return Case(
        id=typical_id(rel),
        source="typical",
        title=title,
        cause=cause,
        domain_hint=folder_domain or domain_for_cause(cause, domains),
        facts=facts_text,
        outcome=outcome_text,
        articles=_articles(extract(facts_text + "\n" + outcome_text)),
    )


def typical_id(rel_path: str) -> str:
    """``typical-`` + the first 10 hex digits of sha1 of the file's POSIX path under ``laws/案例``."""
    return "typical-" + hashlib.sha1(rel_path.encode("utf-8")).hexdigest()[:10]


def typical_case_files(data_dir: Path) -> list[Path]:
    """The typical-case Markdown files under ``laws/案例`` (``_index.md`` excluded), sorted by path."""
    root = Path(data_dir) / "laws" / "案例"
    return sorted((p for p in root.rglob("*.md") if p.name != "_index.md"), key=lambda p: p.as_posix())


DISC_CASE_PROMPT = "请对以下案件做出分析并给出可能的判决"
# 被告人A犯贩卖毒品罪，判处… — the lazy group stops at the 罪 that ends the charge, not at one inside it
# (帮助信息网络犯罪活动罪).
_DISC_CHARGE_RE = re.compile(r"犯([\u4e00-\u9fff、，]{2,30}?)罪[，,。；]?(?:判处|免予|单处|并处)")


def _disc_cases(path: Path, extract: Extractor, domains: Domains = PACKAGED) -> list[Case]:
    """DISC case analyses → cases; criminal when the reference judgment convicts (``犯X罪，判处``)."""
    cases = []
    for row in _read_jsonl(path):
        text = row["input"]
        if not text.startswith(DISC_CASE_PROMPT):
            continue
        facts = _clean(text[len(DISC_CASE_PROMPT) :]).lstrip(":： \n")
        outcome = _clean(row.get("output", ""))
        charges: list[str] = []
        for charge in _DISC_CHARGE_RE.findall(outcome):
            if charge not in charges:
                charges.append(charge)
        if charges:
            cause, domain = "；".join(charges), "刑事辩护"
        else:
            cause = infer_cause(facts, outcome) or "民事纠纷"
            domain = domain_for_cause(cause, domains)
        cases.append(
            Case(
                id=f"disc-{row['id']}",
                source="disc",
                title=f"{cause}案",
                cause=cause,
                domain_hint=domain,
                facts=facts,
                outcome=outcome,
                articles=_articles(extract(facts + "\n" + outcome)),
            )
        )
    return sorted(cases, key=lambda c: int(c.id.split("-", 1)[1]))


# ---------------------------------------------------------------------------------------------
# Build
# ---------------------------------------------------------------------------------------------


def build_case_bank(data_dir: Path, *, extract: Extractor, domains: Domains = PACKAGED) -> list[Case]:
    """Build every case from ``data_dir`` (``../shared/data``), in a deterministic order: CAIL by record
    index, typical cases by file path, DISC by id; domain hints from ``domains``' cause hints.

    ``extract`` finds the statutes a text cites (e.g. ``CitationExtractor(db).extract``, names resolved
    against the statute database ``db`` of the settings' assets). Raises ``ValueError`` on input
    that does not look as expected and when two cases would share an id or lack facts or a cause.
    """
    data_dir = Path(data_dir)
    root = data_dir / "laws" / "案例"
    cases = (
        _cail_cases(data_dir / "lawbench")
        + [_typical_case(p, root, extract, domains) for p in typical_case_files(data_dir)]
        + _disc_cases(data_dir / "disc" / "qa_short_answer.jsonl", extract, domains)
    )
    ids = [c.id for c in cases]
    if len(set(ids)) != len(ids):
        raise ValueError("duplicate case ids")
    for c in cases:
        if not c.facts or not c.cause:
            raise ValueError(f"{c.id}: empty facts or cause")
        if c.domain_hint and domains.by_case_key(c.domain_hint) is None:
            raise ValueError(f"{c.id}: unknown domain {c.domain_hint!r}")
    return cases


_UPSTREAM = {
    "cail": (
        "`lawbench/criminal_facts_articles.jsonl` + `lawbench/criminal_facts_terms.jsonl`",
        "open-compass/LawBench @ e30981b, `data/zero_shot/3-1.json` and `3-4.json` (CAIL2018 facts)",
        "LawBench repo Apache-2.0; CAIL2018 data under the CAIL research terms (research use)",
    ),
    "typical": (
        "`laws/案例/**.md` (not `_index.md`)",
        "LawRefBook/Laws @ 2f4c5c2, folder `案例` (official typical cases published by the courts)",
        "official judicial documents, not protected by copyright (PRC Copyright Law art. 5)",
    ),
    "disc": (
        "`disc/qa_short_answer.jsonl`, rows whose input starts with `请对以下案件做出分析并给出可能的判决`",
        "FudanDISC/DISC-LawLLM @ f40d023, `eval/datasets/subjective/qa_short_answer.json`",
        "Apache-2.0",
    ),
}


def provenance_markdown(cases: list[Case], asset_bytes: bytes, typical_paths: dict[str, str]) -> str:
    """The text of ``cases.PROVENANCE.md`` for ``cases`` written as ``asset_bytes`` (no timestamps);
    ``typical_paths`` maps each typical case id to its file under ``laws/案例``."""
    counts = {s: sum(c.source == s for c in cases) for s in SOURCES}
    with_articles = {s: sum(c.source == s and bool(c.articles) for c in cases) for s in SOURCES}
    lines = [
        "# cases.jsonl.gz — the ToLC case bank",
        "",
        "Cases that the Tree of Legal Clarifications retrieves (BM25 over `Case.search_text`: title, cause,",
        "facts). One JSON object per line, gzip; built by `lawluo/retrieval/casebank.py`.",
        "",
        *rebuild_section(REBUILD_COMMAND),
        f"- cases: {len(cases)}",
        f"- sha256 of `{CASES_FILENAME}`: `{hashlib.sha256(asset_bytes).hexdigest()}`",
        "",
        "## Sources",
        "",
        "| source | cases | with articles | file in ../shared/data | upstream (commit) | licence / terms |",
        "|---|---|---|---|---|---|",
    ]
    for s in SOURCES:
        local, upstream, licence = _UPSTREAM[s]
        lines.append(f"| `{s}` | {counts[s]} | {with_articles[s]} | {local} | {upstream} | {licence} |")
    lines += [
        "",
        "## How the fields are derived",
        "",
        "- `id`: `cail-<n>` after the LawBench record index n (`lb31-n`/`lb34-n`); `typical-<10 hex>`, the",
        "  first hex digits of sha1 of the file path under `laws/案例` (table below); `disc-<id>` after the",
        "  DISC row id.",
        "- **cail**: `input` is `事实:<facts>\\r\\n罪名:<charges>。` (+ `法条:刑法第N、M条` in the terms file);",
        "  records of the two files with identical fact text are merged into one case (the two files hold",
        "  the same 500 facts). `cause` = the charges (罪名, several joined by `；`), `title` = `<cause>案`,",
        "  `articles` = the 法条 label (中华人民共和国刑法), `sentence` = the 刑期 label (`N个月`; `0个月` means",
        '  no fixed-term prison or criminal detention, `无期` is written `无期徒刑`), `outcome` = "",',
        "  `domain_hint` = 刑事辩护. Fact texts keep CAIL's anonymisation masks (`××`).",
        "- **typical**: `title` = the `# title` headline; `facts` = the sections 基本案情 / 简要案情 / 案情回顾",
        "  plus the claims (原告诉讼请求 / 申请人请求); `outcome` = every other section in order (裁判要点,",
        "  裁判结果, 处理结果, 法院裁判, 裁判理由, 案例分析, 适用解析, 法官解读, 典型意义, 司法解释相关法条 …), each",
        "  prefixed `【heading】`; 关键词, HTML comments and `文/…` by-lines are dropped. `cause` = the part of",
        "  the case name (`X诉Y…纠纷案`, from the `##` heading or the title) after the defendant, `纠纷`",
        "  appended for civil cases, kept as written for 行政协议诉讼; when the file has no case name: a cause",
        "  the facts name (`以…纠纷为由`, `提起…纠纷诉讼`), else 劳动争议 for 劳动人事, else keyword rules.",
        "  `domain_hint`: 劳动人事 → 劳动纠纷, 消费购物 → 消费权益, 行政协议诉讼 → 行政诉讼, 民法典 → from the",
        "  cause. `articles` = citations found in facts + outcome by `lawluo.law.citations.extract_citations`.",
        "- **disc**: `facts` = the input after the prompt, `outcome` = the reference judgment. Criminal when",
        "  the judgment convicts (`犯X罪，判处…`): `cause` = the charges, `domain_hint` = 刑事辩护. Otherwise",
        "  `cause` = a cause the text names (`本案系…纠纷`) or the first matching keyword rule",
        "  (`_CAUSE_RULES` in casebank.py; heuristic, e.g. 借款/借条 → 民间借贷纠纷, bank + loan → 金融借款合同",
        "  纠纷), `民事纠纷` when none matches. `title` = `<cause>案`; `articles` as for typical cases.",
        '- `articles`: `{"law", "article", "suffix"}`, distinct, article number > 0; `law` is the',
        "  extractor's resolved name (canonical when the statute DB knows the law, else as written).",
        "  Citations of the parties' own contracts/agreements (`《…合同》第N条`, `《…协议》第N条`) and DISC's",
        "  truncated `《最高人民法院》第N条` are dropped.",
        "",
        "## Known limitations",
        "",
        "- Civil causes of DISC cases and of typical cases without a case name come from keyword rules;",
        "  they are a retrieval aid, not a court's 案由.",
        "- `articles` of typical and DISC cases are only as good as the citation extractor at build time;",
        "  rebuild after it changes. CAIL articles come from the dataset's own labels.",
        "- DISC judgments cite some interpretations with their titles cut (`《最高人民法院关于适用的解释》`);",
        "  such names are kept as written.",
        "- CAIL facts keep the dataset's masks (`××`) for penalties and article numbers.",
        "",
        "## Typical case ids",
        "",
        "| id | file under laws/案例 | cause |",
        "|---|---|---|",
    ]
    lines += [
        f"| `{c.id}` | {typical_paths.get(c.id, '')} | {c.cause} |" for c in cases if c.source == "typical"
    ]
    return "\n".join(lines) + "\n"


def build_and_write(data_dir: Path, assets_dir: Path, db, domains: Domains = PACKAGED) -> dict:
    """Build the case bank from ``data_dir`` and write ``cases.jsonl.gz`` and ``cases.PROVENANCE.md``
    into ``assets_dir``; returns a summary ``{"path", "provenance", "cases", "by_source", "bytes",
    "sha256"}`` for the CLI (``python -m lawluo build cases --data ../shared/data``) to print. Cited
    statutes are resolved against ``db`` (the :class:`~lawluo.law.StatuteDB` of the same assets)."""
    from ..law.citations import CitationExtractor

    data_dir, assets_dir = Path(data_dir), Path(assets_dir)
    cases = build_case_bank(data_dir, extract=CitationExtractor(db).extract, domains=domains)
    path = assets_dir / CASES_FILENAME
    write_case_bank(cases, path)
    asset = path.read_bytes()
    root = data_dir / "laws" / "案例"
    typical_paths = {
        typical_id(p.relative_to(root).as_posix()): p.relative_to(root).as_posix()
        for p in typical_case_files(data_dir)
    }
    provenance = assets_dir / PROVENANCE_FILENAME
    write_atomically(provenance, provenance_markdown(cases, asset, typical_paths))
    by_source = {s: sum(c.source == s for c in cases) for s in SOURCES}
    return asset_summary(path, asset, provenance, cases=len(cases), by_source=by_source)
