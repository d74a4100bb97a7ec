"""The scores the lawyers give each answer (Rel and T_LC, 0–10, optional in the form): the one place the
report reads them.

A human-scored metric is a row of :data:`eval_ui.human_scores.HUMAN_SCORE_TABLE`, and a pair of columns of the
store's labels frame, ``{key}_a`` and ``{key}_b`` (:func:`eval_ui.store.frames.frame_columns`); the report
uses them twice:

- between the annotators, Krippendorff's α (interval) of each score (:func:`score_alphas`, the statistics
  ``alpha_{key}`` of the inter-annotator section);
- against the automatic metric of the same name (``python -m lawluo evaluate``'s ``details.jsonl``,
  :class:`~eval_ui.consistency.auto.AutoMetrics`), Spearman and Pearson with the mean human score of each
  answer (:func:`_scores`, the statistics ``{key}_correlation``).
"""

from __future__ import annotations

import pandas as pd

from lawluo.i18n import message

from .. import human_scores, stats
from .auto import AutoMetrics, _qids
from .report import Measure, Report, Section, _needs, _rounded, _section, _set
from .specs import scores_title, spec

SIDES = human_scores.STORED_SIDES


def score_names() -> dict[str, str]:
    """The metrics the lawyers score per answer: the key of their label columns (``rel_a``, ``rel_b``) and of
    their statistics (``alpha_rel``, ``rel_correlation``, :attr:`AutoMetrics.scores` ``["rel"]``) → the name
    the report shows (``Rel``), as :data:`~eval_ui.human_scores.HUMAN_SCORE_TABLE` has them now.

    >>> score_names()
    {'rel': 'Rel', 'tlc': 'T_LC'}
    """
    return {s.key: s.name for s in human_scores.table()}


#: :func:`score_names` of the shipped table (for readers; the report calls the function).
SCORE_NAMES = score_names()


def score_rows(labels: pd.DataFrame, key: str) -> pd.DataFrame:
    """The ``key`` scores of ``labels`` as one row per label and answer: ``annotator``, ``item`` (the answer:
    ``{item_id}|{side}``), ``value`` (NaN where not scored) and ``item_id``; all answers a, then all b.

    >>> labels = pd.DataFrame({"annotator": ["u1"], "item_id": ["q1"], "rel_a": [7.0], "rel_b": [5.0]})
    >>> score_rows(labels, "rel").values.tolist()
    [['u1', 'q1|a', 7.0, 'q1'], ['u1', 'q1|b', 5.0, 'q1']]
    """
    return pd.concat(
        [
            pd.DataFrame(
                {"annotator": labels["annotator"], "item": labels["item_id"] + "|" + side}
                | {"value": labels[f"{key}_{side}"], "item_id": labels["item_id"]}
            )
            for side in SIDES
        ],
        ignore_index=True,
    )


def score_alphas(raw: pd.DataFrame, boot: stats.Bootstrap) -> list[Measure]:
    """Krippendorff's α (interval) of each human score between the annotators, resampling items (an item's
    two answers together); without an answer scored by two annotators, why (:func:`_score_note`)."""
    found = []
    for key, name in score_names().items():
        long = score_rows(raw, key)
        alpha = stats.krippendorff_alpha_long(long, "value", "interval", group_col="item_id", boot=boot)
        note = alpha["note"] if alpha["n_items"] else _score_note(long["value"], long["item"], name)
        found.append(
            Measure(
                f"alpha_{key}",
                alpha["alpha"],
                alpha["alpha_low"],
                alpha["alpha_high"],
                alpha["n_items"],
                note,
            )
        )
    return found


def answer_scores(labels: pd.DataFrame) -> pd.DataFrame:
    """Each answer's mean human score of every metric: one row per (item_id, question id, system), a column per
    key of :func:`score_names` (NaN where nobody scored it)."""
    qids, keys = _qids(labels), list(score_names())
    parts = []
    for side in SIDES:
        parts.append(
            pd.DataFrame(
                {"qid": qids, "item_id": labels["item_id"], "system": labels[f"system_{side}"]}
                | {key: labels[f"{key}_{side}"] for key in keys}
            )
        )
    return (
        pd.concat(parts, ignore_index=True)
        .groupby(["item_id", "qid", "system"], dropna=False)[keys]
        .mean()
        .reset_index()
    )


def _score_note(values: pd.Series, answers: pd.Series, name: str) -> str:
    """Why no answer has two annotators' ``name`` scores (the real cause: scores are optional, so items
    labelled by two annotators say nothing about scores).

    >>> _score_note(pd.Series([None, None]), pd.Series(["q1|a", "q1|a"]), "Rel")
    'no annotator gave Rel scores (they are optional in the form)'
    >>> _score_note(pd.Series([5.0, None, 7.0]), pd.Series(["q1|a", "q1|a", "q2|b"]), "T_LC")
    'T_LC scores were given on 2 answers, each by one annotator only: none is scored by two or more'
    """
    scored = answers[values.notna()]
    if scored.empty:
        return f"no annotator gave {name} scores (they are optional in the form)"
    return (
        f"{name} scores were given on {scored.nunique()} answer{'s' * (scored.nunique() != 1)}, each by one "
        "annotator only: none is scored by two or more"
    )


def _scores(labels: pd.DataFrame, auto: AutoMetrics | None, report: Report, charts: dict) -> Section:
    title, names = scores_title(), score_names()
    keys = [f"{key}_correlation" for key in names]
    if not auto or not any(auto.scores.get(key) for key in names):
        return _section(
            title,
            None,
            message(
                "stats.note.no_auto_scores",
                file="details.jsonl",
                command=f"`python -m lawluo evaluate --metrics {human_scores.metrics_option()}`",
            ),
            keys,
        )
    if labels.empty:
        return Section(title, None, "", keys)
    answers = answer_scores(labels)
    rows, scatter = [], {}
    for column, name in names.items():
        key, values = f"{column}_correlation", auto.scores.get(column, {})
        answer_keys = zip(
            answers["qid"].to_numpy(dtype=object), answers["system"].to_numpy(dtype=object), strict=True
        )
        machine = [values.get(answer) for answer in answer_keys]
        human = [None if pd.isna(v) else float(v) for v in answers[column]]
        result = stats.correlation(machine, human)
        points = [(m, h) for m, h in zip(machine, human, strict=True) if m is not None and h is not None]
        if points:
            scatter[name] = points
        keep = ["n", "spearman", "spearman_low", "spearman_high", "pearson", "pearson_low", "pearson_high"]
        rows.append({"measure": name, **{k: result.get(k) for k in keep}, "note": result.get("note", "")})
        if result["spearman"] is not None:
            _set(report, key, result["spearman"], result["spearman_low"], result["spearman_high"], result["n"],
                 pearson=result["pearson"], pearson_low=result["pearson_low"], pearson_high=result["pearson_high"])  # fmt: skip
        elif result["note"]:
            _needs(report, key, f"{spec(key).needs} ({result['note']})")
    if scatter:
        charts["scatter"] = scatter
    return _section(title, _rounded(pd.DataFrame(rows)), message("stats.note.scores"), keys)
