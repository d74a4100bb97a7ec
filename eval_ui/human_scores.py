"""The scores a lawyer gives each answer: one table of rows, read by every consumer.

Each row is a human-scored metric (Rel: the cited statutes' relevance; T_LC: the truth of the legal
claims), optional in the form, with its range and the automatic metric of the same meaning that
``python -m lawluo evaluate`` computes (its registry name in :mod:`lawluo.metrics.registry`, the key of
its score in ``details.jsonl``). The rows are the registry's rows that say ``human=HumanScale(…)``: a
metric and its human counterpart are declared once. From the row's ``key`` the consumers make their names:

- the store: the key in an answer's labels (``answer_labels`` JSON: ``{"rel": 7, …}``), the labels
  frame's columns ``{key}_a`` / ``{key}_b`` (:mod:`eval_ui.store.frames`);
- the annotation form: a field per answer, ``left_{key}`` / ``right_{key}`` (the HTTP API's parameters and
  outputs), the page's input ``#ann-left-{key}``, its label :attr:`HumanScore.label_key`
  (``lawluo/strings/annotate.yaml``);
- the adjudication page: the annotators' scores of each answer, in the table's order;
- the statistics (:mod:`eval_ui.consistency`): ``alpha_{key}`` (Krippendorff's α between the annotators)
  and ``{key}_correlation`` (against the automatic metric), whose titles and needs are the catalogue's
  ``stats.stat.score_*`` / ``stats.needs.score_*`` texts with the row's :attr:`~HumanScore.name`.

Consumers look the table up when they run (``human_scores.HUMAN_SCORE_TABLE``), so a test may replace it;
``tests/test_human_scores.py`` adds a third row and follows it to every consumer.
"""

from __future__ import annotations

from dataclasses import dataclass

from lawluo.metrics.registry import REGISTRY

#: The answers of an item as stored (``a``/``b``) and as the annotator saw them (``left``/``right``).
STORED_SIDES = ("a", "b")
SHOWN_SIDES = ("left", "right")


@dataclass(frozen=True)
class HumanScore:
    key: str  # stored (answer_labels JSON), and the stem of every column, field and statistic name
    name: str  # its short name in the report, the messages and the adjudication page: Rel, T_LC
    metric: str  # the automatic metric of `lawluo evaluate` (registry name; details.jsonl's key)
    low: int = 0  # the range a score must lie in (both ends included)
    high: int = 10

    @property
    def label_key(self) -> str:
        """The catalogue key of the form's label (``annotate.rel``: "法条相关性 Rel（0–10）")."""
        return f"annotate.{self.key}"

    @property
    def range(self) -> tuple[int, int]:
        return (self.low, self.high)


#: The metrics of ``lawluo evaluate``'s registry that lawyers score too (a row's ``human``): a new
#: human-scored metric is its module, its registry row with ``human=HumanScale(…)`` and its form label.
HUMAN_SCORE_TABLE: tuple[HumanScore, ...] = tuple(
    HumanScore(spec.name, spec.human.name, spec.name, spec.human.low, spec.human.high)
    for spec in REGISTRY
    if spec.human is not None
)


def table() -> tuple[HumanScore, ...]:
    """The table as it is now (read when called: a test may replace :data:`HUMAN_SCORE_TABLE`)."""
    return HUMAN_SCORE_TABLE


def keys() -> tuple[str, ...]:
    """Every score's key, in the table's order.

    >>> keys()
    ('rel', 'tlc')
    """
    return tuple(s.key for s in table())


def by_key(key: str) -> HumanScore:
    """The row of ``key`` (``KeyError`` for an unknown one)."""
    for score in table():
        if score.key == key:
            return score
    raise KeyError(key)


def columns(sides: tuple[str, ...] = STORED_SIDES) -> tuple[str, ...]:
    """The names of the scores of each side: per side, every score in the table's order.

    >>> columns()
    ('rel_a', 'tlc_a', 'rel_b', 'tlc_b')
    """
    return tuple(f"{s.key}_{side}" for side in sides for s in table())


def form_fields() -> tuple[str, ...]:
    """The form's score fields: the left answer's scores, then the right's.

    >>> form_fields()
    ('left_rel', 'left_tlc', 'right_rel', 'right_tlc')
    """
    return tuple(f"{side}_{s.key}" for side in SHOWN_SIDES for s in table())


def names(lang: str = "zh") -> str:
    """The scores' names as one phrase: ``Rel / T_LC`` in Chinese, ``Rel and T_LC`` in English.

    >>> names(), names("en")
    ('Rel / T_LC', 'Rel and T_LC')
    """
    shown = [s.name for s in table()]
    if lang == "zh" or len(shown) < 2:
        return " / ".join(shown)
    return ", ".join(shown[:-1]) + " and " + shown[-1]


def metrics_option() -> str:
    """``lawluo evaluate``'s ``--metrics`` value that computes every automatic counterpart.

    >>> metrics_option()
    'rel,tlc'
    """
    return ",".join(s.metric for s in table())
