"""The "language models" panel of the About tab: which model each role uses, and what is missing.

No request is made to draw it: availability is what :meth:`LanguageModels.status` knows up front
(a role with no backend, an API key variable that is empty). Everything shown is escaped.
"""

from __future__ import annotations

from collections.abc import Sequence

import gradio as gr

from ..config import ROLE_HELP
from ..llm import LanguageModels, RoleStatus
from .copy import ADVANCED_LABEL, UICopy
from .render import esc


def models_status_html(statuses: Sequence[RoleStatus], reasons: bool = True) -> str:
    """One row per role: its job, its model, and either "ready" or (with ``reasons``: for the operator,
    it may name a setting or an environment variable) the reason it cannot be used."""
    rows = []
    for s in statuses:
        badge = (
            '<span class="ll-badge ok">可用 ready</span>'
            if s.available
            else '<span class="ll-badge none">未配置 not available</span>'
        )
        reason = f'<div class="ll-note">{esc(s.reason)}</div>' if s.reason and reasons else ""
        rows.append(
            f'<div class="ll-row"><b>{esc(s.role)}</b> <span class="ll-meta">{esc(ROLE_HELP.get(s.role, ""))}</span>'
            f"<br>{badge} <code>{esc(s.description)}</code>{reason}</div>"
        )
    return '<div class="ll-card ll-models">' + "".join(rows) + "</div>"


def build_models_panel(models: LanguageModels, copy: UICopy) -> None:
    """Which roles have a model, in a visitor's words; how to configure them, and why a role cannot be
    used (settings, environment variables), folded under 高级 / Advanced for the site's operator."""
    intro, advanced = copy.split("models.md")
    if intro:
        gr.Markdown(intro)
    statuses = models.status()
    gr.HTML(models_status_html(statuses, reasons=False))
    with gr.Accordion(ADVANCED_LABEL, open=False, elem_id="ll-models-advanced"):
        if advanced:
            gr.Markdown(advanced)
        gr.HTML(models_status_html(statuses))
