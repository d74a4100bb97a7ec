"""Which version of a law was in force on a date, and when a repeal took effect (issue 40, item 2).

Dates checked by hand against the files of LawRefBook/Laws @ 2f4c5c2: 公司法(2023-12-29).md (in force
2024-07-01 per the index), the 2022 人身损害赔偿 interpretation's header ``2022年5月1日 施行``, 民法典 art. 1260
``本法自2021年1月1日起施行``.
"""

from __future__ import annotations

import datetime
import sqlite3

import pytest

from lawluo.law.build import build_statute_db
from lawluo.law.database import StatuteDB, StatuteDBError

PERSONAL_INJURY = "最高人民法院关于审理人身损害赔偿案件适用法律若干问题的解释"
CRIMINAL_PROCEDURE_INTERP = "最高人民法院关于适用刑事诉讼法的解释"


def test_every_version_has_an_iso_valid_from_not_before_its_version_date(db):
    laws = list(db.laws.values())
    assert all(law.valid_from and len(law.valid_from) == 10 for law in laws if law.version)
    assert all(law.valid_from >= law.version for law in laws)
    assert all(law.first_in_force <= law.valid_from for law in laws if law.first_in_force)


@pytest.mark.parametrize(
    "key, on, version",
    [
        ("公司法", "2019-01-01", "2018-10-26"),
        ("公司法", "2023-12-29", "2018-10-26"),  # adopted that day, in force only from 2024-07-01
        ("公司法", "2024-06-30", "2018-10-26"),
        ("公司法", "2024-07-01", "2023-12-29"),
        ("公司法", "2025-01-01", "2023-12-29"),
        (CRIMINAL_PROCEDURE_INTERP, "2013-01-01", "2012-12-20"),
        (CRIMINAL_PROCEDURE_INTERP, "2021-02-28", "2012-12-20"),
        (CRIMINAL_PROCEDURE_INTERP, "2021-03-01", "2021-01-26"),
        (PERSONAL_INJURY, "2021-06-01", "2020-12-29"),
        (PERSONAL_INJURY, "2022-04-30", "2020-12-29"),  # the 2022 texts take effect on 1 May
        (PERSONAL_INJURY, "2022-05-01", "2022-04-24"),  # two 2022 files, same day: the newer one
        ("民事诉讼法", "2022-01-01", "2021-12-24"),
        ("民事诉讼法", "2023-09-01", "2023-09-01"),
        ("民法典", "2021-01-01", "2020-05-28"),
        # versions from data/laws_supplement/ (older texts LawRefBook/Laws kept in its history)
        ("刑法", "2021-03-01", "2020-12-26"),  # 修正案（十一）
        ("刑法", "2024-02-29", "2020-12-26"),
        ("刑法", "2024-03-01", "2023-12-29"),  # 修正案（十二）, adopted 2023-12-29, in force 2024-03-01
        ("劳动合同法", "2008-01-01", "2007-06-29"),
        ("劳动合同法", "2013-06-30", "2007-06-29"),
        ("劳动合同法", "2013-07-01", "2012-12-28"),
        ("最高人民法院关于适用民事诉讼法的解释", "2016-01-01", "2014-12-18"),
        ("最高人民法院关于适用民事诉讼法的解释", "2021-01-01", "2020-12-29"),
        ("最高人民法院关于审理民间借贷案件适用法律若干问题的规定", "2020-08-20", "2020-08-18"),
        ("最高人民法院关于审理民间借贷案件适用法律若干问题的规定", "2021-01-01", "2020-12-29"),
        ("最高人民法院关于审理医疗损害责任纠纷案件适用法律若干问题的解释", "2018-01-01", "2017-03-27"),
    ],
)
def test_version_in_force_on_a_date(db, key, on, version):
    law = db.version_in_force(key, on)
    assert law is not None and law.version == version
    assert law.key == key and law.effective <= on


def test_a_date_object_works_like_its_iso_string(db):
    assert db.version_in_force("公司法", datetime.date(2024, 7, 1)).version == "2023-12-29"
    assert db.version_in_force("公司法", datetime.datetime(2024, 6, 30, 23, 59)).version == "2018-10-26"
    with pytest.raises(ValueError, match="ISO date"):
        db.version_in_force("公司法", "2024/07/01")


def test_before_a_law_took_effect_nothing_is_in_force(db):
    assert db.version_in_force("民法典", "2020-12-31") is None
    assert not db.existed_on("民法典", "2020-12-31") and db.existed_on("民法典", "2021-01-01")
    assert db.version_in_force("公司法", "1990-01-01") is None and not db.existed_on("公司法", "1990-01-01")


def test_an_older_text_the_database_lacks_is_told_apart_from_a_law_that_did_not_exist(db):
    # The database holds 刑法 as amended by 修正案（十一） and （十二）; in 2019 刑法 existed in an older text.
    assert [v.version for v in db.versions("刑法")] == ["2023-12-29", "2020-12-26"]
    assert db.version_in_force("刑法", "2019-05-01") is None
    assert db.existed_on("刑法", "2019-05-01")
    assert db.version_in_force("刑事诉讼法", "2013-01-01") is None and db.existed_on(
        "刑事诉讼法", "2013-01-01"
    )
    # the first 民诉法解释 took effect on 2015-02-04: before, it did not exist
    key = "最高人民法院关于适用民事诉讼法的解释"
    assert not db.existed_on(key, "2015-02-03") and db.existed_on(key, "2015-02-04")


