"""Similar cases are cases of the question's kind, and a page says so when the case bank has none (issue 39
item 5): lawluo.retrieval.case_fit, CaseSearcher.similar and where similar cases are shown."""

from __future__ import annotations

import doctest

import pytest

from lawluo.agents.lawyer import REPLY_NO_CASES, Brief, grounded_reply, retrieve_cases
from lawluo.domains import PACKAGED
from lawluo.retrieval import case_fit
from lawluo.retrieval.case_fit import NONE_FITS, cause_fits, question_cause
from lawluo.retrieval.casebank import Case
from lawluo.retrieval.cases import CaseSearcher
from lawluo.ui.statute_tab import search_cases

LOANS = (
    "朋友三年前借了我五万块钱，打了借条，现在一直拖着不还，我该怎么起诉？",
    "借钱给别人的时候约定月息三分，现在对方说利息太高不给，法律支持多少利息？",
    "同事找我借了两万块说下个月还，现在半年了电话都不接，怎么办？",
)
CRIMINAL = PACKAGED["criminal"].name


def case(case_id: str, cause: str, domain: str, facts: str) -> Case:
    return Case(
        id=case_id, source="typical", title=f"{cause}案", cause=cause, domain_hint=domain, facts=facts
    )


@pytest.fixture(scope="module")
def small_bank(tmp_path_factory) -> CaseSearcher:
    """A bank without a single loan case: a theft, a lease, a traffic accident — all sharing words with a
    loan question (钱, 借, 还, 朋友)."""
    cases = [
        case("theft", "盗窃", CRIMINAL, "被告人趁朋友不备，偷走其借来的五万块钱现金，至今未还。"),
        case(
            "lease", "房屋租赁合同纠纷", "房产纠纷", "朋友租了原告的房子，借口没钱，拖欠房租五万元一直不还。"
        ),
        case(
            "traffic", "机动车交通事故责任纠纷", "交通事故", "被告借朋友的车上路，撞伤原告，赔偿款一直没还。"
        ),
    ]
    return CaseSearcher(cases, tmp_path_factory.mktemp("small-bank"))


def test_the_fit_rule_and_its_worked_examples():
    assert doctest.testmod(case_fit).failed == 0
    assert cause_fits("盗窃；抢夺", "盗窃罪")  # a case of several charges fits each
    assert cause_fits("工伤保险待遇纠纷", "劳动争议")  # under one parent
    assert not cause_fits("房屋租赁合同纠纷", "民间借贷纠纷")
    assert not cause_fits("诈骗", "民间借贷纠纷")


def test_the_question_says_what_kind_of_case_it_is_about():
    assert question_cause(LOANS[0]) == "民间借贷纠纷"
    assert question_cause("房东不退押金怎么办") == "房屋租赁合同纠纷"
    assert question_cause("醉酒驾驶机动车") == "危险驾驶罪"
    assert question_cause("我得罪了老板，第二天就被辞退了") == "劳动争议"  # 得罪 is no crime
    assert question_cause("这属于民间借贷纠纷吗？") == "民间借贷纠纷"  # a cause written out
    assert question_cause("请问一下这个怎么办") == ""  # unknown: no case is shown for it


@pytest.mark.parametrize("question", LOANS)
def test_a_loan_question_never_gets_a_criminal_or_lease_case_as_similar(case_searcher, question):
    hits = case_searcher.similar(question, 3, "debt")
    assert hits, "the case bank holds loan cases"
    for hit in hits:
        assert cause_fits(hit.case.cause, "民间借贷纠纷"), hit.case.cause
        assert hit.case.domain_hint != CRIMINAL and "租赁" not in hit.case.cause
    shown = retrieve_cases(case_searcher, PACKAGED["debt"], question, 3, PACKAGED.guarded)
    assert shown and all(cause_fits(c["cause"], "借款合同纠纷") for c in shown)


def test_a_routed_question_is_shown_only_its_domains_cases(case_searcher):
    hits = case_searcher.similar("公司拖欠了我三个月工资，老板说没钱", 3, "labor")
    assert hits and {h.case.domain_hint for h in hits} == {PACKAGED["labor"].cases_as}


def test_a_fitting_case_of_another_domain_is_not_shown_to_a_routed_question(case_searcher):
    question = "我昨晚喝了酒开车回家，被交警查到了，会怎么处理？"
    assert question_cause(question, "traffic") == "危险驾驶罪"
    anywhere = case_searcher.similar(question, 3)
    assert anywhere and all(h.case.domain_hint == CRIMINAL for h in anywhere), (
        "the bank's 醉驾 cases are criminal"
    )
    assert (
        case_searcher.similar(question, 3, "traffic") == []
    )  # the page says none of its kind is in the bank
    assert case_searcher.similar(question, 3, "criminal")
    assert case_searcher.similar(question, 3, "other"), "其他 keeps every fitting case"


def test_a_question_with_no_fitting_case_gets_none_and_the_notice(small_bank):
    question = LOANS[0]
    assert small_bank.search(question, 3), "the words alone match every case of the bank"
    assert small_bank.similar(question, 3) == []
    assert small_bank.similar(question, 3, "debt") == []
    assert retrieve_cases(small_bank, PACKAGED["debt"], question, 3, PACKAGED.guarded) == []

    reply = grounded_reply(Brief(PACKAGED["debt"], question))
    assert REPLY_NO_CASES == NONE_FITS and NONE_FITS in reply

    page = search_cases(small_bank, question, 5)
    assert "没有与此问题同类（" in page and "民间借贷纠纷" in page and "No case of this kind" in page
    assert 'class="ll-card"' not in page


