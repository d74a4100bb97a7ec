"""The admin's invitation form and audit log in Chromium: inviting through the page, a hostile name refused
in plain text, and the audit log's cells shown as text (an uploaded file's name holding HTML loads nothing).
"""

from __future__ import annotations

import pytest

from eval_ui.service import STORE_FILE
from eval_ui.store import AnnotationStore

from .annotation_pages import citing_items, open_admin, sign_in
from .fakes.live_app import annotation_app, require_chromium

require_chromium()

sync_api = pytest.importorskip("playwright.sync_api")
pytestmark = [pytest.mark.browser, pytest.mark.filterwarnings("ignore::UserWarning")]

HOSTILE = '<img src=x onerror="window.__pwned=1">'


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    folder = tmp_path_factory.mktemp("invites-browser")
    with AnnotationStore(folder / STORE_FILE) as store:  # an import whose file name is HTML, in the log
        store.import_items(citing_items(2, "inv"), actor="root", source=f"{HOSTILE}.jsonl")
    with annotation_app(folder, "root:rootpw:admin,alice:alicepw") as running:
        yield running


def test_the_admin_invites_in_the_page_and_reads_the_log_as_text(browser, app):
    root = sign_in(browser, app, "root", "rootpw", shots="annotation-invites")
    open_admin(root, app)  # the admins' page, /admin
    root.click("#adj-access button:has-text('邀请与审计')")
    root.wait_for_selector("#adj-audit-table:has-text('import')", timeout=20000)
    assert "<img src=x onerror=" in root.inner_text("#adj-audit-table")  # the file name, as text

    root.fill("#adj-invite-name input", "lawyer-li")
    root.click("#adj-invite")
    root.wait_for_selector("#adj-access-message:has-text('已邀请')", timeout=20000)
    root.wait_for_selector("#adj-invitations-table:has-text('lawyer-li')", timeout=20000)
    assert app.store.invitation("lawyer-li") == "annotator"

    root.fill("#adj-invite-name input", HOSTILE[:90])
    root.click("#adj-invite")
    root.wait_for_selector("#adj-access-message:has-text('没有邀请')", timeout=20000)
    root.shot("invitations-and-audit-log")
    for area in ("#adj-access-message", "#adj-audit-table", "#adj-invitations-table"):
        assert root.locator(f"{area} img, {area} script").count() == 0
    assert root.evaluate("window.__pwned") is None
    assert [i["name"] for i in app.store.invitations()] == ["lawyer-li"]
    root.context.close()
