"""HTTP response headers that confine the page: what it may run, fetch, load and who may frame it.

Text from clients and models is escaped before it is rendered (:func:`~lawluo.agents.secretary.md_text`,
:func:`~lawluo.ui.render.esc`); these headers are the second line of defence, should markup ever get
through. Every HTTP response carries them, a 500 included (:class:`SecurityHeadersMiddleware`):

- ``Content-Security-Policy`` (:func:`content_security_policy`), each source found necessary by loading
  the app in Chromium under a report-only ``default-src 'none'`` and asking, marking and switching tabs
  (``tests/test_csp_browser.py`` then runs the whole page under the policy and sees no violation):

  ============================  ===================================================================
  ``default-src 'self'``        anything not named below: the app's own origin only (manifest, frames)
  ``script-src 'self'``         Gradio's bundles (``/assets/…``, ``/static/js/…``)
  ``'unsafe-eval'``             every ``gr.HTML`` compiles its template and runs ``js_on_load`` with
                                ``Function(…)`` (Gradio's ``HTML`` component); without it the consultation
                                tree, the message box and the annotation keys do not render
  ``'sha256-…'``                the page's own inline scripts (``window.gradio_config``, the API info, the
                                iframe-resizer loader …), hashed per response: no other inline script or
                                event-handler attribute (``onerror=…``) runs — no ``'unsafe-inline'``
  ``style-src 'self'``          Gradio's stylesheets, and ``'unsafe-inline'``: Svelte and ``gr.HTML``'s
  ``'unsafe-inline'``           ``css_template`` insert ``<style>`` elements (styles run no script)
  ``img-src``/``media-src``     ``'self' data: blob:``: Gradio's icons, uploads and inline SVG; never a
                                host a model or a client names
  ``font-src 'self'``           the default theme's ``LocalFont`` files (``/static/fonts/…``); a
                                ``GoogleFont`` theme would need ``fonts.googleapis.com`` (style) and
                                ``fonts.gstatic.com`` (font)
  ``connect-src 'self'``        Gradio's API calls and its server-sent event streams (and a same-host
                                WebSocket: CSP 3's ``'self'`` matches ``ws:``/``wss:`` of the origin)
  ``object-src 'none'``         no plugins
  ``base-uri 'self'``           the page's ``<base href="./">``; an injected ``<base>`` cannot move
                                Gradio's relative URLs to another host
  ``form-action 'self'``        Gradio's login form posts to ``/login``
  ``frame-ancestors``           who may show the app in a frame: itself and a Hugging Face Space's
                                page (``https://huggingface.co`` framing ``https://<space>.hf.space``);
                                :data:`DEFAULT_FRAME_ANCESTORS`, a parameter of the middleware
  ============================  ===================================================================

- ``Referrer-Policy: no-referrer`` — a link a visitor follows does not tell the other site the app's address.
- ``X-Content-Type-Options: nosniff`` — a file served by the app is never run as a type it does not declare.

No ``X-Frame-Options``: it knows only ``DENY`` and ``SAMEORIGIN`` (``ALLOW-FROM`` was never in Chromium
and Firefox dropped it), and a Space shows the app from ``*.hf.space`` inside a page of
``huggingface.co`` — another origin, which either value would refuse. Browsers that know
``frame-ancestors`` ignore ``X-Frame-Options`` when both are sent, so it would only break old ones.

Gradio offers no hook on :class:`gradio.Blocks` for its FastAPI app's middleware (``App.create_app`` takes
them only from ``launch(app_kwargs=…)``), so every launch (``app.main``, the tests' ``live_app``) passes
:func:`security_headers_middleware`::

    demo.launch(app_kwargs={"middleware": [security_headers_middleware()]}, ssr_mode=False)

``ssr_mode=False``: with server-side rendering (on by default on Hugging Face Spaces) a Node server
renders the page, and these headers would reach only the API responses, not the page they protect.

Reference: W3C Content Security Policy Level 3 (§6 directives, §8.3 hash sources, ``frame-ancestors``
§6.4.2 and its precedence over ``X-Frame-Options``); RFC 7034 (``X-Frame-Options``); W3C Referrer
Policy; WHATWG Fetch (``X-Content-Type-Options``).
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Iterable, Sequence

from starlette.middleware import Middleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

#: Who may show the app in a frame: the app itself, and a Hugging Face Space's page
#: (``huggingface.co/spaces/<owner>/<name>`` frames ``https://<owner>-<name>.hf.space``).
DEFAULT_FRAME_ANCESTORS: tuple[str, ...] = ("'self'", "https://huggingface.co", "https://*.hf.space")
#: The paths whose HTML is Gradio's page template (``GET /``; the app passes its routed pages too:
#: ``lawluo/ui/pages.py``): only there are inline scripts hashed and allowed. Any other HTML (an uploaded
#: file served back, an error page) runs no inline script at all.
PAGE_PATHS: tuple[str, ...] = ("/",)
#: A page larger than this is not held back to be hashed: it gets the policy without hashes (its inline
#: scripts are refused, so the failure shows; Gradio's page is about 0.2 MB for this app).
MAX_PAGE_BYTES = 16 * 1024 * 1024
MAX_SCRIPT_HASHES = 32
#: A source expression of ``frame-ancestors``: a keyword or a scheme/host source, no separator in it.
SOURCE = re.compile(r"'self'|'none'|[a-z][a-z0-9+.-]*:(//(\*\.)?[A-Za-z0-9.-]+(:(\d+|\*))?(/[^\s;,']*)?)?")
INLINE_SCRIPT = re.compile(rb"<script\b([^>]*)>(.*?)</script\s*>", re.I | re.S)
HAS_SRC = re.compile(rb"\ssrc\s*=", re.I)
HEAD_TAG = re.compile(rb"<head\b[^>]*>", re.I)


def content_security_policy(
    frame_ancestors: Sequence[str] = DEFAULT_FRAME_ANCESTORS, script_hashes: Iterable[str] = ()
) -> str:
    """The policy (see the module's docstring), allowing the inline scripts whose base64 sha256 digests
    are ``script_hashes``; raises ``ValueError`` for a ``frame_ancestors`` entry that is not one source.

    >>> content_security_policy(["'none'"]).split("; ")[-1]
    "frame-ancestors 'none'"
    """
    ancestors = list(frame_ancestors)
    bad = [a for a in ancestors if not SOURCE.fullmatch(a)]
    if bad or not ancestors:
        raise ValueError(
            f"frame_ancestors must be CSP source expressions, e.g. 'self' or https://*.hf.space: {bad}"
        )
    directives = {
        "default-src": ["'self'"],
        "script-src": ["'self'", "'unsafe-eval'", *(f"'sha256-{h}'" for h in script_hashes)],
        "style-src": ["'self'", "'unsafe-inline'"],
        "img-src": ["'self'", "data:", "blob:"],
        "media-src": ["'self'", "data:", "blob:"],
        "font-src": ["'self'"],
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ancestors,
    }
    return "; ".join(f"{name} {' '.join(sources)}" for name, sources in directives.items())


def inline_script_hashes(html: bytes) -> list[str]:
    """Base64 sha256 digests of ``html``'s inline ``<script>`` elements (those without ``src``), as a
    browser hashes them: the element's text, its line breaks normalised to ``\\n`` (HTML's input stream
    preprocessing), in UTF-8. A script text this scan gets wrong only gets a hash no script has: refused.

    >>> inline_script_hashes(b"<script>a()</script><script src='x.js'></script>")
    ['qVpDBgj7bpq5hMAcGp3AOc79J3Y1Z4HvySTwKrWDoy4=']
    """
    digests = []
    for match in INLINE_SCRIPT.finditer(html):
        if HAS_SRC.search(b" " + match.group(1)):
            continue
        text = match.group(2).replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        digest = base64.b64encode(hashlib.sha256(text).digest()).decode("ascii")
        if digest not in digests:
            digests.append(digest)
    return digests


#: Header name → value, added to every HTTP response (a response that already sets one keeps its own);
#: a page of :data:`PAGE_PATHS` gets a policy with its inline scripts' hashes in place of this one.
SECURITY_HEADERS: dict[str, str] = {
    "Content-Security-Policy": content_security_policy(),
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
}
CSP = b"content-security-policy"
SERVER_ERROR = b"Internal Server Error"


def _is_html(message: Message) -> bool:
    return any(
        name.lower() == b"content-type" and value.lower().startswith(b"text/html")
        for name, value in message.get("headers", [])
    )


def _with_length(message: Message, length: int) -> Message:
    headers = [(n, v) for n, v in message.get("headers", []) if n.lower() != b"content-length"]
    return {**message, "headers": [*headers, (b"content-length", str(length).encode("ascii"))]}


class SecurityHeadersMiddleware:
    """ASGI middleware adding ``headers`` (default :data:`SECURITY_HEADERS`, its policy built for
    ``frame_ancestors``) to every HTTP response.

    - The page (``GET`` of a path in ``pages``, HTML) is held until its body is complete, ``head`` (HTML:
      a script that must run before Gradio's bundle, which adds ``launch(head=…)`` only once it runs) is
      put first in its ``<head>``, and its policy allows exactly its inline scripts
      (:func:`inline_script_hashes`).
    - A route that raises before its response started gets a plain 500 with the headers here, then the
      exception goes on up: Starlette's ``ServerErrorMiddleware`` wraps every user middleware and would
      otherwise send its own 500 through the server's ``send``, past this one; it sees the response
      started, sends nothing more and re-raises for the server to log. (This replaces an app-wide 500
      handler; Gradio 6.31 installs none.)
    """

    def __init__(
        self,
        app: ASGIApp,
        headers: dict[str, str] | None = None,
        *,
        frame_ancestors: Sequence[str] = DEFAULT_FRAME_ANCESTORS,
        pages: Sequence[str] = PAGE_PATHS,
        head: str = "",
    ) -> None:
        self.app = app
        self.head = head.encode("utf-8")
        self.frame_ancestors = tuple(frame_ancestors)
        chosen = dict(SECURITY_HEADERS if headers is None else headers)
        if headers is None:
            chosen["Content-Security-Policy"] = content_security_policy(self.frame_ancestors)
        self.headers = [
            (name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in chosen.items()
        ]
        self.pages = frozenset(pages)
        # hashes only where this middleware writes the policy itself (not a caller's own headers)
        self.hash_pages = headers is None

    def _add(self, message: Message, policy: bytes | None = None) -> Message:
        present = {name.lower() for name, _ in message.get("headers", [])}
        extra = [
            (name, policy if policy is not None and name == CSP else value)
            for name, value in self.headers
            if name not in present
        ]
        return {**message, "headers": [*message.get("headers", []), *extra]}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        page = self.hash_pages and scope.get("method") == "GET" and scope.get("path") in self.pages
        sent = False  # the response's start went out (to ServerErrorMiddleware's send)
        held: Message | None = None  # the page's start, until its body is complete
        body: list[bytes] = []

        async def send_start(message: Message, policy: bytes | None = None) -> None:
            nonlocal sent
            sent = True
            await send(self._add(message, policy))

        async def send_with_headers(message: Message) -> None:
            nonlocal held
            if message["type"] == "http.response.start":
                if page and _is_html(message):
                    held = message
                else:
                    await send_start(message)
                return
            if held is None or message["type"] != "http.response.body":
                await send(message)
                return
            body.append(message.get("body", b""))
            more = message.get("more_body", False)
            size = sum(map(len, body))
            if more and size <= MAX_PAGE_BYTES:
                return
            policy = None
            start, held = held, None
            page_body = b"".join(body)
            if not more:
                if self.head:
                    page_body = HEAD_TAG.sub(lambda m: m.group(0) + self.head, page_body, count=1)
                    start = _with_length(start, len(page_body))
                hashes = inline_script_hashes(page_body)
                if len(hashes) <= MAX_SCRIPT_HASHES:
                    policy = content_security_policy(self.frame_ancestors, hashes).encode("latin-1")
            await send_start(start, policy)
            await send({"type": "http.response.body", "body": page_body, "more_body": more})

        try:
            await self.app(scope, receive, send_with_headers)
        except Exception:
            if not sent:
                await send_start(
                    {
                        "type": "http.response.start",
                        "status": 500,
                        "headers": [
                            (b"content-type", b"text/plain; charset=utf-8"),
                            (b"content-length", str(len(SERVER_ERROR)).encode()),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": SERVER_ERROR})
            raise


def security_headers_middleware(
    frame_ancestors: Sequence[str] = DEFAULT_FRAME_ANCESTORS,
    pages: Sequence[str] = PAGE_PATHS,
    head: str = "",
) -> Middleware:
    """:class:`SecurityHeadersMiddleware` for ``launch(app_kwargs={"middleware": [...]})``; the app may be
    framed by ``frame_ancestors`` (CSP source expressions; ``["'none'"]``: by nobody; a bare ``*``, which
    would let any site frame it, is refused). ``pages``: the paths of the app's pages (``demo.route``'s
    too: each is Gradio's page template, whose inline scripts must be allowed); ``head``: HTML put first in
    each page's ``<head>`` (the app's: :data:`lawluo.ui.i18n.LOCALE_HEAD`)."""
    content_security_policy(frame_ancestors)  # a bad source fails here, at launch, not on a request
    return Middleware(
        SecurityHeadersMiddleware, frame_ancestors=tuple(frame_ancestors), pages=tuple(pages), head=head
    )


__all__ = [
    "DEFAULT_FRAME_ANCESTORS",
    "SECURITY_HEADERS",
    "SecurityHeadersMiddleware",
    "content_security_policy",
    "inline_script_hashes",
    "security_headers_middleware",
]
