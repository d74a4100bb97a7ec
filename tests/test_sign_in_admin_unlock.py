"""An admin lifts a sign-in lock from the admin's tab of the running app (issue 38 item 5: locks could be
turned against users, and nothing but a restart lifted them)."""

from __future__ import annotations

import httpx
import pytest

from .fakes.live_app import live_app

pytestmark = pytest.mark.slow  # 7 s of the suite on 2 cores (4 s or more: left out of the inner loop)

USERS = "root:root-pw:admin,bob:bob-pw"


def login(url: str, name: str, password: str, address: str) -> httpx.Response:
    return httpx.post(
        f"{url}login",
        data={"username": name, "password": password},
        headers={"X-Forwarded-For": address},
        timeout=30,
    )


def test_an_admin_lists_and_lifts_a_lock_and_the_locked_annotator_signs_in_again():
    from gradio_client import Client

    with live_app(model=False, LAWLUO_ANNOTATION_USERS=USERS) as app:
        for _ in range(5):
            assert login(app.url, "bob", "wrong", "198.51.100.90").status_code != 200
        assert login(app.url, "bob", "bob-pw", "198.51.100.90").status_code != 200  # locked from there
        admin = Client(
            app.url,
            auth=("root", "root-pw"),
            verbose=False,
            analytics_enabled=False,
            headers={"X-Forwarded-For": "198.51.100.91"},
        )
        listed = admin.predict("", api_name="/sign_in_locks")
        assert "bob" in listed and "198.51.100.90" in listed
        lifted = admin.predict("bob", api_name="/sign_in_locks")
        assert lifted.startswith("Unlocked") and "No sign-in is locked" in lifted
        assert login(app.url, "bob", "bob-pw", "198.51.100.90").status_code == 200


def test_an_annotator_cannot_lift_locks():
    from gradio_client import Client

    with live_app(model=False, LAWLUO_ANNOTATION_USERS=USERS) as app:
        bob = Client(app.url, auth=("bob", "bob-pw"), verbose=False, analytics_enabled=False)
        assert "只有管理员" in bob.predict("*", api_name="/sign_in_locks")
