"""The statistics report (eval_ui/consistency/): what it counts, what it leaves out and says so, raw or
adjudicated labels, what each statistic still needs, and that every statistic gets a value with enough labels.

Frames are built here in the shape of ``AnnotationStore.labels_frame`` / ``statute_labels_frame``; the
last tests use a real store through its public API.
"""

from __future__ import annotations

import doctest
import importlib
import json
import pkgutil
import struct

import numpy as np
import pandas as pd
import pytest

from eval_ui import consistency, stats
from eval_ui.consistency import (
    STATISTICS,
    AutoMetrics,
    default_pair,
    human_consistency,
    missing_statistics,
    report_from_store,
)
from eval_ui.verdicts import STATUTE_HALLUCINATED

HALLUCINATED = {None: None, **STATUTE_HALLUCINATED}  # eval_ui/verdicts.py


def label_row(annotator, item_id, system_a, system_b, verdict, rel=5.0, tlc=5.0, seconds=60.0):
    return {
        "annotator": annotator, "item_id": item_id, "system_a": system_a, "system_b": system_b,
        "verdict": verdict, "rel_a": rel, "tlc_a": tlc, "rel_b": 10 - rel, "tlc_b": 10 - tlc,
        "seconds_spent": seconds, "current": True,
    }  # fmt: skip


def statute_row(annotator, item_id, side, system, statute, label):
    return {
        "annotator": annotator, "item_id": item_id, "side": side, "system": system, "statute": statute,
        "label": label, "hallucinated": HALLUCINATED[label], "error_kind": None,
        "legacy": label == "legacy_unticked", "version": 1, "current": True,
    }  # fmt: skip


def frames(labels: list[dict], statutes: list[dict]) -> tuple[pd.DataFrame, pd.DataFrame]:
    columns = list(statute_row("u", "q", "a", "x", "s", None))
    return pd.DataFrame(labels), pd.DataFrame(statutes, columns=columns, dtype=object)


def full_data(n_items: int = 40, seed: int = 0):
    """Three annotators (two labels per item), three systems, two cited statutes per answer, varied labels."""
    rng = np.random.default_rng(seed)
    systems, names = ["x", "y", "z"], ["u1", "u2", "u3"]
    labels, statutes = [], []
    for n in range(n_items):
        a, b = rng.choice(systems, 2, replace=False)
        item = f"q{n}:{a}:{b}"
        for who in rng.choice(names, 2, replace=False):
            verdict = rng.choice(["A", "A", "B", "tie", "both_bad"])
            labels.append(
                label_row(who, item, a, b, verdict, float(rng.integers(0, 11)), float(rng.integers(0, 11)))
            )
            for side, system in (("a", a), ("b", b)):
                for k in range(2):
                    code = rng.choice(["correct", "correct", "wrong", None])
                    statutes.append(statute_row(who, item, side, system, f"《民法典》第{n * 4 + k}条", code))
    return frames(labels, statutes)


def checker(item_id: str, side: str) -> dict[str, str]:
    """The checker's verdicts (as the statistics tab gives them): one statute in three a wrong number."""
    n = int(item_id.split(":")[0][1:])
    return {
        f"《民法典》第{n * 4 + k}条": "wrong_number" if (n + k) % 3 == 0 else "verified" for k in range(2)
    }


def auto_for(labels: pd.DataFrame, tmp_path, seed: int = 1) -> AutoMetrics:
    rng = np.random.default_rng(seed)
    details, pairwise = [], []
    for item_id, a, b in sorted(
        set(zip(labels["item_id"], labels["system_a"], labels["system_b"], strict=True))
    ):
        qid = item_id.split(":")[0]
        for system in (a, b):
            details.append({"id": qid, "system": system, "rel": {"score": int(rng.integers(0, 11))},
                            "tlc": {"score": int(rng.integers(0, 11))}})  # fmt: skip
        orders = [{"order": "first=A", "preference": str(rng.choice(["A", "B"]))},
                  {"order": "first=B", "preference": str(rng.choice(["A", "B", "tie"]))}]  # fmt: skip
        pairwise.append({"id": qid, "first": a, "second": b, "verdicts": orders})
    paths = [tmp_path / "details.jsonl", tmp_path / "pairwise.jsonl"]
    for path, rows in zip(paths, (details, pairwise), strict=True):
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return AutoMetrics.read(paths)


