"""The statistics tab's report (eval_ui/consistency.py) on a store filled by hand, and the statutes an
annotator labels (eval_ui/statutes.py) from the real statute database."""

from __future__ import annotations

import json

import pytest

from eval_ui import stats
from eval_ui.consistency import AutoMetrics, human_consistency, question_id
from eval_ui.items import Item
from eval_ui.statutes import cited_statutes
from eval_ui.store import AnnotationStore, AnswerLabel, LabelInput


def items() -> list[Item]:
    return [
        Item(f"q{n}:x:y", f"问题{n}", f"x的回答{n}《民法典》第1079条", f"y的回答{n}", "x", "y")
        for n in range(4)
    ]


@pytest.fixture
def store(tmp_path):
    s = AnnotationStore(tmp_path / "a.sqlite")
    s.import_items(items())
    for name in ("u1", "u2"):
        s.add_annotator(name)
    s.assign(2, seed=1)
    yield s
    s.close()


def label(store, annotator, item_id, verdict, rel_a, tlc_a, rel_b=None, tlc_b=None, hallucinated=None):
    """Save a label given in the item's own orientation (A = x), whatever order the annotator saw."""
    a = store.assignment(annotator, item_id)
    code = "wrong" if hallucinated else "correct"  # the per-statute label (eval_ui/verdicts.py)
    statutes = {} if hallucinated is None else {"《中华人民共和国民法典》第一千零七十九条": code}
    x, y = AnswerLabel(statutes, rel_a, tlc_a), AnswerLabel({}, rel_b, tlc_b)
    left, right = (y, x) if a.swapped else (x, y)
    store.save_label(
        annotator, item_id, LabelInput(a.to_shown(verdict), left, right), f"{annotator}-{item_id}"
    )


def test_question_ids_come_from_items_made_of_answer_files():
    assert question_id(Item("lb-7:sysA:sysB", "q", "a", "b", "sysA", "sysB")) == "lb-7"
    assert question_id(Item("free-form", "q", "a", "b", "sysA", "sysB")) is None


def test_auto_metrics_read_evaluate_outputs_and_turn_judge_verdicts_to_the_first_systems_view(tmp_path):
    details = tmp_path / "details.jsonl"
    details.write_text(
        json.dumps({"id": "q0", "system": "x", "rel": {"score": 10}, "tlc": {"score": 6.0}}) + "\n"
        + json.dumps({"id": "q0", "system": "y", "rel": {"score": None}, "nhsr": {}}) + "\n",
        encoding="utf-8",
    )  # fmt: skip
    pairwise = tmp_path / "pairwise.jsonl"
    verdicts = [{"order": "first=A", "preference": "B"}, {"order": "first=B", "preference": "B"}]
    pairwise.write_text(json.dumps({"id": "q0", "first": "x", "second": "y", "verdicts": verdicts}) + "\n")
    auto = AutoMetrics.read([details, pairwise])
    assert auto.rel == {("q0", "x"): 10.0} and auto.tlc == {("q0", "x"): 6.0}
    # shown first as A the judge preferred B (= y); shown first as B it preferred B (= x, the first)
    assert auto.judge == {("q0", "x", "y"): ("B", "A")}
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "q0", "system": "x"}\n[1, 2]\n')
    with pytest.raises(ValueError, match="bad.jsonl:2"):
        AutoMetrics.read([bad])


def test_no_labels_says_so():
    import pandas as pd

    report = human_consistency(pd.DataFrame(), pd.DataFrame(), lambda i, s: {})
    assert report.n_labels == 0 and "No labels yet" in report.sections[0].note


def test_one_annotator_gets_a_reason_instead_of_an_agreement(store):
    label(store, "u1", "q0:x:y", "A", 8, 6)
    label(store, "u1", "q1:x:y", "B", 2, 2)
    report = human_consistency(store.labels_frame(), store.statute_labels_frame(), lambda i, s: {})
    agreement = report.section("标注者一致性 Inter-annotator agreement").table
    assert agreement["value"].isna().all()
    # each note names the real cause (issue 42): one annotator, or scores and statute labels nobody doubled
    notes = dict(zip(agreement["measure"], agreement["note"], strict=True))
    assert notes["verdict: Fleiss κ"] == "no item is labelled by two or more annotators"
    assert "no annotator labelled a cited statute" in notes["statute hallucinated: Krippendorff α (nominal)"]
    assert (
        "Rel scores were given on 2 answers, each by one annotator only"
        in notes["Rel: Krippendorff α (interval)"]
    )
    wtl = report.section("胜/平/负 Win / tie / loss").table.iloc[0]
    assert (wtl["A"], wtl["B"], wtl["win_rate"]) == (1, 1, 0.5)


