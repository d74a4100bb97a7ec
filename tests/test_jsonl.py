"""JSON Lines appends that a crash or a full disk cannot corrupt, and the recovery of a line cut off."""

from __future__ import annotations

import errno
import json
import os

import pytest

from lawluo.jsonl import JSONLAppender, JSONLError, drop_partial_last_line, read_jsonl

ROW = {"id": "q1", "answer": "根据《民法典》第一千零七十九条……"}


def full_disk_after(monkeypatch, path, free):
    """``os.write`` to ``path`` as on a disk with ``free`` bytes left: a short write, then ENOSPC."""
    real_write, left = os.write, [free]

    def write(fd, data):
        if os.path.realpath(f"/proc/self/fd/{fd}") != os.path.realpath(path):
            return real_write(fd, data)
        if left[0] == 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        n = real_write(fd, bytes(data[: left[0]]))
        left[0] -= n
        return n

    monkeypatch.setattr(os, "write", write)


def test_each_record_is_one_whole_line(tmp_path):
    path = tmp_path / "a.jsonl"
    with JSONLAppender(path) as out:
        out.append(ROW)
        out.append({**ROW, "id": "q2"})
    assert [obj["id"] for _, obj in read_jsonl(path)] == ["q1", "q2"]


def test_a_write_that_fails_part_way_is_cut_back_off_and_the_error_raised(tmp_path, monkeypatch):
    path = tmp_path / "a.jsonl"
    with JSONLAppender(path) as out:
        out.append(ROW)
    before = path.read_bytes()
    full_disk_after(monkeypatch, path, free=10)
    with JSONLAppender(path) as out, pytest.raises(OSError) as caught:
        out.append({**ROW, "id": "q2"})
    assert caught.value.errno == errno.ENOSPC
    assert path.read_bytes() == before  # not the 10 bytes of q2 that fitted
    monkeypatch.undo()
    with JSONLAppender(path) as out:
        out.append({**ROW, "id": "q2"})
    assert [obj["id"] for _, obj in read_jsonl(path)] == ["q1", "q2"]


@pytest.mark.parametrize(
    "tail",
    [b'{"id": "q2", "answer": "\xe6\xa0', b"\0\0\0\0"],
    ids=["cut-in-a-character", "zeros-after-a-power-cut"],
)
def test_a_cut_off_last_line_is_dropped_and_named(tmp_path, tail):
    path = tmp_path / "a.jsonl"
    complete = (json.dumps(ROW, ensure_ascii=False) + "\n").encode()
    path.write_bytes(complete + tail)
    assert drop_partial_last_line(path) == (
        f"{path}:2: dropped an incomplete last line ({len(tail)} bytes, cut off by a crash or a full disk)"
    )
    assert path.read_bytes() == complete
    assert drop_partial_last_line(path) is None


def test_a_whole_last_record_without_its_newline_is_kept(tmp_path):
    path = tmp_path / "a.jsonl"
    path.write_text(json.dumps(ROW), encoding="utf-8")  # written by hand, no final newline
    assert drop_partial_last_line(path) is None
    with JSONLAppender(path) as out:
        out.append({**ROW, "id": "q2"})
    assert [obj["id"] for _, obj in read_jsonl(path)] == ["q1", "q2"]


def test_a_bad_line_before_the_last_is_an_error_and_nothing_is_dropped(tmp_path):
    path = tmp_path / "a.jsonl"
    text = '{"id": "q1"}\n{oops\n{"id": "q3", "ans'
    path.write_text(text, encoding="utf-8")
    with pytest.raises(JSONLError, match=r"a\.jsonl:2: not valid JSON"):
        drop_partial_last_line(path)
    assert path.read_text(encoding="utf-8") == text
