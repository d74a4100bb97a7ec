"""The figures of a leave-source-out run (issue 39, item 1): per family and pooled, as Markdown tables and
as one JSON-ready object; paired and family-stratified bootstrap intervals.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from .evaluation import RESAMPLES, SEED, Evaluation, bootstrap
from .holdout_split import DENSE_SYSTEMS, METRICS, SYSTEMS, Split


def paired_difference(
    a: np.ndarray, b: np.ndarray, resamples: int = RESAMPLES, seed: int = SEED
) -> dict[str, float]:
    """Mean of ``a - b`` over the same queries, with a percentile bootstrap 95% interval drawn from the
    pairs (Efron & Tibshirani, 1993, ch. 13: both systems see the same resampled queries).

    >>> d = paired_difference(np.array([1.0, 1, 1, 0]), np.array([1.0, 0, 1, 0]))
    >>> d["mean"], d["lo"] <= 0.25 <= d["hi"]
    (0.25, True)
    """
    diff = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    mean, lo, hi = bootstrap(diff.reshape(-1, 1), resamples, seed)[:, 0]
    return {"mean": float(mean), "lo": float(lo), "hi": float(hi)}


@dataclass
class FamilyResult:
    """The figures of one held-out family (or of all pooled: ``split`` is None)."""

    name: str
    evaluations: dict[str, Evaluation]
    split: Split | None = None
    reranker: str = ""
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)
    #: The pooled result's families, for :meth:`macro_summary`.
    parts: list[FamilyResult] = field(default_factory=list)

    def values(self, system: str) -> np.ndarray:
        """(queries × :data:`METRICS`) of ``system``."""
        ev = self.evaluations[system]
        return ev.values[:, [ev.names.index(m) for m in METRICS]]

    def summary(self) -> dict:
        """Per system: queries, each metric's mean and interval, and R@10 minus ``sparse``'s (paired)."""
        if not hasattr(self, "_summary"):
            out = {}
            sparse = self.values("sparse")[:, R10] if "sparse" in self.evaluations else None
            for system, ev in self.evaluations.items():
                block = ev.summary()["overall"]
                entry = {"queries": block["queries"], **{m: block[m] for m in (*METRICS, "nDCG@10")}}
                if sparse is not None and system != "sparse":
                    entry["R@10 vs sparse"] = paired_difference(self.values(system)[:, R10], sparse)
                out[system] = entry
            self._summary = out
        return self._summary

    def macro_summary(self) -> dict:
        """The pooled result's systems as the mean of the family means (each family weighted once), with
        intervals of a bootstrap stratified by family (:func:`macro_bootstrap`)."""
        out: dict = {}
        for system in self.evaluations:
            stats = macro_bootstrap([p.values(system) for p in self.parts])
            entry: dict = {"families": len(self.parts)}
            for j, m in enumerate(METRICS):
                entry[m] = {"mean": float(stats[0, j]), "lo": float(stats[1, j]), "hi": float(stats[2, j])}
            if system != "sparse" and "sparse" in self.evaluations:
                diff = [
                    (p.values(system)[:, R10] - p.values("sparse")[:, R10]).reshape(-1, 1) for p in self.parts
                ]
                d = macro_bootstrap(diff)[:, 0]
                entry["R@10 vs sparse"] = {"mean": float(d[0]), "lo": float(d[1]), "hi": float(d[2])}
            out[system] = entry
        return out


R10 = METRICS.index("R@10")


def macro_bootstrap(blocks: Sequence[np.ndarray], resamples: int = RESAMPLES, seed: int = SEED) -> np.ndarray:
    """The mean over ``blocks`` (each queries × metrics) of their column means, and its percentile 95 %
    interval from a bootstrap that resamples each block's queries within the block (a stratified
    bootstrap, Efron & Tibshirani, 1993, ch. 13): an array (3, metrics) of mean, low, high.

    >>> macro_bootstrap([np.ones((3, 1)), np.zeros((50, 1))]).tolist()
    [[0.5], [0.5], [0.5]]
    """
    rng = np.random.default_rng(seed)
    width = blocks[0].shape[1]
    point = np.zeros(width)
    means = np.zeros((resamples, width))
    for block in blocks:
        block = np.asarray(block, dtype=np.float64)
        point += block.mean(axis=0)
        # 100 resamples at a time: the index matrix of a block of 3,000 queries stays small
        for start in range(0, resamples, 100):
            idx = rng.integers(0, len(block), size=(min(100, resamples - start), len(block)))
            means[start : start + len(idx)] += block[idx].mean(axis=1)
    lo, hi = np.percentile(means / len(blocks), [2.5, 97.5], axis=0)
    return np.vstack([point / len(blocks), lo, hi])


def pooled(results: Sequence[FamilyResult]) -> FamilyResult:
    """Every held-out query of ``results`` in one evaluation per system (a system some family lacks is left out)."""
    systems = [s for s in SYSTEMS if all(s in r.evaluations for r in results)]
    evaluations = {}
    for system in systems:
        parts = [r.evaluations[system] for r in results]
        ev = Evaluation(parts[0].ks)
        for p in parts:
            ev.ids += p.ids
            ev.sources += p.sources
            ev.ranks += p.ranks
            ev.unscorable += p.unscorable
        ev.values = np.vstack([p.values for p in parts])
        evaluations[system] = ev
    ran = {s for r in results for s in r.evaluations}
    missing = [s for s in SYSTEMS if s not in systems and (s in ran or s not in DENSE_SYSTEMS)]
    notes = [f"{s}: not measurable for every family, left out of the pool" for s in missing]
    return FamilyResult("all held-out", evaluations, notes=notes, parts=list(results))


def _cell(m: Mapping) -> str:
    return f"{m['mean']:.3f} [{m['lo']:.3f}, {m['hi']:.3f}]"


def _delta(m: Mapping) -> str:
    return f"{m['mean']:+.3f} [{m['lo']:+.3f}, {m['hi']:+.3f}]"


def table(result: FamilyResult, macro: bool = False) -> str:
    """One row per system: queries, the metrics of :data:`METRICS` and R@10 minus ``sparse``'s, with CIs;
    ``macro``: the pooled result's mean over families (:meth:`FamilyResult.macro_summary`)."""
    summary = result.macro_summary() if macro else result.summary()
    count = "families" if macro else "queries"
    lines = [
        f"| system | {count} | " + " | ".join(METRICS) + " | ΔR@10 vs sparse |",
        "|" + "---|" * (len(METRICS) + 3),
    ]
    for system in SYSTEMS:
        if system not in summary and system in DENSE_SYSTEMS:
            continue
        if system not in summary:
            lines.append(f"| {system} | — | " + " | ".join("not measurable" for _ in METRICS) + " | — |")
            continue
        s = summary[system]
        delta = _delta(s["R@10 vs sparse"]) if "R@10 vs sparse" in s else "—"
        cells = " | ".join(_cell(s[m]) for m in METRICS)
        lines.append(f"| {system} | {s[count]} | {cells} | {delta} |")
    return "\n".join(lines)


