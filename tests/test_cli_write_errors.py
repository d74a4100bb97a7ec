"""Every ``python -m lawluo`` command that cannot write — a full disk, a read-only folder, a closed or
full stdout — ends with one message on stderr and a non-zero exit status, never a traceback; and
``evaluate`` writes its results all or nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from lawluo.cli import main
from tests.fakes.disks import file_size_limit, fill, tmpfs

from .conftest import ROOT, SESSION_KEYS
from .test_evaluate_cli import evaluate, judge_server, small_set  # noqa: F401 (judge_server: a fixture)

pytestmark = pytest.mark.slow  # 14 s of the suite on 2 cores (4 s or more: left out of the inner loop)

TEXT = "《民法典》第一千零七十九条规定：“夫妻一方要求离婚的，可以由有关组织进行调解或者直接向人民法院提起离婚诉讼。”"
SUMMARY = {"summary.csv", "summary.md", "summary.json"}


@pytest.fixture(autouse=True)
def no_model(monkeypatch):
    for key in list(os.environ):
        if key.startswith(("LAWLUO_", "OPENAI_")) and key not in SESSION_KEYS:
            monkeypatch.delenv(key)


def script(tmp_path):
    path = tmp_path / "script.json"
    path.write_text(
        json.dumps({"turns": [{"text": "朋友借钱不还怎么办？"}], "report": False}), encoding="utf-8"
    )
    return path


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def lawluo(*argv, stdout):
    """``python -m lawluo ARGV`` in a child process writing its stdout to ``stdout``; (status, stderr)."""
    env = {
        k: v for k, v in os.environ.items() if k in SESSION_KEYS or not k.startswith(("LAWLUO_", "OPENAI_"))
    }
    proc = subprocess.run(
        [sys.executable, "-m", "lawluo", *map(str, argv)],
        stdout=stdout,
        stderr=subprocess.PIPE,
        cwd=ROOT,
        env=env,
        timeout=300,
    )
    return proc.returncode, proc.stderr.decode()


def assert_one_clean_message(err, command, *words):
    assert "Traceback" not in err and "Exception ignored" not in err, err
    lines = [line for line in err.splitlines() if line.startswith(f"lawluo {command}: ")]
    assert any(all(w in line for w in words) for line in lines), err


# -- stdout ------------------------------------------------------------------------------------


def test_check_with_stdout_on_a_full_device_says_so_and_exits_1():
    with open("/dev/full", "w") as full:
        code, err = lawluo("check", TEXT, stdout=full)
    assert code == 1
    assert_one_clean_message(err, "check", "cannot write to stdout", "No space left on device")


def test_evaluate_with_stdout_on_a_full_device_says_so_and_exits_1(tmp_path):
    answers, refs = small_set(tmp_path)
    with open("/dev/full", "w") as full:
        argv = ("--answers", answers, "--references", refs, "--out", tmp_path / "o", "--quiet")
        code, err = lawluo("evaluate", *argv, stdout=full)
    assert code == 1
    assert_one_clean_message(err, "evaluate", "cannot write to stdout", "No space left on device")


def test_check_into_a_closed_pipe_says_so_and_exits_1():
    read_end, write_end = os.pipe()
    os.close(read_end)  # nobody reads: the child's first write fails with EPIPE
    try:
        code, err = lawluo("check", TEXT, stdout=write_end)
    finally:
        os.close(write_end)
    assert code == 1
    assert_one_clean_message(err, "check", "cannot write to stdout", "Broken pipe")


# -- files -------------------------------------------------------------------------------------


def test_evaluate_into_a_folder_that_cannot_be_made_says_so_and_exits_1(capsys, tmp_path):
    answers, refs = small_set(tmp_path)
    (tmp_path / "a-file").write_text("", encoding="utf-8")
    out = tmp_path / "a-file" / "results"
    code, rows, err = evaluate(capsys, answers, refs, out, "--quiet")
    assert code == 1
    assert_one_clean_message(err, "evaluate", "cannot write the results", "a-file")
    # The scores are not lost: the per-system rows still went to stdout.
    assert [row["system"] for row in rows] == ["LawLuo", "Baseline"]


def test_consult_save_that_fails_keeps_the_transcript_on_stdout_and_exits_1(capsys, tmp_path):
    (tmp_path / "a-file").write_text("", encoding="utf-8")
    save = tmp_path / "a-file" / "state.json"
    code, stdout, err = run(capsys, "consult", "--script", script(tmp_path), "--save", save)
    assert code == 1
    assert_one_clean_message(err, "consult", "cannot save the consultation", "a-file")
    assert json.loads(stdout)["transcript"][0]["role"] == "client"


def test_a_read_only_disk_is_a_message_for_evaluate_and_consult(capsys, tmp_path):
    answers, refs = small_set(tmp_path)
    with tmpfs(tmp_path / "ro", readonly=True) as ro:
        code, _, err = evaluate(capsys, answers, refs, ro / "o", "--quiet")
        assert code == 1
        assert_one_clean_message(err, "evaluate", "cannot write the results", "Read-only file system")
        code, _, err = run(capsys, "consult", "--script", script(tmp_path), "--save", ro / "state.json")
        assert code == 1
        assert_one_clean_message(err, "consult", "cannot save the consultation", "Read-only file system")


@pytest.mark.usefixtures("judge_server")
def test_a_judge_cache_that_cannot_be_opened_is_a_message(capsys, tmp_path):
    answers, refs = small_set(tmp_path)
    options = ("--metrics", "score", "--cache", tmp_path, "--quiet")  # the cache "file" is a folder
    code, _, err = evaluate(capsys, answers, refs, tmp_path / "o", *options)
    assert code == 1
    assert_one_clean_message(err, "evaluate", "unable to open database file", "--no-cache")


# -- evaluate: all or nothing ------------------------------------------------------------------


def test_evaluate_writes_all_its_files_or_none(capsys, tmp_path):
    answers, refs = small_set(tmp_path)
    argv = ("evaluate", "--answers", answers, "--references", refs, "--quiet", "--out")
    previous = tmp_path / "previous"
    assert run(capsys, *argv, previous)[0] == 0
    sizes = {p.name: p.stat().st_size for p in previous.iterdir()}
    assert set(sizes) == SUMMARY | {"details.jsonl", "citations.csv"}
    biggest_summary = max(sizes[name] for name in SUMMARY)
    assert sizes["details.jsonl"] > biggest_summary + 100
    before = {p.name: p.read_bytes() for p in previous.iterdir()}
    fresh = tmp_path / "fresh"
    with file_size_limit(biggest_summary + 50):  # every summary file fits; details.jsonl does not
        code_fresh, _, err_fresh = run(capsys, *argv, fresh)
        code_again, _, err_again = run(capsys, *argv, previous)
    assert code_fresh == code_again == 1
    assert_one_clean_message(err_fresh, "evaluate", "cannot write the results", "File too large")
    assert_one_clean_message(err_again, "evaluate", "cannot write the results", "File too large")
    # No summary without its details: nothing in a new folder, the earlier run's files untouched.
    assert not fresh.exists() or list(fresh.iterdir()) == []
    assert {p.name: p.read_bytes() for p in previous.iterdir()} == before


def test_evaluate_on_a_full_disk_leaves_no_summary_without_details(capsys, tmp_path):
    answers, refs = small_set(tmp_path)
    with tmpfs(tmp_path / "disk", size="64k") as disk:
        fill(disk, leave=4096)  # room for the summaries, not for the summaries and the details
        code, _, err = evaluate(capsys, answers, refs, disk / "o", "--quiet")
        assert code == 1
        assert_one_clean_message(err, "evaluate", "cannot write the results", "No space left on device")
        assert not (disk / "o").exists() or list((disk / "o").iterdir()) == []
