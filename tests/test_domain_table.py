"""A domain is one row of ``domains.yaml``: a 17th domain in a temporary table reaches every consumer.

The consumers: the settings (``domains_file``), the lawyer's role prompt, the receptionist (which routes
among the domains its trained model knows and says plainly that it does not know the new one), the
firm and its saved consultations, the case bank's hints, the weak-labelling rules of the receptionist's
training data, the app's routing panel and domain menu, and ``python -m lawluo classify``.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import re
import subprocess
import sys

import pytest

from lawluo.agents.receptionist import REBUILD, Receptionist, ReceptionistDomainsError
from lawluo.config import ConfigError, Settings, load_settings
from lawluo.domains import (
    DOMAIN_IDS,
    PACKAGED,
    PACKAGED_FILE,
    DomainTableError,
    load_domains,
)
from lawluo.firm import Consultation, Firm
from lawluo.firm.saved import SavedConsultationError
from lawluo.law import weak_labels
from lawluo.llm import LanguageModels
from lawluo.retrieval.casebank import _TYPICAL_FOLDERS, Case, domain_for_cause, load_case_bank

from .conftest import ROOT
from .fakes.live_app import model_environ

MARITIME = """
- id: maritime
  name: 海事海商
  preferred_laws: [中华人民共和国海商法]
  keywords: [船舶, 海运, 提单]
  weak: [港口]
  cause_hints: {5: '船舶|海上|海难'}
