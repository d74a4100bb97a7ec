"""Human-consistency statistics: lawyers' pairwise verdicts and scores against each other and the metrics.

Pure functions on plain Python sequences or pandas DataFrames; nothing here reads files or plots.
The library that defines a statistic computes it where one does (scipy, statsmodels, ``krippendorff``);
this package cleans the input, encodes labels, handles the empty and degenerate cases (a result with
``n = 0`` and ``None`` values and a ``note``, never an exception) and names the outputs. Bootstrap
resamples are drawn once per statistic as an index matrix and evaluated with array operations (no
Python loop per resample), so a report on thousands of labels takes a fraction of a second. A statistic
with a bootstrap interval takes its options as one :class:`Bootstrap` (resamples, seed, confidence, and
the report's shared :class:`Resampler`).

Pairwise verdicts are ``"A"`` (system_a's answer is better), ``"B"``, ``"tie"`` and ``"both_bad"``,
always in the item's un-swapped orientation. **both_bad counts as a tie everywhere**: neither answer
is preferred, so for a win rate it is half a win for each side (as the judge's draws are in
:mod:`lawluo.metrics.pairwise`, LawLuo §5.1), for Bradley–Terry half a win each, and for agreement
with a judge (who says only A / B / tie) it is "tie". ``None`` or NaN is a missing label and is
skipped (and counted); any other string is an error.

- Intervals (:mod:`.intervals`, :mod:`.bootstrap`): :func:`wilson_interval` (a proportion),
  :func:`ratio_bootstrap` (a ratio of sums over units resampled with replacement: items, keeping each
  item's labels together), :class:`Bootstrap`, :class:`Resampler`.
- Pairwise preferences (:mod:`.pairwise`, :mod:`.bradley_terry`): :func:`win_tie_loss`,
  :func:`pairwise_table`, :func:`paired_bootstrap` (two systems' win rates, a paired test),
  :func:`bradley_terry`.
- Automatic metrics against humans (LegalHalBench §5.6; :mod:`.checker`, :mod:`.correlation`,
  :mod:`.judges`): :func:`nhsr_agreement` and :func:`majority` (NHSR's per-statute verdict),
  :func:`verdict_agreement` and :func:`majority_labels` (each checker verdict against the lawyers'
  statute labels), :func:`correlation` (Rel, T_LC), :func:`judge_agreement` (MT-bench's S1 / S2).
- Inter-annotator agreement (:mod:`.alpha`, :mod:`.agreement`): :func:`krippendorff_alpha` (with
  :func:`to_reliability_matrix`), :func:`fleiss_kappa`, :func:`annotator_agreement` (each annotator
  against the majority of the others: who drifts), :func:`rater_pair_agreement` (human–human S1 / S2).
"""

from __future__ import annotations

from .agreement import annotator_agreement, fleiss_kappa, rater_pair_agreement
from .alpha import krippendorff_alpha, krippendorff_alpha_long, to_reliability_matrix
from .bootstrap import (
    CHUNK_ELEMENTS,
    DEFAULT_BOOT,
    NO_BOOT,
    PAIRWISE_BOOT,
    Bootstrap,
    Resampler,
    ratio_bootstrap,
)
from .bradley_terry import BT_COLUMNS, ELO_BASE, ELO_SCALE, bradley_terry, bradley_terry_components
from .checker import majority, majority_label, majority_labels, nhsr_agreement, verdict_agreement
from .correlation import correlation
from .inputs import FLIP, SCORE, VERDICTS
from .intervals import wilson_interval
from .judges import judge_agreement
from .pairwise import paired_bootstrap, pairwise_table, system_scores, win_tie_loss

__all__ = [
    "BT_COLUMNS",
    "CHUNK_ELEMENTS",
    "DEFAULT_BOOT",
    "ELO_BASE",
    "ELO_SCALE",
    "FLIP",
    "NO_BOOT",
    "PAIRWISE_BOOT",
    "SCORE",
    "VERDICTS",
    "Bootstrap",
    "Resampler",
    "annotator_agreement",
    "bradley_terry",
    "bradley_terry_components",
    "correlation",
    "fleiss_kappa",
    "judge_agreement",
    "krippendorff_alpha",
    "krippendorff_alpha_long",
    "majority",
    "majority_label",
    "majority_labels",
    "nhsr_agreement",
    "paired_bootstrap",
    "pairwise_table",
    "rater_pair_agreement",
    "ratio_bootstrap",
    "system_scores",
    "to_reliability_matrix",
    "verdict_agreement",
    "wilson_interval",
    "win_tie_loss",
]