# --------------------------------------------------------------------------- NHSR: silence is not a judgement


def test_silence_is_never_counted_as_a_correct_statute():
    labels, statutes = frames(
        [label_row("u1", "q0:x:y", "x", "y", "A"), label_row("u2", "q0:x:y", "x", "y", "A")],
        [
            statute_row("u1", "q0:x:y", "a", "x", "s1", "wrong"),  # both: wrong
            statute_row("u2", "q0:x:y", "a", "x", "s1", "wrong_number"),
            statute_row("u1", "q0:x:y", "a", "x", "s2", None),  # nobody labelled it
            statute_row("u2", "q0:x:y", "a", "x", "s2", None),
            statute_row("u1", "q0:x:y", "a", "x", "s3", "legacy_unticked"),  # only the old form's silence
            statute_row("u2", "q0:x:y", "a", "x", "s3", "legacy_unticked"),
            statute_row("u1", "q0:x:y", "b", "y", "s4", "correct"),  # one explicit label: correct
            statute_row("u2", "q0:x:y", "b", "y", "s4", None),
            statute_row("u1", "q0:x:y", "b", "y", "s5", "wrong"),  # split
            statute_row("u2", "q0:x:y", "b", "y", "s5", "correct"),
        ],
    )
    says = {
        ("q0:x:y", "a"): {"s1": True, "s2": False, "s3": False},
        ("q0:x:y", "b"): {"s4": False, "s5": True},
    }
    report = human_consistency(labels, statutes, lambda i, s: says[i, s], n_boot=50)
    accuracy = report.statistics["nhsr_accuracy"]
    # Only s1 (wrong, wrong) and s4 (correct) are compared with the checker: both agree. Counting the silent
    # s2 and s3 as "correct" would have added two more agreements (the checker calls them correct).
    assert (accuracy.value, accuracy.n) == (1.0, 2)
    assert {k: accuracy.extra[k] for k in ("unlabelled", "legacy_unticked", "split", "no_checker")} == {
        "unlabelled": 1, "legacy_unticked": 1, "split": 1, "no_checker": 0,
    }  # fmt: skip
    assert accuracy.extra["missing_labels"] == 5  # rows: s2 ×2, s3 ×2, s4 by u2
    note = report.section("NHSR 与律师多数意见 NHSR against the lawyers' majority").note
    assert "never counted as correct" in note and "1 statute(s) nobody labelled" in note
    assert "1 with only old-form legacy_unticked labels" in note and "1 without a majority" in note
    # NHSR per system from explicit majorities only: x has s1 (wrong) → 0; y has s4 (correct) → 1.
    per_system = {row["system"]: row for row in report.statistics["nhsr_lawyers"].value}
    assert per_system["x"]["nhsr_lawyers"] == 0.0 and per_system["x"]["statutes"] == 1
    assert per_system["y"]["nhsr_lawyers"] == 1.0 and per_system["y"]["statutes"] == 1
    assert (per_system["y"]["low"], per_system["y"]["high"]) == pytest.approx(stats.wilson_interval(1, 1))
    # The inter-annotator α of statutes sees only explicit labels: s1 (both wrong) and s5 (split).
    assert report.statistics["alpha_statutes"].n == 2


def test_without_the_checker_nhsr_says_what_it_needs():
    labels, statutes = frames(
        [label_row("u1", "q0:x:y", "x", "y", "A")], [statute_row("u1", "q0:x:y", "a", "x", "s1", "wrong")]
    )
    report = human_consistency(labels, statutes, None, n_boot=20)
    assert report.statistics["nhsr_accuracy"].value is None
    assert "checker" in report.statistics["nhsr_accuracy"].needs
    assert report.statistics["nhsr_lawyers"].value is not None  # the lawyers' own NHSR needs no checker


# --------------------------------------------------------------------------- raw or adjudicated


