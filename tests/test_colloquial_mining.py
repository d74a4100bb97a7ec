"""Colloquial words mined from the supervision pairs (lawluo/retrieval/colloquial.py)."""

from __future__ import annotations

from types import SimpleNamespace

from lawluo.retrieval import colloquial

LOANS = {
    ("民法典", 667): "借款合同是借款人向贷款人借款，到期返还借款并支付利息的合同。",
    ("民法典", 675): "借款人应当按照约定的期限返还借款。",
    ("民法典", 679): "自然人之间的借款合同，自贷款人提供借款时成立。",
}
HUB = {("民法典", 1042): "禁止借婚姻索取财物。禁止重婚。"}
LABOUR = {("劳动合同法", 30): "用人单位应当向劳动者及时足额支付劳动报酬。"}
TEXTS = LOANS | HUB | LABOUR


class FakeDB:
    def find_article(self, law, number):
        text = TEXTS.get((law, number))
        return None if text is None else SimpleNamespace(text=text)


#: Share of the statutes holding each token: the lay words (欠条, 彩礼, 拖欠) almost never, the terms often.
SHARES = {"借款": 0.002, "借款人": 0.001, "返还": 0.003, "索取": 0.001, "重婚": 0.0005, "劳动报酬": 0.002}


def _row(i, question, articles, source="disc", eval_=False):
    return {
        "id": str(i),
        "question": question,
        "articles": [list(a) for a in articles],
        "source": source,
        "eval": eval_,
    }


def _rows():
    loans = list(LOANS)
    rows = [_row(i, f"朋友打了欠条借了我{i}万块钱一直不还", [loans[i % 3]]) for i in range(9)]
    rows += [_row(10 + i, f"彩礼给了{i}万现在要分手能要回来吗", [*HUB]) for i in range(9)]
    rows += [
        _row(20 + i, f"老板拖欠我{i}个月的钱", [*LABOUR]) for i in range(60)
    ]  # most questions are not loans
    return rows


def test_a_lay_word_maps_to_the_terms_of_the_different_articles_its_questions_cite():
    mined = colloquial.mine(_rows(), FakeDB(), SHARES)
    assert "借款" in mined["欠条"]


def test_words_of_one_hub_article_are_not_mapped_however_often_they_co_occur():
    # every 彩礼 question cites 民法典1042 alone: 索取 and 重婚 are that one article's words, not a translation
    assert "彩礼" not in colloquial.mine(_rows(), FakeDB(), SHARES)


def test_only_lay_training_rows_count():
    evaluation = [dict(r, eval=True) for r in _rows()]
    exams = [dict(r, source="kinled_interpretation") for r in _rows()]
    assert colloquial.mine(evaluation, FakeDB(), SHARES) == {}
    assert colloquial.mine(exams, FakeDB(), SHARES) == {}


def test_a_hostile_row_is_skipped(tmp_path):
    rows = [
        *_rows(),
        {"question": None},
        {"question": "欠条", "articles": [["民法典"]], "source": "disc"},
        {},
    ]
    assert "欠条" in colloquial.mine(rows, FakeDB(), SHARES)


def test_the_written_table_leaves_the_hand_written_words_to_the_hand_written_file(tmp_path):
    path = tmp_path / colloquial.FILENAME
    colloquial.write({"欠条": ["借款"], "开车": ["机动车"]}, path, hand={"开车": ["驾驶", "机动车"]})
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("#") and lines[1:] == ["欠条\t借款"]
