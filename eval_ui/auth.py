"""Who may sign in to the annotation tab, for self-hosting with Gradio's own login form.

The users come from the setting ``annotation_users``: a file of ``name:password[:role]`` lines, or the
same entries separated by commas (a Space secret such as
``LAWLUO_ANNOTATION_USERS="alice:…:admin,bob:…"``). ``role`` is ``annotator`` (the default) or
``admin``. A password is either plain text or a ``pbkdf2_sha256$iterations$salt$hash`` string made by
``python -m eval_ui hash-password`` (PBKDF2-HMAC-SHA256, RFC 8018), so a users file need not hold
plain passwords. Comparison is constant-time. On a Hugging Face Space, HF OAuth (``hf_oauth: true``
in the README front matter) signs people in with their Hugging Face account instead.

    users = load_users(settings.annotation_users)
    demo.launch(auth=users.check)          # Gradio calls check(username, password) → bool
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
from dataclasses import dataclass
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


def _matches(stored: str, given: str) -> bool:
    if stored.startswith(PREFIX + "$"):
        try:
            _, iterations, salt, digest = stored.split("$")
            expected = base64.b64decode(digest)
            actual = hashlib.pbkdf2_hmac("sha256", given.encode(), base64.b64decode(salt), int(iterations))
        except ValueError:
            return False
        return hmac.compare_digest(expected, actual)
    return hmac.compare_digest(stored.encode(), given.encode())


@dataclass(frozen=True)
class Users:
    passwords: dict[str, str]
    roles: dict[str, str]

    def check(self, username: str, password: str) -> bool:
        """Gradio's ``auth`` callable: the name is known and the password matches."""
        stored = self.passwords.get((username or "").strip())
        return stored is not None and _matches(stored, password or "")

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
