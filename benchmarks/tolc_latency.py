"""How long the clarification tree and a whole consultation turn take, apart from the models.

    python benchmarks/tolc_latency.py [--latency 0.5] [--turns 30]

1. Tree wall time: the clarifier is the ``openai`` backend talking to the fake OpenAI-compatible server
   (tests/fakes/openai_server.py), which waits ``latency`` s per call; an H=3, K=3 tree needs 1 + 3
   calls in two dependent rounds. Target: ≤ 2.3 × latency (not 4 × latency sequentially).
2. Pipeline overhead per turn: a full turn — receptionist, retrieval, ToLC (H=3, K=3, 4 model calls),
   marks, the lawyer's streamed answer, citation checking, the boss's score — with in-process models
   that answer instantly, so the time measured is everything but model time. Questions are the first
   ``--turns`` of LawBench consult.dev. Target: p50 ≤ 50 ms.
3. Rebuild after an override (session 18): no model, the tree (H=3, K=3) of each of those questions marked
   on its first element, then the domain changed to another (``Firm.reclarify``):
   the tree built again from the chosen domain's material, the marks that still apply kept. Measured:
   p50 of the rebuild beside p50 of the first build of the same trees.
4. Rebuild after an issue choice (session 19): the same trees after the override, marked again, the issue
   menu drawn (``Firm.issue_menu``) and its second issue chosen (``Firm.reissue``). Measured: p50 of drawing
   the menu and of the rebuild.
"""

from __future__ import annotations

import argparse
import json
import statistics
import threading
import time

from _common import DATA, percentile, read_jsonl

from lawluo.config import load_settings
from lawluo.firm import Firm
from lawluo.llm import LanguageModels
from lawluo.llm.openai_backend import OpenAIBackend
from lawluo.llm.options import OpenAIOptions
from lawluo.retrieval.cases import CaseSearcher
from lawluo.tolc import TreeBuilder
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.scripted_backend import ScriptedBackend

ANSWER = (
    "根据《中华人民共和国劳动合同法》第八十二条规定：“用人单位自用工之日起超过一个月不满一年未与劳动者订立书面劳动合同的，"
    "应当向劳动者每月支付二倍的工资。”您可以要求公司支付未签合同期间的二倍工资，并保留工资流水、考勤记录等证据。"
)


def elements_reply(k: int):
    counter, lock = [0], threading.Lock()

    def reply(_request) -> str:
        with lock:
            counter[0] += 1
            n = counter[0]
        elements = [{"statement": f"第{n}组要素{i}是否成立？", "case_ids": []} for i in range(k)]
        return json.dumps({"elements": elements}, ensure_ascii=False)

    return reply


def tree_wall(latency: float, repeats: int, question: str) -> list[float]:
    settings = load_settings(environ={})
    cases = CaseSearcher.from_settings(settings)
    walls = []
    with FakeOpenAIServer(latency=latency) as server:
        server.responder = elements_reply(3)
        options = OpenAIOptions(model="fake-model", base_url=server.url, max_retries=0, concurrency=8)
        builder = TreeBuilder(
            lambda q, k: [h.case for h in cases.search(q, k)], OpenAIBackend(options, "clarifier", "x")
        )
        builder.build(question)  # warm the client and its connections
        for _ in range(repeats):
            start = time.perf_counter()
            tree = builder.build(question)
            walls.append(time.perf_counter() - start)
            assert len(tree.elements) == 12, len(tree.elements)
    return walls


def instant_models() -> LanguageModels:
    scripted = {
        "clarifier": ScriptedBackend(responder=lambda m: elements_reply(3)(None)),
        "lawyer": ScriptedBackend(responder=lambda m: ANSWER),
        "boss": ScriptedBackend(responder=lambda m: '{"score": 7, "reason": "有法条依据"}'),
        "secretary": ScriptedBackend(responder=lambda m: "{}"),
        "judge": ScriptedBackend(responder=lambda m: "{}"),
    }
    return LanguageModels(
        load_settings(environ={}).models, factory=lambda backend, options, role, *a: scripted[role]
    )


