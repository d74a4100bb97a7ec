"""The checker's verdicts have one home (lawluo/law/verdicts.py); every consumer covers every row.

A new verdict is a row of VERDICT_TABLE: each test here fails until the consumer it names shows,
counts or explains that row.
"""

from __future__ import annotations

import itertools

import pytest

from lawluo.agents.secretary import VERDICT_LABELS
from lawluo.config import Settings
from lawluo.firm.saved import SavedCitation
from lawluo.law import checker, verdicts
from lawluo.law.verdicts import VERDICT_TABLE
from lawluo.metrics.nhsr import AnswerStatutes, summarise_nhsr
from lawluo.metrics.registry import summary_columns
from lawluo.ui.render import nhsr_line, verdict_badge

ROWS = pytest.mark.parametrize("row", VERDICT_TABLE, ids=[v.code for v in VERDICT_TABLE])


@ROWS
def test_the_app_shows_each_verdict_as_a_badge_with_its_label_and_meaning(row):
    badge = verdict_badge(row.code)
    assert f'class="ll-badge {row.badge}"' in badge and row.label_zh in badge and row.meaning in badge


@ROWS
def test_the_secretary_names_each_verdict_to_its_model(row):
    assert VERDICT_LABELS[row.code] == row.report_zh


@ROWS
def test_the_evaluators_table_has_a_column_per_verdict(row):
    assert (f"n_{row.code}", row.label_en, "{}") in summary_columns()
    assert f"n_{row.code}" in summarise_nhsr([AnswerStatutes([{"verdict": row.code}])])


@ROWS
def test_the_checkers_counts_the_saved_file_schema_and_the_help_text_know_each_verdict(row):
    assert row.code in checker.VERDICTS and row.code in checker.CheckResult([]).counts()
    SavedCitation.model_validate({"verdict": row.code, "span": [0, 1]})
    # the help writes the codes from the table where check_help.md says <!-- verdict codes -->
    from lawluo.ui.copy import UICopy
    from lawluo.ui.statute_tab import VERDICT_CODES, verdict_codes

    _, advanced = UICopy(Settings().ui_copy_dir).markdown(
        "check_help.md", fills={VERDICT_CODES: verdict_codes()}
    )
    assert f"`{row.code}`" in advanced and f'<code lang="en">{row.code}</code>' in advanced
    assert VERDICT_CODES not in advanced


def test_hallucinated_and_not_hallucinated_split_the_table_and_every_consumer_agrees():
    from eval_ui.statutes import HALLUCINATED
    from lawluo.metrics.relevance import NON_HALLUCINATED

    assert HALLUCINATED | NON_HALLUCINATED == set(verdicts.VERDICTS)
    assert not HALLUCINATED & NON_HALLUCINATED
    assert verdicts.CONTENT_BEARING >= HALLUCINATED  # a hallucination is always judged by NHSR


@pytest.mark.parametrize("codes", list(itertools.product(verdicts.VERDICTS, repeat=2)) + [()])
def test_nhsr_is_one_computation_for_the_checker_and_the_metric(codes):
    class Cited:  # what CheckResult holds: objects with a verdict
        def __init__(self, verdict):
            self.verdict = verdict

    from_checker = checker.CheckResult([Cited(c) for c in codes]).nhsr
    from_metric = AnswerStatutes([{"verdict": c} for c in codes]).nhsr
    assert from_checker == from_metric == verdicts.nhsr(codes)


@pytest.mark.parametrize("codes", list(itertools.product(verdicts.VERDICTS, repeat=2)))
def test_the_apps_nhsr_line_counts_what_nhsr_counts(codes):
    line = nhsr_line(verdicts.nhsr(codes), verdicts.counts(codes))
    bearing = [c for c in codes if c in verdicts.CONTENT_BEARING]
    if not bearing:
        assert "no citation carries content" in line
        return
    right = sum(c not in verdicts.HALLUCINATED for c in bearing)
    assert line.startswith(f"NHSR {right}/{len(bearing)} = {right / len(bearing):.2f}")
    assert AnswerStatutes([{"verdict": c} for c in codes]).non_hallucinated == right


@ROWS
def test_each_verdict_has_a_rule_that_gives_it_and_its_strings(row):
    from lawluo.i18n import EN, ZH, catalogue
    from lawluo.law.checker_rules import RULES_OF

    assert RULES_OF.get(row.code), f"no rule of lawluo/law/checker_rules.py gives {row.code!r}"
    for key in (f"statute.verdict.{row.code}", f"statute.verdict_tip.{row.code}"):
        assert catalogue()[key][ZH] and catalogue()[key][EN], key
    assert catalogue()[f"statute.verdict.{row.code}"][ZH] == row.label_zh
    assert catalogue()[f"statute.verdict_tip.{row.code}"][EN] == row.meaning


def test_every_rule_gives_only_verdicts_of_the_table():
    from lawluo.law.checker_rules import RULES

    for rule in RULES:
        assert rule.verdicts and set(rule.verdicts) <= set(verdicts.VERDICTS), rule.__name__


@ROWS
def test_the_lawyers_label_of_each_verdict_is_the_one_the_annotation_forms_use(row):
    from eval_ui.verdicts import CHECKER_LABEL

    assert CHECKER_LABEL[row.code] == row.lawyer_label