def test_an_unknown_kind_shows_no_case_and_says_why(small_bank):
    page = search_cases(small_bank, "朋友 钱", 5)
    assert small_bank.search("朋友 钱", 3) and 'class="ll-card"' not in page
    assert "未能判断这个问题属于哪一类案件" in page and "Could not tell what kind of case this is" in page


def test_hostile_text_in_a_question_is_escaped_in_the_notice_and_the_heading(small_bank, case_searcher):
    hostile = '<script>alert(1)</script><img src=x onerror="alert(2)">'
    none = search_cases(small_bank, hostile + "借了我五万块钱不还", 5)
    assert "No case of this kind" in none and "<script" not in none and "<img" not in none
    unknown = search_cases(small_bank, hostile, 5)
    assert "<script" not in unknown and "<img" not in unknown and 'role="status"' in unknown
    shown = search_cases(case_searcher, hostile + "醉酒驾驶机动车", 3)
    assert shown.count('class="ll-card"') == 3 and "危险驾驶" in shown
    assert "<script" not in shown and "&lt;script&gt;alert(1)&lt;/script&gt;" in shown


def cited(case_: Case, *articles: tuple[str, int]) -> Case:
    return Case(
        **{**vars(case_), "articles": [{"law": law, "article": n, "suffix": 0} for law, n in articles]}
    )


CIVIL_CODE = "中华人民共和国民法典"


@pytest.fixture(scope="module")
def cited_bank(tmp_path_factory) -> CaseSearcher:
    """Two loan cases citing the loan articles, a theft citing the criminal law's theft article."""
    cases = [
        cited(
            case("loan-1", "民间借贷纠纷", "债权债务", "原告借给被告五万元，约定一年后归还，到期未还。"),
            (CIVIL_CODE, 667),
            (CIVIL_CODE, 675),
        ),
        cited(
            case("loan-2", "民间借贷纠纷", "债权债务", "被告向原告借款三万元并出具借条，逾期不还。"),
            (CIVIL_CODE, 679),
        ),
        cited(
            case("theft", "盗窃", CRIMINAL, "被告人盗走被害人借来的现金五万元。"), ("中华人民共和国刑法", 264)
        ),
    ]
    return CaseSearcher(cases, tmp_path_factory.mktemp("cited-bank"))


def test_a_kind_is_attested_only_by_an_article_that_a_case_of_that_kind_cites(cited_bank):
    assert cited_bank.attested("民间借贷纠纷", [(CIVIL_CODE, 675)])
    assert cited_bank.attested("借款合同纠纷", [("中华人民共和国刑法", 264), (CIVIL_CODE, 679)]), (
        "a parent fits"
    )
    assert not cited_bank.attested("民间借贷纠纷", [("中华人民共和国刑法", 264)]), "cited, by a theft"
    assert not cited_bank.attested("民间借贷纠纷", [(CIVIL_CODE, 538), (CIVIL_CODE, 539)]), "cited by no case"
    assert not cited_bank.attested("民间借贷纠纷", [])


def test_similar_cases_need_the_statute_search_to_attest_their_kind(cited_bank):
    question = LOANS[0]  # the rules read 民间借贷纠纷 off it
    assert question_cause(question, "debt") == "民间借贷纠纷"
    assert {h.case.id for h in cited_bank.similar(question, 3, "debt")} == {"loan-1", "loan-2"}, "not asked"
    attested = cited_bank.similar(question, 3, "debt", articles=[(CIVIL_CODE, 675), (CIVIL_CODE, 188)])
    assert {h.case.id for h in attested} == {"loan-1", "loan-2"}, (
        "every case of the attested kind, not only 675's"
    )
    # A question the rules read as a loan while the search finds a creditor's right to undo a cheap sale:
    # the two readings disagree, so no loan case is shown as "similar".
    assert cited_bank.similar(question, 3, "debt", articles=[(CIVIL_CODE, 538), (CIVIL_CODE, 539)]) == []
    statutes = [{"law": CIVIL_CODE, "article": 539}, {"law": "中华人民共和国刑法", "article": 264}]
    assert retrieve_cases(cited_bank, PACKAGED["debt"], question, 3, PACKAGED.guarded, statutes) == []
    assert retrieve_cases(cited_bank, PACKAGED["debt"], question, 3, PACKAGED.guarded, statutes[:0]) == []
    assert retrieve_cases(cited_bank, PACKAGED["debt"], question, 3, PACKAGED.guarded)


def test_a_malformed_citation_in_the_case_bank_attests_nothing_and_breaks_nothing(tmp_path):
    loan = case("loan", "民间借贷纠纷", "债权债务", "原告借给被告五万元，到期未还。")
    broken = Case(
        **{**vars(loan), "articles": [{"law": CIVIL_CODE, "article": "六百六十七"}, {"law": CIVIL_CODE}]}
    )
    bank = CaseSearcher([broken], tmp_path)
    assert not bank.attested("民间借贷纠纷", [(CIVIL_CODE, 667)])
    assert bank.similar(LOANS[0], 3, "debt", articles=[(CIVIL_CODE, 667)]) == []
    assert bank.similar(LOANS[0], 3, "debt"), "without statutes the cause rules alone still show it"
