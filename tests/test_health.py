"""``GET /healthz`` (:mod:`lawluo.ui.health`): what the app can serve, as JSON, outside Gradio's queue and
login, naming no URL, key or path; 503 when the statute database or the annotation store is unusable.
The store's write probe on a full disk and the models' pings (``?models=1``): ``test_health_probes.py``."""

from __future__ import annotations

import hashlib
import json

import httpx
import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

from lawluo.config import ROLES, Settings, load_settings
from lawluo.ui.health import HEALTH_PATH, HealthProbe, git_commit, health_route

from .fakes.live_app import annotation_app

pytestmark = pytest.mark.slow  # 5 s of the suite on 2 cores (4 s or more: left out of the inner loop)

SECRET_KEY = "sk-health-test-secret"
MODEL_URL = "http://gpu-box.internal:8000/v1"


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    """The app behind the annotators' login (users set), its annotation store in a fresh folder."""
    with annotation_app(tmp_path_factory.mktemp("annotation"), "alice:pw1:admin") as running:
        yield running


def test_the_running_app_reports_what_it_serves_without_sign_in(app, settings):
    base = app.url.rstrip("/")
    assert httpx.get(base + "/config", timeout=30).status_code == 401  # the app asks for sign-in …
    response = httpx.get(base + HEALTH_PATH, timeout=30)  # … the health check does not
    assert response.status_code == 200, response.text
    assert response.headers["cache-control"] == "no-store"
    body = response.json()
    assert body["status"] == "ok" and body["problems"] == []
    db = body["statute_db"]
    assert db["available"] and db["articles"] == 65710
    assert db["sha256"] == hashlib.sha256(settings.statutes_path.read_bytes()).hexdigest()
    assert body["annotation_store"] == {"writable": True}
    assert body["models"] == {role: {"configured": False, "backend": "none"} for role in ROLES}
    assert set(body["indexes"]) == {"statutes", "cases", "clarifications", "statute-votes"}
    assert set(body["indexes"].values()) <= {"shipped", "cached", "stale", "missing"}
    assert body["version"] and body["uptime_s"] >= 0
    assert "healthz" not in json.dumps(app.demo.config["dependencies"])  # a route, not a Gradio event


def test_models_are_reported_as_configured_without_their_url_key_or_name(tmp_path):
    settings = load_settings(
        environ={
            "LAWLUO_LAWYER_BACKEND": "openai",
            "LAWLUO_LAWYER_MODEL": "secret-finetune",
            "LAWLUO_LAWYER_BASE_URL": MODEL_URL,
            "OPENAI_API_KEY": SECRET_KEY,
            "LAWLUO_ANNOTATION_DIR": str(tmp_path),
        }
    )
    body = HealthProbe(settings, commit="abc123").report()
    assert body["models"]["lawyer"] == {"configured": True, "backend": "openai"}
    assert body["models"]["judge"] == {"configured": False, "backend": "none"}
    assert body["commit"] == "abc123"
    text = json.dumps(body)
    for secret in (
        SECRET_KEY,
        MODEL_URL,
        "gpu-box",
        "secret-finetune",
        str(tmp_path),
        str(settings.assets_dir),
    ):
        assert secret not in text


def test_a_missing_database_or_annotation_folder_is_degraded_with_503(tmp_path):
    # its own cache folder: the session's may hold an index another test built (order-dependent otherwise)
    settings = Settings(
        assets_dir=tmp_path / "assets",
        annotation_dir=tmp_path / "no-such-folder",
        cache_dir=tmp_path / "cache",
    )
    client = TestClient(Starlette(routes=[health_route(settings)]))
    response = client.get(HEALTH_PATH)
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "degraded" and body["statute_db"] == {"available": False}
    assert body["annotation_store"] == {"writable": False, "reason": "missing"} and len(body["problems"]) == 2
    assert "annotation store not writable (missing) 标注库不可写" in body["problems"]
    assert body["indexes"] == dict.fromkeys(
        ("statutes", "cases", "clarifications", "statute-votes"), "missing"
    )
    (tmp_path / "assets").mkdir()
    (tmp_path / "assets" / "statutes.sqlite").write_bytes(b"not a database")  # hostile file: no stack trace
    (tmp_path / "no-such-folder").mkdir()
    client = TestClient(Starlette(routes=[health_route(settings)]))  # the first probed the folder < 5 s ago
    body = client.get(HEALTH_PATH).json()
    assert body["statute_db"] == {"available": False} and body["problems"] == [
        "statute database unreadable 法规库不可读"
    ]


def test_the_commit_is_read_from_git_files_without_running_git(tmp_path):
    git = tmp_path / ".git"
    (git / "refs" / "heads").mkdir(parents=True)
    (git / "HEAD").write_text("ref: refs/heads/main\n")
    assert git_commit(tmp_path) is None  # the branch has no commit yet
    (git / "packed-refs").write_text("# pack-refs with: peeled\n" + "a" * 40 + " refs/heads/main\n")
    assert git_commit(tmp_path) == "a" * 40
    (git / "refs" / "heads" / "main").write_text("b" * 40 + "\n")
    assert git_commit(tmp_path) == "b" * 40
    assert git_commit(tmp_path / "elsewhere") is None


def test_the_commit_given_to_the_docker_build_wins_over_git(tmp_path, monkeypatch):
    monkeypatch.setenv("GIT_COMMIT", "c" * 40)
    assert HealthProbe(Settings(assets_dir=tmp_path, annotation_dir=tmp_path)).report()["commit"] == "c" * 40
    monkeypatch.setenv("GIT_COMMIT", "<script>/etc/passwd")  # not a commit id: git's or none
    assert HealthProbe(Settings(assets_dir=tmp_path, annotation_dir=tmp_path)).commit in (None, git_commit())


def test_a_database_meta_value_that_is_not_a_hash_is_not_shown(tmp_path):
    import sqlite3

    con = sqlite3.connect(tmp_path / "statutes.sqlite")
    con.executescript("CREATE TABLE meta (key, value); CREATE TABLE articles (id);")
    con.execute("INSERT INTO meta VALUES ('source_sha256', '/home/admin/secret <b>x</b>')")
    con.commit()
    con.close()
    db = HealthProbe(Settings(assets_dir=tmp_path, annotation_dir=tmp_path)).report()["statute_db"]
    assert db["available"] and db["articles"] == 0 and db["source_sha256"] is None


def test_a_shipped_index_of_other_assets_is_stale_until_the_cache_has_one(tmp_path):
    from lawluo.retrieval.bm25 import CACHE_FILE, BM25Index

    def sha(data: bytes) -> str:
        return hashlib.sha256(data).hexdigest()

    (tmp_path / "statutes.sqlite").write_bytes(b"version 2")
    index = BM25Index.from_tokens([["劳动", "合同"]])
    index.save(tmp_path / "bm25" / "statutes.npz", "fp", sources={"statutes.sqlite": sha(b"version 1")})
    index.save(tmp_path / "bm25" / "cases.npz", "fp", sources={"statutes.sqlite": sha(b"version 2")})
    settings = Settings(assets_dir=tmp_path, cache_dir=tmp_path / "cache", annotation_dir=tmp_path)
    probe = HealthProbe(settings)
    assert probe.indexes() == {
        "statutes": "stale",
        "cases": "shipped",
        "clarifications": "missing",
        "statute-votes": "missing",
    }
    index.save(tmp_path / "cache" / "statutes-bm25" / CACHE_FILE, "fp")  # the app's rebuild, cached
    assert probe.indexes()["statutes"] == "cached"
