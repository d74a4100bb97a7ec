"""What changes the receptionist's accuracy? Variants of its data and model under one protocol.

    python benchmarks/receptionist_ablations.py            # every variant, ≈ 10 min on 2 CPU cores
    python benchmarks/receptionist_ablations.py --only shipped dev_weight_30 --seeds 0

Protocol: the 250 LawBench dev questions in stratified 5-fold cross-validation, repeated with three
fold seeds (0, 1, 2); each variant trains on the weak-labelled questions of
``training/train_receptionist.py`` plus the other folds' dev questions, with fixed settings (no
tuning, so no test fold is ever tuned on either), and is scored on the held-out fold. Printed per
variant: accuracy on the 16 domains (mean over seeds, then each seed) and how often the true domain is
among the top 3 (the receptionist shows three). Every variant starts from the shipped one (character
1–3-gram TF-IDF + keyword votes, LinearSVC C=0.3, class weights balanced, dev questions weigh 3) and
changes one thing. The table is a diagnosis, not a model selection: the shipped model's own figure is
the nested CV of ``benchmarks/receptionist_accuracy.py``.
"""

from __future__ import annotations

import argparse
import logging
import random
import time
from dataclasses import dataclass, field

from _common import DATA, read_jsonl

SEEDS = (0, 1, 2)
KINLED = ("kinled_terms", "kinled_interp", "kinled_exam", "kinled_consult")


@dataclass
class Variant:
    """One change to the shipped recipe."""

    name: str
    what: str
    dev_weight: float = 3.0
    keywords: bool = True
    words: bool = False  # add jieba word 1–2-gram TF-IDF
    classifier: str = "svm"  # or "logreg"
    source_weight: dict[str, float] = field(default_factory=dict)
    law_weight: float = 3.0  # of the cited laws' votes in a weak label (lawluo/law/weak_labels.py)
    self_training: bool = False
    statutes: bool = False
    fine_labels: bool = False  # train on LawBench's 20 labels, map the prediction to the 16 domains
    use_dev: bool = True
    use_weak: bool = True


VARIANTS = [
    Variant("shipped", "the shipped recipe (char 1–3 + keyword votes, SVM C=0.3, dev weight 3)"),
    Variant("dev_weight_10", "dev questions weigh 10", dev_weight=10),
    Variant("dev_weight_30", "dev questions weigh 30", dev_weight=30),
    Variant("no_keywords", "without the 16 keyword-vote features", keywords=False),
    Variant("jieba_words", "+ jieba word 1–2-gram TF-IDF", words=True),
    Variant("logreg", "logistic regression (C=3) instead of the SVM", classifier="logreg"),
    Variant(
        "kinled_x0.3",
        "KINLED questions (legal-term, exam, interpretation) weigh 0.3",
        source_weight=dict.fromkeys(KINLED, 0.3),
    ),
    Variant(
        "no_law_votes",
        "weak labels from keywords only (answers' cited laws ignored)",
        law_weight=0.0,
    ),
    Variant(
        "self_training",
        "+ 1,924 unlabelled legal_advice questions, pseudo-labelled (margin > 0.3, weight 0.5)",
        self_training=True,
    ),
    Variant(
        "statute_articles",
        "+ in-force statute articles labelled by their law's domain (≤ 400 per domain, weight 0.3)",
        statutes=True,
    ),
    Variant(
        "lawbench_20_labels",
        "dev questions keep LawBench's 20 labels; predictions mapped to 16",
        fine_labels=True,
    ),
    Variant("weak_only", "weak labels only, no dev question trained on", use_dev=False),
    Variant("dev_only", "dev questions only (char 1–3 SVM + keyword votes), no weak labels", use_weak=False),
]


