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

from ..agents.domains import PACKAGED, Domains
from ..agents.lawyer import found_for
from ..agents.secretary import md_text
from ..firm.state import Consultation, TraceEvent, Turn
from ..law.verdicts import BY_CODE, VERDICTS
from ..retrieval.case_fit import NONE_FITS
from ..retrieval.statute_fit import REASONS
from ..tolc import Node, Tree
from ..tolc.material import Issue, stated_answer
from ..tolc.tree import FALLBACK_REASONS, NODE_SOURCES
from .render import as_written, badge, case_card, content_kind_tag, esc, inert_md, notice, statute_card

MARK_LABELS = (("yes", "是"), ("no", "否"), ("unknown", "不确定"))
MARK_TEXT = {"yes": "是", "no": "否", "unknown": "未标记"}
#: Under the tree's 问题类型 menu.
ISSUE_HINT = (
    "要素与您的问题不对题？选择更贴近的问题类型，澄清树会按它重新生成。Not your issue? Choose a closer one."
)
CASE_FACTS_CHARS = 220

CONSULT_CSS = """
.ll-tree { line-height: 1.6; overflow-wrap: anywhere; }
.ll-tree ul { list-style: none; margin: 0; padding-left: 1.6em; }
.ll-tree > ul { padding-left: 0; }
.ll-tree li { position: relative; margin: 4px 0; }
.ll-tree ul ul li::before { content: ""; position: absolute; left: -1.1em; top: 0; height: 1.05em;
  width: 0.9em; border-left: 1px solid #b8c0cc; border-bottom: 1px solid #b8c0cc; }
.ll-tree ul ul li:not(:last-child)::after { content: ""; position: absolute; left: -1.1em; top: 1.05em;
  bottom: -4px; border-left: 1px solid #b8c0cc; }
.ll-node { display: flex; flex-wrap: wrap; align-items: center; gap: 4px 8px; padding: 4px 8px;
  border: 1px solid #d8dde6; border-radius: 8px; background: #fff; color: #1f2937; }
.ll-node.yes { border-color: #8fd3a3; background: #f3fbf5; }
.ll-node.no { border-color: #f19a9a; background: #fdf3f3; }
.ll-node .ll-id { color: #5b6472; font-size: 0.85em; min-width: 2.2em; }
.ll-node .ll-statement { flex: 1 1 16em; }
.ll-marks { display: inline-flex; gap: 4px; }
.ll-mark { border: 1px solid #6b7280; border-radius: 6px; padding: 0 12px; background: #fff;
  color: #1f2937; cursor: pointer; font-size: 1em; min-width: 44px; min-height: 44px; }
.ll-mark:focus-visible { outline: 3px solid #1d4ed8; outline-offset: 2px; }
.ll-mark:hover { border-color: #6b7280; }
.ll-mark:disabled { cursor: default; opacity: 0.6; }
.ll-mark:disabled:hover { border-color: #c5cbd3; }
.ll-mark.on[data-mark="yes"] { background: #1f8a46; border-color: #1f8a46; color: #fff; }
.ll-mark.on[data-mark="no"] { background: #c0392b; border-color: #c0392b; color: #fff; }
.ll-mark.on[data-mark="unknown"] { background: #6b7280; border-color: #6b7280; color: #fff; }
.ll-src { font-size: 0.8em; color: #8a5a00; background: #fff6e0; border: 1px solid #f0d48a;
  border-radius: 6px; padding: 0 6px; }
.ll-node details { flex-basis: 100%; margin: 2px 0 0 2.2em; font-size: 0.9em; }
.ll-node summary { cursor: pointer; color: #1d4ed8; }
.ll-issue { margin: 4px 0 8px 0; }
.ll-issue select { max-width: 100%; margin-left: 4px; padding: 2px 4px; }
.ll-issue .ll-hint { display: block; color: #5b6472; font-size: 0.85em; }
.ll-issue input[data-issue-filter] { max-width: 100%; width: 14em; margin: 2px 4px 2px 0; padding: 2px 4px; }
.ll-issue .ll-issue-now { display: block; font-size: 0.9em; }
.ll-node .ll-stated { flex-basis: 100%; color: #166534; font-size: 0.9em; }
.ll-folded { color: #5b6472; font-size: 0.88em; margin: 2px 0 0 2.2em; }
.ll-root { font-weight: 700; margin-bottom: 6px; }
.ll-trace { width: 100%; border-collapse: collapse; font-size: 0.9em; }
.ll-trace td, .ll-trace th { padding: 3px 6px; border-bottom: 1px solid #e5e7eb; text-align: left;
  vertical-align: top; }
.ll-bar { display: inline-block; height: 8px; background: #93b4f0; border-radius: 4px; }
.ll-routing .ll-domain { font-size: 1.25em; font-weight: 700; }
"""


