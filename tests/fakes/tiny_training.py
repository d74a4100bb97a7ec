"""Tiny stand-ins for what the HIPO and RL training scripts need, built inside a test in about a second.

- :func:`write_tiny_statutes`: a statute database of three articles of 劳动合同法, built by lawluo's own
  builder from one LawRefBook-style Markdown file;
- :func:`write_tiny_consultations`: a ``../shared/data``-shaped folder holding only
  ``lawluo_kinled/consult_995.json`` (read by ``training/data.py`` as the ``kinled_consult`` source);
- :func:`save_tiny_encoder`: a sentence-transformers model of static token embeddings (dimension 16);
- :func:`save_tiny_reward_model`: a random 2-layer Qwen2 sequence classifier with one output, saved with
  the tiny ChatML tokenizer, as TRL's ``RewardTrainer`` saves a reward model.

The causal LM itself is :func:`tests.fakes.tiny_lm.save_tiny_lm`.
"""

from __future__ import annotations

import json
from pathlib import Path

from .tiny_lm import SENTENCES, build_tiny_tokenizer, tiny_qwen2_config

LABOUR_CONTRACT_LAW = """# 中华人民共和国劳动合同法

2012年12月28日 第十一届全国人民代表大会常务委员会第三十次会议修正

<!-- INFO END -->

## 第一章 总则

第一条 为了完善劳动合同制度，明确劳动合同双方当事人的权利和义务，保护劳动者的合法权益，构建和发展和谐稳定的劳动关系，制定本法。

第三条 订立劳动合同，应当遵循合法、公平、平等自愿、协商一致、诚实信用的原则。

依法订立的劳动合同具有约束力，用人单位与劳动者应当履行劳动合同约定的义务。

第三十条 用人单位应当按照劳动合同约定和国家规定，向劳动者及时足额支付劳动报酬。
"""

#: A citation the checker verifies, and three it does not (content_mismatch, not_found, wrong_number).
VERIFIED = (
    "根据《劳动合同法》第三十条规定：“用人单位应当按照劳动合同约定和国家规定，向劳动者及时足额支付劳动报酬。”"
)
WRONG_CONTENT = "《劳动合同法》第三条规定：“用人单位可以随时解除劳动合同，无需支付任何经济补偿金或者赔偿金。”"
NO_SUCH_LAW = "《劳动者保护法》第3条规定：“用人单位应当每月发放高温补贴和加班费。”"
WRONG_NUMBER = (
    "《劳动合同法》第三条规定：“用人单位应当按照劳动合同约定和国家规定，向劳动者及时足额支付劳动报酬。”"
)
NUMBER_ONLY = "依据《劳动合同法》第三条，你可以维权。"  # name and number real, nothing to check: no_content

QUESTIONS = (
    "公司拖欠工资怎么办？",
    "老板三个月不发工资，我能要求赔偿吗？",
    "劳动合同到期不续签有补偿吗？",
    "试用期被辞退怎么办？",
    "加班费应该怎么计算？",
    "单位不签劳动合同怎么办？",
)


def write_tiny_statutes(folder: str | Path) -> Path:
    """Build ``folder/statutes.sqlite`` from one Markdown file; return its path."""
    from lawluo.law.build import build_statute_db

    folder = Path(folder)
    laws = folder / "laws" / "社会法"
    laws.mkdir(parents=True, exist_ok=True)
    (laws / "劳动合同法(2012-12-28).md").write_text(LABOUR_CONTRACT_LAW, encoding="utf-8")
    path = folder / "statutes.sqlite"
    build_statute_db(folder / "laws", path)
    return path


def write_tiny_consultations(folder: str | Path, n: int = len(QUESTIONS)) -> Path:
    """A data folder whose ``kinled_consult`` source has ``n`` questions, each answered citing a statute."""
    folder = Path(folder)
    (folder / "lawluo_kinled").mkdir(parents=True, exist_ok=True)
    rows = [{"question": q, "answer": f"{VERIFIED}您可以要求单位支付。"} for q in QUESTIONS[:n]]
    (folder / "lawluo_kinled" / "consult_995.json").write_text(
        json.dumps(rows, ensure_ascii=False), encoding="utf-8"
    )
    return folder


def save_tiny_encoder(path: str | Path, seed: int = 0) -> Path:
    """A sentence-transformers encoder (static embeddings over a WordPiece vocabulary of the tiny sentences)."""
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import StaticEmbedding
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    raw = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    raw.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    trainer = trainers.WordPieceTrainer(
        vocab_size=300, special_tokens=["[UNK]", "[PAD]"], show_progress=False
    )
    raw.train_from_iterator([*SENTENCES, *QUESTIONS, VERIFIED, WRONG_CONTENT], trainer=trainer)
    torch.manual_seed(seed)
    path = Path(path)
    SentenceTransformer(modules=[StaticEmbedding(raw, embedding_dim=16)], device="cpu").save(str(path))
    return path


def save_tiny_reward_model(path: str | Path, seed: int = 3) -> Path:
    """A random reward model (Qwen2 sequence classifier, num_labels=1) and its chat tokenizer."""
    import torch
    from transformers import Qwen2ForSequenceClassification

    tokenizer = build_tiny_tokenizer()
    torch.manual_seed(seed)
    model = Qwen2ForSequenceClassification(tiny_qwen2_config(tokenizer, num_labels=1)).eval()
    path = Path(path)
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path
