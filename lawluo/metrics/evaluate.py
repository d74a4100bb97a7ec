"""The batch evaluator: every metric of LegalHalBench and LawLuo over many systems' answers.

    evaluator = Evaluator(checker, judge, EvalOptions(metrics=("nhsr", "rouge_l", "pairwise"),
                                                      pairs=(("LawLuo", "GPT4"),)))
    results = evaluator.run(load_inputs("answers.jsonl", "references.jsonl"))
    write_results(results, "out/")          # lawluo.metrics.report

The metrics are the rows of :mod:`lawluo.metrics.registry`; the evaluator runs the ones asked for in
the registry's order (those that compare systems, pairwise, last), each timed, and asks each for its
per-answer details and each system's summary columns. Metrics that need no model (NHSR by rules,
ROUGE-L, METEOR) always run; BERTScore needs its encoder (a hub id or a path) and is skipped with a
note when it cannot be loaded; the judge metrics (Rel, T_LC, pairwise, the single-answer score, and
NHSR's extraction fallback) are skipped with a note when no judge model is configured. Judge calls
run concurrently on ``concurrency`` threads (the judge backend's own ``concurrency`` option bounds the
requests in flight), each item's errors are recorded in its details, and an error that would fail
every call (no model, a rejected key) stops that metric with a note while the others go on.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from contextlib import closing
from typing import Any, TypeVar

from lawluo.law.checker import CitationChecker
from lawluo.llm.parallel import as_finished

from . import registry
from .inputs import Inputs
from .judge import FATAL, Judge
from .registry import EvalOptions, Key, Metric, MetricSpec, Results, Run

T = TypeVar("T")


class Evaluator:
    def __init__(
        self, checker: CitationChecker, judge: Judge | None = None, options: EvalOptions | None = None
    ) -> None:
        self.checker = checker
        self.judge = judge if judge is not None and judge.available else None
        self.judge_reason = None if judge is None else judge.unavailable_reason()
        self.options = options or EvalOptions()

    # -- planning ------------------------------------------------------------------------------
    def check(self, inputs: Inputs) -> None:
        """``ValueError`` when a metric asked for cannot run on these inputs (pairwise's pairs)."""
        for name in self.options.metrics:
            registry.spec(name).load().check(inputs, self.options)

    # -- running -------------------------------------------------------------------------------
    def run(self, inputs: Inputs) -> Results:
        self.check(inputs)
        metrics = self.options.metrics
        results = Results(metrics, [], [], notes=list(inputs.notes))
        details = {(a.id, a.system): {"id": a.id, "system": a.system} for a in inputs.answers}
        if self.judge is None:
            skipped = [m for m in metrics if registry.spec(m).needs == "judge"]
            if skipped:
                results.notes.append(
                    f"skipped {', '.join(skipped)}: no judge model ({self.judge_reason or 'not configured'})"
                )
                metrics = tuple(m for m in metrics if m not in skipped)
        needed = set(metrics) | {r for m in metrics for r in registry.spec(m).requires}
        plan = [s for s in registry.REGISTRY if s.name in needed]
        run = Run(inputs, self.checker, self.judge, self.options, results, self.map)
        loaded: dict[str, Metric] = {}
        for spec in sorted(plan, key=lambda s: s.compares_systems):  # stable: registry order
            metric = loaded[spec.name] = spec.load()
            try:
                values = self._timed(results, spec.name, lambda metric=metric: metric.run(run))
            except FATAL as exc:
                results.notes.append(f"{spec.name} stopped: {exc}")
                results.failed = True
                continue
            if values is None:
                continue
            run.values[spec.name] = values
            if spec.name in metrics:  # a metric run only for another's sake is not reported
                for key, value in values.items():
                    details[key][spec.name] = metric.detail(value)
        results.details = list(details.values())
        reported = [(s, loaded[s.name]) for s in plan if s.name in metrics]
        results.summary = self._summary(inputs, run.values, reported)
        return results

    def _timed(self, results: Results, name: str, run: Callable[[], T]) -> T:
        start = time.perf_counter()
        try:
            return run()
        finally:
            results.seconds[name] = round(time.perf_counter() - start, 2)

    def map(
        self, fn: Callable[[Any], T], items: Sequence[Any], desc: str, threads: int | None = None
    ) -> list[T]:
        """``fn`` over ``items`` on a thread pool, in order, with a progress bar on stderr (items done of
        all, rate, ETA and, with a judge, its calls and cache hits so far: :meth:`Judge.tally`)."""
        from tqdm.auto import tqdm

        out: list[Any] = [None] * len(items)
        workers = max(1, min(threads or self.options.concurrency, len(items) or 1))
        with (
            tqdm(
                total=len(items),
                desc=desc,
                unit="item",
                file=sys.stderr,
                disable=not self.options.progress,
                leave=False,
                mininterval=0.5,
            ) as bar,
            # on workers the caller's Ctrl-C does not wait for; in its context: its cancel token reaches the
            # judge's calls
            closing(
                as_finished(lambda pair: fn(pair[1]), enumerate(items), workers, name="lawluo-eval")
            ) as done,
        ):
            for (i, _), future in done:
                out[i] = future.result()
                if self.judge is not None and not bar.disable:
                    bar.set_postfix_str(self.judge.tally(), refresh=False)
                bar.update()
        return out

    # -- summary -------------------------------------------------------------------------------
    def _summary(
        self, inputs: Inputs, values: dict[str, dict[Key, Any]], reported: list[tuple[MetricSpec, Metric]]
    ) -> list[dict]:
        """A row per system: every reported metric's columns, then the judge's failed calls."""
        rows = []
        for system in inputs.systems:
            keys = [(a.id, a.system) for a in inputs.answers if a.system == system]
            row: dict[str, Any] = {"system": system, "answers": len(keys)}
            mine = {
                spec.name: [values[spec.name][k] for k in keys if k in values.get(spec.name, {})]
                for spec, _ in reported
            }
            for spec, metric in reported:
                row.update(metric.summarise(mine[spec.name]))
            if any(spec.needs == "judge" for spec, _ in reported):
                row["judge_errors"] = sum(
                    metric.judge_errors(v) for spec, metric in reported for v in mine[spec.name]
                )
            rows.append(row)
        return rows