def statute_articles(per_domain: int = 400, seed: int = 0) -> tuple[list[str], list[str]]:
    """In-force articles of the statute database whose law the weak-label rules map to a domain."""
    from lawluo.agents.receptionist import prepare
    from lawluo.config import load_settings
    from lawluo.law import StatuteDB
    from lawluo.law import weak_labels as wl

    rules = wl.load_rules()
    by: dict[str, list[str]] = {}
    for article in StatuteDB(load_settings().statutes_path).articles:
        dom = wl.law_domain(article.law.name, article.number, rules) if article.law.in_force else None
        if dom:
            by.setdefault(dom, []).append(prepare(article.text)[:300])
    rng = random.Random(seed)
    texts, labels = [], []
    for dom in sorted(by):
        picked = rng.sample(by[dom], min(per_domain, len(by[dom])))
        texts += picked
        labels += [dom] * len(picked)
    return texts, labels


def unlabelled_questions(weak_texts: list[str], dev_questions: list[str]) -> list[str]:
    """legal_advice questions that got no weak label (ambiguous) and are not dev questions."""
    from lawluo.agents.receptionist import prepare
    from training.data import consultations, dedupe_key

    taken = {dedupe_key(t) for t in weak_texts} | {dedupe_key(q) for q in dev_questions}
    out = []
    for rec in consultations(DATA, ["legal_advice"]):
        key = dedupe_key(rec.question)
        if key and key not in taken:
            taken.add(key)
            out.append(prepare(rec.question))
    return out


def training_rows(v: Variant, weak, extra) -> tuple[list[str], list[str], list[float]]:
    """The variant's training texts, labels and weights besides the dev questions: the weak set (weighted
    by source) and the statute articles (weight 0.3), as the variant asks."""
    weak_texts = list(weak.texts) if v.use_weak else []
    weak_labels = list(weak.labels) if v.use_weak else []
    weak_weights = [v.source_weight.get(s, 1.0) for s in weak.sources] if v.use_weak else []
    if v.statutes:
        texts, labels = extra["statutes"]
        weak_texts, weak_labels, weak_weights = (
            weak_texts + texts,
            weak_labels + labels,
            weak_weights + [0.3] * len(texts),
        )
    return weak_texts, weak_labels, weak_weights


def features(v: Variant, corpus: list[str], keywords, domains: list[str]):
    """The variant's feature matrix of ``corpus`` (CSR): character 1–3-gram TF-IDF, plus jieba words and
    word bigrams, plus the keyword votes, as the variant asks."""
    import jieba
    import scipy.sparse as sp
    from sklearn.feature_extraction.text import TfidfVectorizer

    from training import train_receptionist as tr

    blocks = [
        TfidfVectorizer(
            analyzer="char", ngram_range=(1, 3), lowercase=False, sublinear_tf=True, min_df=2
        ).fit_transform(corpus)
    ]
    if v.words:
        tokens = [jieba.lcut(t) for t in corpus]
        words = TfidfVectorizer(
            analyzer=lambda toks: toks + [a + b for a, b in zip(toks, toks[1:], strict=False)],
            sublinear_tf=True,
            min_df=2,
        )
        blocks.append(words.fit_transform(tokens))
    if v.keywords:
        blocks.append(sp.csr_matrix(tr._keyword_matrix(corpus, keywords, domains)))
    return sp.hstack(blocks).tocsr()


