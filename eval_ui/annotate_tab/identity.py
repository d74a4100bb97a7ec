"""Who calls the annotation tab (:func:`identify`), and what someone refused reads: not invited, or how to
sign in."""

# no `from __future__ import annotations`: Gradio reads the handlers' gr.Request / gr.OAuthProfile hints at runtime

from typing import Any

import gradio as gr

from lawluo.i18n import Message, message
from lawluo.ui.i18n import t

from ..service import AnnotationService, Identity, profile_orgs

#: What the tab shows, once and instead of the form, when nobody can sign in (a Markdown value: a
#: ``gr.I18n`` key, translated in the browser).
NOT_CONFIGURED = t("annotate.not_configured")


def not_invited(name: str) -> Message:
    """What a Hugging Face account that is signed in but not invited reads (``str()``: in Chinese)."""
    shown = " ".join(str(name).split())[:60]  # one line, no control characters, not a flood
    return message("annotate.not_invited", name=shown)


def refusal(service: AnnotationService, request: gr.Request | None, profile: Any = None) -> Message:
    """Why a request :func:`identify` refused is refused: not invited (signed in with Hugging Face), or
    how to sign in (a :class:`Message`: ``say()`` renders it, ``str()`` is its Chinese text)."""
    oauth_name = getattr(profile, "username", None) if profile is not None else None
    if service.not_invited(oauth_name):
        return not_invited(oauth_name)
    return sign_in_help(service)


def sign_in_help(service: AnnotationService) -> Message:
    """One plain sentence: how to sign in, or (not configured) what the admin has to do."""
    if service.sign_in == "oauth":
        return message("annotate.sign_in.oauth")
    if service.sign_in == "password":
        return message("annotate.sign_in.password")
    return message("annotate.sign_in.none")


def identify(service: AnnotationService, request: gr.Request | None, profile: Any = None) -> Identity | None:
    """Who sent the request (:meth:`AnnotationService.identify`); the profile's organisations count."""
    username = getattr(request, "username", None) if request is not None else None
    oauth_name = getattr(profile, "username", None) if profile is not None else None
    orgs = profile_orgs(profile)
    if orgs:
        return service.identify(username, oauth_name, orgs)
    return service.identify(username, oauth_name)  # a stand-in service may take just the two names
