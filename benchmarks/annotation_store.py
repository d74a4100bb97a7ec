"""Annotation labels under load, on two paths: the store alone, and the app's HTTP API.

    python benchmarks/annotation_store.py                       # both paths
    python benchmarks/annotation_store.py --path store --annotators 16 --labels 200 --items 3200 --overlap 2
    python benchmarks/annotation_store.py --path http --http-annotators 8 --http-labels 25

**Path 1, store only** (``--path store``): direct :class:`~eval_ui.store.AnnotationStore` calls, no
web server, 16 lawyers saving 200 labels each at once, as threads and as processes. Each writer takes its next item, saves a label (random verdict, Rel, T_LC, one statute marked) and
acknowledges it; at random it also edits an earlier label (new submission id, different verdict),
re-saves its current label unchanged (new submission id: no new version), double-submits the
previous save (same submission id, at once) or retries an old submission late (same id, after
later edits). Every writer keeps what it believes it saved — {item: (verdict, submission id)} — and
counts its edits; afterwards the store is checked against that: **lost** (an acknowledged label
that is not the current one), **duplicated** (more than one row per (annotator, item), a repeated
submission stored twice or not reported as a duplicate), history rows equal to the edits that
changed a label. The store runs as the app runs it: WAL, ``synchronous=FULL`` (every acknowledged
save is fsynced), its pooled connections shared by the threads (threads mode) or one store per
process (processes mode). Throughput counts every acknowledged ``save_label`` call, timed from a
barrier all writers start at.

**Path 2, HTTP** (``--path http``): the whole app (``build_app``, as ``tests/fakes/live_app.py``
serves it; its queue settings, the citation checker) on a loopback port, behind Gradio's login with
one user per annotator. Each annotator is a ``gradio_client.Client`` signed in with its password
that opens the tab (``/annotation_open``) and saves ``--http-labels`` new labels through
``/label_left`` … ``/label_both_bad`` (random verdict, Rel, T_LC, the first cited statute ticked at
random), each call returning the next item, all annotators starting together. A label counts as
acknowledged when the page's answer says 已保存 Saved; the item it labelled and its left/right order
are read from the question and left answer shown, independently of the store. Afterwards the store is
checked as above (**lost**, **duplicated**: a label or submission nobody was told was saved).
Latency is per label call, client side (the save and the next item's view). The clients run in the
server's process (one GIL, the same cores), so the figures are a lower bound. Every loop is bounded by
``--http-labels`` and by ``--http-seconds``; only 127.0.0.1 is contacted.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import random
import re
import tempfile
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from _common import percentile

STATUTE = "《民法典》第1079条"


def setup(path: Path, n_items: int, annotators: list[str], overlap: int) -> None:
    from eval_ui.items import Item
    from eval_ui.store import AnnotationStore

    with AnnotationStore(path) as store:
        store.import_items(
            [
                Item(
                    f"q{i:05d}",
                    f"问题{i}：离婚时财产如何分割？",
                    f"甲系统的回答{i}：依据{STATUTE}，协议离婚。",
                    f"乙系统的回答{i}",
                    "sysA",
                    "sysB",
                )
                for i in range(n_items)
            ]
        )
        for name in annotators:
            store.add_annotator(name)
        store.assign(overlap=overlap, seed=0)


def stored_verdict(shown: str, swapped: bool) -> str:
    """The writer's own un-swapping (not the store's), so the check is independent of the code under test."""
    return {"left": "B" if swapped else "A", "right": "A" if swapped else "B"}.get(shown, shown)


def random_label(rng: random.Random):
    """A new label with a random verdict, Rel and T_LC (the statute marked at random) and comment."""
    from eval_ui.store import AnswerLabel, LabelInput

    return LabelInput(
        rng.choice(("left", "right", "tie", "both_bad")),
        left=AnswerLabel(
            {STATUTE: "wrong" if rng.random() < 0.3 else "correct"},
            rel=rng.randint(0, 10),
            tlc=rng.randint(0, 10),
        ),
        right=AnswerLabel(rel=rng.randint(0, 10)),
        comment=rng.choice(("", "理由充分", "引用法条有误")),
        seconds_spent=rng.uniform(5, 120),
    )


def writer(store, name: str, n_labels: int, seed: int, barrier) -> dict:
    """Save ``n_labels`` new labels plus random edits, unchanged re-saves and repeated submissions."""
    from eval_ui.store import LabelInput

    rng = random.Random(seed)
    expected: dict[str, tuple[str, str]] = {}  # item -> (stored verdict, submission id of the current label)
    last_input: dict[str, LabelInput] = {}
    swapped: dict[str, bool] = {}
    sent: list[tuple[str, str, LabelInput]] = []  # every (submission id, item, label) acknowledged
    counts = dict(acks=0, new=0, edits=0, resaves=0, doubles=0, late_retries=0, bad_duplicate_flags=0)
    latencies = []

    def save(item_id: str, label: LabelInput, sid: str):
        t = time.perf_counter()
        saved = store.save_label(name, item_id, label, sid)
        latencies.append((time.perf_counter() - t) * 1000)
        counts["acks"] += 1
        return saved

    barrier.wait()
    start = time.time()
    while counts["new"] < n_labels:
        shown = store.next_item(name)
        if shown is None:
            raise RuntimeError(f"{name} ran out of items after {counts['new']}; use more --items")
        label, sid = random_label(rng), uuid.uuid4().hex
        item_id = shown.item.id
        save(item_id, label, sid)
        swapped[item_id] = shown.swapped
        expected[item_id], last_input[item_id] = (
            (stored_verdict(label.verdict_shown, shown.swapped), sid),
            label,
        )
        sent.append((sid, item_id, label))
        counts["new"] += 1

        r = rng.random()
        if r < 0.10:  # edit an earlier label: a different verdict, new submission id
            item_id = rng.choice(list(expected))
            old = expected[item_id][0]
            choices = [
                v for v in ("left", "right", "tie", "both_bad") if stored_verdict(v, swapped[item_id]) != old
            ]
            label, sid = LabelInput(rng.choice(choices), comment="改判"), uuid.uuid4().hex
            save(item_id, label, sid)
            expected[item_id] = (stored_verdict(label.verdict_shown, swapped[item_id]), sid)
            last_input[item_id] = label
            sent.append((sid, item_id, label))
            counts["edits"] += 1
        elif r < 0.15:  # the current label again with a new submission id: nothing changes
            item_id = rng.choice(list(expected))
            sid = uuid.uuid4().hex
            counts["bad_duplicate_flags"] += save(item_id, last_input[item_id], sid).changed
            sent.append((sid, item_id, last_input[item_id]))
            counts["resaves"] += 1
        elif r < 0.25:  # double click: the previous save again with its own submission id
            sid, item_id, label = sent[-1]
            counts["bad_duplicate_flags"] += not save(item_id, label, sid).duplicate
            counts["doubles"] += 1
        elif r < 0.30:  # a retry that arrives late, after other saves (maybe after an edit of the item)
            sid, item_id, label = rng.choice(sent)
            counts["bad_duplicate_flags"] += not save(item_id, label, sid).duplicate
            counts["late_retries"] += 1
    end = time.time()
    return dict(
        annotator=name,
        expected=expected,
        submissions=len({sid for sid, _, _ in sent}),
        start=start,
        end=end,
        latencies=latencies,
        **counts,
    )


def _process_writer(path: str, name: str, n_labels: int, seed: int, barrier, results) -> None:
    from eval_ui.store import AnnotationStore

    store = AnnotationStore(path)
    try:
        results.put(writer(store, name, n_labels, seed, barrier))
    except BaseException as exc:  # the parent reports it instead of waiting forever
        results.put(dict(annotator=name, error=repr(exc)))
        raise
    finally:
        store.close()


def run_threads(path: Path, names: list[str], n_labels: int) -> list[dict]:
    from eval_ui.store import AnnotationStore

    store = AnnotationStore(path)
    barrier = threading.Barrier(len(names))
    try:
        with ThreadPoolExecutor(len(names)) as pool:
            futures = [pool.submit(writer, store, n, n_labels, k, barrier) for k, n in enumerate(names)]
            return [f.result() for f in futures]
    finally:
        store.close()


def run_processes(path: Path, names: list[str], n_labels: int) -> list[dict]:
    ctx = mp.get_context("spawn")
    barrier, results = ctx.Barrier(len(names)), ctx.Queue()
    procs = [
        ctx.Process(target=_process_writer, args=(str(path), n, n_labels, k, barrier, results))
        for k, n in enumerate(names)
    ]
    for p in procs:
        p.start()
    out = [results.get(timeout=600) for _ in procs]
    for p in procs:
        p.join()
    errors = [r for r in out if "error" in r]
    if errors:
        raise RuntimeError(f"writers failed: {errors}")
    return out


def check(path: Path, results: list[dict]) -> dict:
    """Compare the store with what every writer believes it saved."""
    from eval_ui.store import AnnotationStore

    lost = duplicated = history_mismatch = 0
    with AnnotationStore(path) as store, store._read() as con:
        duplicated += con.execute(
            "SELECT COUNT(*) FROM (SELECT 1 FROM labels GROUP BY annotator, item_id HAVING COUNT(*) > 1)"
        ).fetchone()[0]
        for r in results:
            name = r["annotator"]
            current = {
                row[0]: (row[1], row[2])
                for row in con.execute(
                    "SELECT item_id, verdict, submission_id FROM labels WHERE annotator = ?", (name,)
                )
            }
            lost += sum(current.get(item) != want for item, want in r["expected"].items())
            duplicated += len(set(current) - set(r["expected"]))  # labels nobody acknowledged
            history = con.execute(
                "SELECT COUNT(*) FROM label_history WHERE annotator = ?", (name,)
            ).fetchone()[0]
            history_mismatch += abs(history - r["edits"])
            n_sub = con.execute("SELECT COUNT(*) FROM submissions WHERE annotator = ?", (name,)).fetchone()[0]
            duplicated += abs(n_sub - r["submissions"]) + r["bad_duplicate_flags"]
            if store.progress(name)[0] != len(r["expected"]):
                lost += 1
        integrity = con.execute("PRAGMA integrity_check").fetchone()[0]
    return dict(lost=lost, duplicated=duplicated, history_mismatch=history_mismatch, integrity=integrity)


def report(mode: str, results: list[dict], checked: dict) -> None:
    acks = sum(r["acks"] for r in results)
    wall = max(r["end"] for r in results) - min(r["start"] for r in results)
    latencies = [x for r in results for x in r["latencies"]]
    total = {k: sum(r[k] for r in results) for k in ("new", "edits", "resaves", "doubles", "late_retries")}
    print(
        f"{mode:<9} {len(results)} writers: {acks} saves acknowledged in {wall:.2f}s = {acks / wall:,.0f} labels/s; "
        f"save_label p50 {percentile(latencies, 50):.1f} ms, p99 {percentile(latencies, 99):.1f} ms"
    )
    print(
        f"          {total['new']} new labels, {total['edits']} edits, {total['resaves']} unchanged re-saves, "
        f"{total['doubles']} double submits, {total['late_retries']} late retries"
    )
    print(
        f"          check: {checked['lost']} lost, {checked['duplicated']} duplicated, "
        f"history rows {'==' if checked['history_mismatch'] == 0 else '!='} edits "
        f"(off by {checked['history_mismatch']}), integrity_check {checked['integrity']}"
    )


# -- path 2: the app's HTTP API --------------------------------------------------------------------


def _view_outputs() -> tuple[str, ...]:
    from eval_ui.annotate_tab import API_OUTPUTS  # the API's outputs of the annotation handlers

    return API_OUTPUTS


def shown_item(view: dict) -> tuple[str, bool] | None:
    """(item id, swapped) of the item a view shows, read from its text (``问题{i}``, 甲 on the left)."""
    found = re.search(r"问题(\d+)：", view["question"])
    if found is None:
        return None
    return f"q{int(found.group(1)):05d}", "乙系统的回答" in view["left"]


def http_annotator(url: str, name: str, n_labels: int, seed: int, barrier, deadline: float) -> dict:
    """Sign in as ``name`` and save up to ``n_labels`` new labels through the API, until ``deadline``."""
    from gradio_client import Client

    rng = random.Random(seed)
    client = Client(url, auth=(name, PASSWORD), verbose=False, download_files=False, analytics_enabled=False)
    expected: dict[str, str] = {}  # item -> stored verdict, for every label the page said was saved
    latencies, refused = [], []
    barrier.wait()
    start = time.time()
    outputs = _view_outputs()
    view = dict(zip(outputs, client.predict(api_name="/annotation_open"), strict=True))
    while len(expected) + len(refused) < n_labels and time.time() < deadline:
        shown = shown_item(view)
        if shown is None:
            raise RuntimeError(f"{name}: no item shown ({view['message'][:200]}); use more --items")
        verdict = rng.choice(("left", "right", "tie", "both_bad"))
        cites = bool(view["left_card_1"])  # the first statute of the left answer, labelled now and then
        marks = {"left_1": "wrong"} if cites and rng.random() < 0.3 else {}
        args = (rng.randint(0, 10), rng.randint(0, 10), rng.randint(0, 10), None, "理由充分")
        t = time.perf_counter()
        out = client.predict(*args, **marks, api_name=f"/label_{verdict}")
        latencies.append((time.perf_counter() - t) * 1000)
        view = dict(zip(outputs, out, strict=True))
        if "已保存" in view["message"]:
            expected[shown[0]] = stored_verdict(verdict, shown[1])
        else:
            refused.append(view["message"][:200])
    end = time.time()
    client.close()
    return dict(annotator=name, expected=expected, refused=refused, latencies=latencies, start=start, end=end)


PASSWORD = "bench-pw"


def run_http(folder: Path, names: list[str], n_labels: int, seconds: float) -> tuple[list[dict], Path, dict]:
    """Serve the app on loopback with ``names`` as users of the store in ``folder``; annotate through HTTP."""
    from eval_ui.service import STORE_FILE
    from tests.fakes.live_app import annotation_app

    users = folder / "users.txt"  # a file: an inline list this long would be taken for a file name
    users.write_text("".join(f"{n}:{PASSWORD}\n" for n in names), encoding="utf-8")
    t0 = time.perf_counter()
    with annotation_app(folder, str(users)) as app:
        started = time.perf_counter() - t0
        barrier = threading.Barrier(len(names))
        deadline = time.time() + seconds
        with ThreadPoolExecutor(len(names)) as pool:
            futures = [
                pool.submit(http_annotator, app.url, n, n_labels, k, barrier, deadline)
                for k, n in enumerate(names)
            ]
            results = [f.result() for f in futures]
    return results, folder / STORE_FILE, dict(app_start_s=started, url=app.url)


def check_http(path: Path, results: list[dict]) -> dict:
    """Compare the store with what every annotator's page said was saved."""
    from eval_ui.store import AnnotationStore

    lost = duplicated = 0
    with AnnotationStore(path) as store, store._read() as con:
        for r in results:
            current = {
                row[0]: row[1]
                for row in con.execute(
                    "SELECT item_id, verdict FROM labels WHERE annotator = ?", (r["annotator"],)
                )
            }
            lost += sum(current.get(item) != want for item, want in r["expected"].items())
            duplicated += len(set(current) - set(r["expected"]))  # a label nobody was told was saved
            n_sub = con.execute(
                "SELECT COUNT(*) FROM submissions WHERE annotator = ?", (r["annotator"],)
            ).fetchone()[0]
            duplicated += max(0, n_sub - len(r["expected"]))
        integrity = con.execute("PRAGMA integrity_check").fetchone()[0]
    return dict(lost=lost, duplicated=duplicated, integrity=integrity)


