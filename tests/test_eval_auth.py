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
