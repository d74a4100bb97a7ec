"""Exports people can load (eval_ui/store/export.py ``export`` / ``export_all``; issue 19 item 6).

ISO 8601 times in UTC with the offset, UTF-8 without ``\\u`` escapes, lists as arrays (JSON text in
the still formula-safe CSV), one row per (item, annotator), a Parquet file ``datasets`` loads, the
statute table with unlabelled cited statutes, the command line's ``export``, and the Hub push writing
the same files (a fake ``CommitScheduler``: no network).
"""

from __future__ import annotations

import csv
import json
import re

import pytest

from eval_ui.__main__ import main
from eval_ui.items import Item
from eval_ui.store import (
    FRAME_COLUMNS,
    STATUTE_COLUMNS,
    AnnotationStore,
    AnswerLabel,
    LabelInput,
    StoreError,
    iso_utc,
    start_sync,
    write_hub_folder,
)

S1, S2 = "《民法典》第1079条", "《民法典》第1087条"
CITED = {("q0", "a"): [S1, S2], ("q0", "b"): [S1], ("q1", "a"): [S2]}
ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00$")


def cited(item_id: str, side: str) -> list[str]:
    return CITED.get((item_id, side), [])


@pytest.fixture
def store(tmp_path):
    """Three items, 张 and 李 on every one, labels with every kind of statute label, one edit."""
    s = AnnotationStore(tmp_path / "annotations.sqlite", cited=cited)
    s.import_items(
        [Item(f"q{i}", f"离婚时财产如何分割？{i}", f"甲{i}", f"乙{i}", "律罗", "=GPT") for i in range(3)]
    )
    for name in ("张", "李"):
        s.add_annotator(name)
    s.add_annotator("管理员", role="admin")
    s.assign(overlap=2, seed=0)
    for k, name in enumerate(("张", "李")):
        for item_id in ("q0", "q1", "q2"):
            shown = s.assignment(name, item_id)
            a = AnswerLabel({S1: ("wrong_repealed", "correct")[k]}, rel=5 + k, none_wrong=k == 1)
            b = AnswerLabel({S1: "wrong"}, tlc=3)
            left, right = (b, a) if shown.swapped else (a, b)
            s.save_label(
                name, item_id, LabelInput("tie", left, right, comment=f"意见{k}"), f"{name}{item_id}"
            )
    s.save_label("张", "q2", LabelInput("both_bad", comment="=1+1"), "edit")
    yield s
    s.close()