def test_adjudicated_labels_replace_disputed_items_but_agreement_stays_raw():
    raw = [
        label_row("u1", "q0:x:y", "x", "y", "A"),
        label_row("u2", "q0:x:y", "x", "y", "B"),
        label_row("u1", "q1:x:y", "x", "y", "A"),
        label_row("u2", "q1:x:y", "x", "y", "A"),
        label_row("u1", "q2:x:y", "x", "y", "tie"),
        label_row("u2", "q2:x:y", "x", "y", "B"),
    ]
    adjudicated = raw[2:4] + [label_row("adjudicated", "q0:x:y", "x", "y", "B")]
    adjudicated += [label_row("adjudicated", "q2:x:y", "x", "y", "B")]
    raw_frames, adjudicated_frames = frames(raw, []), frames(adjudicated, [])
    from_raw = human_consistency(*raw_frames, n_boot=100)
    resolved = human_consistency(*adjudicated_frames, raw=raw_frames, source="adjudicated", n_boot=100)
    # Raw: x scores A, B, A, A, tie, B = 3.5 of 6; adjudicated: B, A, A, B = 2 of 4.
    assert from_raw.statistics["win_rate"].value[0]["win_rate"] == pytest.approx(3.5 / 6)
    assert resolved.statistics["win_rate"].value[0]["win_rate"] == pytest.approx(2 / 4)
    assert (resolved.source, resolved.n_adjudicated) == ("adjudicated", 2)
    assert "Adjudicated labels: 2 item(s)" in resolved.sections[0].note
    # Agreement between annotators is the raw labels' in both, and "adjudicated" is no annotator.
    for key in ("alpha_verdict", "human_s1", "annotator_agreement"):
        assert resolved.statistics[key].value == from_raw.statistics[key].value
    annotators = resolved.section("标注者 Annotators: progress and agreement with the others").table
    assert "adjudicated" not in set(annotators["annotator"])
    with pytest.raises(ValueError, match="source"):
        human_consistency(*raw_frames, source="majority")


# --------------------------------------------------------------------------- what each statistic needs


def test_with_no_labels_every_statistic_says_what_it_needs():
    report = human_consistency(pd.DataFrame(), pd.DataFrame(), lambda i, s: {})
    assert missing_statistics(report) == [s.key for s in STATISTICS]
    assert report.n_labels == 0 and "No labels yet" in report.sections[0].note
    assert report.statistics["annotator_agreement"].needs == "needs an item labelled by 2 annotators"
    assert report.figures == [] and report.charts == {}
    data = report.to_json()
    assert all(
        data["statistics"][s.key]["value"] is None and data["statistics"][s.key]["needs"] for s in STATISTICS
    )


def test_one_annotator_has_progress_and_win_rates_but_no_agreement(tmp_path):
    labels, statutes = frames(
        [label_row("u1", f"q{n}:x:y", "x", "y", v) for n, v in enumerate(["A", "B", "A", "tie"])], []
    )
    progress = pd.DataFrame(
        {
            "annotator": ["u1", "u2"],
            "role": ["annotator"] * 2,
            "assigned": [6, 6],
            "done": [4, 0],
            "skipped": [1, 0],
        }
    )
    report = human_consistency(labels, statutes, checker, progress=progress, figures_dir=tmp_path, n_boot=100)
    missing = missing_statistics(report, include_auto=False)
    assert "progress" not in missing and "win_rate" not in missing and "bradley_terry" not in missing
    for key in ("annotator_agreement", "alpha_verdict", "kappa_verdict", "human_s1", "human_s2"):
        assert key in missing
        assert "2 annotators" in report.statistics[key].needs
    assert not any(report.statistics[k].auto for k in missing)
    assert set(missing_statistics(report)) - set(missing) == {s.key for s in STATISTICS if s.auto}
    rows = {r["annotator"]: r for r in report.statistics["progress"].value}
    assert (rows["u1"]["assigned"], rows["u1"]["done"], rows["u1"]["skipped"], rows["u1"]["labels"]) == (
        6,
        4,
        1,
        4,
    )
    assert rows["u2"]["labels"] == 0  # signed up, nothing labelled yet: still listed
    # Charts only where there is something to plot: win rates and ratings, no agreement, no scatter.
    assert set(report.charts) == {"pairs", "ratings"}
    for path in report.figures:
        data = path.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n"
        width, height = struct.unpack(">II", data[16:24])
        assert width == 800 and 150 < height < 1200  # readable at its natural size


