"""Similar past questions voting for articles (``lawluo/retrieval/votes.py``)."""

from __future__ import annotations

import gzip
import json

import pytest

from lawluo.retrieval.statutes import QueryError
from lawluo.retrieval.votes import QuestionVotes, VotesDataError, fuse, ranked_votes

ROWS = [
    {
        "id": "t1",
        "question": "我想和丈夫离婚，孩子的抚养权归谁",
        "articles": [["民法典", 1084]],
        "eval": False,
    },
    {"id": "t2", "question": "公司拖欠工资不发怎么办", "articles": [["劳动合同法", 30]], "eval": False},
    {"id": "t3", "question": "邻居的狗咬伤了我家孩子", "articles": [["民法典", 1245]], "eval": False},
    {
        "id": "t4",
        "question": "借钱不还可以起诉吗",
        "articles": [["民法典", 675], ["民法典", 676]],
        "eval": False,
    },
    # an evaluation question: must never be indexed, even though it matches the query best
    {"id": "e1", "question": "离婚 离婚 离婚 财产怎么分", "articles": [["民法典", 1087]], "eval": True},
]


@pytest.fixture(scope="module")
def votes():
    return QuestionVotes(ROWS)


def test_a_divorce_question_votes_for_the_article_its_neighbour_cited(votes):
    v = votes.votes("离婚以后孩子归谁抚养", k_neighbours=2)
    assert ranked_votes(v)[0] == ("民法典", 1084)
    assert v[("民法典", 1084)] == 1.0
    assert all(0 < x <= 1 for x in v.values())


def test_every_article_of_a_neighbour_gets_its_vote(votes):
    v = votes.votes("朋友借钱不还", k_neighbours=1)
    assert v == {("民法典", 675): 1.0, ("民法典", 676): 1.0}


def test_eval_rows_are_never_indexed(votes):
    assert len(votes) == 4
    assert "离婚 离婚 离婚 财产怎么分" not in votes.questions
    assert ("民法典", 1087) not in votes.votes("离婚 财产怎么分", k_neighbours=10)
    # a row that does not say it is a training row is not indexed either
    assert len(QuestionVotes([*ROWS, {"question": "离婚", "articles": [["民法典", 1087]]}])) == 4


def test_no_matching_word_gives_no_votes(votes):
    assert votes.votes("zzzz", k_neighbours=5) == {}


def test_votes_are_deterministic(votes):
    again = QuestionVotes(list(ROWS))
    q = "孩子被狗咬了，离婚后谁来管"
    assert votes.votes(q, 3) == again.votes(q, 3)
    assert ranked_votes(votes.votes(q, 3)) == ranked_votes(again.votes(q, 3))


def test_bad_query_and_bad_rows_give_clear_errors(votes):
    with pytest.raises(QueryError, match="empty query"):
        votes.votes("   ")
    with pytest.raises(VotesDataError, match="no training questions"):
        QuestionVotes([{"question": "离婚", "articles": [["民法典", 0]], "eval": False}, "not a row"])


def test_from_asset_skips_malformed_lines(tmp_path):
    path = tmp_path / "s.jsonl.gz"
    lines = [json.dumps(r, ensure_ascii=False) for r in ROWS] + ["{not json", json.dumps({"eval": False})]
    path.write_bytes(gzip.compress("\n".join(lines).encode()))
    v = QuestionVotes.from_asset(path)
    assert len(v) == 4 and v.skipped == 3  # the eval row, the bad JSON, the row without a question
    with pytest.raises(VotesDataError, match="cannot read"):
        QuestionVotes.from_asset(tmp_path / "missing.jsonl.gz")


A, B, C = ("民法典", 1), ("民法典", 2), ("刑法", 3)


def test_fusion_weight_zero_keeps_the_searchers_order_and_appends_votes():
    hits = [(A, 10.0), (B, 5.0)]
    assert fuse(hits, {C: 1.0}, 0.0) == [A, B, C]


def test_fusion_lets_a_strong_vote_overtake():
    hits = [(A, 10.0), (B, 9.0)]
    votes = {B: 1.0}
    assert fuse(hits, votes, 0.5) == [B, A]  # B: 0.5*0.9 + 0.5 = 0.95 > A: 0.5
    assert fuse(hits, {C: 1.0}, 1.0) == [C, A, B]  # votes first, then the searcher's order
    # equal scores: by (law, number), whatever the order of the votes
    assert fuse([], {A: 0.2, C: 0.2}, 0.5) == fuse([], {C: 0.2, A: 0.2}, 0.5) == sorted([A, C])


def test_fusion_rejects_a_weight_outside_0_1():
    with pytest.raises(ValueError, match="between 0 and 1"):
        fuse([(A, 1.0)], {}, 1.5)


def test_with_an_index_dir_the_index_is_cached_and_rebuilt_when_the_questions_change(tmp_path, caplog):
    first = QuestionVotes(ROWS, tmp_path / "votes")
    assert "building BM25 index" in caplog.text and (tmp_path / "votes").is_dir()
    caplog.clear()
    again = QuestionVotes(ROWS, tmp_path / "votes")
    assert "building BM25 index" not in caplog.text  # loaded from the cache
    question = ROWS[0]["question"]
    assert again.votes(question, 3) == first.votes(question, 3)
    QuestionVotes(ROWS[1:], tmp_path / "votes")
    assert "building BM25 index" in caplog.text  # other questions, other index
