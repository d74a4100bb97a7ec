"""``python -m lawluo bench tolc``: ToLC against simulated clients, on the firm's real product path.

Per case (:mod:`.bench_cases`): the receptionist routes the client's first question and the firm builds
the tree with the configured clarifier (:meth:`lawluo.firm.Firm.clarify`, its fallbacks included); the
simulated client (:mod:`.simulated`) answers the visible elements level by level and its answers are
marked like a visitor's clicks (:meth:`~lawluo.firm.Firm.mark`); the judge (:mod:`.bench_judge`) says
which key facts the confirmed and denied elements recovered. Unless ``answers=False``, the lawyer then
answers twice — after the clarification, and at once in a fresh consultation with the first question
alone — and the judge compares the two in both orders.

Answering at once asks nothing, so it recovers no key fact by construction; what it can still win is
the pairwise comparison. Every fallback is counted per case and in the summary, never hidden: a tree
built without the clarifier model (``tree.source``) or with failed node calls (``tree.failures``), a
client reply that was not usable JSON (its elements stay unmarked) or that left elements out, a judge
reply that was unusable (the case is not scored), an answer held back or cut (``note``), a pairwise
verdict missing.

Cost per case: calls per role counted on the backends (a corrective JSON retry is a call), elements in
the tree, elements asked, seconds per step.

Figures (:func:`summarise`): the recovered rate is the mean over scored cases of the share of a case's
key facts recovered, with a 95 % percentile bootstrap interval over cases (1,000 resamples, seed 0;
:func:`lawluo.retrieval.evaluation.bootstrap`), and the pooled share beside it; the pairwise win rate of
the answer after clarification counts a draw as half (:func:`lawluo.metrics.pairwise.summarise_pairs`),
with the same bootstrap interval.
"""

from __future__ import annotations

import contextvars
import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from ...llm import LLMError
from ...retrieval.evaluation import bootstrap
from ..judge import FATAL, Judge
from ..pairwise import MIN_JUDGE_CONSISTENCY, PairOutcome, summarise_pairs
from .cases import BenchCase
from .judge import prefer, recovered_facts
from .judge_check import MIN_FACT_JUDGE_KAPPA
from .simulated import SimulatedClient

_CALLS: contextvars.ContextVar[Counter | None] = contextvars.ContextVar("bench_calls", default=None)
_LOCK = threading.Lock()


class CountingBackend:
    """A role's backend that counts every request (``chat`` and ``stream``) into the current case's tally.

    Everything else is the wrapped backend's; ``chat_json`` goes through this object's ``chat``, so a
    corrective retry counts too."""

    def __init__(self, inner: Any, role: str) -> None:
        self._inner, self._role = inner, role

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def _count(self) -> None:
        tally = _CALLS.get()
        if tally is not None:
            with _LOCK:
                tally[self._role] += 1

    def chat(self, messages, **overrides):
        self._count()
        return self._inner.chat(messages, **overrides)

    def stream(self, messages, **overrides):
        self._count()
        return self._inner.stream(messages, **overrides)

    def chat_json(self, messages, schema, **overrides):
        from ...llm.structured import chat_json

        return chat_json(self, messages, schema, **overrides)


class CountedModels:
    """:class:`~lawluo.llm.LanguageModels` whose ``models[role]`` counts its requests per role."""

    def __init__(self, models: Any) -> None:
        self._models, self._wrapped = models, {}

    def __getitem__(self, role: str) -> CountingBackend:
        if role not in self._wrapped:
            self._wrapped[role] = CountingBackend(self._models[role], role)
        return self._wrapped[role]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._models, name)


@dataclass
class CaseResult:
    """What one case produced; ``as_dict`` is its row of ``--json``'s ``cases``."""

    id: str
    question: str
    facts: int
    key_facts: list[dict] = field(default_factory=list)  # {"id", "text", "asked"}
    domain: str | None = None
    tree_source: str = ""
    tree_notes: list[str] = field(default_factory=list)
    elements: int = 0
    element_sources: dict[str, int] = field(default_factory=dict)  # "model", "material (timeout)", …
    clarifier_failed_nodes: int = 0
    asked: int = 0
    client_answers: dict[str, int] = field(default_factory=lambda: {"yes": 0, "no": 0, "unknown": 0})
    client_failures: list[str] = field(default_factory=list)
    client_omitted: int = 0
    confirmed: list[str] = field(default_factory=list)
    denied: list[str] = field(default_factory=list)
    recovered: dict[str, bool] | None = None
    judge_error: str | None = None
    answer_clarified: str | None = None
    answer_at_once: str | None = None
    answer_notes: dict[str, str] = field(default_factory=dict)
    pair: dict | None = None
    calls: dict[str, int] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def clarifier_fell_back(self) -> bool:
        from_model = all(origin == "model" for origin in self.element_sources)
        return self.tree_source != "model" or self.clarifier_failed_nodes > 0 or not from_model

    @property
    def rate(self) -> float | None:
        if self.recovered is None:
            return None
        return sum(self.recovered.values()) / len(self.recovered)

    def as_dict(self) -> dict:
        return asdict(self) | {"recovered_rate": self.rate}


