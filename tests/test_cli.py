"""``python -m lawluo``: the search and check contract researchers script against, and bad input."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from lawluo.cli import main

from .conftest import ROOT

pytestmark = pytest.mark.slow  # 14 s of the suite on 2 cores (4 s or more: left out of the inner loop)


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, [json.loads(line) for line in out.splitlines()], err


def test_search_statutes_returns_the_documented_fields(capsys, statute_searcher):
    code, rows, _ = run(capsys, "search", "statutes", "试用期 解除劳动合同", "-k", "5")
    assert code == 0
    (row,) = rows
    assert set(row) == {"id", "query", "hits", "notices"} and row["query"] == "试用期 解除劳动合同"
    assert row["notices"] == []
    assert len(row["hits"]) == 5
    assert {"law", "article", "version", "text", "score"} <= set(row["hits"][0])
    assert any(h["law"] == "中华人民共和国劳动合同法" for h in row["hits"])
    scores = [h["score"] for h in row["hits"]]
    assert scores == sorted(scores, reverse=True)


def test_search_for_an_article_of_a_repealed_law_says_what_replaced_it(capsys, statute_searcher):
    assert main(["search", "statutes", "合同法第五十二条", "-k", "1"]) == 0
    (notice,) = json.loads(capsys.readouterr().out)["notices"]
    assert "已废止" in notice and "中华人民共和国民法典" in notice


def test_search_input_file_keeps_ids(capsys, tmp_path, statute_searcher):
    f = tmp_path / "q.jsonl"
    f.write_text('{"id": "a", "text": "醉酒驾驶机动车"}\n{"text": "离婚 子女抚养"}\n', encoding="utf-8")
    code, rows, _ = run(capsys, "search", "statutes", "--input", str(f), "-k", "3")
    assert code == 0 and [r["id"] for r in rows] == ["a", "2"]
    assert all(len(r["hits"]) == 3 for r in rows)


def test_search_cases_hits_carry_case_fields(capsys, case_searcher):
    code, rows, _ = run(capsys, "search", "cases", "被告人醉酒驾驶机动车", "-k", "3")
    assert code == 0
    hit = rows[0]["hits"][0]
    assert {"id", "title", "cause", "facts", "articles", "score"} <= set(hit)


@pytest.mark.parametrize("query", ["", "   \n\t"])
def test_empty_query_is_a_clear_error(capsys, query, statute_searcher):
    code, rows, err = run(capsys, "search", "statutes", query)
    assert code == 2 and "empty query" in err
    assert rows[0]["hits"] == []


def test_check_reports_verdicts_and_nhsr(capsys):
    text = "《民法典》第一千零七十九条规定：“夫妻一方要求离婚的，可以由有关组织进行调解或者直接向人民法院提起离婚诉讼。”"
    code, rows, _ = run(capsys, "check", text)
    assert code == 0
    (row,) = rows
    assert row["nhsr"] == 1.0
    (cit,) = row["citations"]
    assert {"law", "article", "verdict", "quoted", "matched"} <= set(cit)
    assert (cit["law"], cit["article"], cit["verdict"]) == ("中华人民共和国民法典", 1079, "verified")
    assert cit["matched"]["article"] == 1079


def test_check_nhsr_null_without_content(capsys):
    _, rows, _ = run(capsys, "check", "参见《民法典》第1079条")
    assert rows[0]["nhsr"] is None and rows[0]["citations"][0]["verdict"] == "no_content"


def test_check_reads_stdin():
    proc = subprocess.run(
        [sys.executable, "-m", "lawluo", "check", "-"],
        input="《合同法》第一百零七条".encode(),
        capture_output=True,
        cwd=ROOT,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    assert json.loads(proc.stdout)["citations"][0]["verdict"] == "repealed"


def test_broken_jsonl_line_is_named_and_nothing_is_processed(capsys, tmp_path):
    f = tmp_path / "answers.jsonl"
    f.write_text('{"id": 1, "text": "《民法典》第1079条"}\n{"id": 2, "text": oops}\n', encoding="utf-8")
    code, rows, err = run(capsys, "check", "--input", str(f))
    assert code == 2 and rows == []
    assert f"{f}:2" in err and "not valid JSON" in err


def test_jsonl_line_without_text_is_named(capsys, tmp_path):
    f = tmp_path / "q.jsonl"
    f.write_text('{"id": 1, "query": "x"}\n', encoding="utf-8")
    code, _, err = run(capsys, "check", "--input", str(f))
    assert code == 2 and ':1: expected an object with a "text" string' in err


def test_binary_file_is_rejected(capsys, tmp_path):
    f = tmp_path / "model.bin"
    f.write_bytes(bytes(range(256)) * 10)
    code, _, err = run(capsys, "search", "statutes", "--input", str(f))
    assert code == 2 and "binary" in err


def test_missing_file_and_missing_argument(capsys, tmp_path):
    code, _, err = run(capsys, "check", "--input", str(tmp_path / "none.jsonl"))
    assert code == 2 and "no such file" in err
    code, _, err = run(capsys, "check")
    assert code == 2 and "missing TEXT" in err


def test_one_megabyte_text_is_checked_and_truncation_reported(capsys):
    text = "《民法典》第一千零七十九条。" + "无关的长文本" * 180_000
    assert len(text.encode()) > 1_000_000
    code, rows, err = run(capsys, "check", text)
    assert code == 0 and "only the first 200,000 are checked" in err
    assert rows[0]["citations"][0]["article"] == 1079


def test_huge_query_is_truncated_not_rejected(capsys, statute_searcher):
    code, rows, _ = run(capsys, "search", "statutes", "劳动合同" * 300_000, "-k", "2")
    assert code == 0 and len(rows[0]["hits"]) == 2


def test_missing_statute_database_says_how_to_build_it(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("LAWLUO_ASSETS_DIR", str(tmp_path))
    code, _, err = run(capsys, "check", "《民法典》第1079条")
    assert code == 1 and "python -m lawluo build statutes" in err


@pytest.mark.parametrize("command", [("check", "《民法典》第1079条"), ("search", "statutes", "离婚")])
def test_a_config_whose_assets_folder_is_empty_is_honoured_after_a_default_run(capsys, tmp_path, command):
    """A process that already used the default assets must still read the ones --config names."""
    assert run(capsys, *command)[0] == 0  # the default assets, loaded first
    config = tmp_path / "other.yaml"
    config.write_text(f"assets_dir: {tmp_path / 'empty'}\n", encoding="utf-8")
    code, rows, err = run(capsys, "--config", str(config), *command)
    assert code == 1 and rows == [] and "python -m lawluo build statutes" in err
