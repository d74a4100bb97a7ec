"""The admins' page (``/admin``) in one language, the visitor's, in a real browser (Debian's Chromium,
headless): the adjudication and statistics tabs as an admin opens them and after computing the statistics,
and the notice an annotator reads instead, in Chinese and in English.

The rule (``tests/i18n_checks.py``): every visible text is in the language of its nearest ``lang`` ancestor
(``<html lang>`` for the page's own texts; names, questions and answers from the data declare theirs), no
text mixes both languages, no key shows untranslated.
"""

from __future__ import annotations

import pytest

from eval_ui.store import AnswerLabel, LabelInput
from lawluo.i18n import EN, ZH, text

from .annotation_pages import citing_items
from .fakes.live_app import LOGIN_BUTTON, annotation_app, require_chromium
from .i18n_checks import page_texts, wrong_language

require_chromium()
pytest.importorskip("playwright.sync_api")
pytestmark = [pytest.mark.browser, pytest.mark.filterwarnings("ignore::UserWarning")]

LOCALES = [pytest.param("zh-CN", id="zh"), pytest.param("en-US", id="en")]
#: Gradio's own screen-reader announcement after an event (``<div class="sr-only" role="status">``): its key
#: ``common.complete`` has no text in Gradio 6.31's locales; not a text of this page (reported to the app).
GRADIO_OWN = {"untranslated: 'common.complete'"}


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    """Two annotators who disagree on the items they share: a disagreement to adjudicate, statistics."""
    folder = tmp_path_factory.mktemp("admin-i18n")
    from eval_ui.service import STORE_FILE
    from eval_ui.store import AnnotationStore

    with AnnotationStore(folder / STORE_FILE) as store:
        store.import_items(citing_items(4, "adm"))
    with annotation_app(folder, "root:rootpw:admin,alice:alicepw,bob:bobpw") as running:
        for name in ("alice", "bob"):
            for n in range(2):
                shown = running.store.next_item(name)
                verdict = ["left", "right"][(n + len(name)) % 2]
                answer = AnswerLabel({}, 5, 6)
                running.store.save_label(
                    name, shown.item.id, LabelInput(verdict, answer, answer), f"{name}-{n}"
                )
        yield running


#: The ``lang`` of each chart image the report shows.
VISIBLE_CHARTS = (
    "() => [...document.querySelectorAll('#st-report img')]"
    ".filter(i => i.offsetParent !== null).map(i => i.getAttribute('lang'))"
)


def signed_in(browser, app, name: str, locale: str):
    page = browser.new_page(locale=locale, viewport={"width": 1366, "height": 900})
    page.goto(app.url.rstrip("/") + "/admin")
    page.fill('input[data-testid="textbox"]', name)
    page.fill('input[data-testid="password"]', f"{name}pw")
    page.click(LOGIN_BUTTON)
    return page


def lang(locale: str) -> str:
    return EN if locale.startswith("en") else ZH


def one_language(page) -> list[str]:
    """What is not in its element's language once the page's events are done (Gradio's "processing" and
    timer are its own, shown only while an event runs)."""
    for _ in range(60):
        texts = page_texts(page)
        if not any(t.startswith("processing") for t, _ in texts):
            break
        page.wait_for_timeout(250)
    assert len(texts) > 5
    return [bad for bad in wrong_language(texts) if bad not in GRADIO_OWN]


@pytest.mark.parametrize("locale", LOCALES)
def test_the_admin_reads_adjudication_and_statistics_in_one_language(browser, app, locale):
    page = signed_in(browser, app, "root", locale)
    try:
        adjudicate = page.get_by_role("tab", name=text("tab.adjudicate", lang(locale)))
        adjudicate.wait_for(timeout=30_000)
        page.wait_for_timeout(500)
        assert one_language(page) == []  # as the page opens
        adjudicate.click()
        page.wait_for_selector("#adj-comparison table", timeout=30_000)  # the disagreement, side by side
        page.locator("#adj-access").get_by_role("button").first.click()  # invitations and audit log
        page.wait_for_selector("#adj-audit-table td", timeout=30_000)
        assert text("adjudicate.col.actor", lang(locale)) in page.inner_text("#adj-audit-table")
        assert one_language(page) == []
        page.get_by_role("tab", name=text("tab.stats", lang(locale))).click()
        page.wait_for_selector("#st-compute", timeout=30_000)
        assert one_language(page) == []
        page.click("#st-compute")
        page.wait_for_selector("#st-report .st-section table", timeout=60_000)
        report = page.inner_text("#st-report")
        assert text("stats.section.pairwise", lang(locale)) in report
        assert text("stats.not_yet", lang(locale)) in report  # two annotators: some statistics need more
        shown = page.evaluate(VISIBLE_CHARTS)  # each chart drawn in the page's language, the other hidden
        assert shown and set(shown) == {"en" if lang(locale) == EN else "zh-CN"}
        assert one_language(page) == []
    finally:
        page.close()


@pytest.mark.parametrize("locale", LOCALES)
def test_an_annotator_reads_the_admins_notice_in_one_language(browser, app, locale):
    page = signed_in(browser, app, "alice", locale)
    try:
        notice = page.locator("#admin-notice .ll-notice.warn")
        notice.wait_for(timeout=30_000)
        page.wait_for_timeout(300)
        shown = notice.inner_text()
        assert "alice" in shown
        assert ("This page is for admins" in shown) is (lang(locale) == EN)
        assert ("此页仅供管理员" in shown) is (lang(locale) == ZH)
        assert one_language(page) == []
    finally:
        page.close()
