"""LawLuo web app: builds the Gradio Blocks from its tabs; launches only when run as a script.

    python app.py                                   # http://127.0.0.1:7860, no language model
    python app.py --config configs/hosted-openai.yaml   # models per role (or set LAWLUO_CONFIG)
    GRADIO_SERVER_NAME=0.0.0.0 GRADIO_SERVER_PORT=7861 python app.py

The statute database, searchers and checker are loaded once in :func:`build_app` and shared by all
sessions (read-only). When the statute database is missing the app still starts and its tab says how
to build it.
"""

from __future__ import annotations

import argparse
import functools
import logging
import os
import sys
import time

import gradio as gr
from starlette.middleware import Middleware
from starlette.middleware.gzip import GZipMiddleware

from eval_ui.admin_page import build_admin_page
from eval_ui.annotate_tab import LAYOUT_CSS as ANNOTATE_CSS
from eval_ui.annotate_tab import TAB_LABEL as ANNOTATE_TAB_LABEL
from eval_ui.annotate_tab import build_annotate_tab
from eval_ui.auth import UsersError, load_users
from eval_ui.login import SignIn, SignInLimits
from eval_ui.service import AnnotationService
from eval_ui.store import StoreError, start_sync
from lawluo.config import ConfigError, Settings, describe_settings, load_settings
from lawluo.firm import Firm
from lawluo.i18n import EN, LANGUAGES, ZH, Message, message, text
from lawluo.law.checker import CitationChecker
from lawluo.law.database import StatuteDB, StatuteDBError
from lawluo.llm import LanguageModels
from lawluo.retrieval.cases import CaseSearcher
from lawluo.retrieval.statutes import StatuteSearcher
from lawluo.ui.client_address import TrustedProxies, client_address_middleware
from lawluo.ui.consult_tab import LAYOUT_CSS as CONSULT_CSS
from lawluo.ui.consult_tab import TAB_LABEL as CONSULT_TAB_LABEL
from lawluo.ui.consult_tab import build_consult_tab
from lawluo.ui.copy import UICopy, both_markdown
from lawluo.ui.gate import GRADIO_QUEUE_SIZE, GateLimits, queue_gate_middleware
from lawluo.ui.headers import security_headers_middleware
from lawluo.ui.health import health_route
from lawluo.ui.i18n import LANG_CSS, LOCALE_HEAD, LOCALES, Html, say, t, translations
from lawluo.ui.mcp_tools import build_mcp_tools, only_statute_tools
from lawluo.ui.models_panel import build_models_panel
from lawluo.ui.pages import ADMIN, ANNOTATE, HOME, NAV_CSS, PAGE_PATHS, navbar
from lawluo.ui.render import esc, without_paths
from lawluo.ui.statute_tab import build_statute_tab, build_unavailable_tab
from lawluo.ui.theme import PAGE_CSS, build_theme
from lawluo.ui.visitors import VisitorLimits, limit_malloc_arenas, visitor_cookie_middleware

logger = logging.getLogger("lawluo.app")

BUILD_COMMAND = "python -m lawluo build all --data DIR"
DEFAULT_CONCURRENCY = 4
STATE_SESSIONS = 2000
MAX_THREADS = 100
GZIP_MIN_BYTES = 1024  # smaller responses gain nothing from compression
#: The page's CSS (passed to ``launch``): the title shrinks on a phone; the consultation and annotation
#: tabs' layouts.
CSS = (
    "@media (max-width: 700px) { #ll-title h1 { font-size: 1.2rem !important; margin: 0 !important; } }\n"
    + CONSULT_CSS
    + ANNOTATE_CSS
    + PAGE_CSS
    + LANG_CSS
    + NAV_CSS
)


def _detail(text: str) -> Html:
    """An error's own words (the library's, in English or Chinese), escaped, in an element of their language."""
    lang = LOCALES[ZH] if any("\u3400" <= c <= "\u9fff" for c in text) else LOCALES[EN]
    return Html(f'<span lang="{lang}">{esc(text)}</span>')


