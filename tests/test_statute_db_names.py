"""Law names as courts and lawyers write them (issue 40, item 3): issuers left out or abbreviated, 〈〉 or
《》 inside 《》, short names, a version written into the name; an alias never names two documents."""

from __future__ import annotations

import sqlite3

import pytest

from lawluo.law.build import _unambiguous, build_statute_db
from lawluo.law.database import StatuteDB, _split_version
from lawluo.law.names import case_short_names, issuer_free_name, name_key

THEFT = "最高人民法院最高人民检察院关于办理盗窃刑事案件适用法律若干问题的解释"
CIVIL_PROCEDURE_INTERP = "最高人民法院关于适用民事诉讼法的解释"


@pytest.mark.parametrize(
    "written, key",
    [
        ("《关于办理盗窃刑事案件适用法律若干问题的解释》", THEFT),  # issuer named outside the brackets
        ("两高《关于办理盗窃刑事案件适用法律若干问题的解释》", THEFT),
        ("《两高关于办理盗窃刑事案件适用法律若干问题的解释》", THEFT),
        ("《最高人民法院、最高人民检察院关于办理盗窃刑事案件适用法律若干问题的解释》", THEFT),
        ("《盗窃解释》", THEFT),
        ("盗窃司法解释", THEFT),
        ("《最高人民法院关于适用〈中华人民共和国民事诉讼法〉的解释》", CIVIL_PROCEDURE_INTERP),
        ("《最高人民法院关于适用《中华人民共和国民事诉讼法》的解释》", CIVIL_PROCEDURE_INTERP),
        ("《民诉法解释》", CIVIL_PROCEDURE_INTERP),
        ("《刑诉法解释》", "最高人民法院关于适用刑事诉讼法的解释"),
        (
            "最高法关于适用民法典合同编通则若干问题的解释",
            "最高人民法院关于适用民法典合同编通则若干问题的解释",
        ),
        ("《民间借贷规定》", "最高人民法院关于审理民间借贷案件适用法律若干问题的规定"),
        ("人身损害赔偿解释", "最高人民法院关于审理人身损害赔偿案件适用法律若干问题的解释"),
        ("劳动争议解释（一）", "最高人民法院关于审理劳动争议案件适用法律问题的解释(一)"),
        ("婚姻家庭编解释一", "最高人民法院关于适用民法典婚姻家庭编的解释(一)"),
        ("《民法典担保制度解释》", "最高人民法院关于适用民法典有关担保制度的解释"),
        ("民法典时间效力规定", "最高人民法院关于适用民法典时间效力的若干规定"),
    ],
)
def test_names_as_courts_write_them(db, written, key):
    res = db.resolve(written)
    assert res.key == key and res.repeal is None and res.note == ""


@pytest.mark.parametrize(
    "written, key, version, named",
    [
        ("《公司法》(2018年修正)", "公司法", "2018-10-26", "2018年修正"),
        ("《中华人民共和国公司法（2023年修订）》", "公司法", "2023-12-29", "2023年修订"),
        ("2018年修正的公司法", "公司法", "2018-10-26", "2018年修正"),
        ("《中华人民共和国刑法（2020年修正）》", "刑法", "2020-12-26", "2020年修正"),
        ("《中华人民共和国刑法（2017年修正）》", "刑法", "", "2017年修正"),  # not in the database
        ("刑事诉讼法（2012年修订）", "刑事诉讼法", "", "2012年修订"),
        (
            "《最高人民法院关于适用〈中华人民共和国民事诉讼法〉的解释》（2022年修正）",
            CIVIL_PROCEDURE_INTERP,
            "2022-04-02",
            "2022年修正",
        ),
        (
            "最高人民法院关于审理人身损害赔偿案件适用法律若干问题的解释(2020年修正)",
            "最高人民法院关于审理人身损害赔偿案件适用法律若干问题的解释",
            "2020-12-29",
            "2020年修正",
        ),
        ("民诉法解释(2015)", CIVIL_PROCEDURE_INTERP, "2014-12-18", "2015"),  # a bare year: the one in force
    ],
)
def test_a_version_in_the_name_resolves_to_the_law_and_says_which_version(db, written, key, version, named):
    res = db.resolve(written)
    assert (res.key, res.version, res.version_named) == (key, version, named)
    assert ("not in the database" in res.note) == (version == "")