def by_source(result: FamilyResult) -> list[str]:
    """R@5 and R@10 of each system per source of a family whose test questions come from several (LawBench's
    consultations and scenarios), as Markdown lines; none for a family of one source."""
    sources = sorted({q.source for q in result.split.test}) if result.split is not None else []
    if len(sources) < 2:
        return []
    lines = ["| system | source | queries | R@5 | R@10 |", "|---|---|---|---|---|"]
    for system in SYSTEMS:
        if system not in result.evaluations:
            continue
        blocks = result.evaluations[system].summary()["by_source"]
        for source in sources:
            b = blocks.get(source)
            if b is not None:
                lines.append(
                    f"| {system} | {source} | {b['queries']} | {_cell(b['R@5'])} | {_cell(b['R@10'])} |"
                )
    return ["By source:", "", *lines, ""]


def describe(result: FamilyResult) -> list[str]:
    """What a family's test and training data were, as Markdown bullet lines."""
    part = result.split
    if part is None:
        queries = result.evaluations["sparse"].values.shape[0]
        return [
            f"- every held-out question of the families above, each counted once ({queries} questions)",
            *(f"- {n}" for n in result.notes),
        ]
    unscorable = len(result.evaluations["sparse"].unscorable)
    return [
        (
            f"- test: all {part.held_rows} of the family's questions"
            if len(part.test) == part.held_rows
            else f"- test: {len(part.test)} of the family's {part.held_rows} questions (seeded sample by group)"
        )
        + (f", {unscorable} without a gold article the database knows left out" if unscorable else ""),
        f"- training rows: {len(part.training):,} ({len(part.near_rows)} rows of other families dropped as near "
        "duplicates of the family's questions)",
        f"- expansions: {sum(map(len, part.expansions.values())):,} questions kept "
        f"({part.expansions_dropped['source']:,} of the family's sources and "
        f"{part.expansions_dropped['near']:,} near duplicates dropped)",
        f"- reranker: {result.reranker}",
    ]


