"""The statute database knows every article, its law's names, versions, and which laws are repealed."""

from __future__ import annotations

import sqlite3

import pytest

from lawluo.law.build import build_statute_db
from lawluo.law.database import StatuteDB, StatuteDBError
from lawluo.law.names import name_key, split_part
from lawluo.law.numerals import article_label, chinese_to_int, int_to_chinese, parse_article_label

from .conftest import SHARED_DATA

pytestmark = pytest.mark.slow  # 4 s of the suite on 2 cores (4 s or more: left out of the inner loop)


def test_numerals_round_trip_for_every_article_number_in_use():
    for n in range(0, 2100):
        assert chinese_to_int(int_to_chinese(n)) == n
    assert chinese_to_int("一千零七十九") == 1079
    assert chinese_to_int("１０７９") == 1079
    assert parse_article_label("第一百三十三条之一") == (133, 1)
    assert article_label(133, 1) == "第一百三十三条之一"


def test_name_forms_reduce_to_one_key():
    forms = ["《中华人民共和国民法典》", "民法典", "《民法典》", "中华人民共和国民法典"]
    assert {name_key(f) for f in forms} == {"民法典"}
    assert split_part(name_key("《民法典 侵权责任编》")) == ("民法典", "侵权责任编")
    assert split_part(name_key("《民法典》婚姻家庭编")) == ("民法典", "婚姻家庭编")


def test_every_article_has_law_level_version_and_integer_number(db):
    assert len(db.articles) > 60_000
    levels = {a.law.level for a in db.articles}
    assert {"法律", "行政法规", "司法解释", "部门规章", "宪法"} <= levels
    art = db.find_article("民法典", 1079)
    assert art.law.name == "中华人民共和国民法典"
    assert art.part == "婚姻家庭编"
    assert art.text.startswith("夫妻一方要求离婚的")
    assert isinstance(art.number, int)


def test_crime_articles_with_zhi_yi_are_separate(db):
    art = db.find_article("刑法", 133, 1)
    assert art is not None and art.label == "第一百三十三条之一"
    assert "驾驶机动车" in art.text


@pytest.mark.parametrize(
    "written, key",
    [
        ("中华人民共和国公司法", "公司法"),
        ("公司法", "公司法"),
        ("《民法典》婚姻家庭编", "民法典"),
        ("民法典 侵权责任编", "民法典"),
        (
            "最高人民法院关于适用〈中华人民共和国民法典〉婚姻家庭编的解释（一）",
            "最高人民法院关于适用民法典婚姻家庭编的解释(一)",
        ),
        ("民法典婚姻家庭编解释（一）", "最高人民法院关于适用民法典婚姻家庭编的解释(一)"),
        ("新公司法", "公司法"),
    ],
)
def test_aliases_resolve_to_canonical_law(db, written, key):
    res = db.resolve(written)
    assert res.key == key and res.repeal is None


def test_versions_are_ordered_and_older_ones_superseded(db):
    versions = db.versions("公司法")
    assert [v.version for v in versions] == ["2023-12-29", "2018-10-26"]
    assert versions[0].is_current and versions[1].superseded_by == "2023-12-29"


@pytest.mark.parametrize(
    "law", ["婚姻法", "继承法", "民法通则", "收养法", "担保法", "合同法", "物权法", "侵权责任法", "民法总则"]
)
def test_the_nine_laws_repealed_by_civil_code_article_1260(db, law):
    res = db.resolve(f"《中华人民共和国{law}》")
    assert res.repeal is not None
    assert res.repeal.repealed_by == "中华人民共和国民法典"
    assert res.repeal.successor_key == "民法典"


def test_repeal_clauses_in_the_corpus_are_registered(db):
    res = db.resolve("环境噪声污染防治法")
    assert res.repeal is not None and res.repeal.successor_key == "噪声污染防治法"
    res = db.resolve("最高人民法院关于适用《中华人民共和国婚姻法》若干问题的解释（三）")
    assert (
        res.repeal is not None
        and res.repeal.successor_key == "最高人民法院关于适用民法典婚姻家庭编的解释(一)"
    )


def test_missing_database_says_how_to_build_it(tmp_path):
    with pytest.raises(StatuteDBError, match="python -m lawluo build statutes"):
        StatuteDB(tmp_path / "nope.sqlite")


def test_corrupt_database_is_reported(tmp_path):
    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(b"not a database" * 100)
    with pytest.raises(StatuteDBError, match="unreadable"):
        StatuteDB(bad)


@pytest.mark.skipif(not (SHARED_DATA / "laws").exists(), reason="needs ../shared/data/laws")
def test_build_is_reproducible_from_the_shared_data(tmp_path, db):
    out = tmp_path / "statutes.sqlite"
    counts = build_statute_db(SHARED_DATA / "laws", out)
    assert counts["articles"] == len(db.articles)
    con = sqlite3.connect(out)
    meta = dict(con.execute("SELECT key, value FROM meta"))
    assert meta["source_sha256"] == db.meta["source_sha256"]
    rebuilt = con.execute("SELECT COUNT(*), SUM(LENGTH(text)) FROM articles").fetchone()
    con.close()
    assert rebuilt[0] == len(db.articles)
    assert rebuilt[1] == sum(len(a.text) for a in db.articles)
