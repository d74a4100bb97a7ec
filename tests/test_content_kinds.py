"""How the checker read a citation (``content_kind``) has one home (lawluo/law/content_kinds.py), and the
app's citation cards, the statute tab and the evaluator's per-citation table show it (issue 40, item 4)."""

from __future__ import annotations

import csv
import json
import re

import pytest

from lawluo.firm.state import Turn
from lawluo.i18n import text as catalogue_text
from lawluo.law.content_kinds import CONTENT_KIND_TABLE, CONTENT_KINDS
from lawluo.metrics.nhsr import CITATION_COLUMNS, AnswerStatutes, citation_rows
from lawluo.metrics.registry import Results
from lawluo.metrics.report import write_results
from lawluo.ui import consult_render as cr
from lawluo.ui import render

HOSTILE = '<img src=x onerror="alert(1)">'
#: An answer that makes every reading the extractor knows, one citation each.
READINGS = {
    "quoted": "根据《民法典》第一千零七十九条的规定：“夫妻一方要求离婚的，可以由有关组织进行调解。”",
    "colon": "《民法典》第一千零七十九条规定：夫妻一方要求离婚的，可以由有关组织进行调解或者直接向人民法院提起离婚诉讼。",
    "inline": "法律依据:《中华人民共和国劳动法》第四十三条用人单位不得违反本法规定延长劳动者的工作时间。",
    "stated": "《劳动合同法》第三十七条规定，劳动者提前三十日以书面形式通知用人单位，可以解除劳动合同。",
    "applied": "根据《劳动合同法》第三十七条规定，您可以提前三十日通知单位。",
    "applied_in_a_judgment": "依照《中华人民共和国刑法》第二百六十四条之规定，判决如下：被告人张某犯盗窃罪。",
    "none": "参见《民法典》第一千零六十二条。",
}

KINDS = pytest.mark.parametrize("kind", CONTENT_KIND_TABLE, ids=CONTENT_KINDS)


def citation(kind: str, verdict: str = "verified") -> dict:
    return {
        "law": "中华人民共和国劳动合同法",
        "article": 37,
        "article_label": "第三十七条",
        "written": "劳动合同法",
        "verdict": verdict,
        "quoted": "劳动者提前三十日以书面形式通知用人单位",
        "content_kind": kind,
        "matched": {
            "law": "中华人民共和国劳动合同法",
            "article_label": "第三十七条",
            "version": "2012",
            "score": 80.0,
        },
        "note": "",
        "span": [0, 0],
    }


@pytest.mark.parametrize("kind, text", READINGS.items(), ids=list(READINGS))
def test_every_reading_the_checker_makes_is_a_row_of_the_table(checker, kind, text):
    found = [c.as_dict()["content_kind"] for c in checker.check(text).citations]
    assert found and set(found) <= set(CONTENT_KINDS), found
    assert found[0] == kind.removesuffix("_in_a_judgment")  # the reading the extractor made of this text


def test_the_tags_are_the_four_plain_readings():
    assert {k.tag_zh for k in CONTENT_KIND_TABLE} == {"原文引用", "转述", "适用", "仅引条号"}
    assert [k.code for k in CONTENT_KIND_TABLE if k.tag_zh == "原文引用"] == ["quoted", "colon", "inline"]
    assert [k.code for k in CONTENT_KIND_TABLE if not k.compared] == ["applied", "none"]


@KINDS
def test_the_apps_citation_cards_tag_the_reading_beside_the_badge(kind):
    turn = Turn("lawyer", "根据《劳动合同法》第三十七条……", citations=[citation(kind.code)])
    for card in (cr.citations_html(turn), render.citation_card(1, citation(kind.code), turn.text)):
        head = card.split('<div class="ll-row">')[0]  # the card's head line: number, badge, tag, citation
        # in the page's language: the Chinese tag and tooltip, and the English beside them (the page shows one)
        assert f'<span class="ll-kind" data-kind="{kind.code}">' in head
        assert f'<span title="{kind.meaning_zh}">{kind.tag_zh}</span>' in head
        tip = render.esc(catalogue_text("statute.kind_tip." + kind.code, "en"))
        assert f'lang="en"><span title="{tip}">' in head
        assert head.index("ll-badge") < head.index("ll-kind")  # the tag follows the verdict's badge


def test_a_missing_or_hostile_reading_shows_no_tag_and_nothing_runs():
    for kind in (None, "", HOSTILE, "quoted_by_someone"):
        cit = citation("quoted") | {"content_kind": kind}
        html = cr.citations_html(Turn("lawyer", "x", citations=[cit])) + render.citation_card(1, cit, "x")
        assert "ll-kind" not in html and "<img" not in html


def test_the_statute_tab_shows_the_reading_of_a_real_check(checker):
    from lawluo.ui.statute_tab import check_answer

    _, cards = check_answer(checker, READINGS["stated"] + READINGS["applied"])
    tags = re.findall(
        r'data-kind="(\w+)"><span class="ll-lang-zh" lang="zh-CN"><span title="[^"]*">([^<]+)</span>', cards
    )
    assert tags == [("stated", "转述"), ("applied", "适用")]


def test_the_evaluators_table_has_a_row_per_citation_with_its_reading(tmp_path, checker):
    answers = [("q1", "S", READINGS["quoted"] + READINGS["applied"]), ("q2", "S", "没有引用。")]
    details = []
    for qid, system, text in answers:
        statutes = AnswerStatutes([c.as_dict() for c in checker.check(text).citations])
        details.append({"id": qid, "system": system, "nhsr": statutes.as_dict()})
    rows = citation_rows(details)
    assert [(r["id"], r["n"], r["content_kind"]) for r in rows] == [("q1", 1, "quoted"), ("q1", 2, "applied")]
    assert (
        rows[1]["verdict"] == "no_content" and rows[1]["content_bearing"] is False
    )  # applied: nothing compared
    results = Results(("nhsr",), details, [{"system": "S", "answers": 2}])
    write_results(results, tmp_path / "out")
    with (tmp_path / "out" / "citations.csv").open(encoding="utf-8") as f:
        read = list(csv.DictReader(f))
    assert list(read[0]) == list(CITATION_COLUMNS)
    assert [r["content_kind"] for r in read] == ["quoted", "applied"]
    first = json.loads((tmp_path / "out" / "details.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert [c["content_kind"] for c in first["nhsr"]["citations"]] == ["quoted", "applied"]


def test_the_evaluators_table_writes_answer_text_as_text_not_formulas(tmp_path):
    cit = citation("quoted") | {"written": '=HYPERLINK("http://x")', "law": "@SUM(A1)"}
    [row] = citation_rows(
        [{"id": "q", "system": "-S", "nhsr": {"citations": [cit], "extracted_by": "rules"}}]
    )
    assert (row["written"], row["law"], row["system"]) == ('\'=HYPERLINK("http://x")', "'@SUM(A1)", "'-S")
    write_results(Results(("rouge_l",), [{"id": "q", "system": "S"}], [{"system": "S"}]), tmp_path / "o")
    assert not (tmp_path / "o" / "citations.csv").exists()  # no NHSR, no per-citation table