def test_every_statistic_gets_a_value_once_there_is_enough_data(tmp_path):
    labels, statutes = full_data()
    progress = pd.DataFrame(
        {"annotator": ["u1", "u2", "u3"], "role": "annotator", "assigned": 30, "done": 27, "skipped": 0}
    )
    report = human_consistency(
        labels, statutes, checker, auto_for(labels, tmp_path), progress=progress, figures_dir=tmp_path / "f"
    )
    assert missing_statistics(report) == []
    assert set(report.charts) == {"annotators", "pairs", "ratings", "scatter"}
    data = json.loads(json.dumps(report.to_json(), allow_nan=False))  # plain JSON: no NaN anywhere
    assert set(data["statistics"]) == {s.key for s in STATISTICS} and data["missing"] == []
    for key in ("alpha_verdict", "human_s1", "judge_s1", "judge_s2", "nhsr_accuracy", "paired_test"):
        s = data["statistics"][key]
        assert s["low"] <= s["value"] <= s["high"] and s["n"] > 0, key
    # Every rate in a per-annotator / per-system statistic carries its interval.
    for key in ("annotator_agreement", "win_rate", "system_win_rate", "nhsr_lawyers"):
        for row in data["statistics"][key]["value"]:
            assert row["low"] is not None and row["high"] is not None, key


def judged(labels: pd.DataFrame, tmp_path, flips: bool) -> AutoMetrics:
    """A judge that prefers the first system in both orders, or (``flips``) always the answer shown first."""
    rows = [
        {"id": item_id.split(":")[0], "first": a, "second": b,
         "verdicts": [{"order": "first=A", "preference": "A"},
                      {"order": "first=B", "preference": "A" if flips else "B"}]}
        for item_id, a, b in sorted(set(zip(labels["item_id"], labels["system_a"], labels["system_b"], strict=True)))
    ]  # fmt: skip
    path = tmp_path / f"pairwise-{flips}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return AutoMetrics.read([path])


def test_a_judge_that_flips_with_the_order_gets_a_plain_warning(tmp_path):
    labels, statutes = full_data()
    title = "LLM 裁判与律师 The LLM judge against the lawyers"
    flipping = human_consistency(labels, statutes, checker, judged(labels, tmp_path, True), n_boot=50)
    assert flipping.statistics["judge_consistency"].value == 0
    # The note in English (the JSON report), the same as a message in both languages (the tab).
    assert flipping.section(title).note.startswith("⚠ This judge is not reliable")
    assert str(flipping.section(title).explain).startswith("⚠ 这个裁判不可靠")
    steady = human_consistency(labels, statutes, checker, judged(labels, tmp_path, False), n_boot=50)
    assert steady.statistics["judge_consistency"].value == 1
    assert "not reliable" not in steady.section(title).note and "不可靠" not in str(
        steady.section(title).explain
    )


