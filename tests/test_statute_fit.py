"""The page's bar for statutes (issue 42 item 1): a retrieved statute is shown as possibly relevant only when
it fits the question — never a criminal statute for a civil question, never one the calibrated relevance
rules out, never one that shares nothing with the question — and it says what part of the question it was
found for."""

from lawluo.agents.lawyer import Brief, grounded_reply, is_criminal_question
from lawluo.domains import PACKAGED
from lawluo.retrieval.statute_fit import MIN_RELEVANCE, annotate, question_parts, statute_fit

LEAK = "楼上邻居家水管漏水，把我家天花板泡坏了，他不肯赔偿损失"
DAMAGE = {
    "law": "中华人民共和国民法典",
    "article": 1165,
    "article_label": "第一千一百六十五条",
    "text": "行为人因过错侵害他人民事权益造成损害的，应当承担侵权责任。",
    "score": 3.0,
    "relevance": 0.3,
}
SEARCH = {
    "law": "中华人民共和国刑事诉讼法",
    "article": 139,
    "article_label": "第一百三十九条",
    "text": "在搜查的时候，应当有被搜查人或者他的家属，邻居或者其他见证人在场。",
    "score": 2.5,
    "relevance": 0.3,
}


def test_a_fitting_statute_passes_with_the_part_of_the_question_it_was_found_for():
    fit = statute_fit({**DAMAGE, "text": DAMAGE["text"] + "赔偿损失"}, LEAK, criminal=False)
    assert fit.passes and fit.part == "他不肯赔偿损失" and fit.words == ("赔偿损失",)


def test_a_criminal_statute_never_passes_for_a_civil_question_however_relevant_it_scores():
    assert statute_fit(SEARCH, "邻居搜查我家", criminal=False).reason == "criminal"
    assert statute_fit(SEARCH, "警察搜查我家时邻居在场吗，我犯罪了吗", criminal=True).passes


def test_a_statute_the_calibrated_relevance_rules_out_does_not_pass():
    low = {**DAMAGE, "text": "赔偿损失", "relevance": MIN_RELEVANCE / 2}
    assert statute_fit(low, LEAK, criminal=False).reason == "relevance"
    assert statute_fit({**low, "relevance": None}, LEAK, criminal=False).passes  # a search without the model


def test_a_statute_sharing_no_word_with_the_question_does_not_pass():
    unrelated = {**DAMAGE, "text": "注册商标需要变更注册人的名义、地址的，应当提出变更申请。"}
    assert statute_fit(unrelated, "老板不给钱还把我开了", criminal=False).reason == "words"


def test_colloquial_words_count_with_their_statutory_terms():
    dismissal = {**DAMAGE, "text": "用人单位解除劳动合同的，应当向劳动者支付经济补偿。"}
    assert not statute_fit(dismissal, "老板把我辞退了", criminal=False).passes
    fit = statute_fit(dismissal, "老板把我辞退了", criminal=False, colloquial={"辞退": ["解除", "劳动合同"]})
    assert fit.passes and set(fit.words) == {"解除", "劳动合同"}


def test_an_article_the_question_names_or_a_confirmed_fact_brought_always_passes():
    assert statute_fit({**SEARCH, "exact": True}, "刑事诉讼法第139条怎么说", criminal=False).passes
    assert statute_fit({**DAMAGE, "text": "无关", "relevance": 0.0, "confirmed": True}, LEAK, False).passes


def test_the_answer_without_a_model_quotes_only_what_passes_and_says_so_when_nothing_does():
    statutes = annotate([SEARCH, {**DAMAGE, "text": DAMAGE["text"] + "赔偿损失"}], LEAK, criminal=False)
    reply = grounded_reply(Brief(PACKAGED["tort"], LEAK, statutes=statutes))
    assert "第一千一百六十五条" in reply and "刑事诉讼法" not in reply
    assert "可能相关的法条（系统检索，未经律师判断）" in reply and "检索依据：您说的“他不肯赔偿损失”" in reply
    nothing = grounded_reply(Brief(PACKAGED["tort"], LEAK, statutes=annotate([SEARCH], LEAK, criminal=False)))
    assert "没有检索到与您的问题明显相关的条文" in nothing and "第一百三十九条" not in nothing


def test_a_question_is_criminal_when_routed_there_or_naming_a_crime():
    assert is_criminal_question("邻居偷了我的车", "criminal")
    assert is_criminal_question("他这样算不算犯罪", "tort")
    assert not is_criminal_question(LEAK, "tort")
    assert question_parts("楼上漏水，泡坏了。怎么办？") == ["楼上漏水", "泡坏了", "怎么办"]
