"""Start the app as a Hugging Face Space would and check it over HTTP (``.ci/run`` runs it).

    python .ci/space_smoke.py                      # fresh venv, requirements.txt alone, clean copy
    python .ci/space_smoke.py --venv /tmp/v        # reuse (or create) that venv: quicker reruns
    python .ci/space_smoke.py --venv /tmp/v --no-install   # that venv as it is: seconds, not minutes
    python .ci/space_smoke.py --keep               # keep the copy and the venv, print where

What a Space does, step by step: it gets the repository's committed files (here the files git would
commit: ``git ls-files --cached --others --exclude-standard``, so no ``assets/index/``, no ``../shared``
beside it), installs ``requirements.txt`` alone into a fresh environment (no requirements-dev) — the file
alone in an empty folder, as a Space's builder mounts it (``RUN --mount=target=/tmp/requirements.txt,
source=requirements.txt pip install -r /tmp/requirements.txt …``: a ``-c constraints.txt`` it named would
be missing), in one pip command with what that builder adds (:func:`space_packages`: ``gradio[oauth,mcp]``
at the front matter's ``sdk_version``, uvicorn, websockets, spaces) — checks that every package the file
pins got its pinned version, and runs ``python <app_file>``, ``app_file`` read from the README's front
matter (whose ``sdk_version``, the Gradio a Space installs, must be the one requirements.txt pins). Then,
over plain HTTP (the standard library only; Gradio's HTTP API ``/gradio_api/call/<name>``):

1. the page answers 200 and is LawLuo's (``律罗``); the seconds from start to that first 200 are printed;
2. ``/healthz`` says ``ok`` with the statute database available;
3. a statute search finds the Labour Contract Law;
4. a citation check verifies one citation and finds the other repealed;
5. a consultation without any language model: ask, then the lawyer's model-free answer.

Exit status 0 when every check passed, 1 with the failing check's message (and the app's last log
lines) otherwise, 2 when the set-up itself failed (git, venv, pip).
"""

from __future__ import annotations

import argparse
import http.cookiejar
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
QUESTION = "我在公司干了两年一直没签劳动合同，现在老板把我辞退了，我能要求什么赔偿？"
CITATIONS = (
    "根据《中华人民共和国民法典》第一千零七十九条规定：“夫妻一方要求离婚的，可以由有关组织进行调解或者直接向"
    "人民法院提起离婚诉讼。”另依据《合同法》第一百零七条：“当事人一方不履行合同义务或者履行合同义务不符合约定的，"
    "应当承担继续履行、采取补救措施或者赔偿损失等违约责任。”"
)


class SmokeFailure(Exception):
    """A check that failed: the message says which and what was seen."""


def front_matter(readme: Path) -> dict[str, str]:
    """The README's YAML front matter as flat ``key: value`` pairs (all a Space's card uses here)."""
    text = readme.read_text(encoding="utf-8")
    match = re.match(r"---\n(.*?)\n---\n", text, re.S)
    if not match:
        raise SmokeFailure(f"{readme.name} has no front matter (--- … ---) naming app_file")
    pairs = (line.partition(":") for line in match.group(1).splitlines())
    return {key.strip(): value.strip().strip("'\"") for key, sep, value in pairs if sep}


def app_file(root: Path) -> str:
    """``app_file`` of the README's front matter (the file a Space runs), after checking that its
    ``sdk_version`` is the Gradio that requirements.txt pins (a Space installs ``sdk_version``)."""
    card = front_matter(root / "README.md")
    if not card.get("app_file"):
        raise SmokeFailure("README.md's front matter names no app_file")
    pinned = re.search(r"^gradio==(\S+)", (root / "requirements.txt").read_text(encoding="utf-8"), re.M)
    if pinned and card.get("sdk_version") != pinned.group(1):
        raise SmokeFailure(
            f"README.md's sdk_version {card.get('sdk_version')} is not requirements.txt's gradio=={pinned.group(1)}"
        )
    return card["app_file"]


