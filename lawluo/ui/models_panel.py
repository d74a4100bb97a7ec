"""The "language models" panel of the About tab: which model each role uses, and what is missing.

No request is made to draw it: availability is what :meth:`LanguageModels.status` knows up front
(a role with no backend, an API key variable that is empty). Everything shown is escaped.
"""

from __future__ import annotations

from collections.abc import Sequence

import gradio as gr

from ..i18n import catalogue
from ..llm import LanguageModels, RoleStatus
from .copy import ADVANCED_LABEL, UICopy
from .i18n import say
from .render import esc


def models_status_html(statuses: Sequence[RoleStatus], reasons: bool = True) -> str:
    """One row per role: its job, its model, and either "ready" or (with ``reasons``: for the operator,
    it may name a setting or an environment variable) the reason it cannot be used. A role's name and job
    are in the page's language; its model and the reason (the operator's words) are shown as they are."""
    rows = []
    known = catalogue()
    for s in statuses:
        badge = (
            f'<span class="ll-badge ok">{say("about.ready")}</span>'
            if s.available
            else f'<span class="ll-badge none">{say("about.not_available")}</span>'
        )
        reason = f'<div class="ll-note" lang="en">{esc(s.reason)}</div>' if s.reason and reasons else ""
        name = say(f"about.role.{s.role}") if f"about.role.{s.role}" in known else esc(s.role)
        job = say(f"about.role_help.{s.role}") if f"about.role_help.{s.role}" in known else ""
        rows.append(
            f'<div class="ll-row" data-role="{esc(s.role)}"><b>{name}</b> <span class="ll-meta">{job}</span>'
            f'<br>{badge} <code lang="en">{esc(s.description)}</code>{reason}</div>'
        )
    return '<div class="ll-card ll-models">' + "".join(rows) + "</div>"


def build_models_panel(models: LanguageModels, copy: UICopy) -> None:
    """Which roles have a model, in a visitor's words; how to configure them, and why a role cannot be
    used (settings, environment variables), folded under 高级 / Advanced for the site's operator."""
    intro, advanced = copy.markdown("models.md")
    if intro:
        gr.Markdown(intro)
    statuses = models.status()
    gr.HTML(models_status_html(statuses, reasons=False))
    with gr.Accordion(ADVANCED_LABEL, open=False, elem_id="ll-models-advanced"):
        if advanced:
            gr.Markdown(advanced)
        gr.HTML(models_status_html(statuses))
