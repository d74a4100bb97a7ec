"""What the report computes: every statistic's key, title and what it needs, the sections' and charts' titles,
and the report's settings.

:data:`STATISTICS` is the one list the report, its JSON and the tab read.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import human_scores

#: Row numbers shown in tables are rounded to this many decimals.
DECIMALS = 3
#: Bootstrap resamples of every interval in the report.
N_BOOT = 1000
SOURCES = ("raw", "adjudicated")
LEGACY_UNTICKED = "legacy_unticked"
ADJUDICATED = "adjudicated"
#: What "not enough labels yet" says before each statistic's need (the CLI's and the tests' words; the tab
#: shows ``stats.not_yet`` in the page's language).
NOT_YET = "还不够 Not enough labels yet"


@dataclass(frozen=True)
class StatisticSpec:
    key: str
    title: str
    needs: str  # what it needs, said when it has no value (a more precise reason may replace it)
    auto: bool = False  # needs the automatic results of `lawluo evaluate` (uploaded in the tab)
    #: the catalogue texts of a statistic made from a row of a table (``score_alpha`` for every ``alpha_{key}``
    #: of a human score), filled with ``name``; empty: its own (``stats.stat.{key}``, ``stats.needs.{key}``)
    text: str = ""
    name: str = ""

    @property
    def title_key(self) -> str:
        """The catalogue key of its title (``stats.stat.alpha_verdict``, ``stats.stat.score_alpha``)."""
        return f"stats.stat.{self.text or self.key}"

    @property
    def needs_key(self) -> str:
        """The catalogue key of what it needs (``stats.needs.alpha_verdict``, ``stats.needs.score_alpha``)."""
        return f"stats.needs.{self.text or self.key}"

    @property
    def fields(self) -> dict[str, str]:
        """The fields of its catalogue texts (``{"name": "Rel"}``; none for a statistic of its own)."""
        return {"name": self.name} if self.name else {}


def score_alphas() -> tuple[StatisticSpec, ...]:
    """Krippendorff's α of each human score between the annotators (``alpha_rel``, ``alpha_tlc``…)."""
    return tuple(
        StatisticSpec(
            f"alpha_{s.key}",
            f"{s.name}: Krippendorff α (interval)",
            f"needs an answer's {s.name} scored by 2 annotators, and scores that differ somewhere",
            text="score_alpha",
            name=s.name,
        )
        for s in human_scores.table()
    )


def score_correlations() -> tuple[StatisticSpec, ...]:
    """Each human score against its automatic metric (``rel_correlation``, ``tlc_correlation``…)."""
    return tuple(
        StatisticSpec(
            f"{s.key}_correlation",
            f"{s.name} against the lawyers (Spearman)",
            f"needs the automatic {s.name} of 3 labelled answers (upload details.jsonl) and scores that vary",
            auto=True,
            text="score_correlation",
            name=s.name,
        )
        for s in human_scores.table()
    )


def statistics() -> tuple[StatisticSpec, ...]:
    """Every statistic of the report, in the order shown, with one α and one correlation per human score of
    :data:`eval_ui.human_scores.HUMAN_SCORE_TABLE` (read when called)."""
    found: list[StatisticSpec] = []
    for spec in _STATISTICS:
        if spec is SCORE_ALPHAS[0]:
            found += score_alphas()
        elif spec is SCORE_CORRELATIONS[0]:
            found += score_correlations()
        elif spec not in SCORE_ALPHAS + SCORE_CORRELATIONS:
            found.append(spec)
    return tuple(found)


def spec(key: str) -> StatisticSpec:
    """The statistic ``key`` of :func:`statistics` (``KeyError`` for an unknown one)."""
    found = SPECS.get(key)
    return found if found is not None else {s.key: s for s in statistics()}[key]