# -- banner and routing ---------------------------------------------------------------------------


#: What a visitor notices when a role has no model (roles a visitor never meets are not mentioned).
MISSING_EFFECTS = {
    "lawyer": "律师的回答由系统从法条库和案例库中直接摘录原文，不含分析；",
    "clarifier": "澄清树的要素来自相似案例和常见的咨询问题；",
    "secretary": "咨询报告只整理事实和引用法条的核查结果；",
}


def banner_html(statuses: Sequence) -> str:
    """What a visitor gets without a model (in plain words; no role ids, no settings), what still works, and
    where an operator finds how to configure one. Empty when every role the visitor meets has a model."""
    effects = [MISSING_EFFECTS[s.role] for s in statuses if not s.available and s.role in MISSING_EFFECTS]
    if not effects:
        return ""
    return notice(
        "本站暂未配置语言模型：" + "".join(effects) + "接待分流、法条与案例检索和引用核查照常可用。"
        "网站管理员可按“关于”页的说明配置模型。"
        "No language model is configured: answers quote the statute and case databases. "
        "Operators: see the About tab.",
        "warn",
    )


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
    warning = (
        notice(f"接待员的模型尚未学会新增的领域，不会自动分到那里，可手动改派。{untrained}", "warn")
        if untrained
        else ""
    )
    if not routing and not current:
        return warning + notice(
            f"提问后，接待员会把问题分到 {len(domains)} 个业务领域之一。Ask a question to see its domain.",
            "info",
        )
    name = domains[current].name if current else routing.get("name", "")
    # the client chose another domain than the receptionist's: its confidence was for that one
    overridden = bool(routing) and bool(current) and routing.get("domain") not in (None, current)
    parts = [
        '<div class="ll-card ll-routing"><div class="ll-head"><span class="ll-meta">接待员分流 Domain</span>'
    ]
    parts.append(f'<span class="ll-domain" data-domain="{esc(current)}">{esc(name)}</span>')
    if overridden:
        parts.append(badge("由您选择 chosen by you", "info"))
    elif routing:
        parts.append(f'<span class="ll-meta">置信度 {float(routing.get("confidence") or 0):.0%}</span>')
        if routing.get("fallback"):
            parts.append(badge("低置信度，转其他 low confidence", "warn"))
    parts.append("</div>")
    if overridden:
        suggested = esc(routing.get("name", ""))
        parts.append(f'<div class="ll-row"><span class="ll-label">接待员的建议</span>{suggested}</div>')
    elif routing and routing.get("top"):
        ranked = "，".join(f"{esc(t.get('name'))} {float(t.get('p') or 0):.0%}" for t in routing["top"])
        parts.append(f'<div class="ll-row"><span class="ll-label">候选 Top 3</span>{ranked}</div>')
    for line in history:
        parts.append(f'<div class="ll-row ll-reroute">{badge("改派", "info")} {esc(line)}</div>')
    parts.append("</div>")
    return "".join(parts) + warning


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
        return notice(
            "澄清树会在提问后出现：逐条标记“是 / 否 / 不确定”，再提交给律师。"
            "The clarification tree appears after you ask: mark its facts, then submit them.",
            "info",
        )
    parts = ['<div class="ll-tree">', f'<div class="ll-root">问题：{esc(tree.question)}</div>']
    meta = f"这些问题来自{tree_origin(tree)}"
    if not tree.complete:
        meta += " · 正在生成下一层…"
    parts.append(
        f'<div class="ll-meta" data-complete="{str(tree.complete).lower()}" '
        f'title="H={tree.height} K={tree.k}">{esc(meta)}</div>'
    )
    parts.extend(notice(n, "warn") for n in dict.fromkeys(tree.notes))  # the same failure at each node: once
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
    options = [] if current else ['<option value="" selected disabled>（请选择 choose）</option>']
    now = ""
    for domain in dict.fromkeys(i.domain for i in issues):
        name = domains[domain].name if domain in domains else domain
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
        '<div class="ll-issue"><label>问题类型 Issue '
        f'<input type="search" data-issue-filter placeholder="搜索问题类型 Search" '
        f'aria-label="搜索问题类型 Search issues"{disabled}>'
        f'<select data-issue aria-label="问题类型 Issue"{disabled}>{"".join(options)}</select></label>'
        + (
            f'<span class="ll-issue-now" data-issue-now>当前问题类型 In force：{esc(now)}</span>'
            if now
            else ""
        )
        + f'<span class="ll-hint">{esc(ISSUE_HINT)}</span></div>'
    )


