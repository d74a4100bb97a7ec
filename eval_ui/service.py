"""What the annotation and statistics tabs share: the store, who is signed in, and each answer's statutes.

    service = AnnotationService.from_settings(settings, checker)   # opens <annotation_dir>/annotations.sqlite
    who = service.identify(request, profile)       # Identity("alice", "annotator") or None (not signed in)

Sign-in. With ``annotation_users`` set (a users file or list, :mod:`eval_ui.auth`) the app is launched
with Gradio's login form (``auth=service.users.check``) and ``request.username`` names the annotator;
their role comes from the file (being in the file is the invitation). On a Hugging Face Space with
``hf_oauth: true`` and no users file, the tab shows Hugging Face's sign-in button and the profile's
username names them, but **signing in makes nobody an annotator**: only accounts the admin let in are
admitted (:meth:`AnnotationService.admission`): the names in ``annotation_admins`` (always admins),
accounts invited in the store (``python -m eval_ui invite NAME``, or the admin's form; as annotator
or admin), and members of the Hugging Face organisations in ``annotation_orgs`` (annotators; read from
the ``orgs`` claim Hugging Face puts in the profile, :func:`profile_orgs`). Anyone else reads that they
have not been invited, and nothing is stored for them. Without either nobody can annotate and the tab
says how to configure sign-in.

On start, an empty store gets the demo comparison set (``assets/eval/demo_items.jsonl``), every user
of the users file is registered, and items are assigned so each is labelled by ``annotation_overlap``
annotators (fewer while fewer have signed up: a newcomer tops the items up, see
:meth:`AnnotationStore.assign`). Assignments are reservations: one left untouched for
``annotation_reserve_idle_s`` goes to a newcomer, or to an annotator who has run out of items.
Every sign-up, invitation, role change, import and export is in the store's audit log.
"""

from __future__ import annotations

import logging
import os
import re
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from lawluo.config import Settings
from lawluo.law.checker import CitationChecker

from .auth import Users, load_users
from .demo import DEMO_ITEMS
from .items import read_items
from .statutes import CitedStatute, cited_statutes
from .store import AnnotationStore, StoreError

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


def name_list(text: str | None) -> frozenset[str]:
    """The names of a comma-separated setting (``annotation_admins``, ``annotation_orgs``).

    >>> sorted(name_list(" lawfirm, ,Bar-Assoc "))
    ['Bar-Assoc', 'lawfirm']
    """
    return frozenset(n.strip() for n in (text or "").split(",") if n.strip())


def profile_orgs(profile: object) -> tuple[str, ...]:
    """The handles of the Hugging Face organisations a signed-in user belongs to, from their profile.

    ``gr.OAuthProfile`` is a dict of the OpenID Connect userinfo Hugging Face returned at sign-in
    (gradio/oauth.py; it names only ``name``, ``username``, ``profile`` and ``picture`` as attributes).
    Hugging Face adds an ``orgs`` claim: one object per organisation, whose ``preferred_username`` is
    the organisation's handle (``name`` is its display name, which is not unique). Without that claim
    the tuple is empty and organisation membership cannot admit anyone. The profile is the one stored
    in the signed session cookie at sign-in, so it shows the memberships of that moment.

    >>> profile_orgs({"preferred_username": "li", "orgs": [{"name": "Law Firm", "preferred_username": "lawfirm"}]})
    ('lawfirm',)
    >>> profile_orgs(None), profile_orgs({"orgs": "lawfirm"})
    ((), ())
    """
    orgs = profile.get("orgs") if isinstance(profile, Mapping) else None
    if not isinstance(orgs, list):
        return ()
    handles = (o.get("preferred_username") for o in orgs[:500] if isinstance(o, Mapping))
    return tuple(h for h in handles if isinstance(h, str) and h)


