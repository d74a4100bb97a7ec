"""Three annotators and an admin, in a real browser (Debian's Chromium, headless), from the first label to
the exported files (issue 19, item 7).

alice (desktop), bob (a phone, with keys) and a third annotator whose name is HTML label the same
items in the order the store serves them (overlap first), each in their own way: verdicts that agree
and differ, per-statute labels given one by one or with 这些都没问题, scores, a hostile comment. After
each round the statistics report is computed through its public function
(:func:`eval_ui.consistency.report_from_store`, with the checker's verdicts and the automatic results
of ``lawluo evaluate`` kept next to the store) until every statistic in it has a value. Then the admin
resolves a disagreement in the 裁决 tab, computes the statistics in the page, and
exports every file; each file is checked row by row against the store, and the store against what
the annotators did in the page. Nothing typed or imported as HTML runs or fetches anything.

Screenshots go to ``tests/artifacts/screenshots/three-annotators/``.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
from pathlib import Path
from urllib.parse import unquote

import pytest

from eval_ui import verdicts
from eval_ui.consistency import NOT_YET, AutoMetrics, missing_statistics, report_from_store
from eval_ui.items import Item
from eval_ui.service import STORE_FILE
from eval_ui.stats_tab import AUTO_DIR
from eval_ui.store import AnnotationStore, iso_utc

from .annotation_pages import (
    CITING,
    CITING_ONE,
    DESKTOP,
    PHONE,
    card_keys,
    open_admin,
    open_tab,
    page_url,
    shown_item,
    sign_in,
    wait_ready,
    wait_saved,
)
from .fakes.live_app import annotation_app, require_chromium

CAROL = 'carol<img src=x onerror="window.__pwned=1">'  # a name in the users file that is HTML
USERS = f"root:rootpw:admin,alice:alicepw,bob:bobpw,{CAROL}:carolpw"
HOSTILE = '<script>window.__pwned=2</script><img src="https://leak.invalid/x.png">'
N_ITEMS = 8
SHOTS = "three-annotators"

require_chromium()

sync_api = pytest.importorskip("playwright.sync_api")
pytestmark = [pytest.mark.browser, pytest.mark.filterwarnings("ignore::UserWarning")]


def items() -> list[Item]:
    """Questions answered by sysA (three statutes, one of them not in the database) and sysB (one)."""
    return [
        Item(
            f"q{i}:sysA:sysB",
            f"第{i}个问题：离婚后孩子归谁？" + (HOSTILE if i == 3 else ""),
            f"{CITING}（甲{i}）",
            f"{CITING_ONE}（乙{i}）",
            "sysA",
            "sysB",
        )
        for i in range(N_ITEMS)
    ]


def write_auto_results(folder: Path) -> list[Path]:
    """``details.jsonl`` and ``pairwise.jsonl`` as ``python -m lawluo evaluate`` writes them."""
    folder.mkdir(parents=True, exist_ok=True)
    details = [
        {
            "id": f"q{i}",
            "system": system,
            "rel": {"score": (3 * i + k) % 10},
            "tlc": {"score": (5 * i + 2 * k) % 10},
        }
        for i in range(N_ITEMS)
        for k, system in enumerate(("sysA", "sysB"))
    ]
    pairwise = [
        {
            "id": f"q{i}",
            "first": "sysA",
            "second": "sysB",
            "verdicts": [
                {"order": "first=A", "preference": ("A", "B", "tie", "A")[i % 4]},
                {"order": "first=B", "preference": ("B", "A", "A", "A")[i % 4]},
            ],
        }
        for i in range(N_ITEMS)
    ]
    paths = []
    for name, rows in (("details.jsonl", details), ("pairwise.jsonl", pairwise)):
        path = folder / name
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        paths.append(path)
    return paths


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    folder = tmp_path_factory.mktemp("three-annotators")
    with AnnotationStore(folder / STORE_FILE) as store:
        store.import_items(items())
    auto = write_auto_results(folder / AUTO_DIR)
    with annotation_app(folder, USERS) as running:
        running.auto = auto
        yield running


@pytest.fixture(scope="module")
def checker():
    from lawluo.config import load_settings
    from lawluo.law.checker import CitationChecker
    from lawluo.law.database import StatuteDB

    env = {k: v for k, v in os.environ.items() if k.startswith("LAWLUO_")}
    return CitationChecker(StatuteDB(load_settings(environ=env).statutes_path))


# -- how each annotator labels -------------------------------------------------------------------


def mark(page, side: str, n: int, code: str) -> None:
    page.click(f"#ann-{side}-mark-{n} label:has(input[value='{code}'])")


class Annotator:
    """One annotator's page and habits; ``expected`` records what they did, in the item's orientation."""

    def __init__(self, page, name: str, verdicts: tuple[str, ...], use_keys: bool):
        self.page, self.name, self.verdicts, self.use_keys = page, name, verdicts, use_keys
        self.n = 0
        self.expected: dict[str, dict] = {}
        self.first_item: str | None = None

    def has_item(self) -> bool:
        return self.page.locator("#ann-verdict-left").is_visible()

    def statute_labels(self, keys: list[str]) -> dict[str, str]:
        """The labels this annotator gives the statutes of one answer (their habit, varied by item)."""
        if self.name == "alice":  # 这些都没问题, then the article that does not exist
            return {k: "wrong_not_found" if "第九千条" in k else "correct" for k in keys}
        if self.name == "bob":  # one by one; calls 第一千零八十四条 wrong content every other item
            return {
                k: "wrong"
                if "第九千条" in k
                else "wrong_content"
                if "第一千零八十四条" in k and self.n % 2 == 0
                else "correct"
                for k in keys
            }
        if self.n % 2 == 0:  # the third one: sometimes everything is fine, sometimes as alice
            return dict.fromkeys(keys, "correct")
        return {k: "wrong_not_found" if "第九千条" in k else "correct" for k in keys}

    def label_one(self, app) -> None:
        page = self.page
        a = shown_item(app.store, self.name, page)
        self.first_item = self.first_item or a.item.id
        sides = {"left": "b" if a.swapped else "a", "right": "a" if a.swapped else "b"}
        scores = {"alice": (7, 6, 4, 5), "bob": (6, 6, 3, 2 + self.n % 3)}.get(
            self.name, (8 - self.n % 2, 3, 5, 5)
        )
        for field, value in zip(("left-rel", "left-tlc", "right-rel", "right-tlc"), scores, strict=True):
            page.fill(f"#ann-{field} input", str(value))
        comment = HOSTILE if self.name == CAROL and self.n == 0 else f"{self.name} 第{self.n}条"
        page.fill("#ann-comment textarea", comment)
        # the statutes last: a key pressed now has a statute's label in focus, not a text field
        given: dict[str, dict[str, str]] = {}
        for shown, side in sides.items():
            keys = card_keys(page, shown)
            if self.name == "bob" and shown == "right" and self.n % 2:
                given[side] = {}  # left unlabelled: missing data, never "correct"
                continue
            labels = self.statute_labels(keys)
            quick = self.name == "alice" or (self.name == CAROL and self.n % 2 == 0)
            if (
                quick
            ):  # 这些都没问题: every statute not yet labelled that the checker found → 真实, then the rest
                page.click(f"#ann-{shown}-none-wrong")
                page.wait_for_function(
                    f"() => document.querySelector('#ann-{shown}-mark-1 input:checked') !== null"
                )
            for n, key in enumerate(keys, start=1):
                if (
                    not quick or labels[key] != "correct" or "第九千条" in key
                ):  # no such article: not one-click
                    mark(page, shown, n, labels[key])
            given[side] = labels
        shown_verdict = self.verdicts[self.n % len(self.verdicts)]
        wait_ready(page)
        before = page.inner_text("#ann-status")
        if self.use_keys:
            assert page.evaluate("document.activeElement.type") == "radio"
            page.keyboard.press(next(v.key for v in verdicts.VERDICT_TABLE if v.shown == shown_verdict))
        else:
            page.click(f"#ann-verdict-{shown_verdict}")
        wait_saved(page, before)
        rel_l, tlc_l, rel_r, tlc_r = scores
        self.expected[a.item.id] = {
            "verdict": a.unswap(shown_verdict),
            "statutes": given,
            "scores": {sides["left"]: (rel_l, tlc_l), sides["right"]: (rel_r, tlc_r)},
            "comment": comment,
        }
        self.n += 1


# -- the export, read back ----------------------------------------------------------------------------


def download(page, link) -> bytes:
    response = page.context.request.get(link.get_attribute("href"))
    assert response.ok, response.status
    return response.body()


def read_rows(name: str, data: bytes) -> list[dict]:
    if name.endswith(".csv"):
        return list(csv.DictReader(io.StringIO(data.decode("utf-8-sig"))))
    if name.endswith(".jsonl"):
        text = data.decode("utf-8")
        assert "\\u" not in text  # UTF-8 as it is, no escapes
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    import pyarrow.parquet as pq

    return pq.read_table(io.BytesIO(data)).to_pylist()


def cell(value, fmt: str, kind: str):
    """An exported value as Python: CSV cells are text (empty for None; arrays as JSON text)."""
    if fmt != "csv":
        return value
    if value == "":
        return None
    if kind == "json":
        return json.loads(value)
    if kind == "float":
        return float(value)
    if kind == "int":
        return int(value)
    return value


def iso(value, fmt: str) -> str | None:
    if value is None or value == "":
        return None
    return value.isoformat() if fmt == "parquet" else value


def same_number(a, b) -> bool:
    if a is None or (isinstance(a, float) and math.isnan(a)):
        return b is None or (isinstance(b, float) and math.isnan(b))
    return b is not None and math.isclose(float(a), float(b))


def check_labels_file(name: str, rows: list[dict], store: AnnotationStore) -> None:
    fmt = name.rsplit(".", 1)[1]
    frame = store.labels_frame()
    assert len(rows) == len(frame) > 0, name
    by_key = {(r["annotator"], r["item_id"]): r for r in rows}
    assert len(by_key) == len(rows)  # one row per (item, annotator)
    for stored in frame.to_dict("records"):
        row = by_key[(stored["annotator"], stored["item_id"])]
        label = store.label(stored["annotator"], stored["item_id"])
        assert row["verdict"] == stored["verdict"] == label["verdict"], name
        assert (cell(row["comment"], fmt, "str") or "") == label["comment"], name
        assert cell(row["version"], fmt, "int") == label["version"]
        for side in ("a", "b"):
            mine = label["answer_labels"][side]
            for score in ("rel", "tlc"):
                assert same_number(mine[score], cell(row[f"{score}_{side}"], fmt, "float")), (name, score)
            statutes = cell(row[f"statutes_{side}"], fmt, "json")
            assert isinstance(statutes, list)  # an array, not a string holding JSON
            assert {s["statute"]: s["label"] for s in statutes} == mine["statutes"], name
            wrong = {k for k, code in mine["statutes"].items() if verdicts.STATUTE_HALLUCINATED[code]}
            assert set(cell(row[f"hallucinated_{side}"], fmt, "json")) == wrong
        for column in ("created_at", "updated_at"):
            assert iso(row[column], fmt) == iso_utc(label[column]), (name, column)
            assert iso(row[column], fmt).endswith("+00:00")


def check_statute_file(name: str, rows: list[dict], store: AnnotationStore, cited) -> None:
    """Every (label, side, statute) row, unlabelled cited statutes included (``cited``: as the app's)."""
    fmt = name.rsplit(".", 1)[1]
    frame = store.statute_labels_frame(cited=cited)
    exported = {
        (r["annotator"], r["item_id"], r["side"], r["statute"], cell(r["label"], fmt, "str")) for r in rows
    }
    stored = {
        (
            r["annotator"],
            r["item_id"],
            r["side"],
            r["statute"],
            r["label"] if isinstance(r["label"], str) else None,
        )
        for r in frame.to_dict("records")
    }
    assert len(rows) == len(frame) > 0 and exported == stored, name
    assert any(
        label is None for *_, label in stored
    )  # a statute left unlabelled is a row too, without a label


# -- the test ------------------------------------------------------------------------------------------


def test_three_annotators_and_an_admin_until_every_statistic_has_a_value(browser, app, checker):
    from eval_ui.statutes import cited_statutes

    alice = Annotator(
        sign_in(browser, app, "alice", "alicepw", DESKTOP, SHOTS), "alice", ("left", "right", "tie"), False
    )
    bob = Annotator(
        sign_in(browser, app, "bob", "bobpw", PHONE, SHOTS),
        "bob",
        ("right", "left", "both_bad", "left"),
        True,
    )
    carol = Annotator(
        sign_in(browser, app, CAROL, "carolpw", DESKTOP, SHOTS),
        CAROL,
        ("left", "left", "right", "tie"),
        False,
    )
    annotators = (alice, bob, carol)
    for person in annotators:
        wait_ready(person.page)
        person.page.shot("first-item", full=False)

    def auto_hallucinated(item_id: str, side: str) -> dict[str, str]:
        """The checker's verdicts, as the statistics tab gives them."""
        item = app.store.item(item_id)
        return {
            s.key: s.verdict for s in cited_statutes(checker, item.answer_a if side == "a" else item.answer_b)
        }

    auto = AutoMetrics.read(app.auto)
    missing, rounds = ["not computed"], 0
    while missing and any(p.has_item() for p in annotators):
        for person in annotators:
            if person.has_item():
                person.label_one(app)
        rounds += 1
        report = report_from_store(app.store, "raw", auto_hallucinated, auto, n_boot=200)
        missing = missing_statistics(report)
    assert not missing, {key: report.statistics[key].needs for key in missing}
    assert len({p.first_item for p in annotators}) < 3, "overlap first: the first items are shared"
    for person in annotators:  # what each one did in the page is what the store holds
        person.page.shot("after-labelling", full=False)
        for item_id, want in person.expected.items():
            label = app.store.label(person.name, item_id)
            assert label["verdict"] == want["verdict"] and label["comment"] == want["comment"]
            for side in ("a", "b"):
                assert label["answer_labels"][side]["statutes"] == want["statutes"][side], (
                    person.name,
                    item_id,
                )
                assert (label["answer_labels"][side]["rel"], label["answer_labels"][side]["tlc"]) == want[
                    "scores"
                ][side]
        assert person.page.evaluate("window.__pwned") is None
        person.page.context.close()

    # the admin resolves the first disagreement
    root = sign_in(browser, app, "root", "rootpw", DESKTOP, SHOTS)
    open_admin(root, app)  # the admins' page, /admin
    root.wait_for_selector("#adj-comparison .adj-table")
    pending = next(i for i in app.store.disagreements() if not i["adjudication"])  # the tab opens it first
    assert pending["item_id"] in root.inner_text("#adj-comparison")
    comparison = root.inner_text("#adj-comparison")
    for label in pending["labels"]:
        assert label["annotator"] in comparison  # every annotator, by name (shown as text)
    assert "sysA" in root.inner_text("#adj-a") and "sysB" in root.inner_text("#adj-b")
    assert root.locator("#adj-comparison img, #adj-comparison script").count() == 0
    resolved = {}
    for side in ("a", "b"):
        keys = [root.locator(f"#adj-{side}-card-{n} b").first.inner_text().strip()
                for n in range(1, 4) if root.locator(f"#adj-{side}-card-{n}").is_visible()]  # fmt: skip
        resolved[side] = {k: "wrong_not_found" if "第九千条" in k else "correct" for k in keys}
        for n, key in enumerate(keys, start=1):
            root.click(f"#adj-{side}-mark-{n} label:has(input[value='{resolved[side][key]}'])")
    root.click("#adj-verdict label:has(input[value='A'])")
    root.fill("#adj-note textarea", "以多数为准 " + HOSTILE)
    root.click("#adj-save")
    root.wait_for_selector("#adj-message:has-text('Resolution recorded')", timeout=20000)
    root.shot("adjudicated", full=False)
    saved = app.store.adjudication(pending["item_id"])
    assert saved["verdict"] == "A" and saved["note"] == "以多数为准 " + HOSTILE
    assert {s: saved["answer_labels"][s]["statutes"] for s in ("a", "b")} == resolved

    # the admin's statistics in the page: every statistic has a value
    open_tab(root, "统计")
    root.click("#st-compute")
    root.wait_for_function(
        "() => document.querySelector('#st-report').innerText.trim().length > 50", timeout=60000
    )
    assert NOT_YET not in root.inner_text("#st-report")
    root.shot("statistics")

    # every export file, row by row against the store
    root.goto(page_url(app, "/annotate"))
    root.wait_for_selector("#ann-admin", state="visible", timeout=30_000)
    root.click("#ann-admin")
    root.click("#ann-export-all")
    links = root.locator("#ann-exported-all a")
    root.wait_for_function(
        "() => document.querySelectorAll('#ann-exported-all a').length >= 7", timeout=30000
    )
    files = {}
    for i in range(links.count()):
        link = links.nth(i)
        name = unquote(link.get_attribute("href").split("?", 1)[0].rsplit("/", 1)[-1])
        files[name] = download(root, link)
    assert {f"{k}.{f}" for k in ("labels", "statute_labels") for f in ("csv", "jsonl", "parquet")} <= set(
        files
    )
    for name, data in files.items():
        rows = read_rows(name, data) if not name.startswith("adjudications") else None
        if name.startswith("labels."):
            check_labels_file(name, rows, app.store)
        elif name.startswith("statute_labels."):
            check_statute_file(name, rows, app.store, lambda i, side: list(auto_hallucinated(i, side)))
    (adjudication,) = read_rows("adjudications.jsonl", files["adjudications.jsonl"])
    assert adjudication["item_id"] == pending["item_id"] and adjudication["verdict"] == "A"
    assert (
        adjudication["note"] == saved["note"]
        and adjudication["answer_labels"]["a"]["statutes"] == resolved["a"]
    )
    assert adjudication["updated_at"] == iso_utc(saved["updated_at"])
    root.shot("exported")
    assert root.evaluate("window.__pwned") is None
    root.context.close()
