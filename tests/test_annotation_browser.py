"""The annotation tab in a real browser (Debian's Chromium, headless, Playwright): two annotators sign in
with Gradio's login form and label items shown in random left/right order, one goes back and edits a
label, and the admin exports the labels; the exported rows match what each annotator did. A held-down
verdict key or a second click on a verdict button labels one item, not the next one too; text in items,
comments and names never makes the browser fetch anything.

Screenshots go to ``tests/artifacts/screenshots/``. Skipped without ``/usr/bin/chromium`` unless
``REQUIRE_BROWSER_TESTS=1`` (set by ``.ci/run``).
"""

from __future__ import annotations

import csv
import io
import re
import shutil
from pathlib import Path

import pytest

from .annotation_pages import open_admin, page_url
from .fakes.live_app import LOGIN_BUTTON, annotation_app, require_chromium

SHOTS = Path(__file__).parent / "artifacts" / "screenshots" / "annotation"
USERS = "root:rootpw:admin,alice:alicepw,bob:bobpw,carol:carolpw,dave:davepw"

require_chromium()

sync_api = pytest.importorskip("playwright.sync_api")
pytestmark = [pytest.mark.browser, pytest.mark.filterwarnings("ignore::UserWarning")]


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    with annotation_app(tmp_path_factory.mktemp("annotation-browser"), USERS) as running:
        yield running


def sign_in(browser, app, name: str, password: str):
    context = browser.new_context(viewport={"width": 1400, "height": 1100}, accept_downloads=True)
    page = context.new_page()
    page.goto(page_url(app, "/annotate"))  # the annotators' page
    page.fill('input[data-testid="textbox"]', name)
    page.fill('input[data-testid="password"]', password)
    page.click(LOGIN_BUTTON)
    page.wait_for_selector("#ann-status:has-text('进度')")
    folder = SHOTS / name
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    page.shots = iter(range(1, 100))
    page.shot = lambda label: page.screenshot(
        path=str(folder / f"{next(page.shots):02d}-{label}.png"), full_page=True
    )
    return page


def squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


#: The element's text changed and Gradio shows no component as pending (its status tracker) any more.
CHANGED_AND_SETTLED = """([selector, before]) => {
  const busy = document.querySelectorAll('[class*="pending"], [class*="generating"]').length > 0;
  return document.querySelector(selector).innerText !== before && !busy;
}"""


def current_item(app, page, annotator: str):
    """The assignment the page shows, found by its question text, checked against the left answer shown."""
    question = squash(page.inner_text("#ann-question")).split("问题", 1)[1]
    left = squash(page.inner_text("#ann-left")).split("左", 1)[1]  # after any "processing" overlay
    for item_id in _assigned(app, annotator):
        a = app.store.assignment(annotator, item_id)
        if squash(a.item.question) == question and squash(a.left) == left:
            return a
    raise AssertionError(
        f"the page shows no item of {annotator} with question {question[:40]!r} and left answer {left[:40]!r}"
    )


def _assigned(app, annotator: str) -> list[str]:
    with app.store._read() as con:
        return [
            r[0] for r in con.execute("SELECT item_id FROM assignments WHERE annotator = ?", (annotator,))
        ]


def save(page, button: str | None = None, key: str | None = None) -> None:
    before = page.inner_text("#ann-status")
    if key:
        page.locator("body").click(position={"x": 5, "y": 5})  # focus the page, not a field
        page.wait_for_selector("#ann-verdict-left:enabled")  # keys, like clicks, wait for a shown item
        page.keyboard.press(key)
    else:
        page.click(f"#ann-verdict-{button}")
    page.wait_for_function(CHANGED_AND_SETTLED, arg=["#ann-status", before], timeout=15000)
    assert "已保存" in page.inner_text("#ann-message")


#: The item shown changed (its question or its left answer: two items of one question differ in their answers,
#: and the order of items is drawn from each store's own secret) and nothing is pending.
ITEM_CHANGED_AND_SETTLED = """(before) => {
  const busy = document.querySelectorAll('[class*="pending"], [class*="generating"]').length > 0;
  const now = ['#ann-question', '#ann-left'].map((s) => document.querySelector(s).innerText).join('\\n');
  return now !== before && !busy;
}"""


def go_back(page) -> None:
    before = "\n".join(page.inner_text(s) for s in ("#ann-question", "#ann-left"))
    page.click("#ann-back")
    page.wait_for_function(ITEM_CHANGED_AND_SETTLED, arg=before, timeout=15000)


