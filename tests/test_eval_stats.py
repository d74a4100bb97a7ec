"""eval_ui.stats against the reference libraries called directly and against values worked out by hand."""

from __future__ import annotations

import doctest
import importlib
import math
import pkgutil

import krippendorff
import numpy as np
import pandas as pd
import pytest
import scipy.stats
import statsmodels.api as sm
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters, cohens_kappa
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss_kappa

from eval_ui import stats
from eval_ui.stats import (
    ELO_SCALE,
    Bootstrap,
    bradley_terry,
    correlation,
    fleiss_kappa,
    judge_agreement,
    krippendorff_alpha,
    majority,
    nhsr_agreement,
    pairwise_table,
    to_reliability_matrix,
    win_tie_loss,
)
from eval_ui.stats.bradley_terry import _bt_fit_many

nan = np.nan


def test_doctests_run_and_pass():
    modules = [
        importlib.import_module(f"eval_ui.stats.{m.name}") for m in pkgutil.iter_modules(stats.__path__)
    ]
    results = [doctest.testmod(module) for module in modules]
    assert sum(r.failed for r in results) == 0
    assert sum(r.attempted for r in results) >= 60


# --------------------------------------------------------------------------- win / tie / loss


def test_win_tie_loss_counts_and_rates_by_hand():
    r = win_tie_loss(["A"] * 6 + ["B"] * 2 + ["tie"] + ["both_bad"] + [None, nan], Bootstrap(200))
    assert (r["n"], r["missing"], r["A"], r["B"], r["tie"], r["both_bad"]) == (10, 2, 6, 2, 1, 1)
    assert (
        r["share_A"] == 0.6 and r["share_B"] == 0.2 and r["share_tie"] == 0.1 and r["share_both_bad"] == 0.1
    )
    assert r["win_share"] == 0.6
    # (6 wins + (1 tie + 1 both_bad) / 2) / 10 = 0.7
    assert r["win_rate"] == pytest.approx(0.7)


def test_win_tie_loss_ci_is_the_percentile_bootstrap_of_the_mean():
    verdicts = ["A", "B", "tie", "A", "both_bad", "A", "B", "A", "tie", "B", "A", "A"]
    r = win_tie_loss(verdicts, Bootstrap(500, seed=7, confidence=0.9))
    # The same resamples drawn by hand: index matrix (n_boot, n) from the seeded generator.
    scores = np.array([stats.SCORE[v] for v in verdicts])
    wins = np.array([v == "A" for v in verdicts], dtype=float)
    pick = np.random.default_rng(7).integers(0, len(verdicts), size=(500, len(verdicts)))
    assert [r["win_rate_low"], r["win_rate_high"]] == pytest.approx(
        np.percentile(scores[pick].mean(axis=1), [5, 95])
    )
    assert [r["win_share_low"], r["win_share_high"]] == pytest.approx(
        np.percentile(wins[pick].mean(axis=1), [5, 95])
    )
    # And scipy's bootstrap of the win rate alone, with the same seed.
    direct = scipy.stats.bootstrap(
        (scores,),
        np.mean,
        n_resamples=500,
        confidence_level=0.9,
        method="percentile",
        rng=np.random.default_rng(7),
    )
    assert [r["win_rate_low"], r["win_rate_high"]] == pytest.approx(list(direct.confidence_interval))


def test_win_tie_loss_bootstrap_is_reproducible_and_contains_the_estimate():
    rng = np.random.default_rng(3)
    verdicts = list(rng.choice(stats.VERDICTS, size=60, p=[0.4, 0.3, 0.2, 0.1]))
    first, again = (
        win_tie_loss(verdicts, Bootstrap(2000, seed=11)),
        win_tie_loss(verdicts, Bootstrap(2000, seed=11)),
    )
    other = win_tie_loss(verdicts, Bootstrap(2000, seed=12))
    assert first == again
    assert (first["win_rate_low"], first["win_rate_high"]) != (other["win_rate_low"], other["win_rate_high"])
    for key in ("win_share", "win_rate"):
        assert first[f"{key}_low"] < first[key] < first[f"{key}_high"]
    narrow = win_tie_loss(verdicts, Bootstrap(2000, seed=11, confidence=0.5))
    assert first["win_rate_high"] - first["win_rate_low"] > narrow["win_rate_high"] - narrow["win_rate_low"]


def test_win_tie_loss_edge_cases():
    empty = win_tie_loss([])
    assert empty["n"] == 0 and empty["win_rate"] is None and empty["share_A"] is None
    assert empty["win_rate_low"] is None and empty["win_share_high"] is None
    single = win_tie_loss(["A"])
    assert single["win_rate"] == 1.0 and single["win_rate_low"] is None
    ties = win_tie_loss(["tie", "both_bad", "tie"], Bootstrap(100))
    assert ties["win_rate"] == 0.5 and ties["win_share"] == 0.0
    assert (ties["win_rate_low"], ties["win_rate_high"]) == (0.5, 0.5)
    assert (ties["win_share_low"], ties["win_share_high"]) == (0.0, 0.0)
    no_boot = win_tie_loss(["A", "B", "A"], Bootstrap(0))
    assert no_boot["win_rate"] == pytest.approx(2 / 3) and no_boot["win_rate_low"] is None
    with pytest.raises(ValueError, match="unknown verdict"):
        win_tie_loss(["A", "a"])
    with pytest.raises(ValueError, match="confidence"):
        win_tie_loss(["A"], Bootstrap(confidence=95))


def test_pairwise_table_normalises_each_unordered_pair_once():
    labels = pd.DataFrame(
        {
            "system_a": ["lawluo", "gpt", "gpt", "lawluo", "qwen", "gpt"],
            "system_b": ["gpt", "lawluo", "lawluo", "qwen", "lawluo", "qwen"],
            "verdict": ["A", "A", "B", "tie", "B", "both_bad"],
        }
    )
    table = pairwise_table(labels, Bootstrap(100))
    assert table[["system_a", "system_b"]].values.tolist() == [
        ["gpt", "lawluo"],
        ["gpt", "qwen"],
        ["lawluo", "qwen"],
    ]
    gpt_lawluo = table.iloc[0]
    # Rows as (gpt, lawluo): lawluo-A → B; gpt-A → A; gpt-B → B.
    assert (gpt_lawluo["n"], gpt_lawluo["A"], gpt_lawluo["B"], gpt_lawluo["tie"]) == (3, 1, 2, 0)
    lawluo_qwen = table.iloc[2]
    # (lawluo, qwen) tie, and qwen-B (qwen loses) → lawluo wins: A = 1, tie = 1, win rate 0.75.
    assert (lawluo_qwen["A"], lawluo_qwen["tie"], lawluo_qwen["win_rate"]) == (1, 1, 0.75)
    assert table.iloc[1]["both_bad"] == 1


def test_pairwise_table_edge_cases():
    empty = pairwise_table(pd.DataFrame({"system_a": [], "system_b": [], "verdict": []}))
    assert empty.empty and {"system_a", "win_rate", "win_rate_low"} <= set(empty.columns)
    with pytest.raises(ValueError, match="itself"):
        pairwise_table(pd.DataFrame({"system_a": ["x"], "system_b": ["x"], "verdict": ["A"]}))
    with pytest.raises(ValueError, match="missing"):
        pairwise_table(pd.DataFrame({"system_a": ["x"], "verdict": ["A"]}))


