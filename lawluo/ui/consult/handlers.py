"""The consultation tab's other handlers: a mark on the tree, a change of domain or of the tree's issue (the
firm decides whether the tree is built again), ending the consultation (the report and its files), and
saving it."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Generator, Iterator
from pathlib import Path

import gradio as gr

from ...agents.secretary import GENERATED_BY, Report, render_docx, render_markdown
from ...firm import Consultation, Firm
from ...firm.firm import ConsultationClosed, StepNotAllowed
from ...i18n import Message, message
from .. import consult_render as cr
from ..i18n import Html, say
from ..render import inert_links
from ..views import event_field
from ..visitors import (
    DIRECT,
    Step,
    Visit,
    Visitors,
    owner_of,
)
from .page import (
    DOMAIN_CHANGED_KEY,
    ISSUE_REBUILDING_KEY,
    ISSUE_REBUILT,
    REBUILDING_KEY,
    REPORT_FILE,
    SAVED_FILE,
    TREE_REBUILT,
)
from .steps import one_step, step_deadline
from .view import ConsultView, busy_view, failed_view, foreign_view, hidden_file, is_busy, refused, view

logger = logging.getLogger("lawluo.ui.consult_tab")


def mark(
    firm: Firm,
    state: Consultation | None,
    node_id: str,
    value: str,
    visit: Visit = DIRECT,
    *,
    visitors: Visitors | None = None,
) -> ConsultView:
    """Mark a tree element yes / no / unknown; a no folds its subtree."""
    if not owner_of(state, visit):
        return foreign_view(firm, state)
    if state is None:
        return view(firm, state, say("consult.msg.no_tree"), "warn")
    if is_busy(visitors, visit):  # a growing tree would drop the mark with its next level
        return busy_view(firm, state)
    try:
        firm.mark(state, str(node_id), str(value))
    except (KeyError, ValueError) as exc:
        return refused(firm, state, exc, "mark")
    key = cr.MARK_TEXT.get(str(value))
    return view(
        firm, state, say("consult.msg.marked", node=node_id, mark=message(key) if key else str(value))
    )


def mark_clicked(
    firm: Firm,
    state: Consultation | None,
    evt: gr.EventData,
    visit: Visit = DIRECT,
    *,
    visitors: Visitors | None = None,
) -> ConsultView:
    """A click on a mark button of the tree (its ``data-node`` and ``data-mark``)."""
    node, value = str(event_field(evt, "node") or "")[:40], str(event_field(evt, "mark") or "")[:20]
    return mark(firm, state, node, value, visit, visitors=visitors)


def rebuilt_view(
    firm: Firm,
    state: Consultation,
    start: Callable[[], Iterator],
    step: str,
    building: Html,
    done: Callable[[Message], Html],
) -> Generator[ConsultView, None, ConsultView]:
    """Drive a rebuild of the tree the firm starts with ``start()`` (:meth:`Firm.reclarify`, :meth:`Firm.reissue`):
    what the firm refuses is shown as a refusal of ``step``; while the new tree grows the tree is shown with
    the ``building`` message; a rebuild that fails or is closed halfway (the page left) is closed, which puts
    the consultation back as it was. Returns the final view, its message ``done(kept)`` with the marks kept
    (a :class:`~lawluo.i18n.Message`)."""
    marked = sum(n.mark != "unknown" for n in state.tree.visible())
    try:
        rebuild = start()
    except (ConsultationClosed, StepNotAllowed, KeyError, ValueError) as exc:
        return refused(firm, state, exc, step)
    try:
        for _tree in rebuild:
            yield view(firm, state, building, working=True)
    except BaseException as exc:  # failed, or the page left halfway
        rebuild.close()  # a rebuild closed before it ends puts the consultation back (the firm does)
        if not isinstance(exc, Exception):  # the page left: nothing more is shown
            raise
        return failed_view(firm, state, exc)
    kept = sum(n.mark != "unknown" for n in state.tree.visible())
    words = (
        message("consult.msg.kept", kept=kept, marked=marked) if marked else message("consult.msg.mark_each")
    )
    return view(firm, state, done(words))


def set_domain(
    firm: Firm,
    state: Consultation | None,
    domain_id: str | None,
    visit: Visit = DIRECT,
    *,
    visitors: Visitors | None = None,
) -> Iterator[ConsultView]:
    """The client overrides the receptionist's domain. While the tree awaits the client's marks it is
    built again from the chosen domain's elements, keeping the marks of the elements still in it; so is it
    when the client chooses the routed domain itself and the tree's elements came from another (soft
    routing). The firm decides which (:meth:`Firm.change_domain`). Once the lawyer has answered, the choice
    applies to the next answers. Yields views; the last is sent once the
    step is over."""
    visitors = visitors or Visitors()
    if not owner_of(state, visit):
        yield foreign_view(firm, state)
        return
    if state is None or not state.turns:
        yield view(firm, state, say("consult.msg.domain_first"), "warn")
        return
    if is_busy(visitors, visit):
        yield busy_view(firm, state)
        return
    if not firm.rebuilds(state, domain_id):
        try:
            changed = firm.change_domain(state, domain_id)  # None: the domain it has already
        except (KeyError, ValueError) as exc:
            yield refused(firm, state, exc, "domain")
            return
        yield view(firm, state) if changed is None else view(firm, state, say(DOMAIN_CHANGED_KEY))
        return

    def run(step: Step) -> Generator[ConsultView, None, ConsultView]:
        deadline = step_deadline(visitors, "the clarification tree", step)
        return (
            yield from rebuilt_view(
                firm,
                state,
                lambda: firm.change_domain(state, domain_id, deadline),
                "domain",
                say(REBUILDING_KEY),
                lambda kept: cr.say_chinese(
                    TREE_REBUILT, {"name": cr.domain_field(firm.domains, state.domain)}, kept=kept
                ),
            )
        )

    yield from one_step(visitors, visit, "domain", run, lambda: busy_view(firm, state))


def choose_issue(
    firm: Firm,
    state: Consultation | None,
    issue_id: str | None,
    visit: Visit = DIRECT,
    *,
    visitors: Visitors | None = None,
) -> Iterator[ConsultView]:
    """The client chose an issue in the tree's 问题类型 menu while the tree awaits marks: the tree is built
    again with that issue's elements first, keeping the marks of the elements still in it
    (:meth:`Firm.reissue`). Choosing the issue the tree already has changes nothing. Yields views; the last
    is sent once the step is over."""
    visitors = visitors or Visitors()
    if not owner_of(state, visit):
        yield foreign_view(firm, state)
        return
    if state is None or state.tree is None:
        yield view(firm, state, say("consult.msg.issue_first"), "warn")
        return
    if is_busy(visitors, visit):
        yield busy_view(firm, state)
        return
    issue_id = str(issue_id or "")[:200]
    if not issue_id or issue_id == firm.issue_menu(state)[1]:
        yield view(firm, state)
        return

    def run(step: Step) -> Generator[ConsultView, None, ConsultView]:
        deadline = step_deadline(visitors, "the clarification tree", step)

        def rebuilt(kept: Message) -> Html:  # only after Firm.reissue accepted the issue
            title = firm.issue_title(issue_id)
            return cr.say_chinese(ISSUE_REBUILT, {"title": title}, kept=kept)

        return (
            yield from rebuilt_view(
                firm,
                state,
                lambda: firm.reissue(state, issue_id, deadline),
                "issue",
                say(ISSUE_REBUILDING_KEY),
                rebuilt,
            )
        )

    yield from one_step(visitors, visit, "issue", run, lambda: busy_view(firm, state))


def issue_clicked(
    firm: Firm,
    state: Consultation | None,
    evt: gr.EventData,
    visit: Visit = DIRECT,
    *,
    visitors: Visitors | None = None,
) -> Iterator[ConsultView]:
    """A choice in the tree's 问题类型 menu (its option's value, sent by the tree's script)."""
    issue_id = str(event_field(evt, "issue") or "")
    yield from choose_issue(firm, state, issue_id, visit, visitors=visitors)


