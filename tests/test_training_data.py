"""The step-7 data converters of training/data.py: chat-format SFT rows from slices of ../shared/data
(KINLED, lawyer-llama single- and multi-turn counsel, DISC) and from saved consultations; DPO pairs and
boss labels from real annotation-store exports (CSV and JSONL, ties and both_bad handled); labelled
questions for the receptionist."""

from __future__ import annotations

import json
import uuid

import pytest

from eval_ui.items import Item
from eval_ui.store import AnnotationStore, LabelInput, shown_verdict
from lawluo import prompts
from lawluo.agents.secretary import Report, render_markdown
from lawluo.domains import DOMAIN_IDS, domain
from lawluo.firm.state import Consultation as State
from lawluo.firm.state import Turn
from training import data

from .conftest import SHARED_DATA

needs_shared = pytest.mark.skipif(not (SHARED_DATA / "lawyer_llama").exists(), reason="needs ../shared/data")


# -- ../shared/data ----------------------------------------------------------------------------------
@needs_shared
def test_kinled_and_disc_become_one_user_and_one_assistant_message():
    for source in ("kinled_consult", "kinled_exam", "kinled_interp", "kinled_terms", "disc"):
        records = data.SOURCES[source](SHARED_DATA)[:5]
        rows = data.sft_rows(records)
        assert len(rows) == 5, source
        for rec, row in zip(records, rows, strict=True):
            assert row["messages"] == [
                {"role": "user", "content": rec.question.strip()},
                {"role": "assistant", "content": rec.answer.strip()},
            ]
            assert row["source"] == source and row["id"] == rec.id


@needs_shared
def test_lawyer_llama_dialogues_keep_every_turn_and_alternate():
    records = data.legal_counsel_multi_turn(SHARED_DATA)
    rows = data.sft_rows(records, system="你是一名律师。")
    assert len(rows) == 476
    for row in rows:
        roles = [m["role"] for m in row["messages"]]
        assert roles[0] == "system" and roles[1] == "user" and roles[-1] == "assistant"
        assert all(a != b for a, b in zip(roles[1:], roles[2:], strict=False))  # strictly alternating
    raw = json.loads(
        (SHARED_DATA / "lawyer_llama" / "legal_counsel_multi_turn_with_article_v2.jsonl").open().readline()
    )
    first = rows[0]["messages"][1:]
    assert [m["content"] for m in first] == [h[4:].strip() for h in raw["history"]][: len(first)]
    # the one dialogue that ends with the client loses that last turn: nothing to learn from it
    ends_with_client = [r for r in records if r.dialogue[-1][0] == "client"]
    assert len(ends_with_client) == 1
    assert data.dialogue_of(ends_with_client[0])[-1][0] == "lawyer"


@needs_shared
def test_app_format_is_what_the_apps_lawyer_sends():
    record = data.legal_counsel(SHARED_DATA)[0]
    (row,) = data.sft_rows([record], prompt_format="app", route=lambda q: "marriage_family")
    system, user, assistant = row["messages"]
    assert system == {"role": "system", "content": prompts.render(domain("marriage_family").prompt)}
    assert record.question in user["content"] and "【为这些事实检索到的法条】" in user["content"]
    assert "- 《民法典》第一千零七十六条：夫妻双方自愿离婚的" in user["content"]
    assert assistant == {"role": "assistant", "content": record.answer}


@needs_shared
def test_weak_reward_rows_pair_each_answer_with_another_questions():
    records = data.SOURCES["kinled_consult"](SHARED_DATA)[:20]
    rows = data.weak_reward_rows(records, seed=0)
    assert len(rows) == 40 and sum(r["label"] for r in rows) == 20
    own = {r.question: r.answer for r in records}
    assert all((r["answer"] == own[r["question"]]) == (r["label"] == 1) for r in rows)
    dataset = data.reward_dataset(rows)
    assert dataset.column_names == ["question", "answer", "label", "kind", "source"]


@needs_shared
def test_receptionist_rows_are_weak_labels_plus_the_dev_questions():
    rows = data.receptionist_rows(SHARED_DATA, sources=["kinled_consult"], max_per_domain=5)
    dev = [r for r in rows if r["source"] == "lawbench_dev"]
    weak = [r for r in rows if r["source"] != "lawbench_dev"]
    assert len(dev) == 250 and 0 < len(weak) <= 16 * 5
    assert {r["domain"] for r in rows} <= set(DOMAIN_IDS)
    assert not {r["question"] for r in weak} & {r["question"] for r in dev}


