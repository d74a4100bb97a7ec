"""HTTP response headers that keep the page from fetching what untrusted text points at.

Text from clients and models is escaped before it is rendered (:func:`~lawluo.agents.secretary.md_text`,
:func:`~lawluo.ui.render.esc`); these headers are the second line of defence, should an image ever get
through:

- ``Content-Security-Policy: img-src 'self' data: blob:; media-src 'self' data: blob:`` — the page loads
  images, audio and video only from the app itself (Gradio's own icons, uploads and inline SVG). Only
  these two directives are set: Gradio's scripts, styles, fonts (e.g. from Google Fonts) and its
  connections to the server are left as they are.
- ``Referrer-Policy: no-referrer`` — a link a visitor follows does not tell the other site the app's address.
- ``X-Content-Type-Options: nosniff`` — a file served by the app is never run as a type it does not declare.

Gradio offers no hook on :class:`gradio.Blocks` for its FastAPI app's middleware (``App.create_app`` takes
them only from ``launch(app_kwargs=…)``), so every launch (``app.main``, the tests' ``live_app``) passes
:func:`security_headers_middleware`::

    demo.launch(app_kwargs={"middleware": [security_headers_middleware()]}, ssr_mode=False)

``ssr_mode=False``: with server-side rendering (on by default on Hugging Face Spaces) a Node server
renders the page, and these headers would reach only the API responses, not the page they protect.

Reference: W3C Content Security Policy Level 3 (``img-src``, ``media-src``); W3C Referrer Policy;
WHATWG Fetch (``X-Content-Type-Options``).
"""

from __future__ import annotations

from starlette.middleware import Middleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

#: Header name → value, added to every HTTP response (a response that already sets one keeps its own).
SECURITY_HEADERS: dict[str, str] = {
    "Content-Security-Policy": "img-src 'self' data: blob:; media-src 'self' data: blob:",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
}


class SecurityHeadersMiddleware:
    """ASGI middleware adding ``headers`` (default :data:`SECURITY_HEADERS`) to every HTTP response."""

    def __init__(self, app: ASGIApp, headers: dict[str, str] | None = None) -> None:
        self.app = app
        self.headers = [
            (name.lower().encode("latin-1"), value.encode("latin-1"))
            for name, value in (SECURITY_HEADERS if headers is None else headers).items()
        ]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                present = {name.lower() for name, _ in message.get("headers", [])}
                extra = [(name, value) for name, value in self.headers if name not in present]
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        await self.app(scope, receive, send_with_headers)


def security_headers_middleware() -> Middleware:
    """:class:`SecurityHeadersMiddleware` for ``launch(app_kwargs={"middleware": [...]})``."""
    return Middleware(SecurityHeadersMiddleware)


__all__ = ["SECURITY_HEADERS", "SecurityHeadersMiddleware", "security_headers_middleware"]
