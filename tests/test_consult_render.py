"""The consultation tab's HTML: a real tree with mark buttons, folding under a 否, everything escaped."""

from __future__ import annotations

from lawluo.firm.state import TraceEvent
from lawluo.llm.models import RoleStatus
from lawluo.tolc import Tree
from lawluo.tolc.material import Issue
from lawluo.ui import consult_render as cr

HOSTILE = '<img src=x onerror="alert(1)"><script>alert(2)</script>'


def small_tree() -> Tree:
    tree = Tree.start("工资被拖欠怎么办？", 3, 2)
    tree.add_child("0", "是否签订了书面劳动合同", ["c1"])
    tree.add_child("0", HOSTILE, [])
    tree.add_child("1", "是否工作满一年", [])
    tree.add_child("2", "是否有工资条", [])
    tree.complete = True
    return tree


def test_the_tree_is_nested_lists_with_three_mark_buttons_per_element():
    html = cr.tree_html(small_tree())
    assert html.count("<ul>") == 3 and html.count('<button type="button" class="ll-mark') == 4 * 3
    assert 'data-node="1.1" data-mark="yes"' in html and 'data-complete="true"' in html


def test_a_no_folds_the_subtree_and_says_how_much_it_hid():
    tree = small_tree()
    tree.mark("2", "no")
    html = cr.tree_html(tree)
    assert 'data-node="2.1"' not in html and "已折叠 1 个下级要素" in html
    assert 'class="ll-mark on" data-node="2" data-mark="no" aria-pressed="true"' in html


def test_model_text_in_the_tree_routing_and_trace_is_escaped():
    tree = small_tree()
    html = cr.tree_html(tree) + cr.trace_html([TraceEvent("lawyer", "answer", HOSTILE, 12.0, ok=False)])
    html += cr.routing_html({"name": "x", "confidence": 0.5, "top": [{"name": HOSTILE, "p": 0.5}]}, "labor")
    assert "<img" not in html and "<script>" not in html and "&lt;img src=x" in html


def test_the_issue_menu_selects_the_trees_issue_escapes_titles_and_is_disabled_with_the_marks():
    issues = [Issue("statute:labor:1", "labor", "劳动合同、没签合同"), Issue('x"><script>', "labor", HOSTILE)]
    html = cr.tree_html(small_tree(), markable=True, issues=issues, issue="statute:labor:1")
    assert (
        '<optgroup label="劳动纠纷"><option value="statute:labor:1" data-domain="劳动纠纷" selected>'
        "劳动合同、没签合同</option>" in html
    )
    # the issue in force, in words (the menu's texts are Chinese data: marked so for the English page)
    assert "当前问题类型：" in html and "Issue in force: " in html
    assert '<span lang="zh-CN">劳动纠纷 · 劳动合同、没签合同</span>' in html
    assert '<input type="search" data-issue-filter' in html  # searchable
    assert "<script>" not in html and "<img" not in html and 'value="x&quot;&gt;&lt;script&gt;"' in html
    assert (
        '<select data-issue lang="zh-CN">' in html and '<select data-issue lang="zh-CN" disabled' not in html
    )
    frozen = cr.tree_html(small_tree(), markable=False, issues=issues, issue="")
    assert (
        '<select data-issue lang="zh-CN" disabled' in frozen
        and '<option value="" selected disabled>' in frozen
    )
    assert "data-issue" not in cr.tree_html(small_tree())  # no issues, no menu


def test_supporting_cases_are_one_click_away():
    class Case:
        id, title, cause, facts, outcome, sentence = (
            "c1",
            "张某诉某公司",
            "劳动争议",
            "未签合同" * 10,
            "支持",
            "",
        )

    html = cr.tree_html(small_tree(), {"c1": Case()}.get)
    assert "<details><summary>" in html and "依据案例 (1)" in html and "Supporting cases (1)" in html
    assert "张某诉某公司" in html


def test_the_banner_says_in_plain_words_what_a_missing_model_changes_for_a_visitor():
    ready = RoleStatus("lawyer", "openai", "openai: m", True, None)
    judge = RoleStatus("judge", "none", "none", False, "set LAWLUO_JUDGE_BACKEND")
    secretary = RoleStatus("secretary", "none", "none", False, "set LAWLUO_SECRETARY_BACKEND")
    assert cr.banner_html([ready]) == ""
    assert cr.banner_html([ready, judge]) == ""  # a visitor never meets the judge
    banner = cr.banner_html([ready, judge, secretary])
    assert "咨询报告只整理事实" in banner and "律师的回答" not in banner and "关于" in banner
    for developer_text in ("LAWLUO_", "OPENAI_", "--config", "secretary", "judge"):
        assert developer_text not in banner


def test_the_retrieved_panel_says_when_no_case_of_the_questions_kind_exists():
    from lawluo.firm.state import Turn
    from lawluo.retrieval.case_fit import NONE_FITS

    statute = {
        "law": "中华人民共和国民法典",
        "article_label": "第六百七十五条",
        "text": "借款人应当按照约定的期限返还借款。<b>",
    }
    html = cr.retrieved_html(Turn("lawyer", "……", statutes=[statute], cases=[]))
    assert "相似案例（0）" in html and "Similar cases (0)" in html and cr.esc(NONE_FITS) in html
    assert "<b>" not in html  # the statute's text is escaped


def test_the_firms_notes_are_said_in_both_languages_and_other_texts_are_marked_chinese():
    from lawluo.firm.firm import BROKE_OFF_NOTE, STOPPED_NOTE
    from lawluo.i18n import text

    broke = cr.note_html(BROKE_OFF_NOTE)
    assert BROKE_OFF_NOTE in broke and text("consult.note.broke_off", "en") in broke and 'lang="en"' in broke
    budget = cr.note_html(text("consult.note.cancelled", reason=text("consult.stop.budget", seconds="3")))
    assert "Stopped: the step's time budget of 3 s is spent." in budget
    assert text("consult.note.stopped", "en") in cr.note_html(STOPPED_NOTE)
    assert cr.note_html("<b>其他说明</b>") == '<span lang="zh-CN">&lt;b&gt;其他说明&lt;/b&gt;</span>'