# -- saved consultations ---------------------------------------------------------------------------
def saved_consultation() -> State:
    report = Report(
        number="LL-20260101-ABC123", date="2026年1月1日", client="王女士", subject="押金", purpose="退押金", facts="房东不退押金。",
        analysis="押金应当退还。", advice=["先协商"], risks=["保留证据"], generated_by="fake",
    )  # fmt: skip
    statute = {  # as the lawyer's retrieval stores it (StatuteHit.as_dict() + preferred)
        "law": "中华人民共和国民法典",
        "article": 577,
        "article_label": "第五百七十七条",
        "version": "2020",
        "current": True,
        "in_force": True,
        "level": "法律",
        "text": "当事人一方不履行合同义务……",
        "score": 12.5,
        "preferred": True,
    }
    return State(
        client="王女士",
        domain="real_estate",
        status="closed",
        turns=[
            Turn("client", "房东不退押金怎么办？"),
            Turn("lawyer", "您可以先协商，再起诉。", statutes=[statute]),
            Turn("client", "他不接电话呢？"),
            Turn("lawyer", "", note="回答失败：timeout"),
            Turn("client", "那怎么办？"),
            Turn("lawyer", "可以向法院起诉。", statutes=[statute]),
        ],
        report=report.model_dump(),
    )


def test_saved_consultations_become_dialogues_without_failed_answers(tmp_path):
    state = saved_consultation()
    (tmp_path / "a.json").write_text(state.to_json(), encoding="utf-8")
    (tmp_path / "more.jsonl").write_text(
        json.dumps(state.to_dict(), ensure_ascii=False) + "\n", encoding="utf-8"
    )
    states = data.read_transcripts([tmp_path])
    assert len(states) == 2
    record = data.transcript_record(states[0])
    assert record.domain == "real_estate" and record.answer == "可以向法院起诉。"
    (row,) = data.sft_rows([record])
    assert [m["content"] for m in row["messages"]] == [
        "房东不退押金怎么办？",
        "您可以先协商，再起诉。",
        "他不接电话呢？\n那怎么办？",
        "可以向法院起诉。",
    ]
    (app,) = data.sft_rows([record], prompt_format="app")
    assert app["messages"][0]["content"] == prompts.render(domain("real_estate").prompt)
    assert "《中华人民共和国民法典》第五百七十七条" in app["messages"][-2]["content"]


def test_saved_consultations_give_labelled_answers_and_the_report(tmp_path):
    state = saved_consultation()
    outputs = data.transcript_outputs(state)
    assert [(o["kind"], o["question"]) for o in outputs] == [
        ("answer", "房东不退押金怎么办？"),
        ("answer", "那怎么办？"),
        ("report", "房东不退押金怎么办？"),
    ]
    assert outputs[-1]["answer"] == render_markdown(Report(**state.report))
    rows = data.transcript_reward_rows([state], label=0)
    assert {r["label"] for r in rows} == {0} and rows[0]["source"] == f"transcript:{state.id}"
    with pytest.raises(ValueError, match="bad.json"):
        (tmp_path / "bad.json").write_text("{}", encoding="utf-8")
        data.read_transcripts([tmp_path / "bad.json"])


# -- annotation exports ----------------------------------------------------------------------------
ITEMS = [Item(f"q{i}", f"问题{i}", f"甲的回答{i}", f"乙的回答{i}", "sysA", "sysB") for i in range(5)]
#: Two annotators' verdicts per item (un-swapped): agree A, agree B, tie, both_bad, disagree.
VERDICTS = {
    "q0": ("A", "A"),
    "q1": ("B", "B"),
    "q2": ("tie", "tie"),
    "q3": ("both_bad", "both_bad"),
    "q4": ("A", "B"),
}


@pytest.fixture
def store(tmp_path):
    s = AnnotationStore(tmp_path / "annotations.sqlite")
    s.import_items(ITEMS)
    for name in ("张", "李"):
        s.add_annotator(name)
    s.assign(overlap=2, seed=0)
    for item_id, verdicts in VERDICTS.items():
        for name, verdict in zip(("张", "李"), verdicts, strict=True):
            shown = shown_verdict(verdict, s.assignment(name, item_id).swapped)  # as the UI would send it
            s.save_label(name, item_id, LabelInput(shown), uuid.uuid4().hex)
    yield s
    s.close()


def test_preference_pairs_from_a_csv_export_and_the_store(store, tmp_path):
    store.export(tmp_path / "labels.csv")
    rows = data.preference_rows(tmp_path / "labels.csv", store.path)
    assert [r["id"] for r in rows] == ["q0", "q1"]  # tie, both_bad and disagreement carry no preference
    q0, q1 = rows
    assert q0["prompt"] == [{"role": "user", "content": "问题0"}]
    assert q0["chosen"] == [{"role": "assistant", "content": "甲的回答0"}]
    assert q0["rejected"] == [{"role": "assistant", "content": "乙的回答0"}]
    assert q1["chosen"][0]["content"] == "乙的回答1" and q1["rejected"][0]["content"] == "甲的回答1"
    from trl.data_utils import is_conversational

    dataset = data.preference_dataset(tmp_path / "labels.csv", store)
    assert dataset.column_names == ["prompt", "chosen", "rejected", "id"] and is_conversational(dataset[0])


