"""``python -m lawluo evaluate``: the batch evaluator on real systems' answers, with and without a judge,
its on-disk judge cache, and bad input files."""

from __future__ import annotations

import csv
import json

import pytest

from lawluo.cli import main
from lawluo.law.content_kinds import CONTENT_KINDS
from lawluo.law.verdicts import CONTENT_BEARING, HALLUCINATED
from lawluo.metrics import overlap
from tests.fakes.judge_responder import JudgeResponder
from tests.fakes.live_app import model_environ
from tests.fakes.openai_server import FakeOpenAIServer

from .conftest import SESSION_KEYS, SHARED_DATA

pytestmark = pytest.mark.slow  # 11 s of the suite on 2 cores (4 s or more: left out of the inner loop)

SYSTEMS = ("GPT4", "lawgpt-7b-beta1.1-hf", "chatglm2-6b-hf")  # in the file's order
N_QUESTIONS = 6


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, [json.loads(line) for line in out.splitlines()], err


def evaluate(capsys, answers, references, out, *options):
    return run(capsys, "evaluate", "--answers", answers, "--references", references, "--out", out, *options)


@pytest.fixture
def no_model(monkeypatch):
    for key in list(__import__("os").environ):
        if key.startswith(("LAWLUO_", "OPENAI_")) and key not in SESSION_KEYS:
            monkeypatch.delenv(key)


@pytest.fixture
def lawbench(tmp_path):
    """The first questions of LawBench's consultation set and three real systems' answers to them."""
    if not (SHARED_DATA / "lawbench").is_dir():
        pytest.skip(f"LawBench's data not found at {SHARED_DATA / 'lawbench'}")
    refs = [
        json.loads(line) for line in (SHARED_DATA / "lawbench" / "consult.dev.jsonl").open(encoding="utf-8")
    ]
    refs = refs[:N_QUESTIONS]
    ids = {r["id"] for r in refs}
    answers = [
        row
        for line in (SHARED_DATA / "lawbench" / "consult_predictions.dev.jsonl").open(encoding="utf-8")
        if (row := json.loads(line))["id"] in ids and row["system"] in SYSTEMS
    ]
    assert len(answers) == N_QUESTIONS * len(SYSTEMS)
    write_jsonl(tmp_path / "refs.jsonl", refs)
    write_jsonl(tmp_path / "answers.jsonl", answers)
    return tmp_path / "answers.jsonl", tmp_path / "refs.jsonl", answers, refs


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def test_no_judge_metrics_on_real_answers_match_the_metrics_computed_directly(
    capsys, tmp_path, lawbench, checker, no_model
):
    answers_path, refs_path, answers, refs = lawbench
    out = tmp_path / "out"
    code, rows, err = evaluate(capsys, answers_path, refs_path, out, "--quiet")
    assert code == 0, err
    assert [r["system"] for r in rows] == list(SYSTEMS)
    reference = {r["id"]: r["reference"] for r in refs}
    for row in rows:
        mine = [a for a in answers if a["system"] == row["system"]]
        results = [checker.check(a["answer"]) for a in mine]
        checked = [c for r in results for c in r.citations if c.verdict in CONTENT_BEARING]
        right = sum(c.verdict not in HALLUCINATED for c in checked)  # verified, amended_since
        assert row["statutes"] == len(checked)
        assert row["nhsr"] == (right / len(checked) if checked else None)
        rouge = [overlap.rouge_l(a["answer"], reference[a["id"]]) for a in mine]
        assert row["rouge_l"] == pytest.approx(sum(rouge) / len(rouge))
        assert 0 <= row["meteor"] <= 1
    assert {p.name for p in out.iterdir()} == {
        "summary.csv", "summary.md", "summary.json", "details.jsonl", "citations.csv",
    }  # fmt: skip
    with (out / "citations.csv").open(encoding="utf-8") as f:
        cited = list(csv.DictReader(f))
    assert len(cited) == sum(len(checker.check(a["answer"]).citations) for a in answers)
    assert {r["content_kind"] for r in cited} <= set(CONTENT_KINDS)
    details = [json.loads(line) for line in (out / "details.jsonl").open(encoding="utf-8")]
    assert len(details) == len(answers)
    assert {"id", "system", "nhsr", "rouge_l", "meteor"} <= set(details[0])
    with (out / "summary.csv").open(encoding="utf-8") as f:
        assert [r["system"] for r in csv.DictReader(f)] == list(SYSTEMS)
    md = (out / "summary.md").read_text(encoding="utf-8")
    assert "| System | Answers | NHSR |" in md and "python -m lawluo evaluate --answers" in md