NOT_REFIT = (
    "Refit per held-out family from its training data only: the law prior, the reranker's citation counts "
    "and vote index, the reranker itself, and (system `expansions`) the expansions in the BM25 index with "
    "their citation prior, and (systems `fused+reranker+adapter` and `+hub`) the query adapter and the hub "
    "offsets. Not refit: the "
    "hand-written colloquial term list, the level weights and the priors' weights. The dense encoder "
    "(multilingual e5) itself is not trained by this project, so nothing of it can be held out; it is not part "
    "of these runs unless a dense index is passed in."
)


def report_markdown(results: Sequence[FamilyResult], command: str, seconds: float | None = None) -> str:
    """The whole report: the command, what was held out and refit, a table per family and the pooled one."""
    lines = [
        "# Statute retrieval, leave one source out (issue 39, item 1)",
        "",
        f"Made by `{command}`" + (f" in {seconds / 60:.1f} min" if seconds else "") + ". "
        "Each family of training questions in turn is held out: its questions (a `根据《…》第…条` citation "
        "taken out) are the test set, and every learned part is rebuilt without them and without their near "
        "duplicates (more than half of the shorter text's character 6-grams shared). 95 % percentile "
        "bootstrap intervals over questions (1,000 resamples, seed 0); ΔR@10 is paired, against `sparse`.",
        "",
        NOT_REFIT,
        "",
        "Systems: `sparse` — BM25 over article text, law name and chapter, priors and the law prior, no "
        "reranker; `sparse+reranker` — the same reranked by the refit LambdaMART model (the app without the "
        "encoder); `sparse+mined colloquial` — `sparse` with colloquial terms mined from the training rows; "
        "with an encoder, `sparse+e5` and `sparse+reranker+e5` — e5's top 300 fused by reciprocal rank with "
        "that ranking (the latter the app until session 29), `fused+reranker` — BM25 and e5 fused first, the "
        "fused top 100 reordered by a refit reranker with e5 features (the app's default in session 29), "
        "`fused+reranker+adapter` — the same with the question's e5 vector mapped by a query adapter fitted on "
        "the training rows only, the reranker trained on cross-fitted vectors (session 30); "
        "`fused+reranker+adapter+hub` — the same with e5 ranking by cosine less each article's hubness, measured "
        "against the training questions only (session 31, `lawluo/retrieval/hubness.py`); "
        "`expansions` — the old default: doc2query expansions in the index, their citation prior, no law "
        "prior, no reranker; `plain` — BM25 over the article text alone.",
        "",
    ]
    for result in results:
        if result.split is not None:
            lines += [f"## Held out: {result.name}", "", *describe(result), "", table(result), ""]
            lines += by_source(result)
            continue
        lines += [
            "## All held-out families",
            "",
            "Mean over the families, each weighted once (intervals: bootstrap resampling each family's "
            "questions within the family):",
            "",
            table(result, macro=True),
            "",
            "Every held-out question pooled, each counted once (the mix of families follows `--max-queries`):",
            "",
            *describe(result),
            "",
            table(result),
            "",
        ]
    return "\n".join(lines)


def figures(results: Sequence[FamilyResult], command: str, settings: Mapping) -> dict:
    """The figures of a run as one JSON-ready object."""
    out: dict = {"command": command, "settings": dict(settings), "metrics": list(METRICS), "families": {}}
    for r in results:
        entry: dict = {"systems": r.summary(), "notes": r.notes}
        if r.split is not None:
            entry |= {
                "test_queries": len(r.split.test),
                "family_rows": r.split.held_rows,
                "training_rows": len(r.split.training),
                "near_duplicate_rows_dropped": r.split.near_rows,
                "expansion_questions_kept": sum(map(len, r.split.expansions.values())),
                "expansion_questions_dropped": r.split.expansions_dropped,
                "reranker": r.reranker,
                "seconds": round(r.seconds, 1),
                "per_query": {
                    s: [{"id": i, "rank": k} for i, k in zip(ev.ids, ev.ranks, strict=True)]
                    for s, ev in r.evaluations.items()
                },
            }
            out["families"][r.name] = entry
        else:
            out["pooled"] = entry | {"mean_over_families": r.macro_summary()}
    out["not_refit"] = NOT_REFIT
    return out
