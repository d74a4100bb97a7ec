"""How long the statistics tab's report takes on a store of 5,000 labels.

    python benchmarks/annotation_stats.py                        # 5,000 labels, 8 annotators, 4 systems
    python benchmarks/annotation_stats.py --labels 20000 --annotators 16 --systems 6 --repeat 5
    python benchmarks/annotation_stats.py --store /tmp/stats.sqlite   # build once, reuse the file afterwards

Builds a synthetic :class:`~eval_ui.store.AnnotationStore` through its public API: ``--systems``
systems of known Bradley–Terry strength compared on ``labels / overlap`` items, each item labelled by
``--overlap`` of ``--annotators`` annotators (one of them drifting: random verdicts), every answer citing
two statutes that the annotators label 真实 / 有误 (or leave unlabelled, or confirm "none of these is
wrong"), 2% of the items adjudicated; automatic results as ``lawluo evaluate`` writes them (Rel, T_LC
per answer and a judge's two verdicts per item) and a checker verdict per cited statute. Then times,
each ``--repeat`` times (printed: the best and the median wall-clock seconds, and the best CPU seconds;
the best is the figure least disturbed by other processes on a shared machine):

1. **frames**: the store's ``tables`` (``labels_frame`` and ``statute_labels_frame`` from one read) and
   ``annotator_progress`` (raw; the adjudicated frames too for the adjudicated report);
2. **report**: :func:`eval_ui.consistency.human_consistency` on those frames — every statistic of the
   tab, with 1,000 bootstrap resamples for every interval (raw labels, then adjudicated);
3. **charts**: the same report with its charts drawn to PNG (the difference is the charts' time).

Importing the statistics libraries (scipy, statsmodels, krippendorff, matplotlib) is timed apart: the
tab imports them in the background when an admin opens the page. Setup (saving every label, fsynced
as the app does) is not part of any figure.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import sys
import tempfile
import time
import zlib
from pathlib import Path

import _common  # noqa: F401 - puts the repository on sys.path

STATUTES = ("《民法典》第{n}条", "《劳动合同法》第{n}条")


def cited(item_id: str, side: str) -> list[str]:
    """Two statutes per answer (what the checker would list for it)."""
    n = int(item_id.split(":")[0][1:])
    return [template.format(n=(n * 7 + k + (side == "b")) % 900 + 1) for k, template in enumerate(STATUTES)]


def checker_says(item_id: str, side: str) -> dict[str, str]:
    """The checker's verdict on each cited statute: one in six hallucinated (a wrong number)."""
    return {
        key: "wrong_number" if zlib.crc32(key.encode("utf-8")) % 6 == 0 else "verified"
        for key in cited(item_id, side)
    }


