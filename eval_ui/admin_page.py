"""The admins' page (``/admin``): the 裁决 / Adjudication and 统计 / Statistics tabs, for admins only.

Both tabs stay hidden until the page-load events find an admin (each tab's own check:
:func:`eval_ui.adjudicate_tab.tab_visibility`, :func:`eval_ui.stats_tab.show_tab`); everyone else reads
one line instead (:func:`admin_notice`): who they are signed in as and where their work is, or how to sign
in. On a Space with Hugging Face sign-in the page has the sign-in button. Like every handler of the
annotation pages, the check identifies the caller from the request, never from state.
"""

# no `from __future__ import annotations`: Gradio reads the handlers' gr.Request / gr.OAuthProfile hints at runtime

from typing import Any

import gradio as gr

from lawluo.ui.render import notice

from .adjudicate_tab import build_adjudicate_tab
from .annotate_tab import ANNOTATE_CSS, NOT_CONFIGURED, bind, identify, refusal
from .login import SignIn
from .service import AnnotationService
from .stats_tab import build_stats_tab

CHECKING = "正在确认你的权限… Checking that you are an admin…"


def admin_notice(
    service: AnnotationService, request: gr.Request, profile: gr.OAuthProfile | None = None
) -> Any:
    """On page load: nothing for an admin (the tabs show); for anyone else why the page is empty."""
    who = identify(service, request, profile)
    if who is not None and who.is_admin:
        return gr.update(value="", visible=False)
    if who is None:
        text = "此页仅供管理员 This page is for admins. " + refusal(service, request, profile)
    else:
        text = (
            f"此页仅供管理员；你以「{who.name}」登录，是标注员，你的条目在「律师标注」页 (/annotate)。"
            f" This page is for admins. You are signed in as “{who.name}”, an annotator: your items are on"
            " the Annotate page (/annotate)."
        )
    return gr.update(value=notice(text, "warn"), visible=True)


def build_admin_page(service: AnnotationService, demo: gr.Blocks, sign_in: SignIn | None = None) -> None:
    """The page's notice, the sign-in button on a Space, and the two admin tabs (their events on ``demo``)."""
    if service.sign_in is None:
        gr.Markdown(NOT_CONFIGURED, elem_id="admin-not-configured")
        return
    message = gr.HTML(notice(CHECKING), css_template=ANNOTATE_CSS, elem_id="admin-notice")
    if service.sign_in == "oauth":
        gr.LoginButton(size="sm")
    build_adjudicate_tab(service, demo, sign_in)
    build_stats_tab(service, demo)
    demo.load(bind(admin_notice, service), None, message, api_visibility="private")


__all__ = ["CHECKING", "admin_notice", "build_admin_page"]