def test_a_jsonl_export_with_history_and_an_items_file_give_the_same_pairs(store, tmp_path):
    name = "张"
    shown = shown_verdict("B", store.assignment(name, "q0").swapped)
    store.save_label(name, "q0", LabelInput(shown), uuid.uuid4().hex)  # 张 changes q0 to B: now 1–1
    store.export(tmp_path / "labels.jsonl", fmt="jsonl", current_only=False)
    items = tmp_path / "items.jsonl"
    items.write_text(
        "".join(json.dumps(i.__dict__ | {"statutes": []}, ensure_ascii=False) + "\n" for i in ITEMS),
        encoding="utf-8",
    )
    labels = data.read_annotation_labels(tmp_path / "labels.jsonl")
    assert len(labels) == 10  # the replaced version of 张's q0 label is not counted
    assert data.item_verdicts(labels)["q0"] == "tie"
    assert [r["id"] for r in data.preference_rows(tmp_path / "labels.jsonl", items)] == ["q1"]


def test_boss_labels_from_pairwise_verdicts(store, tmp_path):
    store.export(tmp_path / "labels.csv")
    rows = data.reward_rows_from_annotations(tmp_path / "labels.csv", store)
    got = {(r["source"], r["answer"]): r["label"] for r in rows}
    assert got == {
        ("annotation:q0", "甲的回答0"): 1,
        ("annotation:q0", "乙的回答0"): 0,
        ("annotation:q1", "甲的回答1"): 0,
        ("annotation:q1", "乙的回答1"): 1,
        ("annotation:q3", "甲的回答3"): 0,  # both_bad: both worse
        ("annotation:q3", "乙的回答3"): 0,
    }


def test_labels_of_unknown_items_and_bad_rows_are_refused(store, tmp_path):
    store.export(tmp_path / "labels.csv")
    with pytest.raises(ValueError, match="not among the items"):
        data.preference_rows(tmp_path / "labels.csv", ITEMS[:2])
    with pytest.raises(ValueError, match="needs an item_id and a verdict"):
        data.read_annotation_labels([{"item_id": "q0", "verdict": "left"}])


# -- other formats ---------------------------------------------------------------------------------
def test_labelled_outputs_accept_words_and_reports(tmp_path):
    path = tmp_path / "labelled.jsonl"
    lines = [
        {"question": "问", "answer": "好答案", "label": "better"},
        {"question": "问", "report": "# 法律咨询报告", "label": 0},
        {"question": "问", "answer": "答", "label": True},
    ]
    path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), encoding="utf-8")
    rows = data.read_labelled_outputs(path)
    assert [(r["label"], r["kind"]) for r in rows] == [(1, "answer"), (0, "report"), (1, "answer")]
    path.write_text(json.dumps({"question": "问", "answer": "答", "label": "maybe"}) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=":1: needs question"):
        data.read_labelled_outputs(path)


@pytest.mark.parametrize(
    "row, expected",
    [
        (
            {"messages": [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]},
            ["user", "assistant"],
        ),
        (
            {"conversations": [{"from": "human", "value": "a"}, {"from": "gpt", "value": "b"}]},
            ["user", "assistant"],
        ),
        ({"prompt": "a", "completion": "b"}, ["user", "assistant"]),
        ({"question": "a", "answer": "b"}, ["user", "assistant"]),
        ({"question": "a", "answer": ""}, None),
        ({"text": "plain text"}, None),
        ({"messages": [{"role": "user", "content": "a"}]}, None),
    ],
)
def test_general_instruction_rows(row, expected):
    messages = data.general_messages(row)
    assert (None if messages is None else [m["role"] for m in messages]) == expected


def test_labelled_questions_take_ids_or_names(tmp_path):
    path = tmp_path / "q.jsonl"
    path.write_text(
        '{"question": "我想 离婚", "domain": "婚姻家庭"}\n{"question": "欠薪", "domain": "labor"}\n',
        encoding="utf-8",
    )
    assert [(r["question"], r["domain"]) for r in data.read_labelled_questions(path)] == [
        ("我想 离婚", "marriage_family"),
        ("欠薪", "labor"),
    ]
    path.write_text('{"question": "x", "domain": "tax"}\n', encoding="utf-8")
    with pytest.raises(ValueError, match="no domain 'tax'"):
        data.read_labelled_questions(path)


def test_worked_examples_in_the_training_docstrings_hold():
    import doctest

    pytest.importorskip("sentence_transformers")
    from training import train_receptionist_encoder

    for module in (data, train_receptionist_encoder):
        result = doctest.testmod(module)
        assert result.attempted > 0 and result.failed == 0, module.__name__