def test_a_repealed_law_with_a_version_in_the_name_is_still_repealed(db):
    res = db.resolve("《中华人民共和国合同法》(1999年)")
    assert res.key is None and res.repeal.key == "合同法" and res.version_named == "1999年"


def test_split_version_leaves_names_without_a_version_alone():
    assert _split_version("公司法") is None
    assert _split_version("最高人民法院关于适用公司法若干问题的规定(三)") is None
    assert _split_version("刑法(2017年修正)") == ("刑法", "2017年修正", "2017")
    assert _split_version("公司法(2018年10月26日修正)") == ("公司法", "2018年10月26日修正", "2018-10-26")


def test_the_issuers_courts_abbreviate_are_spelled_out():
    assert name_key("两高关于办理盗窃刑事案件适用法律若干问题的解释") == THEFT
    assert name_key("最高院关于适用民法典物权编的解释（一）") == "最高人民法院关于适用民法典物权编的解释(一)"
    assert name_key("最高检关于X的规定") == "最高人民检察院关于X的规定"
    assert issuer_free_name(THEFT) == "关于办理盗窃刑事案件适用法律若干问题的解释"
    assert issuer_free_name("公司法") is None
    assert case_short_names("最高人民法院关于审理买卖合同纠纷案件适用法律问题的解释") == [
        "买卖合同纠纷解释",
        "买卖合同纠纷司法解释",
        "买卖合同解释",
        "买卖合同司法解释",
    ]


def test_no_alias_of_the_shipped_database_names_two_documents(db):
    con = sqlite3.connect(db.path)
    shared = con.execute("SELECT alias FROM aliases GROUP BY alias HAVING COUNT(DISTINCT key) > 1").fetchall()
    keys = {k for (k,) in con.execute("SELECT DISTINCT key FROM laws")}
    foreign = con.execute("SELECT alias, key FROM aliases WHERE alias != key").fetchall()
    con.close()
    assert shared == []
    assert [a for a, k in foreign if a in keys] == []  # an alias is never another document's key


def test_a_short_name_two_documents_share_is_not_an_alias(db):
    # 行政诉讼法解释: the 2015 and the 2018 interpretations both derive it; so do the two 破坏森林资源 ones
    for written in ("行政诉讼法解释", "破坏森林资源解释"):
        assert db.resolve(written).key is None
    kept, dropped = _unambiguous({"甲解释": {"A", "B"}, "乙解释": {"B"}, "A": {"B"}}, {"A", "B"})
    assert kept == {"乙解释": "B"} and dropped == {"甲解释": {"A", "B"}, "A": {"A", "B"}}


def test_a_build_drops_a_short_name_two_documents_share(tmp_path):
    laws = tmp_path / "laws"
    docs = {
        "司法解释/a(2000-01-01).md": "最高人民法院关于审理盗窃案件具体应用法律若干问题的解释",
        "司法解释/b(2013-04-02).md": "最高人民法院、最高人民检察院关于办理盗窃刑事案件适用法律若干问题的解释",
    }
    for rel, title in docs.items():
        (laws / rel).parent.mkdir(parents=True, exist_ok=True)
        (laws / rel).write_text(f"# {title}\n\n<!-- INFO END -->\n\n第一条 盗窃。\n", encoding="utf-8")
    counts = build_statute_db(laws, tmp_path / "s.sqlite")
    db = StatuteDB(tmp_path / "s.sqlite")
    assert counts["aliases_dropped_ambiguous"] >= 2
    assert db.resolve("盗窃解释").key is None and db.resolve("盗窃司法解释").key is None
    assert db.resolve("盗窃刑事解释").key == THEFT  # only the 2013 one says 刑事
    assert db.resolve("关于办理盗窃刑事案件适用法律若干问题的解释").key == THEFT


def test_every_curated_abbreviation_names_one_document_of_the_database(db):
    from lawluo.law.build import ABBREVIATIONS

    for short, full in ABBREVIATIONS.items():
        assert db.resolve(short).key == name_key(full), short
