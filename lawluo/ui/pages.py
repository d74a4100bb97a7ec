"""The app's pages: one URL for each kind of user, named in the navbar by what it is for.

Gradio 6 serves each page of ``demo.route`` at its own path, with only that page's components and
page-load events (``/`` does not load the annotation form, nor run its events). Every page shows the same
navbar (:func:`navbar`): Gradio reads a page's labels from the ``gr.Navbar`` of the page being shown, so
each page builds one.

Sign-in is Gradio's, and Gradio 6 has it for the whole app only (``launch(auth=…)``), not per page: with
a users file (``annotation_users``) every page is behind the login form, ``/`` included; with Hugging Face
sign-in on a Space (``hf_oauth: true``, no users file) ``/`` needs none, and ``/annotate`` and ``/admin``
offer the Hugging Face button and admit only invited accounts and admins (docs/deployment.md).
"""

from __future__ import annotations

from dataclasses import dataclass

import gradio as gr


@dataclass(frozen=True)
class Page:
    """A page: its URL path (``""`` for ``/``), its name in the navbar, and whom it is for."""

    path: str
    name: str
    audience: str

    @property
    def url(self) -> str:
        return f"/{self.path}"


HOME = Page("", "法律咨询 · 法条检索 Consult", "visitors: ask a legal question, look up and check statutes")
ANNOTATE = Page("annotate", "律师标注 Annotate", "lawyers: label pairs of answers and the statutes they cite")
ADMIN = Page("admin", "管理 Admin", "admins: adjudicate disagreements, read the agreement statistics")
PAGES: tuple[Page, ...] = (HOME, ANNOTATE, ADMIN)
#: The paths whose HTML is Gradio's page template (the security headers hash their inline scripts).
PAGE_PATHS: tuple[str, ...] = tuple(p.url for p in PAGES)


def navbar() -> gr.Navbar:
    """The navbar of the page being built: the home page under its own name, then the routed pages."""
    return gr.Navbar(main_page_name=HOME.name, elem_id="ll-navbar")


__all__ = ["ADMIN", "ANNOTATE", "HOME", "PAGES", "PAGE_PATHS", "Page", "navbar"]
