"""Can an attacker guessing passwords at Gradio's login form keep the real annotators out, or slow the app?

    python benchmarks/login_flood.py [--seconds 10] [--threads 16] [--attackers 4] [--rounds 1]
    python benchmarks/login_flood.py --attackers 64     # distributed: the names' slowdown starts

``python app.py`` is started afresh on loopback with 16 annotators whose passwords are PBKDF2 hashes
(``eval_ui.auth.ITERATIONS`` iterations, as ``python -m eval_ui hash-password`` makes them). Every request
names its client in ``X-Forwarded-For``, which the app believes from loopback (uvicorn's
``FORWARDED_ALLOW_IPS`` and the setting ``trusted_proxies``). Then:

1. Quiet: one thread times ``GET /`` (the login page) back to back for ``--seconds``.
2. Flood, for ``--seconds``: ``--threads`` threads post wrong passwords for all 16 annotators in turn,
   from ``--attackers`` addresses (198.51.100.x, spread over the threads), as fast as the app answers. A
   guess answered ``Incorrect credentials.`` was checked (PBKDF2 ran); one answered ``Too many failed
   sign-ins…`` was refused without hashing. Meanwhile one thread times ``GET /`` as in 1, and the real
   annotators sign in with their right passwords, each from an address of their own (203.0.113.x),
   ``--rounds`` times each, spread evenly over the flood.
3. After the flood: each annotator signs in once more from their own address (a lock on the name would
   refuse them now).

Prints p50/p95/max of the GETs in both phases, the guesses sent, checked and refused, how many real
sign-ins succeeded during and after the flood (the target: all) with p50/p95/max of their time, and the
app's log lines about sign-in locks (counted by kind, the first few quoted).
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
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
from _common import ROOT, percentile

from eval_ui.auth import hash_password
from tests.fakes.live_app import free_port

PASSWORDS = {f"annotator{i:02d}": f"right-password-{i}" for i in range(16)}
TIMEOUT = 60.0


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


def flood(
    url: str, addresses: list[str], start: int, until: float, counts: Counter, lock: threading.Lock
) -> None:
    """Post wrong passwords for every annotator in turn until ``until``, moving to the next of ``addresses``
    after each round of the names; count the answers."""
    names, n = list(PASSWORDS), start
    with httpx.Client(timeout=TIMEOUT) as client:
        while time.monotonic() < until:
            n += 1
            headers = {"X-Forwarded-For": addresses[n // len(names) % len(addresses)]}
            try:
                r = client.post(
                    url + "/login",
                    data={"username": names[n % len(names)], "password": f"guess-{n}"},
                    headers=headers,
                )
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
                counts[kind] += 1


def sign_in(url: str, name: str, address: str) -> tuple[bool, float, str]:
    """The annotator ``name`` with the right password from ``address``: (signed in, seconds, answer)."""
    t0 = time.perf_counter()
    try:
        r = httpx.post(
            url + "/login",
            data={"username": name, "password": PASSWORDS[name]},
            headers={"X-Forwarded-For": address},
            timeout=TIMEOUT,
        )
        ok, answer = (
            r.status_code == 200,
            "signed in" if r.status_code == 200 else str(r.json().get("detail")),
        )
    except (httpx.HTTPError, ValueError) as exc:
        ok, answer = False, type(exc).__name__
    return ok, time.perf_counter() - t0, answer


def real_sign_ins(url: str, start: float, seconds: float, rounds: int) -> list[tuple[bool, float, str]]:
    """Each annotator signs in ``rounds`` times from their own address, the sign-ins spread evenly over
    ``seconds`` from ``start`` (each in a thread of its own, so a slow one does not delay the next)."""
    plan = [(name, f"203.0.113.{10 + i}") for _ in range(rounds) for i, name in enumerate(PASSWORDS)]
    with ThreadPoolExecutor(max_workers=len(plan)) as pool:
        futures = []
        for k, (name, address) in enumerate(plan):
            time.sleep(max(0.0, start + (k + 0.5) * seconds / len(plan) - time.monotonic()))
            futures.append(pool.submit(sign_in, url, name, address))
        return [f.result() for f in futures]


def describe(name: str, latencies: list[float], failed: int) -> str:
    return (
        f"{name:<7} GET /: n={len(latencies):5d}  p50={percentile(latencies, 50):.3f}s  "
        f"p95={percentile(latencies, 95):.3f}s  max={max(latencies):.3f}s  failed={failed}"
    )


def main(seconds: float = 10.0, threads: int = 16, attackers: int = 4, rounds: int = 1) -> None:
    users = ",".join(f"{name}:{hash_password(pw)}" for name, pw in PASSWORDS.items())
    addresses = [f"198.51.{100 + i // 250}.{1 + i % 250}" for i in range(attackers)]
    with tempfile.TemporaryDirectory(prefix="lawluo-login-flood-") as folder:
        proc, url = start_app(users, folder)
        try:
            quiet = time_gets(url, time.monotonic() + seconds)
            counts, lock = Counter(), threading.Lock()
            start = time.monotonic()
            until = start + seconds
            workers = [
                threading.Thread(target=flood, args=(url, addresses, t * 5, until, counts, lock))
                for t in range(threads)
            ]
            real: list[tuple[bool, float, str]] = []
            workers.append(
                threading.Thread(target=lambda: real.extend(real_sign_ins(url, start, seconds, rounds)))
            )
            for w in workers:
                w.start()
            loud = time_gets(url, until)
            for w in workers:
                w.join()
            after = [sign_in(url, name, f"203.0.113.{10 + i}") for i, name in enumerate(PASSWORDS)]
        finally:
            stop_app(proc)
        log = Path(folder, "app.log").read_text(encoding="utf-8", errors="replace").splitlines()
    print(
        f"login flood: {threads} threads posting wrong passwords for all {len(PASSWORDS)} annotators from "
        f"{attackers} addresses for {seconds:g}s; each annotator signs in {rounds}x from their own address "
        "meanwhile (python app.py)"
    )
    print(describe("quiet", *quiet))
    print(describe("flood", *loud))
    parts = [f"guesses sent={sum(counts.values())}", f"checked (PBKDF2 ran)={counts['checked']}"]
    parts.append(f"refused without hashing={counts['refused']}")
    parts += [f"{k}={v}" for k, v in sorted(counts.items()) if k not in ("checked", "refused")]
    print("  ".join(parts))
    for when, results in (("during the flood", real), ("after the flood", after)):
        times = [t for _, t, _ in results]
        print(
            f"real sign-ins {when}: {sum(ok for ok, _, _ in results)}/{len(results)} succeeded  "
            f"p50={percentile(times, 50):.3f}s  p95={percentile(times, 95):.3f}s  max={max(times):.3f}s"
        )
        for answer, n in Counter(a for ok, _, a in results if not ok).items():
            print(f"  refused {n}x: {answer}")
    locks = [line for line in log if "sign-in:" in line]
    kinds = Counter(
        "pair" if " at " in line and "locked for" in line else "address" if "address" in line else "name"
        for line in locks
    )
    print(f"app log: {len(locks)} sign-in lines ({', '.join(f'{k} {v}' for k, v in sorted(kinds.items()))})")
    for line in locks[:3] + [line for line in locks if "from any addresses" in line][:2]:
        print(f"app log: {line.split(' WARNING: ', 1)[-1]}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="length of each phase")
    parser.add_argument("--threads", type=int, default=16, help="threads posting wrong passwords")
    parser.add_argument("--attackers", type=int, default=4, help="client addresses the guesses come from")
    parser.add_argument(
        "--rounds", type=int, default=1, help="sign-ins of each real annotator during the flood"
    )
    main(**vars(parser.parse_args()))