def turn_overhead(questions: list[str]) -> list[float]:
    firm = Firm.from_settings(load_settings(environ={}), models=instant_models())
    times = []
    for i, question in enumerate([questions[0], *questions]):
        start = time.perf_counter()
        state = firm.new()
        firm.receive(state, question)
        for _ in firm.clarify(state):
            pass
        firm.mark(state, "1", "yes")
        firm.mark(state, "2", "no")
        "".join(firm.answer(state))
        elapsed = time.perf_counter() - start
        assert state.turns[-1].citations and state.turns[-1].score
        if i:  # the first turn warms caches (jieba, the checker's per-law texts)
            times.append(elapsed)
    return times


def timed(steps) -> float:
    """Seconds to run the generator ``steps`` (a tree build or rebuild) to its end."""
    start = time.perf_counter()
    for _ in steps:
        pass
    return time.perf_counter() - start


def rebuild_times(questions: list[str]) -> tuple[list[float], list[float], list[float], list[float]]:
    """Seconds, no model, per question (the first, run twice, warms caches): the first build of its tree,
    the rebuild after an override (``Firm.reclarify``) of that tree marked on its first element, the issue
    menu of the same tree marked again, and the rebuild after choosing its second issue (``Firm.reissue``)."""
    firm = Firm.from_settings(load_settings(environ={}))
    builds, overrides, menus, reissues = [], [], [], []
    for i, question in enumerate([questions[0], *questions]):
        state = firm.new()
        firm.receive(state, question)
        built = timed(firm.clarify(state))
        firm.mark(state, "1", "yes")
        other = "contract" if state.domain != "contract" else "labor"
        overridden = timed(firm.reclarify(state, other))
        assert state.domain == other and state.tree.complete
        firm.mark(state, "1", "yes")
        start = time.perf_counter()
        issues, current = firm.issue_menu(state)
        drawn = time.perf_counter() - start
        chosen = next(issue.id for issue in issues if issue.id != current)
        reissued = timed(firm.reissue(state, chosen))
        assert state.tree.issue == chosen and state.tree.complete
        if i:
            builds.append(built)
            overrides.append(overridden)
            menus.append(drawn)
            reissues.append(reissued)
    return builds, overrides, menus, reissues


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--latency", type=float, default=0.5)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--turns", type=int, default=30)
    args = parser.parse_args()
    questions = [r["question"] for r in read_jsonl(DATA / "lawbench" / "consult.dev.jsonl")][: args.turns]

    walls = tree_wall(args.latency, args.repeats, questions[0])
    median = statistics.median(walls)
    print(
        f"ToLC H=3 K=3 (4 clarifier calls, server latency L={args.latency:g} s), {args.repeats} builds: "
        f"median {median:.3f} s = {median / args.latency:.2f} L, max {max(walls) / args.latency:.2f} L "
        f"(target <= 2.3 L) {'PASS' if median <= 2.3 * args.latency else 'FAIL'}"
    )

    times = turn_overhead(questions)
    p50 = percentile(times, 50) * 1000
    print(
        f"pipeline overhead per turn (route, retrieve, ToLC H=3 K=3, answer, check, score; instant models), "
        f"{len(times)} turns: p50 {p50:.1f} ms, p90 {percentile(times, 90) * 1000:.1f} ms "
        f"(target p50 <= 50 ms) {'PASS' if p50 <= 50 else 'FAIL'}"
    )

    builds, rebuilds, menus, reissues = rebuild_times(questions)
    print(
        f"tree rebuilt after an override (no model, H=3 K=3, {len(rebuilds)} questions): p50 "
        f"{percentile(rebuilds, 50) * 1000:.1f} ms, p90 {percentile(rebuilds, 90) * 1000:.1f} ms; the first "
        f"build of the same trees p50 {percentile(builds, 50) * 1000:.1f} ms"
    )
    print(
        f"issue menu (no model, {len(menus)} questions): drawn p50 {percentile(menus, 50) * 1000:.1f} ms; the "
        f"tree rebuilt after an issue choice p50 {percentile(reissues, 50) * 1000:.1f} ms, "
        f"p90 {percentile(reissues, 90) * 1000:.1f} ms"
    )


if __name__ == "__main__":
    main()
