"""``GET /healthz``: what the running app can serve, as JSON, for Docker, compose and load balancers.

The route is a plain Starlette route of the app's FastAPI server, passed to every launch in
``launch(app_kwargs={"routes": [health_route(settings)]})`` (``app.launch_options``): Gradio gives its
``App`` (a ``FastAPI``) every ``app_kwargs`` entry, and FastAPI's ``routes`` are served beside Gradio's
own. So a health check never waits in Gradio's queue, never takes one of its worker threads, and needs
no sign-in even when the app sits behind the annotators' login (Gradio's login guards only its own routes).

The answer (status 200 when ``ok``, 503 when ``degraded``, so that a load balancer drops a broken replica)::

    {"status": "ok", "problems": [], "version": "0.1.0", "commit": "3f2c…" | null,
     "statute_db": {"available": true, "sha256": "…", "source_sha256": "…", "articles": 64496},
     "indexes": {"statutes": "shipped", "cases": "cached", "clarifications": "stale", …},
     "annotation_store": {"writable": true},          # or {"writable": false, "reason": "disk_full"}
     "models": {"lawyer": {"configured": true, "backend": "openai"}, "clarifier": {…}, …},
     "uptime_s": 12.3}

``degraded`` means the statute database cannot be read (search, citation checks and the consultation
are off) or the annotation store cannot be written (annotations would be lost). A role without
a model is not a fault: the app answers without one. An index is ``shipped`` (the prebuilt one, its
recorded source files' sha256 those of the assets now), ``cached`` (built on this machine), ``stale`` (a
prebuilt one of other assets and no cache yet: the app is rebuilding it) or ``missing`` (built when first
needed). Nothing in the answer names a URL, an API key, a model name or a path: the route is
public. The database's sha256 is computed once per file version (size, mtime), so an answer costs a few
``stat`` calls after the first (about 0.1 s for the 30 MB database).

**The annotation store is written, not only looked at** (:func:`annotation_store_check`): a folder that
``os.access`` calls writable may sit on a full or read-only disk. A 4 KiB probe file is written beside
the store, fsynced and deleted — the blocks a label's commit needs — and the ``reason`` of a refusal is a
word: ``missing``, ``read_only``, ``disk_full``, ``io_error`` or ``timeout`` (no answer within
:data:`STORE_TIMEOUT_S`). The probe runs at most once every :data:`STORE_CHECK_S` seconds, whatever
the number of requests (they share its result), in a thread of its own: never in the event loop,
never in one of Gradio's worker threads.

**Models, when asked** (``GET /healthz?models=1``, :func:`ping_models`): each distinct model backend
is pinged once (``ChatBackend.ping``, as ``python -m lawluo models --ping``: a one-token request, no
retry, :data:`PING_TIMEOUT_S`), and each role gets ``"reachable": true|false`` and, when false, an
``error`` word (``connection``, ``timeout``, ``auth``, ``rate_limited``, ``server_error``, ``rejected``,
``malformed``, ``unavailable``, ``error``) — never the exception's text, which may hold a URL or a
model name. A local model (``transformers``, ``reward_model``) is not pinged (``"reachable": null``):
a second copy would be loaded to do so. The pings run at most once every :data:`MODELS_CHECK_S`
seconds (a public URL must not spend tokens on each request). A configured role that does not answer
is a problem (503): point a load balancer at plain ``/healthz``, which never contacts a model, unless
replicas should leave the pool while their model server is down.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import os
import re
import sqlite3
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from ..config import Settings
from ..config.settings import PROJECT_ROOT
from ..data_sources import file_sha256
from ..retrieval.bm25 import read_meta
from ..retrieval.shipped import NAMES as INDEX_NAMES
from ..retrieval.shipped import SHIPPED_DIR

logger = logging.getLogger(__name__)

HEALTH_PATH = "/healthz"
#: Environment variable naming the commit the app runs (the Dockerfile's ``GIT_COMMIT`` build argument;
#: not ``LAWLUO_…``: the settings refuse unknown variables of that prefix); without it the commit is read
#: from the checkout's ``.git``, else unknown (a Space's copy has no ``.git``).
COMMIT_ENV = "GIT_COMMIT"
SHA256 = re.compile(r"[0-9a-f]{64}")
ANNOTATION_STORE_FILE = "annotations.sqlite"  # eval_ui.service.STORE_FILE (not imported: no Gradio tabs here)
#: The probe written (then deleted) beside the annotation store; 4 KiB: one page of tmpfs, one ext4 block.
PROBE_FILE = ".healthz-probe"
PROBE_BYTES = 4096
STORE_CHECK_S = 5.0  # the annotation store is probed at most this often
STORE_TIMEOUT_S = 3.0  # a probe not done by then: "timeout" (below the Docker HEALTHCHECK's 5 s)
MODELS_CHECK_S = 30.0  # the models are pinged at most this often
PING_TIMEOUT_S = 5.0
#: ``errno`` of a refused probe → the word the answer gives.
WRITE_REFUSALS = {
    errno.ENOSPC: "disk_full",
    errno.EDQUOT: "disk_full",
    errno.EFBIG: "disk_full",  # a file size limit: the store cannot grow either
    errno.EROFS: "read_only",
    errno.EACCES: "read_only",
    errno.EPERM: "read_only",
}
#: Backends that run in this process: pinging one would load a second copy of its model.
LOCAL_BACKENDS = ("transformers", "reward_model")


def _stat_key(path: Path) -> tuple[int, int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def _statute_facts(path: Path) -> dict:
    """Source hash and article count of the statute database (read-only; raises on a bad file)."""
    con = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)  # a '?' or '#' in a path: escaped
    try:
        meta = dict(con.execute("SELECT key, value FROM meta"))
        articles = con.execute("SELECT count(*) FROM articles").fetchone()[0]
    finally:
        con.close()
    source = meta.get("source_sha256")  # the file's own text: shown only when it is a hash
    return {
        "available": True,
        "source_sha256": source if isinstance(source, str) and SHA256.fullmatch(source) else None,
        "articles": int(articles),
    }


def _commit_id(text: str | None) -> str | None:
    """``text`` when it is a commit id (7–64 hex digits), else None: nothing else reaches the answer."""
    text = (text or "").strip()
    return text if re.fullmatch(r"[0-9a-f]{7,64}", text) else None


def git_commit(root: Path = PROJECT_ROOT) -> str | None:
    """The commit checked out at ``root`` read from ``.git`` (no ``git`` process), or None."""
    git = root / ".git"
    try:
        head = (git / "HEAD").read_text().strip()
        if not head.startswith("ref: "):
            return _commit_id(head)
        ref = head[5:]
        if (git / ref).is_file():
            return _commit_id((git / ref).read_text())
        for line in (git / "packed-refs").read_text().splitlines():
            if line.endswith(" " + ref):
                return _commit_id(line.split(" ", 1)[0])
    except OSError:
        return None
    return None


def annotation_store_check(folder: Path) -> dict:
    """``{"writable": True}`` when a 4 KiB probe file can be written, fsynced and deleted in ``folder`` (and
    the store there, if any, is readable and writable); else ``{"writable": False, "reason": word}`` with
    a word of :data:`WRITE_REFUSALS` (``missing`` for no folder, ``io_error`` for any other error)."""
    if not folder.is_dir():
        return {"writable": False, "reason": "missing"}
    store = folder / ANNOTATION_STORE_FILE
    if store.exists() and not os.access(store, os.R_OK | os.W_OK):
        return {"writable": False, "reason": "read_only"}
    probe = folder / PROBE_FILE
    try:
        # O_NOFOLLOW: a link planted at the probe's name is not written through
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o600)
        try:
            if os.write(fd, b"\0" * PROBE_BYTES) != PROBE_BYTES:  # a short write: the disk filled up
                raise OSError(errno.ENOSPC, "short write")
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as exc:
        return {"writable": False, "reason": WRITE_REFUSALS.get(exc.errno, "io_error")}
    finally:
        try:
            probe.unlink()
        except OSError:
            pass  # never created (or the folder is read-only): nothing to remove
    return {"writable": True}


def _ping_error(exc: BaseException) -> str:
    """A word for a failed ping: its class, never its text (which may hold a URL or a model name)."""
    from ..llm import errors

    kinds = (
        (errors.AuthenticationFailed, "auth"),
        (errors.RateLimited, "rate_limited"),
        (errors.ServerError, "server_error"),
        (errors.LLMTimeout, "timeout"),  # BudgetExceeded too: the ping's time ran out
        (errors.LLMConnectionError, "connection"),
        (errors.RequestRejected, "rejected"),
        (errors.MalformedResponse, "malformed"),
        (errors.ModelUnavailable, "unavailable"),
    )
    return next((word for cls, word in kinds if isinstance(exc, cls)), "error")


def ping_models(models, roles: dict[str, str], timeout: float = PING_TIMEOUT_S) -> dict[str, dict]:
    """``role → {"reachable": bool | None, "ping_s"?, "error"?}`` for the configured roles (``roles``: role
    → backend name): each distinct backend of ``models`` (a :class:`~lawluo.llm.LanguageModels`; roles
    sharing a backend share one ping) pinged once, all at once; a local backend is not pinged (None)."""
    from ..llm import gather

    pinged = {
        id(models[role]): models[role]
        for role, backend in roles.items()
        if backend != "none" and backend not in LOCAL_BACKENDS
    }

    def ping(backend) -> dict:
        start = time.perf_counter()
        try:
            backend.ping(timeout)
        except Exception as exc:  # a ping must not break the health answer, whatever the library raised
            return {"reachable": False, "error": _ping_error(exc)}
        return {"reachable": True, "ping_s": round(time.perf_counter() - start, 3)}

    results = dict(zip(pinged, gather([lambda b=b: ping(b) for b in pinged.values()]), strict=True))
    return {
        role: results.get(id(models[role]), {"reachable": None})
        for role, backend in roles.items()
        if backend != "none"
    }


class Throttled:
    """``check()`` run in a thread of its own at most once every ``every`` seconds (counted from a run's
    start); callers in between share the last result, or wait for the run in flight — one run at a time,
    however many callers. A caller waits at most ``timeout`` seconds, then gets ``late`` (the run goes
    on); a check that raises gives ``failed`` (and the server log the traceback)."""

    def __init__(
        self, check: Callable[[], dict], every: float, timeout: float, late: dict, failed: dict, name: str
    ) -> None:
        self._check = check
        self.every, self.timeout, self.late, self.failed = every, timeout, late, failed
        self._name = name
        self._lock = threading.Lock()
        self._future: Future | None = None
        self._started = float("-inf")

    def future(self) -> Future:
        with self._lock:
            stale = time.monotonic() - self._started >= self.every
            if self._future is None or (self._future.done() and stale):
                self._started = time.monotonic()
                self._future = Future()
                # a daemon thread: a check hung on a dead disk or server never holds up the app's exit
                threading.Thread(target=self._run, args=(self._future,), name=self._name, daemon=True).start()
            return self._future

    def _run(self, future: Future) -> None:
        try:
            future.set_result(self._check())
        except Exception:
            logger.exception("%s failed", self._name)
            future.set_result(self.failed)

    def result(self) -> dict:
        """The check's result (blocks up to ``timeout``)."""
        try:
            return self.future().result(self.timeout)
        except FutureTimeout:
            return self.late

    async def wait(self) -> dict:
        """:meth:`result` for the event loop: awaited, no thread taken."""
        try:
            return await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(self.future())), self.timeout)
        except TimeoutError:
            return self.late


