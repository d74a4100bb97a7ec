"""The statistics tab (eval_ui/stats_tab.py): hidden unless an admin signed in, refused through the API to
anyone else, and a report whose charts are shown one per image, only when drawn, at their natural size.

The handlers are called directly; the last test opens the page in headless Chromium (Playwright) as an
annotator (no Statistics tab at all) and as the admin (the tab, its report and charts, nothing cropped).
Screenshots go to ``tests/artifacts/screenshots/statistics/``.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from types import SimpleNamespace

import gradio as gr
import pytest

from eval_ui import stats_tab
from eval_ui.auth import parse_users
from eval_ui.consistency import CHARTS
from eval_ui.items import Item
from eval_ui.service import AnnotationService
from eval_ui.store import AnnotationStore, AnswerLabel, LabelInput

pytestmark = pytest.mark.slow  # 12 s of the suite on 2 cores (4 s or more: left out of the inner loop)

SHOTS = Path(__file__).parent / "artifacts" / "screenshots" / "statistics"


def as_user(name: str | None):
    return SimpleNamespace(username=name)


@pytest.fixture
def service(tmp_path):
    store = AnnotationStore(tmp_path / "annotations.sqlite")
    service = AnnotationService(store, users=parse_users("root:rootpw:admin,alice:alicepw,bob:bobpw"))
    store.import_items([Item(f"q{n}:x:y", f"问题{n}", "甲的回答", "乙的回答", "x", "y") for n in range(6)])
    for name, role in (("root", "admin"), ("alice", "annotator"), ("bob", "annotator")):
        service.register(name, role, assign=False)
    service.assign()
    yield service
    store.close()


def label(service, name: str, verdicts: list[str]) -> None:
    store = service.store
    for n, verdict in enumerate(verdicts):
        shown = store.assignment(name, f"q{n}:x:y")
        answer = AnswerLabel({}, 3 + n % 5, 7 - n % 4)
        store.save_label(
            name, shown.item.id, LabelInput(shown.to_shown(verdict), answer, answer), f"{name}{n}"
        )


def test_the_tab_is_hidden_until_an_admin_signs_in(service):
    with gr.Blocks() as demo:
        stats_tab.build_stats_tab(service, demo)
    (tab,) = [b for b in demo.blocks.values() if isinstance(b, gr.Tab)]
    assert tab.visible is False  # on the page nobody sees it until the page's load event shows it
    for who, visible in (("root", True), ("alice", False), (None, False), ("mallory", False)):
        shown, first, second = stats_tab.show_tab(service, as_user(who))
        assert shown.visible is visible, who
        assert (first.choices == []) is True  # no labels yet: no systems to choose


def test_anyone_but_an_admin_is_refused_through_the_api(service):
    label(service, "alice", ["A", "B"])
    for who in ("alice", None, "mallory"):
        html, files, data, *charts = stats_tab.compute_statistics(service, request=as_user(who))
        assert "Only an admin" in html and files == [] and data == {}
        assert all(c is None for c in charts)
    message = stats_tab.upload_auto_metrics(service, [], as_user("bob"))
    assert "Only an admin" in message


def test_the_admin_gets_every_section_and_what_is_still_missing(service):
    label(service, "alice", ["A", "B", "A", "tie", "A", "both_bad"])
    html, files, data, *charts = stats_tab.compute_statistics(service, "raw", request=as_user("root"))
    assert "Win / tie / loss" in html and "Inter-annotator agreement" in html and "Bradley" in html
    # One annotator so far: every agreement says what it needs, nothing shows NaN.
    assert "还不够" in html and "Not enough labels yet" in html  # each in its language's element
    assert "needs an item labelled by 2 annotators" in html and "需要一个由 2 位标注员标注的条目" in html
    assert "nan" not in re.sub(r"data:[a-z/]+;base64,[^\"]*", "", html).lower()
    assert data["n_labels"] == 6 and "alpha_verdict" in data["missing"] and "win_rate" not in data["missing"]
    assert Path(files[-1]).name == "report.json"
    # Charts: each one drawn (win rates, ratings) is inside its section, right under its table, inlined
    # (on the page with the tables); the API's one slot per chart has its PNG, or None when not drawn.
    assert html.count("<img") == 4 and html.count('src="data:image/png;base64,') == 4  # each in zh and en
    for name, section in (("pairs", "Win / tie / loss"), ("ratings", "Bradley")):
        start = html.index(section)
        assert html.index(f'id="st-chart-{name}"', start) < html.find("<h3>", start + 1)
    shown = {name: c for (name, _, _), c in zip(CHARTS, charts, strict=True)}
    assert {n for n, c in shown.items() if c is not None} == {"pairs", "ratings"} == set(data["charts"])
    assert all(Path(c).is_file() for c in shown.values() if c is not None)


def test_adjudicated_source_and_choices(service):
    label(service, "alice", ["A", "B", "A"])
    label(service, "bob", ["B", "B", "A"])
    service.store.adjudicate("root", "q0:x:y", "A", AnswerLabel(), AnswerLabel())
    html, _, data, *_ = stats_tab.compute_statistics(service, "adjudicated", request=as_user("root"))
    assert data["source"] == "adjudicated" and data["n_adjudicated"] == 1
    assert "Adjudicated labels: 1 item(s)" in html
    html, files, data, *_ = stats_tab.compute_statistics(service, "majority", request=as_user("root"))
    assert "Unknown source" in html and data == {}
    first, second = stats_tab.system_choices({"systems": ["x", "y"]}, "x", "gone")
    assert first.choices == [("x", "x"), ("y", "y")] or first.choices == ["x", "y"]
    assert (first.value, second.value) == ("x", None)
    _, first, _ = stats_tab.show_tab(service, as_user("root"))
    assert [c[0] if isinstance(c, tuple) else c for c in first.choices] == ["x", "y"]


def test_the_admin_sees_the_checker_against_the_lawyers_per_verdict(tmp_path, checker):
    from tests.test_statute_tab import CIVIL_CODE_1079, CONTRACT_LAW_107

    store = AnnotationStore(tmp_path / "annotations.sqlite")
    service = AnnotationService(
        store, users=parse_users("root:rootpw:admin,alice:alicepw,bob:bobpw"), checker=checker
    )
    answer = CIVIL_CODE_1079 + CONTRACT_LAW_107  # the checker: verified, then repealed
    store.import_items([Item(f"q{n}:x:y", f"问题{n}", answer, "没有引用。", "x", "y") for n in range(2)])
    for name, role in (("root", "admin"), ("alice", "annotator"), ("bob", "annotator")):
        service.register(name, role, assign=False)
    service.assign()
    first, second = service.statute_keys("q0:x:y", "a")
    assert [s.verdict for s in service.statutes("q0:x:y", "a")] == ["verified", "repealed"]
    for name, codes in (("alice", ("correct", "wrong_repealed")), ("bob", ("correct", "wrong"))):
        for n in range(2):
            shown = store.assignment(name, f"q{n}:x:y")
            answer_a = AnswerLabel(dict(zip((first, second), codes, strict=True)))
            left, right = (AnswerLabel(), answer_a) if shown.swapped else (answer_a, AnswerLabel())
            store.save_label(name, shown.item.id, LabelInput(shown.to_shown("A"), left, right), f"{name}{n}")
    html, _, data, *_ = stats_tab.compute_statistics(service, "raw", request=as_user("root"))
    store.close()
    assert "The checker against the lawyers, per verdict" in html and "amended_since" in html
    rows = {row["verdict"]: row for row in data["statistics"]["verdict_agreement"]["value"]}
    assert (rows["verified"]["statutes"], rows["verified"]["same_verdict"]) == (2, 1.0)
    # repealed: alice says 已废止, bob 有误 without a kind → the majority is hallucinated, kind wrong_repealed
    assert (rows["repealed"]["statutes"], rows["repealed"]["same_hallucinated"], rows["repealed"]["same_verdict"]) == (
        2, 1.0, 1.0,
    )  # fmt: skip


# --------------------------------------------------------------------------- in the browser


#: Every chart image shown is drawn at its natural size (or scaled down as a whole on a narrow screen),
#: never cropped: the rendered aspect ratio is the image's own.
CHART_SIZES = """() => [...document.querySelectorAll('[id^="st-chart-"]')].map(slot => {
  const img = [...slot.querySelectorAll('img')].find(i => i.offsetParent !== null);  // the page's language
  const box = slot.getBoundingClientRect();
  return {id: slot.id, shown: slot.offsetParent !== null && box.height > 0,
          natural: img ? [img.naturalWidth, img.naturalHeight] : null,
          drawn: img ? [img.clientWidth, img.clientHeight] : null,
          fit: img ? getComputedStyle(img).objectFit : null};
})"""


@pytest.mark.browser
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_in_the_browser_annotators_never_see_the_tab_and_the_admin_sees_whole_charts(tmp_path, request):
    from .fakes.live_app import LOGIN_BUTTON, annotation_app, require_chromium

    require_chromium()
    shutil.rmtree(SHOTS, ignore_errors=True)
    SHOTS.mkdir(parents=True)
    with annotation_app(tmp_path / "store", "root:rootpw:admin,alice:alicepw,bob:bobpw") as app:
        store = app.store
        for name in ("alice", "bob"):  # overlap first: the two share their first items
            for n in range(4):
                shown = store.next_item(name)
                verdict = ["left", "right", "tie", "left"][(n + len(name)) % 4]
                answer = AnswerLabel({}, 5, 6)
                store.save_label(name, shown.item.id, LabelInput(verdict, answer, answer), f"{name}-{n}")
        browser = request.getfixturevalue(
            "browser"
        )  # the session's Chromium (conftest.py): one Playwright per run
        pages = {}
        try:
            for name, password in (("alice", "alicepw"), ("root", "rootpw")):
                page = browser.new_page(viewport={"width": 1366, "height": 768})
                page.goto(app.url.rstrip("/") + "/admin")  # the admins' page
                page.fill('input[data-testid="textbox"]', name)
                page.fill('input[data-testid="password"]', password)
                page.click(LOGIN_BUTTON)
                pages[name] = page
            root = pages["root"]
            root.get_by_role("tab", name="统计").wait_for(timeout=30_000)
            # The annotator reads that the page is for admins, and has no Statistics tab at all.
            pages["alice"].wait_for_selector(
                "#admin-notice:has-text('This page is for admins')", timeout=30_000
            )
            assert not any(t.is_visible() for t in pages["alice"].get_by_role("tab", name="统计").all())
            pages["alice"].screenshot(path=str(SHOTS / "annotator-no-statistics-tab.png"))
            root.get_by_role("tab", name="统计").click()
            root.click("#st-compute")
            root.wait_for_selector("#st-report .st-section", timeout=60_000)
            root.wait_for_selector("#st-chart-pairs img", state="attached", timeout=30_000)
            # every chart is drawn with the report, without scrolling to it (none is loaded lazily)
            assert root.evaluate("window.scrollY") == 0
            root.wait_for_function("() => [...document.querySelectorAll('[id^=\"st-chart-\"] img')]"
                                   ".every(i => i.complete && i.naturalWidth > 0)")  # fmt: skip
            sizes = {c["id"]: c for c in root.evaluate(CHART_SIZES)}
            root.screenshot(path=str(SHOTS / "admin-statistics.png"), full_page=True)
        finally:
            for page in pages.values():
                page.close()
    shown = {k for k, c in sizes.items() if c["shown"]}
    assert {
        "st-chart-pairs",
        "st-chart-annotators",
    } <= shown  # ratings: once the systems' comparisons connect
    assert "st-chart-scatter" not in shown  # no automatic results uploaded: no empty scatter frame
    for key in shown:
        (w, h), (dw, dh) = sizes[key]["natural"], sizes[key]["drawn"]
        assert w == 800 and abs(dw / dh - w / h) < 0.02, sizes[key]  # the whole chart, in proportion
        assert dw >= 0.95 * w, sizes[key]  # at its natural size on a 1366-px screen: readable