def run_variant(
    v: Variant, weak, extra, questions, gold, fine_gold, seeds
) -> tuple[list[float], list[float]]:
    """Accuracy and top-3 accuracy per fold seed."""
    import jieba
    import numpy as np
    import scipy.sparse as sp
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold
    from sklearn.svm import LinearSVC

    from lawluo.agents.receptionist import prepare
    from lawluo.domains import DOMAIN_IDS, from_lawbench

    jieba.setLogLevel(logging.WARNING)
    domains = sorted(DOMAIN_IDS)
    dev = [prepare(q) for q in questions]
    weak_texts, weak_labels, weak_weights = training_rows(v, weak, extra)
    unlabelled = extra["unlabelled"] if v.self_training else []
    X = features(v, weak_texts + dev + unlabelled, weak.keywords, domains)
    nw, nd = len(weak_texts), len(dev)
    Xw, Xd, Xu = X[:nw], X[nw : nw + nd], X[nw + nd :]

    def classifier():
        if v.classifier == "logreg":
            return LogisticRegression(C=3.0, class_weight="balanced", max_iter=3000)
        return LinearSVC(C=0.3, class_weight="balanced", max_iter=10000, random_state=0)

    def to_domain(label: str) -> str:
        return from_lawbench(label[3:]).id if label.startswith("lb:") else label

    y_dev = [fine_gold[i] if v.fine_labels else gold[i] for i in range(nd)]
    accuracy, top3 = [], []
    for seed in seeds:
        hits = hits3 = 0
        for train, test in StratifiedKFold(5, shuffle=True, random_state=seed).split(dev, gold):
            train = train if v.use_dev else train[:0]
            rows = sp.vstack([Xw, Xd[train]]).tocsr()
            labels = weak_labels + [y_dev[i] for i in train]
            weights = np.array(weak_weights + [v.dev_weight] * len(train))
            model = classifier().fit(rows, labels, sample_weight=weights)
            if v.self_training:
                scores = model.decision_function(Xu)
                top = np.sort(scores, axis=1)
                keep = top[:, -1] - top[:, -2] > 0.3
                rows = sp.vstack([rows, Xu[keep]]).tocsr()
                labels = labels + [model.classes_[k] for k in scores[keep].argmax(1)]
                weights = np.concatenate([weights, np.full(int(keep.sum()), 0.5)])
                model = classifier().fit(rows, labels, sample_weight=weights)
            scores = model.decision_function(Xd[test])
            for i, row in zip(test, scores, strict=True):
                ranked = []
                for k in np.argsort(-row):
                    dom = to_domain(str(model.classes_[k]))
                    if dom not in ranked:
                        ranked.append(dom)
                hits += ranked[0] == gold[i]
                hits3 += gold[i] in ranked[:3]
        accuracy.append(hits / nd)
        top3.append(hits3 / nd)
    return accuracy, top3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", choices=[v.name for v in VARIANTS], help="run these variants")
    parser.add_argument("--seeds", nargs="+", type=int, default=list(SEEDS))
    args = parser.parse_args()

    import statistics

    from lawluo.domains import from_lawbench
    from training import train_receptionist as tr

    variants = [v for v in VARIANTS if not args.only or v.name in args.only]
    _, questions, gold = tr.dev_set(DATA, tr.ReceptionistConfig().domains())
    raw = [r["label"] for r in read_jsonl(DATA / "lawbench" / "domain_questions.dev.jsonl")]
    fine_gold = [f"lb:{r}" if from_lawbench(r).name != r else g for r, g in zip(raw, gold, strict=True)]
    weak_sets = {
        w: tr.build_weak_set(tr.ReceptionistConfig(tune=False, law_weight=w), exclude=questions)
        for w in sorted({v.law_weight for v in variants}, reverse=True)
    }
    extra: dict[str, object] = {}
    if any(v.statutes for v in variants):
        extra["statutes"] = statute_articles()
    self_trained = [v for v in variants if v.self_training]
    if self_trained:
        extra["unlabelled"] = unlabelled_questions(weak_sets[self_trained[0].law_weight].texts, questions)
    print(
        f"{len(questions)} dev questions, stratified 5-fold CV with fold seeds {args.seeds}; weak-labelled "
        + ", ".join(f"{len(ws.texts)} (law-vote weight {w:g})" for w, ws in weak_sets.items())
        + (f"; unlabelled legal_advice: {len(extra['unlabelled'])}" if "unlabelled" in extra else "")
        + (f"; statute articles: {len(extra['statutes'][0])}" if "statutes" in extra else "")
    )
    print(f"\n{'variant':<20} {'accuracy':>8}  {'per seed':<20} {'top-3':>6}  {'time':>5}  change")
    for v in variants:
        start = time.perf_counter()
        acc, top3 = run_variant(v, weak_sets[v.law_weight], extra, questions, gold, fine_gold, args.seeds)
        print(
            f"{v.name:<20} {statistics.mean(acc):>8.3f}  {' '.join(f'{a:.3f}' for a in acc):<20} "
            f"{statistics.mean(top3):>6.3f}  {time.perf_counter() - start:>4.0f}s  {v.what}",
            flush=True,
        )


if __name__ == "__main__":
    main()
