"""A citation judged as of a date (issue 40, item 3): against the version in force that day, with
``amended_since`` where the article has changed since, and the repeal notice only for laws repealed by then."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from lawluo.law.checker import as_of_day

#: 公司法 art. 26 of the 2018 version (in force 2018-10-26 to 2024-06-30); art. 26 of the 2023 version is
#: about annulling resolutions.
CAPITAL_2018 = "《公司法》第二十六条规定：有限责任公司的注册资本为在公司登记机关登记的全体股东认缴的出资额。"
CONTRACT_107 = (
    "根据《合同法》第一百零七条规定：当事人一方不履行合同义务或者履行合同义务不符合约定的，应当承担继续履行、"
    "采取补救措施或者赔偿损失等违约责任。"
)


def only(checker, text, as_of=None):
    (checked,) = checker.check(text, as_of=as_of).citations
    return checked


def test_without_a_date_an_older_versions_text_is_outdated(checker):
    assert only(checker, CAPITAL_2018).verdict == "outdated_version"


def test_the_version_in_force_on_the_date_agrees_and_has_been_amended_since(checker):
    c = only(checker, CAPITAL_2018, as_of="2019-06-01")
    assert c.verdict == "amended_since"
    assert c.matched.law.version == "2018-10-26" and "2023-12-29" in c.note


def test_after_the_amendment_took_effect_the_old_text_is_outdated(checker):
    """The 2023 公司法 was adopted on 2023-12-29 and took effect on 2024-07-01."""
    assert only(checker, CAPITAL_2018, as_of="2024-06-30").verdict == "amended_since"
    assert only(checker, CAPITAL_2018, as_of="2024-07-01").verdict == "outdated_version"


def test_a_law_is_repealed_only_from_the_day_the_repeal_took_effect(checker):
    before = only(checker, CONTRACT_107, as_of="2019-01-01")
    assert before.verdict == "no_content" and "in force on 2019-01-01" in before.note
    after = only(checker, CONTRACT_107, as_of="2021-01-01")
    assert after.verdict == "repealed" and after.matched.number == 577


def test_a_law_cited_before_it_took_effect_is_not_found(checker):
    c = only(
        checker,
        "《民法典》第五百七十七条规定：当事人一方不履行合同义务或者履行合同义务不符合约定的，应当承担继续履行、"
        "采取补救措施或者赔偿损失等违约责任。",
        as_of="2019-01-01",
    )
    assert c.verdict == "not_found" and "not yet in force" in c.note


def test_today_and_no_date_agree(checker):
    text = "《民法典》第一千零七十九条规定：“夫妻一方要求离婚的，可以由有关组织进行调解或者直接向人民法院提起离婚诉讼。”"
    assert only(checker, text).verdict == only(checker, text, as_of="2026-11-28").verdict == "verified"


@pytest.mark.parametrize("bad", ["yesterday", "2019-02-30", "2019", "<script>"])
def test_a_date_that_is_not_one_is_refused_with_the_form_to_use(bad):
    with pytest.raises(ValueError, match="YYYY-MM-DD"):
        as_of_day(bad)


def test_the_firm_judges_an_answer_as_of_the_clients_date(firm_services):
    from lawluo.config import load_settings
    from lawluo.firm import Firm
    from lawluo.firm.state import Consultation
    from lawluo.llm import LanguageModels

    settings = load_settings(environ={})
    firm = Firm.from_settings(settings, models=LanguageModels(settings.models), **firm_services)
    state = Consultation()
    assert firm.set_facts_date(state, "2019年6月1日") == "2019-06-01" and state.as_of == "2019-06-01"
    with pytest.raises(ValueError, match="after today"):
        firm.set_facts_date(state, "2999-01-01")
    assert Consultation.from_json(state.to_json()).as_of == "2019-06-01"  # saved and restored
    assert firm.set_facts_date(state, "") is None and state.as_of is None


def test_the_cli_takes_a_date_and_a_per_line_as_of(tmp_path):
    lines = tmp_path / "texts.jsonl"
    lines.write_text(
        json.dumps({"id": "a", "text": CAPITAL_2018, "as_of": "2019-06-01"}, ensure_ascii=False)
        + "\n"
        + json.dumps({"id": "b", "text": CAPITAL_2018}, ensure_ascii=False)
        + "\n"
        + json.dumps({"id": "c", "text": CAPITAL_2018, "as_of": "soon"}, ensure_ascii=False)
        + "\n",
        encoding="utf-8",
    )
    run = subprocess.run(
        [sys.executable, "-m", "lawluo", "check", "--input", str(lines), "--as-of", "2025-01-01"],
        capture_output=True,
        text=True,
    )
    rows = [json.loads(line) for line in run.stdout.splitlines()]
    assert [r.get("as_of") for r in rows[:2]] == ["2019-06-01", "2025-01-01"]
    assert rows[0]["citations"][0]["verdict"] == "amended_since"
    assert rows[1]["citations"][0]["verdict"] == "outdated_version"
    assert "error" in rows[2] and "YYYY-MM-DD" in run.stderr and run.returncode == 2
    bad = subprocess.run(
        [sys.executable, "-m", "lawluo", "check", CAPITAL_2018, "--as-of", "13/45/2019"],
        capture_output=True,
        text=True,
    )
    assert bad.returncode != 0 and "--as-of" in bad.stderr and "Traceback" not in bad.stderr


def test_the_consultation_tab_takes_the_date_of_the_facts_and_refuses_a_bad_one(firm_services):
    """The date box goes with the question; a date that is not one is refused with the question kept."""
    from lawluo.config import load_settings
    from lawluo.firm import Firm
    from lawluo.llm import LanguageModels
    from lawluo.ui import consult_tab as tab

    settings = load_settings(environ={})
    firm = Firm.from_settings(settings, models=LanguageModels(settings.models), **firm_services)
    question = "公司一直拖欠工资，我能解除劳动合同吗？"
    (refused,) = list(tab.ask(firm, None, question, False, 2, 2, facts_date="2019-13-40"))
    assert refused.question == question and "YYYY-MM-DD" in refused.message
    *_, last = tab.ask(firm, None, question, False, 2, 2, facts_date="2019-06-01")
    state = last.state
    assert state.as_of == "2019-06-01"
    checks = [e for e in state.trace if e.agent == "checker"]
    assert checks and "as of 2019-06-01" in checks[-1].summary


def test_the_statute_tab_checks_as_of_the_date_given_and_refuses_a_bad_one(checker):
    from lawluo.ui import statute_tab

    summary, cards = statute_tab.check_answer(checker, CAPITAL_2018, "2019-06-01")
    assert "2019-06-01" in summary and "已修订" in cards
    summary, cards = statute_tab.check_answer(checker, CAPITAL_2018, "<b>soon</b>")
    assert "YYYY-MM-DD" in summary and "<b>" not in summary and cards == ""
    data = statute_tab.check_answer_json(checker, CAPITAL_2018, "2019-06-01")
    assert data["as_of"] == "2019-06-01" and data["citations"][0]["verdict"] == "amended_since"
    assert statute_tab.check_answer_json(checker, CAPITAL_2018, "13/2019")["error"]