def test_the_report_matches_the_statistics_computed_directly(store, tmp_path):
    # two annotators, four items; u2 disagrees on q3; scores vary
    plan = {
        "u1": [("A", 8, 8, True), ("A", 6, 4, False), ("B", 2, 2, True), ("tie", 5, 6, False)],
        "u2": [("A", 9, 8, True), ("A", 5, 5, False), ("B", 1, 3, True), ("A", 7, 6, True)],
    }
    for annotator, rows in plan.items():
        for n, (verdict, rel, tlc, hallucinated) in enumerate(rows):
            label(store, annotator, f"q{n}:x:y", verdict, rel, tlc, 5, 5, hallucinated)
    auto_rel = {0: 10, 1: 5, 2: 0, 3: 5}
    details = tmp_path / "details.jsonl"
    details.write_text(
        "".join(
            json.dumps({"id": f"q{n}", "system": "x", "rel": {"score": s}}) + "\n"
            for n, s in auto_rel.items()
        )
    )
    judge_rows = [("A", "A"), ("A", "B"), ("B", "B"), ("tie", "A")]  # (first=A, first=B as shown)
    pairwise = tmp_path / "pairwise.jsonl"
    pairwise.write_text(
        "".join(
            json.dumps({"id": f"q{n}", "first": "y", "second": "x",  # judged from y's side: flipped back
                        "verdicts": [{"order": "first=A", "preference": p1}, {"order": "first=B", "preference": p2}]}) + "\n"
            for n, (p1, p2) in enumerate(judge_rows)
        )
    )  # fmt: skip
    checker_says = {f"q{n}:x:y": n % 2 == 0 for n in range(4)}  # hallucinated on q0, q2
    report = human_consistency(
        store.labels_frame(),
        store.statute_labels_frame(),
        lambda item_id, side: (
            {"《中华人民共和国民法典》第一千零七十九条": checker_says[item_id]} if side == "a" else {}
        ),
        AutoMetrics.read([details, pairwise]),
        figures_dir=tmp_path / "figures",
        n_boot=200,
    )
    # Rel against the mean of the two annotators per answer (system x's answers only have auto scores)
    human_means = [8.5, 5.5, 1.5, 6.0]
    expected = stats.correlation([auto_rel[n] for n in range(4)], human_means)
    rel = report.section("Rel / T_LC 与律师评分 Rel and T_LC against the lawyers").table.set_index("measure")
    assert rel.loc["Rel", "spearman"] == pytest.approx(expected["spearman"], abs=1e-3)
    assert rel.loc["Rel", "n"] == 4 and "needs at least 3" in rel.loc["T_LC", "note"]
    # the section lists its statistics (it listed none before: a loop variable replaced the list)
    scores = report.section("Rel / T_LC 与律师评分 Rel and T_LC against the lawyers")
    assert scores.statistics == ["rel_correlation", "tlc_correlation"]
    # NHSR: majority per statute is u1/u2's agreement except q3 (True vs False: no majority → dropped)
    nhsr = report.section("NHSR 与律师多数意见 NHSR against the lawyers' majority")
    assert (
        "accuracy 1.000" in nhsr.note
        and "over 3 cited statutes" in nhsr.note
        and "1 without a majority" in nhsr.note
    )
    # judge: in x's view the first-order verdicts are B, B, A, tie and the swapped ones A, B, B, A; the
    # judge's verdict is kept where both orders agree (q1: B) and a tie elsewhere (MT-bench's conservative
    # rule), against humans A A B tie / A A B A
    judge = report.section("LLM 裁判与律师 The LLM judge against the lawyers").table.set_index("measure")
    direct = stats.judge_agreement(
        ["tie", "tie", "B", "B", "tie", "tie", "tie", "tie"], ["A", "A", "A", "A", "B", "B", "tie", "A"]
    )
    s1 = judge.loc["LLM judge vs lawyers, ties included (MT-bench S1)", "value"]
    assert s1 == pytest.approx(direct["agreement_with_tie"], abs=1e-3) == pytest.approx(1 / 8, abs=1e-3)
    # swapped order against first order: only q1 agrees
    assert judge.loc["LLM judge self-consistency (answers swapped)", "value"] == pytest.approx(0.25)
    # inter-annotator α of the verdict, as the krippendorff package computes it on the same matrix
    frame = store.labels_frame().rename(columns={"item_id": "item"})
    alpha = stats.krippendorff_alpha(stats.to_reliability_matrix(frame, "verdict"), "nominal")["alpha"]
    agreement = report.section("标注者一致性 Inter-annotator agreement").table.set_index("measure")
    assert agreement.loc["verdict: Krippendorff α (nominal)", "value"] == pytest.approx(alpha, abs=1e-3)
    assert "human_win_rate.png" in [p.name for p in report.figures]
    assert "auto_vs_human.png" in [p.name for p in report.figures]
    assert all(p.stat().st_size > 1000 for p in report.figures)


def test_cited_statutes_show_the_article_at_the_number_cited(checker):
    answer = (
        "依据《民法典》第1079条：夫妻一方要求离婚的，可以由有关组织进行调解。"
        "另根据《合同法》第52条，以及《劳动合同法》第999条。再说一次《民法典》第一千零七十九条。"
    )
    cited = cited_statutes(checker, answer)
    assert [s.key for s in cited] == [
        "《中华人民共和国民法典》第一千零七十九条",
        "《中华人民共和国合同法》第五十二条",
        "《中华人民共和国劳动合同法》第九百九十九条",
    ]
    civil, contract, labour = cited
    assert not civil.hallucinated and civil.text.startswith("夫妻一方要求离婚的")
    assert contract.hallucinated and contract.text is None and "repealed" in contract.note.text("en")
    assert (
        labour.hallucinated
        and labour.note.key == "annotate.statute.no_article"
        and "has no" in labour.note.text("en")
    )
    assert cited_statutes(None, answer) == [] and cited_statutes(checker, "") == []
