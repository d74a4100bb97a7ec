"""``python -m lawluo bench tolc``: cases from the shared data's multi-turn consultations, the firm's tree
answered by a simulated client, key facts scored by a judge — end to end against the scripted server.

The fixture ``tests/fixtures/tolc_dialogues`` holds six real dialogues; five yield cases (README there).
The scripted clarifier proposes the same three first-level elements for every case; the scripted client
says yes / no exactly to the elements its facts settle; the scripted judge recovers a fact when its
element was answered. So the figures can be computed by hand (see ``EXPECTED``).
"""

from __future__ import annotations

import doctest
import json
import os

import pytest

from lawluo.cli import main
from lawluo.firm import Firm
from lawluo.metrics.tree_bench.cases import (
    BenchCase,
    Fact,
    dialogue_cases,
    lawyer_question,
    sample,
    split_facts,
)
from tests.conftest import ROOT, SESSION_KEYS, SHARED_DATA
from tests.fakes.live_app import model_environ
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.tolc_bench import BenchResponder

pytestmark = pytest.mark.slow  # 4 s of the suite on 2 cores (4 s or more: left out of the inner loop)

FIXTURE = ROOT / "tests" / "fixtures" / "tolc_dialogues"
SAMPLES = ROOT / "tests" / "fixtures" / "tolc_judge_sample"  # hand-labelled answer sets for the judge check
#: Per case: key facts, recovered by hand, and the pairwise result (the judge prefers the answer that used
#: the confirmed facts; it is position-biased on the 越南 case; identical answers tie).
EXPECTED = {
    "lawyer_llama-mt-0001": (1, 1, "win"),  # 是有重大过错 ← yes to 对方是否有重大过错？
    "lawyer_llama-mt-0002": (3, 0, "draw"),  # nothing settled: the judge is not asked
    "lawyer_llama-mt-0003": (2, 1, "win"),  # 没有债务 ← no to 是否存在共同债务？
    "lawyer_llama-mt-0005": (2, 1, "draw"),  # 没有孩子 ← no to 你们是否有孩子？ (verdicts disagree)
    "lawyer_llama-mt-0006": (2, 0, "draw"),
}


@pytest.fixture
def environment(monkeypatch, firm_services):
    """No model settings of the caller's shell; the firm built from the session's loaded services."""
    for key in list(os.environ):
        if key.startswith(("LAWLUO_", "OPENAI_")) and key not in SESSION_KEYS:
            monkeypatch.delenv(key)
    original = Firm.from_settings.__func__
    monkeypatch.setattr(
        Firm, "from_settings", classmethod(lambda cls, s, **kw: original(cls, s, **firm_services, **kw))
    )


def serve(monkeypatch, responder: BenchResponder):
    server = FakeOpenAIServer()
    server.responder = responder
    for key, value in model_environ(server).items():
        monkeypatch.setenv(key, value)
    return server


