"""The metrics of ``lawluo evaluate`` are the rows of ``lawluo/metrics/registry.py``: every row is run
by the evaluator, reported in the summary and details, and listed by the CLI's help; and a new metric
is one module and one row (a metric added here, in a temporary registry, reaches every output)."""

from __future__ import annotations

import csv
import json
import sys
import types

import pytest

from lawluo.cli import build_parser, main
from lawluo.metrics import overlap, registry
from lawluo.metrics.evaluate import Evaluator
from lawluo.metrics.inputs import Answer, Inputs, Reference
from lawluo.metrics.judge import Judge
from lawluo.metrics.registry import REGISTRY, Column, EvalOptions, Metric, MetricSpec, mean, parse_metrics
from lawluo.metrics.report import render_markdown
from tests.conftest import SESSION_KEYS
from tests.fakes.judge_responder import JudgeResponder
from tests.fakes.scripted_backend import ScriptedBackend

ROWS = pytest.mark.parametrize("row", REGISTRY, ids=[r.name for r in REGISTRY])
CITING = "根据《劳动合同法》第八十二条规定：“用人单位自用工之日起超过一个月不满一年未与劳动者订立书面劳动合同的，应当向劳动者每月支付二倍的工资。”"


@pytest.fixture
def no_model(monkeypatch):
    for key in list(__import__("os").environ):
        if key.startswith(("LAWLUO_", "OPENAI_")) and key not in SESSION_KEYS:
            monkeypatch.delenv(key)


def evaluate_help() -> str:
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    return " ".join(sub.choices["evaluate"].format_help().split())  # argparse wraps lines


def small_inputs(systems=("LawLuo", "Baseline"), n=2) -> Inputs:
    references = {
        f"q{i}": Reference(f"q{i}", f"问题{i}：没签劳动合同被辞退怎么办？", "《劳动合同法》第八十二条规定……")
        for i in range(n)
    }
    answers = [
        Answer(qid, system, CITING + "建议申请仲裁。" * (2 - s))
        for qid in references
        for s, system in enumerate(systems)
    ]
    return Inputs(answers, references)


class FakeEncoder:
    """BERTScore's scorer without a model: 0.5 for every pair."""

    def __init__(self, model: str, num_layers: int | None) -> None:
        pass

    def score(self, predictions, references):
        return [0.5] * len(predictions)


# -- every row is consumed ---------------------------------------------------------------------------


@ROWS
def test_every_row_is_listed_in_the_evaluate_help_and_by_parse_metrics(row):
    text = evaluate_help()
    assert f"{row.name} {row.help}" in text
    assert row.name in registry.metrics_help()
    assert row.name in parse_metrics("all") and parse_metrics(row.name) == (row.name,)
    for group in row.groups:
        assert group in registry.metrics_help() and row.name in parse_metrics(group)


@ROWS
def test_every_row_loads_a_metric_and_heads_its_columns_in_the_markdown_summary(row):
    assert isinstance(row.load(), Metric)
    assert set(row.requires) <= {r.name for r in REGISTRY}
    columns = registry.summary_columns()
    assert all(c in columns for c in row.columns)
    assert row.columns or row.compares_systems  # a metric of answers shows in the summary table


def test_every_row_is_run_detailed_and_summarised_by_the_evaluator(checker, monkeypatch):
    monkeypatch.setattr(overlap, "BertScorer", FakeEncoder)
    judge = Judge(ScriptedBackend(responder=JudgeResponder()))
    options = EvalOptions(metrics=parse_metrics("all"), progress=False)
    results = Evaluator(checker, judge, options).run(small_inputs())
    assert not results.failed and not results.notes
    assert list(results.metrics) == [r.name for r in REGISTRY]
    assert set(results.seconds) == {r.name for r in REGISTRY}
    markdown = render_markdown(results)
    for row in REGISTRY:
        if row.compares_systems:
            assert results.pairs and all(row.name not in d for d in results.details)
        else:
            assert all(d[row.name] is not None for d in results.details), row.name
        for column in row.columns:
            assert all(s[column.key] is not None for s in results.summary), column.key
            assert f"| {column.heading} |" in markdown
    assert [s["judge_errors"] for s in results.summary] == [0, 0]


