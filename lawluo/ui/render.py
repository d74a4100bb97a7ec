"""HTML for the statute-lookup tab: statute and case cards, citation verdicts, notices.

Every string that comes from a user or from the database passes through :func:`esc`
(``html.escape``) before it is put into HTML, so an answer containing ``<script>`` or
``<img onerror=…>`` renders as text. Nothing here imports Gradio: these are pure functions from
plain dicts (the ``as_dict()`` of library results) to HTML strings, tested directly.

What the page says is in both languages (:func:`~lawluo.ui.i18n.say`: the page shows its own); what the
database holds — a law's name, an article's text, a case's facts — and what a visitor typed stay as they are,
in an element that says they are Chinese (:func:`zh`), so that the English page declares them so.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping, Sequence

from ..agents.secretary import inert_links, md_text  # inert_links lives beside md_text: the report uses it
from ..i18n import Message, message
from ..i18n import text as text_in
from ..law import content_kinds
from ..law.numerals import int_to_chinese
from ..law.verdicts import BY_CODE, CONTENT_BEARING, HALLUCINATED, VERDICTS
from .copy import ADVANCED_KEY
from .i18n import LOCALES, Html, both, say

#: Facts longer than this are shown truncated, with the full text one click away.
FACTS_PREVIEW_CHARS = 160
#: The citation checker shows this many cards at first, and this many more per click on "more".
CITATION_PAGE = 50
#: How many characters of a query a result's heading or a "no match" message quotes back.
ECHO_CHARS = 60
#: How a citation looks, in the messages that say none was found.
CITATION_EXAMPLE = "《民法典》第一千零七十九条"


CSS = """
.ll-notice { padding: 10px 14px; border-radius: 8px; margin: 6px 0; line-height: 1.6;
  overflow-wrap: anywhere; }