def test_the_pinned_criminal_law_is_the_text_of_amendment_12_and_the_supplement_holds_the_one_before(db):
    new, old = db.versions("刑法")
    assert (new.version, new.valid_from) == ("2023-12-29", "2024-03-01")  # the index said 2020-12-26
    assert (old.version, old.valid_from, old.superseded_by) == ("2020-12-26", "2021-03-01", "2023-12-29")
    assert "有下列情形之一的，从重处罚" in db.article(new, 390).text
    assert "从重处罚" not in db.article(old, 390).text
    assert db.article(new, 264).text == db.article(old, 264).text


@pytest.mark.parametrize(
    "law", ["婚姻法", "继承法", "民法通则", "收养法", "担保法", "合同法", "物权法", "侵权责任法", "民法总则"]
)
def test_the_civil_code_repeals_take_effect_on_2021_01_01(db, law):
    rep = db.repeal(law)
    assert rep.date == "2021-01-01" and rep.repealed_by == "中华人民共和国民法典"
    assert db.repealed_on(law, "2020-12-31") is None
    assert db.repealed_on(law, "2021-01-01") == rep
    assert db.existed_on(law, "2020-12-31") and not db.existed_on(law, "2021-01-01")


def test_a_repeal_clause_takes_effect_with_the_repealing_article(db):
    rep = db.repeal("环境噪声污染防治法")
    assert rep.evidence == "repeal_clause" and rep.successor_key == "噪声污染防治法"
    assert rep.date == "2022-06-05"  # 噪声污染防治法 第九十条: 本法自2022年6月5日起施行。《…》同时废止
    assert db.repealed_on("环境噪声污染防治法", "2022-06-04") is None
    assert db.repealed_on("环境噪声污染防治法", "2022-06-05") is rep


def test_interpretations_withdrawn_in_the_2020_clean_up_are_dated_and_their_text_is_not_in_force_after(db):
    key = "最高人民法院关于适用婚姻法若干问题的解释(三)"
    rep = db.repeal(key)
    assert rep.date == "2021-01-01"
    assert db.version_in_force(key, "2015-01-01") is not None
    assert db.version_in_force(key, "2021-01-01") is None and db.repealed_on(key, "2021-01-01") is rep


def test_every_repeal_date_is_iso_or_unknown_and_most_are_known(db):
    repeals = list(db._repeals.values())
    assert all(r.date == "" or (len(r.date) == 10 and r.date[4] == "-") for r in repeals)
    assert sum(bool(r.date) for r in repeals) >= 0.85 * len(repeals)


def test_resolve_without_a_date_keeps_its_behaviour(db):
    assert db.resolve("合同法").repeal.date == "2021-01-01"  # repealed: reported, whatever the date
    res = db.resolve("公司法")
    assert res.repeal is None and res.version == "" and res.version_named == ""


def test_a_database_of_the_old_layout_says_rebuild(tmp_path):
    old = tmp_path / "statutes.sqlite"
    con = sqlite3.connect(old)
    con.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    con.execute("INSERT INTO meta VALUES ('source', 'LawRefBook/Laws@2f4c5c2')")
    con.commit()
    con.close()
    with pytest.raises(
        StatuteDBError, match=r"layout 1, this code reads layout 2.*python -m lawluo build statutes"
    ):
        StatuteDB(old)


def test_valid_from_falls_back_from_index_to_header_to_text_to_the_version_date(tmp_path):
    laws = tmp_path / "laws"
    files = {
        # the header says when it takes effect
        "司法解释/甲解释(2022-04-04).md": "# 最高人民法院关于甲的解释\n\n2022年2月15日 通过\n\n2022年5月1日 施行\n\n"
        "<!-- INFO END -->\n\n第一条 甲。\n",
        # only the text does
        "法律/乙法(2020-05-28).md": "# 中华人民共和国乙法\n\n2020年5月28日 通过\n\n<!-- INFO END -->\n\n"
        "第一条 乙。\n\n第二条 本法自2021年1月1日起施行。《中华人民共和国丙法》同时废止。\n",
        # an amended text keeps the original's date: not before the version, so not used
        "法律/丁法(2018-10-26).md": "# 中华人民共和国丁法\n\n1993年12月29日 通过\n\n2018年10月26日 第四次修正\n\n"
        "<!-- INFO END -->\n\n第一条 丁。\n\n第二条 本法自1994年7月1日起施行。\n",
    }
    for rel, text in files.items():
        (laws / rel).parent.mkdir(parents=True, exist_ok=True)
        (laws / rel).write_text(text, encoding="utf-8")
    out = tmp_path / "statutes.sqlite"
    counts = build_statute_db(laws, out)
    assert (counts["valid_from_header"], counts["valid_from_text"], counts["valid_from_version"]) == (1, 1, 1)
    db = StatuteDB(out)
    assert [(v.valid_from, v.first_in_force) for v in db.versions("最高人民法院关于甲的解释")] == [
        ("2022-05-01", "2022-05-01")
    ]
    assert [(v.valid_from, v.first_in_force) for v in db.versions("乙法")] == [("2021-01-01", "2021-01-01")]
    assert [(v.valid_from, v.first_in_force) for v in db.versions("丁法")] == [("2018-10-26", "1993-12-29")]
    assert db.repeal("丙法").date == "2021-01-01" and db.repealed_on("丙法", "2020-12-31") is None
