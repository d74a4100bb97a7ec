"""The annotators' pairwise verdicts: one table of rows, read by every consumer.

A verdict is stored in the item's own orientation (``A`` = system_a's answer is better, ``B``, ``tie``,
``both_bad``) and given in the orientation the annotator saw (``left``, ``right``, ``tie``,
``both_bad``: the left/right order is swapped per annotator and item). The store (its values and its
SQL ``CHECK``), the statistics (a flip of orientation, the Bradley–Terry outcome), the annotation tab
(buttons, their names — ``annotate.verdict.*`` in
lawluo/strings/annotate.yaml —, keys 1–4 and their JavaScript) and the training converters read this table;
``tests/test_annotator_verdicts.py`` fails when one does not cover a row.

**both_bad counts as a tie** in the statistics (outcome ½): neither answer is preferred.

The per-statute labels have their table here too (:data:`STATUTE_LABEL_TABLE`): each statute an answer
cites is labelled 真实 Correct or 有误 Wrong (optionally with the error's kind: number, content, repealed,
not found, an outdated version; LegalHalBench's hallucination categories). A cited statute without a
label is **missing data**, never "correct". ``legacy_unticked`` is what the store's migration 2 made of
a statute the old tick-only form left unticked (it may have been judged correct, or never looked at): a
form never submits it, and the statistics count it as missing.

**A label says what a checker verdict says** (``checker_verdicts``: the verdicts whose row of
:mod:`lawluo.law.verdicts` names the label, ``lawyer_label``), so the statistics can compare the two per verdict: 真实 Correct is every
verdict that is not a hallucination (``verified``, ``amended_since``, ``no_content``: a lawyer reading
the answer cannot tell them apart, nor needs to); each kind of error is one verdict (``wrong_number`` ↔
``wrong_number``, ``wrong_content`` ↔ ``content_mismatch``, ``wrong_repealed`` ↔ ``repealed``,
``wrong_not_found`` ↔ ``not_found``, ``wrong_version`` ↔ ``outdated_version``); 有误 Wrong without a
kind is "some hallucinated verdict", and ``legacy_unticked`` none. Every checker verdict has exactly one
label (:data:`CHECKER_LABEL`); ``tests/test_annotator_verdicts.py`` fails when one has none.
"""

from __future__ import annotations

from dataclasses import dataclass

from lawluo.i18n import text
from lawluo.law.verdicts import VERDICT_TABLE as CHECKER_TABLE


@dataclass(frozen=True)
class PairVerdict:
    code: str  # stored, un-swapped: A, B, tie, both_bad
    shown: str  # as the annotator gave it on the page: left, right, tie, both_bad
    flipped: str  # the code when system_a and system_b change places
    outcome: float  # system_a's Bradley–Terry outcome: a win 1, a loss 0, ½ for tie and both_bad
    key: str  # the keyboard shortcut in the annotation tab

    @property
    def name_key(self) -> str:
        """The catalogue key of the button's text (``annotate.verdict.left``: "⬅ 左更好" / "⬅ Left better")."""
        return f"annotate.verdict.{self.shown}"

    @property
    def short_key(self) -> str:
        """The catalogue key of its name without arrows (``annotate.verdict.left.short``), for messages."""
        return f"annotate.verdict.{self.shown}.short"

    @property
    def label(self) -> str:
        """The button's text in Chinese (the page shows :attr:`name_key` in the reader's language)."""
        return text(self.name_key)


VERDICT_TABLE: tuple[PairVerdict, ...] = (
    PairVerdict("A", "left", "B", 1.0, "1"),
    PairVerdict("B", "right", "A", 0.0, "2"),
    PairVerdict("tie", "tie", "tie", 0.5, "3"),
    PairVerdict("both_bad", "both_bad", "both_bad", 0.5, "4"),
)

VERDICTS: tuple[str, ...] = tuple(v.code for v in VERDICT_TABLE)
SHOWN_VERDICTS: tuple[str, ...] = tuple(v.shown for v in VERDICT_TABLE)
FLIP: dict[str, str] = {v.code: v.flipped for v in VERDICT_TABLE}
SCORE: dict[str, float] = {v.code: v.outcome for v in VERDICT_TABLE}
_BY_SHOWN = {v.shown: v for v in VERDICT_TABLE}
_BY_CODE = {v.code: v for v in VERDICT_TABLE}


