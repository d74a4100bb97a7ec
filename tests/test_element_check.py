"""A clarifier model's element reaches the client only when it is one yes/no fact about the client's own
situation (issue 41, item 2): the junk small models were seen to write is turned away or repaired."""

from __future__ import annotations

import json

import pytest

from lawluo.tolc import TreeBuilder
from lawluo.tolc.element_check import REJECTIONS, rejection, repaired, vet
from lawluo.tolc.tree import FALLBACK_REASONS, statement_key
from tests.fakes.scripted_backend import ScriptedBackend

QUESTION = "我和哥哥继承了父母的房子，哥哥说房子应该全归他，我该怎么办？"


@pytest.mark.parametrize(
    ("statement", "why"),
    [  # what Qwen2.5 0.5B/1.5B wrote in the trees of issue 41
        ("梅某某是否已经支付了工程款？", "party"),
        ("汤xx是否在合同上签字？", "party"),
        ("二被告是否存在过错？", "party"),
        ("原告是否提供了借条原件？", "court"),
        ("房子是否应该全归我哥？", "conclusion"),
        ("我是否能要求赔偿？", "conclusion"),
        ("购房款是否有父母出资，出资在婚前还是婚后？", "choice"),
        ("欠款金额是多少？", "choice"),
        ("您是否已经离职；公司是否拖欠工资？", "several"),
        ("是否？", "too_short"),
        ("公司三个月没发工资，我能走吗？", "conclusion"),  # the 0.5B copied a prompt's example back
        ("您是否还有其他需要确认的事项？", "meta"),
    ],
)
def test_junk_a_small_model_writes_is_turned_away_with_its_reason(statement, why):
    assert rejection(repaired(statement)) == why and why in REJECTIONS


@pytest.mark.parametrize(
    "statement",
    [
        "公司是否未与您签订书面劳动合同？",
        "是否有监控或证人能证明谁先动手？",  # a yes/no question with 谁 inside
        "您是否已满十八周岁？",
        "对方是否拒绝退还押金？",
        "房屋是否登记在您父母名下？",
    ],
)
def test_a_fact_about_the_client_passes(statement):
    assert vet(statement, QUESTION) == (statement, None)


def test_a_cited_statute_is_cut_and_no_longer_hides_a_duplicate():
    cited = "公司是否未与您签订书面劳动合同（《劳动合同法》第八十二条）"
    assert vet(cited) == ("公司是否未与您签订书面劳动合同？", None)
    assert statement_key(cited) == statement_key("公司是否未与您签订书面劳动合同？")


def test_the_question_repeated_back_is_not_an_element():
    assert vet(QUESTION, QUESTION)[1] == "question"


def test_the_material_itself_mostly_passes(material):
    """The rules are not a filter on everything: of the clarification material's own statements (written
    from statutes and real consultations, never shown a model's junk), at most 3 % would be turned away."""
    turned = [item.statement for item in material.items if vet(item.statement)[1]]
    assert len(turned) <= 0.03 * len(material.items), turned[:20]


def test_no_junk_element_reaches_the_tree_and_the_top_ups_say_why(case_searcher):
    junk = json.dumps(
        {
            "elements": [
                {"statement": "梅某某是否已支付工程款？"},
                {"statement": "房子是否应该全归我哥？"},
                {"statement": "房屋是否登记在您父母名下（《民法典》第二百零九条）"},
            ]
        },
        ensure_ascii=False,
    )

    def search(query, k):
        return [hit.case for hit in case_searcher.search(query, k)]

    tree = TreeBuilder(search, ScriptedBackend(responder=lambda m: junk), height=2, k=3).build(QUESTION)
    statements = [n.statement for n in tree.elements]
    assert "房屋是否登记在您父母名下？" in statements  # repaired: the citation cut, a ？ added
    assert not any("梅某某" in s or "全归我哥" in s for s in statements)
    topped = [n for n in tree.elements if n.source != "model"]
    assert len(tree.elements) == 3 and topped and all(n.fallback == "rejected" for n in topped)
    assert "rejected" in FALLBACK_REASONS


@pytest.fixture(scope="module")
def material(settings):
    from lawluo.tolc.material import ClarificationMaterial

    found = ClarificationMaterial.from_settings(settings)
    if found is None:
        pytest.skip("no clarification material asset")
    return found


def test_a_small_model_gets_the_small_prompts_when_the_setting_says_so(case_searcher):
    """prompt_variant is a setting, not a model name in code: `small` sends tolc/*.small (numbered rules,
    the material as the examples); `default` the usual prompts; any other value is refused when the settings load."""
    from lawluo.config import load_settings

    def search(query, k):
        return [hit.case for hit in case_searcher.search(query, k)]

    reply = json.dumps({"elements": [{"statement": "您是否与哥哥签过分家协议？"}]}, ensure_ascii=False)
    small = ScriptedBackend(responder=lambda m: reply)
    TreeBuilder(search, small, height=2, k=1, prompt_variant="small").build(QUESTION)
    plain = ScriptedBackend(responder=lambda m: reply)
    TreeBuilder(search, plain, height=2, k=1).build(QUESTION)
    (small_messages, *_), (plain_messages, *_) = small.calls[0], plain.calls[0]
    assert (
        "不要出现案例里的人名" in small_messages[0]["content"]
        and "合格的写法" in small_messages[1]["content"]
    )
    assert "不要出现案例里的人名" not in plain_messages[0]["content"]
    with pytest.raises(ValueError, match="prompt_variant"):
        load_settings(environ={"LAWLUO_PROMPT_VARIANT": "tiny"})