def end(
    firm: Firm,
    state: Consultation | None,
    visitors: Visitors | None = None,
    visit: Visit = DIRECT,
    client: str | None = None,
) -> ConsultView:
    """The secretary's report (for ``client``, the name the visitor typed), scored by the boss (the score is
    in the trace), and its .md and .docx files, which hold the same text; the consultation is closed.
    Ending a closed consultation offers its report again.

    The files are written into a fresh folder of the visitor's session, named by the server (never from
    the consultation, which may come from an uploaded file), readable by the app's user only.
    """
    visitors = visitors or Visitors()
    nothing = {"report": "", "download_md": hidden_file(), "download_docx": hidden_file()}
    if not owner_of(state, visit):
        return foreign_view(firm, state, **nothing)
    if state is None:
        return view(firm, state, say("consult.msg.nothing_to_report"), "warn", **nothing)
    step = None
    try:
        with visitors.step(visit, "end") as step:
            if step is None:
                return busy_view(firm, state, **nothing)
            return (
                step.shown(write_report(firm, state, visitors, visit, client, step, nothing)) or ConsultView()
            )
    finally:
        if step is not None:
            visitors.ended(visit, step)


def write_report(
    firm: Firm,
    state: Consultation,
    visitors: Visitors,
    visit: Visit,
    client: str | None,
    step: Step,
    nothing: dict,
) -> ConsultView:
    """:func:`end`'s work, as the session's model step ``step``."""
    try:
        try:
            # an empty name box keeps the name the consultation has (one resumed from a file)
            firm.close(state, step_deadline(visitors, "the report", step), (client or "").strip() or None)
        except ConsultationClosed:
            pass  # ended before: its report is offered again
        if step.replaced:  # 新咨询 cleared the session's folder: write nothing into it
            return ConsultView()
        report = Report(**state.report)
        markdown = render_markdown(report)
        folder = visitors.folder(visit)
        md_path = write_private(folder / f"{REPORT_FILE}.md", markdown)
        docx_path = render_docx(report, folder / f"{REPORT_FILE}.docx")
        os.chmod(docx_path, 0o600)
    except StepNotAllowed as exc:
        return refused(firm, state, exc, "end", **nothing)
    except Exception as exc:  # noqa: BLE001
        return failed_view(firm, state, exc, **nothing)
    return view(
        firm,
        state,
        cr.note_html(report.notice) if report.notice else say("consult.msg.ended"),
        "warn" if report.notice else "info",
        report=shown_report(markdown, report),  # the report's model-written text links nowhere
        download_md=gr.update(value=str(md_path), visible=True),
        download_docx=gr.update(value=str(docx_path), visible=True),
    )


