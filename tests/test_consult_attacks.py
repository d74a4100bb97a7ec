"""Attacks on the consultation tab over HTTP, as an anonymous visitor with ``gradio_client`` would make them.

Each test first does what was done to the app in review: upload a saved consultation whose report
number is a path, present another visitor's session hash, leave and check what stays behind.
"""

from __future__ import annotations

import json
import stat
import threading
import time
from pathlib import Path

import httpx
import pytest

from lawluo.ui import consult_tab as tab

from .fakes.live_app import live_app

pytestmark = pytest.mark.slow  # 17 s of the suite on 2 cores (4 s or more: left out of the inner loop)

QUESTION = "我在公司干了两年一直没签劳动合同，现在老板把我辞退了，我能要求什么赔偿？"


@pytest.fixture(scope="module")
def app():
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GRADIO_HEARTBEAT_INTERVAL", "0.25")  # a departed client is noticed at once
        with live_app(LAWLUO_SESSION_GRACE_S="1") as running:
            yield running


def client_for(app):
    from gradio_client import Client

    return Client(app.url, verbose=False, download_files=False, analytics_enabled=False)


def upload(path: Path):
    from gradio_client import handle_file

    return handle_file(str(path))


def test_a_saved_report_number_that_is_a_path_writes_nothing_outside_the_session(app, tmp_path):
    client = client_for(app)
    client.predict(QUESTION, False, 3, 3, api_name="/ask")
    client.predict(api_name="/end_consultation")
    saved = client.predict(api_name="/consultation")
    target = tmp_path / "victim"
    saved["report"]["number"] = f"../../../../../../../../{target}"
    hostile = tmp_path / "hostile.json"
    hostile.write_text(json.dumps(saved, ensure_ascii=False), encoding="utf-8")

    message = client_for(app).predict(upload(hostile), api_name="/resume_consultation")[-1]
    assert "无法恢复" in message and "report.number" in message

    fresh = client_for(app)  # and the report of any consultation is written under a name of the server's
    fresh.predict(QUESTION, False, 3, 3, api_name="/ask")
    _, md_file, docx_file, *_ = fresh.predict(api_name="/end_consultation")
    assert Path(md_file["value"]["path"]).name == "LawLuo-consultation-report.md"
    assert not list(tmp_path.glob("victim*"))


def test_another_visitors_session_hash_alone_does_not_unlock_their_consultation(app):
    victim = client_for(app)
    victim.predict(QUESTION, True, 2, 2, api_name="/ask")
    assert victim.predict(api_name="/consultation")["turns"][0]["text"] == QUESTION

    thief = client_for(app)  # its own cookie, the victim's session hash
    thief.session_hash = victim.session_hash
    # the queue gate refuses another browser's events and event stream (403) before they reach a handler
    for call in (
        lambda: thief.predict(api_name="/consultation"),
        lambda: thief.predict("把之前的咨询发给我", True, 2, 2, api_name="/ask"),
        lambda: thief.predict("1", "no", api_name="/mark"),
    ):
        with pytest.raises(Exception) as refused:  # noqa: B017 — gradio_client raises what the stream gives
            call()
        assert QUESTION not in str(refused.value)
    stream = httpx.get(
        f"{app.url}gradio_api/queue/data",
        params={"session_hash": victim.session_hash},
        cookies={"lawluo_visitor": "not-the-victims"},
        timeout=5,
    )
    assert stream.status_code == 403 and QUESTION not in stream.text
    mine = victim.predict(api_name="/consultation")
    assert [t["role"] for t in mine["turns"]] == ["client"] and mine["tree"]["nodes"][1]["mark"] == "unknown"


def test_a_visitor_who_leaves_takes_their_consultation_with_them(app):
    holder = app.demo.server_app.state_holder
    client = client_for(app)
    client.predict(QUESTION, True, 2, 2, api_name="/ask")
    saved = client.predict(api_name="/save_consultation")[0]["value"]["path"]
    assert stat.S_IMODE(Path(saved).stat().st_mode) == 0o600  # the copy Gradio serves is private too
    session = client.session_hash
    assert holder.session_data[session].state_data  # the consultation is held while the visitor stays
    client.close()
    for _ in range(80):
        if session not in holder.session_data:
            break
        time.sleep(0.1)
    assert session not in holder.session_data


def test_a_tree_of_hundreds_of_calls_is_reduced_over_http(app):
    before = app.responder.calls.get("clarifier", 0)
    out = client_for(app).predict(QUESTION, True, 5, 6, api_name="/ask")
    assert app.responder.calls["clarifier"] - before <= 13 and "澄清树已缩小" in out[-1]


def test_a_page_that_reconnects_within_the_grace_period_keeps_its_consultation(app):
    import httpx

    holder = app.demo.server_app.state_holder
    client = client_for(app)
    client.predict(QUESTION, True, 2, 2, api_name="/ask")
    session = client.session_hash
    back, stop = threading.Event(), threading.Event()

    def reconnected_page():  # the same page's heartbeat, as after a network blip
        url = f"{app.url.rstrip('/')}/gradio_api/heartbeat/{session}"
        with httpx.stream("GET", url, timeout=30) as response:
            for _ in response.iter_lines():
                back.set()
                if stop.is_set():
                    return

    page = threading.Thread(target=reconnected_page, daemon=True)
    page.start()
    assert back.wait(10)
    client.close()  # the first connection drops: Gradio calls unload
    time.sleep(2.5)  # past the grace period of 1 s
    assert holder.session_data[session].state_data  # still there: the page came back
    stop.set()
    page.join(10)
    for _ in range(80):
        if session not in holder.session_data:
            break
        time.sleep(0.1)
    assert session not in holder.session_data  # gone for good: freed after the grace period


def test_end_during_a_streaming_answer_is_refused_and_the_report_includes_the_answer(app):
    client = client_for(app)
    client.predict(QUESTION, True, 2, 2, api_name="/ask")
    app.server.tokens_per_second = 30  # an answer that takes a few seconds to stream
    try:
        streaming = client.submit(api_name="/answer")
        while not streaming.outputs():
            time.sleep(0.02)
        refused = client.predict(api_name="/end_consultation")
        streaming.result()
    finally:
        app.server.tokens_per_second = None
    assert tab.BUSY_MESSAGE in refused[-1] and refused[1]["value"] is None  # no report file
    during = client.predict(api_name="/consultation")
    assert during["status"] == "answered" and during["report"] is None
    report = client.predict(api_name="/end_consultation")[0]
    final = client.predict(api_name="/consultation")
    assert final["status"] == "closed" and final["turns"][-1]["role"] == "lawyer"
    assert "法律分析" in report
    asked = client.predict("还有一个问题", True, 2, 2, api_name="/ask")
    assert "已结束" in asked[-1]  # a closed consultation is not reopened by anything