def test_two_annotators_label_one_edits_and_the_admin_export_matches(browser, app):
    # alice labels until she has seen both orders; ticks a statute and scores the first item; keys work
    alice = sign_in(browser, app, "alice", "alicepw")
    assert not alice.locator("#ann-admin").is_visible()  # no admin tools for annotators
    expected: dict[tuple[str, str], str] = {}
    orders, labelled = set(), None
    for n in range(8):
        a = current_item(app, alice, "alice")
        if n == 0:
            if alice.locator("#ann-left-mark-1").is_visible():  # the first statute the left answer cites
                alice.click("#ann-left-mark-1 label:has(input[value='wrong'])")
                labelled = a.item.id
            alice.fill("#ann-left-rel input", "7")
            alice.fill("#ann-right-tlc input", "4")
            alice.shot("first-item-filled")
        shown = ["left", "right", "tie"][n % 3]
        if n == 1:
            save(alice, key="2")  # the keyboard shortcut of 右更好 Right
            shown = "right"
        else:
            save(alice, button=shown)
        expected[("alice", a.item.id)] = a.unswap(shown)
        orders.add(a.swapped)
        if orders == {True, False} and n >= 2:
            break
    assert orders == {True, False}, "the left/right order is randomised per item"
    alice.shot("after-labels")
    assert "已保存" in alice.inner_text("#ann-message")

    # bob labels two items, goes back to the first and changes his verdict
    bob = sign_in(browser, app, "bob", "bobpw")
    first = current_item(app, bob, "bob")
    save(bob, button="left")
    second = current_item(app, bob, "bob")
    save(bob, button="left")
    expected[("bob", second.item.id)] = second.unswap("left")
    go_back(bob)
    assert current_item(app, bob, "bob").item.id == second.item.id
    assert "正在修改你的标注（第 1 版" in bob.inner_text("#ann-message")
    go_back(bob)
    assert current_item(app, bob, "bob").item.id == first.item.id
    bob.fill("#ann-comment textarea", "改为差不多 changed my mind")
    bob.click("#ann-verdict-tie")
    bob.wait_for_selector("#ann-message:has-text('version 2')")
    bob.shot("edited")
    expected[("bob", first.item.id)] = "tie"
    assert [h["verdict"] for h in app.store.history("bob", first.item.id)] == [first.unswap("left")]

    # the admin exports; every row is what the annotators did
    root = sign_in(browser, app, "root", "rootpw")
    root.click("#ann-admin")  # open the accordion
    root.click("#ann-export")
    link = root.locator("#ann-exported a").first
    link.wait_for(timeout=15000)
    with root.expect_download() as download:
        link.click()
    text = Path(download.value.path()).read_text(encoding="utf-8-sig")
    rows = list(csv.DictReader(io.StringIO(text)))
    root.shot("exported")
    assert {(r["annotator"], r["item_id"]): r["verdict"] for r in rows} == expected
    edited = next(r for r in rows if r["annotator"] == "bob" and r["item_id"] == first.item.id)
    assert edited["version"] == "2" and edited["comment"] == "改为差不多 changed my mind"
    scored = [r for r in rows if r["annotator"] == "alice" and "7.0" in (r["rel_a"], r["rel_b"])]
    assert len(scored) == 1 and "4.0" in (scored[0]["tlc_a"], scored[0]["tlc_b"])
    if labelled:  # the statute labelled wrong, and only it, is in the export as hallucinated
        side = "a" if scored[0]["rel_a"] == "7.0" else "b"
        assert scored[0]["item_id"] == labelled and scored[0][f"n_hallucinated_{side}"] == "1"
        assert scored[0][f"n_labelled_{side}"] == "1"
    for page in (alice, bob, root):
        page.context.close()


# -- a held key or a quick second click labels one item ----------------------------------------------

#: The last verdict has been answered (no component pending) and the verdict buttons take input again.
SETTLED_AND_READY = """() => {
  const busy = document.querySelectorAll('[class*="pending"], [class*="generating"]').length > 0;
  return !busy && !document.getElementById('ann-verdict-left').disabled;
}"""


