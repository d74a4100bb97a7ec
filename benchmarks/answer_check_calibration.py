"""How the lawyer's answer check (lawluo/agents/answer_check.py) treats real answers and a weak model's junk.

    python benchmarks/answer_check_calibration.py [--limit N]

Each real answer is checked against the prompt the firm sends for its question (the receptionist's domain,
that domain's role prompt, the statutes retrieved for the question; no tree, so no marked facts):

- LawBench consultation set (``lawbench/consult.dev.jsonl``): the lawyers' reference answers and the 14
  systems' answers to the same questions (``consult_predictions.dev.jsonl``);
- lawyer-llama's GPT-4 answers (``lawyer_llama/zixun_gpt4.dev.jsonl``).

Then junk made from the same prompts, as a weak base model answers (issue 21 saw Gemma 3 270M repeat
``【客户的问题】（以下是客户原话…``): the whole turn prompt echoed, its first half, the question twice, the
role prompt echoed; and, as good answers that quote much, each reference answer after a one-line
restatement of the question.

Prints, per set: answers, held back per reason, and the percentiles of the echo ratio, the CJK share and the
share of repeated sentences (``loop``).

Measured (2 shared CPU cores, full sets; ECHO_NGRAM 6, ECHO_RATIO 0.5, MIN_CJK_SHARE 0.2): see the
README's consultation section for the figures of the last run.
"""

from __future__ import annotations

import argparse
from collections import Counter

from _common import DATA, percentile, read_jsonl

from lawluo.agents.answer_check import ECHO_RATIO, LOOP_RATIO, check_answer, echo_ratio, repeated_share
from lawluo.agents.lawyer import Brief, _statutes_block, lookup_notices, retrieve_statutes
from lawluo.config import load_settings
from lawluo.firm import Firm
from lawluo.firm.firm import STATUTES_K
from lawluo.prompts.untrusted import quote
from lawluo.text import cjk_share


def briefs(firm: Firm, questions: dict[str, str]) -> dict[str, Brief]:
    out = {}
    for qid, question in questions.items():
        state = firm.new()
        firm.receive(state, question)
        domain = firm.domains[state.domain]
        statutes = retrieve_statutes(firm.statute_searcher, domain, question, STATUTES_K)
        notices = lookup_notices(firm.statute_searcher, question)
        out[qid] = Brief(domain, question, statutes=statutes, notices=notices)
    return out


def measure(firm: Firm, name: str, rows: list[tuple[Brief, str]]) -> Counter:
    held, ratios, shares, loops = Counter(), [], [], []
    examples: dict[str, str] = {}
    for brief, answer in rows:
        verdict = firm.lawyer.held_back(brief, answer)
        messages = firm.lawyer.messages(brief)
        own = "\n".join(m["content"] for m in messages)
        ratios.append(echo_ratio(answer, own, quote(_statutes_block(brief)))[0])
        shares.append(cjk_share(answer))
        loops.append(repeated_share(answer))
        if verdict is not None:
            held[verdict.reason] += 1
            examples.setdefault(verdict.reason, f"{verdict.detail}: {' '.join(answer.split())[:60]}")
    pct = " ".join(f"p{q}={percentile(ratios, q):.2f}" for q in (50, 90, 99, 100))
    low = " ".join(f"p{q}={percentile(shares, q):.2f}" for q in (0, 1, 10))
    looped = " ".join(f"p{q}={percentile(loops, q):.2f}" for q in (50, 90, 99, 100))
    kept = ", ".join(f"{r} {n}" for r, n in held.most_common()) or "none"
    print(f"{name}: {len(rows)} answers; held back: {kept}")
    print(f"    echo ratio {pct}; CJK share {low}; repeated sentences {looped}")
    for reason, text in examples.items():
        print(f"    e.g. {reason}: {text}")
    return held + Counter(answers=len(rows))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=0, help="first N questions of each set (0: all)")
    args = parser.parse_args(argv)
    cut = (lambda rows: rows[: args.limit]) if args.limit else (lambda rows: rows)

    firm = Firm.from_settings(load_settings(environ={}))
    consult = cut(read_jsonl(DATA / "lawbench" / "consult.dev.jsonl"))
    lb = briefs(firm, {r["id"]: r["question"] for r in consult})
    predictions = [
        r for r in read_jsonl(DATA / "lawbench" / "consult_predictions.dev.jsonl") if r["id"] in lb
    ]
    zixun = cut(read_jsonl(DATA / "lawyer_llama" / "zixun_gpt4.dev.jsonl"))
    zx = briefs(firm, {r["id"]: r["query"] for r in zixun})

    good = measure(firm, "LawBench reference answers", [(lb[r["id"]], r["reference"]) for r in consult])
    good += measure(firm, "lawyer-llama GPT-4 answers", [(zx[r["id"]], r["response"]) for r in zixun])
    by_system: dict[str, list] = {}
    for r in predictions:
        by_system.setdefault(r["system"], []).append((lb[r["id"]], r["answer"] or ""))
    systems = Counter()
    for system, rows in sorted(by_system.items()):
        systems += measure(firm, f"LawBench {system}", rows)
    good += measure(
        firm,
        "reference answers after restating the question",
        [(lb[r["id"]], f"您的问题是：{r['question']}\n{r['reference']}") for r in consult],
    )
    turn = {qid: firm.lawyer.messages(b)[-1]["content"] for qid, b in lb.items()}
    system = {qid: firm.lawyer.messages(b)[0]["content"] for qid, b in lb.items()}
    junk = measure(firm, "junk: the turn prompt echoed", [(b, turn[q]) for q, b in lb.items()])
    junk += measure(firm, "junk: its first half", [(b, turn[q][: len(turn[q]) // 2]) for q, b in lb.items()])
    junk += measure(
        firm, "junk: the question twice", [(b, b.question + "\n" + b.question) for b in lb.values()]
    )
    junk += measure(firm, "junk: the role prompt echoed", [(b, system[q]) for q, b in lb.items()])
    repeats = Counter(answers=0)  # later lawyer turns of real multi-turn consultations vs their earlier ones
    repeated = Counter(answers=0)  # the same turns with the first answer said again
    for r in read_jsonl(DATA / "lawyer_llama" / "legal_counsel_multi_turn_with_article_v2.jsonl"):
        answers = [t[len("[律师] ") :] for t in r["history"] if t.startswith("[律师]")]
        statutes = "\n".join(r["laws"])
        for i in range(1, len(answers)):
            for counts, text in ((repeats, answers[i]), (repeated, answers[0])):
                counts["answers"] += 1
                held = check_answer(
                    text, "", r["query"], "\n".join([statutes, *answers[:i]]), None, answers[:i]
                )
                if held is not None:
                    counts[held.reason] += 1
    print(f"later turns of lawyer-llama's multi-turn consultations: {repeats}")
    print(f"the same turns with the first answer said again: {repeated}")
    for name, counts in (("reference and GPT-4 answers", good), ("14 systems", systems), ("junk", junk)):
        n = counts.pop("answers")
        print(f"TOTAL {name}: {sum(counts.values())} of {n} held back ({dict(counts) or 'none'})")
    print(f"(echo held at ratio >= {ECHO_RATIO}, loop at repeated sentences >= {LOOP_RATIO})")


if __name__ == "__main__":
    main()
