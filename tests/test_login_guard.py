"""Gradio's login under a flood of wrong passwords: the limits per name at an address, per address and per
name from everywhere, the password check off the event loop, and the app serving everyone else meanwhile."""

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

import eval_ui.auth
import lawluo.ui.client_address
from eval_ui import login, login_limiters
from eval_ui.auth import hash_password, parse_users
from eval_ui.login import SignIn, SignInLimits
from lawluo.ui.client_address import CLIENT_ADDRESS, client_address_middleware
from tests.fakes.live_app import free_port

pytestmark = pytest.mark.slow  # 11 s of the suite on 2 cores (4 s or more: left out of the inner loop)

ALICE, BOB = ("alice", "alice-pw"), ("bob", "bob-pw")
USERS = parse_users(f"alice:{hash_password(ALICE[1], 1000)},bob:{hash_password(BOB[1], 1000)}")


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

    def __call__(self, *args):
        with self.lock:
            self.calls += 1
            self.on_loop += _on_event_loop()
            self.running += 1
            self.peak = max(self.peak, self.running)
        try:
            time.sleep(self.seconds)
            return self.verify(*args)
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
    assert doctest.testmod(login_limiters).failed == 0  # FailureLimiter and Backoff, re-exported by login


def test_a_name_is_locked_only_at_the_address_it_failed_from():
    """The attack: 5 wrong guesses for a name locked it for everyone, even with the right password."""
    clock, verify = Clock(), CountingVerify()
    guard = SignIn(verify, clock=clock)
    assert [attempt(guard, "alice", f"guess {i}", "198.51.100.1") for i in range(5)] == [False] * 5
    refused = attempt(guard, *ALICE, "198.51.100.1")  # the right password, from the guessing address
    assert (
        refused.startswith("Too many failed sign-ins; try again in 1 minute.")
        and "登录失败次数过多" in refused
    )
    assert verify.calls == 5  # refused without checking
    assert attempt(guard, *ALICE, "203.0.113.7") is True  # from her own address: in
    assert attempt(guard, *BOB, "198.51.100.1") is True  # another name, the guessing address: unaffected
    assert attempt(guard, "alice", "guess 6", "198.51.100.1").startswith("Too many")  # still locked there


def test_a_pairs_lock_doubles_with_each_further_failure_up_to_the_cap():
    clock = Clock()
    guard = SignIn(CountingVerify(), clock=clock)
    pair = ("alice", "198.51.100.1")
    for _ in range(5):
        assert attempt(guard, "alice", "wrong", pair[1]) is False
    locks = []
    for _ in range(6):
        locks.append(guard.pairs.locked_for(pair))
        assert attempt(guard, "alice", "wrong", pair[1]).startswith("Too many")
        clock.now += locks[-1]
        assert attempt(guard, "alice", "wrong", pair[1]) is False  # checked once the lock is over
    assert locks == [60, 120, 240, 480, 900, 900]  # 60 · 2^k, at most 15 minutes
    clock.now += 900
    assert attempt(guard, *ALICE, pair[1]) is True  # the lock is over: the right password works
    assert guard.pairs.locked_for(pair) == 0 and len(guard.pairs) == 0  # and clears the pair


def test_success_clears_the_pairs_count():
    guard = SignIn(CountingVerify(), clock=Clock())
    for _ in range(2):
        assert [attempt(guard, "alice", "wrong", "10.0.0.1") for _ in range(4)] == [False] * 4
        assert attempt(guard, *ALICE, "10.0.0.1") is True


def test_failures_further_apart_than_the_window_do_not_lock():
    clock = Clock()
    guard = SignIn(CountingVerify(), clock=clock)
    for _ in range(10):
        assert attempt(guard, "alice", "wrong", "10.0.0.1") is False
        clock.now += 301  # each failure is forgotten before the next
    assert attempt(guard, *ALICE, "10.0.0.1") is True


