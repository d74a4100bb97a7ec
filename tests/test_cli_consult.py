"""``python -m lawluo consult --script``: a scripted consultation from the shell, saved and resumed."""

from __future__ import annotations

import json

import pytest

from lawluo.cli import main

pytestmark = pytest.mark.slow  # 7 s of the suite on 2 cores (4 s or more: left out of the inner loop)

QUESTION = "朋友借了我五万块钱一直不还，只有微信转账记录，我该怎么办？"


@pytest.fixture(autouse=True)
def no_models(monkeypatch):
    monkeypatch.delenv("LAWLUO_CONFIG", raising=False)


def write(tmp_path, obj, name="script.json"):
    path = tmp_path / name
    path.write_text(
        json.dumps(obj, ensure_ascii=False) if not isinstance(obj, str) else obj, encoding="utf-8"
    )
    return str(path)


def test_consult_prints_transcript_tree_report_and_trace(tmp_path, capsys):
    script = write(
        tmp_path, {"client": "赵先生", "turns": [{"text": QUESTION, "marks": {"1": "yes", "2": "no"}}]}
    )
    assert main(["consult", "--script", script, "--save", str(tmp_path / "state.json")]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["routing"]["domain"] == "debt"
    assert [t["role"] for t in out["transcript"]] == ["client", "lawyer"]
    assert (
        "未配置律师模型" in out["transcript"][1]["text"] and "可能相关的法条" in out["transcript"][1]["text"]
    )
    assert out["tree"]["source"] == "material"  # the domain's clarification material, no model
    assert [n["mark"] for n in out["tree"]["nodes"][1:3]] == ["yes", "no"]
    assert out["report"]["client"] == "赵先生" and out["report"]["generated_by"] == "no model"
    assert {e["agent"] for e in out["trace"]} >= {
        "receptionist",
        "clarifier",
        "retrieval",
        "lawyer",
        "secretary",
    }
    saved = json.loads((tmp_path / "state.json").read_text(encoding="utf-8"))
    assert saved["status"] == "closed" and saved["id"] == out["id"]


def test_consult_resumes_a_saved_consultation(tmp_path, capsys):
    first = write(tmp_path, {"turns": [{"text": QUESTION}], "report": False}, "first.json")
    state = str(tmp_path / "state.json")
    assert main(["consult", "--script", first, "--save", state]) == 0
    first_id = json.loads(capsys.readouterr().out)["id"]
    second = write(tmp_path, {"turns": [{"text": "对方说是我送给他的，怎么办？"}]}, "second.json")
    assert main(["consult", "--script", second, "--resume", state]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["id"] == first_id and len(out["transcript"]) == 4 and out["report"]


@pytest.mark.parametrize(
    ("script", "message"),
    [
        ("{broken", "not a valid consultation script"),
        ({"turns": []}, "turns: List should have at least 1 item"),
        ({"turns": [{"text": "x", "marks": {"1": "maybe"}}]}, "turns.0.marks.1"),
        ({"turns": [{"txt": "x"}]}, "turns.0.text: Field required"),
        ({"turns": [{"text": QUESTION, "marks": {"9.9": "yes"}}]}, "marks name node(s) 9.9 not in the tree"),
    ],
    ids=["not-json", "no-turns", "bad-mark", "typo", "unknown-node"],
)
def test_a_bad_script_is_refused_with_the_reason(tmp_path, capsys, script, message):
    assert main(["consult", "--script", write(tmp_path, script)]) == 2
    assert message in capsys.readouterr().err


def test_a_missing_script_file_is_named(capsys):
    assert main(["consult", "--script", "/nonexistent.json"]) == 2
    assert "/nonexistent.json: cannot read the script" in capsys.readouterr().err
