"""Who may sign in to the annotation tab: users from a file or a secret, hashed or plain passwords."""

from __future__ import annotations

import pytest

from eval_ui.auth import UsersError, hash_password, load_users, parse_users


def test_users_from_comma_separated_entries_with_roles():
    users = parse_users("alice:pw1:admin, bob:pw2,carol:a:b:c")
    assert len(users) == 3
    assert users.check("alice", "pw1") and not users.check("alice", "pw2")
    assert users.role("alice") == "admin" and users.role("bob") == "annotator"
    assert users.check("carol", "a:b:c")  # a colon inside a password is kept (no role suffix)
    assert not users.check("mallory", "pw1") and not users.check("", "") and users.role("mallory") is None


def test_hashed_passwords_verify_and_plain_text_is_not_the_hash():
    stored = hash_password("correct horse", iterations=1000)
    users = parse_users(f"alice:{stored}:admin")
    assert users.check("alice", "correct horse")
    assert not users.check("alice", "correct horsE") and not users.check("alice", stored)
    assert hash_password("x", 1000) != hash_password("x", 1000)  # a fresh salt each time


def test_users_file_with_comments(tmp_path):
    f = tmp_path / "users.txt"
    f.write_text("# lawyers of the pilot\nalice:pw1:admin\n\nbob:pw2\n", encoding="utf-8")
    users = load_users(str(f))
    assert users.check("bob", "pw2") and users.role("alice") == "admin"
    assert load_users(None) is None and load_users("  ") is None


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("alice", "is not a file"),
        ("alice:pw,alice:pw2", "appears twice"),
        (":pw", "entry 1 is not name:password"),
        ("bob:", "entry 1 is not name:password"),
    ],
)
def test_bad_user_entries_are_named(spec, message):
    with pytest.raises(UsersError, match=message):
        load_users(spec)


def test_a_long_inline_list_of_users_is_read_as_entries_not_as_a_file_name():
    from eval_ui.auth import load_users

    spec = ",".join(f"annotator{i}:password-{i}" for i in range(30))  # over 255 characters
    users = load_users(spec)
    assert len(spec) > 255 and len(users) == 30 and users.check("annotator29", "password-29")


def test_module_doctests():
    import doctest

    import eval_ui.auth

    assert doctest.testmod(eval_ui.auth).failed == 0


def test_known_and_unknown_names_do_the_same_pbkdf2_work(monkeypatch):
    """The attack: a known name answered in 88 ms (PBKDF2), an unknown one in 4 ms. Now every check runs
    exactly one PBKDF2 with the stored hashes' iteration count, whatever the name and however the
    password is stored (counted, not timed)."""
    import hashlib

    import eval_ui.auth

    users = parse_users(
        f"alice:{hash_password('alice-pw', 1000)},bob:{hash_password('bob-pw', 1000)},carol:plain"
    )
    calls, real = [], hashlib.pbkdf2_hmac

    def pbkdf2_hmac(name, password, salt, iterations):
        calls.append((name, iterations, len(salt)))
        return real(name, password, salt, iterations)

    monkeypatch.setattr(eval_ui.auth.hashlib, "pbkdf2_hmac", pbkdf2_hmac)
    for who, password, ok in [
        ("alice", "wrong", False),  # known, hashed
        ("alice", "alice-pw", True),
        ("carol", "wrong", False),  # known, plain text
        ("carol", "plain", True),
        ("mallory", "wrong", False),  # unknown
        ("", "", False),
        ("alice", users.passwords["bob"], False),
    ]:
        calls.clear()
        assert users.check(who, password) is ok
        assert calls == [("sha256", 1000, 16)], who


def test_the_decoy_takes_the_iteration_count_most_hashes_use():
    assert parse_users("alice:pw").decoy[0] == 260_000  # no hashes: the count python -m eval_ui uses
    mixed = ",".join(
        [f"u{i}:{hash_password('x', 1000)}" for i in range(2)]
        + [f"v{i}:{hash_password('x', 2000)}" for i in range(3)]
    )
    assert parse_users(mixed).decoy[0] == 2000


def test_a_malformed_hash_never_matches():
    users = parse_users("alice:pbkdf2_sha256$0$c2FsdA==$,bob:pbkdf2_sha256$x")
    assert not users.check("alice", "pbkdf2_sha256$0$c2FsdA==$") and not users.check("bob", "pbkdf2_sha256$x")
