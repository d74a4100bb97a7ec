"""The annotators' verdicts have one home (eval_ui/verdicts.py); every consumer covers every row."""

from __future__ import annotations

import sqlite3

import pytest

from eval_ui import annotate_tab, stats, store, verdicts
from eval_ui.verdicts import VERDICT_TABLE

ROWS = pytest.mark.parametrize("row", VERDICT_TABLE, ids=[v.code for v in VERDICT_TABLE])


@ROWS
def test_the_store_keeps_each_verdict_and_turns_it_round_between_orientations(row, tmp_path):
    for swapped in (False, True):
        assert store.unswap_verdict(store.shown_verdict(row.code, swapped), swapped) == row.code
    con = sqlite3.connect(tmp_path / "check.sqlite")
    con.execute(f"CREATE TABLE t (verdict TEXT {verdicts.sql_check()})")
    con.execute("INSERT INTO t VALUES (?)", (row.code,))  # the schema's CHECK accepts it
    with pytest.raises(sqlite3.IntegrityError):
        con.execute("INSERT INTO t VALUES ('maybe')")


@ROWS
def test_the_statistics_flip_and_score_each_verdict(row):
    assert stats.FLIP[stats.FLIP[row.code]] == row.code and stats.SCORE[row.code] + stats.SCORE[
        stats.FLIP[row.code]
    ] == pytest.approx(1.0)
    assert stats.win_tie_loss([row.code], n_boot=10, seed=0)[row.code] == 1


@ROWS
def test_the_annotation_tab_has_a_button_a_name_and_a_key_for_each_verdict(row):
    assert (row.shown, f"{row.label} [{row.key}]") in annotate_tab.VERDICT_BUTTONS
    assert row.shown in annotate_tab.SHOWN_NAMES
    assert f'"{row.key}": "ann-verdict-{row.shown}"' in annotate_tab.KEYS_JS


@ROWS
def test_the_training_converters_accept_each_verdict(row, tmp_path):
    import json

    from training import data

    labels = tmp_path / "labels.jsonl"
    labels.write_text(json.dumps({"item_id": "q1:X:Y", "verdict": row.code}) + "\n", encoding="utf-8")
    assert data.read_annotation_labels(labels)[0]["verdict"] == row.code


def test_keys_and_shown_names_are_unique():
    assert len({v.key for v in VERDICT_TABLE}) == len({v.shown for v in VERDICT_TABLE}) == len(VERDICT_TABLE)