def report_http(results: list[dict], checked: dict, info: dict) -> None:
    acks = sum(len(r["expected"]) for r in results)
    refused = [m for r in results for m in r["refused"]]
    wall = max(r["end"] for r in results) - min(r["start"] for r in results)
    latencies = [x for r in results for x in r["latencies"]]
    print(
        f"http      {len(results)} annotators (gradio_client, signed in) on {info['url']} (app started in "
        f"{info['app_start_s']:.1f}s): {acks} labels acknowledged in {wall:.2f}s = {acks / wall:,.1f} labels/s; "
        f"label call p50 {percentile(latencies, 50):.0f} ms, p95 {percentile(latencies, 95):.0f} ms, "
        f"max {max(latencies):.0f} ms"
    )
    print(
        f"          check: {checked['lost']} lost, {checked['duplicated']} duplicated, {len(refused)} refused"
        + (f" (first: {refused[0]!r})" if refused else "")
        + f", integrity_check {checked['integrity']}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--path", choices=("store", "http", "both"), default="both", help="what to measure")
    parser.add_argument("--annotators", type=int, default=16, help="store path: concurrent writers")
    parser.add_argument("--labels", type=int, default=200, help="store path: new labels per annotator")
    parser.add_argument("--items", type=int, default=3200)
    parser.add_argument("--overlap", type=int, default=2)
    parser.add_argument(
        "--http-annotators", type=int, default=8, help="HTTP path: concurrent signed-in clients"
    )
    parser.add_argument("--http-labels", type=int, default=25, help="HTTP path: new labels per annotator")
    parser.add_argument(
        "--http-seconds", type=float, default=120, help="HTTP path: stop labelling after this"
    )
    parser.add_argument("--dir", type=Path, default=None, help="where the databases go (default: a temp dir)")
    args = parser.parse_args()

    failed = False
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        if args.path in ("store", "both"):
            names = [f"律师{k:02d}" for k in range(args.annotators)]
            print(
                f"PATH 1, store only (direct AnnotationStore calls, no web server): {args.items} items, overlap "
                f"{args.overlap} ({args.items * args.overlap // args.annotators} assigned per annotator), "
                f"{args.annotators} annotators x {args.labels} new labels; SQLite WAL, synchronous=FULL"
            )
            for mode, run in (("threads", run_threads), ("processes", run_processes)):
                path = Path(tmp) / f"{mode}.sqlite"
                setup(path, args.items, names, args.overlap)
                results = run(path, names, args.labels)
                checked = check(path, results)
                report(mode, results, checked)
                failed |= bool(checked["lost"] or checked["duplicated"] or checked["history_mismatch"])
        if args.path in ("http", "both"):
            names = [f"lawyer{k:02d}" for k in range(args.http_annotators)]
            folder = Path(tmp) / "http"
            per_annotator = args.items * args.overlap // len(names)
            if per_annotator < args.http_labels:
                raise SystemExit(f"--items {args.items} gives {per_annotator} items per annotator; need more")
            print(
                f"PATH 2, HTTP (the app on 127.0.0.1 behind Gradio's login, gradio_client): {args.items} items, "
                f"overlap {args.overlap}, {len(names)} annotators x {args.http_labels} new labels "
                f"(at most {args.http_seconds:g}s)"
            )
            setup(folder / "annotations.sqlite", args.items, names, args.overlap)
            results, path, info = run_http(folder, names, args.http_labels, args.http_seconds)
            checked = check_http(path, results)
            report_http(results, checked, info)
            failed |= bool(checked["lost"] or checked["duplicated"])
    if failed:
        raise SystemExit("FAILED: the store does not match what the annotators were told they saved")


if __name__ == "__main__":
    main()
