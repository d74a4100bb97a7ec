"""The clarifier's fine-tuning (issue 41 item 3): rows are the app's own first-level prompt and the labelled
relevant elements, held-out splits never become rows, a tiny random Qwen2 learns the answers, and the GGUF
round trip (dequantise a GGUF for training; export the adapter with llama.cpp's converter) is wired."""

from __future__ import annotations

import dataclasses
import json

import pytest

from lawluo.config import Settings
from lawluo.tolc.builder import Elements

from .fakes.tiny_lm import save_tiny_gguf, save_tiny_lm
from .test_train_sft import GENERATION_TEMPLATE

QUESTIONS = [
    {"id": "a1", "split": "train_set", "question": "房东不退押金，我搬走一个月了。"},
    {"id": "a2", "split": "train_set", "question": "公司两个月没发工资，我想辞职。"},
    {"id": "a3", "split": "train_set", "question": "邻居家漏水把我家泡了。"},
    {"id": "b1", "split": "held_out_x", "question": "老板让我明天别来了，没给补偿。"},
]
LABELS = [
    ("a1", "您退租时房屋是否没有损坏？", 1),
    ("a1", "您是否结清了租金和水电费？", 1),
    ("a1", "您是否结清了租金和水电费", 1),  # the same element without its question mark: one
    ("a1", "您是否有前科？", 0),
    ("a2", "公司是否以书面形式通知您？", 1),  # one relevant element only: below min_relevant
    ("a3", "漏水是否来自邻居家的水管？", 1),
    ("a3", "您是否保留了受损物品的照片？", 1),
    ("b1", "您是否签了书面劳动合同？", 1),
    ("b1", "您在公司是否工作满一年？", 1),
]


@pytest.fixture
def labels_dir(tmp_path):
    (tmp_path / "clarification_questions.x.jsonl").write_text(
        "".join(json.dumps(q, ensure_ascii=False) + "\n" for q in QUESTIONS), encoding="utf-8"
    )
    (tmp_path / "clarification_labels.x.jsonl").write_text(
        "".join(
            json.dumps({"id": i, "element": e, "relevant": r}, ensure_ascii=False) + "\n"
            for i, e, r in LABELS
        ),
        encoding="utf-8",
    )
    return tmp_path


def test_a_row_per_question_with_enough_relevant_elements_and_held_out_splits_never(labels_dir):
    from training.clarifier_data import labelled_questions

    found = {q.id: q for q in labelled_questions(labels_dir, exclude={"held_out_x"})}
    assert sorted(found) == ["a1", "a3"]  # a2 has one relevant element, b1 is held out
    assert found["a1"].relevant == ("您退租时房屋是否没有损坏？", "您是否结清了租金和水电费？")
    assert "b1" in {q.id for q in labelled_questions(labels_dir)}


def test_the_answer_takes_the_elements_the_prompt_shows_first_up_to_k():
    from training.clarifier_data import answer_of

    relevant = ["甲是否发生？", "乙是否发生？", "丙是否发生？", "丁是否发生？"]
    answer = json.loads(answer_of(relevant, "参考要素：- 丙是否发生？（《民法典》第1条）\n- 丁是否发生？", 3))
    assert [e["statement"] for e in answer["elements"]] == ["丙是否发生？", "丁是否发生？", "甲是否发生？"]
    Elements.model_validate(answer)  # what the tree builder's schema accepts


@pytest.fixture(scope="module")
def tuned_firm(firm_services):
    from lawluo.firm import Firm

    return Firm.from_settings(dataclasses.replace(Settings(), prompt_variant="tuned"), **firm_services)


def test_the_rows_carry_the_apps_own_tuned_prompt_without_cases(tuned_firm, labels_dir):
    from lawluo.prompts import render
    from training.clarifier_data import clarifier_rows, first_level_prompt, labelled_questions

    question = QUESTIONS[0]["question"]
    messages = first_level_prompt(tuned_firm, question)
    assert [m["role"] for m in messages] == ["system", "user"]
    assert messages[0]["content"] == render("tolc/system", "tuned")
    user = messages[1]["content"]
    assert question in user and "【参考要素】" in user and "相似案例" not in user
    assert tuned_firm.tree_builder.clarifier is not None  # the firm's own clarifier is put back

    built = clarifier_rows(tuned_firm, labelled_questions(labels_dir, exclude={"held_out_x"}))
    assert [r["id"] for r in built.rows] == ["a1", "a3"]
    row = built.rows[0]
    assert row["messages"][:2] == messages and row["messages"][2]["role"] == "assistant"
    Elements.model_validate_json(row["messages"][2]["content"])
    assert built.elements == 4 and 0 <= built.shown <= 4