SCORE_ALPHAS = score_alphas()
SCORE_CORRELATIONS = score_correlations()
#: The statistics of the report as shipped, in the order shown (the report reads :func:`statistics`).
_STATISTICS: tuple[StatisticSpec, ...] = (
    StatisticSpec("progress", "标注进度 Progress per annotator", "needs an annotator"),
    StatisticSpec(
        "annotator_agreement",
        "与其他标注者的一致率 Each annotator's agreement with the others (verdict)",
        "needs an item labelled by 2 annotators",
    ),
    StatisticSpec(
        "annotator_statute_agreement",
        "与其他标注者的一致率 Each annotator's agreement with the others (statutes)",
        "needs a cited statute labelled 真实/有误 by 2 annotators",
    ),
    StatisticSpec("win_rate", "胜率 Win rate per system pair", "needs a labelled item"),
    StatisticSpec("system_win_rate", "各系统胜率 Each system's win rate", "needs a labelled item"),
    StatisticSpec(
        "paired_test",
        "配对自助检验 Paired bootstrap test of two systems' win rates",
        "needs labelled items of 2 systems (at least 2 items)",
    ),
    StatisticSpec(
        "bradley_terry",
        "Bradley–Terry ratings",
        "needs labels on 2 systems in which each system wins or ties at least once",
    ),
    StatisticSpec(
        "alpha_verdict",
        "verdict: Krippendorff α (nominal)",
        "needs an item labelled by 2 annotators, and verdicts that differ somewhere",
    ),
    StatisticSpec(
        "kappa_verdict",
        "verdict: Fleiss κ",
        "needs an item labelled by 2 annotators, and verdicts that differ somewhere",
    ),
    StatisticSpec(
        "alpha_statutes",
        "statute hallucinated: Krippendorff α (nominal)",
        "needs a cited statute labelled 真实/有误 by 2 annotators, and statute labels that differ somewhere",
    ),
    *SCORE_ALPHAS,  # alpha_rel, alpha_tlc: one per human score (scores_statistics)
    StatisticSpec(
        "human_s1",
        "human–human agreement, ties included (MT-bench S1)",
        "needs an item labelled by 2 annotators",
    ),
    StatisticSpec(
        "human_s2",
        "human–human agreement, ties excluded (MT-bench S2)",
        "needs an item on which 2 annotators both chose a side (not tie or both bad)",
    ),
    StatisticSpec(
        "nhsr_accuracy",
        "NHSR accuracy against the lawyers' majority",
        "needs a cited statute the checker knows, labelled 真实/有误 by a majority of its annotators",
    ),
    StatisticSpec(
        "nhsr_kappa",
        "NHSR: Cohen's κ against the lawyers' majority",
        "needs majority-labelled statutes where the checker or the lawyers give both answers (correct and wrong)",
    ),
    StatisticSpec(
        "verdict_agreement",
        "每种判定与律师的一致 The checker against the lawyers, per verdict",
        "needs a cited statute the checker gave a verdict, labelled 真实/有误 by a majority of its annotators",
    ),
    StatisticSpec(
        "nhsr_lawyers",
        "NHSR per system (lawyers' majority)",
        "needs a cited statute labelled 真实/有误 by a majority of its annotators",
    ),
    *SCORE_CORRELATIONS,  # rel_correlation, tlc_correlation
    StatisticSpec(
        "judge_s1",
        "LLM judge vs lawyers, ties included (MT-bench S1)",
        "needs the judge's verdict on a labelled item (upload pairwise.jsonl)",
        auto=True,
    ),
    StatisticSpec(
        "judge_s2",
        "LLM judge vs lawyers, ties excluded (MT-bench S2)",
        "needs a labelled item where the judge and a lawyer both chose a side (upload pairwise.jsonl)",
        auto=True,
    ),
    StatisticSpec(
        "judge_consistency",
        "LLM judge self-consistency (answers swapped)",
        "needs the judge's verdicts in both orders on a labelled item (upload pairwise.jsonl)",
        auto=True,
    ),
)


#: Every statistic of the report, in the order shown: the report's JSON has each one's value or None.
STATISTICS: tuple[StatisticSpec, ...] = statistics()
SPECS = {spec.key: spec for spec in STATISTICS}


def scores_title() -> str:
    """The title of the section of the human scores against the automatic metrics (both languages).

    >>> scores_title()
    'Rel / T_LC 与律师评分 Rel and T_LC against the lawyers'
    """
    return f"{human_scores.names('zh')} 与律师评分 {human_scores.names('en')} against the lawyers"


def section_key(title: str) -> str | None:
    """The catalogue key of a section's title (:data:`SECTION_KEYS`), None for a title it lacks."""
    return "stats.section.scores" if title == scores_title() else SECTION_KEYS.get(title)


#: The report's sections, by title: the key of each title in the page's language (``lawluo/strings/admin.yaml``).
SECTION_KEYS: dict[str, str] = {
    "概况 Overview": "stats.section.overview",
    "标注者 Annotators: progress and agreement with the others": "stats.section.annotators",
    "胜/平/负 Win / tie / loss": "stats.section.pairwise",
    "各系统胜率 Each system's win rate": "stats.section.system_rates",
    "配对自助检验 Paired bootstrap test": "stats.section.paired",
    "Bradley–Terry": "stats.section.bradley_terry",
    "标注者一致性 Inter-annotator agreement": "stats.section.inter_annotator",
    "NHSR 与律师多数意见 NHSR against the lawyers' majority": "stats.section.nhsr",
    "每种判定与律师的一致 The checker against the lawyers, per verdict": "stats.section.verdicts",
    "各系统 NHSR NHSR per system": "stats.section.nhsr_systems",
    scores_title(): "stats.section.scores",  # its {names} are the human scores' (human_scores.names)
    "LLM 裁判与律师 The LLM judge against the lawyers": "stats.section.judge",
}


#: What a statistic may need besides its own ``needs`` (:data:`STATISTICS`): the phrase, its key.
NEEDS_PHRASES: dict[str, str] = {
    "needs two different labelled systems": "stats.needs.two_systems",
    "needs labels of both systems on at least 2 items": "stats.needs.both_systems",
    "needs the statute checker (the statute database is not loaded)": "stats.needs.checker",
    "needs the checker's verdicts, not only its hallucinated yes/no": "stats.needs.checker_verdicts",
}


def charts() -> tuple[tuple[str, str, str], ...]:
    """The report's charts: name, the title of its section, its file (drawn by :mod:`eval_ui.stats_charts`)."""
    return (
        (
            "annotators",
            "标注者 Annotators: progress and agreement with the others",
            "annotator_agreement.png",
        ),
        ("pairs", "胜/平/负 Win / tie / loss", "human_win_rate.png"),
        ("ratings", "Bradley–Terry", "bradley_terry.png"),
        ("scatter", scores_title(), "auto_vs_human.png"),
    )


CHARTS = charts()
