"""``python -m lawluo generate``: LawLuo's pipeline (or a one-model baseline) over a question file,
resumable, with failures retried on the next run and bad input refused."""

from __future__ import annotations

import json

import pytest

from lawluo.cli import main
from lawluo.firm import Firm
from tests.conftest import SESSION_KEYS
from tests.fakes.disks import file_size_limit, fill, tmpfs
from tests.fakes.firm_models import LAWYER_ANSWER, FirmResponder
from tests.fakes.live_app import model_environ
from tests.fakes.openai_server import FakeOpenAIServer

pytestmark = pytest.mark.slow  # 5 s of the suite on 2 cores (4 s or more: left out of the inner loop)

QUESTIONS = [
    {"id": "a", "question": "公司一直没和我签劳动合同，现在把我辞退了怎么办？"},
    {"id": "b", "question": "离婚时孩子的抚养权一般归谁？"},
    {"id": "c", "question": "醉酒驾驶会被判刑吗？"},
]


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, [json.loads(line) for line in out.splitlines()], err


def generate(capsys, questions, system, *options):
    return run(capsys, "generate", "--questions", questions, "--system", system, *options)


def rows_of(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture
def environment(monkeypatch, firm_services):
    """No model variables from the caller's shell; the firm built from the session's loaded services."""
    for key in list(__import__("os").environ):
        if key.startswith(("LAWLUO_", "OPENAI_")) and key not in SESSION_KEYS:
            monkeypatch.delenv(key)
    original = Firm.from_settings.__func__
    monkeypatch.setattr(Firm, "from_settings", classmethod(lambda cls, s: original(cls, s, **firm_services)))


@pytest.fixture
def server(monkeypatch, environment):
    with FakeOpenAIServer() as server:
        server.responder = FirmResponder()
        for key, value in model_environ(server).items():
            monkeypatch.setenv(key, value)
        yield server


@pytest.fixture
def questions(tmp_path):
    path = tmp_path / "q.jsonl"
    path.write_text("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in QUESTIONS), encoding="utf-8")
    return path


def test_lawluo_pipeline_answers_every_question_with_checked_citations(capsys, tmp_path, server, questions):
    out = tmp_path / "answers.jsonl"
    code, (summary,), err = generate(capsys, questions, "LawLuo", "--out", out, "--quiet")
    assert code == 0, err
    assert summary["written"] == 3 and summary["failed"] == 0
    rows = rows_of(out)
    assert sorted(r["id"] for r in rows) == ["a", "b", "c"]
    row = next(r for r in rows if r["id"] == "a")
    assert row["system"] == "LawLuo" and row["answer"] == LAWYER_ANSWER and row["mode"] == "lawluo"
    assert row["domain"] == "labor"
    assert row["verdicts"] == {"verified": 1, "not_found": 1} and row["nhsr"] == 0.5
    # The lawyer got its domain role prompt and the retrieved statutes.
    first = server.responder.lawyer_requests[0]
    assert first[0]["role"] == "system" and "律师" in first[0]["content"]


def test_rerunning_skips_answered_questions_and_the_file_is_valid_answers_input(
    capsys, tmp_path, server, questions
):
    out = tmp_path / "answers.jsonl"
    generate(capsys, questions, "LawLuo", "--out", out, "--quiet")
    lawyer_calls = server.responder.calls["lawyer"]
    code, (summary,), _ = generate(capsys, questions, "LawLuo", "--out", out, "--quiet")
    assert code == 0 and summary["written"] == 0 and summary["already_answered"] == 3
    assert server.responder.calls["lawyer"] == lawyer_calls
    # A second system goes into the same file.
    generate(capsys, questions, "Plain", "--baseline", "--out", out, "--quiet")
    assert len(rows_of(out)) == 6
    refs = tmp_path / "refs.jsonl"
    refs.write_text(
        "".join(json.dumps({**q, "reference": ""}, ensure_ascii=False) + "\n" for q in QUESTIONS),
        encoding="utf-8",
    )
    code, rows, err = run(
        capsys,
        "evaluate",
        "--answers",
        out,
        "--references",
        refs,
        "--out",
        tmp_path / "e",
        "--metrics",
        "nhsr",
        "--quiet",
    )
    assert code == 0, err
    assert {r["system"]: r["nhsr"] for r in rows} == {"LawLuo": 0.5, "Plain": 0.5}


def test_baseline_sends_the_question_alone(capsys, tmp_path, server, questions):
    out = tmp_path / "answers.jsonl"
    code, _, _ = generate(capsys, questions, "Plain", "--baseline", "--out", out, "--limit", "1", "--quiet")
    assert code == 0
    (request,) = server.requests
    assert request["messages"] == [{"role": "user", "content": QUESTIONS[0]["question"]}]
    (row,) = rows_of(out)
    assert row["mode"] == "baseline" and row["domain"] is None and row["nhsr"] == 0.5


def test_a_failed_question_is_not_written_and_the_next_run_retries_it(capsys, tmp_path, server, questions):
    responder = server.responder

    def flaky(body):
        if any("醉酒" in m["content"] for m in body["messages"] if m["role"] == "user"):
            raise RuntimeError("down")  # the fake answers 500
        return responder(body)

    server.responder = flaky
    out = tmp_path / "answers.jsonl"
    code, (summary,), err = generate(capsys, questions, "Plain", "--baseline", "--out", out, "--quiet")
    assert code == 1 and summary["written"] == 2 and summary["failed"] == 1
    assert "question c:" in err and "run the same command again" in err
    assert sorted(r["id"] for r in rows_of(out)) == ["a", "b"]
    server.responder = responder
    code, (summary,), _ = generate(capsys, questions, "Plain", "--baseline", "--out", out, "--quiet")
    assert code == 0 and summary["written"] == 1 and summary["already_answered"] == 2


def test_without_a_lawyer_model_nothing_is_generated(capsys, tmp_path, environment, questions):
    out = tmp_path / "answers.jsonl"
    code, rows, err = generate(capsys, questions, "LawLuo", "--out", out)
    assert code == 2 and "needs a lawyer model" in err and rows == []
    assert not out.exists()


def test_bad_question_files_and_a_corrupt_output_file_are_refused(capsys, tmp_path, server):
    bad = tmp_path / "q.jsonl"
    bad.write_text(
        '{"id": 1, "question": "问"}\n{"id": 2}\n{"id": 1, "question": "又问"}\n', encoding="utf-8"
    )
    code, _, err = generate(capsys, bad, "S", "--out", tmp_path / "o.jsonl")
    assert (
        code == 2
        and 'q.jsonl:2: expected a non-empty "question"' in err
        and "q.jsonl:3: id 1 appears twice" in err
    )
    good = tmp_path / "good.jsonl"
    good.write_text('{"id": 1, "question": "问"}\n', encoding="utf-8")
    corrupt = tmp_path / "o.jsonl"
    corrupt.write_text('{"id": "x", "system": "S", "answer": "甲"}\n{not json\n', encoding="utf-8")
    code, _, err = generate(capsys, good, "S", "--out", corrupt)
    assert code == 2 and "o.jsonl:2" in err and "not changed" in err
    assert corrupt.read_text(encoding="utf-8").endswith("{not json\n")
    assert server.requests == []


@pytest.fixture
def ten_questions(tmp_path):
    path = tmp_path / "q10.jsonl"
    rows = [{"id": f"q{i}", "question": QUESTIONS[i % 3]["question"]} for i in range(10)]
    path.write_text("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in rows), encoding="utf-8")
    return path


def row_size(capsys, tmp_path, questions):
    """Bytes one baseline answer takes in the answers file."""
    probe = tmp_path / "probe.jsonl"
    generate(capsys, questions, "Plain", "--baseline", "--out", probe, "--limit", "1", "--quiet")
    return probe.stat().st_size


def test_a_write_that_fails_midway_keeps_every_complete_answer_and_the_same_command_resumes(
    capsys, tmp_path, server, ten_questions
):
    size = row_size(capsys, tmp_path, ten_questions)
    out = tmp_path / "answers.jsonl"
    command = (ten_questions, "Plain", "--baseline", "--out", out, "--quiet", "--concurrency", "1")
    # each answer takes 50 ms, as a served model's take far longer: the worker, which takes its next
    # question without waiting for the write (as_finished), is then one answer ahead of the writer at most;
    # at zero latency a busy machine let it get two ahead (CI, session 17)
    server.latency = 0.05
    with file_size_limit(2 * size + size // 2):  # room for two answers and half of the third
        code, (summary,), err = generate(capsys, *command)
    assert code == 1 and summary["written"] == 2
    assert "Traceback" not in err
    (message,) = [line for line in err.splitlines() if "cannot write" in line]
    assert "answers.jsonl" in message and "File too large" in message
    assert "2 answers written" in message and "run the same command again" in message
    # The half-written third answer was cut back off: the file is two complete lines.
    assert out.read_bytes().endswith(b"\n") and [r["id"] for r in rows_of(out)] == ["q0", "q1"]
    # Once the file could not be written no further question was sent: the probe, q0–q2, and at most the
    # one the worker had taken as its answer to q2 came in (a worker does not wait for the write).
    assert 1 + 3 <= server.responder.calls["lawyer"] <= 1 + 3 + 1
    code, (summary,), err = generate(capsys, *command)
    assert code == 0, err
    assert summary["written"] == 8 and summary["already_answered"] == 2
    assert sorted(r["id"] for r in rows_of(out)) == sorted(f"q{i}" for i in range(10))


def test_on_a_full_disk_generate_stops_cleanly_and_resumes_once_there_is_space(
    capsys, tmp_path, server, ten_questions
):
    size = row_size(capsys, tmp_path, ten_questions)
    assert size * 10 > 4096  # ten answers do not fit in the one page left free below
    with tmpfs(tmp_path / "disk", size="64k") as disk:
        filler = fill(disk, leave=4096)
        out = disk / "answers.jsonl"
        command = (ten_questions, "Plain", "--baseline", "--out", out, "--quiet", "--concurrency", "1")
        code, (summary,), err = generate(capsys, *command)
        assert code == 1 and "Traceback" not in err
        written = summary["written"]
        assert 0 < written < 10 and len(rows_of(out)) == written
        assert f"No space left on device; {written} answers written" in err
        filler.unlink()
        code, (summary,), err = generate(capsys, *command)
        assert code == 0, err
        assert summary["written"] == 10 - written and len(rows_of(out)) == 10


def test_a_last_line_cut_off_by_a_crash_is_dropped_with_a_warning_and_answered_again(
    capsys, tmp_path, server, questions
):
    out = tmp_path / "answers.jsonl"
    generate(capsys, questions, "Plain", "--baseline", "--out", out, "--limit", "2", "--quiet")
    complete = out.read_bytes()
    with out.open("ab") as f:
        f.write('{"id": "c", "system": "Plain", "answer": "醉酒'.encode()[:-1])  # cut inside a character
    code, (summary,), err = generate(capsys, questions, "Plain", "--baseline", "--out", out, "--quiet")
    assert code == 0, err
    assert "answers.jsonl:3: dropped an incomplete last line" in err
    assert summary["written"] == 1 and summary["already_answered"] == 2
    assert out.read_bytes().startswith(complete) and sorted(r["id"] for r in rows_of(out)) == ["a", "b", "c"]


def test_a_bad_line_before_the_last_is_still_refused_and_nothing_is_changed(
    capsys, tmp_path, server, questions
):
    out = tmp_path / "answers.jsonl"
    text = '{"id": "a", "system": "S", "answer": "甲"}\n{not json\n{"id": "b", "sys'
    out.write_text(text, encoding="utf-8")
    code, _, err = generate(capsys, questions, "S", "--baseline", "--out", out, "--quiet")
    assert code == 2 and "answers.jsonl:2: not valid JSON" in err and "not changed" in err
    assert out.read_text(encoding="utf-8") == text and server.requests == []
