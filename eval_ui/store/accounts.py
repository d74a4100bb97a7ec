"""Annotators and their roles, and the invitations that let a Hugging Face account sign in."""

from __future__ import annotations

import re

from lawluo.i18n import message

from .errors import StoreError, short_name

ROLES = ("annotator", "admin")
#: A name that may be invited: a Hugging Face account's handle (letters, digits, ``-``, ``_``, ``.``).
INVITABLE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u2064\ufeff]")


class AccountsMixin:
    """Annotators, roles and invitations (a part of :class:`~eval_ui.store.AnnotationStore`)."""

    def add_annotator(self, name: str, role: str = "annotator", *, by: str = "", via: str = "") -> str:
        """Register ``name`` (idempotent); returns the role in effect.

        An existing annotator keeps their role, so calling this at every sign-in never demotes an
        admin; use :meth:`set_role` to change a role. A new registration is written to the audit log
        (action ``signup``; ``by``: who registered them, default themselves; ``via``: how they got in,
        also kept as ``joined_via``).
        """
        name = self._check_name(name)
        if role not in ROLES:
            raise StoreError(
                f"role {role!r} is not one of {', '.join(ROLES)}",
                message=message("store.role_invalid", roles=", ".join(ROLES)),
            )
        with self._write() as con:
            added = con.execute(
                "INSERT OR IGNORE INTO annotators (name, role, created, joined_via) VALUES (?, ?, ?, ?)",
                (name, role, self._clock(), via),
            ).rowcount
            if added:
                self._audit(con, by or name, "signup", name, {"role": role, "via": via})
            return con.execute("SELECT role FROM annotators WHERE name = ?", (name,)).fetchone()[0]

    def set_role(self, name: str, role: str, *, by: str = "", reason: str = "") -> None:
        """Change a registered annotator's role (audit log: ``role``, from and to, ``by`` and ``reason``)."""
        if role not in ROLES:
            raise StoreError(
                f"role {role!r} is not one of {', '.join(ROLES)}",
                message=message("store.role_invalid", roles=", ".join(ROLES)),
            )
        with self._write() as con:
            row = con.execute("SELECT role FROM annotators WHERE name = ?", (name,)).fetchone()
            if row is None:
                raise StoreError(f"no annotator named {short_name(name)}")
            if row[0] != role:
                con.execute("UPDATE annotators SET role = ? WHERE name = ?", (role, name))
                details = {"from": row[0], "to": role, "reason": reason}
                self._audit(con, by or "system", "role", name, details)

    def annotators(self) -> list[dict]:
        """Every annotator with role, creation time, how they joined (``joined_via``) and how many items
        are assigned and done."""
        rows = self._all(
            """SELECT a.name, a.role, a.created, a.joined_via,
                      COUNT(s.item_id) AS assigned,
                      COALESCE(SUM(s.status = 'done'), 0) AS done
               FROM annotators a LEFT JOIN assignments s ON s.annotator = a.name
               GROUP BY a.name ORDER BY a.name"""
        )
        return [dict(r) for r in rows]

    def role(self, name: str) -> str | None:
        row = self._one("SELECT role FROM annotators WHERE name = ?", (name,))
        return None if row is None else row[0]

    def check_admin(self, name: str) -> None:
        """Raise :class:`StoreError` unless ``name`` is an admin (guard for the statistics views)."""
        if self.role(name) != "admin":
            raise StoreError(f"{name!r} is not an admin; only admins see everyone's labels")

    @staticmethod
    def _check_name(name: object) -> str:
        """``name`` stripped; refused unless a non-empty string of at most 100 characters without control
        or invisible characters (the message quotes at most 40 of them)."""
        if (
            not isinstance(name, str)
            or not name.strip()
            or len(name.strip()) > 100
            or _CONTROL.search(name.strip())
        ):
            raise StoreError(
                "名字须为 1–100 个字符、不含控制字符 a name must be 1 to 100 characters without control "
                f"characters, got {short_name(name)}",
                message=message("store.name_invalid"),
            )
        return name.strip()

    # -- invitations ----------------------------------------------------------------------------

    @classmethod
    def _check_invitable(cls, name: object) -> str:
        """``name`` as a Hugging Face account handle (:data:`INVITABLE_NAME`), else :class:`StoreError`."""
        name = cls._check_name(name)
        if not INVITABLE_NAME.fullmatch(name):
            raise StoreError(
                "只能邀请 Hugging Face 用户名（字母、数字、- _ .） only a Hugging Face username can be invited "
                f"(letters, digits, '-', '_', '.'), got {short_name(name)}",
                message=message("store.not_invitable", name=short_name(name)),
            )
        return name

    def invite(self, name: str, role: str = "annotator", *, by: str) -> dict:
        """Let the Hugging Face account ``name`` sign in as ``role``; returns the invitation.

        Inviting again with another role changes the invitation's role (the role in effect changes at the
        account's next request). Written to the audit log (``invite``, with the previous role if any).
        """
        name = self._check_invitable(name)
        if role not in ROLES:
            raise StoreError(
                f"role {role!r} is not one of {', '.join(ROLES)}",
                message=message("store.role_invalid", roles=", ".join(ROLES)),
            )
        now = self._clock()
        with self._write() as con:
            old = con.execute("SELECT role FROM invitations WHERE name = ?", (name,)).fetchone()
            if old is None or old[0] != role:
                con.execute(
                    "INSERT OR REPLACE INTO invitations (name, role, invited_by, invited_at) VALUES (?, ?, ?, ?)",
                    (name, role, by, now),
                )
                self._audit(con, by, "invite", name, {"role": role, "previous_role": old and old[0]})
            row = con.execute("SELECT * FROM invitations WHERE name = ?", (name,)).fetchone()
        return dict(row)

    def uninvite(self, name: str, *, by: str) -> int:
        """Withdraw ``name``'s invitation and release their reservations without a label at once (their
        labels stay); returns how many were released. :class:`StoreError` when there is no invitation."""
        name = self._check_name(name)
        with self._write() as con:
            row = con.execute("SELECT role FROM invitations WHERE name = ?", (name,)).fetchone()
            if row is None:
                raise StoreError(
                    f"没有这个邀请 no invitation for {short_name(name)}",
                    message=message("store.no_invitation", name=short_name(name)),
                )
            con.execute("DELETE FROM invitations WHERE name = ?", (name,))
            released = con.execute(
                "DELETE FROM assignments WHERE annotator = ? AND status != 'done' AND NOT EXISTS "
                "(SELECT 1 FROM labels l WHERE l.annotator = assignments.annotator "
                "AND l.item_id = assignments.item_id)",
                (name,),
            ).rowcount
            self._audit(con, by, "uninvite", name, {"role": row[0], "released": released})
        return released

    def invitation(self, name: str) -> str | None:
        """The role ``name`` is invited as, or None."""
        row = self._one("SELECT role FROM invitations WHERE name = ?", (name,))
        return None if row is None else row[0]

    def invitations(self) -> list[dict]:
        """Every invitation (``name, role, invited_by, invited_at``), by name."""
        return [dict(r) for r in self._all("SELECT * FROM invitations ORDER BY name")]