@dataclass
class TolcBench:
    """``firm`` built on :class:`CountedModels`; ``client`` and ``judge`` on roles of the same models."""

    firm: Any
    client: SimulatedClient
    judge: Judge
    answers: bool = True
    height: int | None = None
    k: int | None = None

    def run(
        self, cases: list[BenchCase], concurrency: int = 1, on_done: Callable[[], None] | None = None
    ) -> list[CaseResult]:
        """Every case's result, in the order of ``cases``; a fatal model error (no model, a rejected key)
        stops the run and is raised."""

        def one(case: BenchCase) -> CaseResult:
            result = self.run_case(case)
            if on_done is not None:
                on_done()
            return result

        if concurrency <= 1:
            return [one(c) for c in cases]
        with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="lawluo-bench") as pool:
            return list(pool.map(one, cases))

    def run_case(self, case: BenchCase) -> CaseResult:
        tally: Counter = Counter()
        token = _CALLS.set(tally)
        try:
            return self._case(case, tally)
        finally:
            _CALLS.reset(token)

    def _case(self, case: BenchCase, tally: Counter) -> CaseResult:
        firm = self.firm
        result = CaseResult(case.id, case.question, len(case.facts), [f.model_dump() for f in case.facts])
        state = firm.new()
        firm.receive(state, case.question)
        result.domain = state.domain
        start = time.perf_counter()
        for _ in firm.clarify(state, self.height, self.k):
            pass
        tree = state.tree
        result.seconds["tree"] = _since(start)
        result.tree_source, result.tree_notes = tree.source, list(tree.notes)
        result.elements, result.clarifier_failed_nodes = len(tree.elements), tree.failures
        result.element_sources = dict(Counter(_origin(n, tree.source) for n in tree.elements))
        # the client answers what a visitor would still see, level by level (nothing under a "no")
        start = time.perf_counter()
        for depth in range(1, tree.height):
            shown = [n for n in state.tree.visible() if n.depth == depth and n.mark == "unknown"]
            if not shown:
                continue
            result.asked += len(shown)
            try:
                reply = self.client.answer(case, shown)
            except FATAL:
                raise
            except LLMError as exc:  # unusable reply: these elements stay unmarked, as if nobody clicked
                result.client_failures.append(f"level {depth}: {type(exc).__name__}: {exc}")
                result.client_answers["unknown"] += len(shown)
                continue
            result.client_omitted += reply.omitted
            for node_id, mark in reply.marks.items():
                result.client_answers[mark] += 1
                if mark != "unknown":
                    firm.mark(state, node_id, mark)
        result.seconds["client"] = _since(start)
        result.confirmed, result.denied = list(state.confirmed), list(state.denied)
        start = time.perf_counter()
        try:
            result.recovered = recovered_facts(self.judge, case, result.confirmed, result.denied)
        except FATAL:
            raise
        except LLMError as exc:
            result.judge_error = f"{type(exc).__name__}: {exc}"
        result.seconds["judge_facts"] = _since(start)
        if self.answers:
            self._answers(case, state, result)
        result.calls = dict(tally)
        return result

    def _answers(self, case: BenchCase, state: Any, result: CaseResult) -> None:
        firm = self.firm
        start = time.perf_counter()
        _drain(firm.answer(state))
        clarified = state.turns[-1]
        result.seconds["answer_clarified"] = _since(start)
        start = time.perf_counter()
        at_once = firm.new()
        firm.receive(at_once, case.question)
        _drain(firm.answer(at_once))
        direct = at_once.turns[-1]
        result.seconds["answer_at_once"] = _since(start)
        result.answer_clarified, result.answer_at_once = clarified.text, direct.text
        for name, turn in (("clarified", clarified), ("at_once", direct)):
            if turn.note:
                result.answer_notes[name] = turn.note
        start = time.perf_counter()
        result.pair = prefer(self.judge, case, clarified.text, direct.text).as_dict()
        result.seconds["judge_pair"] = _since(start)


