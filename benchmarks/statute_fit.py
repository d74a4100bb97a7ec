"""The page's bar for statutes (issue 42 item 1): what the answer without a model shows as possibly relevant.

    python benchmarks/statute_fit.py [--sets dev,fresh5] [--out docs/results/statute_fit.md]

Each question is routed by the receptionist and searched as the firm does (:func:`retrieve_statutes`, the
first 5); the answer without a model quoted the first 3 before this change, and now quotes the first 3 that
pass :mod:`lawluo.retrieval.statute_fit`. A shown statute is *gold* when the question's reference cites it
(a lower bound of relevance: a reference names one or two articles). Sets:

- **dev**: the evaluation rows of ``assets/supervision.jsonl.gz`` (``eval: true``: the LawBench dev questions
  and, since session 35, the fresh lay sets 1–4; the relevance model's own calibration rows), on which the
  bar's two settings are chosen;
- **fresh5**: the frozen fresh lay set 5 ``benchmarks/data/lay_questions.fresh5.jsonl`` (sha256 checked by
  ``retrieval_fresh.py``'s loader), never used to choose or train anything: the held-out figure. (Until
  session 34 it was fresh1, which the search now learns from.)

``--choose`` prints instead the rule that sets :data:`~lawluo.retrieval.statute_fit.MIN_RELEVANCE`: on the dev
questions, the share of the gold articles of the first 3 that each threshold of :data:`CANDIDATES` keeps (the
highest keeping ≥ 85 % is chosen).

Printed per set and system: statutes shown per question, the share of them that are gold (precision, lower
bound), the gold statutes of the first 3 still shown, the questions shown nothing, and criminal statutes shown
for a non-criminal question. 95 % intervals: percentile bootstrap over questions (1,000 resamples, seed 0).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from _common import command_line
from retrieval_fresh import fresh_set

from lawluo.agents.lawyer import REPLY_STATUTES, is_criminal_question, retrieve_statutes
from lawluo.agents.receptionist import Receptionist
from lawluo.config.settings import Settings
from lawluo.law.database import StatuteDB
from lawluo.law.names import name_key
from lawluo.retrieval.rerank_training import eval_queries
from lawluo.retrieval.statute_fit import CRIMINAL_LAW, annotate
from lawluo.retrieval.statutes import StatuteSearcher, _read_supervision

SEARCHED = 5  # the firm's STATUTES_K
#: The thresholds the bar's rule chooses from, and the share of the first 3's gold articles it must keep.
CANDIDATES = (0.05, 0.08, 0.10)
KEEP = 0.85


def questions(name: str, settings: Settings) -> list[tuple[str, frozenset]]:
    if name == "dev":
        rows = eval_queries(_read_supervision(settings.assets_dir / "supervision.jsonl.gz"))
        return [(q.question, q.gold) for q in rows]
    return [
        (r["question"], frozenset((name_key(g["law"]), g["article"]) for g in r["gold"]))
        for r in fresh_set("fresh5")  # refuses a file changed since it was frozen
    ]


def measure(items, searcher, receptionist, colloquial) -> dict[str, np.ndarray]:
    """Per question and system: shown, gold shown, gold in the first 3, criminal shown off-topic."""
    out = {
        k: []
        for k in (
            "before_shown",
            "before_gold",
            "after_shown",
            "after_gold",
            "gold_top3",
            "before_crim",
            "after_crim",
        )
    }
    for question, gold in items:
        domain = receptionist.table[receptionist.classify(question).domain]
        hits = retrieve_statutes(searcher, domain, question, SEARCHED)
        criminal = is_criminal_question(question, domain.id)
        hits = annotate(hits, question, criminal, colloquial)
        before = hits[:REPLY_STATUTES]
        after = [h for h in hits if h["fit"]["passes"]][:REPLY_STATUTES]

        gold_before = sum((name_key(h["law"]), h["article"]) in gold for h in before)
        out["before_shown"].append(len(before))
        out["before_gold"].append(gold_before)
        out["after_shown"].append(len(after))
        out["after_gold"].append(sum((name_key(h["law"]), h["article"]) in gold for h in after))
        out["gold_top3"].append(gold_before)
        for system, shown in (("before", before), ("after", after)):
            off = sum(bool(CRIMINAL_LAW.search(h["law"])) for h in shown) if not criminal else 0
            out[f"{system}_crim"].append(off)
    return {k: np.array(v, dtype=float) for k, v in out.items()}


def interval(stat, arrays, n_boot=1000, seed=0) -> str:
    rng = np.random.default_rng(seed)
    n = len(next(iter(arrays.values())))
    point = stat({k: v for k, v in arrays.items()})
    boots = []
    for _ in range(n_boot):
        i = rng.integers(0, n, n)
        boots.append(stat({k: v[i] for k, v in arrays.items()}))
    lo, hi = np.nanpercentile(boots, [2.5, 97.5])
    return f"{point:.3f} [{lo:.3f}, {hi:.3f}]"


def table(name: str, m: dict[str, np.ndarray]) -> list[str]:
    n = len(m["before_shown"])
    lines = [
        f"### {name} ({n} questions)",
        "",
        "| system | shown / question | gold share of shown | gold statutes shown | questions shown nothing | criminal statutes for a non-criminal question |",
        "|---|---|---|---|---|---|",
    ]
    for system in ("before", "after"):
        shown, gold = m[f"{system}_shown"], m[f"{system}_gold"]
        kept = f"{int(gold.sum())} of {int(m['gold_top3'].sum())}"
        lines.append(
            f"| {system} | {shown.mean():.2f} | "
            + interval(lambda a, s=system: a[f"{s}_gold"].sum() / max(a[f"{s}_shown"].sum(), 1), m)
            + f" | {kept} | {int((shown == 0).sum())} | {int(m[f'{system}_crim'].sum())} |"
        )
    return lines + [""]


def choose(searcher, receptionist, settings) -> list[str]:
    """The rule of MIN_RELEVANCE on the dev questions: gold of the first 3 kept at each candidate threshold."""
    from lawluo.retrieval.statute_fit import statute_fit

    kept = dict.fromkeys(CANDIDATES, 0)
    shown = dict.fromkeys(CANDIDATES, 0)
    gold_top3 = 0
    for question, gold in questions("dev", settings):
        domain = receptionist.table[receptionist.classify(question).domain]
        hits = retrieve_statutes(searcher, domain, question, SEARCHED)
        criminal = is_criminal_question(question, domain.id)
        gold_top3 += sum((name_key(h["law"]), h["article"]) in gold for h in hits[:REPLY_STATUTES])
        for t in CANDIDATES:
            after = [h for h in hits if statute_fit(h, question, criminal, searcher.colloquial, t).passes]
            after = after[:REPLY_STATUTES]
            kept[t] += sum((name_key(h["law"]), h["article"]) in gold for h in after)
            shown[t] += len(after)
    lines = [
        f"## Choosing the bar on the dev questions (keep ≥ {KEEP:.0%} of the {gold_top3} gold articles of the first 3)",
        "",
        "| threshold | gold kept | share | statutes shown |",
        "|---|---|---|---|",
    ]
    lines += [f"| {t:.2f} | {kept[t]} | {kept[t] / max(gold_top3, 1):.3f} | {shown[t]} |" for t in CANDIDATES]
    chosen = max((t for t in CANDIDATES if kept[t] >= KEEP * gold_top3), default=min(CANDIDATES))
    return [*lines, "", f"Chosen: {chosen:.2f}.", ""]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sets", default="dev,fresh5")
    parser.add_argument("--out", type=Path)
    parser.add_argument(
        "--choose", action="store_true", help="print the rule choosing the bar on the dev set"
    )
    args = parser.parse_args()
    settings = Settings()
    searcher = StatuteSearcher.from_settings(settings, StatuteDB(settings.statutes_path))
    receptionist = Receptionist.load(settings, searcher=searcher)
    lines = [
        "# The page's bar for statutes: what the answer without a model shows (issue 42 item 1)",
        "",
        f"Made by `{command_line()}`, no model. 'before': the first 3 of the firm's search, as the answer "
        "without a model quoted them; 'after': the first 3 that pass `lawluo/retrieval/statute_fit.py`. "
        "Gold: an article the question's reference cites (a lower bound of relevance). Intervals: 95 % "
        "bootstrap over questions (1,000 resamples, seed 0).",
        "",
    ]
    if args.choose:
        print("\n".join(choose(searcher, receptionist, settings)))
        return
    for name in args.sets.split(","):
        t = time.perf_counter()
        m = measure(questions(name, settings), searcher, receptionist, searcher.colloquial)
        lines += table(name, m)
        print(f"{name}: {time.perf_counter() - t:.0f} s", flush=True)
    text = "\n".join(lines)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
