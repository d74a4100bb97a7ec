"""Citation extraction finds the statute citations real answers write, with the content they quote."""

from __future__ import annotations

import pytest

from lawluo.law.citations import CitationExtractor


@pytest.fixture(scope="module")
def extract(db):
    return CitationExtractor(db).extract


def pairs(citations):
    return [(c.law, c.article) for c in citations]


CIVIL_CODE = "中华人民共和国民法典"


@pytest.mark.parametrize(
    "text, expected",
    [
        ("《中华人民共和国民法典》第一千零七十九条规定了离婚。", [(CIVIL_CODE, 1079)]),
        ("依据《民法典》第1079条第二款，感情确已破裂可以离婚。", [(CIVIL_CODE, 1079)]),
        ("民法典婚姻家庭编第1079条规定了离婚条件。", [(CIVIL_CODE, 1079)]),
        ("《民法典》婚姻家庭编第一千零七十九条", [(CIVIL_CODE, 1079)]),
        ("《民法典 侵权责任编》第1165条", [(CIVIL_CODE, 1165)]),
        ("根据公司法的第六十三条，股东应当承担连带责任。", [("中华人民共和国公司法", 63)]),
        ("刑法第264条规定了盗窃罪。", [("中华人民共和国刑法", 264)]),
        ("根据民法商法类中的著作权法的第十一条规定，著作权属于作者。", [("中华人民共和国著作权法", 11)]),
        ("参见《民法典》第一千零六十二条、第一千零六十三条。", [(CIVIL_CODE, 1062), (CIVIL_CODE, 1063)]),
        ("参见《民法典》第1062条和第1063条。", [(CIVIL_CODE, 1062), (CIVIL_CODE, 1063)]),
        ("参见《民法典》第1062条至第1065条。", [(CIVIL_CODE, n) for n in range(1062, 1066)]),
        (
            "《劳动合同法》第三十九条规定了过失性辞退。该法第四十条则规定了无过失性辞退。",
            [("中华人民共和国劳动合同法", 39), ("中华人民共和国劳动合同法", 40)],
        ),
        ("依照《中华人民共和国刑法》第一百三十三条之一第一款第（二）项", [("中华人民共和国刑法", 133)]),
    ],
)
def test_citation_forms(extract, text, expected):
    assert pairs(extract(text)) == expected


def test_article_suffix_paragraph_and_item_are_recorded(extract):
    (c,) = extract("依照《中华人民共和国刑法》第一百三十三条之一第一款第（二）项的规定")
    assert (c.article, c.suffix, c.paragraph, c.item) == (133, 1, 1, 2)
    assert c.label == "第一百三十三条之一"


def test_quoted_content_after_the_citation(extract):
    (c,) = extract(
        "根据《民法典》第一千零七十九条的规定：“夫妻一方要求离婚的，可以由有关组织进行调解。”你可以起诉。"
    )
    assert c.content_kind == "quoted"
    assert c.quoted == "夫妻一方要求离婚的，可以由有关组织进行调解。"


def test_reference_style_content_runs_on_until_the_next_article(extract):
    text = "法律依据:《中华人民共和国劳动法》第四十三条用人单位不得违反本法规定延长劳动者的工作时间。第四十四条有下列情形之一的，用人单位应当支付工资报酬"
    first, second = extract(text)
    assert (first.article, second.article) == (43, 44)
    assert first.content_kind == "inline" and first.quoted == "用人单位不得违反本法规定延长劳动者的工作时间。"
    assert second.backref and second.law == "中华人民共和国劳动法"


def test_lawyer_commentary_is_not_part_of_the_content(extract):
    (c,) = extract(
        "法律依据:《民法典》第一千零八十四条父母与子女间的关系，不因父母离婚而消除。律师解答父母离婚了，子女仍要赡养父母。"
    )
    assert c.quoted == "父母与子女间的关系，不因父母离婚而消除。"


def test_statement_after_gui_ding_is_content_but_advice_to_the_client_is_not(extract):
    (c,) = extract("《劳动合同法》第三十七条规定，劳动者提前三十日以书面形式通知用人单位，可以解除劳动合同。")
    assert c.content_kind == "stated"
    (c,) = extract("根据《劳动合同法》第三十七条规定，您可以提前三十日通知单位。")
    assert c.quoted is None and c.content_kind == "applied"


def test_references_inside_quoted_statute_text_are_not_citations(extract):
    text = "《劳动合同法》第四十八条规定：“用人单位应当依照本法第八十七条规定支付赔偿金。”"
    assert pairs(extract(text)) == [("中华人民共和国劳动合同法", 48)]


def test_ben_fa_without_a_law_is_not_a_citation(extract):
    assert extract("依照本法第八十七条规定支付赔偿金。") == []


def test_repealed_and_unknown_laws_are_kept(extract):
    cits = extract("根据《合同法》第一百零七条和劳动者保护法第3条")
    assert pairs(cits) == [("中华人民共和国合同法", 107), ("劳动者保护法", 3)]
    assert cits[0].resolution.repeal is not None
    assert cits[1].resolution.key is None


def test_misspelled_law_names_are_resolved_with_a_note(extract):
    (c,) = extract("《治安管理处罚》第四十三条殴打他人的，处五日以上十日以下拘留")
    assert c.law == "中华人民共和国治安管理处罚法" and "incomplete" in c.resolution.note
    (c,) = extract("《中华人民共和国劳动争议仲裁调解法》第五条")
    assert c.law == "中华人民共和国劳动争议调解仲裁法" and "garbled" in c.resolution.note


def test_html_tags_from_scraped_answers_are_ignored(extract):
    (c,) = extract(
        "法律依据:<p>《民法典》第一千零八十四条</p><p>父母与子女间的关系，不因父母离婚而消除。</p>"
    )
    assert c.article == 1084 and c.quoted and c.quoted.startswith("父母与子女间的关系")


def test_text_without_citations_gives_none(extract):
    assert extract("") == []
    assert extract("我想离婚，怎么办？") == []
