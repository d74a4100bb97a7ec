"""Every response of the app carries the headers that stop the page from fetching foreign images and
from telling other sites its address (:mod:`lawluo.ui.headers`): the page, its config, the API."""

from __future__ import annotations

import httpx
import pytest

from lawluo.ui.headers import SECURITY_HEADERS, SecurityHeadersMiddleware, security_headers_middleware

from .fakes.live_app import RecordingDemo, live_app


@pytest.fixture(scope="module")
def app():
    with live_app(model=False) as running:
        yield running


def assert_secure(response: httpx.Response) -> None:
    assert response.status_code == 200, response.text[:200]
    csp = response.headers["content-security-policy"]
    assert "img-src 'self' data: blob:" in csp
    assert "script-src" not in csp and "default-src" not in csp  # Gradio's scripts, styles, fonts: untouched
    assert response.headers["referrer-policy"] == "no-referrer"
    assert response.headers["x-content-type-options"] == "nosniff"


@pytest.mark.parametrize("path", ["/", "/config", "/gradio_api/info"])
def test_the_page_its_config_and_the_api_description_carry_the_headers(app, path):
    assert_secure(httpx.get(app.url.rstrip("/") + path, timeout=30))


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
    monkeypatch.setattr(app_module, "build_app", lambda settings, warm_up: demo)
    monkeypatch.setattr(app_module.logging, "basicConfig", lambda **kwargs: None)
    assert app_module.main([]) == 0
    assert demo.calls == ["launch", "warm_up", "block_thread"]  # the page is served before search warms up
    launched = demo.launched
    assert SecurityHeadersMiddleware in [m.cls for m in launched["app_kwargs"]["middleware"]]
    assert launched["ssr_mode"] is False  # under SSR a Node server renders the page, without these headers


def test_a_response_that_sets_a_header_itself_keeps_its_own():
    from starlette.applications import Starlette
    from starlette.responses import PlainTextResponse
    from starlette.routing import Route
    from starlette.testclient import TestClient

    def own(request):
        return PlainTextResponse("ok", headers={"Referrer-Policy": "origin"})

    app = Starlette(routes=[Route("/", own)], middleware=[security_headers_middleware()])
    response = TestClient(app).get("/")
    assert response.headers["referrer-policy"] == "origin"
    assert response.headers["content-security-policy"] == SECURITY_HEADERS["Content-Security-Policy"]
    assert len(response.headers.get_list("referrer-policy")) == 1