def test_a_name_guessed_from_many_addresses_is_slowed_never_refused():
    """Distributed guessing: one wrong guess each from 30 addresses. Every later attempt at the name waits
    1 s, 2 s, 4 s, 8 s, then 10 s; the right password from an address that never failed still signs in."""
    slept, verify = [], CountingVerify()

    async def sleep(seconds: float) -> None:
        assert verify.running == 0  # waiting holds no password check
        slept.append(seconds)

    guard = SignIn(verify, clock=Clock(), sleep=sleep)
    answers = [attempt(guard, "alice", "wrong", f"198.51.100.{i}") for i in range(30)]
    assert answers == [False] * 30 and verify.calls == 30
    assert slept == [1, 2, 4, 8] + [10] * 6  # from the 21st attempt on
    assert attempt(guard, *ALICE, "203.0.113.7") is True and slept[-1] == 10 and len(slept) == 11
    assert attempt(guard, *BOB, "203.0.113.7") is True and len(slept) == 11  # other names: no wait
    assert [row["kind"] for row in guard.locks()] == ["name"] and guard.locks()[0]["delay_s"] == 10


def test_the_right_password_from_a_fresh_address_works_while_the_name_is_hammered():
    verify = CountingVerify(seconds=0.01)
    limits = SignInLimits(name_failures=5, name_delay=0.01, name_max_delay=0.05)
    guard = SignIn(verify, limits)

    async def hammer_and_sign_in():
        guesses = [_attempt(guard, "alice", f"guess {i}", f"198.51.100.{i % 8}") for i in range(200)]
        tasks = [asyncio.ensure_future(g) for g in guesses]
        await asyncio.sleep(0.05)
        mine = await _attempt(guard, *ALICE, "203.0.113.7")
        return mine, await asyncio.gather(*tasks)

    mine, theirs = run(hammer_and_sign_in())
    assert mine is True
    assert theirs.count(False) == 8 * 5  # each guessing address got its 5, then was refused
    assert all(a.startswith("Too many") for a in theirs if a is not False)


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


def test_one_address_checks_one_at_a_time_and_cannot_queue_ahead_of_others():
    """16 concurrent guesses from one address used to fill the queue of password checks, and a real
    sign-in waited behind all of them; now the address has one check at a time and the sign-in runs
    beside it."""
    order, verify = [], CountingVerify(seconds=0.05)

    def recording(username: str, password: str) -> bool:
        order.append(username)
        return verify(username, password)

    guard = SignIn(recording)

    async def flood_and_sign_in():
        guesses = [
            asyncio.ensure_future(_attempt(guard, f"user{i}", "wrong", "198.51.100.1")) for i in range(16)
        ]
        await asyncio.sleep(0)
        return await _attempt(guard, *ALICE, "203.0.113.7"), await asyncio.gather(*guesses)

    mine, theirs = run(flood_and_sign_in())
    assert mine is True and theirs == [False] * 16
    assert order.index("alice") <= 1  # beside the address's first guess, not after its sixteen
    assert verify.peak == 2 and guard._queues == {}


def test_an_address_without_failures_goes_ahead_of_addresses_with_failures():
    """Four guessing addresses keep a check each queued; a real sign-in from a clean address waits only for
    the checks already running."""
    order, go = [], threading.Event()
    verify = CountingVerify()

    def recording(username: str, password: str) -> bool:
        order.append(username)
        if username.startswith("user"):
            assert go.wait(10)
        return verify(username, password)

    guard = SignIn(recording)
    guessers = [f"198.51.100.{i}" for i in range(1, 5)]
    for address in guessers:  # one failure on record each
        assert attempt(guard, "root", "wrong", address) is False

    async def until(condition) -> None:
        for _ in range(1000):
            if condition():
                return
            await asyncio.sleep(0.005)
        raise AssertionError("timed out")

    async def flood_and_sign_in():
        guesses = [
            asyncio.ensure_future(_attempt(guard, f"user{i}", "wrong", guessers[i % 4])) for i in range(12)
        ]
        await until(lambda: len(order) == 2 and len(guard._slots) == 2)  # two checked, two wait for a slot
        mine = asyncio.ensure_future(_attempt(guard, *ALICE, "203.0.113.7"))
        await until(lambda: len(guard._slots) == 3)
        go.set()
        return await mine, await asyncio.gather(*guesses)

    order.clear()
    mine, theirs = run(flood_and_sign_in())
    assert mine is True and theirs == [False] * 12
    # The two running checks end together: alice takes one slot, the first waiting guess the other (the
    # two may start in either order); first come first served, alice would have waited for both.
    assert "alice" in order[2:4]
    assert len(guard._slots) == 0 and guard._slots.free == 2 and guard._queues == {}


