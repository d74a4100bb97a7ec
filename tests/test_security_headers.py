"""Every response of the app carries the headers that confine the page (:mod:`lawluo.ui.headers`): the
page, its config, the API, a 500; the page's policy allows exactly its own inline scripts. That Gradio
runs under the policy is checked in Chromium by ``test_csp_browser.py``."""

from __future__ import annotations

import httpx
import pytest
from starlette.applications import Starlette
from starlette.responses import HTMLResponse, PlainTextResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from lawluo.ui.headers import (
    DEFAULT_FRAME_ANCESTORS,
    SECURITY_HEADERS,
    SecurityHeadersMiddleware,
    content_security_policy,
    inline_script_hashes,
    security_headers_middleware,
)

from .fakes.live_app import RecordingDemo, live_app


@pytest.fixture(scope="module")
def app():
    with live_app(model=False) as running:
        yield running


def directives(csp: str) -> dict[str, list[str]]:
    parsed = {}
    for part in csp.split(";"):
        name, *sources = part.split()
        assert name not in parsed, f"{name} twice"
        parsed[name] = sources
    return parsed


def assert_secure(response: httpx.Response | object, status: int = 200) -> dict[str, list[str]]:
    assert response.status_code == status, response.text[:200]
    csp = directives(response.headers["content-security-policy"])
    assert csp["default-src"] == ["'self'"]
    assert csp["img-src"] == csp["media-src"] == ["'self'", "data:", "blob:"]
    assert csp["connect-src"] == csp["font-src"] == ["'self'"]
    assert csp["object-src"] == ["'none'"]
    assert csp["base-uri"] == csp["form-action"] == ["'self'"]
    assert csp["frame-ancestors"] == ["'self'", "https://huggingface.co", "https://*.hf.space"]
    script = csp["script-src"]
    assert script[:2] == ["'self'", "'unsafe-eval'"] and "'unsafe-inline'" not in script
    assert all(s.startswith("'sha256-") for s in script[2:])
    assert "x-frame-options" not in response.headers  # a Space's iframe is another origin: frame-ancestors
    assert response.headers["referrer-policy"] == "no-referrer"
    assert response.headers["x-content-type-options"] == "nosniff"
    return csp


@pytest.mark.parametrize("path", ["/", "/config", "/gradio_api/info"])
def test_the_page_its_config_and_the_api_description_carry_the_headers(app, path):
    assert_secure(httpx.get(app.url.rstrip("/") + path, timeout=30))


def test_the_page_allows_exactly_its_own_inline_scripts(app):
    page = httpx.get(app.url, timeout=30)
    hashes = inline_script_hashes(page.content)
    assert len(hashes) >= 2  # window.gradio_config, the API info, the iframe-resizer loader, …
    assert assert_secure(page)["script-src"][2:] == [f"'sha256-{h}'" for h in hashes]
    other = httpx.get(app.url.rstrip("/") + "/config", timeout=30)  # JSON, and any HTML but the page
    assert assert_secure(other)["script-src"] == ["'self'", "'unsafe-eval'"]


def test_a_missing_page_carries_the_headers(app):
    assert_secure(httpx.get(app.url.rstrip("/") + "/no-such-page", timeout=30), status=404)


def test_an_api_call_and_its_result_stream_carry_the_headers(app):
    base = app.url.rstrip("/") + "/gradio_api/call/search_statutes"
    call = httpx.post(base, json={"data": ["试用期 解除劳动合同", 2]}, timeout=30)
    assert_secure(call)
    result = httpx.get(f"{base}/{call.json()['event_id']}", timeout=30)
    assert_secure(result)
    assert result.text.startswith("event: complete")


def test_python_app_py_launches_with_the_headers_and_without_server_side_rendering(monkeypatch):
    """``main`` must pass the middleware itself: Gradio has no per-Blocks hook for it."""
    import app as app_module

    demo = RecordingDemo()
    monkeypatch.setattr(app_module, "build_app", lambda settings, **kwargs: demo)
    monkeypatch.setattr(app_module.logging, "basicConfig", lambda **kwargs: None)
    assert app_module.main([]) == 0
    assert demo.calls == ["launch", "warm_up", "block_thread"]  # the page is served before search warms up
    launched = demo.launched
    assert SecurityHeadersMiddleware in [m.cls for m in launched["app_kwargs"]["middleware"]]
    assert launched["ssr_mode"] is False  # under SSR a Node server renders the page, without these headers


