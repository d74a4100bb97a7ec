"""Who may sign in to the annotation tab, for self-hosting with Gradio's own login form.

The users come from the setting ``annotation_users``: a file of ``name:password[:role]`` lines, or the
same entries separated by commas (a Space secret such as
``LAWLUO_ANNOTATION_USERS="alice:…:admin,bob:…"``). ``role`` is ``annotator`` (the default) or
``admin``. A password is either plain text or a ``pbkdf2_sha256$iterations$salt$hash`` string made by
``python -m eval_ui hash-password`` (PBKDF2-HMAC-SHA256, RFC 8018), so a users file need not hold
plain passwords. Comparison is constant-time, and so is the whole check as far as a name can tell: every
``Users.check`` runs exactly one PBKDF2 of the given password, with the stored hash's parameters for a
hashed password and a decoy's for an unknown name or a plain-text password, so the answer's time does
not tell which names exist (OWASP Authentication Cheat Sheet, "Authentication and Error Messages"; the
decoy has the iteration count most stored hashes use). On a Hugging Face Space, HF OAuth (``hf_oauth: true``
in the README front matter) signs people in with their Hugging Face account instead.

    users = load_users(settings.annotation_users)
    demo.launch(auth=users.check)          # Gradio calls check(username, password) → bool
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

ROLES = ("annotator", "admin")
ITERATIONS = 260_000
PREFIX = "pbkdf2_sha256"


class UsersError(ValueError):
    """A users file or list that cannot be read; the message names the entry."""


def hash_password(password: str, iterations: int = ITERATIONS, salt: bytes | None = None) -> str:
    """A ``pbkdf2_sha256$…`` string for ``password`` (a fresh random salt unless given).

    >>> hash_password("secret", 1000, b"salt").split("$")[:3]
    ['pbkdf2_sha256', '1000', 'c2FsdA==']
    """
    salt = os.urandom(16) if salt is None else salt
    digest = hashlib.pbkdf2_hmac("sha256", password.encode(), salt, iterations)
    return f"{PREFIX}${iterations}${base64.b64encode(salt).decode()}${base64.b64encode(digest).decode()}"


def _parse_hash(stored: str) -> tuple[int, bytes, bytes] | None:
    """``(iterations, salt, digest)`` of a ``pbkdf2_sha256$…`` string; None for anything else.

    >>> _parse_hash(hash_password("secret", 1000, b"salt"))[:2], _parse_hash("plain"), _parse_hash(PREFIX + "$0$c2FsdA==$")
    ((1000, b'salt'), None, None)
    """
    if not stored.startswith(PREFIX + "$"):
        return None
    try:
        _, iterations, salt, digest = stored.split("$")
        parsed = int(iterations), base64.b64decode(salt), base64.b64decode(digest)
    except ValueError:  # binascii.Error is one
        return None
    return parsed if 1 <= parsed[0] < 2**31 else None


def _decoy(stored: Iterable[str]) -> tuple[int, bytes, bytes]:
    """What an unknown name or a plain-text password is hashed against: the iteration count most of the
    stored hashes use (the larger on a tie; ``ITERATIONS`` without hashes), a random salt and digest."""
    counts = Counter(parsed[0] for parsed in map(_parse_hash, stored) if parsed is not None)
    iterations = max(counts, key=lambda n: (counts[n], n)) if counts else ITERATIONS
    return iterations, os.urandom(16), os.urandom(32)


@dataclass(frozen=True)
class Users:
    passwords: dict[str, str]
    roles: dict[str, str]
    decoy: tuple[int, bytes, bytes] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "decoy", _decoy(self.passwords.values()))

    def check(self, username: str, password: str) -> bool:
        """Gradio's ``auth`` callable: the name is known and the password matches. Exactly one PBKDF2 runs
        whatever the name (the stored hash's, else the decoy's), so known and unknown names take the same
        time."""
        stored = self.passwords.get((username or "").strip())
        given = (password or "").encode()
        hashed = _parse_hash(stored) if stored is not None else None
        iterations, salt, digest = hashed or self.decoy
        matches = hmac.compare_digest(digest, hashlib.pbkdf2_hmac("sha256", given, salt, iterations))
        if hashed is not None:
            return matches
        # An unknown name or a plain-text password: the hash above was the decoy's, run for its time only.
        plain = stored is not None and not stored.startswith(PREFIX + "$")
        return plain and hmac.compare_digest(stored.encode(), given)

    def role(self, username: str) -> str | None:
        return self.roles.get(username)

    def __len__(self) -> int:
        return len(self.passwords)


def parse_users(text: str, where: str = "annotation_users") -> Users:
    """Users from ``name:password[:role]`` entries, one per line or separated by commas.

    >>> users = parse_users("alice:pw1:admin, bob:pw2")
    >>> users.check("bob", "pw2"), users.check("bob", "pw1"), users.role("alice")
    (True, False, 'admin')
    """
    passwords, roles, errors = {}, {}, []
    entries = [e.strip() for line in text.splitlines() for e in line.split(",")]
    for n, entry in enumerate(entries, start=1):
        if not entry or entry.startswith("#"):
            continue
        name, sep, rest = entry.partition(":")
        password, role = rest, "annotator"
        if rest.rsplit(":", 1)[-1] in ROLES and ":" in rest:
            password, role = rest.rsplit(":", 1)
        if not sep or not name.strip() or not password:
            errors.append(f"{where}: entry {n} is not name:password[:role]")
            continue
        if name.strip() in passwords:
            errors.append(f"{where}: user {name.strip()!r} appears twice")
        passwords[name.strip()], roles[name.strip()] = password, role
    if errors:
        raise UsersError("; ".join(errors))
    return Users(passwords, roles)


def load_users(spec: str | None) -> Users | None:
    """The users named by the setting: a file path, or the entries themselves; ``None`` when unset."""
    if not spec or not spec.strip():
        return None
    path = Path(spec)
    if ":" not in spec or _is_file(path):
        if not path.is_file():
            raise UsersError(
                f"annotation_users: {spec} is not a file (give a file of name:password[:role] lines)"
            )
        return parse_users(path.read_text(encoding="utf-8"), str(path))
    return parse_users(spec)


def _is_file(path: Path) -> bool:
    """Whether ``path`` names a file; a list of entries too long to be a file name is not one."""
    try:
        return path.is_file()
    except OSError:  # e.g. "File name too long": the setting holds the entries themselves
        return False
