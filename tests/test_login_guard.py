"""Gradio's login under a flood of wrong passwords: the limits per name and per client address, the
password check off the event loop, and the app serving everyone else meanwhile."""

from __future__ import annotations

import asyncio
import doctest
import inspect
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import gradio as gr
import httpx
import pytest
from fastapi import HTTPException
from starlette.middleware import Middleware

import eval_ui.auth
from eval_ui import login
from eval_ui.auth import hash_password, parse_users
from eval_ui.login import CLIENT_ADDRESS, ClientAddress, SignIn, SignInLimits
from tests.fakes.live_app import free_port

ALICE, BOB = ("alice", "alice-pw"), ("bob", "bob-pw")
USERS = parse_users("alice:alice-pw,bob:bob-pw")


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class CountingVerify:
    """``Users.check`` that counts its calls, the most at once, and calls made on an event loop's thread."""

    def __init__(self, verify=USERS.check, seconds: float = 0.0) -> None:
        self.verify, self.seconds = verify, seconds
        self.calls = self.on_loop = self.running = self.peak = 0
        self.lock = threading.Lock()

    def __call__(self, username: str, password: str) -> bool:
        with self.lock:
            self.calls += 1
            self.on_loop += _on_event_loop()
            self.running += 1
            self.peak = max(self.peak, self.running)
        try:
            time.sleep(self.seconds)
            return self.verify(username, password)
        finally:
            with self.lock:
                self.running -= 1


def _on_event_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


async def _attempt(guard: SignIn, name: str, password: str, address: str | None = None) -> bool | str:
    """True/False from the guard, or the refusal's message."""
    token = CLIENT_ADDRESS.set(address)
    try:
        return await guard.check(name, password)
    except HTTPException as exc:
        assert exc.status_code == 400 and exc.headers["Retry-After"].isdigit()
        return exc.detail
    finally:
        CLIENT_ADDRESS.reset(token)