def _missing_db_message(exc: Exception | str | Message, title: str = "app.db_missing_title") -> str:
    """What a tab shows when its data cannot be loaded: ``title`` (a key), the error, how to build the
    assets — Markdown in both languages (the page shows its own)."""
    if isinstance(getattr(exc, "message", None), Message):  # StatuteDBError: without the file's path
        exc = exc.message
    if isinstance(exc, Message):
        errors = {lang: exc.text(lang) for lang in LANGUAGES}  # fields already safe (or plain words)
    else:  # the full message, path included, is in the server log
        errors = dict.fromkeys(LANGUAGES, _detail(without_paths(str(exc))))
    return both_markdown(
        {
            lang: f"## {text(title, lang)}\n\n{errors[lang]}\n\n{text('app.db_missing_build', lang)}\n\n"
            f'<pre lang="en"><code>{esc(BUILD_COMMAND)}</code></pre>\n\n{text("app.db_missing_sources", lang)}'
            for lang in LANGUAGES
        }
    )


def _load_case_searcher(settings: Settings) -> CaseSearcher | None:
    try:
        return CaseSearcher.from_settings(settings, background=True)
    except (OSError, ValueError) as exc:  # missing or corrupt case bank: the rest of the tab still works
        logger.error("case search disabled: %s", exc)
        return None


def build_app(
    settings: Settings | None = None,
    models: LanguageModels | None = None,
    warm_up: bool = True,
    sign_in: SignIn | None = None,
) -> gr.Blocks:
    """The whole app, its services loaded once and shared (read-only) by every session.

    Creating the language models contacts no server and loads no weights; a role without a model is
    shown as such in the consultation banner and the About tab. Up to ``DEFAULT_CONCURRENCY`` events of
    a kind run at a time, the model-calling events of the consultation tab up to ``FIRM_CONCURRENCY``
    together. How many events wait is the queue gate's to say, per client address and per kind of event
    (model or model-free: ``lawluo/ui/gate.py``); Gradio's own queue size is only a backstop.

    The search indexes are the prebuilt ones of ``assets/bm25/`` when they match the assets
    (:mod:`lawluo.retrieval.shipped`); one that does not is built in a background thread, its searches
    waiting for it. ``warm_up``: search once before returning (jieba's dictionary loaded); with False,
    ``demo.warm_up()`` does it later (:func:`main` calls it once the page is served).
    """
    settings = settings or load_settings()
    models = models or LanguageModels(settings.models)
    checker = None
    copy = UICopy(settings.ui_copy_dir)
    # Gradio's copies of files served for download (reports, saved consultations) go after a session's life.
    ttl = int(settings.session_ttl_s)
    with gr.Blocks(title="LawLuo 律罗", delete_cache=(min(ttl, 600), ttl)) as demo:  # the visitors' page, /
        navbar(HOME)
        gr.Markdown("# " + t("app.title"), elem_id="ll-title")
        try:
            db = StatuteDB(settings.statutes_path)
            searcher = StatuteSearcher.from_settings(settings, db, background=True)
        except StatuteDBError as exc:
            logger.error("%s", exc)
            build_unavailable_tab(_missing_db_message(exc))
        else:
            checker = CitationChecker(db)
            cases = _load_case_searcher(settings)
            demo.warm_up = functools.partial(_warm_up, searcher, cases)
            firm = _load_firm(settings, models, searcher, cases, checker)
            if isinstance(firm, Firm):
                build_consult_tab(firm, models, VisitorLimits.from_settings(settings), demo, copy)
            else:
                with gr.Tab(CONSULT_TAB_LABEL, id="consult"):
                    gr.Markdown(firm)
            build_statute_tab(searcher, cases, checker, copy)
            build_mcp_tools(settings, db, searcher, checker, firm if isinstance(firm, Firm) else None)
        with gr.Tab(t("tab.about"), id="about"):
            about, _ = copy.markdown("about.md")
            if about:
                gr.Markdown(about)
            build_models_panel(models, copy)
    annotation = _load_annotation(settings, checker)
    # the lawyers' page; its item: /annotate?item=<id>
    with demo.route("Annotate", ANNOTATE.url, show_in_navbar=False):
        navbar(ANNOTATE)
        if isinstance(annotation, AnnotationService):
            build_annotate_tab(annotation, demo)
        else:
            with gr.Tab(ANNOTATE_TAB_LABEL, id="annotate"):
                gr.Markdown(annotation)
    with demo.route("Admin", ADMIN.url, show_in_navbar=False):  # the admins' page: adjudication, statistics
        navbar(ADMIN)
        if isinstance(annotation, AnnotationService):
            build_admin_page(annotation, demo, sign_in)
        else:
            gr.Markdown(annotation)
    demo.queue(default_concurrency_limit=DEFAULT_CONCURRENCY, max_size=GRADIO_QUEUE_SIZE)
    if not hasattr(demo, "warm_up"):  # no statute database: nothing to warm up
        demo.warm_up = lambda: None
    if warm_up:
        demo.warm_up()
    return demo


