"""Shared fixtures: the shipped statute database and search indexes, loaded once per test session."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "data"
#: Set for the whole test session below; a test that clears LAWLUO_* from the environment keeps these.
SESSION_KEYS = ("LAWLUO_ANNOTATION_DIR", "LAWLUO_CACHE_DIR")
TEST_INDEX = Path(tempfile.gettempdir()) / "lawluo-test-index"  # for a test that unsets LAWLUO_CACHE_DIR


def pytest_configure(config):
    # Hermetic: no setting or key of the developer's shell reaches a test (a LAWLUO_LAWYER_BACKEND or
    # an OPENAI_API_KEY there would change what the tests check).
    for key in [k for k in os.environ if k.startswith(("LAWLUO_", "OPENAI_"))]:
        del os.environ[key]
    # The app opens an annotation store on start: never the repository's data/annotation in tests.
    os.environ["LAWLUO_ANNOTATION_DIR"] = tempfile.mkdtemp(prefix="lawluo-test-annotation-")
    # Search indexes are built into a temporary folder, never the checkout's assets/index: for settings
    # loaded from the environment and for settings a test builds itself without a cache_dir.
    os.environ["LAWLUO_CACHE_DIR"] = tempfile.mkdtemp(prefix="lawluo-test-index-")
    from lawluo.config import Settings

    post_init = Settings.__post_init__

    def test_cache_dir(self):
        if self.cache_dir is None:
            object.__setattr__(self, "cache_dir", Path(os.environ.get("LAWLUO_CACHE_DIR") or TEST_INDEX))
        post_init(self)

    Settings.__post_init__ = test_cache_dir


def _index_files() -> dict[str, float]:
    folder = ROOT / "assets" / "index"
    return {str(p): p.stat().st_mtime for p in folder.rglob("*")} if folder.exists() else {}


_INDEX_BEFORE = _index_files()


def pytest_sessionfinish(session, exitstatus):
    """Fail the run when a test wrote the checkout's search indexes (a test that is not hermetic)."""
    if _index_files() != _INDEX_BEFORE:
        session.config.get_terminal_writer().line(
            "a test wrote the checkout's assets/index: build indexes in LAWLUO_CACHE_DIR (tests/conftest.py)",
            red=True,
        )
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_unconfigure(config):
    for key in ("LAWLUO_ANNOTATION_DIR", "LAWLUO_CACHE_DIR"):
        folder = os.environ.pop(key, "")
        if folder.startswith(tempfile.gettempdir()):
            shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def settings():
    from lawluo.config import load_settings

    return load_settings()


@pytest.fixture(scope="session")
def db(settings):
    from lawluo.law.database import StatuteDB

    return StatuteDB(settings.statutes_path)


@pytest.fixture(scope="session")
def checker(db):
    from lawluo.law.checker import CitationChecker

    return CitationChecker(db)


@pytest.fixture(scope="session")
def statute_searcher(settings, db):
    from lawluo.retrieval.statutes import StatuteSearcher

    return StatuteSearcher.from_settings(settings, db)


@pytest.fixture(scope="session")
def case_searcher(settings):
    from lawluo.retrieval.cases import CaseSearcher

    return CaseSearcher.from_settings(settings)


@pytest.fixture(scope="session")
def receptionist(settings):
    from lawluo.agents.receptionist import Receptionist

    return Receptionist.load(settings)


@pytest.fixture(scope="session")
def material(settings):
    """The shipped clarification material (what the tree is built from without a model)."""
    from lawluo.tolc.material import FILENAME, ClarificationMaterial

    found = ClarificationMaterial.from_settings(settings)
    assert found is not None, (
        f"{settings.assets_dir / FILENAME} is missing: python -m lawluo build clarifications"
    )
    return found


@pytest.fixture(scope="session")
def clarifying_firm(case_searcher, receptionist, material):
    """A firm without models that can route and clarify (no statute search: nothing here answers)."""
    from lawluo.config import load_settings
    from lawluo.firm import Firm
    from lawluo.llm import LanguageModels

    settings = load_settings(environ={})
    return Firm.from_settings(
        settings,
        models=LanguageModels(settings.models),
        material=material,
        case_searcher=case_searcher,
        receptionist=receptionist,
        statute_searcher=None,
        checker=None,
    )


@pytest.fixture(scope="session")
def firm_services(statute_searcher, case_searcher, checker, receptionist):
    """What ``Firm.from_settings`` would load, already loaded: pass as ``**firm_services``."""
    return {
        "statute_searcher": statute_searcher,
        "case_searcher": case_searcher,
        "checker": checker,
        "receptionist": receptionist,
    }


@pytest.fixture(scope="session")
def chromium():
    """Debian's Chromium, headless, driven by Playwright, one for the session (tests take ``browser``)."""
    from playwright.sync_api import sync_playwright

    from .fakes.live_app import CHROMIUM, CHROMIUM_ARGS, LocaleBrowser

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield LocaleBrowser(b)  # pages in Chinese, the app's default, unless a test names a locale
        b.close()


@pytest.fixture
def browser(request, chromium):
    """The session's Chromium, for a test marked ``browser`` (browser tests call ``require_chromium``
    first); its pages are in Chinese unless a test asks ``new_page(locale="en-US")``. A test that drives
    Chromium without the mark fails here, so ``pytest -m "not browser"`` never starts a browser."""
    if request.node.get_closest_marker("browser") is None:
        pytest.fail(f"{request.node.nodeid} drives Chromium: mark it @pytest.mark.browser", pytrace=False)
    return chromium


@pytest.fixture
def firm_server():
    """The fake OpenAI-compatible server answering every role of the firm (``FirmResponder``)."""
    from .fakes.firm_models import FirmResponder
    from .fakes.openai_server import FakeOpenAIServer

    with FakeOpenAIServer() as fake:
        fake.responder = FirmResponder()
        yield fake


@pytest.fixture
def store_dir(tmp_path, monkeypatch):
    """An empty annotation store folder for ``python -m eval_ui`` (no config file, not on a Space)."""
    monkeypatch.delenv("LAWLUO_CONFIG", raising=False)
    monkeypatch.delenv("SPACE_ID", raising=False)
    monkeypatch.setenv("LAWLUO_ANNOTATION_DIR", str(tmp_path / "annotation"))
    return tmp_path / "annotation"
