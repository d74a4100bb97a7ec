"""The attacks that succeeded on the sign-in, replayed at the real app (``build_app`` + ``launch_options``,
as ``app.main`` launches it): anyone could lock everyone out, and behind a proxy the sign-in limit and the
visitor limits disagreed about who the client is."""

from __future__ import annotations

import os

import httpx
import pytest
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from eval_ui.auth import hash_password
from eval_ui.login import SignIn
from lawluo.ui.client_address import request_address
from tests.fakes.live_app import free_port

pytestmark = pytest.mark.slow  # 8 s of the suite on 2 cores (4 s or more: left out of the inner loop)

ANNOTATORS = {f"annotator{i:02d}": f"right-password-{i}" for i in range(16)}


async def whoami(request: Request) -> PlainTextResponse:
    """The address the visitor limits read for this request (``lawluo.ui.visitors.visit_of`` reads it so)."""
    return PlainTextResponse(request_address(request))


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    """The real app with 16 annotators (PBKDF2 at 1,000 iterations, to keep the test quick): its URL and
    the ``SignIn`` behind its login form."""
    from app import build_app, launch_options
    from lawluo.config import load_settings

    users = ",".join(f"{name}:{hash_password(pw, 1000)}" for name, pw in ANNOTATORS.items())
    settings = load_settings(
        environ={
            "LAWLUO_ANNOTATION_USERS": users + ",root:" + hash_password("root-pw", 1000) + ":admin",
            "LAWLUO_ANNOTATION_DIR": str(tmp_path_factory.mktemp("annotation")),
            "LAWLUO_CACHE_DIR": os.environ["LAWLUO_CACHE_DIR"],
        }
    )
    options = launch_options(settings)
    options["app_kwargs"]["routes"] = [*options["app_kwargs"].get("routes", []), Route("/whoami", whoami)]
    demo = build_app(settings)
    _, url, _ = demo.launch(
        server_name="127.0.0.1", server_port=free_port(), prevent_thread_lock=True, quiet=True, **options
    )
    try:
        yield url.rstrip("/"), options["auth"].__self__
    finally:
        demo.close()


@pytest.fixture
def served(app):
    url, sign_in = app
    assert isinstance(sign_in, SignIn)
    sign_in.unlock()  # each test starts with no failures counted
    yield url, sign_in
    sign_in.unlock()


def post_login(url: str, name: str, password: str, forwarded_for: str | None = None, via: str | None = None):
    """``POST /login``; ``forwarded_for``: an ``X-Forwarded-For``; ``via``: the local address to connect
    from (a proxy's), else 127.0.0.1, whose header uvicorn itself believes."""
    headers = {"X-Forwarded-For": forwarded_for} if forwarded_for else {}
    transport = httpx.HTTPTransport(local_address=via) if via else None
    with httpx.Client(transport=transport, timeout=30) as client:
        return client.post(f"{url}/login", data={"username": name, "password": password}, headers=headers)


def test_five_wrong_guesses_for_root_do_not_lock_root_out(served):
    url, _ = served
    for i in range(5):
        assert (
            post_login(url, "root", f"guess {i}", "198.51.100.1").json()["detail"] == "Incorrect credentials."
        )
    assert post_login(url, "root", "root-pw", "198.51.100.1").json()["detail"].startswith("Too many")
    assert post_login(url, "root", "root-pw", "203.0.113.50").status_code == 200


def test_a_few_addresses_spraying_all_annotators_lock_none_of_them_out(served):
    """68 wrong guesses locked all 16 annotators; now 4 addresses × 40 guesses lock only the 4 addresses."""
    url, sign_in = served
    names = list(ANNOTATORS)
    answers = [
        post_login(url, names[n % 16], f"guess {n}", f"198.51.100.{1 + n // 16 % 4}").json()["detail"]
        for n in range(160)
    ]
    assert answers.count("Incorrect credentials.") == 4 * 20  # then each address is locked
    assert all(a.startswith("Too many failed sign-ins") for a in answers if a != "Incorrect credentials.")
    assert {row["kind"] for row in sign_in.locks()} == {"address"} and len(sign_in.locks()) == 4
    for i, (name, password) in enumerate(ANNOTATORS.items()):
        assert post_login(url, name, password, f"203.0.113.{10 + i}").status_code == 200, name


def test_behind_a_proxy_the_sign_in_limit_and_the_visitor_limits_see_the_same_client(served):
    """A proxy at 127.0.0.2 (loopback, so in ``trusted_proxies`` but not in uvicorn's FORWARDED_ALLOW_IPS):
    every client used to share its address for the sign-in limit while the visitor limits read
    X-Forwarded-For. Now an address spraying guesses through it is locked, and only that address."""
    url, sign_in = served
    proxy = "127.0.0.2"
    seen = httpx.Client(transport=httpx.HTTPTransport(local_address=proxy)).get(
        f"{url}/whoami", headers={"X-Forwarded-For": "198.51.100.77"}
    )
    assert seen.text == "198.51.100.77"  # the visitor limits' client
    for i in range(20):
        r = post_login(url, f"annotator{i % 16:02d}", "wrong", "198.51.100.77", via=proxy)
        assert r.json()["detail"] == "Incorrect credentials."
    assert (
        post_login(url, "annotator00", ANNOTATORS["annotator00"], "198.51.100.77", via=proxy)
        .json()["detail"]
        .startswith("Too many")
    )
    assert [row["key"] for row in sign_in.locks()] == ["198.51.100.77"]  # the sign-in limit's client
    assert (
        post_login(url, "annotator00", ANNOTATORS["annotator00"], "203.0.113.9", via=proxy).status_code == 200
    )
