"""Hubness reduction of the dense first stage (issue 39): an article near every question stops crowding them."""

from __future__ import annotations

import doctest
import logging

import numpy as np
import pytest

from lawluo.retrieval import hubness
from lawluo.retrieval.adapter_training import fit_hub_offsets, reference_questions
from lawluo.retrieval.dense import DenseIndex
from lawluo.retrieval.hubness import FILENAME, HubnessError, hub_offsets, load, load_beside, save


def _unit(x) -> np.ndarray:
    x = np.asarray(x, dtype=np.float32)
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


class _Encoder:
    """An encoder that maps each question the test names to the vector the test gives it."""

    def __init__(self, vectors: dict[str, np.ndarray]) -> None:
        self.vectors = vectors

    def encode_query(self, texts, **kwargs):
        return np.stack([self.vectors[t] for t in texts])


#: Article 0 is a hub: close to every question, the first for none of them by what it says.
ARTICLES = _unit([[1.0, 1.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
QUESTIONS = {"借钱不还": _unit([0.6, 0.1, 0.79]), "邻居漏水": _unit([0.1, 0.6, 0.79])}


def _index() -> DenseIndex:
    import faiss

    flat = faiss.IndexFlatIP(3)
    flat.add(ARTICLES)
    return DenseIndex(flat, _Encoder(QUESTIONS), "fake", "fp")


def test_a_hub_leads_by_cosine_and_falls_behind_the_fitting_article_once_its_hubness_is_taken_off():
    index = _index()
    reference = np.stack(list(QUESTIONS.values()))
    offsets = hub_offsets(ARTICLES, reference, beta=1.0, k=2)
    assert offsets[0] == offsets.max()  # the hub is the article nearest to questions in general
    for question, fitting in (("借钱不还", 1), ("邻居漏水", 2)):
        assert index.search(question, 1)[0][0] == 0
        reduced = index.with_hub_offsets(offsets)
        ranked = reduced.search(question, 3)
        assert ranked[0][0] == fitting
        cosine = float(ARTICLES[fitting] @ QUESTIONS[question])
        assert ranked[0][1] == pytest.approx(cosine - offsets[fitting])
        assert reduced.similarities(question, [fitting])[fitting] == pytest.approx(ranked[0][1])
    assert index.hub_offsets is None  # a view: the original searches by the cosine still


def test_a_view_keeps_its_offsets_through_an_adapter_view_and_refuses_the_wrong_length():
    index = _index().with_hub_offsets(np.zeros(3, dtype=np.float32))
    assert index.with_adapter(index.adapter, {"问": ARTICLES[1]}).hub_offsets is not None
    with pytest.raises(ValueError, match="2 hub offsets for 3 vectors"):
        _index().with_hub_offsets(np.zeros(2, dtype=np.float32))


def test_hubness_needs_reference_questions():
    with pytest.raises(HubnessError, match="no reference questions"):
        hubness.hubness(ARTICLES, np.zeros((0, 3), dtype=np.float32))


def test_offsets_load_only_beside_the_vectors_they_were_measured_for(tmp_path, caplog):
    offsets = np.array([0.1, 0.05, 0.07], dtype=np.float32)
    save(tmp_path / FILENAME, offsets, "fp", 0.5, 10, "3 questions")
    assert np.array_equal(load(tmp_path / FILENAME, "fp", 3), offsets)
    with pytest.raises(HubnessError, match="other vectors"):
        load(tmp_path / FILENAME, "other", 3)
    with pytest.raises(HubnessError, match="not 4 offsets"):
        load(tmp_path / FILENAME, "fp", 4)
    with caplog.at_level(logging.WARNING):
        assert load_beside(tmp_path, "other", 3) is None
    assert "without hubness reduction" in caplog.text
    assert load_beside(tmp_path / "none", "fp", 3) is None


@pytest.mark.parametrize(
    "values", [[0.1, float("nan"), 0.0], [0.1, -0.2, 0.0], [0.1, 7.0, 0.0]], ids=["nan", "negative", "large"]
)
def test_a_hostile_or_broken_offsets_file_is_refused(tmp_path, values):
    save(tmp_path / FILENAME, np.array(values, dtype=np.float32), "fp", 0.5, 10, "x")
    with pytest.raises(HubnessError, match="in \\[0, 1\\]"):
        load(tmp_path / FILENAME, "fp", 3)
    (tmp_path / FILENAME).write_bytes(b"PK\x03\x04 not a zip")
    with pytest.raises(HubnessError, match="unreadable"):
        load(tmp_path / FILENAME, "fp", 3)


def test_hubness_is_measured_against_training_questions_only_never_an_evaluation_row():
    rows = [
        {"question": "根据《民法典》第667条，借钱不还", "eval": False},
        {"question": "邻居漏水", "eval": False},
        {"question": "评测问题", "eval": True},
        {"question": "  ", "eval": False},
    ]
    assert reference_questions(rows) == ["借钱不还", "邻居漏水"]  # the citation taken out, as a query

    class Vectors:
        def __call__(self, texts):
            return np.stack([QUESTIONS[t] for t in texts])

    offsets = fit_hub_offsets(_index(), rows, Vectors(), beta=1.0)
    assert offsets.argmax() == 0 and offsets.shape == (3,)


def test_the_examples_in_the_docstring_hold():
    assert doctest.testmod(hubness).failed == 0