def bench(capsys, *argv):
    """``bench tolc`` on the fixture; its judge is not checked against the shipped hand-labelled sample (the
    scripted judge's rules fit the fixture, not that sample) unless a test names a sample or asks for it."""
    argv = tuple(map(str, argv))
    checked = {"--judge-sample", "--default-judge-check"} & set(argv)
    argv = tuple(a for a in argv if a != "--default-judge-check") + (() if checked else ("--no-judge-check",))
    code = main(["bench", "tolc", "--data", str(FIXTURE), "--quiet", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_recovered_facts_pairwise_preference_and_cost_match_the_hand_count(
    capsys, tmp_path, monkeypatch, environment
):
    responder = BenchResponder()
    with serve(monkeypatch, responder) as server:
        code, table, err = bench(
            capsys,
            *("--client-role", "secretary", "--concurrency", "2", "--json", tmp_path / "r.json"),
            *("--judge-sample", SAMPLES / "agrees.jsonl"),
        )
        requests = len(server.requests) - 2  # the judge checked first on the sample's two answered rows
    assert code == 0, err
    figures = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    cases = {c["id"]: c for c in figures["cases"]}
    assert set(cases) == set(EXPECTED)
    for case_id, (facts, recovered, pair) in EXPECTED.items():
        case = cases[case_id]
        assert case["facts"] == facts and sum(case["recovered"].values()) == recovered, case_id
        assert case["pair"]["result"] == pair, case_id
        assert case["tree_source"] == "model" and case["elements"] == 12
    # Pruning: an element answered no hides its three children from the client.
    assert [cases[i]["asked"] for i in sorted(cases)] == [12, 12, 9, 9, 12]
    assert cases["lawyer_llama-mt-0003"]["denied"] == ["是否存在共同债务？"]
    assert cases["lawyer_llama-mt-0001"]["confirmed"] == ["对方是否有重大过错？"]
    summary = figures["summary"]
    rec = summary["recovered"]
    assert rec["mean"] == pytest.approx((1 + 0 + 0.5 + 0.5 + 0) / 5) and rec["n"] == 5
    assert rec["low"] < rec["mean"] < rec["high"] and 0 <= rec["low"] and rec["high"] <= 1
    assert rec["pooled"] == pytest.approx(3 / 10) and summary["at_once_recovered"] == 0
    pw = summary["pairwise"]
    assert (pw["win"], pw["draw"], pw["loss"]) == (2, 3, 0)
    assert pw["win_rate"] == pytest.approx((2 + 3 / 2) / 5) and pw["consistency"] == pytest.approx(4 / 5)
    assert summary["client_answers"] == {"yes": 1, "no": 2, "unknown": 54 - 3}
    assert summary["fallbacks"]["client_omitted_elements"] == 9 + 9 + 6 + 6 + 9
    assert summary["fallbacks"]["clarifier_cases"] == 0 and summary["fallbacks"]["judge_failed_cases"] == 0
    assert summary["fallbacks"]["element_sources"] == {"model": 5 * 12}
    # Cost, counted per role on the backends: 1 + 3 tree expansions, one client call per level, the judge
    # once where something was settled plus twice for the pair; every request the server got is counted.
    calls = summary["calls_per_case"]
    assert calls["clarifier"] == 4 and calls["secretary"] == 2 and calls["lawyer"] == 2
    assert calls["judge"] == pytest.approx((3 * 1 + 5 * 2) / 5)
    assert sum(sum(c["calls"].values()) for c in cases.values()) == requests
    # The client saw its facts and the elements, and never another case's facts.
    assert all("我老婆回越南" not in p for p in responder.client_prompts if "净身出户" in p)
    assert "| Key facts recovered, mean per case" in table and "0.400 [" in table and "3/10 = 0.300" in table
    assert "2/3/0, 0.700 [" in table and "0 (asks nothing)" in table
    assert summary["judge_check"] == {
        "rows": 2, "facts": 3, "agreement": 1.0, "kappa": 1.0, "labelled_true": 2, "judged_true": 2,
        "failed_rows": 0, "failed_why": {}, "trustworthy": True,
    }  # fmt: skip
    assert "| Key-fact judge against the hand-labelled sample" in table and "1.000, κ 1.000" in table


def test_a_key_fact_judge_unlike_the_hand_labels_gets_no_key_fact_figure(capsys, monkeypatch, environment):
    """Issue 41, item 6: the judge is checked against a hand-labelled sample before its figures are printed;
    here it misses two facts the labeller counted (tests/fixtures/tolc_judge_sample/README.md: κ 12/26)."""
    with serve(monkeypatch, BenchResponder()):
        code, table, err = bench(capsys, "--no-answers", "--judge-sample", SAMPLES / "disagrees.jsonl")
    assert code == 0, err
    assert "agreement 0.714, κ 0.462 over 7 facts" in err
    assert "not reported: the judge agrees with the hand-labelled sample at κ 0.462, under 0.60" in table
    assert "0.400 [" not in table and "3/10 = 0.300" not in table
    assert "0.714, κ 0.462" in table
    with serve(monkeypatch, BenchResponder()):
        code, table, err = bench(capsys, "--no-answers", "--no-judge-check", "--limit", "1")
    assert code == 0, err
    assert "hand-labelled" not in table and "the judge against" not in err
    # by default the shipped sample (benchmarks/data/tolc_judge_sample.jsonl): the scripted judge knows only the
    # fixture's three facts, so it misses the facts the labeller counted there and gets no figure
    with serve(monkeypatch, BenchResponder()):
        code, table, err = bench(capsys, "--no-answers", "--limit", "1", "--default-judge-check")
    assert code == 0, err
    assert "the judge against tolc_judge_sample.jsonl" in err and "over 97 facts" in err
    assert "not reported: the judge agrees with the hand-labelled sample" in table


def test_the_key_fact_judge_is_asked_for_every_fact_by_the_schema_and_a_left_out_one_is_asked_again():
    """Issue 41 item 6: the 1.5B left out a fact in 14 of 60 replies of the sample. The schema sent names the
    case's fact ids and their number, which a llama.cpp server's grammar enforces; a model that still leaves
    one out gets the corrective turn, and only then is the case a judge failure."""
    from lawluo.metrics.judge import Judge
    from lawluo.metrics.tree_bench.cases import BenchCase, Fact
    from lawluo.metrics.tree_bench.judge import JudgeFailed, recovered_facts
    from tests.fakes.scripted_backend import ScriptedBackend

    case = BenchCase(
        id="c1",
        question="离婚房子怎么分？",
        facts=[Fact(id="f1", text="婚前买的"), Fact(id="f2", text="有孩子")],
    )
    short = '{"facts": [{"id": "f1", "recovered": true}]}'
    whole = '{"facts": [{"id": "f2", "recovered": false}, {"id": "f1", "recovered": true}]}'
    backend = ScriptedBackend(short, whole)
    assert recovered_facts(Judge(backend), case, ["房子是否婚前购买？"], []) == {"f1": True, "f2": False}
    (_, first), _ = backend.calls
    facts = first["json_schema"]["properties"]["facts"]
    assert (facts["minItems"], facts["maxItems"]) == (2, 2)
    assert first["json_schema"]["$defs"]["Verdict"]["properties"]["id"]["enum"] == ["f1", "f2"]
    with pytest.raises(JudgeFailed, match="f2"):  # a repeated id passes the schema and still leaves f2 out
        twice = '{"facts": [{"id": "f1", "recovered": true}, {"id": "f1", "recovered": false}]}'
        recovered_facts(Judge(ScriptedBackend(twice)), case, ["房子是否婚前购买？"], [])


def test_a_judge_that_says_one_thing_throughout_agrees_by_chance_only():
    """κ is 0 (reported, under the bar), not undefined, when the judge or the labels never vary."""
    from lawluo.metrics.tree_bench import judge_check

    assert judge_check.agreement_kappa([True, False, True, False], [True] * 4) == 0.0
    assert judge_check.agreement_kappa([True] * 3, [True, False, False]) == 0.0
    assert judge_check.agreement_kappa([True] * 3, [False] * 3) == 0.0
    assert judge_check.agreement_kappa([False] * 2, [False] * 2) == 1.0
    assert judge_check.agreement_kappa([], []) is None
    assert judge_check.agreement_kappa([True, False], [True, False]) == 1.0
    assert doctest.testmod(judge_check).failed == 0


@pytest.mark.parametrize(
    "content",
    [
        '{"case_id": "nobody", "recovered": {"f1": true}}\n',  # a case the cases file lacks
        '{"case_id": "lawyer_llama-mt-0001", "recovered": {"f9": true}}\n',  # a fact the case lacks
        "<script>alert(1)</script>\n",
    ],
)
def test_a_malformed_judge_sample_is_refused_with_its_line(
    capsys, tmp_path, monkeypatch, environment, content
):
    (tmp_path / "s.jsonl").write_text(content, encoding="utf-8")
    (tmp_path / "s.cases.jsonl").write_text(
        (SAMPLES / "agrees.cases.jsonl").read_text(encoding="utf-8"), encoding="utf-8"
    )
    with serve(monkeypatch, BenchResponder()):
        code, _, err = bench(capsys, "--judge-sample", tmp_path / "s.jsonl")
    assert code == 2 and "s.jsonl:1" in err and "Traceback" not in err


def test_a_judge_that_answers_junk_is_counted_and_its_cases_are_not_scored(
    capsys, tmp_path, monkeypatch, environment
):
    with serve(monkeypatch, BenchResponder(judge_junk=True)):
        code, table, err = bench(capsys, "--json", tmp_path / "r.json")
    summary = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["summary"]
    assert code == 0, err
    # The three cases with an answered element needed the judge and could not be scored; the two with
    # nothing settled are 0 by construction.
    assert summary["fallbacks"]["judge_failed_cases"] == 3 and summary["recovered"]["n"] == 2
    assert summary["recovered"]["mean"] == 0
    assert summary["pairwise"]["n"] == 0 and summary["pairwise"]["failed"] == 5
    assert summary["fallbacks"]["pair_failed_verdicts"] == 10
    assert "| Fell back: judge replies unusable (cases not scored) | 3 |" in table
    assert "3 case(s) the judge could not score" in err
    # checked against a sample first, the junk replies are counted with why they were unusable
    with serve(monkeypatch, BenchResponder(judge_junk=True)):
        code, table, err = bench(capsys, "--limit", "1", "--judge-sample", SAMPLES / "agrees.jsonl")
    assert code == 1 and "no case could be scored" in err  # its one case needed the judge too
    assert "agreement –, κ – over 0 facts (2 replies unusable, 2 StructuredOutputError)" in err


def test_a_client_that_answers_junk_leaves_every_element_unmarked_and_is_counted(
    capsys, monkeypatch, environment
):
    with serve(monkeypatch, BenchResponder(client_junk=True)):
        code, table, err = bench(capsys, "--no-answers", "--limit", "2")
    assert code == 0, err
    # two levels asked per case, both replies unusable; nothing settled, so nothing recovered
    assert "| Fell back: client replies unusable (elements it left out) | 4 (0) |" in table
    assert "0.000 [0.000, 0.000]" in table and "pairwise" not in table.lower()


def test_a_clarifier_whose_json_fails_below_the_first_level_is_counted_as_a_fallback(
    capsys, tmp_path, monkeypatch, environment
):
    with serve(monkeypatch, BenchResponder(clarifier_junk=True)):
        code, table, err = bench(capsys, "--no-answers", "--limit", "1", "--json", tmp_path / "r.json")
    assert code == 0, err
    (case,) = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["cases"]
    # three second-level nodes failed (bad JSON twice each); their children came from the material or cases
    assert case["clarifier_failed_nodes"] == 3 and case["calls"]["clarifier"] == 1 + 3 * 2
    assert case["element_sources"].pop("model") == 3
    assert sum(case["element_sources"].values()) == case["elements"] - 3 > 0
    (row,) = [line for line in table.splitlines() if line.startswith("| Fell back: trees not all")]
    assert "| 1 (3); " in row and "model 3 |" in row


def test_without_a_model_for_the_client_or_judge_the_bench_says_what_to_set(capsys, environment):
    code, _, err = bench(capsys, "--limit", "1")
    assert code == 2
    assert "the simulated client (--client-role judge) 需要语言模型 needs a model" in err
    assert "Traceback" not in err


def test_saved_cases_rerun_as_the_same_set_and_hostile_case_files_are_refused(capsys, tmp_path):
    saved = tmp_path / "cases.jsonl"
    assert bench(capsys, "--cases-only", "--limit", "3", "--seed", "7", "--save-cases", saved)[0] == 0
    code, out, _ = bench(capsys, "--cases-only", "--cases", saved)
    assert code == 0 and out == saved.read_text(encoding="utf-8")
    assert len(out.splitlines()) == 3
    good = json.loads(out.splitlines()[0])
    hostile = [
        {**good, "id": "../../etc/passwd"},
        {**good, "facts": []},
        {**good, "question": "问" * 5000},
        {**good, "facts": [{"id": "f1", "text": "甲"}, {"id": "f1", "text": "乙"}]},
    ]
    for n, row in enumerate(hostile):
        bad = tmp_path / f"bad{n}.jsonl"
        bad.write_text(
            json.dumps(good, ensure_ascii=False) + "\n" + json.dumps(row, ensure_ascii=False) + "\n"
        )
        code, out, err = bench(capsys, "--cases-only", "--cases", bad)
        assert code == 2 and f"{bad}:2:" in err and "the cases file is not valid" in err, err
        assert out == "" and "Traceback" not in err
    (tmp_path / "binary.jsonl").write_bytes(b"\x00\x01\x02")
    code, _, err = bench(capsys, "--cases-only", "--cases", tmp_path / "binary.jsonl")
    assert code == 2 and "binary" in err


def test_bad_options_and_a_missing_data_folder_are_refused_in_both_languages(capsys, tmp_path):
    for argv in (["--k", "9"], ["--height", "1"], ["--concurrency", "0"], ["--limit", "-1"]):
        code, _, err = bench(capsys, "--cases-only", *argv)
        assert code == 2 and "须在" in err and "--k 1–6" in err, argv
    code = main(["bench", "tolc", "--cases-only", "--data", str(tmp_path / "none")])
    err = capsys.readouterr().err
    assert code == 2 and "找不到数据目录 no such directory" in err


# -- the cases themselves --------------------------------------------------------------------------


def test_key_facts_are_the_statements_of_later_turns_not_questions_thanks_or_the_first_question():
    assert split_facts("是有重大过错。", "……请问另一方是否有重大过错？", "因为赌博离婚") == [
        ("是有重大过错", "请问另一方是否有重大过错？")
    ]
    assert split_facts("好的，明白了。", "还有其他问题吗？", "q") == []
    assert split_facts("那我该怎么收集证据呢？我不知道要找哪些人。", "", "q") == []
    assert split_facts("我想离婚，我们已经分居两年了", "", "我想离婚") == [("我们已经分居两年了", "")]
    assert split_facts("没有", "", "q") == []  # a bare reply to no question of the lawyer's
    assert split_facts("没有", "请问是否有遗嘱？", "q") == [("没有", "请问是否有遗嘱？")]
    assert lawyer_question("……。您是否需要具体了解如何提供证据？") == ""


def test_the_fixture_dialogues_give_five_cases_and_the_one_that_only_asks_gives_none():
    cases, left_out = dialogue_cases(FIXTURE)
    assert left_out == 1 and [c.id for c in cases] == sorted(EXPECTED)
    assert [f.text for f in cases[4].facts] == ["没有异议", "只有房产"]
    assert (
        cases[1].facts[0].shown()
        == "他知道（回答律师的问题：所以请问您的丈夫是否知情并同意前往当地婚姻登记机关申请结婚登记呢？）"
    )


@pytest.mark.skipif(not (SHARED_DATA / "lawyer_llama").is_dir(), reason="needs ../shared/data/lawyer_llama")
def test_the_shared_data_gives_a_seeded_sample_whose_smaller_limits_are_prefixes():
    cases, left_out = dialogue_cases(SHARED_DATA)
    assert len(cases) + left_out == 476 and len(cases) > 300
    assert [c.id for c in sample(cases, 20, 0)] == [c.id for c in sample(cases, 50, 0)][:20]
    assert [c.id for c in sample(cases, 20, 0)] != [c.id for c in sample(cases, 20, 1)]
    for case in cases:
        assert all(f.text not in case.question for f in case.facts), case.id


def test_a_case_validates_what_a_hand_written_file_may_hold():
    with pytest.raises(ValueError, match="fact ids repeat"):
        BenchCase(id="x", question="q", facts=[Fact(id="f1", text="a"), Fact(id="f1", text="b")])


def test_a_judge_that_flips_with_the_order_gets_no_headline():
    """Issue 41, item 6: the 1.5B judge's pairwise verdicts flipped with the order; below
    MIN_JUDGE_CONSISTENCY the table says so instead of a win rate."""
    from lawluo.metrics.tree_bench.bench import MIN_JUDGE_CONSISTENCY, markdown_table

    summary = {
        "cases": 10,
        "recovered": {"mean": 0.5, "low": 0.3, "high": 0.7, "n": 10, "pooled": 0.5},
        "recovered_facts": 5,
        "scored_facts": 10,
        "elements_mean": 6.0,
        "asked_mean": 6.0,
        "client_answers": {},
        "calls_per_case": {},
        "seconds_per_case": {},
        "fallbacks": {
            "clarifier_cases": 0,
            "clarifier_failed_nodes": 0,
            "element_sources": {},
            "client_failed_calls": 0,
            "client_omitted_elements": 0,
            "judge_failed_cases": 0,
            "tree_sources": {},
            "answer_notes_clarified": 0,
            "answer_notes_at_once": 0,
            "pair_failed_verdicts": 0,
        },
    }
    pairwise = {"win": 7, "draw": 0, "loss": 3, "interval": {"mean": 0.7, "low": 0.4, "high": 0.9}}
    flipping = markdown_table(summary | {"pairwise": pairwise | {"consistency": 0.4}})
    assert (
        "not reported" in flipping and "7/0/3" not in flipping and f"{MIN_JUDGE_CONSISTENCY:.2f}" in flipping
    )
    steady = markdown_table(summary | {"pairwise": pairwise | {"consistency": 0.9}})
    assert "7/0/3" in steady and "not reported" not in steady
