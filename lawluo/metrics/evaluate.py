"""The batch evaluator: every metric of LegalHalBench and LawLuo over many systems' answers.

    evaluator = Evaluator(checker, judge, EvalOptions(metrics=("nhsr", "rouge_l", "pairwise"),
                                                      pairs=(("LawLuo", "GPT4"),)))
    results = evaluator.run(load_inputs("answers.jsonl", "references.jsonl"))
    write_results(results, "out/")          # lawluo.metrics.report

Metrics that need no model (NHSR by rules, ROUGE-L, METEOR) always run; BERTScore needs its encoder
(a hub id or a path) and is skipped with a note when it cannot be loaded; the judge metrics (Rel,
T_LC, pairwise, the single-answer score, and NHSR's extraction fallback) are skipped with a note when
no judge model is configured. Judge calls run concurrently on ``concurrency`` threads (the judge
backend's own ``concurrency`` option bounds the requests in flight), each item's errors are recorded
in its details, and an error that would fail every call (no model, a rejected key) stops that metric
with a note while the others go on.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Any, TypeVar

from lawluo.law.checker import CitationChecker

from .inputs import Answer, Inputs
from .judge import FATAL, Judge
from .nhsr import AnswerStatutes, NHSRMetric, summarise_nhsr
from .pairwise import PairOutcome, judge_pair, summarise_pairs
from .references import reference_statutes
from .relevance import RelevanceMetric
from .single_score import TurnScore, mean_by_turn, score_turn
from .truthfulness import TruthfulnessMetric

T = TypeVar("T")


@dataclass(frozen=True)
class MetricInfo:
    name: str
    judge: bool
    help: str


METRICS = {
    m.name: m
    for m in (
        MetricInfo(
            "nhsr",
            False,
            "non-hallucinated statute rate (LegalHalBench §3.3); the judge only as A.2 fallback",
        ),
        MetricInfo("rouge_l", False, "ROUGE-L F as LawBench computes it for task 3-8 (jieba words)"),
        MetricInfo("meteor", False, "METEOR on jieba words (nltk; exact and stem matches)"),
        MetricInfo("bertscore", False, "BERTScore F1 with a Chinese encoder (--bertscore-model)"),
        MetricInfo("rel", True, "statute relevance 0–10 (LegalHalBench A.4)"),
        MetricInfo("tlc", True, "legal claim truthfulness 0–10 (LegalHalBench A.5)"),
        MetricInfo("pairwise", True, "pairwise win rate, judged twice with positions swapped (A.6)"),
        MetricInfo("score", True, "LawLuo's single-answer score 1–10 per turn (LawLuo §5.2, App. C)"),
    )
}
NO_JUDGE_METRICS = ("nhsr", "rouge_l", "meteor")
ALIASES = {
    "all": tuple(METRICS),
    "nojudge": NO_JUDGE_METRICS,
    "judge": tuple(n for n, m in METRICS.items() if m.judge),
}


def parse_metrics(text: str) -> tuple[str, ...]:
    """``"nhsr,rouge_l"`` → ("nhsr", "rouge_l"); ``all``, ``nojudge`` and ``judge`` name groups.

    >>> parse_metrics("rouge_l, nhsr,nhsr")
    ('nhsr', 'rouge_l')
    """
    names: list[str] = []
    for part in (p.strip().lower() for p in text.split(",")):
        if not part:
            continue
        if part in ALIASES:
            names.extend(ALIASES[part])
        elif part in METRICS:
            names.append(part)
        else:
            raise ValueError(f"unknown metric {part!r}; choose from {', '.join([*METRICS, *ALIASES])}")
    if not names:
        raise ValueError("no metrics named")
    return tuple(n for n in METRICS if n in names)  # registry order, no repeats


@dataclass(frozen=True)
class EvalOptions:
    metrics: tuple[str, ...] = NO_JUDGE_METRICS
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


class Evaluator:
    def __init__(
        self,
        checker: CitationChecker,
        judge: Judge | None = None,
        options: EvalOptions | None = None,
        bert_scorer: Callable[[str, int | None], Any] | None = None,
    ) -> None:
        self.checker = checker
        self.judge = judge if judge is not None and judge.available else None
        self.judge_reason = None if judge is None else judge.unavailable_reason()
        self.options = options or EvalOptions()
        self.bert_scorer = bert_scorer

    # -- planning ------------------------------------------------------------------------------
    def system_pairs(self, systems: Sequence[str]) -> list[tuple[str, str]]:
        """The system pairs the pairwise metric compares; ``ValueError`` when it cannot tell."""
        opts = self.options
        if opts.pairs:
            unknown = sorted({s for pair in opts.pairs for s in pair} - set(systems))
            if unknown:
                raise ValueError(f"--pairs names system(s) not in the answers: {', '.join(unknown)}")
            return list(opts.pairs)
        if opts.versus:
            if opts.versus not in systems:
                raise ValueError(
                    f"--versus {opts.versus!r} is not a system in the answers ({', '.join(systems)})"
                )
            return [(opts.versus, s) for s in systems if s != opts.versus]
        if len(systems) == 2:
            return [(systems[0], systems[1])]
        raise ValueError(
            f"pairwise needs the pairs to compare: the answers have {len(systems)} systems; "
            "give --pairs A:B[,C:D…] or --versus SYSTEM"
        )

    # -- running -------------------------------------------------------------------------------
    def run(self, inputs: Inputs) -> Results:
        metrics = self.options.metrics
        pairs = self.system_pairs(inputs.systems) if "pairwise" in metrics else []
        results = Results(metrics, [], [], notes=list(inputs.notes))
        details = {(a.id, a.system): {"id": a.id, "system": a.system} for a in inputs.answers}
        if any(METRICS[m].judge for m in metrics) and self.judge is None:
            skipped = [m for m in metrics if METRICS[m].judge]
            results.notes.append(
                f"skipped {', '.join(skipped)}: no judge model ({self.judge_reason or 'not configured'})"
            )
            metrics = tuple(m for m in metrics if not METRICS[m].judge)
        statutes: dict[tuple[str, str], AnswerStatutes] = {}
        if "nhsr" in metrics or "rel" in metrics:
            statutes = self._timed(results, "nhsr", lambda: self._nhsr(inputs.answers))
            if "nhsr" in metrics:
                for key, s in statutes.items():
                    details[key]["nhsr"] = s.as_dict()
        for name in ("rouge_l", "meteor", "bertscore"):
            if name in metrics:
                scores = self._timed(results, name, lambda name=name: self._overlap(name, inputs, results))
                for a, s in zip(inputs.answers, scores or [], strict=False):
                    details[(a.id, a.system)][name] = s
        judged = [
            ("rel", lambda: self._rel(inputs, statutes, details)),
            ("tlc", lambda: self._tlc(inputs, details)),
            ("score", lambda: self._score(inputs, details, results)),
            ("pairwise", lambda: self._pairwise(inputs, pairs, results)),
        ]
        for name, run in judged:
            if name not in metrics:
                continue
            try:
                self._timed(results, name, run)
            except FATAL as exc:
                results.notes.append(f"{name} stopped: {exc}")
                results.failed = True
        results.details = list(details.values())
        results.summary = self._summary(inputs, details, statutes, metrics)
        return results

    def _timed(self, results: Results, name: str, run: Callable[[], T]) -> T:
        start = time.perf_counter()
        try:
            return run()
        finally:
            results.seconds[name] = round(time.perf_counter() - start, 2)

    def _map(
        self, fn: Callable[[Any], T], items: Sequence[Any], desc: str, threads: int | None = None
    ) -> list[T]:
        """``fn`` over ``items`` on a thread pool, in order, with a progress bar on stderr."""
        from tqdm.auto import tqdm

        out: list[Any] = [None] * len(items)
        workers = max(1, min(threads or self.options.concurrency, len(items) or 1))
        with (
            tqdm(
                total=len(items), desc=desc, file=sys.stderr, disable=not self.options.progress, leave=False
            ) as bar,
            ThreadPoolExecutor(workers, thread_name_prefix="lawluo-eval") as pool,
        ):
            futures = {pool.submit(fn, item): i for i, item in enumerate(items)}
            try:
                for future in as_completed(futures):
                    out[futures[future]] = future.result()
                    bar.update()
            except BaseException:
                for future in futures:
                    future.cancel()
                raise
        return out

    def _nhsr(self, answers: list[Answer]) -> dict[tuple[str, str], AnswerStatutes]:
        metric = NHSRMetric(self.checker, self.judge)
        # The rules are CPU-bound Python (one thread is as fast as several); the judge's A.2 fallback
        # for answers the rules found nothing in runs concurrently afterwards.
        ruled = self._map(metric.check_rules, [a.text for a in answers], "nhsr", threads=1)
        out = {(a.id, a.system): s for a, s in zip(answers, ruled, strict=True)}
        if self.judge is not None:
            fallback = [a for a, s in zip(answers, ruled, strict=True) if metric.needs_judge(a.text, s)]
            for a, s in zip(
                fallback, self._map(lambda a: metric.score(a.text), fallback, "nhsr (judge)"), strict=True
            ):
                out[(a.id, a.system)] = s
        return out

    def _overlap(self, name: str, inputs: Inputs, results: Results) -> list[float | None] | None:
        """One text-overlap metric per answer; answers whose reference is blank get ``None`` (LawBench's
        ROUGE-L would stop on them) and a note says how many."""
        from . import overlap

        scorable = [i for i, a in enumerate(inputs.answers) if inputs.references[a.id].reference.strip()]
        if len(scorable) < len(inputs.answers):
            results.notes.append(
                f"{name}: {len(inputs.answers) - len(scorable)} answer(s) have a blank reference and no {name}"
            )
        predictions = [inputs.answers[i].text for i in scorable]
        references = [inputs.references[inputs.answers[i].id].reference for i in scorable]
        if name == "rouge_l":
            scores = overlap.rouge_l_many(predictions, references)
        elif name == "meteor":
            scores = overlap.meteor_many(predictions, references)
        else:
            factory = self.bert_scorer or overlap.BertScorer
            try:
                scores = factory(self.options.bertscore_model, self.options.bertscore_layers).score(
                    predictions, references
                )
            except (overlap.MetricUnavailable, ValueError) as exc:
                results.notes.append(f"skipped bertscore: {exc}")
                return None
        out: list[float | None] = [None] * len(inputs.answers)
        for i, score in zip(scorable, scores, strict=True):
            out[i] = score
        return out

    def _rel(self, inputs: Inputs, statutes: dict, details: dict) -> None:
        metric = RelevanceMetric(self.judge)
        todo = [a for a in inputs.answers if statutes[(a.id, a.system)].citations]
        rated = self._map(
            lambda a: metric.score(inputs.references[a.id].question, statutes[(a.id, a.system)].citations),
            todo,
            "rel",
        )
        for a in inputs.answers:
            details[(a.id, a.system)]["rel"] = {
                "score": None,
                "statutes": [],
                "errors": [],
                "note": "cites no statute",
            }
        for a, r in zip(todo, rated, strict=True):
            details[(a.id, a.system)]["rel"] = r.as_dict()

    def _tlc(self, inputs: Inputs, details: dict) -> None:
        metric = TruthfulnessMetric(self.judge)
        reference = {qid: reference_statutes(self.checker, ref) for qid, ref in inputs.references.items()}
        rated = self._map(
            lambda a: metric.score(inputs.references[a.id].question, a.text, reference[a.id]),
            inputs.answers,
            "tlc",
        )
        for a, r in zip(inputs.answers, rated, strict=True):
            details[(a.id, a.system)]["tlc"] = r.as_dict()

    def _score(self, inputs: Inputs, details: dict, results: Results) -> None:
        jobs = []  # (answer, turn index, history, question, answer text)
        for a in inputs.answers:
            turns = a.turns or ((inputs.references[a.id].question, a.text),)
            history: list[tuple[str, str]] = []
            for t, (question, text) in enumerate(turns):
                jobs.append((a, t, list(history), question, text))
                history += [("client", question), ("lawyer", text)]
        scored: list[TurnScore] = self._map(lambda j: score_turn(self.judge, j[2], j[3], j[4]), jobs, "score")
        per_answer: dict[tuple[str, str], list[TurnScore]] = {}
        for job, s in zip(jobs, scored, strict=True):
            per_answer.setdefault((job[0].id, job[0].system), []).append(s)
        by_system: dict[str, list[list[float | None]]] = {}
        for key, turn_scores in per_answer.items():
            values = [s.score for s in turn_scores if s.score is not None]
            details[key]["score"] = {
                "score": sum(values) / len(values) if values else None,
                "turns": [s.as_dict() for s in turn_scores],
            }
            by_system.setdefault(key[1], []).append([s.score for s in turn_scores])
        results.turns = {system: mean_by_turn(dialogues) for system, dialogues in by_system.items()}

    def _pairwise(self, inputs: Inputs, pairs: list[tuple[str, str]], results: Results) -> None:
        text = {(a.id, a.system): a.text for a in inputs.answers}
        jobs = [
            (qid, first, second)
            for first, second in pairs
            for qid in inputs.references
            if (qid, first) in text and (qid, second) in text
        ]

        def judge(job: tuple[str, str, str]) -> PairOutcome:
            qid, first, second = job
            ref = inputs.references[qid]
            return judge_pair(
                self.judge, ref.question, ref.reference, text[(qid, first)], text[(qid, second)]
            )

        outcomes = self._map(judge, jobs, "pairwise")
        by_pair: dict[tuple[str, str], list[PairOutcome]] = {}
        for (qid, first, second), outcome in zip(jobs, outcomes, strict=True):
            by_pair.setdefault((first, second), []).append(outcome)
            results.pair_details.append({"id": qid, "first": first, "second": second, **outcome.as_dict()})
        results.pairs = [
            {"first": first, "second": second, **summarise_pairs(by_pair.get((first, second), []))}
            for first, second in pairs
        ]

    # -- summary -------------------------------------------------------------------------------
    def _summary(self, inputs: Inputs, details: dict, statutes: dict, metrics: tuple[str, ...]) -> list[dict]:
        rows = []
        for system in inputs.systems:
            keys = [(a.id, a.system) for a in inputs.answers if a.system == system]
            row: dict[str, Any] = {"system": system, "answers": len(keys)}
            if "nhsr" in metrics:
                row.update(summarise_nhsr([statutes[k] for k in keys]))
            for name in ("rouge_l", "meteor", "bertscore"):
                values = [details[k].get(name) for k in keys]
                if name in metrics and any(v is not None for v in values):
                    row[name] = _mean(values)
            for name in ("rel", "tlc", "score"):
                if name in metrics and any(name in details[k] for k in keys):
                    values = [details[k][name]["score"] for k in keys if name in details[k]]
                    row[name] = _mean(values)
                    row[f"{name}_n"] = sum(v is not None for v in values)
            errors = sum(
                len(details[k][name].get("errors", []))
                for k in keys
                for name in ("rel", "tlc")
                if name in details[k]
            ) + sum(1 for k in keys for t in details[k].get("score", {}).get("turns", []) if t["error"])
            if any(METRICS[m].judge for m in metrics):
                row["judge_errors"] = errors
            rows.append(row)
        return rows


def _mean(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None
