"""Dense retrieval (sentence-transformers + faiss) and reciprocal rank fusion, offline.

The encoder is a randomly initialised two-layer BERT with a character-level vocabulary, built here
from a dozen legal phrases: it knows nothing about meaning, but it is a real sentence-transformers
model, so every code path (tokenising, pooling, saving, loading) is exercised without a download.
"""

from __future__ import annotations

import doctest
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lawluo.retrieval import fusion
from lawluo.retrieval.dense import METADATA_FILE, DenseEncoderUnavailable, DenseIndex
from lawluo.retrieval.fusion import FusedIndex, reciprocal_rank_fusion

CORPUS = [
    "离婚财产分割",
    "劳动合同解除",
    "交通事故赔偿",
    "房屋租赁合同纠纷",
    "民间借贷利息",
    "子女抚养权归属",
    "工伤认定程序",
    "商标侵权责任",
    "遗产继承顺序",
    "合同违约金调整",
    "医疗损害责任",
    "正当防卫的界限",
]


def _train_tokenizer(sentences: list[str]):
    """A word-level tokenizer whose words are single characters: BertNormalizer puts spaces around
    every CJK character and the Whitespace pre-tokenizer then splits on them."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.WordLevel(unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer(handle_chinese_chars=True, lowercase=False)
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    special = ["[PAD]", "[UNK]", "[CLS]", "[SEP]"]
    tokenizer.train_from_iterator(sentences, trainers.WordLevelTrainer(special_tokens=special))
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        special_tokens=[(token, tokenizer.token_to_id(token)) for token in ("[CLS]", "[SEP]")],
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        unk_token="[UNK]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        model_max_length=32,
    )


@pytest.fixture(scope="session")
def encoder_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A saved tiny BERT + tokenizer, the layout of any Hugging Face model folder."""
    from .fakes.tiny_lm import save_tiny_bert

    folder = tmp_path_factory.mktemp("tiny-encoder")
    tokenizer = _train_tokenizer(CORPUS)
    return save_tiny_bert(folder, tokenizer, max_positions=32)


@pytest.fixture(scope="session")
def encoder(encoder_dir: Path):
    """The tiny model as a SentenceTransformer: transformer, then mean pooling."""
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Pooling, Transformer

    transformer = Transformer(str(encoder_dir))
    pooling = Pooling(transformer.get_embedding_dimension(), pooling_mode="mean")
    return SentenceTransformer(modules=[transformer, pooling], device="cpu")


@pytest.fixture(scope="session")
def index(encoder) -> DenseIndex:
    return DenseIndex.build(CORPUS, encoder, batch_size=4)


# DenseIndex


def test_importing_dense_does_not_import_torch_faiss_or_sentence_transformers() -> None:
    heavy = ["torch", "faiss", "sentence_transformers"]
    code = f"import sys, lawluo.retrieval.dense; print([m for m in {heavy!r} if m in sys.modules])"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_every_document_is_the_top_hit_for_its_own_text(index: DenseIndex) -> None:
    for position, text in enumerate(CORPUS):
        (top, score), *_ = index.search(text, k=3)
        assert top == position
        assert score == pytest.approx(1.0, abs=1e-4)


def test_hits_are_sorted_by_cosine_similarity(index: DenseIndex) -> None:
    hits = index.search("合同纠纷", k=len(CORPUS))
    scores = [score for _, score in hits]
    assert scores == sorted(scores, reverse=True)
    assert all(-1.0001 <= score <= 1.0001 for score in scores)
    assert sorted(position for position, _ in hits) == list(range(len(CORPUS)))


def test_k_larger_than_the_corpus_returns_every_document_once(index: DenseIndex) -> None:
    hits = index.search("离婚", k=100)
    assert len(hits) == len(index) == len(CORPUS)
    assert len({position for position, _ in hits}) == len(CORPUS)


@pytest.mark.parametrize("query", ["", "   ", "\n\t"])
def test_empty_query_raises_value_error(index: DenseIndex, query: str) -> None:
    with pytest.raises(ValueError, match="non-empty query"):
        index.search(query, k=3)


def test_k_below_one_raises_value_error(index: DenseIndex) -> None:
    with pytest.raises(ValueError, match="k must be at least 1"):
        index.search("离婚", k=0)


