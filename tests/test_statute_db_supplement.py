"""``data/laws_supplement/``: older versions from LawRefBook/Laws' history, added after the pinned tree."""

from __future__ import annotations

import sqlite3
import subprocess

import pytest

from lawluo.data_sources import SUPPLEMENT, SUPPLEMENT_DIR, file_sha256
from lawluo.law.build import build_statute_db, source_fingerprint
from lawluo.law.database import StatuteDB

from .conftest import SHARED_DATA

pytestmark = pytest.mark.slow  # 14 s of the suite on 2 cores (4 s or more: left out of the inner loop)

LAW = "# 中华人民共和国{name}\n\n{date} 通过\n\n<!-- INFO END -->\n\n第一条 {text}\n\n第二条 本法自{effect}起施行。\n"


def write(folder, rel, text):
    (folder / rel).parent.mkdir(parents=True, exist_ok=True)
    (folder / rel).write_text(text, encoding="utf-8")


def test_the_files_are_those_recorded_with_their_upstream_sha256():
    found = {p.relative_to(SUPPLEMENT_DIR).as_posix() for p in SUPPLEMENT_DIR.rglob("*") if p.is_file()}
    assert found == {f.target for f in SUPPLEMENT}
    for f in SUPPLEMENT:
        assert file_sha256(SUPPLEMENT_DIR / f.target) == f.sha256, f.target
        assert len(f.commit) == 40 and f.upstream.endswith(".md")


def test_the_supplement_is_tracked_by_git_not_ignored():
    ignored = subprocess.run(
        ["git", "check-ignore", "-q", str(SUPPLEMENT_DIR / SUPPLEMENT[0].target)], cwd=SUPPLEMENT_DIR
    )
    assert ignored.returncode == 1  # 1: not ignored (0 would mean .gitignore hides it)


def test_supplement_rows_follow_the_pinned_rows_so_no_existing_article_moves(tmp_path):
    laws, extra = tmp_path / "laws", tmp_path / "extra"
    write(
        laws,
        "法律/甲法(2020-01-01).md",
        LAW.format(name="甲法", date="2020年1月1日", text="新的规定。", effect="2020年3月1日"),
    )
    write(
        laws,
        "法律/乙法(2019-01-01).md",
        LAW.format(name="乙法", date="2019年1月1日", text="乙。", effect="2019年2月1日"),
    )
    write(
        extra,
        "法律/甲法(2010-01-01).md",
        LAW.format(name="甲法", date="2010年1月1日", text="旧的规定。", effect="2010年3月1日"),
    )
    # the same version as the pinned one: the pinned file wins
    write(
        extra,
        "法律/乙法(2019-01-01).md",
        LAW.format(name="乙法", date="2019年1月1日", text="别的。", effect="2019年2月1日"),
    )
    plain, added = tmp_path / "plain.sqlite", tmp_path / "added.sqlite"
    assert build_statute_db(laws, plain)["articles"] == 4  # True: the tiny tree is not the pinned one
    counts = build_statute_db(laws, added, supplement=extra)
    assert counts["articles"] == 6 and counts["supplement_versions"] == 1

    def rows(path):
        con = sqlite3.connect(path)
        out = con.execute("SELECT law_id, number, text FROM articles ORDER BY id").fetchall()
        con.close()
        return out

    assert rows(added)[:4] == rows(plain)
    db = StatuteDB(added)
    assert [v.version for v in db.versions("甲法")] == ["2020-01-01", "2010-01-01"]
    assert db.version_in_force("甲法", "2015-06-01").valid_from == "2010-03-01"
    assert db.article(db.version_in_force("甲法", "2015-06-01"), 1).text == "旧的规定。"
    assert db.article(db.current("乙法"), 1).text == "乙。"
    assert "data/laws_supplement" in db.meta["source"] and db.meta["supplement_sha256"]
    assert "laws_supplement" not in StatuteDB(plain).meta["source"]


def test_an_edited_supplement_file_stops_the_build(tmp_path, monkeypatch):
    from lawluo.law import build

    folder = tmp_path / "laws_supplement"
    write(folder, SUPPLEMENT[0].target, "# 中华人民共和国刑法\n\n<!-- INFO END -->\n\n第一条 改过的。\n")
    monkeypatch.setattr(build, "SUPPLEMENT_DIR", folder)
    laws = tmp_path / "laws"
    write(
        laws,
        "法律/甲法(2020-01-01).md",
        LAW.format(name="甲法", date="2020年1月1日", text="甲。", effect="2020年3月1日"),
    )
    monkeypatch.setattr(build, "SUPPLEMENT_APPLIES_TO", source_fingerprint(laws))
    with pytest.raises(ValueError, match="differs from lawluo.data_sources.SUPPLEMENT"):
        build_statute_db(laws, tmp_path / "out.sqlite")


def test_the_shipped_database_holds_the_supplement_after_the_pinned_tree(db):
    supplement = [law for law in db.laws.values() if law.id > max(a.law.id for a in db.articles[:64496])]
    assert sorted((law.key, law.version) for law in supplement) == sorted(
        [
            ("刑法", "2020-12-26"),
            ("劳动合同法", "2007-06-29"),
            ("最高人民法院关于适用民事诉讼法的解释", "2014-12-18"),
            ("最高人民法院关于审理民间借贷案件适用法律若干问题的规定", "2020-08-18"),
            ("最高人民法院关于审理医疗损害责任纠纷案件适用法律若干问题的解释", "2017-03-27"),
        ]
    )
    assert all(not law.is_current for law in supplement)  # none displaces a pinned current version
    assert (
        "劳务派遣单位应当依照公司法的有关规定设立"
        in db.article(db.version_in_force("劳动合同法", "2010-01-01"), 57).text
    )


@pytest.mark.skipif(not (SHARED_DATA / "laws").exists(), reason="needs ../shared/data/laws")
def test_the_pinned_tree_is_the_one_the_supplement_completes():
    from lawluo.data_sources import SUPPLEMENT_APPLIES_TO

    assert source_fingerprint(SHARED_DATA / "laws") == SUPPLEMENT_APPLIES_TO


def test_the_coverage_checklist_runs_on_the_shipped_database(db):
    import importlib.util

    from .conftest import ROOT

    spec = importlib.util.spec_from_file_location(
        "statute_coverage", ROOT / "benchmarks" / "statute_coverage.py"
    )
    coverage = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(coverage)
    rows = {r["title"]: r for r in coverage.coverage(db)}
    assert len(rows) == len(coverage.CITED)
    theft = rows["最高人民法院、最高人民检察院关于办理盗窃刑事案件适用法律若干问题的解释"]
    assert theft["in_db"] and theft["missing_years"] == []
    loans = rows["最高人民法院关于审理民间借贷案件适用法律若干问题的规定"]
    assert loans["in_db"] and 2020 in loans["db_years"]
    civil_procedure = rows["最高人民法院关于适用《中华人民共和国民事诉讼法》的解释"]
    assert civil_procedure["missing_years"] == []  # 2015: the supplement's version, in force 2015-02-04