def _origin(node: Any, tree_source: str) -> str:
    """Who proposed ``node`` and, when not the model, why: ``material (timeout)`` (the node's own record
    where the tree keeps one, else the tree's ``source``)."""
    source = getattr(node, "source", "") or tree_source
    fallback = getattr(node, "fallback", "")
    return f"{source} ({fallback})" if fallback else source


def _drain(pieces: Any) -> None:
    """Read a streamed answer to its end (the firm stores the turn when the stream ends)."""
    for _ in pieces:
        pass


def _since(start: float) -> float:
    return round(time.perf_counter() - start, 3)


def _interval(values: list[float]) -> dict:
    """Mean and 95 % bootstrap interval of per-case values (``None``s when there are none)."""
    if not values:
        return {"mean": None, "low": None, "high": None, "n": 0}
    mean, low, high = bootstrap(np.asarray(values, dtype=float).reshape(-1, 1))[:, 0]
    return {"mean": float(mean), "low": float(low), "high": float(high), "n": len(values)}


def summarise(results: list[CaseResult], answers: bool = True) -> dict:
    """The run's figures (module docstring); worked example in ``tests/test_bench_tolc.py``."""
    n = len(results)
    scored = [r for r in results if r.recovered is not None]
    rates = [r.rate for r in scored]
    pooled_n = sum(r.facts for r in scored)
    pooled = sum(sum(r.recovered.values()) for r in scored)
    per_case = max(n, 1)
    calls: Counter = Counter()
    for r in results:
        calls.update(r.calls)
    summary: dict[str, Any] = {
        "cases": n,
        "facts": sum(r.facts for r in results),
        "recovered": _interval(rates) | {"pooled": pooled / pooled_n if pooled_n else None},
        "recovered_facts": pooled,
        "scored_facts": pooled_n,
        "at_once_recovered": 0.0,
        "elements_mean": sum(r.elements for r in results) / per_case,
        "asked_mean": sum(r.asked for r in results) / per_case,
        "client_answers": dict(sum((Counter(r.client_answers) for r in results), Counter())),
        "calls_per_case": {role: count / per_case for role, count in sorted(calls.items())},
        "seconds_per_case": _seconds(results),
        "fallbacks": {
            "clarifier_cases": sum(r.clarifier_fell_back for r in results),
            "clarifier_failed_nodes": sum(r.clarifier_failed_nodes for r in results),
            "tree_sources": dict(Counter(r.tree_source for r in results)),
            "element_sources": dict(sum((Counter(r.element_sources) for r in results), Counter())),
            "client_failed_calls": sum(len(r.client_failures) for r in results),
            "client_omitted_elements": sum(r.client_omitted for r in results),
            "judge_failed_cases": sum(r.judge_error is not None for r in results),
        },
    }
    if answers:
        outcomes = [PairOutcome(p["result"], p["consistent"]) for r in results for p in [r.pair or {}] if p]
        values = [{"win": 1.0, "draw": 0.5, "loss": 0.0}[o.result] for o in outcomes if o.result]
        summary["pairwise"] = summarise_pairs(outcomes) | {"interval": _interval(values)}
        summary["fallbacks"] |= {
            "answer_notes_clarified": sum("clarified" in r.answer_notes for r in results),
            "answer_notes_at_once": sum("at_once" in r.answer_notes for r in results),
            "pair_failed_verdicts": sum(len((r.pair or {}).get("errors", [])) for r in results),
        }
    return summary


