"""The receptionist's encoder upgrade (LawLuo §3.2, eq. 3): training/train_receptionist_encoder.py on a
tiny BERT built here (contrastive loss goes down, resume), the directory it writes loaded by
``Receptionist.from_dir`` as an ``EncoderReceptionist`` that routes like the linear receptionist."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lawluo.agents.receptionist import EncoderReceptionist, Receptionist, ReceptionistAssetError, Routing
from lawluo.domains import DOMAIN_IDS

pytestmark = pytest.mark.slow  # 5 s of the suite on 2 cores (4 s or more: left out of the inner loop)

pytest.importorskip("sentence_transformers")

#: Two words per domain that no other domain's questions contain.
WORDS = {
    "marriage_family": ("离婚", "抚养"),
    "labor": ("工资", "加班"),
    "traffic": ("车祸", "交警"),
    "debt": ("借款", "欠条"),
    "criminal": ("盗窃", "拘留"),
    "contract": ("违约", "定金"),
    "real_estate": ("房产", "过户"),
    "tort": ("名誉", "殴打"),
    "company": ("股东", "股权"),
    "medical": ("医院", "手术"),
    "demolition": ("拆迁", "补偿"),
    "administrative": ("行政", "复议"),
    "construction": ("工程", "包工"),
    "intellectual_property": ("商标", "专利"),
    "consumer": ("假货", "退款"),
    "other": ("海事", "船舶"),
}
FRAMES = ("请问{a}的事怎么办", "我遇到{b}问题", "{a}和{b}要找谁", "关于{b}，{a}能起诉吗", "{a}了怎么处理")


def questions() -> list[dict]:
    return [
        {"question": frame.format(a=a, b=b), "domain": dom}
        for dom, (a, b) in WORDS.items()
        for frame in FRAMES
    ]


def save_tiny_bert(path: Path) -> Path:
    """A random 2-layer BERT (hidden 32) with a character-level WordLevel tokenizer of the questions."""
    from .fakes.tiny_lm import save_tiny_bert, tiny_bert_tokenizer

    return save_tiny_bert(
        path,
        tiny_bert_tokenizer([q["question"] for q in questions()] + ["公司拖欠我三个月工资，开车撞了人"]),
        max_positions=64,
    )


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """One training run (8 steps, checkpoints at 4 and 8), then a resumed run to step 12."""
    from training import train_receptionist_encoder as tre

    root = tmp_path_factory.mktemp("encoder")
    base = save_tiny_bert(root / "bert")
    qfile = root / "questions.jsonl"
    qfile.write_text("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in questions()), encoding="utf-8")
    out = root / "receptionist"

    def run(max_steps: int, resume: bool):
        data_args = tre.EncoderDataArguments(
            sources=[], with_dev=False, questions_files=[str(qfile)], negatives=2, head_c=100.0
        )
        training_args = tre.EncoderTrainingArguments(
            output_dir=str(out),
            max_steps=max_steps,
            per_device_train_batch_size=32,
            learning_rate=2e-3,
            lr_scheduler_type="constant",
            warmup_steps=0,
            logging_steps=1,
            save_steps=4,
            seed=0,
            disable_tqdm=True,
            report_to="none",
            resume_from_checkpoint="true" if resume else None,
        )
        model_args = tre.EncoderModelArguments(model_name_or_path=str(base), max_seq_length=32)
        return tre.main(data_args, training_args, model_args)

    first = run(8, resume=False)
    first_metrics = [
        json.loads(line) for line in (out / "results" / "metrics.jsonl").read_text().splitlines()
    ]
    second = run(12, resume=True)
    return {"out": out, "first": first, "second": second, "first_metrics": first_metrics}


def losses(metrics: list[dict]) -> list[tuple[int, float]]:
    return [(m["step"], m["loss"]) for m in metrics if "loss" in m]


def test_the_contrastive_loss_goes_down(trained):
    logged = [loss for _, loss in losses(trained["first_metrics"])]
    assert len(logged) == 8 and sum(logged[-2:]) < 0.8 * sum(logged[:2])  # two steps each: less noise


def test_training_resumes_from_the_last_checkpoint(trained):
    metrics = [
        json.loads(line) for line in (trained["out"] / "results" / "metrics.jsonl").read_text().splitlines()
    ]
    steps = [s for s, _ in losses(metrics)]
    assert steps == list(range(1, 9)) + list(range(9, 13))  # the resumed run went on from step 8
    assert (trained["out"] / "checkpoint-12").is_dir()


def test_from_dir_loads_the_encoder_and_routes_with_16_probabilities(trained):
    model = Receptionist.from_dir(trained["out"])
    assert isinstance(model, EncoderReceptionist)
    routing = model.classify("请问离婚的事怎么办")
    assert isinstance(routing, Routing) and list(routing.scores) == list(DOMAIN_IDS)
    assert sum(routing.scores.values()) == pytest.approx(1.0, abs=1e-5)
    assert routing.domain == "marriage_family" and routing.name == "婚姻家庭"
    right = sum(model.classify(q["question"]).top[0][0] == q["domain"] for q in questions())
    assert right >= 0.9 * len(questions())
    assert model.meta["train_accuracy"] >= 0.9 and model.meta["format"] == "encoder/1"
    assert model.reroute(["请问工资的事怎么办", "我遇到车祸问题，交警说我全责"], "labor").domain == "traffic"


def test_the_returned_receptionist_is_the_one_on_disk(trained):
    q = "关于股权，股东能起诉吗"
    assert trained["second"].probabilities(q) == pytest.approx(
        EncoderReceptionist.from_dir(trained["out"]).probabilities(q), abs=1e-5
    )


def test_a_broken_encoder_directory_says_how_to_rebuild(trained, tmp_path):
    (tmp_path / "model.json").write_text(json.dumps({"format": "encoder/1"}), encoding="utf-8")
    with pytest.raises(ReceptionistAssetError, match="python -m training.train_receptionist_encoder "):
        Receptionist.from_dir(tmp_path)


def test_contrastive_pairs_pair_within_and_across_domains():
    from training import train_receptionist_encoder as tre

    rows = [{"question": q["question"], "domain": q["domain"]} for q in questions()]
    pairs = tre.contrastive_pairs(rows, positives=1, negatives=2, seed=0)
    domain_of = {r["question"]: r["domain"] for r in rows}
    assert len(pairs) == 3 * len(rows)
    assert all((domain_of[p["sentence1"]] == domain_of[p["sentence2"]]) == (p["label"] == 1) for p in pairs)
    assert all(p["sentence1"] != p["sentence2"] for p in pairs)