def tree_origin(tree: Tree) -> str:
    """Where the tree's elements came from, in a visitor's words (Chinese; the tree's height and width only in
    a tooltip): the tree's source alone when every element has it (``相似案例``), else the count per actual
    source, and why the model was not used (``澄清模型 3 条、相似案例 6 条（澄清模型的输出不是有效的 JSON）``)."""
    sources, fallbacks = tree.origins()
    if not tree.elements or (len(sources) == 1 and tree.source in sources and not tree.failures):
        return NODE_SOURCES.get(tree.source, (tree.source,))[0]
    counted = "、".join(f"{NODE_SOURCES.get(s, (s,))[0]} {n} 条" for s, n in sources.items())
    why = "；".join(FALLBACK_REASONS.get(r, (r,))[0] for r in fallbacks)
    return counted + (f"（{why}）" if why else "")


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
                inner += f'<div class="ll-folded">已折叠 {hidden} 个下级要素 ({hidden} folded)</div>'
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
        f"{label}</button>"
        for value, label in MARK_LABELS
    )
    cases = [c for c in (case_lookup(i) for i in node.case_ids) if c is not None]
    origin = ""
    if node.fallback and node.fallback != "no_model":  # stood in for a model call that failed
        where, why = NODE_SOURCES.get(node.source, (node.source, ""))[0], FALLBACK_REASONS.get(node.fallback)
        origin = (
            f'<span class="ll-src" data-source="{esc(node.source)}" data-fallback="{esc(node.fallback)}" '
            f'title="{esc(why[1] if why else node.fallback)}">来自{esc(where)} · {esc(why[0] if why else "")}</span>'
        )
    details = ""
    if cases:
        rows = "".join(_case_line(c) for c in cases)
        details = f"<details><summary>依据案例 Supporting cases ({len(cases)})</summary>{rows}</details>"
    stated = (
        f'<span class="ll-stated" title="Already said in your question; change the mark if it is wrong">'
        f"您已说明：“{esc(said[1])}”</span>"
        if said
        else ""
    )
    return (
        f'<div class="ll-node {esc(node.mark)}{" ll-said" if said else ""}" data-node="{esc(node.id)}" '
        f'data-mark="{esc(node.mark)}"{" data-stated" if said else ""}>'
        f'<span class="ll-id">{esc(node.id)}</span>{stated}<span class="ll-statement">{esc(node.statement)}</span>'
        f'{origin}<span class="ll-marks">{buttons}</span>{details}</div>'
    )