def test_holding_a_verdict_key_down_saves_one_label(browser, app):
    carol = sign_in(browser, app, "carol", "carolpw")
    carol.wait_for_function(SETTLED_AND_READY)
    carol.locator("body").click(position={"x": 5, "y": 5})
    carol.keyboard.down("1")
    for _ in range(30):  # held for 3 s: the keyboard repeats the key (keydown with event.repeat)
        carol.wait_for_timeout(100)
        carol.keyboard.down("1")
    carol.keyboard.up("1")
    carol.wait_for_function(SETTLED_AND_READY, timeout=15000)
    assert "已保存" in carol.inner_text("#ann-message")
    assert len(app.store.done_items("carol")) == 1
    carol.context.close()


def test_a_second_click_soon_after_a_verdict_does_not_label_the_next_item(browser, app):
    dave = sign_in(browser, app, "dave", "davepw")
    dave.wait_for_function(SETTLED_AND_READY)
    left = dave.locator("#ann-verdict-left")
    left.click(force=True)  # force: a person's click, which does not wait for the button to be enabled
    dave.wait_for_timeout(600)  # a double click that came out slow, or an impatient second click
    left.click(force=True)
    dave.wait_for_function(SETTLED_AND_READY, timeout=15000)
    assert len(app.store.done_items("dave")) == 1
    dave.shot("one-label-after-two-clicks")

    dave.click("#ann-verdict-right")  # once the new item has been shown for a moment, it takes a verdict
    dave.wait_for_selector("#ann-status:has-text('2 / ')", timeout=15000)
    assert len(app.store.done_items("dave")) == 2
    dave.context.close()


# -- nothing shown in the tab fetches a remote resource -------------------------------------------------

LEAK = "//leak.invalid/"  # a host that cannot resolve; the browser would still send the request
HOSTILE = (
    f"![x](https:{LEAK}md.png) <img src='https:{LEAK}img.png'> <img src=x onerror=\"fetch('https:{LEAK}js')\">"
    f"<link rel=stylesheet href='https:{LEAK}css'> <video poster='https:{LEAK}poster.png'></video>"
    f"<div style=\"background:url('https:{LEAK}bg.png')\">x</div> [link](https:{LEAK}a) "
    f"<iframe src='https:{LEAK}frame'></iframe> <object data='https:{LEAK}obj'></object>"
)
HOSTILE_NAME = f"![n]({LEAK}name.png)"  # a name in the users file, shown in the status line


@pytest.fixture(scope="module")
def hostile_app(tmp_path_factory):
    users = f"{HOSTILE_NAME}:pw:admin,erin:erinpw"
    with annotation_app(tmp_path_factory.mktemp("annotation-hostile"), users) as running:
        from eval_ui.items import Item

        running.store.import_items(
            [
                Item(
                    "evil",
                    "问题 " + HOSTILE,
                    "左回答《民法典》第1079条 " + HOSTILE,
                    "右回答 " + HOSTILE,
                    "sysA",
                    "sysB",
                    reference="参考 " + HOSTILE,
                    statutes=(HOSTILE,),
                )
            ]
        )
        running.store.assign(overlap=1, annotators=[HOSTILE_NAME])  # the admin's only item
        yield running


def test_text_in_items_comments_and_names_never_fetches_a_remote_resource(browser, hostile_app):
    requests: list[str] = []
    page = browser.new_context(viewport={"width": 1400, "height": 1100}).new_page()
    page.on("request", lambda r: requests.append(r.url))
    page.goto(page_url(hostile_app, "/annotate"))
    page.fill('input[data-testid="textbox"]', HOSTILE_NAME)
    page.fill('input[data-testid="password"]', "pw")
    page.click(LOGIN_BUTTON)
    page.wait_for_selector("#ann-question:has-text('leak.invalid')")
    for summary in page.locator("#ann-reference, .ann-statute summary").all():
        if summary.is_visible():
            summary.click()  # open the reference and the statutes' texts
    page.fill("#ann-comment textarea", HOSTILE)
    page.click("#ann-verdict-tie")
    page.wait_for_selector("#ann-message:has-text('已保存')")
    page.click("#ann-back")  # the saved comment is shown again in the form
    page.wait_for_selector("#ann-message:has-text('正在修改你的标注')")
    assert page.input_value("#ann-comment textarea") == HOSTILE
    page.click("#ann-admin")  # the annotators table names the admin
    assert "leak.invalid" in page.inner_text("#ann-question")  # shown, as text
    open_admin(page, hostile_app, "统计")  # the admins' page, /admin
    page.click("#st-compute")
    page.wait_for_selector("#st-report .st-note")
    page.wait_for_function("() => document.querySelectorAll('[class*=\"pending\"]').length === 0")
    assert [u for u in requests if "leak" in u] == []
    page.context.close()
