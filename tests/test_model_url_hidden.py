"""A model server's address (e.g. ``http://10.0.0.5:8000/v1``, an internal host) is never shown to a visitor.

A role's model is described to visitors as backend and model only (``describe()`` → ``openai · fake-model``):
in the About tab, the consultation banner, the report, turn notes, the trace and the saved consultation. An
error names "the lawyer role's model server", not its URL; the URL goes to the server log (and to the
operator's CLI and the judge cache's key, through ``log_name()``).
"""

from __future__ import annotations

import json
import logging
import zipfile
from pathlib import Path

import httpx
import pytest

from lawluo.config import load_settings
from lawluo.llm import LanguageModels, LLMConnectionError
from lawluo.llm.openai_backend import OpenAIBackend
from lawluo.llm.options import OpenAIOptions
from lawluo.ui.consult_render import banner_html
from lawluo.ui.models_panel import models_status_html

from .fakes.live_app import free_port, live_app

pytestmark = pytest.mark.slow  # 5 s of the suite on 2 cores (4 s or more: left out of the inner loop)

QUESTION = "我在公司干了两年一直没签劳动合同，现在老板把我辞退了，我能要求什么赔偿？"


@pytest.fixture(scope="module")
def refused() -> str:
    """``host:port`` of a loopback address where nothing listens (every request is refused)."""
    return f"127.0.0.1:{free_port()}"


def environ(server: str, key: str | None = "test-key") -> dict[str, str]:
    env = {
        "LAWLUO_DEFAULT_BACKEND": "openai",
        "LAWLUO_DEFAULT_MODEL": "fake-model",
        "LAWLUO_DEFAULT_BASE_URL": f"http://{server}/v1",
        "LAWLUO_DEFAULT_MAX_RETRIES": "0",
        "LAWLUO_DEFAULT_TIMEOUT": "10",
    }
    return env | ({"OPENAI_API_KEY": key} if key else {})


def test_a_refused_connection_names_the_role_not_the_url_and_logs_the_url(refused, caplog):
    backend = OpenAIBackend(
        OpenAIOptions(model="fake-model", base_url=f"http://{refused}/v1", max_retries=0),
        role="lawyer",
        api_key="k",
    )
    with caplog.at_level(logging.WARNING, logger="lawluo.llm.openai_backend"):
        with pytest.raises(LLMConnectionError) as caught:
            backend.chat([{"role": "user", "content": "你好"}])
    assert "lawyer role's model server" in str(caught.value)
    assert refused not in str(caught.value)
    assert refused in caplog.text  # the operator still learns which server failed
    assert backend.describe() == "openai · fake-model"
    assert refused in backend.log_name()


@pytest.mark.parametrize("key", ["test-key", None], ids=["ready", "key-missing"])
def test_the_models_panel_and_the_banner_show_no_url(refused, key):
    statuses = LanguageModels(load_settings(environ=environ(refused, key)).models).status()
    assert any(s.backend == "openai" for s in statuses)
    shown = models_status_html(statuses) + banner_html(statuses)
    assert "fake-model" in shown
    assert refused not in shown
    assert all(refused not in f"{s.description} {s.reason}" for s in statuses)


@pytest.fixture(scope="module")
def app(refused):
    with live_app(model=False, **environ(refused)) as running:
        yield running


def test_a_consultation_with_an_unreachable_model_shows_its_url_nowhere(app, refused, tmp_path):
    from gradio_client import Client

    config = httpx.get(app.url.rstrip("/") + "/config", timeout=30).text
    assert "fake-model" in config  # the About tab's models panel
    assert refused not in config

    client = Client(app.url, verbose=False, download_files=str(tmp_path), analytics_enabled=False)
    outputs = [
        client.predict(QUESTION, True, 2, 2, api_name="/ask"),
        client.predict(api_name="/answer"),
        client.predict(api_name="/consultation"),
    ]
    report, md_file, docx_file, *view = client.predict(api_name="/end_consultation")  # files: gr.update()s
    outputs += [report, view, client.predict(api_name="/consultation")]
    client.close()

    shown = json.dumps(outputs, ensure_ascii=False, default=str)
    # failures explained to the operator (the trace); a visitor reads plain words (issue 42)
    assert "LLMConnectionError" in shown and "lawyer role's model server" in shown
    assert refused not in shown
    assert refused not in Path(md_file["value"]).read_text(encoding="utf-8")
    with zipfile.ZipFile(docx_file["value"]) as docx:
        assert refused not in docx.read("word/document.xml").decode("utf-8")