def test_an_empty_corpus_builds_and_finds_nothing(encoder) -> None:
    empty = DenseIndex.build([], encoder)
    assert len(empty) == 0
    assert empty.search("离婚", k=5) == []


def test_save_then_load_gives_identical_results(index: DenseIndex, encoder, tmp_path: Path) -> None:
    index.save(tmp_path)
    loaded = DenseIndex.load(tmp_path, encoder)
    assert len(loaded) == len(index)
    assert loaded.fingerprint == index.fingerprint
    for query in ["离婚财产", "合同", "侵权责任"]:
        assert loaded.search(query, k=5) == index.search(query, k=5)


def test_an_encoder_given_as_a_path_is_loaded_and_recorded(encoder_dir: Path, tmp_path: Path) -> None:
    built = DenseIndex.build(CORPUS[:3], str(encoder_dir))
    built.save(tmp_path)
    metadata = json.loads((tmp_path / METADATA_FILE).read_text(encoding="utf-8"))
    assert metadata["encoder"] == str(encoder_dir)
    assert metadata["count"] == 3
    assert built.search(CORPUS[1], k=1)[0][0] == 1


class _CountingEncodes:
    """Counts how many documents the encoder embeds, i.e. whether load_or_build built anything."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, encoder) -> None:
        self.documents = 0
        original = encoder.encode_document

        def encode_document(texts, *args, **kwargs):
            self.documents += len(texts)
            return original(texts, *args, **kwargs)

        monkeypatch.setattr(encoder, "encode_document", encode_document)


def test_load_or_build_loads_from_disk_when_nothing_changed(
    encoder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    counter = _CountingEncodes(monkeypatch, encoder)
    first = DenseIndex.load_or_build(tmp_path, CORPUS, encoder)
    assert counter.documents == len(CORPUS)
    second = DenseIndex.load_or_build(tmp_path, CORPUS, encoder)
    assert counter.documents == len(CORPUS), "the unchanged corpus was embedded again"
    assert second.search("离婚", k=3) == first.search("离婚", k=3)


def test_load_or_build_rebuilds_when_the_texts_change(
    encoder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    DenseIndex.load_or_build(tmp_path, CORPUS, encoder)
    counter = _CountingEncodes(monkeypatch, encoder)
    edited = [*CORPUS[:-1], "紧急避险的条件"]
    rebuilt = DenseIndex.load_or_build(tmp_path, edited, encoder)
    assert counter.documents == len(edited)
    assert rebuilt.search("紧急避险的条件", k=1)[0][0] == len(edited) - 1
    reloaded = DenseIndex.load_or_build(tmp_path, edited, encoder)
    assert counter.documents == len(edited), "the rebuilt index was not saved"
    assert reloaded.fingerprint == rebuilt.fingerprint


def test_load_or_build_rebuilds_when_the_encoder_changes(encoder_dir: Path, tmp_path: Path) -> None:
    copy = tmp_path / "encoder-copy"
    shutil.copytree(encoder_dir, copy)
    cache = tmp_path / "cache"
    first = DenseIndex.load_or_build(cache, CORPUS, str(encoder_dir))
    second = DenseIndex.load_or_build(cache, CORPUS, str(copy))
    assert second.encoder_name == str(copy)
    assert second.fingerprint != first.fingerprint
    assert json.loads((cache / METADATA_FILE).read_text(encoding="utf-8"))["encoder"] == str(copy)


def test_load_or_build_rebuilds_over_a_corrupt_index_file(encoder, tmp_path: Path) -> None:
    built = DenseIndex.load_or_build(tmp_path, CORPUS, encoder)
    (tmp_path / "dense.faiss").write_bytes(b"not a faiss index")
    rebuilt = DenseIndex.load_or_build(tmp_path, CORPUS, encoder)
    assert rebuilt.search("离婚", k=3) == built.search("离婚", k=3)


def test_a_missing_encoder_path_raises_dense_encoder_unavailable(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-model"
    with pytest.raises(DenseEncoderUnavailable, match="LAWLUO_STATUTE_ENCODER") as caught:
        DenseIndex.build(CORPUS, str(missing))
    assert str(missing) in str(caught.value)
    assert "BM25" in str(caught.value)


def test_a_folder_that_is_not_a_model_raises_dense_encoder_unavailable(tmp_path: Path) -> None:
    with pytest.raises(DenseEncoderUnavailable, match="LAWLUO_CASE_ENCODER"):
        DenseIndex.load_or_build(tmp_path / "cache", CORPUS, str(tmp_path))


# Reciprocal rank fusion


def test_rrf_matches_a_hand_computed_example() -> None:
    bm25 = [(3, 12.0), (1, 8.5), (2, 1.0)]
    dense = [(1, 0.91), (4, 0.90), (3, 0.10)]
    # doc 1: 1/(60+2) + 1/(60+1); doc 3: 1/(60+1) + 1/(60+3); doc 4: 1/(60+2); doc 2: 1/(60+3)
    expected = [(1, 1 / 62 + 1 / 61), (3, 1 / 61 + 1 / 63), (4, 1 / 62), (2, 1 / 63)]
    fused = reciprocal_rank_fusion([bm25, dense], k=10)
    assert [doc for doc, _ in fused] == [1, 3, 4, 2]
    assert [score for _, score in fused] == pytest.approx([score for _, score in expected])


def test_rrf_weights_multiply_each_rankings_contribution() -> None:
    fused = reciprocal_rank_fusion([[(0, 1.0)], [(1, 1.0)]], k=2, c=0, weights=[1.0, 3.0])
    assert fused == [(1, pytest.approx(3.0)), (0, pytest.approx(1.0))]


def test_rrf_truncates_to_k_and_breaks_ties_by_document_position() -> None:
    fused = reciprocal_rank_fusion([[(5, 1.0), (2, 0.5)], [(2, 1.0), (5, 0.5)]], k=1)
    assert fused == [(2, pytest.approx(1 / 61 + 1 / 62))]


def test_rrf_rejects_a_weight_count_that_does_not_match() -> None:
    with pytest.raises(ValueError, match="one weight per ranking"):
        reciprocal_rank_fusion([[(0, 1.0)], [(1, 1.0)]], k=2, weights=[1.0])


def test_the_rrf_docstring_example_holds() -> None:
    assert doctest.testmod(fusion).failed == 0


class _FakeIndex:
    """A TextIndex that returns a fixed ranking and records the depth it was asked for."""

    def __init__(self, ranking: list[tuple[int, float]], size: int = 5) -> None:
        self.ranking = ranking
        self.size = size
        self.asked: list[int] = []

    def __len__(self) -> int:
        return self.size

    def search(self, query: str, k: int) -> list[tuple[int, float]]:
        self.asked.append(k)
        return self.ranking[:k]


def test_fused_index_returns_the_rrf_order_of_its_indexes() -> None:
    bm25 = _FakeIndex([(0, 9.0), (2, 5.0), (4, 1.0)])
    dense = _FakeIndex([(2, 0.9), (3, 0.8), (0, 0.7)])
    fused = FusedIndex([bm25, dense], depth=5)
    # doc 2: 1/62 + 1/61 > doc 0: 1/61 + 1/63 > doc 3: 1/62 > doc 4: 1/63
    assert [doc for doc, _ in fused.search("离婚", k=4)] == [2, 0, 3, 4]
    assert len(fused) == 5
    assert bm25.asked == dense.asked == [5]


def test_fused_index_searches_each_index_at_least_k_deep() -> None:
    fake = _FakeIndex([(0, 1.0)])
    FusedIndex([fake], depth=2).search("离婚", k=10)
    assert fake.asked == [10]


def test_fused_index_weights_can_overturn_the_order() -> None:
    bm25 = _FakeIndex([(0, 9.0), (1, 5.0)])
    dense = _FakeIndex([(1, 0.9), (0, 0.8)])
    assert FusedIndex([bm25, dense], weights=[1.0, 2.0]).search("合同", k=1)[0][0] == 1


def test_fused_index_rejects_indexes_over_different_corpora() -> None:
    with pytest.raises(ValueError, match="same documents"):
        FusedIndex([_FakeIndex([], size=5), _FakeIndex([], size=6)])


def test_fused_index_over_bm25_like_and_dense_indexes(index: DenseIndex) -> None:
    keyword = _FakeIndex([(7, 3.0), (4, 2.0)], size=len(CORPUS))
    hits = FusedIndex([keyword, index], depth=len(CORPUS)).search(CORPUS[7], k=3)
    assert hits[0][0] == 7  # first in both rankings