.ll-notice.info { background: #eef4ff; border: 1px solid #b9cdf5; color: #1d3b72; }
.ll-notice.warn { background: #fff6e5; border: 1px solid #f0c36d; color: #6b4a00; }
.ll-notice.error { background: #fdecec; border: 1px solid #ef9a9a; color: #7f1d1d; }
.ll-card { border: 1px solid #d8dde6; border-radius: 10px; padding: 12px 14px; margin: 10px 0;
  background: #ffffff; color: #1f2937; overflow-wrap: anywhere; }
.ll-head { display: flex; flex-wrap: wrap; gap: 6px 10px; align-items: baseline; margin-bottom: 6px; }
.ll-title { font-weight: 700; font-size: 1.05em; }
.ll-meta { color: #5b6472; font-size: 0.9em; overflow-wrap: anywhere; }
.ll-text { white-space: pre-wrap; line-height: 1.7; margin: 6px 0 0 0; }
.ll-quote { white-space: pre-wrap; line-height: 1.7; border-left: 3px solid #c7ced9; padding: 2px 10px;
  margin: 6px 0; color: #374151; background: #f7f8fa; }
.ll-badge { display: inline-block; padding: 1px 8px; border-radius: 999px; font-size: 0.82em;
  font-weight: 600; border: 1px solid transparent; white-space: nowrap; }
.ll-badge.ok { background: #e3f6e8; color: #126b2f; border-color: #8fd3a3; }
.ll-badge.warn { background: #fff1dc; color: #8a4b00; border-color: #f3b96b; }
.ll-badge.bad { background: #fde4e4; color: #9b1c1c; border-color: #f19a9a; }
.ll-badge.none { background: #eceff3; color: #4b5563; border-color: #c5cbd3; }
.ll-badge.info { background: #e8effc; color: #1d4ed8; border-color: #a9c1f2; }
.ll-kind { color: #6b7280; font-size: 0.8em; white-space: nowrap; }
.ll-summary { font-size: 1.1em; font-weight: 700; margin: 4px 0 8px 0; }
.ll-counts { display: flex; flex-wrap: wrap; gap: 6px; margin-bottom: 4px; }
.ll-row { margin: 3px 0; line-height: 1.6; }
.ll-label { color: #5b6472; display: inline-block; min-width: 6.5em; }
.ll-note { color: #5b6472; font-size: 0.9em; margin-top: 4px; }
.ll-repeal { color: #9b1c1c; font-weight: 600; }
.ll-card details { margin-top: 6px; }
.ll-card summary { cursor: pointer; color: #1d4ed8; }
.ll-more { display: flex; flex-wrap: wrap; gap: 8px; align-items: center; margin: 10px 0; }
.ll-more button { border: 1px solid #a9c1f2; border-radius: 8px; padding: 4px 14px; background: #e8effc;
  color: #1d4ed8; cursor: pointer; }
"""


def esc(value: object) -> str:
    """``html.escape`` of ``str(value)`` (quotes too); ``None`` becomes the empty string."""
    return "" if value is None else html.escape(str(value), quote=True)


#: Chinese characters: a field of a message that holds them is Chinese content (a law's name, a query).
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


def zh(value: object, tag: str = "span", css: str = "") -> Html:
    """Content of the law or of a visitor (a law's name, an article's text, a query), escaped, in an element
    that says it is Chinese: on the English page it stays as it is, declared so (``lang="zh-CN"``)."""
    attrs = f' class="{esc(css)}"' if css else ""
    return Html(f'<{tag}{attrs} lang="{LOCALES["zh"]}">{esc(value)}</{tag}>')


def data_lang(value: object) -> str:
    """The ``lang`` of a text from the data (a name, a question, an item id, a trace's summary): ``zh-CN``
    when it has a Chinese character, else ``en`` (names like ``alice``, ids like ``q-7``)."""
    return LOCALES["zh"] if _CJK.search("" if value is None else str(value)) else LOCALES["en"]


def data(value: object) -> Html:
    """A text from the data escaped, in an element that says its language (:func:`data_lang`): it is shown
    as it is on either page."""
    return Html(f'<span lang="{data_lang(value)}">{esc(value)}</span>')


def zh_fields(msg: Message) -> Message:
    """``msg`` with each text field that holds Chinese (a law's name, an article's number as written) put in
    a ``lang="zh-CN"`` span (:func:`zh`): the English version of the message declares them so."""
    fields = {
        k: zh(without_paths(v)) if isinstance(v, str) and not isinstance(v, Html) and _CJK.search(v) else v
        for k, v in msg.fields.items()
    }
    return Message(msg.key, fields)


# -- untrusted text -------------------------------------------------------------------------------


def inert_md(text: str) -> str:
    """Untrusted text (a client's, a model's) as Markdown that renders as the text itself: no HTML,
    image, diagram or link — nothing the browser fetches or runs (:func:`md_text`, then
    :func:`inert_links`)."""
    return inert_links(md_text(text))


#: An absolute path (POSIX or Windows) of two or more parts, as an error message may quote one.
_PATH = re.compile(r"(?<![\w:/])(?:[A-Za-z]:)?(?:[\\/][^\s\\/'\"]+){2,}[\\/]?")


def without_paths(message: str) -> str:
    """``message`` with every absolute file path cut to its last part: ``…/`` and the file's name (the
    server's folders are its own; the name of an uploaded file still helps).

    >>> without_paths("[Errno 2] No such file or directory: '/tmp/gradio/abc/x.json'")
    "[Errno 2] No such file or directory: '…/x.json'"
    """
    return _PATH.sub(lambda m: "…/" + re.split(r"[\\/]", m.group().rstrip("\\/"))[-1], message)


def error_text(exc: BaseException, limit: int = 300) -> str:
    """What a visitor may read of an unexpected error: its type and message, without paths, shortened."""
    text = without_paths(f"{type(exc).__name__}: {exc}")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def notice(message: str | Message, kind: str = "info") -> str:
    """A message box; ``kind`` is ``info``, ``warn`` or ``error``. ``message``: a
    :class:`~lawluo.i18n.Message` (shown in the page's language, its Chinese fields declared so:
    :func:`zh_fields`), HTML already made (:class:`~lawluo.ui.i18n.Html`, e.g. a :func:`~lawluo.ui.i18n.say`),
    or plain text, escaped, with any absolute file path in it (an error's message may quote one) replaced
    by ``…``: the server's folders are its own (:func:`without_paths`)."""
    kind = kind if kind in ("info", "warn", "error") else "info"
    if isinstance(message, Message):
        body = say(zh_fields(message))
    elif isinstance(message, Html):
        body = message
    else:
        body = esc(without_paths(message))
    return f'<div class="ll-notice {kind}" role="status">{body}</div>'


def badge(text: str, css_class: str) -> str:
    """A pill; ``text`` is escaped unless it is :class:`~lawluo.ui.i18n.Html` (a :func:`~lawluo.ui.i18n.say`)."""
    body = text if isinstance(text, Html) else esc(text)
    return f'<span class="ll-badge {esc(css_class)}">{body}</span>'


def verdict_badge(verdict: str) -> str:
    """A coloured pill naming the verdict in the page's language (what was checked: 条文存在·内容相符 /
    Exists · content agrees, 条号错误 …); the verdict's code and meaning are its tooltip and
    ``data-verdict``, for a researcher, not its text."""
    row = BY_CODE.get(verdict)  # badge colour: lawluo/law/verdicts.py; label and meaning: the catalogue
    if row is None:
        label = Html(f'<span lang="en">{esc(verdict)}</span>')
        return (
            f'<span class="ll-badge none" data-verdict="{esc(verdict)}" title="{esc(verdict)}">{label}</span>'
        )
    label = both(
        lambda lang: (
            f'<span title="{esc(verdict)}: {esc(text_in("statute.verdict_tip." + verdict, lang))}">'
            f"{esc(text_in('statute.verdict.' + verdict, lang))}</span>"
        )
    )
    return f'<span class="ll-badge {esc(row.badge)}" data-verdict="{esc(verdict)}">{label}</span>'


def content_kind_tag(code: str | None) -> str:
    """A small muted tag saying how the checker read a citation (:mod:`lawluo.law.content_kinds`):
    原文引用, 转述, 适用 or 仅引条号 (quoted, paraphrase, applied, number only), what that means as a tooltip,
    each in the page's language; empty for a missing or unknown reading.

    >>> content_kind_tag("none").count('title="回答只写了法律名称和条号，无可比对">仅引条号</span>')
    1
    """
    row = content_kinds.BY_CODE.get(code or "")
    if row is None:
        return ""
    tag = both(
        lambda lang: (
            f'<span title="{esc(text_in("statute.kind_tip." + row.code, lang))}">'
            f"{esc(text_in('statute.kind.' + row.code, lang))}</span>"
        )
    )
    return f'<span class="ll-kind" data-kind="{esc(row.code)}">{tag}</span>'


def _version_badges(current: bool, in_force: bool = True) -> str:
    out = []
    if not in_force:
        out.append(badge(say("statute.repealed"), "bad"))
    if not current:
        out.append(badge(say("statute.superseded"), "warn"))
    return " ".join(out)


# -- statute search -------------------------------------------------------------------------------


def statute_card(hit: Mapping, note: str = "") -> str:
    """One :meth:`StatuteHit.as_dict` as a card: law, article, version (+ badge), level, text, and the hit's
    calibrated relevance as a percentage when it has one (the chance that a lawyer would cite it; else the raw
    score, which is a rank score, not a chance);
    an article the query named by law and number is marked so, and a repealed law's card says what
    replaced it (``hit["repeal"]``, the database's Chinese words); ``note`` (plain text, escaped; or
    :class:`~lawluo.ui.i18n.Html`) is a line above the text."""
    badges = _version_badges(bool(hit.get("current", True)), bool(hit.get("in_force", True)))
    if hit.get("exact"):
        badges = badge(say("statute.exact_article"), "ok") + " " + badges
    repeal = hit.get("repeal")
    repeal_row = zh(repeal, "div", "ll-row ll-repeal") if repeal else ""
    note_html = note if isinstance(note, Html) else esc(note)
    return (
        '<div class="ll-card">'
        '<div class="ll-head">'
        + zh(f"{hit.get('law') or ''} {hit.get('article_label') or ''}", "span", "ll-title")
        + f'<span class="ll-meta">{say("statute.version", version=hit.get("version"))}</span>{badges}'
        + zh(hit.get("level"), "span", "ll-meta")
        + f'<span class="ll-meta">{_relevance_or_score(hit)}</span>'
        "</div>"
        f"{repeal_row}"
        + (f'<div class="ll-row ll-fit">{note_html}</div>' if note else "")
        + zh(hit.get("text"), "div", "ll-text")
        + "</div>"
    )


def _score(hit: Mapping) -> str:
    return f"{float(hit.get('score') or 0):.2f}"


def _relevance_or_score(hit: Mapping) -> str:
    """``估计相关 4%`` from a hit's calibrated relevance (a number in [0, 1]), else ``得分 0.51``: since the
    reranker's scores lie in (0, 1) too, a bare score would read as a chance it is not."""
    relevance = hit.get("relevance")
    if isinstance(relevance, int | float) and 0 <= relevance <= 1:
        return say("statute.relevance", pct=f"{round(100 * relevance)}%")
    return say("statute.score", score=_score(hit))


def echo(query: str) -> str:
    """``query`` as a heading or a message quotes it back: white space runs as one space, at most
    :data:`ECHO_CHARS` characters, then "…" (a pasted page does not fill the screen).

    >>> echo("民法典  第1079条"), echo("x" * 5000) == "x" * ECHO_CHARS + "…"
    ('民法典 第1079条', True)
    """
    query = " ".join(query.split())
    return query if len(query) <= ECHO_CHARS else query[:ECHO_CHARS] + "…"


def _results(query: str, hits: Sequence[Mapping], card, keys: tuple[str, str], example: str) -> str:
    """The cards of ``hits``, headed by their count; ``keys``: the catalogue's heading and "none" message."""
    found, none = keys
    if not hits:
        return notice(message(none, query=echo(query), example=example), "warn")
    head = f'<div class="ll-meta">{say(found, n=len(hits), query=zh(echo(query)))}</div>'
    return head + "".join(card(h) for h in hits)


def statute_results(query: str, hits: Sequence[Mapping]) -> str:
    return _results(
        query, hits, statute_card, ("statute.articles_found", "statute.no_articles"), "试用期 解除劳动合同"
    )


# -- case search ----------------------------------------------------------------------------------


def article_ref(ref: Mapping) -> str:
    """``{"law": "中华人民共和国刑法", "article": 133, "suffix": 1}`` → ``中华人民共和国刑法第一百三十三条之一``."""
    try:
        number = int(ref.get("article"))
    except (TypeError, ValueError):
        return f"{ref.get('law', '')}{ref.get('article', '')}"
    suffix = int(ref.get("suffix") or 0)
    tail = f"之{int_to_chinese(suffix)}" if suffix else ""
    return f"{ref.get('law', '')}第{int_to_chinese(number)}条{tail}"


def case_card(hit: Mapping) -> str:
    """One :meth:`CaseHit.as_dict` as a card: title, cause, source, cited articles, facts (full text folded)."""
    facts = str(hit.get("facts") or "")
    articles = "、".join(article_ref(a) for a in hit.get("articles") or []) or "—"
    if len(facts) > FACTS_PREVIEW_CHARS:
        facts_html = (
            zh(facts[:FACTS_PREVIEW_CHARS] + "…", "div", "ll-text")
            + f"<details><summary>{say('statute.full_facts', n=f'{len(facts):,}')}</summary>"
            + zh(facts, "div", "ll-text")
            + "</details>"
        )
    else:
        facts_html = zh(facts, "div", "ll-text")
    extra = []
    if hit.get("outcome"):
        extra.append(
            f"<details><summary>{say('statute.outcome')}</summary>"
            + zh(hit["outcome"], "div", "ll-text")
            + "</details>"
        )
    if hit.get("sentence"):
        extra.append(
            f'<div class="ll-row"><span class="ll-label">{say("statute.sentence")}</span>'
            + zh(hit["sentence"])
            + "</div>"
        )
    return (
        '<div class="ll-card">'
        '<div class="ll-head">'
        + zh(hit.get("title"), "span", "ll-title")
        + badge(zh(hit.get("cause") or "—"), "info")
        + f'<span class="ll-meta">{say("statute.source", source=hit.get("source"))}</span>'
        + f'<span class="ll-meta">{say("statute.score", score=_score(hit))}</span>'
        "</div>"
        f'<div class="ll-row"><span class="ll-label">{say("statute.cites")}</span>' + zh(articles) + "</div>"
        f"{facts_html}{''.join(extra)}"
        "</div>"
    )


def case_results(query: str, hits: Sequence[Mapping], cause: str | None = None) -> str:
    """The cards of ``hits``; ``cause``: the question's cause of action when the hits are the cases of its kind
    (:meth:`~lawluo.retrieval.cases.CaseSearcher.similar`), named in the heading — and, when there are none,
    a notice saying that the case bank has no case of this kind (``""``: that the kind could not be told).

    >>> "没有与此问题同类（" in case_results("借钱不还", [], "民间借贷纠纷")
    True
    """
    if cause is None:
        return _results(query, hits, case_card, ("statute.cases_found", "statute.no_cases"), "醉酒驾驶机动车")
    if not hits:
        if cause:
            return notice(message("statute.cases_none_fit", cause=cause), "info")
        return notice(message("statute.cases_unknown_kind", examples="“民间借贷纠纷”“盗窃”"), "info")
    said = say("statute.cases_of_kind", n=len(hits), cause=zh(cause), query=zh(echo(query)))
    head = f'<div class="ll-meta">{said}</div>'
    return head + "".join(case_card(h) for h in hits)


# -- citation check -------------------------------------------------------------------------------


def nhsr_line(nhsr: float | None, counts: Mapping[str, int]) -> str:
    """``NHSR 2/3 = 0.67 over content-bearing citations``, or why there is no NHSR (plain text): the
    content-bearing citations that are not hallucinated over those that bear content
    (:data:`~lawluo.law.verdicts.CONTENT_BEARING`, :data:`~lawluo.law.verdicts.HALLUCINATED`).

    >>> nhsr_line(2 / 3, {"verified": 1, "amended_since": 1, "repealed": 1, "no_content": 4})
    'NHSR 2/3 = 0.67 over content-bearing citations'
    >>> nhsr_line(None, {"no_content": 2})
    'NHSR: no citation carries content (2 cited by name and number only)'
    """
    total, bearing, right = _tally(counts)
    if total == 0:
        return "NHSR: no statute citation found (cite like 《民法典》第一千零七十九条)"
    if nhsr is None or bearing == 0:
        return f"NHSR: no citation carries content ({total} cited by name and number only)"
    return f"NHSR {right}/{bearing} = {nhsr:.2f} over content-bearing citations"


def nhsr_message(nhsr: float | None, counts: Mapping[str, int]) -> Message:
    """:func:`nhsr_line` as a message of the catalogue, for the page (in its language)."""
    total, bearing, right = _tally(counts)
    if total == 0:
        return message("statute.nhsr_none")
    if nhsr is None or bearing == 0:
        return message("statute.nhsr_names_only", total=total)
    return message("statute.nhsr", right=right, bearing=bearing, nhsr=f"{nhsr:.2f}")


def _tally(counts: Mapping[str, int]) -> tuple[int, int, int]:
    """Citations in all, those that bear content (NHSR's denominator), and those of them not hallucinated."""
    bearing = sum(n for code, n in counts.items() if code in CONTENT_BEARING)
    right = sum(n for code, n in counts.items() if code in CONTENT_BEARING and code not in HALLUCINATED)
    return sum(counts.values()), bearing, right


def plain_summary(counts: Mapping[str, int]) -> str:
    """The check in a visitor's words: how many citations were found and how many state the article rightly.

    >>> plain_summary({"verified": 1, "wrong_number": 1, "no_content": 2})
    '共找到 4 处法条引用：写出条文内容的 2 处中，1 处与条文相符；另有 2 处只写了法律名称和条号。'
    """
    return str(summary_message(counts))


def summary_message(counts: Mapping[str, int]) -> Message:
    """:func:`plain_summary` as a message of the catalogue, for the page (in its language)."""
    total, bearing, right = _tally(counts)
    if total == 0:
        return message("statute.summary_none", example=CITATION_EXAMPLE)
    if not bearing:
        return message("statute.summary_names_only", total=total)
    if total == bearing:
        return message("statute.summary_bearing", total=total, bearing=bearing, right=right)
    return message("statute.summary_both", total=total, bearing=bearing, right=right, names=total - bearing)


def check_summary(
    nhsr: float | None, counts: Mapping[str, int], notices: Sequence[str | Message] = ()
) -> str:
    """The check in plain words, one badge per verdict that occurs with its count, any notices (e.g.
    truncation), and the NHSR line for researchers under 高级 / Advanced."""
    pills = "".join(
        f"{verdict_badge(v)}<span class='ll-meta'>× {counts[v]}</span>" for v in VERDICTS if counts.get(v)
    )
    return (
        "".join(notice(n, "warn") for n in notices)
        + f'<div class="ll-summary">{say(zh_fields(summary_message(counts)))}</div>'
        + (f'<div class="ll-counts">{pills}</div>' if pills else "")
        + f'<details class="ll-advanced"><summary>{say(ADVANCED_KEY)}</summary>'
        + f'<div class="ll-meta ll-nhsr">{say(nhsr_message(nhsr, counts))}</div></details>'
    )


def as_written(cit: Mapping, text: str) -> str:
    """The citation as the text wrote it, in one pair of title marks: ``《劳动合同法》第八十二条`` (a span
    that already holds the law's name is taken whole; a name given with its marks keeps one pair).

    >>> as_written({"law": "中华人民共和国劳动合同法", "written": "《劳动合同法》", "span": [2, 7]}, "根据第八十二条")
    '《劳动合同法》第八十二条'
    >>> as_written({"law": "劳动合同法", "span": [2, 14]}, "根据《劳动合同法》第八十二条")
    '《劳动合同法》第八十二条'
    """
    start, end = (cit.get("span") or [0, 0])[:2]
    mention = text[start:end] if 0 <= start < end <= len(text) else str(cit.get("article_label") or "")
    if "《" in mention:
        return mention
    name = str(cit.get("written") or cit.get("law") or "").strip().strip("《》")
    return f"《{name}》{mention}"


def citation_card(index: int, cit: Mapping, text: str) -> str:
    """One :meth:`Checked.as_dict`: verdict, as written, as resolved, quoted content, the real article; with
    ``cit["notes"]`` (:attr:`Checked.notes`) the checker's notes in the page's language, else its English
    ``note``."""
    written = as_written(cit, text)
    resolved = f"《{cit.get('law')}》{cit.get('article_label')}"

    def label(key: str) -> str:
        return f'<span class="ll-label">{say(key)}</span>'

    rows = [f'<div class="ll-row">{label("statute.cit_written")}{zh(written)}</div>']
    if resolved.strip("《》") and resolved != written:
        rows.append(f'<div class="ll-row">{label("statute.cit_resolved")}{zh(resolved)}</div>')
    matched = cit.get("matched")
    if matched:
        version = message(
            "statute.cit_version" if matched.get("current") else "statute.cit_version_old",
            version=matched.get("version"),
        )
        score = matched.get("score")
        fit = both(
            lambda lang: (
                esc(version.text(lang))
                + (
                    ("，" if lang == "zh" else ", ")
                    + esc(text_in("statute.cit_fit", lang, score=f"{float(score):.0f}"))
                    if score is not None
                    else ""
                )
            )
        )
        rows.append(
            f'<div class="ll-row">{label("statute.cit_matched")}'
            + zh(f"《{matched.get('law')}》{matched.get('article_label')}")
            + f' <span class="ll-meta">（{fit}）</span></div>'
        )
    if cit.get("quoted"):
        rows.append(
            f'<div class="ll-row">{label("statute.cit_quoted")}</div>' + zh(cit["quoted"], "div", "ll-quote")
        )
    else:
        rows.append(f'<div class="ll-row">{label("statute.cit_quoted")}{say("statute.cit_no_quote")}</div>')
    notes = [n for n in cit.get("notes") or () if isinstance(n, Message)]
    if notes:  # how the checker reached the verdict, in the page's language (Checked.notes)
        rows.append(f'<div class="ll-note">{"; ".join(say(zh_fields(n)) for n in notes)}</div>')
    elif cit.get("note"):  # only its English (a Checked.as_dict without the notes)
        rows.append(f'<div class="ll-note" lang="en">{esc(cit["note"])}</div>')
    if matched and matched.get("text"):
        article = zh(f"《{matched.get('law')}》{matched.get('article_label')}")
        rows.append(
            f"<details><summary>{say('statute.cit_article_text', article=article)}</summary>"
            + zh(matched["text"], "div", "ll-text")
            + "</details>"
        )
    else:
        rows.append(f'<div class="ll-note">{say("statute.cit_no_article")}</div>')
    return (
        '<div class="ll-card">'
        f'<div class="ll-head"><span class="ll-title">#{index}</span>{verdict_badge(str(cit.get("verdict")))}'
        f"{content_kind_tag(cit.get('content_kind'))}"
        + zh(written, "span", "ll-title")
        + "</div>"
        + "".join(rows)
        + "</div>"
    )


def citation_list(citations: Sequence[Mapping], text: str, shown: int | None = None) -> str:
    """A card per citation; with ``shown``, only the first ``shown`` and, when more remain, a line saying
    how many there are and a button (``data-more``: how many the next page shows) for the next
    :data:`CITATION_PAGE` (the browser needs seconds to draw thousands of cards)."""
    if not citations:
        return notice(message("statute.no_citations", example=CITATION_EXAMPLE), "info")
    total = len(citations)
    shown = total if shown is None else min(max(shown, 0), total)
    cards = "".join(citation_card(i, c, text) for i, c in enumerate(citations[:shown], start=1))
    if shown >= total:
        return cards
    step = min(CITATION_PAGE, total - shown)
    return (
        cards + '<div class="ll-more">'
        f'<span class="ll-meta">{say("statute.showing", shown=f"{shown:,}", total=f"{total:,}")}</span>'
        f'<button type="button" data-more="{shown + step}">{say("statute.show_more", step=step)}</button></div>'
    )
