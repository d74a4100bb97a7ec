"""When the disk refuses a label: the annotator reads that it was NOT saved (in Chinese and English, not
SQLite's words) and the form keeps everything they typed.

The annotate tab's handler is called directly, on a store whose writes fail: a real full disk (a small
tmpfs, where mounting is permitted) and, everywhere, SQLite's own limits — ``PRAGMA max_page_count``
(SQLITE_FULL, "database or disk is full"), ``PRAGMA query_only`` (SQLITE_READONLY) and a write lock
held by another connection past the busy timeout (SQLITE_BUSY, "database is locked").
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from types import SimpleNamespace

import gradio as gr
import pytest

from eval_ui import annotate_tab
from eval_ui.auth import parse_users
from eval_ui.items import Item
from eval_ui.service import AnnotationService
from eval_ui.store import AnnotationStore, LabelInput, StoreWriteError
from eval_ui.store import connection as store_connection  # where the store reads BUSY_TIMEOUT_S
from lawluo.ui.views import KEEP

from .fakes.disks import fill, tmpfs

ALICE = SimpleNamespace(username="alice")  # what the handlers read from gr.Request
COMMENT = "第二个回答引用的《民法典》第1079条内容不对。" * 80  # 1,840 characters: needs new pages to store


def prepare(path: Path) -> None:
    """Items assigned to alice, who has signed in once (so opening the tab writes nothing)."""
    with AnnotationStore(path) as s:
        s.import_items(
            [Item(f"q{i}", f"问题{i}", f"甲的回答{i}", f"乙的回答{i}", "sysA", "sysB") for i in range(3)]
        )
        s.add_annotator("alice")
        s.assign(overlap=1)


def open_form(store: AnnotationStore) -> tuple[AnnotationService, dict]:
    service = AnnotationService(store, users=parse_users("alice:alicepw"))
    view = vars(annotate_tab.open_annotation(service, ALICE))
    assert view["state"]["item_id"], view["message"]
    return service, view["state"]


def submit(service: AnnotationService, state: dict) -> annotate_tab.AnnotationView:
    form = annotate_tab.LabelForm.from_inputs(state, 7, 4, None, 3, COMMENT, "wrong")
    return annotate_tab.submit_label(service, "left", form, ALICE)


def assert_refused_and_form_kept(view: annotate_tab.AnnotationView, *words: str) -> None:
    message = view.message
    assert "没有保存" in message and "NOT saved" in message
    assert "还在页面上" in message and "still in the form" in message
    for word in words:
        assert word in message
    assert "database" not in message.lower()  # not SQLite's own text
    kept = {name: value for name, value in vars(view).items() if name != "message"}
    assert kept == dict.fromkeys(kept, KEEP)  # every field, the comment and the labels included
    outputs = view.outputs()  # what the page receives: everything but the message is left as it is
    assert sum(o != gr.skip() for o in outputs) == 1 and message in outputs


def test_a_full_disk_refuses_the_label_and_keeps_the_form(tmp_path):
    with tmpfs(tmp_path / "disk", size="512k") as disk:
        path = disk / "annotations.sqlite"
        prepare(path)
        with AnnotationStore(path) as s:
            s._one("PRAGMA wal_checkpoint(TRUNCATE)")  # the next label needs new space on the disk
            service, state = open_form(s)
            fill(disk, leave=0)
            out = submit(service, state)
            assert_refused_and_form_kept(out, "磁盘已满", "disk is full")
            assert s.label("alice", state["item_id"]) is None and s.progress("alice") == (0, 3)

            (disk / "filler").unlink()  # space again: the same form saves
            out = submit(service, state)
            assert "已保存" in out.message and "Saved" in out.message
            assert s.label("alice", state["item_id"])["comment"] == COMMENT


def capped(limit: str):
    """``AnnotationStore._connect`` whose connections may read but not write, as ``limit`` says."""
    connect = AnnotationStore._connect

    def _connect(self) -> sqlite3.Connection:
        con = connect(self)
        if limit == "full":  # the file may not grow by a page: SQLITE_FULL
            con.execute(f"PRAGMA max_page_count = {con.execute('PRAGMA page_count').fetchone()[0]}")
        elif limit == "read-only":  # SQLITE_READONLY
            con.execute("PRAGMA query_only = ON")
        return con

    return _connect


@pytest.mark.parametrize(
    ("fault", "words"),
    [
        ("full", ("磁盘已满", "disk is full")),
        ("read-only", ("只读", "read-only")),
        ("locked", ("忙了", "stayed busy")),
    ],
)
def test_a_refused_write_is_explained_and_the_form_keeps_its_values(tmp_path, monkeypatch, fault, words):
    path = tmp_path / "annotations.sqlite"
    prepare(path)
    monkeypatch.setattr(AnnotationStore, "_connect", capped(fault))
    monkeypatch.setattr(store_connection, "BUSY_TIMEOUT_S", 0.2)
    with AnnotationStore(path) as s:
        service, state = open_form(s)
        other = sqlite3.connect(path, isolation_level=None)
        if fault == "locked":  # another process holds the write lock for longer than the store waits
            other.execute("BEGIN IMMEDIATE")
        try:
            assert_refused_and_form_kept(submit(service, state), *words)
            with pytest.raises(StoreWriteError) as refused:  # the store's own error, SQLite's as its cause
                s.save_label("alice", state["item_id"], LabelInput("tie", comment=COMMENT), "direct")
            assert isinstance(refused.value.__cause__, sqlite3.OperationalError)
        finally:
            other.close()
        assert s.label("alice", state["item_id"]) is None and s.submission("direct") is None
