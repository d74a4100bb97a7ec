"""What the store takes and returns: a label as the annotator gave it (:class:`LabelInput`,
:class:`AnswerLabel`), what a save recorded (:class:`SavedLabel`), and the verdict's swap between the
order shown (``left``/``right``) and the stored one (``A``/``B``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from eval_ui import human_scores, verdicts

from .errors import StoreError

VERDICTS, SHOWN_VERDICTS = verdicts.VERDICTS, verdicts.SHOWN_VERDICTS  # eval_ui/verdicts.py
STATUSES = ("todo", "skipped", "done")
MAX_COMMENT = 5_000
MAX_NOTE = 2_000  # an adjudication's note
MAX_STATUTES = 200
MAX_KEY = 500
#: ``format`` of the answer_labels JSON a save writes (1: the old tick-only form, True/False per statute).
LABEL_FORMAT = 2
SIDES = {
    "left": "左侧回答 left answer",
    "right": "右侧回答 right answer",
    "a": "回答 A answer A",
    "b": "回答 B answer B",
}


@dataclass(frozen=True, init=False)
class AnswerLabel:
    """An annotator's labels of one answer: each cited statute's label, and a score (0–10 or None) per row of
    :data:`eval_ui.human_scores.HUMAN_SCORE_TABLE` (Rel, T_LC).

    ``statutes`` maps a statute as cited (``《民法典》第1079条``) to a code of
    :data:`eval_ui.verdicts.STATUTE_LABELS`: ``correct``, or ``wrong`` / ``wrong_number`` /
    ``wrong_content`` / ``wrong_repealed`` / ``wrong_not_found`` / ``wrong_version`` (hallucinated:
    LegalHalBench's NHSR criterion). A cited statute absent from it is unlabelled (missing data). ``none_wrong``: the
    annotator confirmed "none of these is wrong" (这些都没问题); every cited statute without a label is
    then recorded as ``correct`` (and a statute labelled wrong contradicts it: refused).

    The scores are given by position after ``statutes`` (in the table's order), by key
    (``AnswerLabel(rel=8)``) or as ``scores={"rel": 8}``; :attr:`scores` holds every key of the table (None:
    not scored), and each score is also an attribute (``label.rel``).

    >>> AnswerLabel({}, 7, tlc=3).scores
    {'rel': 7, 'tlc': 3}
    >>> AnswerLabel(rel=5).rel, AnswerLabel().tlc
    (5, None)
    """

    statutes: Mapping[str, str]
    scores: Mapping[str, object]
    none_wrong: bool

    def __init__(
        self,
        statutes: Mapping[str, str] | None = None,
        *given: object,
        none_wrong: bool = False,
        scores: Mapping[str, object] | None = None,
        **by_key: object,
    ) -> None:
        keys = human_scores.keys()
        if len(given) > len(keys):
            raise TypeError(f"AnswerLabel takes at most {len(keys)} scores by position ({', '.join(keys)})")
        named = {**dict(zip(keys, given, strict=False)), **(scores or {}), **by_key}
        unknown = [k for k in named if k not in keys]
        if unknown:
            raise TypeError(f"AnswerLabel has no score {', '.join(unknown)} (scores: {', '.join(keys)})")
        object.__setattr__(self, "statutes", {} if statutes is None else statutes)
        object.__setattr__(self, "scores", {k: named.get(k) for k in keys})
        object.__setattr__(self, "none_wrong", none_wrong)

    def __getattr__(self, name: str) -> object:
        scores = self.__dict__.get("scores") or {}
        if name in scores:
            return scores[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")


@dataclass(frozen=True)
class LabelInput:
    """One submission as the annotator saw it: the verdict and the labels of the left and right answer."""

    verdict_shown: str
    left: AnswerLabel = field(default_factory=AnswerLabel)
    right: AnswerLabel = field(default_factory=AnswerLabel)
    comment: str = ""
    guideline_version: str = ""
    seconds_spent: float | None = None


@dataclass(frozen=True)
class SavedLabel:
    """What :meth:`AnnotationStore.save_label` recorded.

    ``changed`` is False when the submission repeated the current label (no new version);
    ``duplicate`` is True when ``submission_id`` had been saved before (nothing was written).
    """

    annotator: str
    item_id: str
    verdict: str
    version: int
    submission_id: str
    changed: bool
    duplicate: bool


def unswap_verdict(verdict_shown: str, swapped: bool) -> str:
    """The stored verdict (``A``/``B``/``tie``/``both_bad``) of a verdict given as shown.

    >>> unswap_verdict("left", swapped=True)    # B was shown on the left
    'B'
    >>> unswap_verdict("left", swapped=False), unswap_verdict("tie", swapped=True)
    ('A', 'tie')
    """
    if verdict_shown not in SHOWN_VERDICTS:
        raise StoreError(f"verdict {verdict_shown!r} is not one of {', '.join(SHOWN_VERDICTS)}")
    return verdicts.unswap(verdict_shown, swapped)


def shown_verdict(verdict: str, swapped: bool) -> str:
    """The inverse of :func:`unswap_verdict`: ``left``/``right``/``tie``/``both_bad`` as shown.

    >>> shown_verdict("B", swapped=True)
    'left'
    """
    if verdict not in VERDICTS:
        raise StoreError(f"verdict {verdict!r} is not one of {', '.join(VERDICTS)}")
    return verdicts.as_shown(verdict, swapped)
