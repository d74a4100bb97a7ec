"""The app's pages: one URL for each kind of user, named in the navbar by what it is for.

Gradio 6 serves each page of ``demo.route`` at its own path, with only that page's components and
page-load events (``/`` does not load the annotation form, nor run its events). Every page shows the same
navbar (:func:`navbar`): the app's own row of links, whose names follow the page's language
(:mod:`lawluo.ui.i18n`) — Gradio's ``gr.Navbar`` translates only its first entry, so it is hidden. The links
are relative (``./``, ``annotate``, ``admin``): they work under a proxy that serves the app below a path.

Sign-in is Gradio's, and Gradio 6 has it for the whole app only (``launch(auth=…)``), not per page: with
a users file (``annotation_users``) every page is behind the login form, ``/`` included; with Hugging Face
sign-in on a Space (``hf_oauth: true``, no users file) ``/`` needs none, and ``/annotate`` and ``/admin``
offer the Hugging Face button and admit only invited accounts and admins (docs/deployment.md).
"""

from __future__ import annotations

from dataclasses import dataclass

import gradio as gr

from .i18n import say


@dataclass(frozen=True)
class Page:
    """A page: its URL path (``""`` for ``/``), the catalogue key of its name in the navbar, and whom it is for."""

    path: str
    name_key: str
    audience: str

    @property
    def url(self) -> str:
        return f"/{self.path}"

    @property
    def link(self) -> str:
        """The navbar's relative link to the page (``./`` for ``/``)."""
        return self.path or "./"


HOME = Page("", "nav.home", "visitors: ask a legal question, look up and check statutes")
ANNOTATE = Page("annotate", "nav.annotate", "lawyers: label pairs of answers and the statutes they cite")
ADMIN = Page("admin", "nav.admin", "admins: adjudicate disagreements, read the agreement statistics")
PAGES: tuple[Page, ...] = (HOME, ANNOTATE, ADMIN)
#: The paths whose HTML is Gradio's page template (the security headers hash their inline scripts).
PAGE_PATHS: tuple[str, ...] = tuple(p.url for p in PAGES)

#: The navbar's look; Gradio's own bar (``.nav-holder``) is hidden: Gradio 6.31 shows it, with an untranslated
#: "Home", even for ``gr.Navbar(visible=False)`` when the app has routes.
NAV_CSS = """
.nav-holder { display: none !important; }
#ll-navbar nav { display: flex; flex-wrap: wrap; gap: 0.25rem 1.25rem; align-items: center; }
#ll-navbar nav a { display: inline-flex; align-items: center; min-height: 44px; padding: 0 0.25rem;
  text-decoration: none; color: var(--body-text-color); }
#ll-navbar nav a.ll-switch { margin-left: auto; }
#ll-navbar nav a[aria-current="page"] { font-weight: 600; border-bottom: 2px solid var(--color-accent); }
@media (max-width: 700px) { #ll-navbar nav { gap: 0 0.75rem; font-size: 0.9rem; } }
"""


def navbar_html(current: Page) -> str:
    """The navbar's HTML on the page ``current``: a link to each page, the current one marked, and the switch
    to the other language."""
    current_mark = ' aria-current="page"'
    links = "".join(
        f'<a href="{page.link}"{current_mark if page == current else ""}>{say(page.name_key)}</a>'
        for page in PAGES
    )
    switch = (  # to the other language: the page reloads in it (lawluo/ui/i18n.py's LOCALE_HEAD remembers it)
        '<a class="ll-switch ll-lang-zh" href="?lang=en" lang="en" hreflang="en">English</a>'
        '<a class="ll-switch ll-lang-en" href="?lang=zh" lang="zh-CN" hreflang="zh-CN">中文</a>'
    )
    return f"<nav>{links}{switch}</nav>"


def navbar(current: Page) -> gr.HTML:
    """The navbar of the page being built (Gradio's own, which would list the routes by their untranslated
    names, is hidden)."""
    gr.Navbar(visible=False)
    return gr.HTML(navbar_html(current), elem_id="ll-navbar", padding=False)


__all__ = ["ADMIN", "ANNOTATE", "HOME", "NAV_CSS", "PAGES", "PAGE_PATHS", "Page", "navbar", "navbar_html"]
