"""The statistics tab's report: how the lawyers are doing, how well they agree, and the systems and metrics.

    report = report_from_store(store, source="raw", auto_hallucinated=..., auto=AutoMetrics.read([...]))
    report.sections                 # [Section(title, table, note, statistics, chart)], as the tab shows them
    report.statistics["judge_s1"]   # Statistic(value, low, high, n, needs): every statistic, value or None
    missing_statistics(report)      # the keys still without a value (each one's ``needs`` says why)

Everything is computed by :mod:`eval_ui.stats` on the current labels of the store. Every rate comes with
an interval: Wilson's for a proportion of independent units, a percentile bootstrap over **items**
(each item's labels resampled together) where an item contributes several labels.

- **Annotators** (always the raw labels): progress (assigned / done / skipped) and each annotator's
  agreement with the majority of the others on shared items, for the verdict and the statute
  labels — who drifts.
- **Systems** (raw or adjudicated labels, ``source``): win / tie / loss per pair; each system's win
  rate; a paired bootstrap test between two systems' win rates (``compare``; default: the pair compared
  directly on the most items, :func:`default_pair`);
  Bradley–Terry ratings.
- **Inter-annotator agreement** (always raw): Krippendorff's α (verdict, statute hallucinated, Rel,
  T_LC) and Fleiss' κ of the verdict; human–human agreement as MT-bench defines S1 (ties included)
  and S2 (ties excluded).
- **NHSR against the lawyers' majority**, per cited statute, counting only explicit 真实 / 有误 labels:
  an unlabelled statute and the migration's ``legacy_unticked`` are missing data, and the report says
  how many were left out and why. NHSR per system as the lawyers and as the checker see it.
- **The checker against the lawyers, per verdict** (:func:`eval_ui.stats.verdict_agreement`): for each
  of the checker's verdicts, how many labelled statutes it was given to, how often the lawyers' majority
  label agrees on hallucinated yes/no and on the verdict itself (their labels name verdicts:
  :data:`eval_ui.verdicts.CHECKER_LABEL`), and Cohen's κ one-vs-rest. It needs the checker's verdicts,
  not only its yes/no: ``auto_hallucinated`` may give either per statute.
- With the automatic results of ``python -m lawluo evaluate`` on the same answers (``details.jsonl``,
  ``pairwise.jsonl``; :class:`AutoMetrics`): Rel and T_LC against the mean human score, and the LLM
  judge against every annotator's verdict, MT-bench's S1 and S2, and its self-consistency. They are
  joined on the question id and system: an item's question id is its id without the
  ``:SYSTEM_A:SYSTEM_B`` suffix that ``python -m eval_ui import --answers`` (and the demo set) give it.

A statistic that cannot be computed yet has the value None and a ``needs`` saying what is missing
("needs an item labelled by 2 annotators"), never NaN or an exception; its section has no chart.
The statistics are in :data:`STATISTICS`, the one list the report, its JSON and the tab read.

Modules: :mod:`.compute` (the report: :func:`report_from_store`, :func:`human_consistency`), :mod:`.specs`
(what it computes, :data:`STATISTICS`), :mod:`.report` (its parts and JSON), one module per family of
sections — :mod:`.annotators`, :mod:`.systems`, :mod:`.nhsr` (the checker), :mod:`.judge` — and
:mod:`.human`, the one place the lawyers' scores (Rel, T_LC) are read; :mod:`.auto` reads the results of
``lawluo evaluate``.
"""

from __future__ import annotations

from .annotators import _inter_annotator as _inter_annotator  # tests/test_annotation_drafts.py calls it
from .auto import AutoMetrics, combined_judge_verdict, question_id
from .compute import human_consistency, report_from_store
from .human import SCORE_NAMES
from .judge import judge_warning
from .nhsr import AutoHallucinated
from .report import Report, Section, Statistic, missing_statistics
from .specs import (
    ADJUDICATED,
    CHARTS,
    DECIMALS,
    LEGACY_UNTICKED,
    N_BOOT,
    NEEDS_PHRASES,
    NOT_YET,
    SECTION_KEYS,
    SOURCES,
    SPECS,
    STATISTICS,
    StatisticSpec,
)
from .systems import default_pair

__all__ = [
    "ADJUDICATED",
    "CHARTS",
    "DECIMALS",
    "LEGACY_UNTICKED",
    "N_BOOT",
    "NEEDS_PHRASES",
    "NOT_YET",
    "SCORE_NAMES",
    "SECTION_KEYS",
    "SOURCES",
    "SPECS",
    "STATISTICS",
    "AutoHallucinated",
    "AutoMetrics",
    "Report",
    "Section",
    "Statistic",
    "StatisticSpec",
    "combined_judge_verdict",
    "default_pair",
    "human_consistency",
    "judge_warning",
    "missing_statistics",
    "question_id",
    "report_from_store",
]