class AnnotationService:
    def __init__(
        self,
        store: AnnotationStore,
        *,
        users: Users | None = None,
        checker: CitationChecker | None = None,
        overlap: int = 2,
        seed: int | None = None,
        admins: frozenset[str] = frozenset(),
        orgs: frozenset[str] = frozenset(),
        oauth: bool = False,
        show_checker: bool = False,
        guidelines: tuple[str, str] = ("", ""),
    ):
        self.store, self.users, self.checker = store, users, checker
        self.overlap, self.seed, self.admins, self.oauth = overlap, seed, admins, oauth
        self.orgs = frozenset(o.casefold() for o in orgs)  # Hugging Face handles are case-insensitive
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
        service = cls.for_settings(settings, checker, guidelines=read_guidelines())
        store, users = service.store, service.users
        if demo and store.item_count() == 0 and DEMO_ITEMS.exists():
            n = store.import_items(read_items(DEMO_ITEMS), actor="system", source=DEMO_ITEMS.name)
            logger.info("annotation store was empty: imported %d demo items", n)
        if users is not None:
            for name in users.passwords:
                service.register(name, users.role(name) or "annotator", assign=False, by="system")
        service.assign()  # once for everyone, not once per user; releases stale reservations
        return service

    @classmethod
    def for_settings(
        cls,
        settings: Settings,
        checker: CitationChecker | None = None,
        *,
        guidelines: tuple[str, str] = ("", ""),
    ) -> AnnotationService:
        """The service of ``settings`` on its store, nothing imported or assigned (the command line's)."""
        users = load_users(settings.annotation_users)
        settings.annotation_dir.mkdir(parents=True, exist_ok=True)
        store = AnnotationStore(
            settings.annotation_dir / STORE_FILE,
            assignment=settings.annotation_assignment,
            reserve_idle_s=settings.annotation_reserve_idle_s,
        )
        return cls(
            store,
            users=users,
            checker=checker,
            overlap=settings.annotation_overlap,
            seed=settings.annotation_seed,
            admins=name_list(settings.annotation_admins),
            orgs=name_list(settings.annotation_orgs),
            oauth=users is None and on_space_with_oauth(),
            show_checker=settings.annotation_show_checker,
            guidelines=guidelines,
        )

    @property
    def sign_in(self) -> str | None:
        """``password`` (Gradio's login form), ``oauth`` (Hugging Face) or None (not configured)."""
        return "password" if self.users is not None else "oauth" if self.oauth else None

    def register(self, name: str, role: str, assign: bool = True, *, by: str = "", via: str = "") -> Identity:
        """Add the annotator (or change their role to ``role``: the users file, the admins setting or the
        invitation decides) and top up the assignments. Both are in the audit log."""
        via = via or ("users_file" if self.users is not None else "")
        with self._lock:
            known = self.store.role(name)
            if known is None:
                self.store.add_annotator(name, role, by=by, via=via)
            elif known != role:
                self.store.set_role(name, role, by=by or "system", reason=via)
            if assign:
                self._assign()
            return Identity(name, role)

    def pool(self) -> list[str]:
        """The registered annotators who may be given items: those who may still sign in as annotators.

        Users file: its annotators. Hugging Face: annotators invited as such, or who joined through an
        organisation still in ``annotation_orgs``. Neither (tests, the command line off a Space): every
        registered annotator.
        """
        people = [a for a in self.store.annotators() if a["role"] == "annotator"]
        if self.users is not None:
            return [a["name"] for a in people if self.users.role(a["name"]) == "annotator"]
        if not self.oauth:
            return [a["name"] for a in people]
        invited = {i["name"]: i["role"] for i in self.store.invitations()}
        return [
            a["name"]
            for a in people
            if a["name"] not in self.admins
            and (
                invited.get(a["name"]) == "annotator"
                or (a["joined_via"].startswith("org:") and a["joined_via"][4:].casefold() in self.orgs)
            )
        ]

    def assign(self) -> int:
        """Give every item up to ``overlap`` annotators (as many as there are, while fewer), releasing
        stale reservations to annotators who lack the item (:meth:`AnnotationStore.assign`)."""
        with self._lock:
            return self._assign()

    def _assign(self) -> int:
        pool = self.pool()
        if not pool or not self.store.item_count():
            return 0
        return self.store.assign(min(self.overlap, len(pool)), self.seed, annotators=pool)

    def top_up(self, who: Identity) -> int:
        """Give ``who`` more work when they have nothing left to label: items short of annotators or
        held by stale reservations (0 for an admin, when there is none, or when the store cannot be
        written just now: they read that nothing is left, as before, and the server log says why)."""
        if who.is_admin:
            return 0
        try:
            return self.assign()
        except StoreError as exc:
            logger.warning("annotation: could not top up %s's items: %s", who.name, exc)
            return 0

    def admission(self, name: str, orgs: Iterable[str] = ()) -> tuple[str | None, str]:
        """(role, how) for the Hugging Face account ``name`` of organisations ``orgs``; (None, "") when
        it is not let in. In this order: ``annotation_admins`` (admin), an invitation (its role), a
        membership of an organisation of ``annotation_orgs`` (annotator)."""
        if name in self.admins:
            return "admin", "admins_setting"
        invited = self.store.invitation(name)
        if invited is not None:
            return invited, "invitation"
        member = sorted({o.casefold() for o in orgs if isinstance(o, str)} & self.orgs)
        if member:
            return "annotator", f"org:{member[0]}"
        return None, ""

    def identify(
        self, username: str | None, oauth_name: str | None = None, orgs: Iterable[str] = ()
    ) -> Identity | None:
        """Who sent a request: the Gradio-auth user, else the admitted Hugging Face user; None when
        nobody, or when the Hugging Face account is not let in (then nothing is stored for it).

        ``orgs``: the handles of the account's Hugging Face organisations (:func:`profile_orgs`).
        """
        if username and self.users is not None:
            role = self.users.role(username)
            if role is None:  # not (any more) in the users file
                return None
            known = self.store.role(username)
            return Identity(username, role) if known == role else self.register(username, role)
        if oauth_name and self.oauth:
            role, via = self.admission(oauth_name, orgs)
            if role is None:
                return None
            known = self.store.role(oauth_name)
            return Identity(oauth_name, role) if known == role else self.register(oauth_name, role, via=via)
        return None

    def not_invited(self, oauth_name: str | None) -> bool:
        """Whether a request :meth:`identify` refused came from a Hugging Face account that is signed in
        but not let in (the tab tells them to ask the admin), rather than from nobody signed in."""
        return bool(oauth_name) and self.oauth and self.users is None

    # -- invitations (admins) ---------------------------------------------------------------------

    def invite(self, name: str, role: str, by: str) -> dict:
        """Invite the Hugging Face account ``name`` as ``role`` (:meth:`AnnotationStore.invite`)."""
        return self.store.invite(name, role, by=by)

    def uninvite(self, name: str, by: str) -> int:
        """Withdraw the invitation; the account's untouched reservations go to others at once."""
        released = self.store.uninvite(name, by=by)
        if released:
            self.assign()
        return released

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
