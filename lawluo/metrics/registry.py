"""The metrics of ``python -m lawluo evaluate``: one row per metric, read by the evaluator, the report
writer and the CLI.

A row (:class:`MetricSpec`) says what a metric is called, what it needs (a judge model, an encoder, or
nothing), its help line, the groups ``--metrics`` may name it by, the summary columns it adds to the
Markdown table, and where its :class:`Metric` lives: the object that scores the answers and
summarises a system's scores. The object is imported only when the metric is used, so the CLI's help
costs no model library. As in lm-evaluation-harness's metric registry and Hugging Face ``evaluate``'s
modules, a new metric is one module and one row:

    # lawluo/metrics/length.py
    class AnswerLength(Metric):
        def run(self, run):                                      # per answer: (id, system) → value
            return {(a.id, a.system): len(a.text) for a in run.inputs.answers}

        def summarise(self, values):                             # one system's summary columns
            return {"length": mean(values)} if values else {}

    LENGTH = AnswerLength()

    # here, in REGISTRY
    MetricSpec("length", "answer length in characters", "nothing", "lawluo.metrics.length:LENGTH",
               columns=(Column("length", "Length", "{:.0f}"),)),

``tests/test_metric_registry.py`` checks that every row is run, reported and listed in the help, and
adds such a metric in a test.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from lawluo.law.verdicts import VERDICT_TABLE

if TYPE_CHECKING:
    from lawluo.law.checker import CitationChecker

    from .inputs import Inputs
    from .judge import Judge

Key = tuple[str, str]  # (question id, system): one answer
Needs = Literal["nothing", "encoder", "judge"]


class Column(NamedTuple):
    """A summary column in the Markdown table: its key in the summary row, heading and number format."""

    key: str
    heading: str
    fmt: str = "{}"


class HumanScale(NamedTuple):
    """A metric lawyers also score, in the annotation tab (``eval_ui.human_scores``): its short name there
    (the report's, the adjudication page's) and the range of a lawyer's score, both ends included. The
    form's label is the catalogue's ``annotate.<metric name>`` (``lawluo/strings/annotate.yaml``)."""

    name: str
    low: int = 0
    high: int = 10


class Metric:
    """What the evaluator calls on a metric. Override :meth:`run`; the rest have defaults."""

    def check(self, inputs: Inputs, options: EvalOptions) -> None:
        """Raise ``ValueError`` when the options cannot work for these inputs (before anything runs)."""

    def run(self, run: Run) -> dict[Key, Any] | None:
        """Score the answers: a value per answer, or ``None`` when the metric cannot run (add a note)."""
        raise NotImplementedError

    def detail(self, value: Any) -> Any:
        """An answer's value as ``details.jsonl`` shows it."""
        return value

    def summarise(self, values: Sequence[Any]) -> dict[str, Any]:
        """One system's summary columns from its answers' values (none when it has no values)."""
        return {}

    def judge_errors(self, value: Any) -> int:
        """How many judge calls failed for this answer (the summary's ``judge_errors``)."""
        return 0


@dataclass(frozen=True)
class MetricSpec:
    name: str
    help: str
    needs: Needs
    runner: str  # "module:attribute" of its Metric, imported when the metric runs
    groups: tuple[str, ...] = ()  # besides "all", which names every metric
    columns: tuple[Column, ...] = ()  # its columns in the Markdown summary, in order
    requires: tuple[str, ...] = ()  # metrics whose values it reads: they run (unreported) before it
    judge_fallback: bool = False  # needs no judge, but uses one when there is one
    compares_systems: bool = False  # scores pairs of systems, not answers: runs after the others
    human: HumanScale | None = None  # lawyers score it too: a row of the human-score table (eval_ui)

    @property
    def uses_judge(self) -> bool:
        return self.needs == "judge" or self.judge_fallback

    def load(self) -> Metric:
        module, _, attribute = self.runner.partition(":")
        return getattr(importlib.import_module(module), attribute)


REGISTRY: tuple[MetricSpec, ...] = (
    MetricSpec(
        "nhsr",
        "non-hallucinated statute rate (LegalHalBench §3.3); the judge only as A.2 fallback",
        "nothing",
        "lawluo.metrics.nhsr:NHSR",
        groups=("nojudge",),
        columns=(
            Column("nhsr", "NHSR", "{:.3f}"),
            Column("statutes", "Statutes checked"),
            *(Column(f"n_{v.code}", v.label_en) for v in VERDICT_TABLE),  # lawluo/law/verdicts.py
        ),
        judge_fallback=True,
    ),
    MetricSpec(
        "rouge_l",
        "ROUGE-L F as LawBench computes it for task 3-8 (jieba words)",
        "nothing",
        "lawluo.metrics.overlap:ROUGE_L",
        groups=("nojudge",),
        columns=(Column("rouge_l", "ROUGE-L", "{:.3f}"),),
    ),
    MetricSpec(
        "meteor",
        "METEOR on jieba words (nltk; exact and stem matches)",
        "nothing",
        "lawluo.metrics.overlap:METEOR",
        groups=("nojudge",),
        columns=(Column("meteor", "METEOR", "{:.3f}"),),
    ),
    MetricSpec(
        "bertscore",
        "BERTScore F1 with a Chinese encoder (--bertscore-model)",
        "encoder",
        "lawluo.metrics.overlap:BERTSCORE",
        columns=(Column("bertscore", "BERTScore", "{:.3f}"),),
    ),
    MetricSpec(
        "rel",
        "statute relevance 0–10 (LegalHalBench A.4)",
        "judge",
        "lawluo.metrics.relevance:REL",
        groups=("judge",),
        columns=(Column("rel", "Rel", "{:.2f}"),),
        requires=("nhsr",),
        human=HumanScale("Rel"),
    ),
    MetricSpec(
        "tlc",
        "legal claim truthfulness 0–10 (LegalHalBench A.5)",
        "judge",
        "lawluo.metrics.truthfulness:TLC",
        groups=("judge",),
        columns=(Column("tlc", "T_LC", "{:.2f}"),),
        human=HumanScale("T_LC"),
    ),
    MetricSpec(
        "pairwise",
        "pairwise win rate, judged twice with positions swapped (A.6)",
        "judge",
        "lawluo.metrics.pairwise:PAIRWISE",
        groups=("judge",),
        compares_systems=True,  # its results are the summary's pairwise table, not columns
    ),
    MetricSpec(
        "score",
        "LawLuo's single-answer score 1–10 per turn (LawLuo §5.2, App. C)",
        "judge",
        "lawluo.metrics.single_score:SINGLE_SCORE",
        groups=("judge",),
        columns=(Column("score", "Score", "{:.2f}"),),
    ),
)
DEFAULT_GROUP = "nojudge"