def run(coroutine):
    """``asyncio.run`` in a thread of its own: the browser tests' Playwright keeps a loop in the main one."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def attempt(guard: SignIn, name: str, password: str, address: str | None = None) -> bool | str:
    return run(_attempt(guard, name, password, address))


def test_module_doctests():
    assert doctest.testmod(login).failed == 0


def test_name_locked_after_five_failures_until_the_cooldown():
    clock, verify = Clock(), CountingVerify()
    guard = SignIn(verify, clock=clock)
    assert [attempt(guard, "alice", f"guess {i}", "10.0.0.1") for i in range(5)] == [False] * 5
    refused = attempt(guard, *ALICE, "10.0.0.2")  # the right password, from anywhere
    assert (
        refused.startswith("Too many failed sign-ins; try again in 15 minutes")
        and "登录失败次数过多" in refused
    )
    assert verify.calls == 5  # refused without checking
    assert attempt(guard, *BOB, "10.0.0.1") is True  # another name, same address: unaffected
    clock.now += 14 * 60
    assert "try again in 1 minute." in attempt(guard, *ALICE)
    clock.now += 60
    assert attempt(guard, *ALICE) is True


def test_success_clears_the_names_count():
    guard = SignIn(CountingVerify(), clock=Clock())
    for _ in range(2):
        assert [attempt(guard, "alice", "wrong") for _ in range(4)] == [False] * 4
        assert attempt(guard, *ALICE) is True


def test_failures_outside_the_window_do_not_lock():
    clock = Clock()
    guard = SignIn(CountingVerify(), clock=clock)
    for _ in range(10):
        assert attempt(guard, "alice", "wrong") is False
        clock.now += 76  # any 5 failures span 304 s, more than the 300 s window
    assert attempt(guard, *ALICE) is True


def test_address_locked_after_twenty_failures_other_addresses_unaffected():
    verify = CountingVerify()
    guard = SignIn(verify, clock=Clock())
    for i in range(20):  # 20 names, one guess each: no name is locked
        assert attempt(guard, f"user{i}", "wrong", "10.0.0.1") is False
    assert attempt(guard, *BOB, "10.0.0.1").startswith("Too many failed sign-ins")
    assert attempt(guard, *BOB, "10.0.0.2") is True
    assert verify.calls == 21


def test_concurrent_guesses_cannot_overshoot_and_run_two_at_a_time_off_the_loop():
    verify = CountingVerify(seconds=0.05)
    guard = SignIn(verify, clock=Clock())

    async def flood():
        return await asyncio.gather(*(_attempt(guard, "alice", f"guess {i}") for i in range(16)))

    answers = run(flood())
    assert answers.count(False) == 5 and verify.calls == 5
    assert all(isinstance(a, str) and a.startswith("Too many") for a in answers if a is not False)
    assert verify.peak <= 2 and verify.on_loop == 0

    many = SignIn(verify := CountingVerify(seconds=0.05), SignInLimits(concurrent_checks=3), clock=Clock())

    async def spread():
        return await asyncio.gather(*(_attempt(many, f"user{i}", "wrong") for i in range(12)))

    assert run(spread()) == [False] * 12
    assert verify.calls == 12 and verify.peak == 3 and verify.on_loop == 0


def test_remembered_names_and_addresses_are_bounded():
    guard = SignIn(CountingVerify(), SignInLimits(max_keys=50, address_failures=10_000), clock=Clock())
    for i in range(500):
        attempt(guard, f"user{i}", "wrong", f"10.0.{i // 256}.{i % 256}")
    assert len(guard.accounts) == 50 and len(guard.addresses) == 50
    assert attempt(guard, "x" * 100_000, "wrong") is False and len(guard.accounts) == 50


@pytest.mark.parametrize("field", ["account_failures", "address_failures", "max_keys", "concurrent_checks"])
def test_limits_must_be_positive(field):
    with pytest.raises(ValueError, match=field):
        SignInLimits(**{field: 0})


@contextmanager
def served(demo: gr.Blocks, auth):
    """``demo`` on a free loopback port behind ``auth``, with the client-address middleware."""
    _, url, _ = demo.launch(
        server_name="127.0.0.1",
        server_port=free_port(),
        prevent_thread_lock=True,
        quiet=True,
        auth=auth,
        app_kwargs={"middleware": [Middleware(ClientAddress)]},
    )
    try:
        yield url.rstrip("/")
    finally:
        demo.close()


def post_login(url: str, name: str, password: str, address: str | None = None) -> httpx.Response:
    headers = {"X-Forwarded-For": address} if address else {}  # believed by uvicorn from loopback
    return httpx.post(
        f"{url}/login", data={"username": name, "password": password}, headers=headers, timeout=30
    )


def test_login_route_refuses_locked_names_and_addresses_with_the_message():
    clock, verify = Clock(), CountingVerify()
    with gr.Blocks() as demo:
        gr.Markdown("LawLuo")
    with served(demo, SignIn(verify, clock=clock).check) as url:
        for i in range(5):
            r = post_login(url, "alice", f"guess {i}", "198.51.100.1")
            assert r.status_code == 400 and r.json()["detail"] == "Incorrect credentials."
        r = post_login(url, *ALICE, "198.51.100.1")
        assert r.status_code == 400 and r.headers["Retry-After"] == "900"
        assert r.json()["detail"].startswith("Too many failed sign-ins; try again in 15 minutes")
        assert post_login(url, *BOB, "198.51.100.1").status_code == 200
        for i in range(15):  # with alice's five guesses, 20 failures from the address
            assert (
                post_login(url, f"user{i}", "wrong", "198.51.100.1").json()["detail"]
                == "Incorrect credentials."
            )
        assert post_login(url, *BOB, "198.51.100.1").json()["detail"].startswith("Too many")
        assert post_login(url, *BOB, "198.51.100.2").status_code == 200
        assert verify.calls == 5 + 1 + 15 + 1
        clock.now += 15 * 60
        assert post_login(url, *ALICE, "198.51.100.1").status_code == 200


def test_app_auth_is_a_guarded_coroutine(tmp_path):
    from app import launch_auth
    from lawluo.config import load_settings

    settings = load_settings(
        environ={"LAWLUO_ANNOTATION_USERS": "alice:pw", "LAWLUO_ANNOTATION_DIR": str(tmp_path)}
    )
    auth = launch_auth(settings)
    assert inspect.iscoroutinefunction(auth)  # Gradio awaits it instead of calling it on the event loop
    assert isinstance(auth.__self__, SignIn) and run(auth("alice", "pw")) is True


def test_wrong_password_flood_checks_at_most_the_allowance_and_the_app_keeps_serving(tmp_path, monkeypatch):
    """The attack: threads posting wrong passwords at the real app while another GETs the login page."""
    from app import build_app, launch_auth
    from lawluo.config import load_settings

    users = f"alice:{hash_password(ALICE[1])},bob:{hash_password(BOB[1])}"  # 0.2 s PBKDF2 each
    settings = load_settings(
        environ={
            "LAWLUO_ANNOTATION_USERS": users,
            "LAWLUO_ANNOTATION_DIR": str(tmp_path),
            "LAWLUO_CACHE_DIR": os.environ["LAWLUO_CACHE_DIR"],
        }
    )
    matches = CountingVerify(eval_ui.auth._matches)
    monkeypatch.setattr(eval_ui.auth, "_matches", matches)
    with served(build_app(settings), launch_auth(settings)) as url:
        until, answers, lock = time.monotonic() + 4, [], threading.Lock()

        def guess():
            with httpx.Client(timeout=30) as client:
                n = 0
                while time.monotonic() < until and n < 40:
                    n += 1
                    r = client.post(f"{url}/login", data={"username": "alice", "password": f"guess {n}"})
                    with lock:
                        answers.append(r.json()["detail"])

        threads = [threading.Thread(target=guess) for _ in range(8)]
        for t in threads:
            t.start()
        gets = []
        with httpx.Client(timeout=30) as client:
            while time.monotonic() < until:
                gets.append(client.get(f"{url}/").status_code)
        for t in threads:
            t.join()
        assert gets and set(gets) == {200}
        assert answers.count("Incorrect credentials.") == 5 and len(answers) > 5
        assert all(a.startswith("Too many failed sign-ins") for a in answers if a != "Incorrect credentials.")
        assert matches.calls == 5 and matches.on_loop == 0  # PBKDF2 ran 5 times, never on the event loop
        assert post_login(url, *ALICE).json()["detail"].startswith("Too many failed sign-ins")
        assert post_login(url, *BOB).status_code == 200  # another name from the same address
        assert matches.calls == 6 and matches.on_loop == 0