def shown_report(markdown: str, report: Report) -> str:
    """The report as the page shows it: its model-written text links nowhere, and its number and the name of
    the model that wrote it, codes, are marked as no language's (``zxx``: the report is Chinese, they are not)."""
    shown = inert_links(markdown)
    if report.number:
        shown = shown.replace(report.number, f'<span lang="zxx">{cr.esc(report.number)}</span>', 1)
    by = " ".join(str(report.generated_by or "").split())
    if by and not report.partial:  # the model's name: a code too
        line = GENERATED_BY.format(by=by)
        shown = shown.replace(line, GENERATED_BY.format(by=f'<span lang="zxx">{cr.esc(by)}</span>'), 1)
    return shown


def write_private(path: Path, text: str) -> Path:
    """Write ``text`` to a new file only the app's user can read (Gradio's served copy keeps the mode)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def save_consultation(
    firm: Firm, state: Consultation | None, visitors: Visitors | None = None, visit: Visit = DIRECT
) -> ConsultView:
    """The consultation as a JSON file to download (``saved``; resumable here or with
    ``python -m lawluo consult``)."""
    visitors = visitors or Visitors()
    if not owner_of(state, visit):
        return foreign_view(firm, state, saved=hidden_file())
    if state is None or not state.turns:
        return view(firm, state, say("consult.msg.nothing_to_save"), "warn", saved=hidden_file())
    try:
        path = write_private(visitors.folder(visit) / SAVED_FILE, state.to_json())
    except OSError as exc:
        return failed_view(firm, state, exc, saved=hidden_file())
    saved = gr.update(value=str(path), visible=True)
    return view(firm, state, say("consult.msg.saved"), saved=saved)