def _load_annotation(settings: Settings, checker: CitationChecker | None) -> AnnotationService | str:
    """The annotation service (store opened, demo items seeded, users registered), or why not."""
    try:
        service = AnnotationService.from_settings(settings, checker)
    except (UsersError, StoreError, OSError) as exc:
        logger.error("annotation disabled: %s", exc)
        return both_markdown(
            {
                lang: f"## {text('app.annotation_missing_title', lang)}\n\n{_detail(without_paths(str(exc)))}"
                for lang in LANGUAGES
            }
        )
    if settings.annotation_sync_repo:
        start_sync(settings.annotation_dir, settings.annotation_sync_repo, cited=service.statute_keys)
    return service


def sign_in_for(settings: Settings) -> SignIn | None:
    """The login's guard when ``annotation_users`` is set (else None): one per app, shared by ``launch``'s
    ``auth`` (:func:`launch_auth`) and the admin's tab, which lists and lifts its locks."""
    users = load_users(settings.annotation_users)
    return None if users is None else SignIn(users.check)


def launch_auth(settings: Settings, sign_in: SignIn | None = None):
    """Gradio's ``auth`` for ``launch``: the users file's check when ``annotation_users`` is set, else None.

    With it the whole app is behind Gradio's login form (the annotators' deployment); without it the
    app is open and annotation needs Hugging Face sign-in on a Space. The check is ``SignIn.check``
    (eval_ui/login.py): a coroutine Gradio awaits, hashing off the event loop, with failed sign-ins
    limited per (name, client address) with backoff, per address, and slowed per name.
    """
    sign_in = sign_in if sign_in is not None else sign_in_for(settings)
    return None if sign_in is None else sign_in.check


def launch_options(settings: Settings, sign_in: SignIn | None = None) -> dict:
    """What every launch of the app passes to ``launch`` besides the address (``main`` and the tests).

    - the sign-in check (:func:`launch_auth`) and the login page's text;
    - the middleware on every request: gzip for responses of 1 kB or more that the browser accepts it for
      (Gradio compresses none; event streams excepted); the client's address, resolved once from the peer and
      ``X-Forwarded-For`` with the setting ``trusted_proxies`` and read by every limit
      (``lawluo/ui/client_address.py``); the queue gate, which applies the per-address limits before an
      event takes a queue place and binds the event stream to its browser (``lawluo/ui/gate.py``); the
      visitor cookie that binds a consultation to its browser (``lawluo/ui/visitors.py``); and the
      security headers (``lawluo/ui/headers.py``);
    - ``run_history=False``: Gradio would keep every question, answer and report in the browser's
      localStorage and list them on its "Runs" page for the next user of the computer;
    - ``max_file_size``: the largest upload (setting ``max_upload_mb``);
    - ``ssr_mode=False``: under server-side rendering (on by default on Spaces) Node renders the page,
      without those headers;
    - ``state_session_capacity``: at most this many sessions' state in memory (Gradio's default is 10,000);
    - ``max_threads``: worker threads for the handlers: enough for every model-calling event
      (``FIRM_CONCURRENCY``, each may wait on a model) and every other event at once, so a model-free
      event never waits for a thread that a hung model holds;
    - ``css``: the page's :data:`CSS` (Gradio 6 takes it in ``launch``), and ``theme``: colours that meet
      WCAG 2.1 AA (``lawluo/ui/theme.py``);
    - ``i18n``: the catalogue of the pages' texts in Chinese and English (``lawluo/ui/i18n.py``; the
      language script goes first in each page's ``<head>`` with the security headers).
    - ``routes``: ``GET /healthz`` (``lawluo/ui/health.py``), answered outside Gradio's queue.
    - ``mcp_server``: the setting's (off by default); on, ``/gradio_api/mcp/`` serves the statute tools of
      ``lawluo/ui/mcp_tools.py`` alone (the ``lifespan``; docs/mcp.md).
    """
    try:
        trusted = TrustedProxies.parse(settings.trusted_proxies)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    return {
        "auth": launch_auth(settings, sign_in),
        # Gradio's login page is not the app's page: its own CSS, not the app's, hence LANG_CSS with the text
        "auth_message": f"<style>{LANG_CSS}</style>"
        + say("app.sign_in")
        + " "
        + say(SignInLimits().notice_message()),
        "app_kwargs": {
            "middleware": [
                # Gradio compresses nothing it sends: the page (~460 kB of HTML and config) shrinks to a
                # fifth; event streams are left as they are (Starlette excludes text/event-stream)
                Middleware(GZipMiddleware, minimum_size=GZIP_MIN_BYTES),
                # refusals carry them too; the pages' language settled before Gradio's bundle runs
                security_headers_middleware(pages=PAGE_PATHS, head=LOCALE_HEAD),
                client_address_middleware(trusted),
                queue_gate_middleware(GateLimits.from_settings(settings), trusted),
                visitor_cookie_middleware(),
            ],
            "routes": [health_route(settings)],  # GET /healthz, beside Gradio's routes (lawluo/ui/health.py)
            "lifespan": only_statute_tools,  # the MCP server offers lawluo/ui/mcp_tools.py's tools alone
        },
        "ssr_mode": False,
        "run_history": False,
        "mcp_server": settings.mcp_server,  # off: not even $GRADIO_MCP_SERVER turns it on
        "max_file_size": settings.max_upload_mb * 1024 * 1024,
        "state_session_capacity": STATE_SESSIONS,
        "max_threads": MAX_THREADS,
        "css": CSS,
        "theme": build_theme(),
        "i18n": translations(),
    }