def spec(name: str) -> MetricSpec:
    """The row of the metric ``name`` (``KeyError`` when there is none)."""
    for row in REGISTRY:
        if row.name == name:
            return row
    raise KeyError(name)


def groups() -> dict[str, tuple[str, ...]]:
    """Each group name → its metrics, in registry order: ``all``, then the rows' groups as they appear."""
    named = dict.fromkeys(g for row in REGISTRY for g in row.groups)
    return {
        "all": tuple(row.name for row in REGISTRY),
        **{g: tuple(row.name for row in REGISTRY if g in row.groups) for g in named},
    }


def parse_metrics(text: str) -> tuple[str, ...]:
    """``"nhsr,rouge_l"`` → ("nhsr", "rouge_l"); group names (``all``, ``nojudge``, ``judge``) too.

    >>> parse_metrics("rouge_l, nhsr,nhsr")
    ('nhsr', 'rouge_l')
    """
    names: list[str] = []
    known = [row.name for row in REGISTRY]
    aliases = groups()
    for part in (p.strip().lower() for p in text.split(",")):
        if not part:
            continue
        if part in aliases:
            names.extend(aliases[part])
        elif part in known:
            names.append(part)
        else:
            raise ValueError(f"unknown metric {part!r}; choose from {', '.join([*known, *aliases])}")
    if not names:
        raise ValueError("no metrics named")
    return tuple(n for n in known if n in names)  # registry order, no repeats


def metrics_help() -> str:
    """The ``--metrics`` option's help: the metric names and the groups (``all`` last)."""
    listed = groups()
    order = [*(g for g in listed if g != "all"), "all"]
    shown = [f"{g} ({','.join(listed[g])}; the default)" if g == DEFAULT_GROUP else g for g in order]
    return f"comma-separated: {', '.join(row.name for row in REGISTRY)}; or the groups {', '.join(shown)}"


def metrics_epilog() -> str:
    """One line per metric, with what it needs, for ``lawluo evaluate --help``."""
    width = max(len(row.name) for row in REGISTRY)
    needs = {"nothing": "", "encoder": " [needs an encoder]", "judge": " [needs a judge model]"}
    return "metrics:\n" + "\n".join(
        f"  {row.name:<{width}}  {row.help}{needs[row.needs]}" for row in REGISTRY
    )


def summary_columns() -> tuple[Column, ...]:
    """The Markdown summary's columns: system and answers, every metric's, and the judge's errors."""
    return (
        Column("system", "System"),
        Column("answers", "Answers"),
        *(c for row in REGISTRY for c in row.columns),
        Column("judge_errors", "Judge errors"),
    )


def mean(values: Sequence[float | None]) -> float | None:
    """The mean of the values present; ``None`` when none is.

    >>> mean([1.0, None, 2.0]), mean([None])
    (1.5, None)
    """
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None


def judged_columns(name: str, details: Sequence[dict]) -> dict[str, Any]:
    """A judge metric's summary from answers' ``{"score": …}`` details: mean score and how many scored.

    >>> judged_columns("rel", [{"score": 10.0}, {"score": None}, {"score": 5.0}])
    {'rel': 7.5, 'rel_n': 2}
    """
    if not details:
        return {}
    scores = [d["score"] for d in details]
    return {name: mean(scores), f"{name}_n": sum(v is not None for v in scores)}


# -- what a metric is run with (the evaluator fills these; a metric reads them) --


@dataclass(frozen=True)
class EvalOptions:
    metrics: tuple[str, ...] = groups()[DEFAULT_GROUP]
    concurrency: int = 8
    pairs: tuple[tuple[str, str], ...] | None = None  # (first, second): results from the first's side
    versus: str | None = None  # pairwise: this system against every other one
    bertscore_model: str = "bert-base-chinese"
    bertscore_layers: int | None = None
    progress: bool = True

    def __post_init__(self) -> None:
        if not 1 <= self.concurrency <= 256:
            raise ValueError("concurrency must be between 1 and 256")


@dataclass
class Results:
    metrics: tuple[str, ...]
    details: list[dict]
    summary: list[dict]
    pairs: list[dict] = field(default_factory=list)
    pair_details: list[dict] = field(default_factory=list)
    turns: dict[str, list[float | None]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)
    failed: bool = False  # a metric stopped on an error that fails every call


@dataclass
class Run:
    """What a metric reads while it runs: the inputs, the models, the options, the earlier metrics'
    values (``values["nhsr"]`` for Rel), and the results, for its notes and its own tables."""

    inputs: Inputs
    checker: CitationChecker
    judge: Judge | None
    options: EvalOptions
    results: Results
    map: Callable[..., list]  # Evaluator.map: fn over items on the thread pool, with a progress bar
    values: dict[str, dict[Key, Any]] = field(default_factory=dict)