# --------------------------------------------------------------------------- Bradley–Terry


def labels_of(rows: list[tuple[str, str, str]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["system_a", "system_b", "verdict"])


def test_bradley_terry_two_systems_by_hand():
    # x beats y 3 of 4: 3/4 = 1 / (1 + exp(-(b_x - b_y))) → b_x - b_y = ln 3.
    three_of_four = labels_of([("x", "y", "A"), ("y", "x", "B"), ("x", "y", "A"), ("x", "y", "B")])
    r = bradley_terry(three_of_four, Bootstrap(100), reference="y").set_index("system")
    assert r.loc["x", "rating"] == pytest.approx(math.log(3), abs=1e-6)
    assert r.loc["y", "rating"] == 0.0
    assert r.loc["x", "elo"] == pytest.approx(1000 + 400 / math.log(10) * math.log(3), abs=1e-4)
    assert (r.loc["x", "n"], r.loc["x", "score"], r.loc["y", "score"]) == (4, 3.0, 1.0)
    # Ties (and both_bad) are half a win: 2 wins, 1 tie, 1 loss → 2.5 / 4 → ln(2.5 / 1.5) = ln(5/3).
    for half in ("tie", "both_bad"):
        r = bradley_terry(
            labels_of([("x", "y", "A")] * 2 + [("x", "y", half), ("x", "y", "B")]), Bootstrap(0)
        )
        rating = r.set_index("system")["rating"]
        assert rating["x"] - rating["y"] == pytest.approx(math.log(5 / 3), abs=1e-6)
        assert rating.sum() == pytest.approx(0.0, abs=1e-12)  # centred


def random_comparisons(strength: np.ndarray, n: int, seed: int, tie_share: float = 0.0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    k = len(strength)
    a = rng.integers(0, k, size=n)
    b = (a + rng.integers(1, k, size=n)) % k
    p_a = 1 / (1 + np.exp(strength[b] - strength[a]))
    verdict = np.where(rng.random(n) < p_a, "A", "B").astype(object)
    verdict[rng.random(n) < tie_share] = "tie"
    return labels_of([(f"s{x}", f"s{y}", v) for x, y, v in zip(a, b, verdict, strict=True)])


def test_bradley_terry_matches_statsmodels_logit_on_expanded_ties_and_scipy_likelihood():
    df = random_comparisons(np.array([0.0, 0.4, -0.3, 0.9]), n=300, seed=5, tie_share=0.2)
    ours = bradley_terry(df, Bootstrap(0), reference="s0").set_index("system")["rating"].sort_index()
    systems = sorted(set(df.system_a) | set(df.system_b))
    # Logit cannot take an outcome of 0.5: a tie becomes one win plus one loss, each decisive
    # comparison is doubled to keep the likelihood proportional (2 × (½ log p + ½ log(1 − p))).
    rows, y = [], []
    for a, b, v in df.itertuples(index=False):
        x = np.zeros(len(systems))
        x[systems.index(a)], x[systems.index(b)] = 1, -1
        outcomes = {"A": [1, 1], "B": [0, 0], "tie": [1, 0]}[v]
        rows += [x[1:], x[1:]]
        y += outcomes
    logit = sm.Logit(np.array(y), np.array(rows)).fit(disp=0)
    assert ours.iloc[1:].to_numpy() == pytest.approx(logit.params, abs=1e-6)

    # The same maximum on the log-likelihood written out, maximised by scipy.
    i = df.system_a.map(systems.index).to_numpy()
    j = df.system_b.map(systems.index).to_numpy()
    s = df.verdict.map(stats.SCORE).to_numpy()

    def negative_log_likelihood(free: np.ndarray) -> float:
        beta = np.concatenate([[0.0], free])
        d = beta[i] - beta[j]
        return float(np.sum(s * np.logaddexp(0, -d) + (1 - s) * np.logaddexp(0, d)))

    best = scipy.optimize.minimize(negative_log_likelihood, np.zeros(len(systems) - 1), method="BFGS")
    assert ours.iloc[1:].to_numpy() == pytest.approx(best.x, abs=1e-4)


def test_bradley_terry_recovers_known_strengths():
    truth = np.array([-1.0, -0.5, 0.0, 0.5, 1.0])  # already centred
    df = random_comparisons(truth, n=4000, seed=1)
    r = bradley_terry(df, Bootstrap(40, seed=2)).set_index("system").loc[[f"s{x}" for x in range(5)]]
    assert list(r.sort_values("rating").index) == ["s0", "s1", "s2", "s3", "s4"]
    assert r["rating"].to_numpy() == pytest.approx(truth, abs=0.15)
    assert (r["rating_low"] < r["rating"]).all() and (r["rating"] < r["rating_high"]).all()
    assert r["elo"].to_numpy() == pytest.approx(ELO_SCALE * r["rating"].to_numpy() + 1000)
    assert r.attrs["n_boot_used"] == 40 and r.attrs["n_comparisons"] == 4000


def test_bradley_terry_bootstrap_is_reproducible():
    df = random_comparisons(np.array([0.0, 0.5, 1.0]), n=150, seed=4, tie_share=0.1)
    first, again = bradley_terry(df, Bootstrap(60, seed=9)), bradley_terry(df, Bootstrap(60, seed=9))
    pd.testing.assert_frame_equal(first, again)
    other = bradley_terry(df, Bootstrap(60, seed=10))
    assert not np.allclose(first["rating_low"], other["rating_low"])
    assert first["rating"].to_numpy() == pytest.approx(other["rating"].to_numpy())


def test_bradley_terry_without_a_finite_mle():
    # y never wins or ties (Ford 1957): the likelihood grows without bound as b_x - b_y → ∞.
    r = bradley_terry(labels_of([("x", "y", "A"), ("y", "x", "B")]), Bootstrap(20))
    assert r["rating"].isna().all() and "Ford" in r.attrs["note"]
    # Two groups never compared with each other.
    r = bradley_terry(labels_of([("x", "y", "A"), ("x", "y", "B"), ("z", "w", "A"), ("z", "w", "B")]))
    assert r["rating"].isna().all() and r.attrs["n_boot_used"] == 0


def test_bradley_terry_edge_cases():
    empty = bradley_terry(labels_of([]))
    assert empty.empty and empty.attrs["n_comparisons"] == 0 and "rating" in empty.columns
    only_missing = bradley_terry(labels_of([("x", "y", None)]))
    assert only_missing.empty and only_missing.attrs["n_comparisons"] == 0
    with pytest.raises(ValueError, match="reference"):
        bradley_terry(labels_of([("x", "y", "A"), ("x", "y", "B")]), reference="z")


# --------------------------------------------------------------------------- NHSR vs humans


def test_majority():
    assert majority([True, True, False]) is True
    assert majority([False, False, True, None]) is False
    assert majority([True, False]) is None
    assert majority([None]) is None and majority([]) is None
    assert majority([1, 1.0, 0, np.True_]) is True  # 0/1 from a CSV or numpy count as labels
    for bad in (["yes"], [2], [0.5]):
        with pytest.raises(ValueError, match="bool label"):
            majority(bad)


def test_nhsr_agreement_two_by_two_by_hand_and_against_sklearn():
    # Table auto × human: (T,T) 20, (T,F) 5, (F,T) 10, (F,F) 15; n = 50.
    # p_o = 35/50 = .7; auto yes 25/50 = .5, human yes 30/50 = .6; p_e = .5·.6 + .5·.4 = .5;
    # kappa = (.7 − .5) / (1 − .5) = 0.4.
    auto = [True] * 25 + [False] * 25
    human = [True] * 20 + [False] * 5 + [True] * 10 + [False] * 15
    r = nhsr_agreement(auto, human)
    assert r["n"] == 50 and r["accuracy"] == 0.7 and r["kappa"] == pytest.approx(0.4)
    assert r["confusion"] == {True: {True: 20, False: 5}, False: {True: 10, False: 15}}
    assert r["kappa"] == pytest.approx(cohen_kappa_score(auto, human))


def test_nhsr_agreement_random_against_both_libraries():
    rng = np.random.default_rng(0)
    human = rng.random(200) < 0.3
    auto = np.where(rng.random(200) < 0.8, human, ~human)
    r = nhsr_agreement(list(auto), list(human))
    assert r["kappa"] == pytest.approx(cohen_kappa_score(auto, human))
    table = pd.crosstab(auto, human).to_numpy()
    assert r["kappa"] == pytest.approx(cohens_kappa(table, return_results=False))
    assert r["accuracy"] == pytest.approx(np.mean(auto == human))


def test_nhsr_agreement_edge_cases():
    empty = nhsr_agreement([], [])
    assert empty["n"] == 0 and empty["accuracy"] is None and empty["kappa"] is None
    dropped = nhsr_agreement([True, None, False], [True, False, None])
    assert dropped["n"] == 1 and dropped["dropped"] == 2 and dropped["accuracy"] == 1.0
    same = nhsr_agreement([True, True], [True, True])
    assert same["accuracy"] == 1.0 and same["kappa"] is None and "undefined" in same["note"]
    # A constant checker against varied humans: p_o = p_e, kappa = 0 (defined).
    assert nhsr_agreement([True, True, True], [True, False, True])["kappa"] == pytest.approx(0.0)
    with pytest.raises(ValueError, match="same length"):
        nhsr_agreement([True], [True, False])


# --------------------------------------------------------------------------- correlation


def test_correlation_against_scipy():
    rng = np.random.default_rng(1)
    auto = rng.normal(size=40)
    human = auto + rng.normal(size=40)
    auto_with_gaps = [*auto, None, 3.0]
    human_with_gaps = [*human, 2.0, nan]
    r = correlation(auto_with_gaps, human_with_gaps, confidence=0.9)
    assert r["n"] == 40 and r["dropped"] == 2
    pearson = scipy.stats.pearsonr(auto, human)
    assert r["pearson"] == pytest.approx(pearson.statistic) and r["pearson_p"] == pytest.approx(
        pearson.pvalue
    )
    ci = pearson.confidence_interval(confidence_level=0.9)
    assert (r["pearson_low"], r["pearson_high"]) == pytest.approx((ci.low, ci.high))
    # Pearson's Fisher-z interval by hand: tanh(atanh r ± z_.95 / √(n − 3)).
    z, half = math.atanh(r["pearson"]), scipy.stats.norm.ppf(0.95) / math.sqrt(37)
    assert (r["pearson_low"], r["pearson_high"]) == pytest.approx((math.tanh(z - half), math.tanh(z + half)))
    spearman = scipy.stats.spearmanr(auto, human)
    assert r["spearman"] == pytest.approx(spearman.statistic)
    assert r["spearman_p"] == pytest.approx(spearman.pvalue)
    # Bonett & Wright (2000): SE = √((1 + ρ²/2) / (n − 3)).
    rho = r["spearman"]
    half = scipy.stats.norm.ppf(0.95) * math.sqrt((1 + rho**2 / 2) / 37)
    expected = (math.tanh(math.atanh(rho) - half), math.tanh(math.atanh(rho) + half))
    assert (r["spearman_low"], r["spearman_high"]) == pytest.approx(expected)
    for name in ("pearson", "spearman"):
        assert r[f"{name}_low"] < r[name] < r[f"{name}_high"]
    wide = correlation(auto, human, confidence=0.99)
    assert wide["spearman_high"] - wide["spearman_low"] > r["spearman_high"] - r["spearman_low"]


def test_correlation_worked_example_by_hand():
    # x = 1, 2, 3, 4; y = 2, 4, 6, 9. Pearson: x̄ = 2.5, ȳ = 5.25; Σdx·dy = 11.5, Σdx² = 5,
    # Σdy² = 26.75; r = 11.5 / √(5 · 26.75) = 0.99431. Ranks agree exactly: ρ = 1 → CI (1, 1).
    r = correlation([1, 2, 3, 4], [2, 4, 6, 9])
    assert r["pearson"] == pytest.approx(11.5 / math.sqrt(5 * 26.75))
    assert r["spearman"] == pytest.approx(1.0)
    assert (r["spearman_low"], r["spearman_high"]) == (1.0, 1.0)


def test_correlation_edge_cases():
    empty = correlation([], [])
    assert empty["n"] == 0 and empty["pearson"] is None and empty["spearman_low"] is None and empty["note"]
    two = correlation([1, 2, None], [1, 2, 3])
    assert two["n"] == 2 and two["spearman"] is None and "at least 3" in two["note"]
    constant = correlation([1, 2, 3, 4], [5, 5, 5, 5])
    assert constant["n"] == 4 and constant["pearson"] is None and "constant" in constant["note"]
    three = correlation([1, 2, 3], [1, 3, 2])
    assert three["spearman"] == pytest.approx(0.5)
    assert (three["spearman_low"], three["spearman_high"]) == (-1.0, 1.0)
    assert (three["pearson_low"], three["pearson_high"]) == pytest.approx((-1.0, 1.0))


# --------------------------------------------------------------------------- judge vs humans


def test_judge_agreement_by_hand():
    judge = ["A", "A", "B", "tie", "B", "A", None]
    human = ["A", "B", "B", "tie", "both_bad", "tie", "A"]
    swapped = ["A", "B", "B", "A", "B", None, "A"]
    r = judge_agreement(judge, human, judge_swapped=swapped)
    # Six pairs kept (both_bad → tie): (A,A) (A,B) (B,B) (tie,tie) (B,tie) (A,tie) → 3 of 6 match.
    assert (r["n_with_tie"], r["agreement_with_tie"], r["dropped"]) == (6, 0.5, 1)
    # Without ties: (A,A) (A,B) (B,B) → 2 of 3.
    assert r["n_without_tie"] == 3 and r["agreement_without_tie"] == pytest.approx(2 / 3)
    # Consistency over items with both judge verdicts (1–5): A=A, A≠B, B=B, tie≠A, B=B → 3 of 5.
    assert r["n_consistency"] == 5 and r["self_consistency"] == pytest.approx(0.6)
    assert r["confusion"]["B"]["tie"] == 1 and r["confusion"]["A"]["B"] == 1


def test_judge_agreement_edge_cases():
    empty = judge_agreement([], [])
    assert empty["n_with_tie"] == 0 and empty["agreement_with_tie"] is None
    assert empty["agreement_without_tie"] is None and empty["self_consistency"] is None
    ties = judge_agreement(["tie", "A"], ["A", "both_bad"])
    assert ties["agreement_with_tie"] == 0.0 and ties["n_without_tie"] == 0
    assert ties["agreement_without_tie"] is None
    with pytest.raises(ValueError, match="same length"):
        judge_agreement(["A"], ["A"], judge_swapped=["A", "B"])


# --------------------------------------------------------------------------- Krippendorff's alpha


# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", the example with 4 observers,
# 12 units and missing values; published α: nominal 0.743, interval 0.849.
KRIPPENDORFF_2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
    [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
]


def test_krippendorff_alpha_on_the_published_example():
    table = pd.DataFrame(KRIPPENDORFF_2011, index=list("ABCD"), columns=range(1, 13))
    nominal = krippendorff_alpha(table, "nominal")
    interval = krippendorff_alpha(table, "interval")
    assert nominal["alpha"] == pytest.approx(0.743, abs=5e-4)
    assert interval["alpha"] == pytest.approx(0.849, abs=5e-4)
    assert nominal["alpha"] == pytest.approx(
        krippendorff.alpha(reliability_data=KRIPPENDORFF_2011, level_of_measurement="nominal")
    )
    # Unit 12 has one value and is not pairable: 11 items, 40 values in them.
    assert (nominal["n_items"], nominal["n_pairable"], nominal["n_annotators"]) == (11, 40, 4)
    # Nominal labels as strings are encoded: same α.
    words = table.apply(lambda col: col.map({1: "one", 2: "two", 3: "three", 4: "four", 5: "five"}))
    assert krippendorff_alpha(words, "nominal")["alpha"] == pytest.approx(nominal["alpha"])


def test_krippendorff_alpha_random_against_the_package_and_by_hand():
    rng = np.random.default_rng(2)
    scores = rng.integers(0, 11, size=(4, 30)).astype(float)
    scores[rng.random(scores.shape) < 0.3] = nan
    table = pd.DataFrame(scores)
    for level in ("nominal", "interval"):
        assert krippendorff_alpha(table, level)["alpha"] == pytest.approx(
            krippendorff.alpha(reliability_data=scores, level_of_measurement=level)
        )
    # Two coders, 4 items: 0 0 1 1 / 0 1 1 1. o00 = 2, o01 = o10 = 1, o11 = 4; n0 = 3, n1 = 5, n = 8;
    # α = 1 − (n − 1)(o01 + o10) / (2 n0 n1) = 1 − 7·2/30 = 8/15.
    tiny = pd.DataFrame([[False, False, True, True], [False, True, True, True]])
    assert krippendorff_alpha(tiny, "nominal")["alpha"] == pytest.approx(8 / 15)


def test_reliability_matrix_from_long_labels():
    long = pd.DataFrame(
        {
            "annotator": ["u1", "u1", "u2", "u2", "u3", "u3"],
            "item": ["q1", "q2", "q1", "q2", "q1", "q3"],
            "verdict": ["A", "B", "A", "tie", "B", None],
        }
    )
    matrix = to_reliability_matrix(long, "verdict")
    assert list(matrix.index) == ["u1", "u2", "u3"] and list(matrix.columns) == ["q1", "q2"]
    assert matrix.loc["u3", "q1"] == "B" and pd.isna(matrix.loc["u3", "q2"])
    # q1: A, A, B and q2: B, tie. Nominal α by hand: values A A B B tie, n = 5.
    # Coincidences: q1 (m = 3) gives o_AA = 2/2 = 1, o_AB = o_BA = 2/2 = 1; q2 (m = 2): o_Btie = o_tieB = 1.
    # n_A = 2, n_B = 2, n_tie = 1; disagreeing o = 4; Σ_{c≠k} n_c n_k = 25 − (4 + 4 + 1) = 16.
    # α = 1 − (n − 1)·4 / 16 = 1 − 4·4/16 = 0.
    assert krippendorff_alpha(matrix, "nominal")["alpha"] == pytest.approx(0.0, abs=1e-12)
    with pytest.raises(ValueError, match="repeated"):
        to_reliability_matrix(pd.concat([long, long.iloc[:1]]), "verdict")


def test_krippendorff_alpha_edge_cases():
    empty = krippendorff_alpha(pd.DataFrame(), "nominal")
    assert empty["alpha"] is None and empty["n_items"] == 0 and empty["note"]
    lonely = krippendorff_alpha(pd.DataFrame([[1.0, nan], [nan, 2.0]]), "interval")
    assert lonely["alpha"] is None and "two or more" in lonely["note"]
    constant = krippendorff_alpha(pd.DataFrame([[3.0, 3.0, 4.0], [3.0, 3.0, nan]]), "interval")
    assert constant["alpha"] is None and "undefined" in constant["note"]
    with pytest.raises(ValueError, match="numeric"):
        krippendorff_alpha(pd.DataFrame([["A", "B"], ["A", "A"]]), "interval")
    with pytest.raises(ValueError, match="level"):
        krippendorff_alpha(pd.DataFrame([[1, 2]]), "ordinal")


# --------------------------------------------------------------------------- Fleiss' kappa


def long_labels(per_item: dict[str, list]) -> pd.DataFrame:
    rows = [(f"u{n}", item, v) for item, values in per_item.items() for n, v in enumerate(values)]
    return pd.DataFrame(rows, columns=["annotator", "item", "label"])


def test_fleiss_kappa_by_hand():
    # Items × (A, B, tie) counts with 4 raters: (4,0,0) (2,2,0) (1,1,2) (0,4,0).
    # P_i = (Σ n_ij² − 4) / 12: 1, 4/12, 2/12, 1 → P̄ = (12 + 4 + 2 + 12) / 48 = 30/48 = 0.625.
    # p_A = 7/16, p_B = 7/16, p_tie = 2/16 → P_e = (49 + 49 + 4) / 256 = 102/256.
    # κ = (0.625 − 102/256) / (1 − 102/256) = (160 − 102) / (256 − 102) = 58/154.
    data = {"q1": list("AAAA"), "q2": list("AABB"), "q3": ["A", "B", "tie", "tie"], "q4": list("BBBB")}
    r = fleiss_kappa(long_labels(data), "label")
    assert r["kappa"] == pytest.approx(58 / 154)
    assert (r["n_items_used"], r["n_items"], r["raters_per_item"]) == (4, 4, 4)
    assert set(r["categories"]) == {"A", "B", "tie"}


def test_fleiss_kappa_uses_items_with_the_modal_number_of_raters():
    rng = np.random.default_rng(3)
    codes = rng.integers(0, 3, size=(25, 3))
    data = {f"q{n}": list(row) for n, row in enumerate(codes)}
    data |= {"odd1": [0, 1], "odd2": [2, 2, 1, 0], "single": [1]}
    r = fleiss_kappa(long_labels(data), "label")
    assert (r["n_items_used"], r["n_items"], r["raters_per_item"]) == (25, 28, 3)
    assert "25 of 28" in r["note"]
    table, _ = aggregate_raters(codes)
    assert r["kappa"] == pytest.approx(sm_fleiss_kappa(table, method="fleiss"))
    # Equally common counts: the larger number of raters wins.
    r = fleiss_kappa(long_labels({"a": [1, 1], "b": [1, 0], "c": [1, 1, 0], "d": [0, 0, 0]}), "label")
    assert r["raters_per_item"] == 3 and r["n_items_used"] == 2


def test_fleiss_kappa_edge_cases():
    empty = fleiss_kappa(pd.DataFrame({"annotator": [], "item": [], "label": []}), "label")
    assert empty["kappa"] is None and empty["n_items"] == 0 and empty["n_items_used"] == 0
    single = fleiss_kappa(long_labels({"q1": [True], "q2": [False]}), "label")
    assert single["kappa"] is None and single["n_items"] == 2 and "two or more" in single["note"]
    same = fleiss_kappa(long_labels({"q1": [True, True], "q2": [True, True]}), "label")
    assert same["kappa"] is None and same["n_items_used"] == 2 and "undefined" in same["note"]
    with pytest.raises(ValueError, match="repeated"):
        fleiss_kappa(long_labels({"q1": [1, 0]}).pipe(lambda d: pd.concat([d, d])), "label")


# --------------------------------------------------------------------------- intervals and shared resamples


@pytest.mark.parametrize(("x", "n"), [(8, 10), (0, 12), (12, 12), (1, 3), (37, 250)])
@pytest.mark.parametrize("confidence", [0.9, 0.95])
def test_wilson_interval_matches_statsmodels(x, n, confidence):
    from statsmodels.stats.proportion import proportion_confint

    expected = proportion_confint(x, n, alpha=1 - confidence, method="wilson")
    assert stats.wilson_interval(x, n, confidence) == pytest.approx(expected)


def test_wilson_interval_by_hand_and_edge_cases():
    # 8 of 10 at z = 1.959964: centre (0.8 + 0.192073) / 1.384146 = 0.716740,
    # half-width 1.416010 · √(0.016 + 0.0096036) = 0.226578.
    low, high = stats.wilson_interval(8, 10)
    assert (low, high) == pytest.approx((0.716740 - 0.226578, 0.716740 + 0.226578), abs=1e-6)
    assert stats.wilson_interval(0, 0) == (None, None)
    with pytest.raises(ValueError, match="confidence"):
        stats.wilson_interval(1, 2, confidence=1.5)


def test_ratio_bootstrap_resamples_whole_groups():
    # Three items: (hits, labels) = (2, 2), (0, 2), (1, 1). Resampling by hand with the same generator:
    # counts[b, u] = how often item u is drawn in resample b.
    hits, labels, groups = [1, 1, 0, 0, 1], [1, 1, 1, 1, 1], ["q1", "q1", "q2", "q2", "q3"]
    r = stats.ratio_bootstrap(hits, labels, Bootstrap(400, seed=3, confidence=0.9), groups=groups)
    assert r["value"] == pytest.approx(3 / 5) and r["n_units"] == 3
    pick = np.random.default_rng(3).integers(0, 3, size=(400, 3))
    counts = np.stack([(pick == u).sum(axis=1) for u in range(3)], axis=1)
    draws = (counts @ [2, 0, 1]) / (counts @ [2, 2, 1])
    assert (r["low"], r["high"]) == pytest.approx(tuple(np.percentile(draws, [5, 95])))
    # The same as pre-summed per item, and reproducible; a different seed moves the interval.
    summed = stats.ratio_bootstrap([2, 0, 1], [2, 2, 1], Bootstrap(400, seed=3, confidence=0.9))
    assert (summed["low"], summed["high"]) == (r["low"], r["high"])
    other = stats.ratio_bootstrap(hits, labels, Bootstrap(400, seed=4, confidence=0.9), groups=groups)
    assert (other["low"], other["high"]) != (r["low"], r["high"])
    assert stats.ratio_bootstrap([1], [1])["low"] is None  # one unit: no interval


def test_a_shared_resampler_gives_every_statistic_the_same_resampled_items():
    items = [f"q{n}" for n in range(30)]
    resampler = stats.Resampler(items, n_boot=300, seed=5)
    rng = np.random.default_rng(0)
    hits = rng.integers(0, 2, size=60).astype(float)
    groups = [items[n // 2] for n in range(60)]  # two labels per item
    shared = stats.ratio_bootstrap(hits, np.ones(60), Bootstrap(resampler=resampler), groups=groups)
    # By hand: the resampler's counts times per-item sums.
    per_item = np.array([hits[2 * n] + hits[2 * n + 1] for n in range(30)])
    draws = (resampler.counts @ per_item) / (resampler.counts @ np.full(30, 2.0))
    assert (shared["low"], shared["high"]) == pytest.approx(
        tuple(np.percentile(draws, [2.5, 97.5])), abs=1e-6
    )
    # A statistic on a subset of the items takes, in each resample, the drawn items of the subset.
    subset = stats.ratio_bootstrap(hits[:20], np.ones(20), Bootstrap(resampler=resampler), groups=groups[:20])
    counts = resampler.counts[:, :10]
    sub_draws = (counts @ per_item[:10]) / (counts @ np.full(10, 2.0))
    assert (subset["low"], subset["high"]) == pytest.approx(
        tuple(np.percentile(sub_draws[np.isfinite(sub_draws)], [2.5, 97.5])), abs=1e-6
    )
    with pytest.raises(ValueError, match="not one of the resampled units"):
        resampler.sums([[1.0]], ["elsewhere"])


def test_win_tie_loss_with_groups_resamples_items():
    verdicts = ["A", "A", "B", "tie", "A", "B", "both_bad", "A"]
    groups = ["q1", "q1", "q2", "q2", "q3", "q3", "q4", "q4"]
    r = win_tie_loss(verdicts, Bootstrap(500, seed=2), groups=groups)
    assert r["n_units"] == 4 and r["win_rate"] == pytest.approx((4 + 1) / 8)
    pick = np.random.default_rng(2).integers(0, 4, size=(500, 4))
    counts = np.stack([(pick == u).sum(axis=1) for u in range(4)], axis=1)
    scores = counts @ [2.0, 0.5, 1.0, 1.5]  # per item: A+A, B+tie, A+B, both_bad+A
    assert (r["win_rate_low"], r["win_rate_high"]) == pytest.approx(
        tuple(np.percentile(scores / (counts @ np.full(4, 2.0)), [2.5, 97.5]))
    )


# --------------------------------------------------------------------------- Bradley–Terry, paired test


def test_bradley_terry_batched_newton_fits_each_data_set_as_statsmodels_does():
    sets = [random_comparisons(np.array([0.0, 0.7, -0.4]), n=120, seed=s, tie_share=0.15) for s in range(4)]
    systems = ["s0", "s1", "s2"]
    wins = np.zeros((4, 3, 3))
    for b, df in enumerate(sets):
        for a, c, v in df.itertuples(index=False):
            i, j = systems.index(a), systems.index(c)
            wins[b, i, j] += stats.SCORE[v]
            wins[b, j, i] += 1 - stats.SCORE[v]
    together = _bt_fit_many(wins)
    for b, df in enumerate(sets):
        alone = bradley_terry(df, Bootstrap(0), reference="s0").set_index("system")["rating"]
        assert together[b] == pytest.approx(alone.loc[systems].to_numpy(), abs=1e-8)
    # A data set without a finite MLE (s2 never scores) is NaN; the others are still fitted.
    wins[1, 2, :] = 0
    fitted = _bt_fit_many(wins)
    assert np.isnan(fitted[1]).all() and np.isfinite(fitted[[0, 2, 3]]).all()


def test_bradley_terry_resampling_items_keeps_the_estimate_and_is_reproducible():
    df = random_comparisons(np.array([0.0, 0.5, 1.0]), n=200, seed=7, tie_share=0.1)
    df["item_id"] = [f"q{n // 2}" for n in range(len(df))]  # two labels per item
    by_item = bradley_terry(df, Bootstrap(100, seed=1), group_col="item_id")
    by_label = bradley_terry(df, Bootstrap(100, seed=1))
    assert by_item["rating"].to_numpy() == pytest.approx(by_label["rating"].to_numpy())
    pd.testing.assert_frame_equal(by_item, bradley_terry(df, Bootstrap(100, seed=1), group_col="item_id"))
    assert (by_item["rating_low"] < by_item["rating"]).all() and (
        by_item["rating"] < by_item["rating_high"]
    ).all()


def paired_labels() -> pd.DataFrame:
    """x beats y on 30 of 40 items, each labelled twice (the two labels of an item agree)."""
    rows = []
    for n in range(40):
        verdict = "A" if n < 30 else "B"
        rows += [(f"q{n}", "x", "y", verdict)] * 2
    return pd.DataFrame(rows, columns=["item_id", "system_a", "system_b", "verdict"])


def test_paired_bootstrap_by_hand():
    df = paired_labels()
    r = stats.paired_bootstrap(df, "x", "y", Bootstrap(1000, seed=0))
    # x wins 60 of 80 comparisons: 0.75; y 0.25; difference 0.5, over 40 items.
    assert (r["win_rate_first"], r["win_rate_second"], r["difference"]) == (0.75, 0.25, 0.5)
    assert (r["n_items"], r["met"], r["n_first"]) == (40, 40, 80)
    # The same resamples by hand: items drawn with replacement, both labels of an item together.
    pick = np.random.default_rng(0).integers(0, 40, size=(1000, 40))
    wins = (pick < 30).sum(axis=1) / 40
    draws = wins - (1 - wins)
    assert (r["low"], r["high"]) == pytest.approx(tuple(np.percentile(draws, [2.5, 97.5])))
    # p: resampled differences at least as far from 0.5 as 0.5 is from 0 — none — so 1 / 1001.
    assert r["p_value"] == pytest.approx((1 + np.sum(np.abs(draws - 0.5) >= 0.5)) / 1001)
    assert r["p_value"] < 0.01
    # Swapping the systems negates the difference and keeps the p-value.
    swapped = stats.paired_bootstrap(df, "y", "x", Bootstrap(1000, seed=0))
    assert swapped["difference"] == -0.5 and swapped["p_value"] == r["p_value"]


def test_paired_bootstrap_no_difference_and_edge_cases():
    even = pd.DataFrame(
        [(f"q{n}", "x", "y", "A" if n % 2 else "B") for n in range(20)],
        columns=["item_id", "system_a", "system_b", "verdict"],
    )
    r = stats.paired_bootstrap(even, "x", "y", Bootstrap(300, seed=0))
    assert r["difference"] == 0.0 and r["p_value"] == 1.0 and r["low"] < 0 < r["high"]
    missing = stats.paired_bootstrap(even, "x", "z", Bootstrap(100))
    assert missing["difference"] is None and "z" in missing["note"]
    one_item = stats.paired_bootstrap(even.iloc[:1], "x", "y", Bootstrap(100))
    assert (
        one_item["difference"] == -1.0
        and one_item["p_value"] is None
        and "2 labelled items" in one_item["note"]
    )
    never_met = pd.DataFrame(
        [("q1", "x", "z", "A"), ("q2", "y", "z", "B"), ("q3", "x", "z", "tie")],
        columns=["item_id", "system_a", "system_b", "verdict"],
    )
    apart = stats.paired_bootstrap(never_met, "x", "y", Bootstrap(100))
    assert apart["met"] == 0 and "never compared" in apart["note"]
    with pytest.raises(ValueError, match="different"):
        stats.paired_bootstrap(even, "x", "x")


# --------------------------------------------------------------------------- agreement between people


def test_annotator_agreement_by_hand_and_finds_the_drifter():
    long = pd.DataFrame(
        {
            "annotator": ["u1", "u2", "u3"] * 3,
            "item": ["q1"] * 3 + ["q2"] * 3 + ["q3"] * 3,
            "verdict": ["A", "A", "B", "B", "B", "A", "tie", "A", "B"],
        }
    )
    r = stats.annotator_agreement(long, "verdict").set_index("annotator")
    # u1: q1 others A, B split; q2 others B, A split; q3 others A, B split → n = 0, split 3. u2 likewise
    # (q3: tie, B). u3: q1 others A, A (u3 says B: disagrees), q2 others B, B (u3 A), q3 tie, A split.
    assert r.loc["u1", ["n", "split"]].tolist() == [0, 3] and r.loc["u2", ["n", "split"]].tolist() == [0, 3]
    assert r.loc["u3", ["shared", "n", "agree", "split"]].tolist() == [3, 2, 0, 1]
    assert pd.isna(r.loc["u1", "agreement"]) and r.loc["u3", "agreement"] == 0.0
    rng = np.random.default_rng(1)
    rows = []
    for n in range(300):
        truth = rng.choice(["A", "B"])
        for annotator in ("u1", "u2", "u3", "drifter"):
            agree = rng.random() < (0.9 if annotator != "drifter" else 0.4)
            rows.append((annotator, f"q{n}", truth if agree else ("B" if truth == "A" else "A")))
    table = stats.annotator_agreement(pd.DataFrame(rows, columns=["annotator", "item", "verdict"]), "verdict")
    table = table.set_index("annotator")
    assert table["agreement"].idxmin() == "drifter"
    assert table.loc["drifter", "high"] < table.drop("drifter")["low"].min()
    low, high = stats.wilson_interval(table.loc["u1", "agree"], table.loc["u1", "n"])
    assert (table.loc["u1", "low"], table.loc["u1", "high"]) == pytest.approx((low, high))


def test_rater_pair_agreement_counts_every_pair_of_annotators():
    rng = np.random.default_rng(4)
    rows = []
    for n in range(40):
        for annotator in rng.choice(["u1", "u2", "u3", "u4"], size=rng.integers(1, 5), replace=False):
            rows.append((annotator, f"q{n}", rng.choice(list(stats.VERDICTS))))
    long = pd.DataFrame(rows, columns=["annotator", "item", "verdict"])
    r = stats.rater_pair_agreement(long, boot=Bootstrap(200))
    # Brute force over every pair of annotators of an item (both_bad counts as tie).
    tie = {"both_bad": "tie"}
    with_tie, without_tie = [], []
    for _, group in long.groupby("item"):
        values = [tie.get(v, v) for v in group["verdict"]]
        for a in range(len(values)):
            for b in range(a + 1, len(values)):
                with_tie.append(values[a] == values[b])
                if "tie" not in (values[a], values[b]):
                    without_tie.append(values[a] == values[b])
    assert r["n_with_tie"] == len(with_tie) and r["agreement_with_tie"] == pytest.approx(np.mean(with_tie))
    assert r["n_without_tie"] == len(without_tie)
    assert r["agreement_without_tie"] == pytest.approx(np.mean(without_tie))
    assert r["agreement_with_tie_low"] <= r["agreement_with_tie"] <= r["agreement_with_tie_high"]
    lonely = stats.rater_pair_agreement(long[long["annotator"] == "u1"], boot=Bootstrap(10))
    assert lonely["agreement_with_tie"] is None and "two or more" in lonely["note"]


def test_judge_agreement_intervals():
    judge = ["A", "A", "B", "tie", "B", "A", "A", "B"]
    human = ["A", "B", "B", "tie", "B", "A", "tie", "A"]
    r = judge_agreement(judge, human)  # independent pairs: Wilson
    assert (r["agreement_with_tie_low"], r["agreement_with_tie_high"]) == pytest.approx(
        stats.wilson_interval(5, 8)
    )
    assert (r["agreement_without_tie_low"], r["agreement_without_tie_high"]) == pytest.approx(
        stats.wilson_interval(4, 6)
    )
    grouped = judge_agreement(
        judge, human, groups=["q1", "q1", "q2", "q2", "q3", "q3", "q4", "q4"], boot=Bootstrap(300)
    )
    assert grouped["agreement_with_tie"] == r["agreement_with_tie"] and grouped["n_items"] == 4
    assert (
        grouped["agreement_with_tie_low"]
        <= grouped["agreement_with_tie"]
        <= grouped["agreement_with_tie_high"]
    )


def test_nhsr_agreement_intervals():
    auto = [True] * 25 + [False] * 25
    human = [True] * 20 + [False] * 5 + [True] * 10 + [False] * 15
    r = nhsr_agreement(auto, human)
    assert (r["accuracy_low"], r["accuracy_high"]) == pytest.approx(stats.wilson_interval(35, 50))
    result = cohens_kappa(np.array([[20, 5], [10, 15]]))
    half = scipy.stats.norm.ppf(0.975) * result.std_kappa
    assert (r["kappa_low"], r["kappa_high"]) == pytest.approx((0.4 - half, 0.4 + half))


# --------------------------------------------------------------------------- Krippendorff's alpha, its interval


class _WholeSample(stats.Resampler):
    """Every "resample" is the data itself: the bootstrap's α formula must then give the package's α."""

    def __init__(self, units, n_boot=3):
        super().__init__(units, n_boot=n_boot)
        self._counts = np.ones((n_boot, len(self.units)))


@pytest.mark.parametrize("level", ["nominal", "interval"])
def test_krippendorff_alpha_bootstrap_formula_reproduces_the_package(level):
    table = pd.DataFrame(KRIPPENDORFF_2011, index=list("ABCD"), columns=range(1, 13))
    r = krippendorff_alpha(table, level, Bootstrap(0, resampler=_WholeSample(range(1, 13))))
    expected = krippendorff.alpha(reliability_data=KRIPPENDORFF_2011, level_of_measurement=level)
    assert r["alpha"] == pytest.approx(expected)
    assert (r["alpha_low"], r["alpha_high"]) == pytest.approx((expected, expected))


def test_krippendorff_alpha_interval_and_long_form():
    rng = np.random.default_rng(6)
    truth = rng.integers(0, 3, size=80)
    rows = []
    for n, t in enumerate(truth):
        for annotator in ("u1", "u2", "u3"):
            if rng.random() < 0.8:
                rows.append((annotator, f"q{n}", int(t) if rng.random() < 0.8 else int(rng.integers(0, 3))))
    long = pd.DataFrame(rows, columns=["annotator", "item", "label"])
    from_table = krippendorff_alpha(to_reliability_matrix(long, "label"), "nominal", Bootstrap(300, seed=2))
    from_long = stats.krippendorff_alpha_long(long, "label", "nominal", boot=Bootstrap(300, seed=2))
    assert from_long["alpha"] == pytest.approx(from_table["alpha"])
    assert (from_long["n_items"], from_long["n_pairable"]) == (
        from_table["n_items"],
        from_table["n_pairable"],
    )
    assert from_long["alpha_low"] < from_long["alpha"] < from_long["alpha_high"]
    assert from_long["n_boot_used"] == 300
    narrow = stats.krippendorff_alpha_long(
        long, "label", "nominal", boot=Bootstrap(300, seed=2, confidence=0.5)
    )
    assert narrow["alpha_high"] - narrow["alpha_low"] < from_long["alpha_high"] - from_long["alpha_low"]
    with pytest.raises(ValueError, match="repeated"):
        stats.krippendorff_alpha_long(pd.concat([long, long.iloc[:1]]), "label", "nominal")


def test_bradley_terry_components_fit_each_connected_set_on_its_own():
    # x–y and z–w were never compared across: one fit would have no finite MLE; per component each has one.
    df = labels_of([("x", "y", "A"), ("y", "x", "B"), ("x", "y", "A"), ("x", "y", "B")])
    df = pd.concat([df, labels_of([("z", "w", "tie"), ("w", "z", "B")])], ignore_index=True)
    assert bradley_terry(df, Bootstrap(0))["rating"].isna().all()
    r = bradley_terry(df, Bootstrap(50), components=True)
    assert r.attrs["components"] == 2 and r.attrs["n_comparisons"] == 6
    by = r.set_index("system")
    assert by.loc["x", "rating"] - by.loc["y", "rating"] == pytest.approx(math.log(3), abs=1e-6)
    assert by.loc["z", "rating"] - by.loc["w", "rating"] == pytest.approx(math.log(3), abs=1e-6)  # 1.5 of 2
    assert (
        by.loc[["x", "y"], "component"].nunique() == 1
        and by.loc["x", "component"] != by.loc["z", "component"]
    )
    alone = bradley_terry(df.iloc[:4], Bootstrap(50)).set_index("system")
    assert by.loc[["x", "y"], "rating"].to_numpy() == pytest.approx(
        alone.loc[["x", "y"], "rating"].to_numpy()
    )
    # A component whose comparisons have no finite MLE (z always beats w) is NaN and named; the other is fitted.
    one_sided = pd.concat([df.iloc[:4], labels_of([("z", "w", "A")])], ignore_index=True)
    r = bradley_terry(one_sided, Bootstrap(0), components=True).set_index("system")
    assert r.loc[["z", "w"], "rating"].isna().all() and r.loc[["x", "y"], "rating"].notna().all()
    assert "component" in r.attrs["note"] and "Ford" in r.attrs["note"]


# --------------------------------------------------------------------------- the checker per verdict (issue 40)


def _label_space(codes):
    """Each checker verdict as the lawyers' label that names it (eval_ui/verdicts.py)."""
    from eval_ui.verdicts import CHECKER_LABEL

    return [CHECKER_LABEL[c] for c in codes]


def test_verdict_agreement_random_against_sklearn_and_by_hand():
    from eval_ui.verdicts import CHECKER_LABEL, STATUTE_HALLUCINATED
    from lawluo.law.verdicts import BY_CODE, VERDICTS

    rng = np.random.default_rng(7)
    n = 400
    checker = list(rng.choice(VERDICTS, size=n))
    lawyers = []
    for verdict in checker:  # mostly the label naming the checker's verdict; some noise, some "wrong"
        r = rng.random()
        if r < 0.6:
            lawyers.append(CHECKER_LABEL[verdict])
        elif r < 0.7:
            lawyers.append("wrong")
        elif r < 0.75:
            lawyers.append(None)
        elif r < 0.78:
            lawyers.append("legacy_unticked")
        else:
            lawyers.append(str(rng.choice(["correct", "wrong_number", "wrong_content", "wrong_version"])))
    result = stats.verdict_agreement(checker, lawyers, boot=Bootstrap(300, seed=1))
    kept = [(c, h) for c, h in zip(checker, lawyers, strict=True) if h not in (None, "legacy_unticked")]
    with_kind = [(c, h) for c, h in kept if h != "wrong"]
    assert (result["n"], result["n_with_kind"]) == (len(kept), len(with_kind))
    assert [row["verdict"] for row in result["rows"]] == list(VERDICTS)
    for row in result["rows"]:
        v = row["verdict"]
        given = [h for c, h in kept if c == v]
        flags = [STATUTE_HALLUCINATED[h] == BY_CODE[v].hallucinated for h in given]
        exact = [h == CHECKER_LABEL[v] for c, h in with_kind if c == v]
        assert (row["statutes"], row["with_kind"]) == (len(given), len(exact))
        assert row["same_hallucinated"] == pytest.approx(np.mean(flags))
        assert (row["same_hallucinated_low"], row["same_hallucinated_high"]) == pytest.approx(
            stats.wilson_interval(sum(flags), len(flags))
        )
        assert row["same_verdict"] == pytest.approx(np.mean(exact))
        # κ one-vs-rest in the lawyers' categories, as sklearn computes it
        auto = [a == row["label"] for a in _label_space([c for c, _ in with_kind])]
        human = [h == row["label"] for _, h in with_kind]
        assert row["kappa"] == pytest.approx(cohen_kappa_score(auto, human))
        assert row["kappa_low"] <= row["kappa_high"]
    by_code = {row["verdict"]: row for row in result["rows"]}
    assert by_code["verified"]["kappa"] == by_code["no_content"]["kappa"]  # both are 真实 to a lawyer
    assert stats.verdict_agreement(checker, lawyers, boot=Bootstrap(300, seed=1)) == result  # reproducible


def test_verdict_agreement_bootstraps_kappa_over_items_with_the_shared_resampler():
    checker = [
        "verified",
        "wrong_number",
        "verified",
        "not_found",
        "wrong_number",
        "verified",
        "repealed",
        "verified",
    ]
    lawyers = [
        "correct",
        "wrong_number",
        "wrong_number",
        "wrong_not_found",
        "correct",
        "correct",
        "wrong",
        "correct",
    ]
    groups = ["q1", "q1", "q2", "q2", "q3", "q3", "q4", "q4"]
    resampler = stats.Resampler(["q1", "q2", "q3", "q4", "q5"], n_boot=400, seed=2)
    result = stats.verdict_agreement(checker, lawyers, groups, boot=Bootstrap(resampler=resampler))
    row = next(r for r in result["rows"] if r["verdict"] == "wrong_number")
    # By hand: the 7 statutes with a kind (q4's "wrong" left out); per item the sums of (x, y, xy, 1).
    x = [0, 1, 0, 0, 1, 0, 0]  # the checker says wrong_number
    y = [0, 1, 1, 0, 0, 0, 0]  # the lawyers say wrong_number
    items = [0, 0, 1, 1, 2, 2, 3]
    per_item = np.zeros((5, 4))
    for xi, yi, item in zip(x, y, items, strict=True):
        per_item[item] += [xi, yi, xi * yi, 1]
    sums = resampler.counts @ per_item
    xs, ys, both, ns = sums.T
    with np.errstate(divide="ignore", invalid="ignore"):
        p_o = (ns - xs - ys + 2 * both) / ns
        p_e = (xs * ys + (ns - xs) * (ns - ys)) / ns**2
        draws = (p_o - p_e) / (1 - p_e)
    draws = draws[np.isfinite(draws) & ~np.isclose(p_e, 1.0)]
    assert row["kappa"] == pytest.approx(cohen_kappa_score(x, y))
    assert (row["kappa_low"], row["kappa_high"]) == pytest.approx(tuple(np.percentile(draws, [2.5, 97.5])))
    # The shares are bootstrapped over the same items: wrong_number's coarse share is 1/2 (q3 says correct).
    assert row["same_hallucinated"] == pytest.approx(0.5) and row["same_hallucinated_low"] is not None
    repealed = next(r for r in result["rows"] if r["verdict"] == "repealed")
    assert (repealed["statutes"], repealed["same_hallucinated"], repealed["with_kind"]) == (1, 1.0, 0)
    assert repealed["same_verdict"] is None  # its only label, "wrong", names no kind


def test_verdict_agreement_edge_cases():
    empty = stats.verdict_agreement([], [])
    assert empty["n"] == 0 and all(r["statutes"] == 0 and r["kappa"] is None for r in empty["rows"])
    dropped = stats.verdict_agreement(
        ["verified", None, "not_found", "verified"], [None, "correct", "wrong", "legacy_unticked"]
    )
    assert (dropped["n"], dropped["dropped"], dropped["n_with_kind"]) == (1, 3, 0)
    same = stats.verdict_agreement(["verified", "verified"], ["correct", "correct"])
    assert same["rows"][0]["same_verdict"] == 1.0 and same["rows"][0]["kappa"] is None  # κ undefined
    with pytest.raises(ValueError, match="unknown checker verdict"):
        stats.verdict_agreement(["hallucinated"], ["correct"])
    with pytest.raises(ValueError, match="unknown statute label"):
        stats.verdict_agreement(["verified"], ["maybe"])
    with pytest.raises(ValueError, match="same length"):
        stats.verdict_agreement(["verified"], [])


def test_majority_label():
    assert stats.majority_label(["wrong_version", "wrong_version", "wrong_number"]) == "wrong_version"
    assert stats.majority_label(["correct", "correct", "wrong_repealed"]) == "correct"
    assert stats.majority_label([nan, "wrong"]) == "wrong"
    assert stats.majority_label(["legacy_unticked"]) is None
    with pytest.raises(ValueError, match="unknown statute label"):
        stats.majority_label(["maybe"])


def test_majority_labels_of_many_statutes_agree_with_counting_each_by_hand():
    from collections import Counter

    from eval_ui.verdicts import STATUTE_CHECKER_VERDICTS, STATUTE_CODES, STATUTE_HALLUCINATED

    rng = np.random.default_rng(3)
    codes = [None if rng.random() < 0.1 else str(rng.choice(STATUTE_CODES)) for _ in range(3000)]
    groups = list(rng.integers(0, 700, size=3000))
    found = stats.majority_labels(codes, groups)
    for group, label in found.items():
        mine = [c for c, g in zip(codes, groups, strict=True) if g == group]
        flags = [
            STATUTE_HALLUCINATED[c] for c in mine if c is not None and STATUTE_HALLUCINATED[c] is not None
        ]
        side = majority(flags)
        if side is None:
            assert label is None, (group, mine)
            continue
        kinds = Counter(
            c for c in mine if c and STATUTE_HALLUCINATED[c] is side and STATUTE_CHECKER_VERDICTS[c]
        )
        ranked = kinds.most_common()
        expected = ranked[0][0] if ranked and (len(ranked) == 1 or ranked[0][1] > ranked[1][1]) else "wrong"
        assert label == expected, (group, mine)
    assert sorted(found.index) == sorted(set(groups))