def _case_line(case) -> str:
    facts = case.facts[:CASE_FACTS_CHARS] + ("…" if len(case.facts) > CASE_FACTS_CHARS else "")
    outcome = case.outcome or case.sentence
    return (
        f'<div class="ll-row"><b>{esc(case.title)}</b> {badge(case.cause or "—", "info")} '
        f'<span class="ll-meta">{esc(case.id)}</span></div><div class="ll-text">{esc(facts)}</div>'
        + (f'<div class="ll-note">结果：{esc(outcome[:200])}</div>' if outcome else "")
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
        text = f"⚠ {md_text(turn.note)}\n\n---\n\n{text}"
    footer = []
    if turn.citations:
        footer.append(f"引用核查：{verdict_counts(turn.citations)}（{CHECK_SCOPE}）")
    if turn.note and not turn.held_back:
        footer.append(f"⚠ {md_text(turn.note)}")
    return text + ("\n\n---\n" + "  \n".join(footer) if footer else "")


def verdict_counts(citations: Sequence[Mapping]) -> str:
    """The checker's verdicts in words, in the verdict table's order: ``条文存在·内容相符 2 条、查无此条 1 条``."""
    counts = Counter(c.get("verdict", "") for c in citations)
    return "、".join(f"{BY_CODE[v].label_zh} {counts[v]} 条" for v in VERDICTS if counts.get(v))


#: What the citation check says and does not say, next to its verdicts (issue 42: a green tick read as "applies").
CHECK_SCOPE = "核查只说明法条是否存在、引用的内容是否与条文相符，不说明该条适用于您的情况"


# -- citations, retrieval, score, trace -----------------------------------------------------------


def citations_html(turn: Turn | None) -> str:
    """The latest answer's cited statutes in plain words: how many, each verdict's Chinese label, what the
    answer wrote, the article it corresponds to, and the real text one click away."""
    if turn is None or turn.role != "lawyer":
        return notice(
            "律师回答后，这里列出回答引用的每条法条及核查结果。Citations of the answer appear here.", "info"
        )
    if not turn.citations:
        return notice("这次回答没有引用具体法条。The answer cites no statute.", "info")
    counts = Counter(c.get("verdict", "") for c in turn.citations)
    pills = "".join(
        f"{_verdict_pill(v)}<span class='ll-meta'>× {counts[v]}</span>" for v in VERDICTS if counts.get(v)
    )
    head = (
        f'<div class="ll-summary">回答引用了 {len(turn.citations)} 条法条</div><div class="ll-counts">{pills}</div>'
        f'<div class="ll-note">{esc(CHECK_SCOPE)}。</div>'
    )
    return head + "".join(_citation_card(i, c, turn.text) for i, c in enumerate(turn.citations, start=1))


def _verdict_pill(code: str) -> str:
    row = BY_CODE.get(code)
    return badge(row.label_zh, row.badge) if row else badge(code, "none")


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
            '<div class="ll-row"><span class="ll-label">对应条文</span>'
            f"《{esc(matched.get('law'))}》{esc(matched.get('article_label'))}</div>"
        )
    if cit.get("quoted"):
        rows.append(
            f'<div class="ll-row"><span class="ll-label">回答引用的内容</span></div><div class="ll-quote">{esc(cit["quoted"])}</div>'
        )
    if matched.get("text"):
        rows.append(
            f"<details><summary>法条原文《{esc(matched.get('law'))}》{esc(matched.get('article_label'))}"
            f'</summary><div class="ll-text">{esc(matched["text"])}</div></details>'
        )
    else:
        rows.append('<div class="ll-note">法规库中没有找到这一条。</div>')
    return (
        f'<div class="ll-card" data-verdict="{esc(cit.get("verdict"))}">'
        f'<div class="ll-head"><span class="ll-title">{index}.</span>{_verdict_pill(str(cit.get("verdict")))}'
        f"{content_kind_tag(cit.get('content_kind'))}"
        f'<span class="ll-title">{esc(written)}</span></div>' + "".join(rows) + "</div>"
    )


def retrieved_html(turn: Turn | None) -> str:
    """The statutes and cases retrieved for the latest answer (what a model-less answer shows)."""
    if turn is None or turn.role != "lawyer" or not (turn.statutes or turn.cases):
        return ""
    statutes = "".join(statute_card(s, fit_line(s)) for s in turn.statutes)
    cases = "".join(case_card(c) for c in turn.cases) or f'<div class="ll-note">{esc(NONE_FITS)}</div>'
    return (
        f'<div class="ll-summary">检索到的法条（系统检索，未经律师判断）Retrieved statutes ({len(turn.statutes)})</div>'
        f"{statutes}"
        f'<div class="ll-summary">相似案例 Similar cases ({len(turn.cases)})</div>{cases}'
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
        return notice("每一步（接待、检索、澄清、回答、核查、报告、评分）会连同耗时记录在这里。", "info")
    longest = max((e.duration_ms for e in trace), default=0.0) or 1.0
    rows = []
    for i, e in enumerate(trace, start=1):
        width = max(2, int(160 * e.duration_ms / longest))
        status = "" if e.ok else badge("失败 failed", "bad")
        rows.append(
            f'<tr data-agent="{esc(e.agent)}"><td>{i}</td><td><b>{esc(e.agent)}</b></td><td>{esc(e.action)}</td>'
            f"<td>{esc(e.summary)}</td><td>{e.duration_ms:,.1f} ms "
            f'<span class="ll-bar" style="width:{width}px"></span></td><td>{status}</td></tr>'
        )
    return (
        '<table class="ll-trace"><thead><tr><th>#</th><th>Agent</th><th>Step</th><th>Summary</th>'
        "<th>Duration</th><th></th></tr></thead><tbody>" + "".join(rows) + "</tbody></table>"
    )
