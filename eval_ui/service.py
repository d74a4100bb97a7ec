"""What the annotation and statistics tabs share: the store, who is signed in, and each answer's statutes.

    service = AnnotationService.from_settings(settings, checker)   # opens <annotation_dir>/annotations.sqlite
    who = service.identify(request, profile)       # Identity("alice", "annotator") or None (not signed in)

Sign-in. With ``annotation_users`` set (a users file or list, :mod:`eval_ui.auth`) the app is launched
with Gradio's login form (``auth=service.users.check``) and ``request.username`` names the annotator;
their role comes from the file. On a Hugging Face Space with ``hf_oauth: true`` and no users file, the
tab shows Hugging Face's sign-in button and the profile's username names them; the names in
``annotation_admins`` are admins, everyone else an annotator. Without either nobody can annotate and
the tab says how to configure sign-in.

On start, an empty store gets the demo comparison set (``assets/eval/demo_items.jsonl``), every user
of the users file is registered, and items are assigned so each is labelled by ``annotation_overlap``
annotators (fewer while fewer have signed up: a newcomer tops the items up, see
:meth:`AnnotationStore.assign`).
"""

from __future__ import annotations

import logging
import os
import re
import threading
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from lawluo.config import Settings
from lawluo.law.checker import CitationChecker

from .auth import Users, load_users
from .demo import DEMO_ITEMS
from .items import read_items
from .statutes import CitedStatute, cited_statutes
from .store import AnnotationStore

logger = logging.getLogger(__name__)

STORE_FILE = "annotations.sqlite"
GUIDELINES = Path(__file__).resolve().parents[1] / "assets" / "eval" / "guidelines.md"
_FRONT_MATTER = re.compile(r"\A---\s*\n(.*?)\n---\s*\n", re.S)


@dataclass(frozen=True)
class Identity:
    name: str
    role: str

    @property
    def is_admin(self) -> bool:
        return self.role == "admin"


def read_guidelines(path: str | Path = GUIDELINES) -> tuple[str, str]:
    """(version, Markdown body) of the guidelines file; its front matter holds ``version: N``."""
    text = Path(path).read_text(encoding="utf-8")
    match = _FRONT_MATTER.match(text)
    version = ""
    if match:
        for line in match.group(1).splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "version":
                version = value.strip()
        text = text[match.end() :]
    return version, text


def on_space_with_oauth() -> bool:
    """A Hugging Face Space with ``hf_oauth: true`` (the Space sets these variables)."""
    return bool(os.environ.get("SPACE_ID") and os.environ.get("OAUTH_CLIENT_ID"))


class AnnotationService:
    def __init__(
        self,
        store: AnnotationStore,
        *,
        users: Users | None = None,
        checker: CitationChecker | None = None,
        overlap: int = 2,
        seed: int = 0,
        admins: frozenset[str] = frozenset(),
        oauth: bool = False,
        show_checker: bool = False,
        guidelines: tuple[str, str] = ("", ""),
    ):
        self.store, self.users, self.checker = store, users, checker
        self.overlap, self.seed, self.admins, self.oauth = overlap, seed, admins, oauth
        self.show_checker = show_checker
        self.guideline_version, self.guidelines = guidelines
        self._lock = threading.Lock()  # registration + assignment of newcomers, one at a time
        self._statutes = lru_cache(maxsize=4096)(self._cited)
        if (
            store.cited is None
        ):  # the store's "cited statutes" (none wrong, unlabelled ones) are the checker's
            store.cited = self.statute_keys

    @classmethod
    def from_settings(
        cls, settings: Settings, checker: CitationChecker | None = None, *, demo: bool = True
    ) -> AnnotationService:
        """Open the store, load the users, seed the demo items into an empty store, assign.

        Raises :class:`~eval_ui.auth.UsersError` for an unreadable users setting and
        :class:`~eval_ui.store.StoreError` for a store that cannot be opened (the app shows either).
        """
        users = load_users(settings.annotation_users)
        settings.annotation_dir.mkdir(parents=True, exist_ok=True)
        store = AnnotationStore(
            settings.annotation_dir / STORE_FILE, assignment=settings.annotation_assignment
        )
        admins = frozenset(n.strip() for n in (settings.annotation_admins or "").split(",") if n.strip())
        service = cls(
            store,
            users=users,
            checker=checker,
            overlap=settings.annotation_overlap,
            seed=settings.annotation_seed,
            admins=admins,
            oauth=users is None and on_space_with_oauth(),
            show_checker=settings.annotation_show_checker,
            guidelines=read_guidelines(),
        )
        if demo and store.item_count() == 0 and DEMO_ITEMS.exists():
            n = store.import_items(read_items(DEMO_ITEMS))
            logger.info("annotation store was empty: imported %d demo items", n)
        if users is not None:
            for name in users.passwords:
                service.register(name, users.role(name) or "annotator", assign=False)
            service.assign()  # once for everyone, not once per user
        return service

    @property
    def sign_in(self) -> str | None:
        """``password`` (Gradio's login form), ``oauth`` (Hugging Face) or None (not configured)."""
        return "password" if self.users is not None else "oauth" if self.oauth else None

    def register(self, name: str, role: str, assign: bool = True) -> Identity:
        """Add the annotator (the users file's role wins over the store's) and top up the assignments."""
        with self._lock:
            known = self.store.role(name)
            if known is None:
                self.store.add_annotator(name, role)
            elif known != role and (self.users is not None or role == "admin"):
                self.store.set_role(name, role)
            if assign:
                self.assign()
            return Identity(name, role)

    def assign(self) -> int:
        """Give every item up to ``overlap`` annotators (as many as there are, while fewer)."""
        pool = [a["name"] for a in self.store.annotators() if a["role"] == "annotator"]
        if not pool or not self.store.item_count():
            return 0
        return self.store.assign(min(self.overlap, len(pool)), self.seed)

    def identify(self, username: str | None, oauth_name: str | None = None) -> Identity | None:
        """Who sent a request: the Gradio-auth user, else the Hugging Face user; None when nobody."""
        if username and self.users is not None:
            role = self.users.role(username)
            if role is None:  # not (any more) in the users file
                return None
            known = self.store.role(username)
            return Identity(username, role) if known == role else self.register(username, role)
        if oauth_name and self.oauth:
            role = "admin" if oauth_name in self.admins else "annotator"
            known = self.store.role(oauth_name)
            return Identity(oauth_name, role) if known == role else self.register(oauth_name, role)
        return None

    def statutes(self, item_id: str, side: str) -> list[CitedStatute]:
        """The statutes answer ``side`` ('a' or 'b') of the item cites (cached: items do not change)."""
        return self._statutes(item_id, side)

    def statute_keys(self, item_id: str, side: str) -> list[str]:
        """The keys of :meth:`statutes` (what the store labels statutes by)."""
        return [c.key for c in self.statutes(item_id, side)]

    def _cited(self, item_id: str, side: str) -> list[CitedStatute]:
        item = self.store.item(item_id)
        if item is None:
            return []
        return cited_statutes(self.checker, item.answer_a if side == "a" else item.answer_b)
