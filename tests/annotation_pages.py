"""What the annotation browser tests share: items whose answers cite known statutes, signing in on the
annotators' page (``/annotate``), opening the admins' page (``/admin``) and a tab of a page (on a phone
through the tab bar's "more" menu), waiting for a label to be saved, screenshots.

Chromium is Debian's, headless, driven by Playwright (``tests/fakes/live_app.py``).
"""

from __future__ import annotations

import re
from pathlib import Path

from eval_ui.items import Item
from tests.fakes.live_app import LOGIN_BUTTON

SHOTS = Path(__file__).parent / "artifacts" / "screenshots"
DESKTOP = {"width": 1366, "height": 768}
PHONE = {"width": 390, "height": 844}

#: Answers citing statutes the shipped database knows (and one article it does not have).
CITING = (
    "根据《民法典》第一千零七十九条，夫妻一方要求离婚的，可以由有关组织进行调解。"
    "另依《民法典》第一千零八十四条，父母与子女间的关系不因父母离婚而消除。"
    "《民法典》第九千条规定，抚养权一律归母亲。"
)
CITING_ONE = (
    "依照《中华人民共和国劳动合同法》第八十二条，用人单位自用工之日起超过一个月不满一年未与劳动者"
    "订立书面劳动合同的，应当向劳动者每月支付二倍的工资。"
)


def citing_items(n: int, prefix: str = "form") -> list[Item]:
    """``n`` items whose answer A cites three statutes and answer B one."""
    return [
        Item(
            f"{prefix}-{i}",
            f"第{i}个问题：离婚后孩子归谁，单位不签劳动合同怎么办？",
            f"{CITING}（回答甲{i}）",
            f"{CITING_ONE}（回答乙{i}）",
            "sysA",
            "sysB",
        )
        for i in range(n)
    ]


#: Gradio shows no component as pending and the verdict buttons take input (after the grace period).
READY = """() => {
  const busy = document.querySelectorAll('[class*="pending"], [class*="generating"]').length > 0;
  const button = document.getElementById('ann-verdict-left');
  return !busy && button && !button.disabled && button.offsetParent !== null;
}"""

#: The element's text changed and Gradio shows no component as pending any more.
CHANGED_AND_SETTLED = """([selector, before]) => {
  const busy = document.querySelectorAll('[class*="pending"], [class*="generating"]').length > 0;
  return document.querySelector(selector).innerText !== before && !busy;
}"""


def page_url(app, path: str) -> str:
    """The URL of the app's page ``path`` (``/``, ``/annotate``, ``/admin?…``)."""
    return app.url.rstrip("/") + path


def open_admin(page, app, tab: str = "裁决") -> None:
    """Go to the admins' page (``/admin``) and open its tab ``tab`` once the page shows it to the admin."""
    page.goto(page_url(app, "/admin"))
    page.get_by_role("tab", name=tab).first.wait_for(timeout=30_000)
    open_tab(page, tab)


def open_tab(page, name: str) -> None:
    """Click the tab ``name``; on a narrow screen it may sit in the tab bar's "more" menu."""
    page.wait_for_selector("[role=tablist] button[role=tab]")
    tab = page.get_by_role("tab", name=name)
    if tab.count() and tab.first.is_visible():
        tab.first.click()
        return
    page.click("button[aria-label='More tabs']")
    page.click(f".overflow-dropdown button:has-text('{name}')")


def tab_names(page) -> list[str]:
    """Every tab the page offers (visible in the bar or in its "more" menu)."""
    page.wait_for_selector("[role=tablist] button[role=tab]")
    return [t.strip() for t in page.locator(".tab-container.visually-hidden button").all_inner_texts()]


def sign_in(browser, app, name: str, password: str, viewport: dict | None = None, shots: str = "annotation"):
    """A new browser context signed in as ``name`` on the annotators' page (``/annotate``), an item shown."""
    context = browser.new_context(viewport=viewport or DESKTOP, accept_downloads=True)
    page = context.new_page()
    page.goto(page_url(app, "/annotate"))
    page.fill('input[data-testid="textbox"]', name)
    page.fill('input[data-testid="password"]', password)
    page.click(LOGIN_BUTTON)
    page.wait_for_selector("#ann-status:has-text('进度')")
    folder = SHOTS / shots / re.sub(r"\W", "_", name)
    folder.mkdir(parents=True, exist_ok=True)
    page.shots = iter(range(1, 100))
    page.shot = lambda label, full=True: page.screenshot(
        path=str(folder / f"{next(page.shots):02d}-{label}.png"), full_page=full
    )
    return page


def wait_ready(page, timeout: float = 20000) -> None:
    page.wait_for_function(READY, timeout=timeout)


def wait_saved(page, before: str, timeout: float = 20000) -> None:
    """Wait until the status line differs from ``before`` and nothing is pending; a label was saved."""
    page.wait_for_function(CHANGED_AND_SETTLED, arg=["#ann-status", before], timeout=timeout)
    assert "已保存" in page.inner_text("#ann-message")


def shown_item(store, annotator: str, page):
    """The assignment the page shows (found by its question and left answer)."""
    squash = lambda text: re.sub(r"\s+", "", text)  # noqa: E731
    question = squash(page.inner_text("#ann-question")).split("问题", 1)[1]
    left = squash(page.inner_text("#ann-left")).split("左", 1)[1]
    with store._read() as con:
        ids = [r[0] for r in con.execute("SELECT item_id FROM assignments WHERE annotator = ?", (annotator,))]
    for item_id in ids:
        a = store.assignment(annotator, item_id)
        if squash(a.item.question) == question and squash(a.left) == left:
            return a
    raise AssertionError(f"the page shows no item of {annotator}: {question[:40]!r}")


def card_keys(page, side: str) -> list[str]:
    """The statutes the visible cards of ``side`` (left/right) name, in order."""
    keys = []
    for n in range(1, 31):
        card = page.locator(f"#ann-{side}-card-{n}")
        if not card.count() or not card.first.is_visible():
            break
        keys.append(card.first.locator("b").first.inner_text().strip())
    return keys


def checked(page, side: str, n: int) -> str | None:
    """The label code the card's control holds (None when unlabelled)."""
    box = page.locator(f"#ann-{side}-mark-{n} input:checked")
    return box.first.get_attribute("value") if box.count() else None