def read_jsonl(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_jsonl_has_iso_utc_times_unescaped_text_and_real_arrays(store, tmp_path):
    path = tmp_path / "labels.jsonl"
    assert store.export(path, "jsonl") == 6
    raw = path.read_bytes().decode("utf-8")
    assert "\\u" not in raw and "离婚时财产如何分割" in raw and "律罗" in raw
    rows = read_jsonl(path)
    frame = store.labels_frame()
    assert [(r["item_id"], r["annotator"]) for r in rows] == list(
        zip(frame.item_id, frame.annotator, strict=True)
    )
    assert len({(r["item_id"], r["annotator"]) for r in rows}) == 6  # one row per (item, annotator)
    assert list(rows[0]) == list(FRAME_COLUMNS)
    for row, (_, expected) in zip(rows, frame.iterrows(), strict=True):
        for column in ("created_at", "updated_at"):
            assert ISO.match(row[column]) and row[column] == iso_utc(expected[column])
        assert row["replaced_at"] is None
        assert row["statutes_a"] == [
            {"statute": k, "label": v} for k, v in json.loads(expected["statutes_a"]).items()
        ]
        assert row["hallucinated_b"] == json.loads(expected["hallucinated_b"])
        assert isinstance(row["current"], bool) and isinstance(row["version"], int)
    zhang_q0 = next(r for r in rows if (r["annotator"], r["item_id"]) == ("张", "q0"))
    assert zhang_q0["statutes_a"] == [{"statute": S1, "label": "wrong_repealed"}]
    assert zhang_q0["n_unlabelled_a"] == 1 and zhang_q0["nhsr_a"] == 0.0
    li_q0 = next(r for r in rows if (r["annotator"], r["item_id"]) == ("李", "q0"))
    assert li_q0["statutes_a"] == [{"statute": S1, "label": "correct"}, {"statute": S2, "label": "correct"}]
    assert li_q0["none_wrong_a"] is True and li_q0["nhsr_a"] == 1.0

    assert store.export(tmp_path / "all.jsonl", "jsonl", current_only=False) == 7
    old = [r for r in read_jsonl(tmp_path / "all.jsonl") if not r["current"]]
    assert len(old) == 1 and ISO.match(old[0]["replaced_at"])


def test_csv_keeps_arrays_as_json_text_times_as_iso_and_no_formula(store, tmp_path):
    store.export(tmp_path / "labels.csv")
    with open(tmp_path / "labels.csv", encoding="utf-8-sig", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 6 and list(rows[0]) == list(FRAME_COLUMNS)
    for row in rows:
        assert not [k for k, v in row.items() if v[:1] in ("=", "+", "-", "@", "\t", "\r")], row
        assert ISO.match(row["created_at"]) and row["replaced_at"] == ""
        assert isinstance(json.loads(row["statutes_b"]), list) and isinstance(
            json.loads(row["hallucinated_b"]), list
        )
    assert {r["system_b"] for r in rows} == {"'=GPT"}
    edited = next(r for r in rows if r["submission_id"] == "edit")
    assert edited["comment"] == "'=1+1" and edited["version"] == "2"


def test_parquet_loads_with_datasets_and_matches_the_jsonl(store, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    import datasets

    store.export(tmp_path / "labels.parquet", "parquet")
    store.export(tmp_path / "labels.jsonl", "jsonl")
    loaded = datasets.load_dataset(
        "parquet",
        data_files=str(tmp_path / "labels.parquet"),
        split="train",
        cache_dir=str(tmp_path / "cache"),
    )
    assert loaded.column_names == list(FRAME_COLUMNS) and len(loaded) == 6
    assert str(loaded.features["created_at"].dtype).startswith("timestamp") and "UTC" in str(
        loaded.features["created_at"].dtype
    )
    for got, want in zip(loaded, read_jsonl(tmp_path / "labels.jsonl"), strict=True):
        for column in FRAME_COLUMNS:
            value = got[column]
            if column in ("created_at", "updated_at", "replaced_at"):
                value = None if value is None else value.isoformat()
            assert value == want[column], column

    store.export(tmp_path / "statutes.parquet", "parquet", kind="statute_labels")
    statutes = datasets.load_dataset(
        "parquet",
        data_files=str(tmp_path / "statutes.parquet"),
        split="train",
        cache_dir=str(tmp_path / "cache"),
    )
    assert statutes.column_names == list(STATUTE_COLUMNS)
    assert statutes.features["hallucinated"].dtype == "bool"


def test_the_statute_table_lists_unlabelled_cited_statutes_with_no_label(store, tmp_path):
    frame = store.statute_labels_frame()
    zhang = frame[(frame.annotator == "张") & (frame.item_id == "q0") & (frame.side == "a")]
    assert dict(zip(zhang.statute, zhang.label, strict=True)) == {S1: "wrong_repealed", S2: None}
    assert dict(zip(zhang.statute, zhang.error_kind, strict=True)) == {S1: "repealed", S2: None}
    assert list(zhang.hallucinated) == [True, None]
    without = store.statute_labels_frame(cited=lambda i, s: [])  # no checker: labelled statutes only
    assert len(without) == len(frame) - len(frame[frame.label.isna()]) and without.label.notna().all()

    store.export(tmp_path / "statutes.jsonl", "jsonl", kind="statute_labels")
    rows = read_jsonl(tmp_path / "statutes.jsonl")
    assert len(rows) == len(frame) and list(rows[0]) == list(STATUTE_COLUMNS)
    [unlabelled] = [
        r for r in rows if (r["annotator"], r["item_id"], r["side"], r["statute"]) == ("张", "q0", "a", S2)
    ]
    assert (unlabelled["label"], unlabelled["hallucinated"], unlabelled["error_kind"]) == (None, None, None)


def test_export_all_writes_every_file_and_the_cli_exports_files_and_folders(
    store, tmp_path, monkeypatch, capsys
):
    store.adjudicate("管理员", "q0", "A", AnswerLabel({S1: "correct"}), AnswerLabel(), note="以法条原文为准")
    paths = store.export_all(tmp_path / "out")
    assert sorted(p.name for p in paths) == sorted(
        [f"{k}.{f}" for k in ("labels", "statute_labels") for f in ("csv", "jsonl", "parquet")]
        + ["adjudications.jsonl"]
    )
    [adjudication] = read_jsonl(tmp_path / "out" / "adjudications.jsonl")
    assert (
        adjudication["item_id"] == "q0"
        and adjudication["winner"] == "律罗"
        and adjudication["admin"] == "管理员"
    )
    assert ISO.match(adjudication["updated_at"]) and adjudication["answer_labels"]["a"]["statutes"] == {
        S1: "correct"
    }
    assert adjudication["note"] == "以法条原文为准"

    monkeypatch.delenv("LAWLUO_CONFIG", raising=False)
    monkeypatch.setenv("LAWLUO_ANNOTATION_DIR", str(store.path.parent))
    assert main(["export", str(tmp_path / "cli.parquet")]) == 0
    assert json.loads(capsys.readouterr().out)["exported"] == 6
    assert main(["export", str(tmp_path / "adj.jsonl"), "--adjudicated"]) == 0
    capsys.readouterr()
    assert {r["annotator"] for r in read_jsonl(tmp_path / "adj.jsonl") if r["item_id"] == "q0"} == {
        "adjudicated"
    }
    assert main(["export", str(tmp_path / "cli_folder")]) == 0
    assert len(json.loads(capsys.readouterr().out)["exported"]) == 7
    assert main(["export", str(tmp_path / "labels.xlsx")]) == 2
    assert "must end in .csv, .jsonl or .parquet" in capsys.readouterr().err
    with pytest.raises(StoreError, match="format 'xlsx' is not one of csv, jsonl, parquet"):
        store.export(tmp_path / "x.xlsx", "xlsx")


def test_the_hub_push_uploads_the_snapshot_and_the_exports(store, tmp_path, monkeypatch):
    import huggingface_hub

    pushed = []

    class FakeScheduler:  # CommitScheduler without the network: records what push_to_hub would upload
        def __init__(self, **kwargs):
            self.kwargs = kwargs

        def push_to_hub(self):
            folder = self.kwargs["folder_path"]
            pushed.append(sorted(p.name for p in folder.iterdir()))
            return "commit"

    monkeypatch.setattr(huggingface_hub, "CommitScheduler", FakeScheduler)
    data_dir = store.path.parent
    scheduler = start_sync(data_dir, "org/labels", cited=cited)
    assert scheduler.kwargs["private"] and scheduler.kwargs["repo_type"] == "dataset"
    assert scheduler.push_to_hub() == "commit"
    assert pushed == [
        sorted(
            ["annotations.sqlite", "adjudications.jsonl"]
            + [f"{k}.{f}" for k in ("labels", "statute_labels") for f in ("csv", "jsonl", "parquet")]
        )
    ]
    folder = data_dir / "hub_snapshot"
    assert read_jsonl(folder / "labels.jsonl") == read_jsonl(_export(store, tmp_path / "direct.jsonl"))
    assert write_hub_folder(tmp_path / "missing.sqlite", tmp_path / "nothing") == []


def _export(store: AnnotationStore, path):
    store.export(path, "jsonl")
    return path
