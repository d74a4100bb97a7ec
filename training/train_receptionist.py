"""Train the receptionist (LawLuo paper §3.2): route a question to one of the consultation domains (the 16 of the shipped table).

    # the shipped model: weak labels from every source of ../shared/data + the 250 LawBench dev
    # questions, hyperparameters tuned by cross-validation on those questions (≈ 2 min, 2 CPU cores)
    python -m training.train_receptionist --output_dir assets/receptionist

    # a quick run on a subset (what the tests do; seconds)
    python -m training.train_receptionist --sources legal_advice --max_per_domain 40 --tune false \\
        --output_dir /tmp/receptionist

Training data. The only labelled questions (LawBench 2-4 dev: 250, 20 site categories mapped onto our
16 domains by ``lawluo.domains.from_lawbench``) are few and noisy, so every other question of
``../shared/data`` that comes with an answer gets a **weak label** (``lawluo/law/weak_labels.py``): the
laws its answer cites (劳动合同法 → 劳动纠纷, 民法典 1208–1217 → 交通事故, …) and the keywords of its
question (the rules in each row of ``lawluo/domains.yaml``), kept only when one domain clearly wins. Keywords
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
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from itertools import product
from pathlib import Path

from training.receptionist_data import (  # noqa: F401  (re-exported: the weak set and the settings)
    CASE_PREFIX,
    ROOT,
    ReceptionistConfig,
    WeakSet,
    _overlaps,
    build_weak_set,
    dev_set,
)
from training.receptionist_law_map import (  # noqa: F401  (re-exported: the law vote's map)
    char_grams,
    law_vote_inputs,
    learn_law_domains,
    near_duplicates,
    searched,
)
from training.shared_data import SOURCES, check_sources, consultations, dedupe_key, domain_questions  # noqa: F401


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


@dataclass
class _Design:
    """The training matrix of :func:`fit`: TF-IDF rows ``X`` and keyword votes ``K`` of the weak questions
    (the first ``nw`` rows) and then the dev questions, their labels ``y`` (indexes of the sorted domains)."""

    X: object  # scipy.sparse CSR (questions × n-grams)
    K: object  # np.ndarray (questions × domains)
    y: object  # np.ndarray (questions,)
    nw: int
    seed: int

    def features(self, rows, scale):
        """The rows ``rows`` of ``X`` beside their keyword votes × ``scale``."""
        import scipy.sparse as sp

        return sp.hstack([self.X[rows], sp.csr_matrix(self.K[rows] * scale)]).tocsr()

    def train(self, rows_dev, c, dev_weight, scale):
        """A LinearSVC on every weak question and the dev questions ``rows_dev`` (weighing ``dev_weight``)."""
        import numpy as np
        from sklearn.svm import LinearSVC

        rows = np.concatenate([np.arange(self.nw), self.nw + np.asarray(rows_dev, dtype=int)])
        feats = self.features(rows, scale)
        weights = np.where(rows < self.nw, 1.0, dev_weight)
        clf = LinearSVC(C=c, class_weight="balanced", max_iter=10000, random_state=self.seed)
        return clf.fit(feats, self.y[rows], sample_weight=weights)

    def decide(self, clf, rows_dev, scale):
        """The decision values of ``clf`` for the dev questions ``rows_dev``."""
        import numpy as np

        return clf.decision_function(self.features(self.nw + np.asarray(rows_dev, dtype=int), scale))


def _design(weak: WeakSet, dev_texts: list[str], dev_labels: list[str], domains: list[str], cfg):
    """The fitted TF-IDF vectoriser (character 1..``ngram_max``-grams) and the :class:`_Design` of the
    weak and (prepared) dev questions."""
    import numpy as np
    from sklearn.feature_extraction.text import TfidfVectorizer

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
    y = np.array([domains.index(d) for d in weak.labels + list(dev_labels)])
    return vec, _Design(X, K, y, len(weak.texts), cfg.seed)


def _cross_validate(design: _Design, grid: list[tuple], n_folds: int, n_domains: int, seed: int, log=print):
    """The setting of ``grid`` (C, dev_weight, keyword_scale) with the best accuracy of the out-of-fold
    decisions on the dev questions (stratified ``n_folds``-fold; the first of equals), the temperature
    fitted on its decisions, those decisions, and every setting's accuracy."""
    import numpy as np
    from sklearn.model_selection import StratifiedKFold

    yd = design.y[design.nw :]
    tuning, oof, accuracy = [], {}, {}
    folds = list(StratifiedKFold(n_folds, shuffle=True, random_state=seed).split(yd, yd))
    for params in grid:
        decisions = np.zeros((len(yd), n_domains))
        for tr, te in folds:
            decisions[te] = design.decide(design.train(tr, *params), te, params[2])
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
    return best, _fit_temperature(oof[best], yd), oof[best], tuning


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

    from lawluo.agents.receptionist import prepare

    domains = sorted(cfg.domains().ids)
    dev_texts = [prepare(t) for t in dev_texts]
    missing = set(domains) - set(weak.labels) - set(dev_labels)
    if missing:
        raise ValueError(f"no training question for the domains {sorted(missing)}; use more sources")
    vec, design = _design(weak, dev_texts, dev_labels, domains, cfg)
    yd = design.y[design.nw :]
    grid = (
        list(product(cfg.c_grid, cfg.dev_weight_grid, cfg.keyword_scale_grid))
        if cfg.tune
        else [(cfg.c, cfg.dev_weight, cfg.keyword_scale)]
    )
    n_folds = min(cfg.folds, int(np.bincount(yd).max())) if len(yd) else 0
    tuning = []
    if n_folds >= 2:
        best, temperature, best_oof, tuning = _cross_validate(
            design, grid, n_folds, len(domains), cfg.seed, log
        )
    else:  # no dev questions: nothing to tune or calibrate on
        best, temperature = grid[0], 1.0
    law_domains, vote_tuning = None, []
    if law_vote is not None and n_folds >= 2:
        import copy

        law_map, dev_keys = law_vote
        k, w, t2, vote_tuning = _tune_vote(law_map, dev_keys, best_oof / temperature, yd, cfg, log)
        law_domains = copy.copy(law_map)
        law_domains.k, law_domains.weight, law_domains.temperature = k, w, t2
    c, dev_weight, scale = best
    clf = design.train(np.arange(len(yd)), c, dev_weight, scale)
    if list(clf.classes_) != list(range(len(domains))):
        raise ValueError("a domain has no training question")
    vocab = [str(g) for g in vec.get_feature_names_out()]
    sample = list(range(0, design.X.shape[0], max(1, design.X.shape[0] // 50)))
    check = (
        [(weak.texts + dev_texts)[i] for i in sample],
        clf.decision_function(design.features(sample, scale)),
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
        n_weak=design.nw,
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
    lines = _provenance_files(table, Path(cfg.output_dir), argv)
    lines += _provenance_training_data(cfg, weak, fitted, dev_counts, table)
    lines += _provenance_model(cfg, fitted)
    if fitted.law_domains is not None:
        lines += _provenance_law_vote(cfg, fitted, law_stats or {})
    lines += [
        "",
        "These CV figures choose the settings and are optimistic; the honest accuracy (nested: each",
        "test fold never trained or tuned on) is printed by `python benchmarks/receptionist_accuracy.py`.",
        "",
    ]
    return "\n".join(lines)


def _provenance_files(table, out_dir: Path, argv: list[str]) -> list[str]:
    """PROVENANCE.md's head: what the asset is, the command that rebuilds it, its files' sha256."""
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
    return lines


def _provenance_training_data(
    cfg: ReceptionistConfig, weak: WeakSet, fitted: Fitted, dev_counts: Counter, table
) -> list[str]:
    """PROVENANCE.md's training data: the labelled and weak questions, how they were labelled, counts."""
    lines: list[str] = []
    lines += [
        "",
        "## Training data",
        "",
        f"- {fitted.n_dev} labelled questions: `lawbench/domain_questions.dev.jsonl` (LawBench 2-4 dev,",
        f"  open-compass/LawBench @ e30981b), the source site's 20 categories mapped onto our {len(table)} domains by",
        "  `lawbench:` in `lawluo/domains.yaml` (抵押担保 → 债权债务, 人身损害 → 侵权, 综合咨询/涉外法律/",
        "  海事海商 → 其他).",
        f"- {fitted.n_weak} weakly labelled questions from the sources below (see ../shared/data/README.md for",
        "  upstream commits and terms). A question's weak label (`lawluo/law/weak_labels.py`) combines",
        "  - the laws its answer (and lawyer-llama's `laws` field) cites: each distinct cited article",
        "    (`lawluo.law.citations.extract_citations`) or law named in 《…》 votes for the domain of the",
        "    law in its row of `lawluo/domains.yaml` (e.g. 劳动合同法/工伤保险条例 → 劳动纠纷, 道路交通安全法",
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
        "  benchmark's test set) beforehand — see the caveat at the top of `lawluo/domains.yaml`.",
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
    return lines


def _provenance_model(cfg: ReceptionistConfig, fitted: Fitted) -> list[str]:
    """PROVENANCE.md's model: the classifier, its chosen settings and the tuning table."""
    lines: list[str] = []
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
    return lines


def _provenance_law_vote(cfg: ReceptionistConfig, fitted: Fitted, law_stats: dict) -> list[str]:
    """PROVENANCE.md's law vote: how the law→domain map was learned and the vote chosen."""
    lines: list[str] = []
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
    return lines


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