def test_a_response_that_sets_a_header_itself_keeps_its_own():
    def own(request):
        return PlainTextResponse("ok", headers={"Referrer-Policy": "origin"})

    app = Starlette(routes=[Route("/", own)], middleware=[security_headers_middleware()])
    response = TestClient(app).get("/")
    assert response.headers["referrer-policy"] == "origin"
    assert response.headers["content-security-policy"] == SECURITY_HEADERS["Content-Security-Policy"]
    assert len(response.headers.get_list("referrer-policy")) == 1


async def boom(request=None):
    raise RuntimeError("a bug in a route")


def starlette_app(middleware):
    return Starlette(routes=[Route("/boom", boom)], middleware=middleware)


def fastapi_app(middleware):
    """Gradio's ``App`` is a FastAPI app, given its middleware the same way (``app_kwargs``)."""
    from fastapi import FastAPI

    app = FastAPI(middleware=middleware)
    app.get("/boom")(boom)
    return app


@pytest.mark.parametrize("make", [starlette_app, fastapi_app])
def test_a_route_that_raises_gets_a_500_with_the_headers(make):
    """Starlette's ServerErrorMiddleware wraps every user middleware and sends its 500 past them; the
    middleware answers the 500 itself, and the exception still reaches the server (and its log)."""
    app = make([security_headers_middleware()])
    response = TestClient(app, raise_server_exceptions=False).get("/boom")
    assert_secure(response, status=500)
    assert response.text == "Internal Server Error" and "a bug" not in response.text
    with pytest.raises(RuntimeError, match="a bug in a route"):
        TestClient(app).get("/boom")
    bare = TestClient(make([]), raise_server_exceptions=False).get(
        "/boom"
    )  # what ServerErrorMiddleware sends
    assert bare.status_code == 500 and "content-security-policy" not in bare.headers


def test_a_page_that_raises_before_its_body_is_complete_gets_a_500_with_the_headers():
    async def half_page(scope, receive, send):
        await send(
            {"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/html")]}
        )
        await send({"type": "http.response.body", "body": b"<script>a()</script>", "more_body": True})
        raise RuntimeError("the template broke")

    app = Starlette(routes=[Route("/", half_page)], middleware=[security_headers_middleware()])
    response = TestClient(app, raise_server_exceptions=False).get("/")
    assert_secure(response, status=500)
    assert "a()" not in response.text


def test_only_the_page_gets_its_inline_scripts_hashed():
    html = '<html><head><script>\r\nwindow.x = 1;\r\n</script><SCRIPT src="/a.js"></SCRIPT>'
    html += "<script type=module>import('./b.js')</script></head></html>"

    def page(request):
        return HTMLResponse(html)

    app = Starlette(
        routes=[Route("/", page), Route("/gradio_api/file=upload.html", page)],
        middleware=[security_headers_middleware()],
    )
    client = TestClient(app)
    script = assert_secure(client.get("/"))["script-src"]
    # the browser hashes the text with its line breaks normalised, as in the Chromium test
    assert script[2:] == [
        "'sha256-XbrNjgMfhK3sqAYNL1Ag3jZvINazTygCyqNe7fLLnDY='",
        "'sha256-16ehzYrou9HQwB0g1dJhcDlEEJx41Twac1dVPpmv5oY='",
    ]
    assert assert_secure(client.get("/gradio_api/file=upload.html"))["script-src"] == [
        "'self'",
        "'unsafe-eval'",
    ]
    assert directives(client.head("/").headers["content-security-policy"])["script-src"] == [
        "'self'",
        "'unsafe-eval'",
    ]


def test_the_frame_ancestors_are_a_parameter_and_checked_at_launch():
    assert DEFAULT_FRAME_ANCESTORS == ("'self'", "https://huggingface.co", "https://*.hf.space")
    app = Starlette(routes=[Route("/", boom)], middleware=[security_headers_middleware(["'none'"])])
    response = TestClient(app, raise_server_exceptions=False).get("/")
    assert directives(response.headers["content-security-policy"])["frame-ancestors"] == ["'none'"]
    assert SECURITY_HEADERS["Content-Security-Policy"] == content_security_policy()
    for bad in (["https://a.example; script-src *"], ["https://a.example, *"], [], ["*"]):
        with pytest.raises(ValueError, match="frame_ancestors"):
            security_headers_middleware(bad)
