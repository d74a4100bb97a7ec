"""Does a flood of wrong passwords at Gradio's login form slow everyone else down?

    python benchmarks/login_flood.py [--seconds 10] [--threads 16]

``python app.py`` is started afresh on loopback with two annotators whose passwords are PBKDF2 hashes
(``eval_ui.auth.ITERATIONS`` iterations, as ``python -m eval_ui hash-password`` makes them). Then:

1. Quiet: one thread times ``GET /`` (the login page) back to back for ``--seconds``.
2. Flood: the same, while ``--threads`` threads post wrong passwords for ``alice`` to ``/login`` as
   fast as the app answers. A guess answered ``Incorrect credentials.`` was checked (PBKDF2 ran); one
   answered ``Too many failed sign-ins…`` was refused by the limiter without hashing.
3. After the flood: ``alice`` with her right password from the flooding address (refused while the
   lock lasts), and ``bob`` with his from another address (``X-Forwarded-For``, which uvicorn trusts
   from loopback): he signs in.

Prints p50/p95/max of the GETs in both phases, the number of guesses sent, checked and refused, the
two sign-ins after the flood and the app's log lines about sign-in locks.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
from _common import ROOT, percentile

from eval_ui.auth import hash_password
from tests.fakes.live_app import free_port

PASSWORDS = {"alice": "alice-right-pw", "bob": "bob-right-pw"}
TIMEOUT = 30.0


def start_app(users: str, folder: str) -> tuple[subprocess.Popen, str]:
    """``python app.py`` on a free loopback port with ``users``; returns the process and its URL once up."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LAWLUO_", "OPENAI_"))}
    env.update(
        GRADIO_SERVER_PORT=str(port),
        GRADIO_ANALYTICS_ENABLED="False",
        LAWLUO_ANNOTATION_USERS=users,
        LAWLUO_ANNOTATION_DIR=folder,
    )
    log = os.path.join(folder, "app.log")
    with open(log, "wb") as out:  # the child keeps its own descriptor
        proc = subprocess.Popen(
            [sys.executable, "app.py"],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            if httpx.get(url + "/", timeout=2).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    stop_app(proc)
    raise RuntimeError(f"app did not start; see {log}")


def stop_app(proc: subprocess.Popen) -> None:
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)


def time_gets(url: str, until: float) -> tuple[list[float], int]:
    """Seconds taken by each ``GET /`` made back to back until ``until``, and the number that failed."""
    latencies, failed = [], 0
    with httpx.Client(timeout=TIMEOUT) as client:
        while time.monotonic() < until:
            t0 = time.perf_counter()
            try:
                ok = client.get(url + "/").status_code == 200
            except httpx.HTTPError:
                ok = False
            latencies.append(time.perf_counter() - t0)
            failed += not ok
    return latencies, failed


def flood(url: str, until: float, counts: dict[str, int], lock: threading.Lock) -> None:
    """Post wrong passwords for alice until ``until``; count the answers by kind."""
    n = 0
    with httpx.Client(timeout=TIMEOUT) as client:
        while time.monotonic() < until:
            n += 1
            try:
                r = client.post(url + "/login", data={"username": "alice", "password": f"guess-{n}"})
                detail = str(r.json().get("detail", "")) if r.status_code != 200 else "signed in"
                kind = (
                    "checked"
                    if detail.startswith("Incorrect credentials")
                    else "refused"
                    if detail.startswith("Too many")
                    else f"other {r.status_code}"
                )
            except (httpx.HTTPError, ValueError) as exc:
                kind = f"error {type(exc).__name__}"
            with lock:
                counts[kind] = counts.get(kind, 0) + 1


def sign_in(url: str, name: str, address: str | None = None) -> str:
    headers = {"X-Forwarded-For": address} if address else {}
    t0 = time.perf_counter()
    r = httpx.post(
        url + "/login", data={"username": name, "password": PASSWORDS[name]}, headers=headers, timeout=TIMEOUT
    )
    what = "signed in" if r.status_code == 200 else f"{r.status_code} {r.json().get('detail')}"
    return f"{what} ({time.perf_counter() - t0:.2f}s)"


def describe(name: str, latencies: list[float], failed: int) -> str:
    return (
        f"{name:<7} GET /: n={len(latencies):5d}  p50={percentile(latencies, 50):.3f}s  "
        f"p95={percentile(latencies, 95):.3f}s  max={max(latencies):.3f}s  failed={failed}"
    )


def main(seconds: float = 10.0, threads: int = 16) -> None:
    users = ",".join(f"{name}:{hash_password(pw)}" for name, pw in PASSWORDS.items())
    with tempfile.TemporaryDirectory(prefix="lawluo-login-flood-") as folder:
        proc, url = start_app(users, folder)
        try:
            quiet = time_gets(url, time.monotonic() + seconds)
            counts, lock = {}, threading.Lock()
            until = time.monotonic() + seconds
            workers = [
                threading.Thread(target=flood, args=(url, until, counts, lock)) for _ in range(threads)
            ]
            for w in workers:
                w.start()
            loud = time_gets(url, until)
            for w in workers:
                w.join()
            alice, bob = sign_in(url, "alice"), sign_in(url, "bob", "203.0.113.7")
        finally:
            stop_app(proc)
        log = Path(folder, "app.log").read_text(encoding="utf-8", errors="replace").splitlines()
    print(
        f"login flood: {threads} threads posting wrong passwords for alice for {seconds:g}s (python app.py)"
    )
    print(describe("quiet", *quiet))
    print(describe("flood", *loud))
    sent = sum(counts.values())
    parts = [f"guesses sent={sent}", f"checked (PBKDF2 ran)={counts.get('checked', 0)}"]
    parts.append(f"refused without hashing={counts.get('refused', 0)}")
    parts += [f"{k}={v}" for k, v in sorted(counts.items()) if k not in ("checked", "refused")]
    print("  ".join(parts))
    print(f"after the flood: alice, right password, same address: {alice}")
    print(f"after the flood: bob, right password, another address: {bob}")
    for line in (line for line in log if "sign-in:" in line):
        print(f"app log: {line}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="length of each phase")
    parser.add_argument("--threads", type=int, default=16, help="threads posting wrong passwords")
    main(**vars(parser.parse_args()))
