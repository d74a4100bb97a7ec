"""The admins' page (``/admin``): the adjudication (裁决) and statistics (统计) tabs, for admins only.

Both tabs stay hidden until the page-load events find an admin (each tab's own check:
:func:`eval_ui.adjudicate_tab.tab_visibility`, :func:`eval_ui.stats_tab.show_tab`); everyone else reads
one line instead (:func:`admin_notice`): who they are signed in as and where their work is, or how to sign
in. On a Space with Hugging Face sign-in the page has the sign-in button. Like every handler of the
annotation pages, the check identifies the caller from the request, never from state.
"""

# no `from __future__ import annotations`: Gradio reads the handlers' gr.Request / gr.OAuthProfile hints at runtime

from typing import Any

import gradio as gr

from lawluo.i18n import Message
from lawluo.ui.i18n import Html, say

from .adjudicate_tab import build_adjudicate_tab, data, notice_html
from .annotate_tab import ANNOTATE_CSS, NOT_CONFIGURED, bind, identify, refusal
from .login import SignIn
from .service import AnnotationService
from .stats_tab import build_stats_tab

CHECKING = say("admin.checking")


def _why(text: Any) -> Any:
    """What :func:`eval_ui.annotate_tab.refusal` says, as a field of :func:`say`: a message, HTML, or text."""
    return text if isinstance(text, Message | Html) else str(text)


def admin_notice(
    service: AnnotationService, request: gr.Request, profile: gr.OAuthProfile | None = None
) -> Any:
    """On page load: nothing for an admin (the tabs show); for anyone else why the page is empty."""
    who = identify(service, request, profile)
    if who is not None and who.is_admin:
        return gr.update(value="", visible=False)
    if who is None:
        text = say("admin.for_admins", why=_why(refusal(service, request, profile)))
    else:
        text = say("admin.annotator", name=Html(data(who.name)), path=Html(data("/annotate")))
    return gr.update(value=notice_html(text, "warn"), visible=True)


def build_admin_page(service: AnnotationService, demo: gr.Blocks, sign_in: SignIn | None = None) -> None:
    """The page's notice, the sign-in button on a Space, and the two admin tabs (their events on ``demo``)."""
    if service.sign_in is None:
        gr.Markdown(NOT_CONFIGURED, elem_id="admin-not-configured")
        return
    message = gr.HTML(notice_html(CHECKING), css_template=ANNOTATE_CSS, elem_id="admin-notice")
    if service.sign_in == "oauth":
        gr.LoginButton(size="sm")
    build_adjudicate_tab(service, demo, sign_in)
    build_stats_tab(service, demo)
    demo.load(bind(admin_notice, service), None, message, api_visibility="private")


__all__ = ["CHECKING", "admin_notice", "build_admin_page"]