def test_judge_metrics_are_skipped_with_a_note_when_no_judge_is_configured(
    capsys, tmp_path, lawbench, no_model
):
    answers_path, refs_path, *_ = lawbench
    code, rows, err = evaluate(
        capsys,
        answers_path,
        refs_path,
        tmp_path / "o",
        "--metrics",
        "all",
        "--versus",
        "GPT4",
        "--bertscore-model",
        tmp_path / "no-such-encoder",
        "--quiet",
    )
    assert code == 0
    assert "skipped rel, tlc, pairwise, score: no judge model" in err
    assert "skipped bertscore" in err and "no-such-encoder" in err
    assert all("rel" not in r and "bertscore" not in r and r["nhsr"] is not None for r in rows)
    notes = json.loads((tmp_path / "o" / "summary.json").read_text(encoding="utf-8"))["notes"]
    assert any(n.startswith("skipped rel") for n in notes)


def small_set(tmp_path, systems=("LawLuo", "Baseline"), n=3, turns=False):
    refs = [
        {
            "id": f"q{i}",
            "question": f"问题{i}：没签劳动合同被辞退怎么办？",
            "reference": "《劳动合同法》第八十二条规定……",
        }
        for i in range(n)
    ]
    answers = []
    for i in range(n):
        for s, system in enumerate(systems):
            text = "根据《劳动合同法》第八十二条规定：“用人单位自用工之日起超过一个月不满一年未与劳动者订立书面劳动合同的，应当向劳动者每月支付二倍的工资。”"
            text = text + "建议申请仲裁。" * (2 - s)  # the first system's answers are longer
            row = {"id": f"q{i}", "system": system, "answer": text}
            if turns:
                row = {
                    "id": f"q{i}",
                    "system": system,
                    "turns": [
                        {"question": "一问", "answer": text},
                        {"question": "二问", "answer": text + "补充"},
                    ],
                }
            answers.append(row)
    write_jsonl(tmp_path / "refs.jsonl", refs)
    write_jsonl(tmp_path / "answers.jsonl", answers)
    return tmp_path / "answers.jsonl", tmp_path / "refs.jsonl"


@pytest.fixture
def judge_server(monkeypatch, no_model):
    with FakeOpenAIServer() as server:
        server.responder = JudgeResponder(
            # Claims that differ between answers: identical judge calls would be answered by the cache.
            claims=lambda answer: [
                f"应当支付二倍工资（{len(answer)}）",
                f"建议申请劳动仲裁（{len(answer)}）",
            ],
            score=lambda answer: 8 if "补充" in answer else 6,
        )
        for key, value in model_environ(server).items():
            monkeypatch.setenv(key, value)
        yield server