"""
RETRAIN = REBUILD.split(" --")[0]  # "python -m training.train_receptionist"


@pytest.fixture(scope="module")
def table_file(tmp_path_factory):
    """The packaged table with a 17th row appended, in a temporary folder."""
    path = tmp_path_factory.mktemp("domains") / "domains.yaml"
    path.write_text(PACKAGED_FILE.read_text(encoding="utf-8") + MARITIME, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def settings17(settings, table_file):
    return dataclasses.replace(settings, domains_file=table_file)


@pytest.fixture(scope="module")
def receptionist17(settings17):
    return Receptionist.load(settings17)


# -- the table ----------------------------------------------------------------------------------


def test_the_settings_name_the_table_and_default_to_the_packaged_one(table_file):
    assert Settings().domains_file == PACKAGED_FILE
    settings = load_settings(environ={"LAWLUO_DOMAINS_FILE": str(table_file)})
    assert settings.domains_file == table_file and len(load_domains(settings.domains_file)) == 17


def test_a_17th_row_is_a_17th_domain(table_file):
    table = load_domains(table_file)
    assert len(table) == len(PACKAGED) + 1 == 17 and table.ids[:16] == DOMAIN_IDS
    maritime = table["maritime"]
    assert table["海事海商"] is maritime and "maritime" in table and "maritime" not in PACKAGED
    # no template of its own: the generic role prompt, filled from the row
    assert maritime.prompt == "lawyer/generic"
    prompt = maritime.role_prompt()
    assert "专办海事海商业务" in prompt and "《中华人民共和国海商法》" in prompt and "$" not in prompt
    # the shipped domains keep their own templates
    assert (
        table["labor"].prompt == "lawyer/labor"
        and table["labor"].role_prompt() == PACKAGED["labor"].role_prompt()
    )


def test_the_new_rows_weak_labelling_rules_reach_the_training_data(table_file):
    assert weak_labels.RULES == PACKAGED_FILE
    rules = weak_labels.load_rules(table_file)
    assert ("船舶", "maritime", 1.0) in rules.keywords and ("港口", "maritime", 0.5) in rules.keywords
    votes = weak_labels.keyword_votes("船舶在港口被扣押，提单丢了", rules)
    assert votes["maritime"] == 1 + 1 + 0.5  # 船舶, 提单, and the weak 港口 (其他 has the same words)
    assert "maritime" not in {d for _, d, _ in weak_labels.load_rules().keywords}


def test_cause_hints_are_tried_by_rank_across_rows(table_file):
    table = load_domains(table_file)
    # rank 5 comes before 合同纠纷's general words (150); without the row the contract hint wins
    assert table.domain_for_cause("船舶碰撞损害责任纠纷") == "海事海商"
    assert table.domain_for_cause("海上货物运输合同纠纷") == "海事海商"
    assert PACKAGED.domain_for_cause("海上货物运输合同纠纷") == "合同纠纷"
    # tort has two hints: the specific one (rank 10) before labour, the general one (140) after debt
    assert PACKAGED.domain_for_cause("提供劳务者受害责任纠纷") == "侵权"
    assert (
        PACKAGED.domain_for_cause("股东损害公司债权人利益责任纠纷") == "公司法"
    )  # company (110) before debt (130)
    assert PACKAGED.domain_for_cause("债权人撤销权纠纷") == "债权债务"  # debt (130) before tort (140)


def test_the_shipped_case_banks_hints_are_what_the_table_assigns(settings):
    """The case bank was built before the hints moved into the table: every hint is rebuilt the same."""
    folders = {}
    for line in (settings.assets_dir / "cases.PROVENANCE.md").read_text(encoding="utf-8").splitlines():
        m = re.match(r"\| `(typical-[0-9a-f]+)` \| ([^/|]+)/", line)
        if m:
            folders[m.group(1)] = m.group(2)
    by_hint = []
    for case in load_case_bank(settings.cases_path):
        if case.source == "cail" or (case.source == "disc" and case.domain_hint == "刑事辩护"):
            continue  # criminal: set by the source, not by a hint
        if case.source == "typical" and _TYPICAL_FOLDERS.get(folders[case.id], ("", ""))[1]:
            continue  # the folder sets it
        assert case.domain_hint == domain_for_cause(case.cause), (case.id, case.cause)
        by_hint.append(case.domain_hint)
    assert len(by_hint) >= 90 and len(set(by_hint) - {""}) >= 8  # most of the hints are exercised


def test_a_case_of_the_new_domain_loads_under_its_table_only(table_file):
    case = {
        "id": "x-1",
        "source": "disc",
        "title": "t",
        "cause": "船舶碰撞",
        "domain_hint": "海事海商",
        "facts": "f",
    }
    assert Case.from_dict(case, load_domains(table_file)).domain_hint == "海事海商"
    with pytest.raises(ValueError, match="not a consultation domain"):
        Case.from_dict(case)


@pytest.mark.parametrize(
    "edit, problem",
    [
        (lambda t: t + "- {id: labor, name: 劳动二}\n", "each id must appear once; repeated: labor"),
        (lambda t: t.replace("- id: other", "- id: misc"), "must have the general domain 'other'"),
        (lambda t: t + "- {id: tax, name: 税务, colour: red}\n", "unknown key(s) colour"),
        (lambda t: t + "- {id: tax, name: 税务, prompt: lawyer/tax}\n", "no prompt template 'lawyer/tax'"),
        (lambda t: t + "- {id: tax, name: 税务, prompt: lawyer/turn}\n", "asks for ['confirmed'"),
        (
            lambda t: t + "- {id: tax, name: 税务, cause_hints: {1: '税('}}\n",
            "cause_hints 1: '税(' is not a regex",
        ),
        (lambda t: t + "- {id: Tax, name: 税务}\n", "id must be lower case"),
        (lambda t: t + "- {id: tax, name: 税务, lawbench: [婚姻家庭]}\n", "lawbench label must appear once"),
    ],
)
def test_a_table_that_cannot_work_fails_when_the_settings_load(tmp_path, edit, problem):
    path = tmp_path / "domains.yaml"
    path.write_text(edit(PACKAGED_FILE.read_text(encoding="utf-8")), encoding="utf-8")
    with pytest.raises(DomainTableError, match=re.escape(problem)):
        load_domains(path)
    with pytest.raises(ConfigError, match="domains_file: .*" + re.escape(problem)):
        load_settings(environ={"LAWLUO_DOMAINS_FILE": str(path)})


# -- the receptionist ---------------------------------------------------------------------------


def test_the_receptionist_routes_among_the_domains_it_knows_and_says_so(settings17, caplog):
    with caplog.at_level(logging.WARNING, logger="lawluo.agents.receptionist"):
        receptionist = Receptionist.load(settings17)
    assert receptionist.unknown == ("maritime",)
    for text in (receptionist.notice, caplog.text):
        assert "the trained receptionist does not know domain maritime (海事海商)" in text
        assert "among the other 16 of the 17 domains" in text and RETRAIN in text
    shipped = Receptionist.load(dataclasses.replace(settings17, domains_file=PACKAGED_FILE))
    assert shipped.notice == "" and shipped.unknown == ()
    routing = receptionist.classify("船舶在港口碰撞，货物受损，海事法院管辖吗")
    assert list(routing.scores) == list(receptionist.table.ids) and routing.scores["maritime"] == 0.0
    # the domains it knows are routed exactly as before
    assert {d: p for d, p in routing.scores.items() if d != "maritime"} == shipped.classify(
        "船舶在港口碰撞，货物受损，海事法院管辖吗"
    ).scores
    # a consultation the client moved to the new domain can still be re-routed from it
    moved = receptionist.reroute(["公司拖欠我三个月工资，也没签劳动合同"], current="maritime")
    assert moved is not None and moved.domain == "labor"


def test_a_model_routing_to_a_domain_the_table_lacks_is_refused(tmp_path, settings):
    rows = PACKAGED_FILE.read_text(encoding="utf-8")
    start = rows.index("- id: medical")
    path = tmp_path / "domains.yaml"
    path.write_text(rows[:start] + rows[rows.index("- id: ", start + 1) :], encoding="utf-8")
    with pytest.raises(
        ReceptionistDomainsError, match="routes to domain\\(s\\) medical, which the domain table"
    ):
        Receptionist.load(dataclasses.replace(settings, domains_file=path))


def test_classify_reports_the_unknown_domain_and_the_tables_count(table_file):
    env = {**os.environ, "LAWLUO_DOMAINS_FILE": str(table_file)}
    done = subprocess.run(
        [sys.executable, "-m", "lawluo", "classify", "我想离婚"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    (row,) = [json.loads(line) for line in done.stdout.splitlines()]
    assert row["domain"] == "marriage_family" and len(row["scores"]) == 17 and row["scores"]["maritime"] == 0
    assert "does not know domain maritime (海事海商)" in done.stderr and "16 of the 17 domains" in done.stderr
    assert RETRAIN in done.stderr


# -- the firm, saved consultations and the app ---------------------------------------------------


def test_a_consultation_moved_to_the_new_domain_gets_its_lawyer_and_resumes_under_its_table(
    firm_services, firm_server, settings17, receptionist17
):
    env = {**model_environ(firm_server), "LAWLUO_JUDGE_BACKEND": "none", "LAWLUO_BOSS_BACKEND": "none"}
    models = LanguageModels(load_settings(environ=env).models)
    firm = Firm.from_settings(settings17, models=models, **{**firm_services, "receptionist": receptionist17})
    assert firm.domains["maritime"].name == "海事海商"
    state = firm.new(client="王船长")
    firm.receive(state, "我的船在港口和别人的船碰撞了，货物受损，对方不赔")
    firm.set_domain(state, "海事海商")
    assert state.domain == "maritime"
    "".join(firm.answer(state))
    system = firm_server.responder.lawyer_requests[-1][0]
    assert system["role"] == "system" and system["content"] == firm.domains["maritime"].role_prompt()
    assert "专办海事海商业务" in system["content"]
    firm.close(state)
    saved = state.to_json()
    resumed = Consultation.from_json(saved, firm.domains)
    assert resumed.domain == "maritime" and resumed.routing["scores"]["maritime"] == 0.0
    with pytest.raises(SavedConsultationError, match="'maritime' is not a domain of domains.yaml"):
        Consultation.from_json(saved)  # the packaged table has no such domain


def test_the_app_starts_with_the_17th_domain_and_shows_that_routing_does_not_know_it(settings17):
    from app import build_app

    demo = build_app(settings17)
    props = {c["props"].get("elem_id"): c["props"] for c in demo.config["components"] if "props" in c}
    choices = [tuple(choice) for choice in props["ll-domain"]["choices"]]
    assert len(choices) == 17 and choices[-1] == ("海事海商", "maritime")
    routing = props["ll-routing"]["value"]
    assert "分到 17 个业务领域之一" in routing
    assert "does not know domain maritime (海事海商)" in routing and RETRAIN in routing
    demo.close()


def test_no_code_or_copy_says_how_many_domains_there_are():
    counted = re.compile(r"(?<![\d.])16 (?:个业务领域|个领域|consultation domains|domains)|十六个")
    files = [ROOT / "app.py", *(ROOT / "lawluo").rglob("*.py"), *(ROOT / "eval_ui").rglob("*.py")]
    files += [*(ROOT / "assets" / "ui").rglob("*.md"), *(ROOT / "lawluo").rglob("*.txt")]
    said = [
        f"{p.relative_to(ROOT)}: {m.group(0)}" for p in files for m in counted.finditer(p.read_text("utf-8"))
    ]
    assert said == []


def test_worked_examples_in_docstrings_hold():
    import doctest

    import lawluo.domains
    import lawluo.retrieval.casebank

    for module in (lawluo.domains, lawluo.retrieval.casebank):
        result = doctest.testmod(module)
        assert result.attempted > 0 and result.failed == 0, module.__name__
