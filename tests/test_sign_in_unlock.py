"""An admin lists the sign-in locks and lifts them: ``SignIn.locks``, ``SignIn.unlock`` and the admin tab's
handler ``unlock_form``."""

from __future__ import annotations

from eval_ui.login import SignIn, SignInLimits, unlock_form
from tests.test_login_guard import ALICE, BOB, Clock, CountingVerify, attempt


def locked(address_failures: int = 20) -> SignIn:
    """alice locked at 198.51.100.1, bob at 198.51.100.2, the address 198.51.100.3 locked, and alice slowed
    (her name failed from 12 addresses; ``name_failures=10``)."""
    slept = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    limits = SignInLimits(name_failures=10, address_failures=address_failures)
    guard = SignIn(CountingVerify(), limits, clock=Clock(), sleep=sleep)
    for name, address in [("alice", "198.51.100.1"), ("bob", "198.51.100.2")]:
        for _ in range(5):
            assert attempt(guard, name, "wrong", address) is False
    for i in range(20):
        assert attempt(guard, f"user{i}", "wrong", "198.51.100.3") is False
    for i in range(7):
        assert attempt(guard, "alice", "wrong", f"192.0.2.{i}") is False
    return guard


def test_locks_lists_pairs_addresses_and_slowed_names():
    rows = locked().locks()
    assert sorted((row["kind"], row["key"]) for row in rows) == [
        ("address", "198.51.100.3"),
        ("name", "alice"),
        ("pair", "alice @ 198.51.100.1"),
        ("pair", "bob @ 198.51.100.2"),
    ]
    by_key = {row["key"]: row for row in rows}
    assert by_key["alice @ 198.51.100.1"] == {
        "kind": "pair",
        "key": "alice @ 198.51.100.1",
        "failures": 5,
        "seconds_left": 60,
        "delay_s": 0.0,
    }
    assert by_key["198.51.100.3"]["seconds_left"] == 900 and by_key["alice"]["delay_s"] == 4


def test_long_names_are_cut_in_the_list():
    guard = SignIn(CountingVerify(), clock=Clock())
    for _ in range(5):
        attempt(guard, "x" * 500, "wrong", "198.51.100.1")
    (row,) = guard.locks()
    assert row["key"] == "x" * 63 + "… @ 198.51.100.1"


def test_unlock_a_name_an_address_a_pair_or_everything():
    guard = locked()
    assert attempt(guard, *ALICE, "198.51.100.1").startswith("Too many")
    assert guard.unlock(name="alice") == 1 + 7 + 1  # her locked pair, 7 pairs with one failure, the name
    assert attempt(guard, *ALICE, "198.51.100.1") is True
    assert {row["key"] for row in guard.locks()} == {"198.51.100.3", "bob @ 198.51.100.2"}

    assert guard.unlock(address="198.51.100.3") == 21  # the address and its 20 pairs (one failure each)
    assert attempt(guard, *BOB, "198.51.100.3") is True
    assert guard.unlock(name="bob", address="198.51.100.9") == 1  # no such pair or address: bob's count
    assert guard.unlock(name="bob", address="198.51.100.2") == 1 + 1  # the pair and the address's count
    assert guard.locks() == []

    everything = locked()
    assert everything.unlock() > 0 and everything.locks() == [] and len(everything.pairs) == 0


def test_unlock_form_reads_who_and_answers_in_plain_text():
    guard = locked()
    unlock = unlock_form(guard)
    listing = unlock("")
    assert "pair 'alice @ 198.51.100.1': 5 failures, 60 s left" in listing
    assert "name 'alice': 12 failures" in listing and "each attempt waits 4 s" in listing
    assert unlock("  198.51.100.3 ").startswith("Unlocked address='198.51.100.3': 21 entries.")
    assert unlock("alice 198.51.100.1").startswith("Unlocked name='alice' address='198.51.100.1': 3 entries.")
    assert attempt(guard, *ALICE, "198.51.100.1") is True
    assert unlock("*").startswith("Unlocked everything:")
    assert unlock("").endswith("No sign-in is locked. 没有被锁定的登录。")
