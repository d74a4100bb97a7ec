"""HTML and chat messages for the consultation tab, as pure functions of the firm's state.

**Plain words for visitors.** The tab speaks of the checker's results by their Chinese labels
(``label_zh`` of :mod:`lawluo.law.verdicts`: 核实无误, 条号错误, 查无此条, 已废止 …); NHSR, the boss's
probabilities and the judge's name appear only in the trace (and in the statistics tab). After the client
overrides the receptionist, the routing panel shows the chosen domain without the receptionist's
confidence, which was for another domain.

Like :mod:`lawluo.ui.render`, nothing here imports Gradio and every string that comes from a client,
a model or the database is escaped — :func:`~lawluo.ui.render.esc` for HTML, and
:func:`~lawluo.ui.render.inert_md` for the Markdown the chatbot renders — so ``<script>``,
``<img onerror=…>``, ``![x](url)`` or a link in a question or an answer shows as text.

The clarification tree is one HTML fragment: nested lists drawn with connectors, each element with
是 / 否 / 不确定 buttons that carry ``data-node`` and ``data-mark`` (the tab's JavaScript turns a click
into a ``mark`` event), the cases that support it in a ``<details>`` one click away, and the subtree
of an element marked 否 folded away. Its header counts the elements per actual source (clarifier model,
clarification material, similar cases); an element that replaced a failed model call carries a tag
saying where it came from and why (``data-source``, ``data-fallback``).

**A held-back answer** (a turn with ``held_back``: the model's answer was empty, an echo of the prompt,
not Chinese, or cut) is drawn with the reason first, then the extract shown in its place; the model's
streamed text it replaces is gone from the chat once the turn is drawn from the state.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence

from ..agents.lawyer import found_for
from ..agents.secretary import md_text
from ..domains import PACKAGED, Domains
from ..firm.state import Consultation, TraceEvent, Turn
from ..i18n import catalogue, text
from ..i18n import text as text_of
from ..law.verdicts import BY_CODE, VERDICTS
from ..retrieval.statute_fit import REASONS
from ..tolc import Node, Tree
from ..tolc.material import Issue, stated_answer
from ..tolc.tree import FALLBACK_REASONS, NODE_SOURCES
from .consult.assets import asset
from .consult_words import (  # noqa: F401 — the page's words, imported from here too
    LEGACY_NOTES,
    NOTES,
    domain_choice,
    domain_field,
    domain_name,
    held_note,
    known_note,
    note_html,
    notice,
    say_chinese,
    verdict_label,
)
from .i18n import Html, both, say
from .render import (
    as_written,
    badge,
    case_card,
    content_kind_tag,
    data_lang,
    esc,
    inert_md,
    statute_card,
    zh,
)

#: The tree's mark buttons: the mark and the catalogue key of its label.
MARK_LABELS = (("yes", "consult.mark.yes"), ("no", "consult.mark.no"), ("unknown", "consult.mark.unknown"))
#: A mark in the message after a click (``unknown``: not marked).
MARK_TEXT = {"yes": "consult.mark.yes", "no": "consult.mark.no", "unknown": "consult.mark.unmarked"}
#: Under the tree's 问题类型 menu.
ISSUE_HINT = "consult.issue.hint"
CASE_FACTS_CHARS = 220


CONSULT_CSS = asset("consult.css")  # the tree's, the trace's and the routing's styles


# -- banner and routing ---------------------------------------------------------------------------


#: What a visitor notices when a role has no model (roles a visitor never meets are not mentioned).
MISSING_EFFECTS = {
    "lawyer": "consult.banner.lawyer",
    "clarifier": "consult.banner.clarifier",
    "secretary": "consult.banner.secretary",
}


def banner_html(statuses: Sequence) -> str:
    """What a visitor gets without a model (in plain words; no role ids, no settings), what still works, and
    where an operator finds how to configure one. Empty when every role the visitor meets has a model."""
    effects = [MISSING_EFFECTS[s.role] for s in statuses if not s.available and s.role in MISSING_EFFECTS]
    if not effects:
        return ""
    joined = both(
        lambda lang: text("consult.banner", lang, effects="".join(text(key, lang) for key in effects))
    )
    return notice(joined, "warn")


def routing_html(
    routing: Mapping | None,
    current: str | None,
    history: Sequence[str] = (),
    domains: Domains = PACKAGED,
    untrained: str = "",
) -> str:
    """The receptionist's routing: the domain, its probability, the runners-up, and how it got there.

    ``history`` lists what happened to the domain after the first routing, oldest first (e.g.
    ``["re-routed 劳动纠纷 → 合同纠纷"]``); ``domains`` is the firm's domain table; ``untrained`` the
    receptionist's notice about domains of the table its model does not know (shown whenever set).
    """
    # the receptionist's notice is the library's Chinese text
    warning = (
        notice(say_chinese("consult.routing.untrained", {"notice": untrained}), "warn") if untrained else ""
    )
    if not routing and not current:
        return warning + notice(say("consult.routing.empty", n=len(domains)), "info")
    name = (
        domain_name(domains, current)
        if current
        else domain_name(domains, routing.get("domain"), routing.get("name", ""))
    )
    # the client chose another domain than the receptionist's: its confidence was for that one
    overridden = bool(routing) and bool(current) and routing.get("domain") not in (None, current)
    parts = [
        f'<div class="ll-card ll-routing"><div class="ll-head"><span class="ll-meta">{say("consult.routing.head")}</span>'
    ]
    parts.append(f'<span class="ll-domain" data-domain="{esc(current)}">{name}</span>')
    if overridden:
        parts.append(_badge(say("consult.routing.chosen"), "info"))
    elif routing:
        confidence = f"{float(routing.get('confidence') or 0):.0%}"
        parts.append(f'<span class="ll-meta">{say("consult.routing.confidence", p=confidence)}</span>')
        if routing.get("fallback"):
            parts.append(_badge(say("consult.routing.low"), "warn"))
    parts.append("</div>")
    if overridden:
        suggested = domain_name(domains, routing.get("domain"), routing.get("name", ""))
        parts.append(
            f'<div class="ll-row"><span class="ll-label">{say("consult.routing.suggested")}</span>{suggested}</div>'
        )
    elif routing and routing.get("top"):
        ranked = say("consult.routing.list_sep").join(
            f"{domain_name(domains, t.get('domain'), t.get('name'))} {float(t.get('p') or 0):.0%}"
            for t in routing["top"]
        )
        parts.append(
            f'<div class="ll-row"><span class="ll-label">{say("consult.routing.top")}</span>{ranked}</div>'
        )
    for line in history:  # the firm's trace summary (Chinese)
        parts.append(
            f'<div class="ll-row ll-reroute">{_badge(say("consult.routing.rerouted"), "info")} {zh(line)}</div>'
        )
    parts.append("</div>")
    return "".join(parts) + warning


def _badge(label: Html, css_class: str) -> str:
    """:func:`~lawluo.ui.render.badge` for a label already in HTML (said in both languages)."""
    return f'<span class="ll-badge {esc(css_class)}">{label}</span>'


# -- the clarification tree -----------------------------------------------------------------------


def tree_html(
    tree: Tree | None,
    case_lookup: Callable[[str], object | None] = lambda _id: None,
    markable: bool = True,
    issues: Sequence[Issue] = (),
    issue: str = "",
    domains: Domains = PACKAGED,
) -> str:
    """The tree as nested lists with mark buttons; a 否 folds the element's subtree away.

    With ``markable`` false (the tree is answered, closed or still growing) the buttons show the marks
    but are disabled, and so is the 问题类型 menu: ``issues`` (the statute entries the client may choose the
    tree's first level from, :meth:`~lawluo.firm.Firm.issue_menu`, grouped under their ``domains``' names)
    with ``issue`` selected.
    """
    if tree is None:
        return notice(say("consult.tree.empty"), "info")
    parts = [
        '<div class="ll-tree">',
        f'<div class="ll-root">{say("consult.tree.question", question=zh(tree.question))}</div>',
    ]
    meta = both(
        lambda lang: (
            esc(text("consult.tree.origin", lang, origin=tree_origin(tree, lang)))
            + ("" if tree.complete else esc(text("consult.tree.growing", lang)))
        )
    )
    parts.append(
        f'<div class="ll-meta" data-complete="{str(tree.complete).lower()}" '
        f'title="H={tree.height} K={tree.k}">{meta}</div>'
    )
    parts.extend(
        notice(n, "warn") for n in dict.fromkeys(tree.notes)
    )  # the builder's notes: Chinese  # the same failure at each node: once
    if issues:
        parts.append(_issue_menu(issues, issue, markable, domains))
    parts.append(_subtree(tree, "0", case_lookup, markable))
    parts.append("</div>")
    return "".join(parts)


def _issue_menu(issues: Sequence[Issue], current: str, markable: bool, domains: Domains) -> str:
    """The 问题类型 menu, the issues grouped by domain (an optgroup each) and searchable (the filter box above
    it hides the issues whose title and domain lack the words typed; the page's tree script does it): choosing
    one builds the tree again from its elements (the page's tree script sends the choice). The issue in force,
    ``current``, is selected and named in words under the menu, whichever domain it belongs to."""
    options = [] if current else ['<option value="" selected disabled>（请选择）</option>']
    now = ""
    for domain in dict.fromkeys(i.domain for i in issues):
        name = domains[domain].name if domain in domains else domain  # the menu is Chinese (lang="zh-CN")
        rows = "".join(
            f'<option value="{esc(i.id)}" data-domain="{esc(name)}"{" selected" if i.id == current else ""}>'
            f"{esc(i.title)}</option>"
            for i in issues
            if i.domain == domain
        )
        options.append(f'<optgroup label="{esc(name)}">{rows}</optgroup>')
        now = next((f"{name} · {i.title}" for i in issues if i.id == current and i.domain == domain), now)
    disabled = "" if markable else " disabled"
    return (
        f'<div class="ll-issue"><label>{say("consult.issue.label")} '
        f'<input type="search" data-issue-filter placeholder="🔍"{disabled}>'
        f'<select data-issue lang="zh-CN"{disabled}>{"".join(options)}</select></label>'
        + (
            f'<span class="ll-issue-now" data-issue-now>{say("consult.issue.now", now=zh(now))}</span>'
            if now
            else ""
        )
        + f'<span class="ll-hint">{say(ISSUE_HINT)}</span></div>'
    )


def tree_origin(tree: Tree, lang: str = "zh") -> str:
    """Where the tree's elements came from, in a visitor's words (Chinese; the tree's height and width only in
    a tooltip): the tree's source alone when every element has it (``相似案例``), else the count per actual
    source, and why the model was not used (``澄清模型 3 条、相似案例 6 条（澄清模型的输出不是有效的 JSON）``)."""
    at = 0 if lang == "zh" else 1
    sources, fallbacks = tree.origins()
    if not tree.elements or (len(sources) == 1 and tree.source in sources and not tree.failures):
        return NODE_SOURCES.get(tree.source, (tree.source,) * 2)[at]
    counted = ("、" if at == 0 else ", ").join(
        text("consult.tree.count", lang, source=NODE_SOURCES.get(s, (s,) * 2)[at], n=n)
        for s, n in sources.items()
    )
    why = ("；" if at == 0 else "; ").join(FALLBACK_REASONS.get(r, (r,) * 2)[at] for r in fallbacks)
    return counted + ((f"（{why}）" if at == 0 else f" ({why})") if why else "")


def _subtree(tree: Tree, node_id: str, case_lookup, markable: bool) -> str:
    children = tree.children(node_id)
    if not children:
        return ""
    items = []
    for node in children:
        inner = _node(node, case_lookup, markable, tree.question)
        if node.mark == "no":
            hidden = _count_descendants(tree, node.id)
            if hidden:
                inner += f'<div class="ll-folded">{say("consult.tree.folded", n=hidden)}</div>'
        else:
            inner += _subtree(tree, node.id, case_lookup, markable)
        items.append(f"<li>{inner}</li>")
    return "<ul>" + "".join(items) + "</ul>"


def _count_descendants(tree: Tree, node_id: str) -> int:
    return sum(1 + _count_descendants(tree, c.id) for c in tree.children(node_id))


def _node(node: Node, case_lookup, markable: bool, question: str = "") -> str:
    """One element with its 是/否/不确定 buttons. A first-level element the client's ``question`` already
    answers (the builder marked it, :func:`~lawluo.tolc.material.stated_answer`) says so — 您已说明：“…”, the
    client's own words — and keeps its buttons: the client may change the mark."""
    disabled = "" if markable else " disabled"
    said = stated_answer(node.statement, question) if question and node.depth == 1 else None
    buttons = "".join(
        f'<button type="button" class="ll-mark{" on" if node.mark == value else ""}"{disabled} '
        f'data-node="{esc(node.id)}" data-mark="{value}" aria-pressed="{str(node.mark == value).lower()}">'
        f"{say(label)}</button>"
        for value, label in MARK_LABELS
    )
    cases = [c for c in (case_lookup(i) for i in node.case_ids) if c is not None]
    origin = ""
    if node.fallback and node.fallback != "no_model":  # stood in for a model call that failed
        where = NODE_SOURCES.get(node.source, (node.source,) * 2)
        why = FALLBACK_REASONS.get(node.fallback, (node.fallback,) * 2)
        came = both(
            lambda lang: esc(
                text("consult.tree.from", lang, where=where[lang != "zh"], why=why[lang != "zh"])
            )
        )
        origin = (
            f'<span class="ll-src" data-source="{esc(node.source)}" data-fallback="{esc(node.fallback)}">'
            f"{came}</span>"
        )
    details = ""
    if cases:
        rows = "".join(_case_line(c) for c in cases)
        details = f"<details><summary>{say('consult.tree.cases', n=len(cases))}</summary>{rows}</details>"
    stated = f'<span class="ll-stated">{say("consult.tree.stated", said=zh(said[1]))}</span>' if said else ""
    return (
        f'<div class="ll-node {esc(node.mark)}{" ll-said" if said else ""}" data-node="{esc(node.id)}" '
        f'data-mark="{esc(node.mark)}"{" data-stated" if said else ""}>'
        f'<span class="ll-id">{esc(node.id)}</span>{stated}<span class="ll-statement" lang="zh-CN">{esc(node.statement)}</span>'
        f'{origin}<span class="ll-marks">{buttons}</span>{details}</div>'
    )


def _case_line(case) -> str:
    facts = case.facts[:CASE_FACTS_CHARS] + ("…" if len(case.facts) > CASE_FACTS_CHARS else "")
    outcome = case.outcome or case.sentence
    return (
        f'<div class="ll-row" lang="zh-CN"><b>{esc(case.title)}</b> {badge(case.cause or "—", "info")} '
        f'<span class="ll-meta" lang="zxx">{esc(case.id)}</span></div><div class="ll-text" lang="zh-CN">{esc(facts)}</div>'
        + (
            f'<div class="ll-note">{say("consult.tree.outcome", outcome=zh(outcome[:200]))}</div>'
            if outcome
            else ""
        )
    )


# -- chat -----------------------------------------------------------------------------------------


def chat_messages(state: Consultation | None, streaming: str | None = None) -> list[dict]:
    """The turns as the chatbot's messages (escaped); ``streaming`` is the answer being written."""
    if state is None:
        return []
    messages = [
        {"role": "user" if t.role == "client" else "assistant", "content": _turn_markdown(t)}
        for t in state.turns
    ]
    if streaming is not None:
        messages.append(streaming_message(streaming))
    return messages


def streaming_message(text: str) -> dict:
    """The answer being written, as a chat message. No cursor mark at its end: each update only adds to
    the end of the text, so Gradio sends the new characters (an ``append`` of its streaming diff) and the
    browser adds them, instead of the whole message again."""
    return {"role": "assistant", "content": inert_md(text)}


def _turn_markdown(turn: Turn) -> str:
    text = inert_md(turn.text)  # no HTML, image, diagram or link (lawluo/ui/render.py)
    if turn.role == "client":
        return text
    if turn.held_back:  # the reason first: what follows is the extract shown in place of the model's answer
        text = f"⚠ {_note_md(turn.note)}\n\n---\n\n{text}"
    footer = []
    if turn.citations:
        footer.append(
            both(
                lambda lang: esc(
                    text_of("consult.chat.checked", lang, counts=verdict_counts(turn.citations, lang))
                )
            )
        )
    if turn.note and not turn.held_back:
        footer.append(f"⚠ {_note_md(turn.note)}")
    return text + ("\n\n---\n" + "  \n".join(footer) if footer else "")


def _note_md(note: str) -> str:
    """A turn's note in the chat's Markdown: one of the catalogue's notes in both languages, else the note's
    text (escaped as Markdown), in an element marked Chinese."""
    if known_note(note) is not None or held_note(note) is not None:
        return note_html(note)
    return f'<span lang="zh-CN">{md_text(note)}</span>'


def verdict_counts(citations: Sequence[Mapping], lang: str = "zh") -> str:
    """The checker's verdicts in words, in the verdict table's order: ``条文存在·内容相符 2 条、查无此条 1 条``
    (in ``lang``: the statute tab's labels of the verdicts)."""
    counts = Counter(c.get("verdict", "") for c in citations)

    def label(v: str) -> str:
        key = f"statute.verdict.{v}"
        return text_of(key, lang) if key in catalogue() else BY_CODE[v].label_zh

    return ("、" if lang == "zh" else ", ").join(
        text_of("consult.chat.verdict_count", lang, label=label(v), n=counts[v])
        for v in VERDICTS
        if counts.get(v)
    )


#: What the citation check says and does not say, next to its verdicts (issue 42: a green tick read as "applies").
CHECK_SCOPE = "consult.citations.scope"


# -- citations, retrieval, score, trace -----------------------------------------------------------


def citations_html(turn: Turn | None) -> str:
    """The latest answer's cited statutes in plain words: how many, each verdict's Chinese label, what the
    answer wrote, the article it corresponds to, and the real text one click away."""
    if turn is None or turn.role != "lawyer":
        return notice(say("consult.citations.empty"), "info")
    if not turn.citations:
        return notice(say("consult.citations.none"), "info")
    counts = Counter(c.get("verdict", "") for c in turn.citations)
    pills = "".join(
        f"{_verdict_pill(v)}<span class='ll-meta'>× {counts[v]}</span>" for v in VERDICTS if counts.get(v)
    )
    head = (
        f'<div class="ll-summary">{say("consult.citations.count", n=len(turn.citations))}</div>'
        f'<div class="ll-counts">{pills}</div><div class="ll-note">{say(CHECK_SCOPE)}</div>'
    )
    return head + "".join(_citation_card(i, c, turn.text) for i, c in enumerate(turn.citations, start=1))


def _verdict_pill(code: str) -> str:
    row = BY_CODE.get(code)
    return _badge(verdict_label(code), row.badge) if row else badge(code, "none")


def _citation_card(index: int, cit: Mapping, text: str) -> str:
    """One checked citation: its verdict in words and, beside it, how the checker read the answer (原文引用,
    转述, 适用, 仅引条号: :mod:`lawluo.law.content_kinds`), as the answer wrote it, the article it corresponds
    to (when another one: a wrong number, a repealed law's successor, an older version) and the real text."""
    written = as_written(cit, text)
    rows = []
    matched = cit.get("matched") or {}
    cited = (cit.get("law"), cit.get("article_label"))
    if matched and (matched.get("law"), matched.get("article_label")) != cited:
        rows.append(
            f'<div class="ll-row"><span class="ll-label">{say("consult.citations.matched")}</span>'
            f'<span lang="zh-CN">《{esc(matched.get("law"))}》{esc(matched.get("article_label"))}</span></div>'
        )
    if cit.get("quoted"):
        rows.append(
            f'<div class="ll-row"><span class="ll-label">{say("consult.citations.quoted")}</span></div>'
            f'<div class="ll-quote" lang="zh-CN">{esc(cit["quoted"])}</div>'
        )
    if matched.get("text"):
        rows.append(
            f"<details><summary>{say('consult.citations.text')}"
            f'<span lang="zh-CN">《{esc(matched.get("law"))}》{esc(matched.get("article_label"))}</span>'
            f'</summary><div class="ll-text" lang="zh-CN">{esc(matched["text"])}</div></details>'
        )
    else:
        rows.append(f'<div class="ll-note">{say("consult.citations.missing")}</div>')
    return (
        f'<div class="ll-card" data-verdict="{esc(cit.get("verdict"))}">'
        f'<div class="ll-head"><span class="ll-title">{index}.</span>{_verdict_pill(str(cit.get("verdict")))}'
        f"{content_kind_tag(cit.get('content_kind'))}"
        f'<span class="ll-title" lang="zh-CN">{esc(written)}</span></div>' + "".join(rows) + "</div>"
    )


def retrieved_html(turn: Turn | None) -> str:
    """The statutes and cases retrieved for the latest answer (what a model-less answer shows)."""
    if turn is None or turn.role != "lawyer" or not (turn.statutes or turn.cases):
        return ""
    # what the bar said of a statute is in Chinese (the words of the question it was found for)
    statutes = "".join(
        statute_card(s, fit_line(s)).replace('class="ll-row ll-fit"', 'class="ll-row ll-fit" lang="zh-CN"', 1)
        for s in turn.statutes
    )
    cases = (
        "".join(case_card(c) for c in turn.cases)
        or f'<div class="ll-note">{say("consult.retrieved.no_case")}</div>'
    )
    return (
        f'<div class="ll-summary">{say("consult.retrieved.statutes", n=len(turn.statutes))}</div>'
        f"{statutes}"
        f'<div class="ll-summary">{say("consult.retrieved.cases", n=len(turn.cases))}</div>{cases}'
    )


def fit_line(statute: Mapping) -> str:
    """What the page's bar said of a retrieved statute (:mod:`lawluo.retrieval.statute_fit`): what it was
    found for, or why the answer does not list it; ``""`` for a statute retrieved without the bar."""
    fit = statute.get("fit")
    if not isinstance(fit, Mapping):
        return ""
    if fit.get("passes"):
        return found_for(statute) or "已列入回答"
    return f"未列入回答：{REASONS.get(str(fit.get('reason')), '未通过相关性判断')}"


def trace_html(trace: Sequence[TraceEvent]) -> str:
    """The agents' steps in order with their durations, as a table with proportional bars."""
    if not trace:
        return notice(say("consult.trace.empty"), "info")
    longest = max((e.duration_ms for e in trace), default=0.0) or 1.0
    rows = []
    for i, e in enumerate(trace, start=1):
        width = max(2, int(160 * e.duration_ms / longest))
        status = "" if e.ok else _badge(say("consult.trace.failed"), "bad")
        rows.append(
            f'<tr data-agent="{esc(e.agent)}"><td>{i}</td><td lang="en"><b>{esc(e.agent)}</b></td>'
            f'<td lang="en">{esc(e.action)}</td><td lang="{data_lang(e.summary)}">{esc(e.summary)}</td>'
            f"<td>{e.duration_ms:,.1f} ms "
            f'<span class="ll-bar" style="width:{width}px"></span></td><td>{status}</td></tr>'
        )
    return (
        f'<table class="ll-trace"><thead><tr><th>#</th><th>{say("consult.trace.agent")}</th>'
        f"<th>{say('consult.trace.step')}</th><th>{say('consult.trace.summary')}</th>"
        f"<th>{say('consult.trace.duration')}</th><th></th></tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table>"
    )
