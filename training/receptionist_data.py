"""The receptionist's weakly labelled training questions (see :mod:`training.train_receptionist`): the
settings of a run (:class:`ReceptionistConfig`), the LawBench dev questions (:func:`dev_set`) and the weak
labels of every other question of ``../shared/data`` (:func:`build_weak_set`).

Below both :mod:`training.data` (whose ``receptionist_rows`` reads them) and the training script.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from lawluo.law.weak_labels import LAW_WEIGHT
from training.arguments import LawLuoArguments, SharedDataArguments
from training.shared_data import SOURCES, check_sources, consultations, dedupe_key, domain_questions

if TYPE_CHECKING:
    from lawluo.domains import Domains

ROOT = Path(__file__).resolve().parents[1]

CASE_PREFIX = "请对以下案件做出分析并给出可能的判决："  # DISC case analyses: the facts follow


@dataclass
class ReceptionistConfig(SharedDataArguments, LawLuoArguments):
    """Settings of one training run (every field is a command-line flag): ``--data_dir``,
    ``--lawluo_config`` (whose statute database the weak labels check citations against) and these."""

    output_dir: str = field(
        default=str(ROOT / "assets" / "receptionist"), metadata={"help": "Where the asset is written."}
    )
    sources: list[str] = field(
        default_factory=lambda: list(SOURCES),
        metadata={"help": f"Weak-label sources (training/data.py): {', '.join(SOURCES)}."},
    )
    max_per_domain: int | None = field(
        default=None, metadata={"help": "Keep at most this many weak examples per domain (a quick run)."}
    )
    law_weight: float = field(
        default=LAW_WEIGHT,
        metadata={
            "help": "Weight of the cited laws' votes in a weak label (0: the question's keywords alone)."
        },
    )
    min_keyword_support: int = field(
        default=5, metadata={"help": "Drop rule keywords found in fewer questions of the sources."}
    )
    ngram_max: int = field(default=3, metadata={"help": "Character n-grams of length 1..ngram_max."})
    min_df: int = field(default=2, metadata={"help": "Drop n-grams found in fewer training questions."})
    c: float = field(default=0.3, metadata={"help": "SVM C when not tuning."})
    dev_weight: float = field(default=3.0, metadata={"help": "Weight of a dev question when not tuning."})
    keyword_scale: float = field(
        default=1.0, metadata={"help": "Scale of the keyword votes when not tuning."}
    )
    tune: bool = field(default=True, metadata={"help": "Choose c, dev_weight, keyword_scale by CV on dev."})
    c_grid: list[float] = field(default_factory=lambda: [0.1, 0.3, 1.0], metadata={"help": "Values of C."})
    dev_weight_grid: list[float] = field(
        default_factory=lambda: [3.0, 10.0], metadata={"help": "Dev weights."}
    )
    keyword_scale_grid: list[float] = field(
        default_factory=lambda: [0.3, 1.0], metadata={"help": "Keyword scales."}
    )
    law_vote: bool = field(
        default=True,
        metadata={"help": "Learn the law→domain map from searched weak questions and tune its weight."},
    )
    vote_max_per_domain: int = field(
        default=300, metadata={"help": "Weak questions per domain searched to learn the law→domain map."}
    )
    vote_map_k: int = field(default=10, metadata={"help": "Retrieved articles counted per map question."})
    vote_smoothing: float = field(default=2.0, metadata={"help": "Pseudo-counts of the map's back-off."})
    vote_k_grid: list[int] = field(
        default_factory=lambda: [5, 10, 20], metadata={"help": "Retrieved articles that vote (chosen by CV)."}
    )
    vote_weight_grid: list[float] = field(
        default_factory=lambda: [0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0],
        metadata={"help": "Weights of the law vote (chosen by CV; 0 = the linear model alone)."},
    )
    folds: int = field(default=4, metadata={"help": "Folds of the CV on dev (tuning and temperature)."})
    seed: int = field(default=0, metadata={"help": "Seed of the folds, the SVM and the per-domain sampling."})

    def __post_init__(self) -> None:
        check_sources(self.sources)
        if self.folds < 2:
            raise ValueError("folds must be at least 2")
        if self.ngram_max < 1 or self.min_df < 1:
            raise ValueError("ngram_max and min_df must be at least 1")
        if self.vote_max_per_domain < 1 or self.vote_map_k < 1 or min(self.vote_k_grid, default=0) < 1:
            raise ValueError("vote_max_per_domain, vote_map_k and every vote_k_grid value must be at least 1")
        if not self.vote_weight_grid or min(self.vote_weight_grid) < 0 or self.vote_smoothing < 0:
            raise ValueError("vote_weight_grid needs values ≥ 0, and vote_smoothing must be ≥ 0")


@dataclass
class WeakSet:
    """Weakly labelled questions (prepared text, domain id, source) and what building them counted."""

    texts: list[str]
    labels: list[str]
    sources: list[str]
    keywords: list[tuple[str, str, float]]
    counts: dict[str, Counter]  # per source: records, duplicates, dev_overlap, ambiguous, kept, by_law, …
    by_domain: dict[str, Counter]  # per domain: source → kept


def dev_set(data_dir: Path, domains: Domains) -> tuple[list[str], list[str], list[str]]:
    """The LawBench dev questions: (ids, questions, domain ids of ``domains``)."""
    rows = domain_questions(data_dir)
    return [r[0] for r in rows], [r[1] for r in rows], [domains.from_lawbench(r[2]).id for r in rows]


def _overlaps(key: str, dev_keys: set[str], long_dev_keys: list[str]) -> bool:
    """Same text as a dev question, or (10+ characters) one containing the other."""
    if key in dev_keys:
        return True
    return len(key) >= 10 and any(k in key or key in k for k in long_dev_keys)


def build_weak_set(cfg: ReceptionistConfig, exclude: list[str]) -> WeakSet:
    """Weak labels for every question of ``cfg.sources`` that is not (close to) one of ``exclude``."""
    from lawluo.agents.receptionist import prepare
    from lawluo.law import StatuteDB
    from lawluo.law import weak_labels as wl

    db = StatuteDB(cfg.statutes_path())
    records = list(consultations(Path(cfg.data_dir), cfg.sources))
    rules = wl.load_rules(cfg.settings().domains_file)
    questions = [prepare(r.question) for r in records]
    support = Counter()
    for word, _, _ in rules.keywords:
        w = prepare(word)
        support[word] = sum(w in q for q in questions)
    rules = wl.Rules(
        rules.laws,
        rules.civil_code,
        tuple(k for k in rules.keywords if support[k[0]] >= cfg.min_keyword_support),
    )
    dev_keys = {dedupe_key(q) for q in exclude}
    long_dev_keys = [k for k in dev_keys if len(k) >= 10]
    seen: set[str] = set()
    counts: dict[str, Counter] = {s: Counter() for s in cfg.sources}
    kept: list[tuple[str, str, str]] = []
    for rec in records:
        c = counts[rec.source]
        c["records"] += 1
        question = rec.question.removeprefix(CASE_PREFIX).strip()
        key = dedupe_key(question)
        if not key:
            c["empty"] += 1
            continue
        if key in seen:
            c["duplicates"] += 1
            continue
        seen.add(key)
        if _overlaps(key, dev_keys, long_dev_keys):
            c["dev_overlap"] += 1
            continue
        label = wl.weak_label(question, rec.answer, rec.laws, rules, db, law_weight=cfg.law_weight)
        if label.domain is None:
            c["ambiguous"] += 1
            continue
        c["kept"] += 1
        c[f"by_{label.by.replace('+', '_')}"] += 1
        kept.append((prepare(question), label.domain, rec.source))
    if cfg.max_per_domain:
        rng = random.Random(cfg.seed)
        by: dict[str, list] = {}
        for row in kept:
            by.setdefault(row[1], []).append(row)
        kept = [r for rows in by.values() for r in rng.sample(rows, min(len(rows), cfg.max_per_domain))]
    by_domain: dict[str, Counter] = {}
    for _, dom, src in kept:
        by_domain.setdefault(dom, Counter())[src] += 1
    return WeakSet(
        texts=[r[0] for r in kept],
        labels=[r[1] for r in kept],
        sources=[r[2] for r in kept],
        keywords=list(rules.keywords),
        counts=counts,
        by_domain=by_domain,
    )