def test_every_judge_metric_through_the_openai_backend_then_a_rerun_pays_nothing(
    capsys, tmp_path, judge_server
):
    answers_path, refs_path = small_set(tmp_path)
    argv = [
        answers_path,
        refs_path,
        tmp_path / "o",
        "--metrics",
        "nhsr,rel,tlc,pairwise,score",
        "--cache",
        tmp_path / "cache.sqlite",
        "--quiet",
        "--concurrency",
        "1",
    ]
    code, rows, err = evaluate(capsys, *argv)
    assert code == 0, err
    calls = judge_server.responder.calls
    # 6 answers × (1 claim list + 2 claims); 3 questions × 2 orders; 6 scores. Relevance: the two systems
    # cite the same statute for the same question, which is one call (one at a time, the second is a hit).
    assert calls == {
        "metrics/relevance": 3,
        "metrics/extract_claims": 6,
        "metrics/judge_claim": 12,
        "metrics/pairwise": 6,
        "metrics/single_score": 6,
    }
    by_system = {r["system"]: r for r in rows}
    assert (
        by_system["LawLuo"]["rel"] == 10.0 and by_system["LawLuo"]["tlc"] == 8.0
    )  # claims rated 5, 3 → (10+6)/2
    assert by_system["Baseline"]["score"] == 6.0 and by_system["LawLuo"]["judge_errors"] == 0
    summary = json.loads((tmp_path / "o" / "summary.json").read_text(encoding="utf-8"))
    (pair,) = summary["pairwise"]
    assert (pair["first"], pair["second"], pair["win"], pair["loss"], pair["consistency"]) == (
        "LawLuo",
        "Baseline",
        3,
        0,
        1.0,
    )
    assert (tmp_path / "o" / "win_rate.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert len((tmp_path / "o" / "pairwise.jsonl").read_text(encoding="utf-8").splitlines()) == 3
    requests = len(judge_server.requests)
    code, rows_again, err = evaluate(capsys, *argv)
    assert code == 0 and rows_again == rows
    assert len(judge_server.requests) == requests  # every judge call came from the cache
    assert "0 calls" in err


def test_an_interrupted_run_only_repeats_the_calls_that_failed(capsys, tmp_path, judge_server):
    answers_path, refs_path = small_set(tmp_path, n=4)
    base = JudgeResponder()
    failing = {"on": True}

    def flaky(body):
        if failing["on"] and "问题3" in body["messages"][0]["content"]:
            raise RuntimeError("server fell over")  # the fake answers 500
        return base(body)

    judge_server.responder = flaky
    argv = [
        answers_path,
        refs_path,
        tmp_path / "o",
        "--metrics",
        "score",
        "--cache",
        tmp_path / "cache.sqlite",
        "--quiet",
    ]
    code, rows, _ = evaluate(capsys, *argv)
    assert code == 0 and all(r["judge_errors"] == 1 and r["score_n"] == 3 for r in rows)
    details = [json.loads(line) for line in (tmp_path / "o" / "details.jsonl").open(encoding="utf-8")]
    assert sum(d["score"]["score"] is None for d in details) == 2
    failing["on"] = False
    before = len(judge_server.requests)
    code, rows, _ = evaluate(capsys, *argv)
    assert len(judge_server.requests) - before == 2  # only the two answers to 问题3
    assert all(r["judge_errors"] == 0 and r["score_n"] == 4 for r in rows)


def test_multi_turn_answers_are_scored_per_turn(capsys, tmp_path, judge_server):
    answers_path, refs_path = small_set(tmp_path, turns=True)
    code, rows, err = evaluate(
        capsys, answers_path, refs_path, tmp_path / "o", "--metrics", "score", "--no-cache", "--quiet"
    )
    assert code == 0, err
    summary = json.loads((tmp_path / "o" / "summary.json").read_text(encoding="utf-8"))
    assert summary["score_by_turn"] == {"LawLuo": [6.0, 8.0], "Baseline": [6.0, 8.0]}
    assert rows[0]["score"] == 7.0
    assert (tmp_path / "o" / "score_over_turns.png").exists()
    second_turn_prompt = next(p for p in judge_server.responder.prompts if "二问" in p)
    assert "客户：一问" in second_turn_prompt  # the dialogue before the turn is shown


def test_a_rejected_key_stops_the_judge_metrics_with_a_note_and_keeps_the_others(
    capsys, tmp_path, judge_server, monkeypatch
):
    judge_server.api_key = "the-right-key"
    answers_path, refs_path = small_set(tmp_path)
    code, rows, err = evaluate(
        capsys, answers_path, refs_path, tmp_path / "o", "--metrics", "nhsr,score", "--no-cache", "--quiet"
    )
    assert code == 1
    assert "score stopped" in err and rows[0]["nhsr"] == 1.0


def test_pairwise_with_many_systems_needs_the_pairs_named(capsys, tmp_path, lawbench, judge_server):
    answers_path, refs_path, *_ = lawbench
    code, _, err = evaluate(capsys, answers_path, refs_path, tmp_path / "o", "--metrics", "pairwise")
    assert code == 2 and "--pairs A:B" in err and "--versus SYSTEM" in err
    assert not (tmp_path / "o").exists()
    code, _, err = evaluate(
        capsys, answers_path, refs_path, tmp_path / "o", "--metrics", "pairwise", "--pairs", "GPT4:Nobody"
    )
    assert code == 2 and "Nobody" in err


@pytest.mark.parametrize(
    ("answers", "message"),
    [
        (
            '{"id": "q0", "system": "S", "answer": "甲"}\n{"id": "q1", "system": "S", "answer": \n',
            "answers.jsonl:2: not valid JSON",
        ),
        ('{"id": "q0", "system": "S", "answer": 3}\n', 'answers.jsonl:1: "answer" must be a string'),
        ('{"id": "q9", "system": "S", "answer": "甲"}\n', "answers.jsonl:1: id 'q9' is not in"),
        (
            '{"id": "q0", "system": "S", "answer": "甲"}\n{"id": "q0", "system": "S", "answer": "乙"}\n',
            "answers id 'q0' twice",
        ),
        ('{"id": "q0", "answer": "甲"}\n', '"system" must be a non-empty string'),
        ("[1, 2]\n", "expected a JSON object"),
        ("", "no answers in the file"),
    ],
)
def test_bad_answer_files_are_refused_with_the_line_and_nothing_is_written(
    capsys, tmp_path, no_model, answers, message
):
    write_jsonl(
        tmp_path / "refs.jsonl",
        [
            {"id": "q0", "question": "问", "reference": "答"},
            {"id": "q1", "question": "问", "reference": "答"},
        ],
    )
    (tmp_path / "answers.jsonl").write_text(answers, encoding="utf-8")
    code, rows, err = evaluate(capsys, tmp_path / "answers.jsonl", tmp_path / "refs.jsonl", tmp_path / "o")
    assert code == 2 and message in err and rows == []
    assert "Traceback" not in err and not (tmp_path / "o").exists()


def test_binary_and_missing_files_and_unknown_metrics_are_clear_errors(capsys, tmp_path, no_model):
    (tmp_path / "a.jsonl").write_bytes(b"\x89PNG\x00\x00\x00")
    write_jsonl(tmp_path / "r.jsonl", [{"id": "q0", "question": "问", "reference": "答"}])
    code, _, err = evaluate(capsys, tmp_path / "a.jsonl", tmp_path / "r.jsonl", tmp_path / "o")
    assert code == 2 and "binary" in err
    code, _, err = evaluate(capsys, tmp_path / "nope.jsonl", tmp_path / "r.jsonl", tmp_path / "o")
    assert code == 2 and "no such file" in err
    code, _, err = evaluate(
        capsys, tmp_path / "r.jsonl", tmp_path / "r.jsonl", tmp_path / "o", "--metrics", "nhsr,bleu"
    )
    assert code == 2 and "unknown metric 'bleu'" in err and "rouge_l" in err


def test_hostile_text_in_answers_is_data_not_markup(capsys, tmp_path, no_model):
    write_jsonl(tmp_path / "r.jsonl", [{"id": "q0", "question": "问", "reference": "答"}])
    write_jsonl(
        tmp_path / "a.jsonl",
        [{"id": "q0", "system": "<script>alert(1)</script>|x", "answer": "<img src=x onerror=alert(1)>"}],
    )
    code, rows, err = evaluate(capsys, tmp_path / "a.jsonl", tmp_path / "r.jsonl", tmp_path / "o", "--quiet")
    assert code == 0, err
    md = (tmp_path / "o" / "summary.md").read_text(encoding="utf-8")
    assert "<script>alert(1)</script>\\|x" in md  # a pipe cannot break the table


def test_a_blank_reference_leaves_only_its_overlap_scores_missing(capsys, tmp_path, no_model):
    write_jsonl(
        tmp_path / "r.jsonl",
        [
            {"id": "q0", "question": "问", "reference": ""},
            {"id": "q1", "question": "问", "reference": "回答:应当支付二倍工资。"},
        ],
    )
    write_jsonl(
        tmp_path / "a.jsonl",
        [
            {"id": "q0", "system": "S", "answer": "二倍工资"},
            {"id": "q1", "system": "S", "answer": "应当支付二倍工资"},
        ],
    )
    code, (row,), err = evaluate(
        capsys, tmp_path / "a.jsonl", tmp_path / "r.jsonl", tmp_path / "o", "--quiet"
    )
    assert code == 0, err
    assert "rouge_l: 1 answer(s) have a blank reference" in err
    details = [json.loads(line) for line in (tmp_path / "o" / "details.jsonl").open(encoding="utf-8")]
    assert details[0]["rouge_l"] is None and details[1]["rouge_l"] > 0
    assert row["rouge_l"] == details[1]["rouge_l"]


def test_an_answers_as_of_column_judges_its_citations_as_of_that_day(capsys, tmp_path, no_model):
    """The same quotation of 公司法 (2018) art. 26: right when written in 2019 (amended since), an older
    version's text in an answer of today; a date that is not one is refused with its line."""
    quote = "《公司法》第二十六条规定：有限责任公司的注册资本为在公司登记机关登记的全体股东认缴的出资额。"
    write_jsonl(tmp_path / "r.jsonl", [{"id": "q0", "question": "问", "reference": "答"}])
    write_jsonl(
        tmp_path / "a.jsonl",
        [
            {"id": "q0", "system": "then", "answer": quote, "as_of": "2019-06-01"},
            {"id": "q0", "system": "now", "answer": quote},
        ],
    )
    code, _, err = evaluate(
        capsys, tmp_path / "a.jsonl", tmp_path / "r.jsonl", tmp_path / "o", "--metrics", "nhsr", "--quiet"
    )
    assert code == 0, err
    details = [json.loads(line) for line in (tmp_path / "o" / "details.jsonl").open(encoding="utf-8")]
    verdicts = {d["system"]: d["nhsr"]["citations"][0]["verdict"] for d in details}
    assert verdicts == {"then": "amended_since", "now": "outdated_version"}
    write_jsonl(tmp_path / "bad.jsonl", [{"id": "q0", "system": "s", "answer": quote, "as_of": "2019-02-30"}])
    code, _, err = evaluate(capsys, tmp_path / "bad.jsonl", tmp_path / "r.jsonl", tmp_path / "o2")
    assert code == 2 and "bad.jsonl:1" in err and '"as_of"' in err and "Traceback" not in err
