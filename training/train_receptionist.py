"""Train the receptionist (LawLuo paper §3.2): route a question to one of the consultation domains (the 16 of the shipped table).

    # the shipped model: weak labels from every source of ../shared/data + the 250 LawBench dev
    # questions, hyperparameters tuned by cross-validation on those questions (≈ 2 min, 2 CPU cores)
    python -m training.train_receptionist --output_dir assets/receptionist

    # a quick run on a subset (what the tests do; seconds)
    python -m training.train_receptionist --sources legal_advice --max_per_domain 40 --tune false \\
        --output_dir /tmp/receptionist

Training data. The only labelled questions (LawBench 2-4 dev: 250, 20 site categories mapped onto our
16 domains by ``lawluo.agents.domains.from_lawbench``) are few and noisy, so every other question of
``../shared/data`` that comes with an answer gets a **weak label** (``training/weak_labels.py``): the
laws its answer cites (劳动合同法 → 劳动纠纷, 民法典 1208–1217 → 交通事故, …) and the keywords of its
question (the rules in each row of ``lawluo/agents/domains.yaml``), kept only when one domain clearly wins. Keywords
that occur in fewer than ``min_keyword_support`` questions of the sources are dropped first, so the
lexicon is attested by the training sources, not by the test questions. Questions that duplicate a
LawBench dev question (same text after :func:`training.data.dedupe_key`, or one containing the other) are
dropped, and so are duplicates across sources (first source wins).

Model. A linear SVM (scikit-learn ``LinearSVC``, class weights balanced) over TF-IDF of character
1–3-grams plus, per domain, the scaled keyword votes of the question; dev questions weigh
``dev_weight`` times a weak example. With ``--tune`` (default) C, dev_weight and keyword_scale are
chosen by stratified k-fold cross-validation on the dev questions given to :func:`fit` (in the
benchmark, only the training folds'); the temperature that turns decision values into probabilities
is fitted on the same out-of-fold decisions. The result is written as plain arrays + JSON that
``lawluo.agents.receptionist.Receptionist`` rebuilds without scikit-learn; :func:`write_asset` checks
that the rebuilt model gives the same decision values as the fitted one.

The law vote (``--law_vote``, default on; issue 20 item 5). Up to ``vote_max_per_domain`` weak questions per
domain — none sharing more than half of its character 6-grams with a LawBench dev question — are searched
with the app's ``StatuteSearcher`` (top ``vote_map_k``); the counts (domain × retrieved law, chapter,
article) become ``law_domains.json`` (:class:`lawluo.agents.receptionist.LawDomains`). The dev questions
are searched too, and the vote's ``k``, its weight and the temperature of the pooled scores are chosen on
the out-of-fold decisions of the dev questions given to :func:`fit` (weight 0 — the linear model alone —
wins ties). The map never sees a dev label, so it is the same in every fold of the benchmark.
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from itertools import product
from pathlib import Path
from typing import TYPE_CHECKING

from training.arguments import LawLuoArguments, SharedDataArguments
from training.data import SOURCES, check_sources, consultations, dedupe_key, domain_questions
from training.weak_labels import LAW_WEIGHT

if TYPE_CHECKING:
    from lawluo.agents.domains import Domains

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
    from training import weak_labels as wl

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


def char_grams(text: str, n: int = 6) -> set[str]:
    """The character n-grams of ``text`` without punctuation or spaces.

    >>> sorted(char_grams("工资, 拖欠", 3))
    ['工资拖', '资拖欠']
    """
    text = "".join(ch for ch in text if ch.isalnum())
    return {text[i : i + n] for i in range(len(text) - n + 1)}


def near_duplicates(texts: list[str], others: list[str], share: float = 0.5) -> list[bool]:
    """For each of ``texts``: does it share more than ``share`` of its (or the other's, the shorter's)
    character 6-grams with one of ``others``? The rule of ``lawluo/retrieval/expansions.py``.

    >>> near_duplicates(["我想离婚孩子抚养权归谁呢", "公司拖欠工资怎么办"], ["请问我想离婚孩子抚养权归谁"])
    [True, False]
    """
    grams = [char_grams(o) for o in others]
    index: dict[str, list[int]] = {}
    for i, gs in enumerate(grams):
        for g in gs:
            index.setdefault(g, []).append(i)
    out = []
    for text in texts:
        mine = char_grams(text)
        overlap = Counter(i for g in mine for i in index.get(g, ()))
        out.append(any(c / max(1, min(len(mine), len(grams[i]))) > share for i, c in overlap.items()))
    return out


def searched(searcher, texts: list[str], k: int) -> list[list]:
    """The (law, chapter, number) of the ``k`` articles ``searcher`` returns for each text."""
    from lawluo.agents.receptionist import hit_keys

    return [hit_keys(searcher.search(t, k)) for t in texts]


def learn_law_domains(weak: WeakSet, searcher, exclude: list[str], cfg: ReceptionistConfig, log=print):
    """The law→domain map (counts; k/weight set later by :func:`fit`) from up to
    ``cfg.vote_max_per_domain`` weak questions per domain, none near one of ``exclude``; and counts."""
    from lawluo.agents.receptionist import LawDomains

    domains = sorted(cfg.domains().ids)
    near = near_duplicates(weak.texts, exclude)
    by: dict[str, list[int]] = {}
    for i, (dom, is_near) in enumerate(zip(weak.labels, near, strict=True)):
        if not is_near:
            by.setdefault(dom, []).append(i)
    rng = random.Random(cfg.seed)
    chosen = sorted(
        i for rows in by.values() for i in rng.sample(rows, min(len(rows), cfg.vote_max_per_domain))
    )
    start = time.perf_counter()
    keys = searched(searcher, [weak.texts[i] for i in chosen], cfg.vote_map_k)
    n = len(domains)
    laws: dict = {}
    chapters: dict = {}
    articles: dict = {}
    per_domain = [0.0] * n
    for i, hits in zip(chosen, keys, strict=True):
        d = domains.index(weak.labels[i])
        per_domain[d] += 1
        for law, chapter, number in hits:
            for table, key in ((laws, law), (chapters, (law, chapter)), (articles, (law, number))):
                table.setdefault(key, [0.0] * n)[d] += 1
    stats = {
        "near_dev": int(sum(near)),
        "searched": len(chosen),
        "seconds": round(time.perf_counter() - start, 1),
        "laws": len(laws),
        "articles": len(articles),
    }
    log(
        f"law→domain map: {len(chosen)} weak questions searched (top {cfg.vote_map_k}; {stats['near_dev']} near a "
        f"dev question left out) in {stats['seconds']}s; {len(laws)} laws, {len(articles)} articles"
    )
    lawmap = LawDomains(
        domains,
        prior=[max(c, 1.0) for c in per_domain],
        laws=laws,
        chapters=chapters,
        articles=articles,
        smoothing=cfg.vote_smoothing,
        k=max(cfg.vote_k_grid),
    )
    return lawmap, stats


def _tune_vote(law_map, dev_keys, base, yd, cfg: ReceptionistConfig, log=print):
    """(k, weight, temperature) of the law vote maximising the accuracy of argmax(base + weight · vote_k)
    on the out-of-fold ``base`` (decision / T) of the dev questions; the first (smallest) of equals."""
    import numpy as np

    tuning, best, best_acc = [], None, -1.0
    for k in sorted(cfg.vote_k_grid):
        votes = np.vstack([law_map.vote(keys[:k]) for keys in dev_keys])
        for w in sorted(cfg.vote_weight_grid):
            acc = float(((base + w * votes).argmax(1) == yd).mean())
            tuning.append({"k": k, "weight": w, "cv_accuracy": acc})
            if acc > best_acc + 1e-12:  # strictly better: the smaller k and weight win ties
                best, best_acc = (k, w, votes), acc
    k, w, votes = best
    temperature = _fit_temperature(base + w * votes, yd) if w > 0 else 1.0
    log(f"  law vote: k={k} weight={w:g} (CV accuracy {best_acc:.3f}); pooled temperature {temperature:.3f}")
    return k, w, temperature, tuning


@dataclass
class Fitted:
    """A trained model as the arrays of the asset, plus how it was chosen."""

    domains: list[str]
    vocab: list[str]
    idf: object  # np.ndarray (V,)
    weights: object  # np.ndarray (V + n, n)
    bias: object  # np.ndarray (n,)
    keywords: list[tuple[str, str, float]]
    keyword_scale: float
    temperature: float
    ngram_range: tuple[int, int]
    params: dict
    tuning: list[dict]
    n_weak: int
    n_dev: int
    check: tuple = ()  # (prepared texts, decision values) for write_asset's parity check
    law_domains: object = None  # lawluo.agents.receptionist.LawDomains with the chosen k/weight, or None
    vote_tuning: list = field(default_factory=list)  # (k, weight, CV accuracy) of the law vote


def _keyword_matrix(texts: list[str], keywords, domains: list[str]):
    import numpy as np

    from lawluo.agents.receptionist import keyword_votes, prepare

    index = {d: i for i, d in enumerate(domains)}
    kws = [(prepare(w), index[d], x) for w, d, x in keywords]
    return (
        np.vstack([keyword_votes(t, kws, len(domains)) for t in texts])
        if texts
        else np.zeros((0, len(domains)))
    )


def _fit_temperature(decisions, labels) -> float:
    """The temperature T minimising the negative log-likelihood of softmax(decisions / T) (Guo et al. 2017).

    >>> import numpy as np
    >>> d = np.array([[2.0, 0.0], [2.0, 0.0], [0.0, 2.0], [2.0, 0.0]])  # 3 right by 2, 1 wrong by 2
    >>> bool(abs(_fit_temperature(d, np.array([0, 0, 1, 1])) - 2 / np.log(3)) < 0.02)  # optimum: 2 / ln 3
    True
    """
    import numpy as np

    best, best_nll = 1.0, float("inf")
    for t in np.geomspace(0.01, 10.0, 400):
        z = decisions / t
        z = z - z.max(axis=1, keepdims=True)
        logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
        nll = -logp[np.arange(len(labels)), labels].mean()
        if nll < best_nll:
            best, best_nll = float(t), nll
    return best


def fit(
    weak: WeakSet,
    dev_texts: list[str],
    dev_labels: list[str],
    cfg: ReceptionistConfig,
    log=print,
    law_vote: tuple | None = None,
) -> Fitted:
    """Train on the weak set plus the given dev questions (raw text; domain ids); see the module docstring.

    ``law_vote``: (the map of :func:`learn_law_domains`, the searched (law, chapter, number) of each dev
    question, aligned with ``dev_texts``) to tune the law vote on; None: the linear model alone."""
    import numpy as np
    import scipy.sparse as sp
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.model_selection import StratifiedKFold
    from sklearn.svm import LinearSVC

    from lawluo.agents.receptionist import prepare

    domains = sorted(cfg.domains().ids)
    dev_texts = [prepare(t) for t in dev_texts]
    missing = set(domains) - set(weak.labels) - set(dev_labels)
    if missing:
        raise ValueError(f"no training question for the domains {sorted(missing)}; use more sources")
    vec = TfidfVectorizer(
        analyzer="char",
        ngram_range=(1, cfg.ngram_max),
        lowercase=False,
        sublinear_tf=True,
        min_df=cfg.min_df,
        dtype=np.float32,
    )
    X = vec.fit_transform(weak.texts + dev_texts).tocsr()
    K = _keyword_matrix(weak.texts + dev_texts, weak.keywords, domains)
    nw = len(weak.texts)
    y = np.array([domains.index(d) for d in weak.labels + list(dev_labels)])
    yd = y[nw:]

    def train(rows_dev, c, dev_weight, scale):
        rows = np.concatenate([np.arange(nw), nw + np.asarray(rows_dev, dtype=int)])
        feats = sp.hstack([X[rows], sp.csr_matrix(K[rows] * scale)]).tocsr()
        weights = np.where(rows < nw, 1.0, dev_weight)
        clf = LinearSVC(C=c, class_weight="balanced", max_iter=10000, random_state=cfg.seed)
        return clf.fit(feats, y[rows], sample_weight=weights)

    def decide(clf, rows_dev, scale):
        rows = nw + np.asarray(rows_dev, dtype=int)
        return clf.decision_function(sp.hstack([X[rows], sp.csr_matrix(K[rows] * scale)]).tocsr())

    grid = (
        list(product(cfg.c_grid, cfg.dev_weight_grid, cfg.keyword_scale_grid))
        if cfg.tune
        else [(cfg.c, cfg.dev_weight, cfg.keyword_scale)]
    )
    n_folds = min(cfg.folds, int(np.bincount(yd).max())) if len(yd) else 0
    tuning, oof, accuracy = [], {}, {}
    if n_folds >= 2:
        folds = list(StratifiedKFold(n_folds, shuffle=True, random_state=cfg.seed).split(yd, yd))
        for params in grid:
            decisions = np.zeros((len(yd), len(domains)))
            for tr, te in folds:
                decisions[te] = decide(train(tr, *params), te, params[2])
            oof[params], accuracy[params] = decisions, float((decisions.argmax(1) == yd).mean())
            tuning.append(
                dict(
                    zip(("c", "dev_weight", "keyword_scale"), params, strict=True),
                    cv_accuracy=accuracy[params],
                )
            )
            log(
                f"  C={params[0]:g} dev_weight={params[1]:g} keyword_scale={params[2]:g}: CV accuracy {accuracy[params]:.3f}"
            )
        best = max(grid, key=accuracy.get)  # the first of equals
        temperature = _fit_temperature(oof[best], yd)
    else:  # no dev questions: nothing to tune or calibrate on
        best, temperature = grid[0], 1.0
    law_domains, vote_tuning = None, []
    if law_vote is not None and n_folds >= 2:
        import copy

        law_map, dev_keys = law_vote
        k, w, t2, vote_tuning = _tune_vote(law_map, dev_keys, oof[best] / temperature, yd, cfg, log)
        law_domains = copy.copy(law_map)
        law_domains.k, law_domains.weight, law_domains.temperature = k, w, t2
    c, dev_weight, scale = best
    clf = train(np.arange(len(yd)), c, dev_weight, scale)
    if list(clf.classes_) != list(range(len(domains))):
        raise ValueError("a domain has no training question")
    vocab = [str(g) for g in vec.get_feature_names_out()]
    sample = list(range(0, X.shape[0], max(1, X.shape[0] // 50)))
    check = (
        [(weak.texts + dev_texts)[i] for i in sample],
        clf.decision_function(sp.hstack([X[sample], sp.csr_matrix(K[sample] * scale)]).tocsr()),
    )
    return Fitted(
        domains=domains,
        vocab=vocab,
        idf=vec.idf_.astype(np.float32),
        weights=clf.coef_.T.astype(np.float32).copy(),
        bias=clf.intercept_.astype(np.float32),
        keywords=[(w, d, float(x)) for w, d, x in weak.keywords],
        keyword_scale=float(scale),
        temperature=temperature,
        ngram_range=(1, cfg.ngram_max),
        params={
            "c": c,
            "dev_weight": dev_weight,
            "keyword_scale": scale,
            "temperature": round(temperature, 4),
        },
        tuning=tuning,
        n_weak=nw,
        n_dev=len(yd),
        check=check,
        law_domains=law_domains,
        vote_tuning=vote_tuning,
    )


def write_asset(fitted: Fitted, out_dir: Path) -> Path:
    """Write the asset files, then load them back and check the decision values agree."""
    import numpy as np
    import sklearn

    from lawluo.agents.receptionist import FORMAT, LAW_DOMAINS_FILE, Receptionist

    out_dir.mkdir(parents=True, exist_ok=True)
    law_file = out_dir / LAW_DOMAINS_FILE
    if fitted.law_domains is not None:
        law_file.write_text(
            json.dumps(fitted.law_domains.to_json(), ensure_ascii=False) + "\n", encoding="utf-8"
        )
    elif law_file.exists():
        law_file.unlink()  # a map of an earlier run would not belong to this model
    meta = {
        "format": FORMAT,
        "domains": fitted.domains,
        "ngram_range": list(fitted.ngram_range),
        "keyword_scale": fitted.keyword_scale,
        "temperature": fitted.temperature,
        "keywords": [list(k) for k in fitted.keywords],
        "params": fitted.params,
        "n_weak": fitted.n_weak,
        "n_dev": fitted.n_dev,
        "law_vote": (
            {k: getattr(fitted.law_domains, k) for k in ("k", "weight", "temperature", "smoothing")}
            if fitted.law_domains is not None
            else None
        ),
        "vocab_size": len(fitted.vocab),
        "trained_with": {"scikit-learn": sklearn.__version__, "numpy": np.__version__},
    }
    (out_dir / "model.json").write_text(
        json.dumps(meta, ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
    )
    (out_dir / "vocab.json").write_text(json.dumps(fitted.vocab, ensure_ascii=False), encoding="utf-8")
    for name in ("idf", "weights", "bias"):
        np.save(out_dir / f"{name}.npy", getattr(fitted, name), allow_pickle=False)
    model = Receptionist.from_dir(out_dir)
    texts, expected = fitted.check
    got = np.vstack([model.decision(t) for t in texts]) if texts else expected
    if not np.allclose(got, expected, atol=1e-3):
        raise RuntimeError(
            f"rebuilt receptionist disagrees with the fitted model (max |Δ| {np.abs(got - expected).max():.2g})"
        )
    return out_dir


def provenance(
    cfg: ReceptionistConfig,
    weak: WeakSet,
    fitted: Fitted,
    dev_counts: Counter,
    argv: list[str],
    law_stats: dict | None = None,
) -> str:
    """PROVENANCE.md: sources, counts per domain and source, how labels were made, the command."""
    table = cfg.domains()
    out_dir = Path(cfg.output_dir)
    law_stats = law_stats or {}
    lines = [
        "# receptionist/ — the domain classifier of the receptionist",
        "",
        f"Routes a client's question to one of the {len(table)} consultation domains (LawLuo paper §3.2); loaded by",
        "`lawluo.agents.receptionist.Receptionist`. Rebuild (from the repository root; deterministic):",
        "",
        "```",
        "python -m training.train_receptionist " + " ".join(argv),
        "```",
        "",
        "Files: `model.json` (domains, keywords, settings), `vocab.json` (character n-gram of each",
        f"column), `idf.npy`, `weights.npy` ((n-grams + {len(table)} keyword features) × {len(table)}), `bias.npy`; sha256:",
        "",
    ]
    for name in ("model.json", "vocab.json", "idf.npy", "weights.npy", "bias.npy", "law_domains.json"):
        path = out_dir / name
        if path.exists():
            lines.append(f"- `{name}`: `{hashlib.sha256(path.read_bytes()).hexdigest()}`")
    lines += [
        "",
        "## Training data",
        "",
        f"- {fitted.n_dev} labelled questions: `lawbench/domain_questions.dev.jsonl` (LawBench 2-4 dev,",
        f"  open-compass/LawBench @ e30981b), the source site's 20 categories mapped onto our {len(table)} domains by",
        "  `lawbench:` in `lawluo/agents/domains.yaml` (抵押担保 → 债权债务, 人身损害 → 侵权, 综合咨询/涉外法律/",
        "  海事海商 → 其他).",
        f"- {fitted.n_weak} weakly labelled questions from the sources below (see ../shared/data/README.md for",
        "  upstream commits and terms). A question's weak label (`training/weak_labels.py`) combines",
        "  - the laws its answer (and lawyer-llama's `laws` field) cites: each distinct cited article",
        "    (`lawluo.law.citations.extract_citations`) or law named in 《…》 votes for the domain of the",
        "    law in its row of `lawluo/agents/domains.yaml` (e.g. 劳动合同法/工伤保险条例 → 劳动纠纷, 道路交通安全法",
        "    → 交通事故, 刑法/刑事诉讼法 → 刑事辩护, 专利法/商标法/著作权法 → 知识产权, 消费者权益保护法 → 消费",
        "    权益, 公司法 → 公司法, 国有土地上房屋征收与补偿条例 → 拆迁安置, 行政诉讼法/行政复议法 → 行政诉讼,",
        "    海商法 → 其他) or, for the 民法典, of the article's range (1040–1163 → 婚姻家庭, 1208–1217 → 交通",
        "    事故, 1218–1228 → 医疗纠纷, 788–808 → 建设工程, 386–424 and 667–702 → 债权债务, other 侵权责任编",
        "    and 人格权编 → 侵权, 物权编 → 房产纠纷, other 合同编 → 合同纠纷; 总则编 votes for nothing);",
        "  - the keywords of the question (weight 1, or 0.5 for weak ones) and of the answer (a quarter);",
        f"    keywords found in fewer than {cfg.min_keyword_support} questions of the sources are dropped",
        f"    ({len(weak.keywords)} kept), so every keyword is attested by the training sources;",
        f"  - score = {cfg.law_weight:g}·(share of law votes) + 2·(question keywords) + 0.5·(answer keywords); the best domain",
        "    is kept when its score ≥ 2 and ≥ 1.5 × the second, otherwise the question is dropped.",
        "  The rules were written by hand; their author had read the LawBench dev questions (the",
        "  benchmark's test set) beforehand — see the caveat at the top of `lawluo/agents/domains.yaml`.",
        "- Dropped before labelling: questions that repeat an earlier one (same text without punctuation",
        "  and spaces; the first source wins) and any that equals or contains a LawBench dev question, or",
        "  is contained in one (`dev_overlap`).",
        "",
        "| source | records | duplicates | dev overlap | ambiguous (dropped) | kept | by law + words | by law only | by words only |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for src, c in weak.counts.items():
        lines.append(
            f"| `{src}` | {c['records']} | {c['duplicates']} | {c['dev_overlap']} | {c['ambiguous']} | "
            f"{c['kept']} | {c['by_law_words']} | {c['by_law']} | {c['by_words']} |"
        )
    if cfg.max_per_domain:
        lines.append(
            f"\nThen at most {cfg.max_per_domain} weak questions per domain were sampled (seed {cfg.seed})."
        )
    lines += ["", "Questions per domain (weak labels, by source; dev questions):", ""]
    srcs = [s for s in weak.counts if any(weak.by_domain.get(d.id, {}).get(s) for d in table)]
    lines.append("| domain | weak | " + " | ".join(f"`{s}`" for s in srcs) + " | dev |")
    lines.append("|---|---|" + "---|" * len(srcs) + "---|")
    for d in table:
        row = weak.by_domain.get(d.id, Counter())
        lines.append(
            f"| {d.name} `{d.id}` | {sum(row.values())} | "
            + " | ".join(str(row.get(s, 0)) for s in srcs)
            + f" | {dev_counts.get(d.id, 0)} |"
        )
    lines += [
        "",
        "## Model",
        "",
        "LinearSVC (scikit-learn, class weights balanced) over TF-IDF of character "
        f"{fitted.ngram_range[0]}–{fitted.ngram_range[1]}-grams (sublinear tf, min_df {cfg.min_df},",
        f"{len(fitted.vocab)} n-grams) and the 16 keyword votes × keyword_scale; dev questions weigh",
        "dev_weight. Probabilities: softmax(decision / temperature), the temperature fitted on out-of-fold",
        f"decisions of the dev questions. Chosen: `{json.dumps(fitted.params)}`.",
    ]
    if fitted.tuning:
        lines += [
            "",
            f"Tuning ({cfg.folds}-fold stratified CV on the dev questions; the first best wins):",
            "",
        ]
        lines += ["| C | dev_weight | keyword_scale | CV accuracy |", "|---|---|---|---|"]
        lines += [
            f"| {t['c']:g} | {t['dev_weight']:g} | {t['keyword_scale']:g} | {t['cv_accuracy']:.3f} |"
            for t in fitted.tuning
        ]
    if fitted.law_domains is not None:
        m = fitted.law_domains
        lines += [
            "",
            "## The law vote (`law_domains.json`)",
            "",
            f"{law_stats.get('searched', 0)} weak questions (at most {cfg.vote_max_per_domain} per domain; "
            f"{law_stats.get('near_dev', 0)} sharing more than half",
            "of their character 6-grams with a LawBench dev question left out) were searched with the app's",
            f"`StatuteSearcher` (top {cfg.vote_map_k}); the counts domain × retrieved law ({law_stats.get('laws', 0)}), "
            f"chapter and article ({law_stats.get('articles', 0)})",
            f"give P(domain | article), backed off article → chapter → law → prior ({m.smoothing:g} pseudo-counts).",
            f"Chosen on the out-of-fold decisions of the dev questions: k = {m.k}, weight {m.weight:g}, pooled",
            f"temperature {m.temperature:.4f}. Routing = softmax((decision / T + weight · log mean P(domain | hit)) / T2).",
            "",
            "| k | weight | CV accuracy |",
            "|---|---|---|",
        ]
        lines += [f"| {t['k']} | {t['weight']:g} | {t['cv_accuracy']:.3f} |" for t in fitted.vote_tuning]
    lines += [
        "",
        "These CV figures choose the settings and are optimistic; the honest accuracy (nested: each",
        "test fold never trained or tuned on) is printed by `python benchmarks/receptionist_accuracy.py`.",
        "",
    ]
    return "\n".join(lines)


def law_vote_inputs(cfg: ReceptionistConfig, weak: WeakSet, dev_texts: list[str], log=print):
    """The app's statute searcher (from ``cfg``'s settings), the law→domain map learned with it, its
    counts, and the searched articles of every dev question (top ``max(vote_k_grid)``)."""
    from lawluo.agents.receptionist import prepare
    from lawluo.law import StatuteDB
    from lawluo.retrieval.statutes import StatuteSearcher

    settings = cfg.settings()
    searcher = StatuteSearcher.from_settings(settings, StatuteDB(settings.statutes_path))
    law_map, stats = learn_law_domains(weak, searcher, dev_texts, cfg, log)
    dev_keys = searched(searcher, [prepare(t) for t in dev_texts], max(cfg.vote_k_grid))
    return law_map, stats, dev_keys


def main(cfg: ReceptionistConfig, argv: list[str] | None = None) -> Fitted:
    start = time.perf_counter()
    _, dev_texts, dev_labels = dev_set(Path(cfg.data_dir), cfg.domains())
    weak = build_weak_set(cfg, exclude=dev_texts)
    print(
        f"weak labels: {len(weak.texts)} questions from {len(cfg.sources)} sources; {len(dev_texts)} dev questions"
    )
    law_vote, law_stats = None, {}
    if cfg.law_vote:
        law_map, law_stats, dev_keys = law_vote_inputs(cfg, weak, dev_texts)
        law_vote = (law_map, dev_keys)
    fitted = fit(weak, dev_texts, dev_labels, cfg, law_vote=law_vote)
    out_dir = Path(cfg.output_dir)
    write_asset(fitted, out_dir)
    text = provenance(cfg, weak, fitted, Counter(dev_labels), argv or [], law_stats)
    (out_dir / "PROVENANCE.md").write_text(text, encoding="utf-8")
    print(
        f"wrote {out_dir} ({len(fitted.vocab)} n-grams, {fitted.params}) in {time.perf_counter() - start:.0f}s"
    )
    return fitted


def make_parser():
    from transformers import HfArgumentParser

    return HfArgumentParser(ReceptionistConfig)


if __name__ == "__main__":
    (config,) = make_parser().parse_args_into_dataclasses()
    main(config, sys.argv[1:])
