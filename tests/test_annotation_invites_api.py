"""The admin's invitation form and audit log through the HTTP API of the running app (gradio_client with
Gradio's login): the admin invites and withdraws, reads the log; an annotator is refused all three."""

from __future__ import annotations

import html

import pytest

from eval_ui.service import STORE_FILE
from eval_ui.store import AnnotationStore

from .annotation_pages import citing_items
from .fakes.live_app import annotation_app

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    folder = tmp_path_factory.mktemp("invites")
    with AnnotationStore(folder / STORE_FILE) as store:
        store.import_items(citing_items(2, "inv"))
    with annotation_app(folder, "root:rootpw:admin,bob:bobpw") as running:
        yield running


def client(app, name: str):
    from gradio_client import Client

    return Client(
        app.url, auth=(name, f"{name}pw"), verbose=False, download_files=False, analytics_enabled=False
    )


def rows(table) -> list[list]:
    return table["data"] if isinstance(table, dict) else table


def test_the_admin_invites_withdraws_and_reads_the_audit_log(app):
    root = client(app, "root")
    message, invitations, audit = root.predict("lawyer-li", "admin", api_name="/invite")
    assert "Invited 'lawyer-li' as admin" in html.unescape(message)
    assert [r[:3] for r in rows(invitations)] == [["lawyer-li", "admin", "root"]]
    assert rows(audit)[0][1:4] == ["root", "invite", "lawyer-li"]
    message, invitations, audit = root.predict(
        '<img src=x onerror="alert(1)">', "annotator", api_name="/invite"
    )
    assert "Not invited" in message and "<img" not in message and "&lt;img" in message
    message, invitations, audit = root.predict("lawyer-li", api_name="/uninvite")
    assert "Invitation withdrawn" in message and rows(audit)[0][2] == "uninvite"
    assert rows(invitations) in ([], [[""] * 4], [[None] * 4])  # Gradio's empty table
    message, _, audit = root.predict(api_name="/invitations")
    assert {r[2] for r in rows(audit)} >= {"signup", "invite", "uninvite"}
    assert [e["action"] for e in app.store.audit_log(2)] == ["uninvite", "invite"]


def test_an_annotator_is_refused_the_form_and_the_log(app):
    bob = client(app, "bob")
    for args, api_name in (
        (("bob-friend", "annotator"), "/invite"),
        (("root",), "/uninvite"),
        ((), "/invitations"),
    ):
        message, invitations, audit = bob.predict(*args, api_name=api_name)
        assert "Only an admin" in message
        assert rows(invitations) in ([], [[""] * 4], [[None] * 4]) and rows(audit) in (
            [],
            [[""] * 5],
            [[None] * 5],
        )
    assert app.store.invitation("bob-friend") is None