@dataclass(frozen=True)
class StatuteVerdict:
    code: str  # stored in a label's answer_labels JSON
    hallucinated: bool | None  # NHSR's yes/no; None: no judgement (the migrated old "not ticked")
    error_kind: str | None = None  # the kind of error of a wrong statute, when the annotator gave it

    @property
    def checker_verdicts(self) -> tuple[str, ...]:
        """The checker verdicts this label agrees with exactly: those whose row of
        :data:`lawluo.law.verdicts.VERDICT_TABLE` names it (``lawyer_label``); empty for a label without a
        kind (``wrong``) or without a judgement (``legacy_unticked``)."""
        return tuple(v.code for v in CHECKER_TABLE if v.lawyer_label == self.code)

    @property
    def name_key(self) -> str:
        """The catalogue key of the control's text (``annotate.statute_label.correct``: 真实 / Correct)."""
        return f"annotate.statute_label.{self.code}"

    @property
    def label(self) -> str:
        """The control's text in Chinese (the page shows :attr:`name_key` in the reader's language)."""
        return text(self.name_key)


STATUTE_LABEL_TABLE: tuple[StatuteVerdict, ...] = (
    StatuteVerdict("correct", False, None),
    StatuteVerdict("wrong", True),
    StatuteVerdict("wrong_number", True, "number"),
    StatuteVerdict("wrong_content", True, "content"),
    StatuteVerdict("wrong_repealed", True, "repealed"),
    StatuteVerdict("wrong_not_found", True, "not_found"),
    StatuteVerdict("wrong_version", True, "version"),
    StatuteVerdict("legacy_unticked", None),
)
LEGACY_UNTICKED = "legacy_unticked"
#: The codes a form may submit (every row but the migration's ``legacy_unticked``).
STATUTE_LABELS: tuple[str, ...] = tuple(v.code for v in STATUTE_LABEL_TABLE if v.code != LEGACY_UNTICKED)
STATUTE_CODES: tuple[str, ...] = tuple(v.code for v in STATUTE_LABEL_TABLE)
STATUTE_HALLUCINATED: dict[str, bool | None] = {v.code: v.hallucinated for v in STATUTE_LABEL_TABLE}
STATUTE_ERROR_KIND: dict[str, str | None] = {v.code: v.error_kind for v in STATUTE_LABEL_TABLE}
#: Each label's name in Chinese (the command line, the logs) and its catalogue key (what a page shows).
STATUTE_NAMES: dict[str, str] = {v.code: v.label for v in STATUTE_LABEL_TABLE}
STATUTE_NAME_KEYS: dict[str, str] = {v.code: v.name_key for v in STATUTE_LABEL_TABLE}
STATUTE_CHECKER_VERDICTS: dict[str, tuple[str, ...]] = {
    v.code: v.checker_verdicts for v in STATUTE_LABEL_TABLE
}
#: Each checker verdict's label (``verified`` → ``correct``, ``content_mismatch`` → ``wrong_content``…).
CHECKER_LABEL: dict[str, str] = {c: v.code for v in STATUTE_LABEL_TABLE for c in v.checker_verdicts}


def sql_check(column: str = "verdict") -> str:
    """The SQL ``CHECK`` constraint of a stored verdict column.

    >>> sql_check()
    "CHECK (verdict IN ('A', 'B', 'tie', 'both_bad'))"
    """
    return f"CHECK ({column} IN ({', '.join(repr(code) for code in VERDICTS)}))"


def unswap(shown: str, swapped: bool) -> str:
    """The stored code of a verdict given as shown (``KeyError`` for an unknown one).

    >>> unswap("left", True), unswap("left", False), unswap("tie", True)
    ('B', 'A', 'tie')
    """
    code = _BY_SHOWN[shown].code
    return FLIP[code] if swapped else code


def as_shown(code: str, swapped: bool) -> str:
    """The inverse of :func:`unswap`.

    >>> as_shown("B", True), as_shown("both_bad", False)
    ('left', 'both_bad')
    """
    return _BY_CODE[FLIP[code] if swapped else code].shown