def test_ratings_exist_when_the_systems_form_separate_groups(tmp_path):
    # As in the demo set: three pairs of systems, never compared across pairs.
    rows = []
    for n, (a, b) in enumerate([("p", "q"), ("r", "s"), ("t", "u")] * 4):
        for who, verdict in (("u1", ["A", "B", "tie", "A"][n // 3]), ("u2", ["B", "A", "A", "tie"][n // 3])):
            rows.append(label_row(who, f"q{n}:{a}:{b}", a, b, verdict))
    labels, statutes = frames(rows, [])
    report = human_consistency(labels, statutes, figures_dir=tmp_path, n_boot=100)
    ratings = report.statistics["bradley_terry"]
    assert ratings.value is not None and ratings.extra["components"] == 3
    assert {row["component"] for row in ratings.value} == {1, 2, 3}
    assert "never compared with each other" in report.section("Bradley–Terry").note
    assert "ratings" in report.charts


def test_the_paired_test_compares_the_pair_that_met_most_or_the_chosen_systems():
    labels, statutes = full_data()
    report = human_consistency(labels, statutes, n_boot=200)
    rates = {row["system"]: row["win_rate"] for row in report.statistics["system_win_rate"].value}
    best = list(default_pair(labels, rates))  # issue 42: two systems that met, not two that never did
    paired = report.statistics["paired_test"]
    assert [paired.extra["first"], paired.extra["second"]] == best
    direct = stats.paired_bootstrap(labels, *best, stats.Bootstrap(200, seed=0))
    assert direct["met"] > 0
    assert paired.value == pytest.approx(direct["difference"])
    chosen = human_consistency(labels, statutes, compare=("z", "x"), n_boot=200).statistics["paired_test"]
    assert (chosen.extra["first"], chosen.extra["second"]) == ("z", "x")
    unknown = human_consistency(labels, statutes, compare=("x", "nobody"), n_boot=50).statistics[
        "paired_test"
    ]
    assert unknown.value is None and "nobody" in unknown.needs


def test_the_report_is_reproducible_from_its_seed():
    labels, statutes = full_data(n_items=25)
    first = human_consistency(labels, statutes, checker, n_boot=200, seed=3).to_json()
    again = human_consistency(labels, statutes, checker, n_boot=200, seed=3).to_json()
    other = human_consistency(labels, statutes, checker, n_boot=200, seed=4).to_json()
    assert first == again
    assert first["statistics"]["alpha_verdict"]["low"] != other["statistics"]["alpha_verdict"]["low"]


# --------------------------------------------------------------------------- on a real store


def test_report_from_a_store_with_statute_labels_and_an_adjudication(tmp_path):
    from eval_ui.items import Item
    from eval_ui.store import AnnotationStore, AnswerLabel, LabelInput

    def cited(item_id: str, side: str) -> list[str]:
        return ["《民法典》第1条", "《民法典》第2条"] if side == "a" else []

    store = AnnotationStore(tmp_path / "a.sqlite", cited=cited)
    store.import_items([Item(f"q{n}:x:y", f"问题{n}", "甲", "乙", "x", "y") for n in range(4)])
    for name in ("u1", "u2"):
        store.add_annotator(name)
    store.add_annotator("root", "admin")
    store.assign(2, seed=0)
    plan = {"u1": ["A", "A", "B", "tie"], "u2": ["A", "B", "B", "A"]}
    for name, verdicts in plan.items():
        for n, verdict in enumerate(verdicts):
            item_id = f"q{n}:x:y"
            shown = store.assignment(name, item_id)
            # u1 labels statute 1 and leaves statute 2 unlabelled; u2 confirms "none of these is wrong".
            a = (
                AnswerLabel({"《民法典》第1条": "wrong"}, 5, 5)
                if name == "u1"
                else AnswerLabel({}, 6, 6, none_wrong=True)
            )
            left, right = (AnswerLabel(), a) if shown.swapped else (a, AnswerLabel())
            store.save_label(name, item_id, LabelInput(shown.to_shown(verdict), left, right), f"{name}-{n}")
    store.adjudicate("root", "q1:x:y", "B", AnswerLabel(), AnswerLabel())
    raw = report_from_store(
        store, "raw", lambda i, s: {"《民法典》第1条": True, "《民法典》第2条": False}, n_boot=100
    )
    resolved = report_from_store(store, "adjudicated", n_boot=100)
    store.close()
    assert raw.n_labels == 8 and resolved.n_adjudicated == 1 and resolved.n_labels == 7
    # statute 1: u1 wrong vs u2 correct (none wrong) → split; statute 2: u2's correct only → majority correct.
    nhsr = raw.statistics["nhsr_accuracy"]
    assert nhsr.extra["split"] == 4 and nhsr.n == 4 and nhsr.value == 1.0
    assert raw.statistics["alpha_verdict"].value == resolved.statistics["alpha_verdict"].value
    progress = {row["annotator"]: row for row in raw.statistics["progress"].value}
    assert progress["u1"]["done"] == 4 and progress["u1"]["labels"] == 4


# --------------------------------------------------------------------------- the checker per verdict (issue 40)

PER_VERDICT = "每种判定与律师的一致 The checker against the lawyers, per verdict"


def test_each_checker_verdict_is_compared_with_the_lawyers_majority_label():
    rows = [label_row(who, f"q{n}:x:y", "x", "y", "A") for n in range(3) for who in ("u1", "u2", "u3")]
    labels = {  # statute → (the checker's verdict, the three lawyers' labels)
        ("q0:x:y", "s1"): ("verified", ["correct", "correct", "wrong"]),  # majority correct: agrees
        ("q0:x:y", "s2"): (
            "wrong_number",
            ["wrong_number", "wrong", "correct"],
        ),  # hallucinated, wrong_number
        ("q1:x:y", "s3"): ("wrong_number", ["wrong", "wrong", "correct"]),  # hallucinated, no kind
        ("q1:x:y", "s4"): ("outdated_version", ["wrong_version", "wrong_version", "wrong_number"]),
        ("q2:x:y", "s5"): (
            "amended_since",
            ["correct", "wrong_version", "correct"],
        ),  # not hallucinated: agrees
        ("q2:x:y", "s6"): ("content_mismatch", ["correct", "correct", None]),  # the lawyers disagree
        ("q2:x:y", "s7"): ("not_found", ["wrong_not_found", "correct", None]),  # split: left out
    }
    statutes = [
        statute_row(who, item, "a", "x", key, code)
        for (item, key), (_, codes) in labels.items()
        for who, code in zip(("u1", "u2", "u3"), codes, strict=True)
    ]
    says = {}
    for (item, key), (verdict, _) in labels.items():
        says.setdefault(item, {})[key] = verdict
    report = human_consistency(*frames(rows, statutes), lambda i, s: says[i] if s == "a" else {}, n_boot=100)
    statistic = report.statistics["verdict_agreement"]
    assert statistic.n == 6 and statistic.extra["with_kind"] == 5  # s7 split; s3's majority names no kind
    by = {row["verdict"]: row for row in statistic.value}
    assert (by["wrong_number"]["statutes"], by["wrong_number"]["same_hallucinated"]) == (2, 1.0)
    assert (by["wrong_number"]["with_kind"], by["wrong_number"]["same_verdict"]) == (1, 1.0)
    assert (by["outdated_version"]["label"], by["outdated_version"]["same_verdict"]) == ("wrong_version", 1.0)
    assert by["amended_since"]["same_hallucinated"] == 1.0 and by["amended_since"]["label"] == "correct"
    assert by["content_mismatch"]["same_hallucinated"] == 0.0 and by["not_found"]["statutes"] == 0
    assert by["repealed"]["statutes"] == 0 and by["repealed"]["same_verdict"] is None
    section = report.section(PER_VERDICT)
    assert list(section.table["verdict"]) == [row["verdict"] for row in statistic.value]
    assert "left out of the exact level" in section.note and "(wrong, or kinds" in section.note
    shown = section.table.set_index("verdict")  # each share with its interval in one cell; — where none
    assert shown.loc["wrong_number", "same hallucinated [95% CI]"].startswith("1.000 [")
    assert shown.loc["repealed", "same verdict [95% CI]"] == "—"
    # The NHSR yes/no comparison reads the same verdicts (amended_since is not a hallucination).
    assert report.statistics["nhsr_accuracy"].n == 6


def test_the_per_verdict_table_says_what_it_needs():
    rows = [label_row("u1", "q0:x:y", "x", "y", "A")]
    statutes = [statute_row("u1", "q0:x:y", "a", "x", "s1", "wrong_number")]
    without = human_consistency(*frames(rows, statutes), None, n_boot=20).statistics["verdict_agreement"]
    assert without.value is None and "statute checker" in without.needs
    flags = human_consistency(*frames(rows, statutes), lambda i, s: {"s1": True}, n_boot=20)
    assert flags.statistics["verdict_agreement"].value is None
    assert "not only its hallucinated yes/no" in flags.statistics["verdict_agreement"].needs
    assert flags.statistics["nhsr_accuracy"].value == 1.0  # a yes/no still serves the NHSR comparison


def test_the_worked_examples_hold():
    names = [m.name for m in pkgutil.iter_modules(consistency.__path__)]
    results = [doctest.testmod(importlib.import_module(f"eval_ui.consistency.{name}")) for name in names]
    assert sum(r.failed for r in results) == 0
    assert sum(r.attempted for r in results) >= 10