def test_a_metric_needed_by_another_runs_first_and_is_not_reported(checker):
    judge = Judge(ScriptedBackend(responder=JudgeResponder()))
    results = Evaluator(checker, judge, EvalOptions(metrics=("rel",), progress=False)).run(small_inputs())
    assert list(results.seconds) == ["nhsr", "rel"]  # rel reads the statutes NHSR found
    assert all("nhsr" not in d and d["rel"]["score"] == 10 for d in results.details)
    assert all("nhsr" not in s and s["rel"] == 10 and s["rel_n"] == 2 for s in results.summary)


def test_judge_metrics_are_skipped_without_a_judge_and_the_others_run(checker):
    results = Evaluator(checker, None, EvalOptions(metrics=("meteor", "tlc"), progress=False)).run(
        small_inputs()
    )
    assert results.notes == ["skipped tlc: no judge model (not configured)"]
    assert list(results.seconds) == ["meteor"] and "judge_errors" not in results.summary[0]


def test_unknown_metric_names_list_every_row_and_group():
    with pytest.raises(ValueError) as err:
        parse_metrics("nhsr,bleu")
    assert str(err.value) == (
        "unknown metric 'bleu'; choose from "
        + ", ".join(
            [*(r.name for r in REGISTRY), "all", *dict.fromkeys(g for r in REGISTRY for g in r.groups)]
        )
    )


# -- a new metric is one module and one row ----------------------------------------------------------


class AnswerLength(Metric):
    """The new metric's module: characters per answer, and a system's mean and longest."""

    def run(self, run):
        return {(a.id, a.system): len(a.text) for a in run.inputs.answers}

    def summarise(self, values):
        return {"length": mean(values), "length_max": max(values)} if values else {}


LENGTH_ROW = MetricSpec(
    "length",
    "answer length in characters",
    "nothing",
    "lawluo_test_length_metric:LENGTH",
    groups=("nojudge",),
    columns=(Column("length", "Length", "{:.1f}"),),
)


@pytest.fixture
def length_metric(monkeypatch):
    module = types.ModuleType("lawluo_test_length_metric")
    module.LENGTH = AnswerLength()
    monkeypatch.setitem(sys.modules, module.__name__, module)
    monkeypatch.setattr(registry, "REGISTRY", (*REGISTRY, LENGTH_ROW))


def test_a_metric_added_as_one_module_and_one_row_reaches_every_output(
    capsys, tmp_path, no_model, length_metric
):
    inputs = small_inputs(n=3)
    for name, rows in (
        ("answers.jsonl", [{"id": a.id, "system": a.system, "answer": a.text} for a in inputs.answers]),
        (
            "refs.jsonl",
            [
                {"id": r.id, "question": r.question, "reference": r.reference}
                for r in inputs.references.values()
            ],
        ),
    ):
        (tmp_path / name).write_text(
            "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
        )
    lengths = {s: [len(a.text) for a in inputs.answers if a.system == s] for s in inputs.systems}
    out = tmp_path / "out"
    argv = ["evaluate", "--answers", tmp_path / "answers.jsonl", "--references", tmp_path / "refs.jsonl"]
    code = main([str(a) for a in [*argv, "--out", out, "--quiet", "--no-cache"]])  # the default: nojudge
    stdout, stderr = capsys.readouterr()
    assert code == 0, stderr
    assert "metrics: nhsr, rouge_l, meteor, length" in stderr
    rows = [json.loads(line) for line in stdout.splitlines()]
    assert [(r["system"], r["length"], r["length_max"]) for r in rows] == [
        (s, sum(v) / len(v), max(v)) for s, v in lengths.items()
    ]
    with (out / "summary.csv").open(encoding="utf-8") as f:
        assert [float(r["length"]) for r in csv.DictReader(f)] == [r["length"] for r in rows]
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["metrics"][-1] == "length" and "length" in summary["seconds"]
    assert [r["length"] for r in summary["summary"]] == [r["length"] for r in rows]
    md = (out / "summary.md").read_text(encoding="utf-8")
    assert "| METEOR | Length |" in md and f"| {rows[0]['length']:.1f} |" in md
    details = [json.loads(line) for line in (out / "details.jsonl").open(encoding="utf-8")]
    assert [d["length"] for d in details] == [len(a.text) for a in inputs.answers]
    assert "length answer length in characters" in evaluate_help()
