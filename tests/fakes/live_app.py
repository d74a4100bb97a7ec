"""The whole app served on loopback, its models on the fake OpenAI server: for browser tests,
``gradio_client`` tests and the app benchmarks.

    with live_app(latency=0.2) as app:      # every role on the fake server, FirmResponder answering
        page.goto(app.url)
    with live_app(model=False) as app:      # no language model configured
        ...
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

from .firm_models import FirmResponder
from .openai_server import FakeOpenAIServer

#: Debian's Chromium and the flags it runs headless with (never `playwright install`).
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


#: Gradio's login form's button, in any language (Gradio translates its own "Login").
LOGIN_BUTTON = "form button[type=submit], button:has-text('Login'), button:has-text('登录')"
#: The browser's language in the tests unless one names another: the app's default, Chinese.
LOCALE = "zh-CN"


class LocaleBrowser:
    """A Playwright browser whose pages and contexts are in :data:`LOCALE` unless given a ``locale``
    (Playwright's own default is ``en-US``, which the app would show in English)."""

    def __init__(self, browser, locale: str = LOCALE) -> None:
        self._browser, self._locale = browser, locale

    def new_context(self, **kwargs):
        return self._browser.new_context(**{"locale": self._locale, **kwargs})

    def new_page(self, **kwargs):
        return self._browser.new_page(**{"locale": self._locale, **kwargs})

    def __getattr__(self, name):
        return getattr(self._browser, name)


#: Every test client comes from 127.0.0.1, so the per-address limits of a public deployment (issue 38) would
#: count a whole test module as one visitor: live apps lift them unless a test sets one (the tests of the
#: limits themselves: tests/test_queue_gate.py, tests/test_visitor_budgets.py, tests/test_gate_browser.py).
ONE_ADDRESS_LIMITS = {
    "LAWLUO_VISITOR_CALLS_PER_MINUTE": "0",
    "LAWLUO_VISITOR_CALLS_PER_HOUR": "0",
    "LAWLUO_REQUESTS_PER_MINUTE": "100000",
    "LAWLUO_SESSIONS_PER_HOUR": "100000",
    "LAWLUO_QUEUE_MODEL_PER_ADDRESS": "1000",
    "LAWLUO_QUEUE_FREE_PER_ADDRESS": "1000",
    "LAWLUO_RESUMES_PER_HOUR": "100000",
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class LiveApp:
    url: str
    server: FakeOpenAIServer | None
    responder: FirmResponder | None
    demo: object


def model_environ(server: FakeOpenAIServer) -> dict[str, str]:
    """Settings variables that put every role on ``server`` (the boss as an LLM judge)."""
    return {
        "LAWLUO_DEFAULT_BACKEND": "openai",
        "LAWLUO_DEFAULT_MODEL": "fake-model",
        "LAWLUO_DEFAULT_BASE_URL": server.url,
        "LAWLUO_DEFAULT_MAX_RETRIES": "0",
        "LAWLUO_DEFAULT_TIMEOUT": "10",
        "OPENAI_API_KEY": "test-key",
    }


@contextmanager
def live_app(
    model: bool = True,
    latency: float = 0.0,
    tokens_per_second: float | None = None,
    responder: FirmResponder | None = None,
    **environ: str,
) -> Iterator[LiveApp]:
    """Launch ``build_app`` on a free loopback port (and the fake server when ``model``); close both after."""
    from app import build_app, launch_options, sign_in_for
    from lawluo.config import load_settings

    with ExitStack() as stack:
        server = None
        env = {k: v for k, v in os.environ.items() if not k.startswith(("LAWLUO_", "OPENAI_"))}
        if model:
            server = stack.enter_context(
                FakeOpenAIServer(latency=latency, tokens_per_second=tokens_per_second)
            )
            responder = responder or FirmResponder()
            server.responder = responder
            env.update(model_environ(server))
        for key in ("LAWLUO_ANNOTATION_DIR", "LAWLUO_CACHE_DIR"):  # set for the session by tests/conftest.py
            if key in os.environ:
                env[key] = os.environ[key]
        env.update(ONE_ADDRESS_LIMITS)
        env.update(environ)
        settings = load_settings(environ=env)
        sign_in = sign_in_for(
            settings
        )  # one guard, shared by the login and the admin's tab, as app.main does
        demo = build_app(settings, sign_in=sign_in)
        url = _launch(demo, launch_options(settings, sign_in))  # as app.main launches it
        stack.callback(demo.close)
        yield LiveApp(url, server, responder if model else None, demo)


#: Starts tried: Gradio's launch probes the server it has just started and, when that probe times out on a
#: loaded machine, raises "When localhost is not accessible, a shareable link must be created".
LAUNCH_TRIES = 3


def _launch(demo, options: dict) -> str:
    """Launch ``demo`` on a free loopback port and return its URL, starting again (another port) when Gradio's
    start-up probe of its own server timed out."""
    for attempt in range(1, LAUNCH_TRIES + 1):
        try:
            _, url, _ = demo.launch(
                server_name="127.0.0.1",
                server_port=free_port(),
                prevent_thread_lock=True,
                quiet=True,
                **options,
            )
            return url
        except ValueError as exc:
            if "localhost is not accessible" not in str(exc) or attempt == LAUNCH_TRIES:
                raise
            demo.close()
    raise AssertionError("unreachable")


def require_chromium() -> None:
    """Skip the calling test module when Debian's Chromium is missing, or fail under REQUIRE_BROWSER_TESTS=1."""
    import pytest

    if not Path(CHROMIUM).exists():
        reason = f"{CHROMIUM} not found (apt-get install -y chromium)"
        if os.environ.get("REQUIRE_BROWSER_TESTS") == "1":
            raise RuntimeError(f"REQUIRE_BROWSER_TESTS=1 but {reason}")
        pytest.skip(reason, allow_module_level=True)


@contextmanager
def annotation_app(folder: str | os.PathLike, users: str) -> Iterator[LiveApp]:
    """The app with annotators ``users`` (``name:password[:role],…``) and its store in ``folder``;
    ``app.store`` opens the same store for the test to check."""
    from eval_ui.service import STORE_FILE
    from eval_ui.store import AnnotationStore

    # a fixed seed: the browser suites walk the items in one known order (a deployment's store draws from a
    # random secret of its own; tests/test_annotation_invites.py checks that)
    with live_app(
        model=False,
        LAWLUO_ANNOTATION_USERS=users,
        LAWLUO_ANNOTATION_DIR=str(folder),
        LAWLUO_ANNOTATION_SEED="0",
    ) as running:
        running.store = AnnotationStore(Path(folder) / STORE_FILE)
        try:
            yield running
        finally:
            running.store.close()


class RecordingDemo:
    """Stands in for the ``gr.Blocks`` that ``app.main`` launches (``build_app`` patched to return it): it
    records the calls in order and the ``launch`` arguments; ``warm_up`` raises ``warm_up_error`` if given."""

    def __init__(self, warm_up_error: BaseException | None = None) -> None:
        self.calls: list[str] = []
        self.launched: dict = {}
        self._warm_up_error = warm_up_error

    def launch(self, **kwargs) -> None:
        self.calls.append("launch")
        self.launched.update(kwargs)

    def warm_up(self) -> None:
        self.calls.append("warm_up")
        if self._warm_up_error is not None:
            raise self._warm_up_error

    def close(self) -> None:
        self.calls.append("close")

    def block_thread(self) -> None:
        self.calls.append("block_thread")
