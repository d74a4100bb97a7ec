"""``python -m eval_ui``: an admin imports the demo set, registers annotators, assigns, and exports labels."""

from __future__ import annotations

import csv

from eval_ui.__main__ import STORE_FILE
from eval_ui.demo import DEMO_ITEMS
from eval_ui.store import AnnotationStore, LabelInput

from .eval_commands import run


def test_demo_set_round_trip_through_the_admin_commands(capsys, store_dir, tmp_path):
    assert run(capsys, "import", DEMO_ITEMS)[1] == [{"imported": 60, "items": 60}]
    for name in ("alice", "bob"):
        run(capsys, "add-annotator", name)
    assert run(capsys, "add-annotator", "root", "--role", "admin")[1] == [
        {"annotator": "root", "role": "admin"}
    ]
    assert run(capsys, "assign", "--overlap", "2")[1] == [{"new_assignments": 120, "overlap": 2}]
    with AnnotationStore(store_dir / STORE_FILE) as store:
        assignment = store.next_item("alice")
        store.save_label("alice", assignment.item.id, LabelInput("left"), "s1")
    code, rows, _ = run(capsys, "status")
    assert code == 0 and {r["name"]: (r["done"], r["assigned"]) for r in rows[1:]} == {
        "alice": (1, 60),
        "bob": (0, 60),
        "root": (0, 0),
    }
    code, (summary,), _ = run(capsys, "export", tmp_path / "labels.csv")
    assert code == 0 and summary["exported"] == 1
    # utf-8-sig: the export starts with a BOM so that Excel reads the Chinese text right.
    (row,) = list(csv.DictReader((tmp_path / "labels.csv").open(encoding="utf-8-sig")))
    expected = assignment.item.system_b if assignment.swapped else assignment.item.system_a
    assert row["annotator"] == "alice" and row["winner"] == expected


def test_a_second_import_of_the_same_items_changes_nothing(capsys, store_dir):
    run(capsys, "import", DEMO_ITEMS)
    code, rows, err = run(capsys, "import", DEMO_ITEMS)
    assert code == 2 and rows == [] and "nothing imported" in err and "Traceback" not in err


def test_bad_files_and_missing_arguments_are_clear_errors(capsys, store_dir, tmp_path):
    bad = tmp_path / "items.jsonl"
    bad.write_text('{"id": "x", "question": "问"}\n', encoding="utf-8")
    code, _, err = run(capsys, "import", bad)
    assert code == 2 and "items.jsonl:1" in err
    code, _, err = run(capsys, "import")
    assert code == 2 and "--pair" in err
    code, _, err = run(capsys, "assign", "--overlap", "2")
    assert code == 2 and "annotators" in err