def copy_as_space(source: Path, target: Path) -> int:
    """Copy the files git would commit (tracked and new, not ignored, not deleted); returns their count."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=source,
        check=True,
        capture_output=True,
    ).stdout.decode()
    count = 0
    for name in filter(None, listed.split("\0")):
        src = source / name
        if not src.is_file():  # deleted in the working tree, or a submodule
            continue
        dst = target / name
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dst)
        count += 1
    return count


def space_packages(root: Path) -> list[str]:
    """What a Space's builder installs in the same pip command as requirements.txt (its build log, Gradio
    SDK 6: ``pip install --no-cache-dir -r /tmp/requirements.txt gradio[oauth,mcp]==<sdk_version>
    "uvicorn>=0.14.0" "websockets>=10.4" spaces``): a pin of requirements.txt these refuse fails the build."""
    sdk = front_matter(root / "README.md").get("sdk_version")
    return [f"gradio[oauth,mcp]=={sdk}", "uvicorn>=0.14.0", "websockets>=10.4", "spaces"]


def make_venv(venv: Path, requirements: Path, extra: Sequence[str] = ()) -> Path:
    """``venv`` (created when missing) with ``requirements`` installed as a Space installs it: the file
    copied alone into an empty folder, in one pip command with ``extra``; returns its python."""
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    alone = Path(tempfile.mkdtemp(prefix="lawluo-requirements-")) / "requirements.txt"
    shutil.copy2(requirements, alone)
    try:
        subprocess.run(
            [
                str(python),
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "-r",
                str(alone),
                *extra,
            ],
            check=True,
        )
    finally:
        shutil.rmtree(alone.parent, ignore_errors=True)
    return python


def pinned_versions(requirements: Path) -> dict[str, str]:
    """Name (lower case, ``-`` for ``_`` and ``.``) → version of every ``name==version`` line."""
    pins = {}
    for line in requirements.read_text(encoding="utf-8").splitlines():
        match = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)$", line.split("#", 1)[0].strip())
        if match:
            pins[re.sub(r"[-_.]+", "-", match[1]).lower()] = match[2]
    return pins


def check_pins(python: Path, requirements: Path) -> str:
    """Raises SmokeFailure unless every pin of ``requirements`` is installed in ``python``'s environment at
    its version (a local label such as torch's ``+cpu`` aside); returns what it saw, for the log."""
    listed = subprocess.run(
        [str(python), "-m", "pip", "list", "--format=json", "--disable-pip-version-check"],
        check=True,
        capture_output=True,
    ).stdout
    installed = {re.sub(r"[-_.]+", "-", p["name"]).lower(): p["version"] for p in json.loads(listed)}
    pins = pinned_versions(requirements)
    wrong = {
        name: (version, installed.get(name))
        for name, version in pins.items()
        if (installed.get(name) or "").split("+")[0] != version
    }
    if wrong:
        raise SmokeFailure(
            f"installed versions differ from requirements.txt's pins (pin, installed): {wrong}"
        )
    return f"{len(pins)} pins installed as pinned"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def space_environ(port: int) -> dict[str, str]:
    """The environment of a Space without secrets: none of this shell's LawLuo or OpenAI settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LAWLUO_", "OPENAI_", "GRADIO_"))}
    env.update(
        GRADIO_SERVER_NAME="127.0.0.1",
        GRADIO_SERVER_PORT=str(port),
        GRADIO_ANALYTICS_ENABLED="False",
        PYTHONUNBUFFERED="1",
    )
    return env


class Http:
    """urllib with a cookie jar (the app binds a consultation to its visitor cookie)."""

    def __init__(self, base: str, timeout: float):
        self.base = base.rstrip("/")
        self.timeout = timeout
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar())
        )

    def get(self, path: str) -> tuple[int, str]:
        try:
            with self.opener.open(self.base + path, timeout=self.timeout) as r:
                return r.status, r.read().decode("utf-8", "replace")
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode("utf-8", "replace")

    def call(self, api_name: str, data: list, session: str) -> list:
        """Gradio's HTTP API: POST the inputs, then read the event stream to its ``complete`` event."""
        body = json.dumps({"data": data, "session_hash": session}).encode()
        request = urllib.request.Request(
            f"{self.base}/gradio_api/call/{api_name}", body, {"Content-Type": "application/json"}
        )
        try:
            with self.opener.open(request, timeout=self.timeout) as r:
                event_id = json.load(r)["event_id"]
        except (urllib.error.URLError, KeyError, ValueError) as exc:
            raise SmokeFailure(f"/{api_name}: the call was refused ({exc})") from exc
        status, stream = self.get(f"/gradio_api/call/{api_name}/{event_id}")
        events = re.findall(r"^event: (\w+)\ndata: (.*)$", stream, re.M)
        if status != 200 or not events:
            raise SmokeFailure(f"/{api_name}: HTTP {status}, no events: {stream[:300]!r}")
        kind, payload = events[-1]
        if kind != "complete":
            raise SmokeFailure(f"/{api_name} ended with event {kind}: {payload[:300]}")
        return json.loads(payload)


def wait_for_page(http: Http, process: subprocess.Popen, timeout: float) -> tuple[float, str]:
    """Poll ``/`` until it answers 200; (seconds since start, page). Fails if the app exits or times out."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if process.poll() is not None:
            raise SmokeFailure(f"the app exited with status {process.returncode} before serving the page")
        try:
            status, page = http.get("/")
        except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
            status, page = 0, ""
        if status == 200:
            return time.monotonic() - start, page
        time.sleep(0.25)
    raise SmokeFailure(f"the page did not answer 200 within {timeout:.0f} s")


def text_of(value) -> str:
    """Everything a Gradio output holds, as one string (chat messages, HTML, dicts)."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def run_checks(http: Http, page: str) -> list[tuple[str, Callable[[], str]]]:
    """The checks after the page is up, each returning what it saw (for the log) or raising SmokeFailure."""

    def expect(condition: bool, message: str) -> None:
        if not condition:
            raise SmokeFailure(message)

    def page_check() -> str:
        status, config = http.get("/config")
        expect("律罗" in page or (status == 200 and "律罗" in config), "the page is not LawLuo's (no 律罗)")
        return "200, 律罗"

    def health() -> str:
        status, body = http.get("/healthz")
        expect(status == 200, f"/healthz answered {status}: {body[:300]}")
        report = json.loads(body)
        expect(
            report.get("status") == "ok", f"/healthz status {report.get('status')}: {report.get('problems')}"
        )
        expect(report["statute_db"].get("available") is True, "/healthz: statute database not available")
        return f"ok, {report['statute_db']['articles']} articles, indexes {report['indexes']}"

    def search() -> str:
        found = text_of(http.call("search_statutes", ["试用期 解除劳动合同", 3], uuid.uuid4().hex)[0])
        expect("劳动合同法" in found, f"statute search found no 劳动合同法: {found[:300]}")
        return f"{found.count('ll-card')} result cards, 劳动合同法 among them"

    def citations() -> str:
        # The raw HTTP API takes every input: the text and the date it was written ("" = today's law).
        report = http.call("check_citations_json", [CITATIONS, ""], uuid.uuid4().hex)[0]
        report = json.loads(report) if isinstance(report, str) else report
        verdicts = [c.get("verdict") for c in report.get("citations", [])]
        expect(
            verdicts == ["verified", "repealed"], f"citation verdicts {verdicts}, expected verified, repealed"
        )
        return "verified, repealed"

    def consultation() -> str:
        session = uuid.uuid4().hex
        asked = http.call("ask", [QUESTION, True, 3, 2, ""], session)  # "": no date of the facts
        expect("劳动" in text_of(asked[2]), f"/ask routed the question elsewhere: {text_of(asked[2])[:200]}")
        answered = text_of(http.call("answer", [], session))
        expect("劳动合同" in answered, f"the model-free answer cites no labour law: {answered[:300]}")
        expect("没有经过语言模型" in answered, f"the answer lacks the no-model notice: {answered[-300:]}")
        return "asked, answered without a model"

    return [
        ("page", page_check),
        ("/healthz", health),
        ("statute search", search),
        ("citation check", citations),
        ("model-free consultation", consultation),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--venv", type=Path, help="virtual environment to (create and) use (default: a fresh one)"
    )
    parser.add_argument(
        "--no-install", action="store_true", help="use --venv as it is (requirements.txt already installed)"
    )
    parser.add_argument("--start-timeout", type=float, default=180.0, help="seconds to wait for the page")
    parser.add_argument("--call-timeout", type=float, default=120.0, help="seconds per HTTP request")
    parser.add_argument("--keep", action="store_true", help="keep the copy (and a fresh venv)")
    args = parser.parse_args(argv)
    if args.no_install and not args.venv:
        parser.error("--no-install needs --venv (a fresh venv has nothing installed)")

    t0 = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix="lawluo-space-"))
    space, venv = work / "space", args.venv or work / "venv"
    process = None
    try:
        try:
            entry = app_file(ROOT)
            count = copy_as_space(ROOT, space)
            print(f"space smoke: {count} files copied; app_file {entry}", flush=True)
            if not (space / entry).is_file():
                raise SmokeFailure(f"app_file {entry} is not among the committed files")
            t_pip = time.monotonic()
            if args.no_install:
                python = venv / "bin" / "python"
            else:
                python = make_venv(venv, space / "requirements.txt", space_packages(space))
                print(
                    f"space smoke: requirements.txt installed in {time.monotonic() - t_pip:.0f} s", flush=True
                )
        except (OSError, subprocess.CalledProcessError) as exc:
            print(f"space smoke: SET-UP FAILED 准备失败: {exc}", file=sys.stderr)
            return 2
        print(f"space smoke: {check_pins(python, space / 'requirements.txt')}", flush=True)
        port = free_port()
        log = (work / "app.log").open("w+", encoding="utf-8")
        process = subprocess.Popen(
            [str(python), entry], cwd=space, env=space_environ(port), stdout=log, stderr=subprocess.STDOUT
        )
        http = Http(f"http://127.0.0.1:{port}", args.call_timeout)
        seconds, page = wait_for_page(http, process, args.start_timeout)
        print(f"space smoke: first 200 after {seconds:.1f} s", flush=True)
        for name, check in run_checks(http, page):
            print(f"space smoke: {name}: {check()}", flush=True)
        print(f"space smoke: PASSED in {time.monotonic() - t0:.0f} s 全部通过", flush=True)
        return 0
    except (SmokeFailure, OSError, ValueError, KeyError, TypeError) as exc:  # OSError: URLError, a reset
        print(f"space smoke: FAILED 失败: {exc}", file=sys.stderr)
        log_file = work / "app.log"
        if log_file.exists():
            tail = log_file.read_text(encoding="utf-8", errors="replace").splitlines()[-30:]
            print("--- the app's last log lines ---\n" + "\n".join(tail), file=sys.stderr)
        return 1
    finally:
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
        if args.keep:
            print(f"space smoke: kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