def build(path: Path, n_labels: int, n_annotators: int, n_systems: int, overlap: int, seed: int) -> dict:
    from eval_ui.items import Item
    from eval_ui.store import AnnotationStore, AnswerLabel, LabelInput

    rng = random.Random(seed)
    systems = [f"sys{k}" for k in range(n_systems)]
    strength = {s: 0.4 * k for k, s in enumerate(systems)}
    n_items = math.ceil(n_labels / overlap)
    items = []
    for n in range(n_items):
        a, b = rng.sample(systems, 2)
        items.append(Item(f"q{n}:{a}:{b}", f"问题 {n}", f"{a} 的回答", f"{b} 的回答", a, b))
    annotators = [f"律师{k}" for k in range(n_annotators)]
    with AnnotationStore(path, cited=cited) as store:
        store.import_items(items)
        for name in annotators:
            store.add_annotator(name)
        store.add_annotator("admin", "admin")
        store.assign(overlap, seed=seed)
        saved = 0
        while saved < n_labels:
            progressed = False
            for who, name in enumerate(annotators):
                shown = store.next_item(name)
                if shown is None or saved >= n_labels:
                    continue
                item = shown.item
                p_a = 1 / (1 + math.exp(strength[item.system_b] - strength[item.system_a]))
                r = rng.random()
                if who == 0:  # the drifting annotator: verdicts at random
                    verdict = rng.choice(["A", "B", "tie", "both_bad"])
                else:
                    verdict = "A" if r < 0.8 * p_a else "B" if r < 0.8 else rng.choice(["tie", "both_bad"])
                answers = []
                for side in ("a", "b"):
                    keys = cited(item.id, side)
                    if rng.random() < 0.3:  # "none of these is wrong", in one click
                        answers.append(
                            AnswerLabel({}, rng.randint(0, 10), rng.randint(0, 10), none_wrong=True)
                        )
                        continue
                    labels = {}
                    for key in keys:
                        if rng.random() < 0.1:
                            continue  # left unlabelled: missing data
                        truth = checker_says(item.id, side)[key] == "wrong_number"
                        agrees = rng.random() < 0.85
                        labels[key] = "wrong_number" if truth == agrees else "correct"
                    answers.append(AnswerLabel(labels, rng.randint(0, 10), rng.randint(0, 10)))
                a, b = answers
                left, right = (b, a) if shown.swapped else (a, b)
                store.save_label(
                    name, item.id, LabelInput(shown.to_shown(verdict), left, right, seconds_spent=rng.uniform(20, 300)),
                    f"{name}-{item.id}",
                )  # fmt: skip
                saved += 1
                progressed = True
            if not progressed:
                break
        labelled = sorted(set(store.labels_frame()["item_id"]))
        for item_id in labelled[: max(1, len(labelled) // 50)]:
            store.adjudicate("admin", item_id, rng.choice(["A", "B", "tie"]), AnswerLabel(), AnswerLabel())
    return {"items": n_items, "labels": saved, "annotators": n_annotators, "systems": n_systems}


def auto_results(folder: Path, store_path: Path) -> list[Path]:
    """details.jsonl (Rel, T_LC per answer) and pairwise.jsonl (the judge, both orders) for every item."""
    from eval_ui.store import AnnotationStore

    rng = random.Random(1)
    with AnnotationStore(store_path) as store:
        frame = store.labels_frame()
    details, pairwise = [], []
    for item_id, a, b in sorted(
        set(zip(frame["item_id"], frame["system_a"], frame["system_b"], strict=True))
    ):
        qid = item_id.split(":")[0]
        for system in (a, b):
            details.append({"id": qid, "system": system, "rel": {"score": rng.randint(0, 10)},
                            "tlc": {"score": rng.randint(0, 10)}})  # fmt: skip
        orders = [{"order": "first=A", "preference": rng.choice("AB")},
                  {"order": "first=B", "preference": rng.choice(["A", "B", "tie"])}]  # fmt: skip
        pairwise.append({"id": qid, "first": a, "second": b, "verdicts": orders})
    paths = [folder / "details.jsonl", folder / "pairwise.jsonl"]
    for path, rows in zip(paths, (details, pairwise), strict=True):
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return paths


class Timing:
    """Wall-clock and CPU seconds of repeated calls: the best (least disturbed by other processes, as
    ``timeit`` reports) and the median."""

    def __init__(self, walls: list[float], cpus: list[float]) -> None:
        self.best, self.median, self.cpu = min(walls), statistics.median(walls), min(cpus)

    def __str__(self) -> str:
        return f"best {self.best:.3f} s, median {self.median:.3f} s wall; best {self.cpu:.3f} s CPU"


def timed(fn, repeat: int) -> tuple[Timing, object]:
    """The timing of ``repeat`` calls of ``fn``, and the last result."""
    walls, cpus, result = [], [], None
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        result = fn()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return Timing(walls, cpus), result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--labels", type=int, default=5000)
    parser.add_argument("--annotators", type=int, default=8)
    parser.add_argument("--systems", type=int, default=4)
    parser.add_argument("--overlap", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--store", type=Path, help="store file to build (or reuse, if it exists)")
    args = parser.parse_args(argv)

    folder = Path(tempfile.mkdtemp(prefix="lawluo-stats-bench-"))
    path = args.store or folder / "annotations.sqlite"
    if not path.exists():
        start = time.perf_counter()
        built = build(path, args.labels, args.annotators, args.systems, args.overlap, args.seed)
        print(f"setup: {built['labels']} labels by {built['annotators']} annotators on {built['items']} items "
              f"of {built['systems']} systems, saved in {time.perf_counter() - start:.1f} s (not timed below)")  # fmt: skip
    else:
        print(f"setup: reusing {path}")

    start = time.perf_counter()
    import krippendorff  # noqa: F401
    import matplotlib.backends.backend_agg  # noqa: F401
    import scipy.stats  # noqa: F401
    import statsmodels.stats.inter_rater  # noqa: F401

    from eval_ui.consistency import AutoMetrics, human_consistency, missing_statistics
    from eval_ui.store import AnnotationStore

    print(
        f"imports (once per process, in the background when an admin opens the tab): {time.perf_counter() - start:.2f} s"
    )
    auto = AutoMetrics.read(auto_results(folder, path))

    with AnnotationStore(path, cited=cited) as store:

        def frames(source: str = "raw"):
            tables = store.tables(sources=("raw", source))  # as eval_ui.consistency.report_from_store
            return tables["raw"], tables[source], store.annotator_progress()

        timing, (raw, _, progress) = timed(frames, args.repeat)
        print(f"frames (raw): {len(raw[0])} labels, {len(raw[1])} statute rows: {timing}")
        timing, (_, adjudicated, _) = timed(lambda: frames("adjudicated"), args.repeat)
        print(f"frames (raw + adjudicated): {timing}")

    def report(source: str, chosen, figures: Path | None = None):
        return human_consistency(*chosen, checker_says, auto, raw=raw, progress=progress, source=source,
                                 figures_dir=figures)  # fmt: skip

    plain, result = timed(lambda: report("raw", raw), args.repeat)
    print(f"report (raw labels, every statistic, 1,000 resamples per interval): {plain}")
    timing, _ = timed(lambda: report("adjudicated", adjudicated), args.repeat)
    print(f"report (adjudicated labels): {timing}")
    timing, drawn = timed(lambda: report("raw", raw, folder / "figures"), args.repeat)
    print(
        f"report with its {len(drawn.figures)} charts drawn: {timing} (charts ≈ {timing.best - plain.best:.3f} s)"
    )

    missing = missing_statistics(result)
    print(f"statistics: {len(result.statistics) - len(missing)} of {len(result.statistics)} have a value"
          + (f"; missing: {', '.join(missing)}" if missing else ""))  # fmt: skip
    s = result.statistics
    paired = s["paired_test"]
    print(f"  paired test {paired.extra.get('first')} − {paired.extra.get('second')}: {paired.value:+.3f} "
          f"[{paired.low:+.3f}, {paired.high:+.3f}], p = {paired.extra.get('p_value'):.4f}, n = {paired.n} items")  # fmt: skip
    for key in ("alpha_verdict", "human_s1", "human_s2", "judge_s1", "judge_s2", "nhsr_accuracy"):
        print(f"  {key}: {s[key].value:.3f} [{s[key].low:.3f}, {s[key].high:.3f}], n = {s[key].n}")
    drift = min(s["annotator_agreement"].value, key=lambda row: row["agreement"])
    print(f"  lowest agreement with the others: {drift['annotator']} {drift['agreement']:.3f} "
          f"[{drift['low']:.3f}, {drift['high']:.3f}] (the drifting annotator is 律师0)")  # fmt: skip
    nhsr = s["nhsr_accuracy"].extra
    print(f"  NHSR left out: {nhsr['unlabelled']} unlabelled, {nhsr['legacy_unticked']} legacy, "
          f"{nhsr['split']} split, {nhsr['no_checker']} without a checker verdict")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