def _warm_up(searcher: StatuteSearcher, cases: CaseSearcher | None) -> None:
    """Search once so the first visitor does not wait for jieba to load its dictionary (and, when an index
    is being built in the background, log when search is ready)."""
    start = time.perf_counter()
    try:
        searcher.search("劳动合同", 1)
        if cases is not None:
            cases.search("劳动合同", 1)
    except RuntimeError as exc:  # a background index build failed: each search says so
        logger.error("search is not available: %s", exc)
        return
    logger.info("search warmed up in %.2fs", time.perf_counter() - start)


def _load_firm(settings, models, searcher, cases, checker) -> Firm | str:
    """The firm, or (when the case bank or the receptionist cannot be loaded) the message to show instead."""
    if cases is None:
        return _missing_db_message(message("app.case_tree_missing"), "app.consult_missing_title")
    try:
        return Firm.from_settings(
            settings, models=models, statute_searcher=searcher, case_searcher=cases, checker=checker
        )
    except (OSError, ValueError) as exc:
        logger.error("consultation disabled: %s", exc)
        error = Html(_detail(without_paths(str(exc))))
        return _missing_db_message(
            Message("app.receptionist_missing", {"error": error}), "app.consult_missing_title"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Start the LawLuo web app.")
    parser.add_argument("--config", help="settings file (YAML; default $LAWLUO_CONFIG; examples in configs/)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s: %(message)s")
    try:
        settings = load_settings(args.config)
        sign_in = sign_in_for(settings)
        options = launch_options(settings, sign_in)
    except (ConfigError, UsersError) as exc:
        print(f"LawLuo cannot start: {exc}", file=sys.stderr)
        return 2
    logger.info("%s", describe_settings(settings))
    limit_malloc_arenas()  # freed memory of departed visitors can be given back (lawluo/ui/visitors.py)
    # server_port=None lets Gradio read GRADIO_SERVER_PORT (default 7860).
    demo = build_app(settings, warm_up=False, sign_in=sign_in)
    host = os.environ.get("GRADIO_SERVER_NAME", "127.0.0.1")
    demo.launch(server_name=host, prevent_thread_lock=True, **options)
    try:
        demo.warm_up()  # after the page is served: a search meanwhile waits for jieba, ~1 s
    except KeyboardInterrupt:  # stopped (Ctrl-C, docker stop's SIGINT) in its first second: close as below
        demo.close()
        return 0
    demo.block_thread()  # until Ctrl-C or SIGINT, then closes the server
    return 0


if __name__ == "__main__":
    sys.exit(main())
