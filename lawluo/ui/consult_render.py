"""HTML and chat messages for the consultation tab, as pure functions of the firm's state.

Like :mod:`lawluo.ui.render`, nothing here imports Gradio and every string that comes from a client,
a model or the database is escaped — :func:`~lawluo.ui.render.esc` for HTML, and
:func:`~lawluo.agents.secretary.md_text` for the Markdown the chatbot renders — so ``<script>`` or
``<img onerror=…>`` in a question or an answer shows as text.

The clarification tree is one HTML fragment: nested lists drawn with connectors, each element with
是 / 否 / 不确定 buttons that carry ``data-node`` and ``data-mark`` (the tab's JavaScript turns a click
into a ``mark`` event), the cases that support it in a ``<details>`` one click away, and the subtree
of an element marked 否 folded away.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence

from ..agents.domains import PACKAGED, Domains
from ..agents.secretary import md_text
from ..firm.state import Consultation, TraceEvent, Turn
from ..tolc import Node, Tree
from .render import badge, case_card, check_summary, citation_list, esc, notice, statute_card

MARK_LABELS = (("yes", "是"), ("no", "否"), ("unknown", "不确定"))
MARK_TEXT = {"yes": "是", "no": "否", "unknown": "未标记"}
CASE_FACTS_CHARS = 220

CONSULT_CSS = """
.ll-tree { line-height: 1.6; }
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
.ll-mark { border: 1px solid #c5cbd3; border-radius: 6px; padding: 1px 10px; background: #fff;
  color: #1f2937; cursor: pointer; font-size: 0.9em; }
.ll-mark:hover { border-color: #6b7280; }
.ll-mark:disabled { cursor: default; opacity: 0.6; }
.ll-mark:disabled:hover { border-color: #c5cbd3; }
.ll-mark.on[data-mark="yes"] { background: #1f8a46; border-color: #1f8a46; color: #fff; }
.ll-mark.on[data-mark="no"] { background: #c0392b; border-color: #c0392b; color: #fff; }
.ll-mark.on[data-mark="unknown"] { background: #6b7280; border-color: #6b7280; color: #fff; }
.ll-node details { flex-basis: 100%; margin: 2px 0 0 2.2em; font-size: 0.9em; }
.ll-node summary { cursor: pointer; color: #1d4ed8; }
.ll-folded { color: #5b6472; font-size: 0.88em; margin: 2px 0 0 2.2em; }
.ll-root { font-weight: 700; margin-bottom: 6px; }
.ll-trace { width: 100%; border-collapse: collapse; font-size: 0.9em; }
.ll-trace td, .ll-trace th { padding: 3px 6px; border-bottom: 1px solid #e5e7eb; text-align: left;
  vertical-align: top; }
.ll-bar { display: inline-block; height: 8px; background: #93b4f0; border-radius: 4px; }
.ll-routing .ll-domain { font-size: 1.25em; font-weight: 700; }
"""


# -- banner and routing ---------------------------------------------------------------------------


def banner_html(statuses: Sequence) -> str:
    """What is missing when a role has no model, what still works, and how to configure one."""
    missing = [s for s in statuses if not s.available]
    if not missing:
        return ""
    roles = "、".join(s.role for s in missing)
    works = (
        "接待分流、法条与案例检索、基于相似案例的澄清树和引用核查无需模型，照常可用。"
        "Routing, statute and case search, the case-based clarification tree and citation checks work without one."
    )
    how = (
        "配置方法 How to configure: start with `python app.py --config configs/hosted-openai.yaml` "
        "(or set LAWLUO_CONFIG), or set LAWLUO_DEFAULT_BACKEND=openai, LAWLUO_DEFAULT_MODEL and "
        "OPENAI_API_KEY (on a Hugging Face Space: as secrets). See the About tab."
    )
    return notice(f"未配置语言模型 No language model for: {roles}. {works} {how}", "warn")


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
    parts = [
        '<div class="ll-card ll-routing"><div class="ll-head"><span class="ll-meta">接待员分流 Domain</span>'
    ]
    parts.append(f'<span class="ll-domain" data-domain="{esc(current)}">{esc(name)}</span>')
    if routing:
        parts.append(f'<span class="ll-meta">置信度 {float(routing.get("confidence") or 0):.0%}</span>')
        if routing.get("fallback"):
            parts.append(badge("低置信度，转其他 low confidence", "warn"))
    parts.append("</div>")
    if routing and routing.get("top"):
        ranked = "，".join(f"{esc(t.get('name'))} {float(t.get('p') or 0):.0%}" for t in routing["top"])
        parts.append(f'<div class="ll-row"><span class="ll-label">候选 Top 3</span>{ranked}</div>')
    for line in history:
        parts.append(f'<div class="ll-row ll-reroute">{badge("改派", "info")} {esc(line)}</div>')
    parts.append("</div>")
    return "".join(parts) + warning


# -- the clarification tree -----------------------------------------------------------------------


def tree_html(
    tree: Tree | None, case_lookup: Callable[[str], object | None] = lambda _id: None, markable: bool = True
) -> str:
    """The tree as nested lists with mark buttons; a 否 folds the element's subtree away.

    With ``markable`` false (the tree is answered, closed or still growing) the buttons show the marks
    but are disabled.
    """
    if tree is None:
        return notice(
            "澄清树会在提问后出现：逐条标记“是 / 否 / 不确定”，再提交给律师。"
            "The clarification tree appears after you ask: mark its facts, then submit them.",
            "info",
        )
    parts = ['<div class="ll-tree">', f'<div class="ll-root">问题：{esc(tree.question)}</div>']
    source = "澄清模型 clarifier model" if tree.source == "model" else "相似案例 similar cases (no model)"
    meta = f"H={tree.height} K={tree.k} · 要素来自 {source}"
    if not tree.complete:
        meta += " · 正在生成下一层… building the next level…"
    parts.append(f'<div class="ll-meta" data-complete="{str(tree.complete).lower()}">{esc(meta)}</div>')
    parts.extend(notice(n, "warn") for n in tree.notes)
    parts.append(_subtree(tree, "0", case_lookup, markable))
    parts.append("</div>")
    return "".join(parts)


def _subtree(tree: Tree, node_id: str, case_lookup, markable: bool) -> str:
    children = tree.children(node_id)
    if not children:
        return ""
    items = []
    for node in children:
        inner = _node(node, case_lookup, markable)
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


def _node(node: Node, case_lookup, markable: bool) -> str:
    disabled = "" if markable else " disabled"
    buttons = "".join(
        f'<button type="button" class="ll-mark{" on" if node.mark == value else ""}"{disabled} '
        f'data-node="{esc(node.id)}" data-mark="{value}" aria-pressed="{str(node.mark == value).lower()}">'
        f"{label}</button>"
        for value, label in MARK_LABELS
    )
    cases = [c for c in (case_lookup(i) for i in node.case_ids) if c is not None]
    details = ""
    if cases:
        rows = "".join(_case_line(c) for c in cases)
        details = f"<details><summary>依据案例 Supporting cases ({len(cases)})</summary>{rows}</details>"
    return (
        f'<div class="ll-node {esc(node.mark)}" data-node="{esc(node.id)}" data-mark="{esc(node.mark)}">'
        f'<span class="ll-id">{esc(node.id)}</span><span class="ll-statement">{esc(node.statement)}</span>'
        f'<span class="ll-marks">{buttons}</span>{details}</div>'
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
        messages.append({"role": "assistant", "content": md_text(streaming) + " ▌"})
    return messages


def _turn_markdown(turn: Turn) -> str:
    text = md_text(turn.text)
    if turn.role == "client":
        return text
    footer = []
    if turn.citations:
        verified = sum(c.get("verdict") == "verified" for c in turn.citations)
        footer.append(f"引用核查 Citations: {len(turn.citations)} 条，{verified} 条核实无误（详见右侧）")
    if turn.score:
        footer.append(
            f"主任评分 Boss: P(更好) = {float(turn.score['p_better']):.2f} ({md_text(str(turn.score.get('method', '')))})"
        )
    if turn.note:
        footer.append(f"⚠ {md_text(turn.note)}")
    return text + ("\n\n---\n" + "  \n".join(footer) if footer else "")


# -- citations, retrieval, score, trace -----------------------------------------------------------


def citations_html(turn: Turn | None) -> str:
    """The latest answer's cited statutes, each with its verdict badge and the real text on demand."""
    if turn is None or turn.role != "lawyer":
        return notice(
            "律师回答后，这里列出回答引用的每条法条及核查结果。Citations of the answer appear here.", "info"
        )
    counts = Counter(c.get("verdict", "") for c in turn.citations)
    return check_summary(turn.nhsr, counts) + citation_list(turn.citations, turn.text)


def retrieved_html(turn: Turn | None) -> str:
    """The statutes and cases retrieved for the latest answer (what a model-less answer shows)."""
    if turn is None or turn.role != "lawyer" or not (turn.statutes or turn.cases):
        return ""
    statutes = "".join(statute_card(s) for s in turn.statutes)
    cases = "".join(case_card(c) for c in turn.cases)
    return (
        f'<div class="ll-summary">检索到的法条 Retrieved statutes ({len(turn.statutes)})</div>{statutes}'
        f'<div class="ll-summary">相似案例 Similar cases ({len(turn.cases)})</div>{cases}'
    )


def score_line(score: Mapping | None) -> str:
    """The boss's score as one line of Markdown (its note is the judge model's reason: escaped)."""
    if not score:
        return ""
    note = f" — {md_text(str(score['note']))}" if score.get("note") else ""
    method = md_text(str(score.get("method", "")))
    return f"主任评分 Boss score: P(更好 better) = {float(score['p_better']):.2f} ({method}){note}"


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
