"""Statute and case search on the fresh lay questions (issue 39): everyday questions the project never saw.

    python benchmarks/retrieval_fresh.py [--out docs/results/retrieval_fresh.md]

The set is ``benchmarks/data/lay_questions.fresh1.jsonl`` (160 questions, 10 per domain, written and frozen
before any retrieval change; its sha256 is checked before anything runs, and nothing may be tuned on it).
A question's gold is every article its label names (the strict rule: those articles, no other version or
number); R@k counts a question whose gold has an article among the first k.

Systems (no language model):

- **app**: the shipped searcher as the app runs it (BM25 over article text + doc2query expansions, priors,
  colloquial terms, the learned reranker);
- **app, no reranker**;
- **no expansions, no reranker**: the same searcher over an index of the articles without the expansions
  (and without their citation prior) — the change issue 39 measured on another lay set;
- **plain BM25**: BM25 over the article texts alone.

Also printed, per system: how often the first 3 hold no gold article (what an honest page must then say),
and the p50 time of a query. **Cases**: for the 48 questions labelled with the case type (案由) that would
fit, the share of the first 3 similar cases whose cause fits it, and how often none of them does. A cause
fits when, with 罪/纠纷/责任 stripped, it equals the label or one contains the other, or both fall under one
of the parents in :data:`CAUSE_PARENTS` (劳动争议 covers 劳动合同/追索劳动报酬/工伤保险待遇 …).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shlex
import statistics
import sys
import tempfile
import time
from pathlib import Path

from _common import ROOT

from lawluo.config import Settings
from lawluo.law import StatuteDB
from lawluo.retrieval.bm25 import BM25Index
from lawluo.retrieval.cases import CaseSearcher
from lawluo.retrieval.evaluation import GoldQuery, evaluate, markdown_table
from lawluo.retrieval.statutes import StatuteSearcher, statute_documents

FRESH = ROOT / "benchmarks" / "data" / "lay_questions.fresh1.jsonl"
FROZEN_SHA256 = "f38a645cb2e9635d13d9d0dd4fb1d1542a04e9a78715f38679e43ce1001444d1"
DEPTH = 100
#: Causes of action that group narrower ones (the parent's cases fit a child's question and the reverse).
CAUSE_PARENTS = {
    "劳动争议": ("劳动合同", "追索劳动报酬", "工伤保险待遇", "劳动"),
    "机动车交通事故": ("交通事故", "交通肇事"),
    "借款合同": ("民间借贷", "金融借款合同"),
}


def fresh_set() -> list[dict]:
    data = FRESH.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != FROZEN_SHA256:
        raise SystemExit(f"{FRESH} changed since it was frozen (sha256 {digest[:12]}…): refusing to score")
    return [json.loads(line) for line in data.decode("utf-8").splitlines() if line.strip()]


def _bare(cause: str) -> str:
    for word in ("罪", "纠纷", "责任"):
        cause = cause.replace(word, "")
    return cause.strip()


def cause_fits(cause: str, label: str) -> bool:
    """Whether a case of ``cause`` fits a question labelled ``label``.

    >>> cause_fits("盗窃", "盗窃罪"), cause_fits("劳动争议", "追索劳动报酬纠纷"), cause_fits("诈骗", "盗窃罪")
    (True, True, False)
    """
    a, b = _bare(cause), _bare(label)
    if not a or not b:
        return False
    if a == b or a in b or b in a:
        return True
    for parent, children in CAUSE_PARENTS.items():
        family = (parent, *children)
        if any(x in a for x in family) and any(x in b for x in family):
            return True
    return False


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="also write the report (Markdown, with this command) here")
    args = parser.parse_args()
    rows = fresh_set()
    settings = Settings.load(environ={})
    db = StatuteDB(settings.statutes_path)
    queries = []
    for row in rows:
        gold = set()
        for g in row["gold"]:
            key = db.resolve(g["law"]).key
            if key is not None and db.find_article(key, g["article"]) is not None:
                gold.add((key, g["article"]))
        queries.append(GoldQuery(row["id"], row["question"], frozenset(gold), row["domain"]))
    app = StatuteSearcher.from_settings(settings, db)
    reranker = app.reranker
    t = time.perf_counter()
    bare_bm25 = BM25Index.build(statute_documents(db, {}))
    with tempfile.TemporaryDirectory() as tmp:
        no_expansions = StatuteSearcher(
            db,
            Path(tmp),
            colloquial_path=settings.assets_dir / "colloquial_terms.tsv",
            expansions={},
            bm25=bare_bm25,
        )
    plain = BM25Index.build([a.text for a in db.articles])
    print(f"indexes without expansions built in {time.perf_counter() - t:.0f} s", file=sys.stderr)

    def ranked(searcher: StatuteSearcher, rerank) -> callable:
        def rank(q: str) -> list[tuple[str, int]]:
            searcher.reranker = rerank
            return [(h.article.law.key, h.article.number) for h in searcher.search(q, DEPTH)]

        return rank

    def plain_rank(q: str) -> list[tuple[str, int]]:
        return [(db.articles[i].law.key, db.articles[i].number) for i, _ in plain.search(q, DEPTH)]

    systems = [
        ("app (as shipped)", ranked(app, reranker)),
        ("app, no reranker", ranked(app, None)),
        ("no expansions, no reranker", ranked(no_expansions, None)),
        ("plain BM25 (article text)", plain_rank),
    ]
    command = "python benchmarks/" + " ".join(shlex.quote(a) for a in ["retrieval_fresh.py", *sys.argv[1:]])
    lines = [
        "# Statute and case search on the fresh lay questions (issue 39)",
        "",
        f"Made by `{command}` on {len(rows)} questions (sha256 {FROZEN_SHA256[:12]}…, frozen before any "
        "retrieval change), no model; 95 % bootstrap intervals over questions (1,000 resamples, seed 0).",
        "",
        "| system | R@1 | R@5 | R@10 | R@100 | MRR@10 | top 3 without gold | p50 ms |",
        "|---|---|---|---|---|---|---|---|",
    ]
    per_domain = {}
    for name, rank in systems:
        times = []

        def timed(q: str, rank=rank, times=times) -> list[tuple[str, int]]:
            start = time.perf_counter()
            out = rank(q)
            times.append((time.perf_counter() - start) * 1000)
            return out

        result = evaluate(queries, timed)
        summary = result.summary()
        block = summary["overall"]
        no_gold_top3 = sum(r is None or r > 3 for r in result.ranks) / len(result.ranks)

        def cell(metric: str, block=block) -> str:
            m = block[metric]
            return f"{m['mean']:.3f} [{m['lo']:.3f}, {m['hi']:.3f}]"

        lines.append(
            f"| {name} | {cell('R@1')} | {cell('R@5')} | {cell('R@10')} | {cell('R@100')} | {cell('MRR@10')} "
            f"| {no_gold_top3:.3f} | {statistics.median(times):.1f} |"
        )
        per_domain[name] = (summary, result.names)
    lines += ["", "## By domain (app as shipped)", "", markdown_table(*per_domain["app (as shipped)"]), ""]

    cases = CaseSearcher.from_settings(settings)
    labelled = [r for r in rows if r.get("case_type")]
    fits, none_fit = 0, 0
    for row in labelled:
        top = cases.search(row["question"], 3)
        ok = [cause_fits(h.case.cause or "", row["case_type"]) for h in top]
        fits += sum(ok)
        none_fit += not any(ok)
    lines += [
        "## Similar cases",
        "",
        f"{len(labelled)} questions labelled with a case type: **{fits / (3 * len(labelled)):.3f}** of the first 3 "
        f"similar cases fit ({fits} of {3 * len(labelled)}); for **{none_fit}** questions none of the 3 fits "
        "(target: ≥ 0.70 fitting, and 'none fits' said when none does).",
        "",
    ]
    text = "\n".join(lines)
    print(text)
    if args.out:
        from lawluo.files import write_atomically

        write_atomically(args.out, text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