def _cached(folder: Path) -> bool:
    """Whether ``folder`` holds a finished cached index (not one still being built)."""
    try:
        from ..retrieval.bm25 import CACHE_FILE
    except ImportError:
        CACHE_FILE = None
    return bool(CACHE_FILE and (folder / CACHE_FILE).is_file()) or (folder / "fingerprint.json").is_file()


class HealthProbe:
    """Answers ``/healthz`` for the app started with ``settings``: see the module's docstring."""

    def __init__(self, settings: Settings, *, version: str | None = None, commit: str | None = None):
        from .. import __version__

        self.settings = settings
        self.version = version or __version__
        self.commit = (
            commit if commit is not None else (_commit_id(os.environ.get(COMMIT_ENV)) or git_commit())
        )
        self.started = time.monotonic()
        folder = Path(settings.annotation_dir)
        self.store_check = Throttled(
            lambda: annotation_store_check(folder),
            STORE_CHECK_S,
            STORE_TIMEOUT_S,
            late={"writable": False, "reason": "timeout"},
            failed={"writable": False, "reason": "io_error"},
            name="healthz-store",
        )
        configured = [role for role, backend in self._roles().items() if backend != "none"]
        self.models_check = Throttled(
            self._ping_models,
            MODELS_CHECK_S,
            PING_TIMEOUT_S + 2,  # the pings' own budget, then their threads' start and end
            late={role: {"reachable": False, "error": "timeout"} for role in configured},
            failed={role: {"reachable": False, "error": "error"} for role in configured},
            name="healthz-models",
        )
        self._models = None  # the LanguageModels pinged, made on the first ?models=1
        self._db_key: tuple | None = None
        self._db_facts: dict = {}
        self._hashes: dict[Path, tuple[tuple, str]] = {}

    def _file_sha256(self, path: Path) -> str | None:
        """sha256 of ``path``, computed once per version of the file (None when it cannot be read)."""
        key = _stat_key(path)
        if key is None:
            return None
        cached = self._hashes.get(path)
        if cached is None or cached[0] != key:
            try:
                cached = (key, file_sha256(path))
            except OSError:
                return None
            self._hashes[path] = cached
        return cached[1]

    def statute_db(self) -> dict:
        path = Path(self.settings.statutes_path)
        key = _stat_key(path)
        if key is None:
            return {"available": False}
        if key != self._db_key:
            try:
                facts = _statute_facts(path)
                facts["sha256"] = self._file_sha256(path)
            except (OSError, sqlite3.Error, TypeError, ValueError):
                facts = {"available": False}
            self._db_key, self._db_facts = key, facts
        return dict(self._db_facts)

    def _matches_sources(self, index: Path) -> bool | None:
        """Whether the shipped ``index`` was built from the asset files there now (the sha256 its meta
        records for each); None when its meta cannot be read."""
        meta = read_meta(index)
        sources = meta.get("sources") if isinstance(meta, dict) else None
        if not isinstance(sources, dict):
            return None
        assets = Path(self.settings.assets_dir)
        for name, recorded in sources.items():
            path = Path(self.settings.domains_file) if name == "domains" else assets / str(name)
            if self._file_sha256(path) != recorded:
                return False
        return True

    def indexes(self) -> dict[str, str]:
        """name → ``shipped`` (the prebuilt index, built from these assets), ``cached`` (built here),
        ``stale`` (a prebuilt index of other assets and no cache yet: being rebuilt) or ``missing``."""
        shipped = Path(self.settings.assets_dir) / SHIPPED_DIR
        cache = Path(self.settings.cache_dir)
        out = {}
        for name in INDEX_NAMES:  # the prebuilt indexes of lawluo.retrieval.shipped
            index = shipped / f"{name}.npz"
            present = index.is_file()
            if present and self._matches_sources(index) is not False:
                out[name] = "shipped"
            elif _cached(cache / f"{name}-bm25"):
                out[name] = "cached"
            else:
                out[name] = "stale" if present else "missing"
        return out

    def _roles(self) -> dict[str, str]:
        return {role: config.backend for role, config in self.settings.models.items()}

    def _ping_models(self) -> dict[str, dict]:
        if self._models is None:
            from ..llm import LanguageModels

            self._models = LanguageModels(self.settings.models)  # contacts nothing until pinged
        return ping_models(self._models, self._roles())

    def report(self, models: bool = False) -> dict:
        """The answer (see the module's docstring); ``models``: ping them too. Blocks while a check runs."""
        store = self.store_check.result()
        pings = self.models_check.result() if models else None
        return self._answer(store, pings)

    def _answer(self, store: dict, pings: dict[str, dict] | None) -> dict:
        db = self.statute_db()
        problems = []
        if not db["available"]:
            problems.append("statute database unreadable 法规库不可读")
        if not store["writable"]:
            problems.append(f"annotation store not writable ({store['reason']}) 标注库不可写")
        roles = {
            role: {"configured": config.backend != "none", "backend": config.backend}
            for role, config in self.settings.models.items()
        }
        for role, ping in (pings or {}).items():
            roles[role].update(ping)
            if ping["reachable"] is False:
                problems.append(f"{role} model unreachable ({ping['error']}) 模型不可达")
        return {
            "status": "degraded" if problems else "ok",
            "problems": problems,
            "version": self.version,
            "commit": self.commit,
            "statute_db": db,
            "indexes": self.indexes(),
            "annotation_store": dict(store),
            "models": roles,
            "uptime_s": round(time.monotonic() - self.started, 1),
        }

    async def endpoint(self, request: Request) -> JSONResponse:
        # The checks that write or connect run in their own threads and are awaited here; the rest is a
        # few stat calls in the event loop, on purpose: no Gradio worker thread (those may all be busy).
        store = await self.store_check.wait()
        pings = None
        if request.query_params.get("models") in ("1", "true", "yes"):
            pings = await self.models_check.wait()
        body = self._answer(store, pings)
        return JSONResponse(
            body,
            status_code=200 if body["status"] == "ok" else 503,
            headers={"Cache-Control": "no-store"},
        )


def health_route(settings: Settings) -> Route:
    """The ``/healthz`` route for ``launch(app_kwargs={"routes": [health_route(settings)]})``."""
    return Route(HEALTH_PATH, HealthProbe(settings).endpoint, methods=["GET", "HEAD"])


__all__ = [
    "HEALTH_PATH",
    "HealthProbe",
    "Throttled",
    "annotation_store_check",
    "git_commit",
    "health_route",
    "ping_models",
]