def test_remembered_pairs_names_and_addresses_are_bounded():
    guard = SignIn(CountingVerify(), SignInLimits(max_keys=50, address_failures=10_000), clock=Clock())
    for i in range(500):
        attempt(guard, f"user{i}", "wrong", f"10.0.{i // 256}.{i % 256}")
    assert len(guard.pairs) == len(guard.names) == len(guard.addresses) == 50
    assert attempt(guard, "x" * 100_000, "wrong") is False and len(guard.pairs) == len(guard.names) == 50


@pytest.mark.parametrize(
    "field",
    [
        "pair_failures",
        "address_failures",
        "name_failures",
        "max_keys",
        "concurrent_checks",
        "checks_per_address",
        "pair_lock",
        "address_lock",
        "name_delay",
        "window",
    ],
)
def test_limits_must_be_positive(field):
    with pytest.raises(ValueError, match=field):
        SignInLimits(**{field: 0})


def test_a_names_slowdown_stays_a_slowdown():
    with pytest.raises(ValueError, match="name_max_delay is at most 60 s"):
        SignInLimits(name_max_delay=600)
    with pytest.raises(ValueError, match="cannot be below"):
        SignInLimits(pair_lock=120, pair_max_lock=60)


def test_the_client_address_is_the_one_of_lawluo_ui_client_address():
    """One address for every limit: login keeps no middleware or context variable of its own."""
    assert login.CLIENT_ADDRESS is lawluo.ui.client_address.CLIENT_ADDRESS
    for name in ("ClientAddress", "client_address_middleware"):  # re-exported at most
        assert getattr(login, name, None) in (None, getattr(lawluo.ui.client_address, name))


@contextmanager
def served(demo: gr.Blocks, auth):
    """``demo`` on a free loopback port behind ``auth``, with the client-address middleware."""
    _, url, _ = demo.launch(
        server_name="127.0.0.1",
        server_port=free_port(),
        prevent_thread_lock=True,
        quiet=True,
        auth=auth,
        app_kwargs={"middleware": [client_address_middleware()]},
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


def test_login_route_refuses_locked_pairs_and_addresses_with_the_message():
    clock, verify = Clock(), CountingVerify()
    with gr.Blocks() as demo:
        gr.Markdown("LawLuo")
    with served(demo, SignIn(verify, clock=clock).check) as url:
        for i in range(5):
            r = post_login(url, "alice", f"guess {i}", "198.51.100.1")
            assert r.status_code == 400 and r.json()["detail"] == "Incorrect credentials."
        r = post_login(url, *ALICE, "198.51.100.1")
        assert r.status_code == 400 and r.headers["Retry-After"] == "60"
        assert r.json()["detail"].startswith("Too many failed sign-ins; try again in 1 minute.")
        assert post_login(url, *ALICE, "198.51.100.9").status_code == 200  # her own address
        assert post_login(url, *BOB, "198.51.100.1").status_code == 200
        for i in range(15):  # with alice's five guesses, 20 failures from the address
            assert (
                post_login(url, f"user{i}", "wrong", "198.51.100.1").json()["detail"]
                == "Incorrect credentials."
            )
        r = post_login(url, *BOB, "198.51.100.1")
        assert r.json()["detail"].startswith("Too many") and r.headers["Retry-After"] == "900"
        assert post_login(url, *BOB, "198.51.100.2").status_code == 200
        assert verify.calls == 5 + 1 + 1 + 15 + 1
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
    pbkdf2 = CountingVerify(eval_ui.auth.hashlib.pbkdf2_hmac)
    monkeypatch.setattr(eval_ui.auth.hashlib, "pbkdf2_hmac", pbkdf2)
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
        assert pbkdf2.calls == 5 and pbkdf2.on_loop == 0  # PBKDF2 ran 5 times, never on the event loop
        assert post_login(url, *ALICE).json()["detail"].startswith("Too many failed sign-ins")
        assert post_login(url, *BOB).status_code == 200  # another name from the same address
        assert post_login(url, *ALICE, "203.0.113.7").status_code == 200  # alice from her own address
        assert pbkdf2.calls == 7 and pbkdf2.on_loop == 0
