"""Smoke test: build the app once, launch it on loopback, and call its API with gradio_client."""

from __future__ import annotations

import json

import pytest

from .fakes.live_app import RecordingDemo, free_port

pytestmark = pytest.mark.slow  # 5 s of the suite on 2 cores (4 s or more: left out of the inner loop)

CIVIL_CODE_1079 = (
    "根据《中华人民共和国民法典》第一千零七十九条规定：“夫妻一方要求离婚的，可以由有关组织进行调解或者直接向"
    "人民法院提起离婚诉讼。人民法院审理离婚案件，应当进行调解；如果感情确已破裂，调解无效的，应当准予离婚。”"
    "另依据《合同法》第一百零七条：“当事人一方不履行合同义务或者履行合同义务不符合约定的，应当承担继续履行、"
    "采取补救措施或者赔偿损失等违约责任。”"
)


@pytest.fixture(scope="module")
def client(settings):
    from gradio_client import Client

    from app import build_app

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GRADIO_ANALYTICS_ENABLED", "False")
        demo = build_app(settings)
        _, url, _ = demo.launch(
            server_name="127.0.0.1", server_port=free_port(), prevent_thread_lock=True, quiet=True
        )
        try:
            c = Client(url, verbose=False, download_files=False, analytics_enabled=False)
            yield c
            c.close()
        finally:
            demo.close()


def test_app_api_end_to_end(client):
    api = client.view_api(print_info=False, return_format="dict")["named_endpoints"]
    assert {"/search_statutes", "/search_cases", "/check_citations", "/check_citations_json"} <= set(api)

    statutes = client.predict("试用期 解除劳动合同", 3, api_name="/search_statutes")
    assert "劳动合同法" in statutes and statutes.count('class="ll-card"') == 3

    cases = client.predict("醉酒驾驶机动车", 2, api_name="/search_cases")
    assert cases.count('class="ll-card"') == 2

    summary, table = client.predict(CIVIL_CODE_1079, api_name="/check_citations")
    assert "NHSR 1/2 = 0.50" in summary
    assert "verified" in table and "repealed" in table

    report = client.predict(CIVIL_CODE_1079, api_name="/check_citations_json")
    report = json.loads(report) if isinstance(report, str) else report
    assert [c["verdict"] for c in report["citations"]] == ["verified", "repealed"]

    empty = client.predict("", 5, api_name="/search_statutes")
    assert "empty query" in empty


def test_app_without_statute_database_explains_how_to_build(tmp_path):
    from app import BUILD_COMMAND, build_app
    from lawluo.config import Settings

    demo = build_app(Settings(assets_dir=tmp_path, annotation_dir=tmp_path / "annotation"))
    texts = [c.get("props", {}).get("value") for c in demo.config["components"]]
    assert any(isinstance(t, str) and BUILD_COMMAND in t for t in texts)
    assert not any(d.get("api_name") == "check_citations" for d in demo.config["dependencies"])


def test_a_stop_during_the_warm_up_closes_the_app_and_exits_0(monkeypatch):
    """``docker stop`` sends SIGINT (the image's STOPSIGNAL); one that lands in the first second, while
    the search warms up, closes the server and exits 0 like one later on (not a traceback and 130)."""
    import app

    demo = RecordingDemo(warm_up_error=KeyboardInterrupt())
    monkeypatch.setattr(app, "build_app", lambda settings, warm_up, **kwargs: demo)
    monkeypatch.setattr(app, "limit_malloc_arenas", lambda: None)
    monkeypatch.setattr(app.logging, "basicConfig", lambda **kwargs: None)
    assert app.main([]) == 0
    assert demo.calls == ["launch", "warm_up", "close"]  # closed, and never blocked waiting