def _seconds(results: list[CaseResult]) -> dict[str, dict[str, float]]:
    steps = sorted({s for r in results for s in r.seconds})
    out = {}
    for step in steps:
        values = sorted(r.seconds[step] for r in results if step in r.seconds)
        out[step] = {"mean": sum(values) / len(values), "p50": values[len(values) // 2]}
    return out


def markdown_table(summary: dict) -> str:
    """The summary as a GitHub Markdown table: ToLC with the simulated client against answering at once."""
    rec = summary["recovered"]
    fb = summary["fallbacks"]
    answered = summary["client_answers"]
    check = summary.get("judge_check")
    mean, pooled = _ci(rec), f"{summary['recovered_facts']}/{summary['scored_facts']} = {_num(rec['pooled'])}"
    if check is not None and not check["trustworthy"]:  # a judge unlike the hand labels measures nothing
        mean = pooled = (
            f"not reported: the judge agrees with the hand-labelled sample at κ {_num(check['kappa'])}, "
            f"under {MIN_FACT_JUDGE_KAPPA:.2f}"
        )
    rows = [
        (
            f"Key facts recovered, mean per case (95% CI, {rec['n']} of {summary['cases']} cases scored)",
            mean,
            "0 (asks nothing)",
        ),
        ("Key facts recovered, pooled", pooled, "0"),
    ]
    if check is not None:
        rows.append(
            (
                "Key-fact judge against the hand-labelled sample: agreement, Cohen's κ "
                f"({check['facts']} facts of {check['rows']} answer sets; true: labels {check['labelled_true']}, "
                f"judge {check['judged_true']}; replies unusable {check['failed_rows']})",
                f"{_num(check['agreement'])}, κ {_num(check['kappa'])}",
                "–",
            )
        )
    if "pairwise" in summary:
        rows += _judge_rows(summary["pairwise"])
    rows += [
        ("Elements in the tree, mean per case", f"{summary['elements_mean']:.1f}", "–"),
        (
            "Elements asked, mean per case (answers yes / no / 不清楚)",
            f"{summary['asked_mean']:.1f} ({answered.get('yes', 0)} / {answered.get('no', 0)} / "
            f"{answered.get('unknown', 0)})",
            "–",
        ),
        (
            "Model calls per case, by role",
            ", ".join(f"{role} {v:.1f}" for role, v in summary["calls_per_case"].items()) or "0",
            "–",
        ),
        (
            "Seconds per case, mean (p50)",
            ", ".join(
                f"{s} {v['mean']:.2f} ({v['p50']:.2f})" for s, v in summary["seconds_per_case"].items()
            ),
            "–",
        ),
        (
            "Fell back: trees not all from the clarifier model (failed node calls); elements by origin",
            f"{fb['clarifier_cases']} ({fb['clarifier_failed_nodes']}); "
            + ", ".join(f"{k} {v}" for k, v in sorted(fb["element_sources"].items())),
            "–",
        ),
        (
            "Fell back: client replies unusable (elements it left out)",
            f"{fb['client_failed_calls']} ({fb['client_omitted_elements']})",
            "–",
        ),
        ("Fell back: judge replies unusable (cases not scored)", str(fb["judge_failed_cases"]), "–"),
    ]
    if "pairwise" in summary:
        rows += [
            (
                "Fell back: answers with a note (held back, cut, failed)",
                str(fb["answer_notes_clarified"]),
                str(fb["answer_notes_at_once"]),
            ),
            ("Fell back: pairwise verdicts missing", str(fb["pair_failed_verdicts"]), "–"),
        ]
    lines = ["| | ToLC + simulated client | Answer at once |", "|---|---|---|"]
    lines += [f"| {a} | {b} | {c} |".replace("\n", " ") for a, b, c in rows]
    return "\n".join(lines)


def _judge_rows(pw: dict) -> list[tuple[str, str, str]]:
    """The table rows of the pairwise judge: its preference (when it is consistent enough) and its consistency."""
    consistency = pw["consistency"]
    if consistency is not None and consistency >= MIN_JUDGE_CONSISTENCY:
        preference = f"{pw['win']}/{pw['draw']}/{pw['loss']}, {_ci(pw['interval'])}"
        mirrored = f"{pw['loss']}/{pw['draw']}/{pw['win']}"
    else:  # a judge that flips with the order says nothing about the answers (issue 41, item 6)
        preference = mirrored = (
            f"not reported: the judge gave the same verdict in both orders for {_num(consistency)} of "
            f"the pairs, under {MIN_JUDGE_CONSISTENCY:.2f}"
        )
    return [
        (
            "Judge's preference, clarified vs. at once: win/draw/loss, win rate (draw = ½, 95% CI)",
            preference,
            mirrored,
        ),
        ("Judge self-consistency (both orders agree)", _num(consistency), "–"),
    ]


def _num(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def _ci(stats: dict) -> str:
    if stats.get("mean") is None:
        return "–"
    return f"{stats['mean']:.3f} [{stats['low']:.3f}, {stats['high']:.3f}]"