@pytest.fixture(scope="module")
def trained(tmp_path_factory, tuned_firm):
    pytest.importorskip("torch")
    pytest.importorskip("peft")
    from lawluo.firm import Firm
    from training import train_clarifier_sft as tc

    root = tmp_path_factory.mktemp("clarifier")
    labels = root / "labels"
    labels.mkdir()
    rows = [
        dict(q, question=f"{q['question']}（{n}）", id=f"{q['id']}-{n}") for q in QUESTIONS for n in range(3)
    ]
    (labels / "clarification_questions.x.jsonl").write_text(
        "".join(json.dumps(q, ensure_ascii=False) + "\n" for q in rows), encoding="utf-8"
    )
    (labels / "clarification_labels.x.jsonl").write_text(
        "".join(
            json.dumps({"id": f"{i}-{n}", "element": e, "relevant": r}, ensure_ascii=False) + "\n"
            for i, e, r in LABELS
            for n in range(3)
        ),
        encoding="utf-8",
    )
    base = save_tiny_lm(root / "lm", chat_template=GENERATION_TEMPLATE)
    out = root / "adapter"
    data_args = tc.ClarifierDataArguments(labels_dir=str(labels), exclude_splits=["held_out_x"])
    training_args = tc.ClarifierSFTConfig(
        output_dir=str(out), max_steps=10, learning_rate=1e-2, lr_scheduler_type="constant",
        logging_steps=1, save_strategy="no", max_length=2048, bf16=False, gradient_checkpointing=False,
        disable_tqdm=True, report_to="none", seed=0,
    )  # fmt: skip
    with pytest.MonkeyPatch.context() as patch:  # the shipped firm, loaded once for the module
        patch.setattr(Firm, "from_settings", classmethod(lambda cls, settings: tuned_firm))
        tc.main(data_args, training_args, tc.LawyerModelConfig(model_name_or_path=str(base)))
    return out


def test_training_learns_the_answers_and_records_what_it_saw(trained):
    metrics = [json.loads(line) for line in (trained / "results" / "metrics.jsonl").read_text().splitlines()]
    losses = [m["loss"] for m in metrics if "loss" in m]
    assert len(losses) == 10 and sum(losses[-2:]) < 0.6 * sum(losses[:2])
    data = json.loads((trained / "results" / "data.json").read_text())
    assert data["rows"] == 6 and data["excluded_splits"] == ["held_out_x"]
    assert data["by_split"] == {"train_set": 6}
    assert (trained / "adapter_config.json").is_file()


def test_a_gguf_is_dequantised_into_a_transformers_model(tmp_path):
    pytest.importorskip("gguf")
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from training.gguf import dequantise

    gguf = save_tiny_gguf(tmp_path / "g" / "tiny.gguf", emit="A")
    out = dequantise(gguf, tmp_path / "hf")
    model = AutoModelForCausalLM.from_pretrained(out, dtype=torch.float32)
    assert getattr(model.config, "quantization_config", None) is None
    tokenizer = AutoTokenizer.from_pretrained(out)
    ids = tokenizer("押金", return_tensors="pt").input_ids
    generated = model.generate(ids, max_new_tokens=3, do_sample=False)[0, ids.shape[1] :]
    assert tokenizer.decode(generated) == "AAA"  # the tiny GGUF's one answer: the weights survived


def test_the_adapter_is_exported_by_llama_cpps_own_converter(tmp_path):
    from training.gguf import export_lora, main

    source = tmp_path / "llama.cpp"
    source.mkdir()
    (source / "convert_lora_to_gguf.py").write_text(
        "import json, sys\n"
        "args = sys.argv[1:]\n"
        "open(args[args.index('--outfile') + 1], 'w').write(json.dumps(args))\n",
        encoding="utf-8",
    )
    adapter = tmp_path / "clarifier-lora"
    adapter.mkdir()
    (adapter / "adapter_config.json").write_text("{}", encoding="utf-8")
    assert main(["export-lora", "--base", "B", "--adapter", str(adapter), "--source", str(source)]) == 0
    written = adapter / "clarifier-lora.gguf"
    assert json.loads(written.read_text()) == [
        "--base", "B", "--outfile", str(written), "--outtype", "f16", str(adapter),
    ]  # fmt: skip
    with pytest.raises(SystemExit, match="not a PEFT adapter"):
        export_lora(tmp_path, tmp_path / "nothing", tmp_path / "x.gguf", source)
    with pytest.raises(SystemExit, match="not llama.cpp's source"):
        export_lora(tmp_path, adapter, tmp_path / "x.gguf", tmp_path)
