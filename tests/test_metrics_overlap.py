"""ROUGE-L (LawBench's task 3-8 score), METEOR and BERTScore, offline.

ROUGE-L is checked against values worked out by hand and against ``rouge_chinese`` (LawBench's own
code path, :func:`rouge_l_reference`) on real answers of the shared LawBench dev set. METEOR is checked
against nltk called directly. BERTScore runs a randomly initialised two-layer BERT with a
character-level WordPiece vocabulary built here, and is checked against greedy matching computed with
torch from that model's hidden states.
"""

from __future__ import annotations

import json
import shutil

import pytest

from lawluo.metrics import overlap
from lawluo.metrics.overlap import (
    BertScorer,
    MetricUnavailable,
    meteor,
    meteor_many,
    rouge_l,
    rouge_l_many,
    rouge_l_reference,
)

from .conftest import ROOT, SHARED_DATA

pytestmark = pytest.mark.slow  # 6 s of the suite on 2 cores (4 s or more: left out of the inner loop)

LAWBENCH = SHARED_DATA / "lawbench"
needs_data = pytest.mark.skipif(
    not (LAWBENCH / "consult_predictions.dev.jsonl").exists(), reason="needs ../shared/data/lawbench"
)


def _jieba_words(text: str) -> list[str]:
    import jieba

    return [w for w in jieba.cut(text) if w.strip()]


@pytest.fixture(scope="module")
def real_pairs() -> list[tuple[str, str]]:
    """110+ (answer, reference) pairs: every 35th answer plus the awkward ones."""
    refs = {
        r["id"]: r["reference"]
        for r in map(json.loads, (LAWBENCH / "consult.dev.jsonl").read_text(encoding="utf-8").splitlines())
    }
    rows = [
        json.loads(x) for x in (LAWBENCH / "consult_predictions.dev.jsonl").read_text("utf-8").splitlines()
    ]
    pairs = [(r["answer"], refs[r["id"]]) for r in rows]
    chosen = set(range(0, len(pairs), 35))
    tricky = [
        lambda a: not a.strip(),  # LawBench's "无内容" rule
        lambda a: "." in a and "。" in a,  # "5.1" stays one jieba word; "。" ends sentences
        lambda a: "\n\n" in a,  # whitespace-only sentences become empty-string tokens
        lambda a: "？" in a or "?" in a or "！" in a,
        lambda a: "……" in a or "......" in a,
        lambda a: "”" in a,  # cut_sent keeps a closing quote with its sentence
        lambda a: len(a) < 15,
    ]
    for test in tricky:
        chosen.update([i for i, (a, _) in enumerate(pairs) if test(a)][:4])
    chosen.update(sorted(range(len(pairs)), key=lambda i: -len(pairs[i][0]))[:3])  # up to 4,954 chars
    return [pairs[i] for i in sorted(chosen)]


# --- ROUGE-L --------------------------------------------------------------------------------------


def test_rouge_l_by_hand():
    # jieba: 你 / 可以 / 申请 / 仲裁 (n = 4) against 我 / 可以 / 申请 / 劳动 / 仲裁 (m = 5).
    # LCS = 可以 申请 仲裁 = 3, so R = 3/5, P = 3/4 and
    # F = 2 * (0.75 * 0.6) / (0.75 + 0.6 + 1e-8) = 0.9 / 1.35000001 = 0.66666666173
    assert rouge_l("你可以申请仲裁", "我可以申请劳动仲裁") == pytest.approx(0.9 / 1.35000001, abs=1e-12)
    assert rouge_l_reference(["你可以申请仲裁"], ["我可以申请劳动仲裁"]) == pytest.approx([0.9 / 1.35000001])


def test_rouge_l_counts_rouge_chinese_empty_sentence_tokens():
    # jieba: 甲 / 。 / "\n" / 乙, joined "甲 。 \n 乙". rouge_chinese's cut_sent puts a newline after
    # "。 ", giving pieces "甲 。", " ", " 乙"; the whitespace-only piece becomes an empty-string token:
    # [甲, 。, "", 乙] against [甲, 。, "", 丙]: LCS = 3, m = n = 4, F = 0.75 (naive tokens would give 2/3).
    assert rouge_l("甲。\n乙", "甲。\n丙") == pytest.approx(0.75, abs=1e-7)
    assert rouge_l_reference(["甲。\n乙"], ["甲。\n丙"]) == [rouge_l("甲。\n乙", "甲。\n丙")]


def test_blank_prediction_scores_as_lawbench_placeholder():
    # LawBench replaces a blank *segmented* hypothesis by "无内容", one token that jieba would have
    # cut into 无 / 内容: so a blank answer scores 0 even against the reference "无内容" (segmenting
    # the placeholder would give 1), and rouge_chinese, which raises on an empty hypothesis, is never
    # reached with one.
    from rouge_chinese import Rouge

    with pytest.raises(ValueError):
        Rouge().get_scores([""], ["无 内容"])
    assert rouge_l("无内容", "无内容") == pytest.approx(1.0, abs=1e-7)
    for blank in ("", "   ", "\n\t\u3000"):
        assert rouge_l(blank, "无内容") == 0.0
        assert rouge_l_reference([blank], ["无内容"]) == [0.0]
    assert rouge_l_many(["", "你可以申请仲裁"], ["我可以申请劳动仲裁"] * 2)[0] == 0.0


def test_empty_reference_is_an_error_as_in_rouge_chinese():
    with pytest.raises(ValueError):
        rouge_l("你可以申请仲裁", " \n")
    with pytest.raises(ValueError):
        rouge_l_reference(["你可以申请仲裁"], [" \n"])


@needs_data
def test_rouge_l_equals_rouge_chinese_on_real_answers(real_pairs):
    assert len(real_pairs) >= 100
    assert any(not a.strip() for a, _ in real_pairs) and max(len(a) for a, _ in real_pairs) > 4000
    predictions, references = zip(*real_pairs, strict=True)
    fast = rouge_l_many(predictions, references)
    expected = rouge_l_reference(predictions, references)
    assert fast == pytest.approx(expected, abs=1e-9, rel=0)
    assert [rouge_l(p, r) for p, r in real_pairs[:20]] == fast[:20]
    assert len(set(fast)) > 50  # not a constant


@pytest.mark.parametrize(
    "garbage",
    [
        "<div class=\"answer\"><p>回答：</p><br/><script>alert('x')</script></div>",
        "&nbsp;&lt;b&gt;……......！！？？",
        "。。。\n\n\n。",
        "\x00\ufffd\u200b 🙂 ” ’ ”",
        "回答:" + "根据《民法典》第5.1条。" * 300,
    ],
    ids=["html", "entities", "only-stops", "control-emoji-quotes", "long-repeat"],
)
def test_rouge_l_survives_garbage_and_agrees_with_rouge_chinese(garbage):
    reference = "回答:醉驾可能影响考学。法律依据:《中华人民共和国道路交通安全法》第九十一条……"
    for prediction, ref in ((garbage, reference), (reference, garbage)):
        score = rouge_l(prediction, ref)
        assert 0.0 <= score <= 1.0
        assert score == rouge_l_reference([prediction], [ref])[0]


def test_rouge_l_many_checks_lengths():
    with pytest.raises(ValueError, match="2 predictions but 1 references"):
        rouge_l_many(["a", "b"], ["a"])


# --- METEOR ---------------------------------------------------------------------------------------


def test_meteor_by_hand():
    # Identical: 3 tokens in one chunk, penalty 0.5 * (1/3)^3: 1 - 0.5/27.
    assert meteor("用人单位拖欠工资怎么办", "用人单位拖欠工资怎么办") == pytest.approx(1 - 0.5 / 27)
    # 公司 拖欠工资 ， 劳动者 可以 申请 劳动 仲裁 。 (9 tokens) against 劳动者 可以 申请 仲裁 。 (5):
    # 5 matches, P = 5/9, R = 1, Fmean = PR / (0.9P + 0.1R) = (5/9) / 0.6 = 0.925926;
    # chunks 劳动者 可以 申请 | 仲裁 。 = 2, penalty 0.5 * (2/5)^3 = 0.032; 0.968 * 0.925926 = 0.896296.
    assert meteor("公司拖欠工资，劳动者可以申请劳动仲裁。", "劳动者可以申请仲裁。") == pytest.approx(
        0.968 * 5 / 9 / 0.6
    )


def test_meteor_uses_stems_but_no_wordnet():
    assert meteor("contracts", "contract") == pytest.approx(0.5)  # Porter stem match, one chunk of one
    assert meteor("automobile", "car") == 0.0  # WordNet synonyms would match these; we have none
    assert meteor("", "劳动者可以申请仲裁") == 0.0


@needs_data
def test_meteor_equals_nltk_called_directly(real_pairs):
    from nltk.translate.meteor_score import meteor_score

    class NoSynonyms:
        def synsets(self, word):
            return []

    pairs = real_pairs[:40]
    expected = [meteor_score([_jieba_words(r)], _jieba_words(p), wordnet=NoSynonyms()) for p, r in pairs]
    assert meteor_many(*zip(*pairs, strict=True)) == pytest.approx(expected, abs=1e-12)
    assert len(set(expected)) > 10


# --- BERTScore ------------------------------------------------------------------------------------

TINY_CORPUS = [
    "用人单位拖欠工资怎么办",
    "劳动者可以申请劳动仲裁",
    "合同无效的法律后果",
    "醉酒驾驶构成危险驾驶罪",
]


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory):
    """A random 2-layer BERT (hidden 32) and a character WordPiece tokenizer saved without a maximum
    length (transformers then reports 1e30, which the scorer must cap at the 64 positions). The
    directory's name contains "t5", which bert_score's own loader would take for a T5 model."""
    import torch
    from tokenizers import BertWordPieceTokenizer
    from transformers import BertConfig, BertModel, BertTokenizerFast

    path = tmp_path_factory.mktemp("tiny-bert-not-t5")
    wordpiece = BertWordPieceTokenizer(handle_chinese_chars=True, lowercase=False)
    special = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    wordpiece.train_from_iterator(TINY_CORPUS, vocab_size=100, min_frequency=1, special_tokens=special)
    wordpiece.save_model(str(path))
    tokenizer = BertTokenizerFast(vocab=str(path / "vocab.txt"))
    tokenizer.save_pretrained(path)
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
    )
    BertModel(config).save_pretrained(path)
    return path


def _greedy_f1(path, prediction: str, reference: str, layer: int) -> float:
    """BERTScore F1 by hand: cosine of layer-``layer`` embeddings; each non-special token takes its best
    match among all tokens of the other text ([CLS]/[SEP] included, weight 0, as in bert_score)."""
    import torch
    from transformers import AutoTokenizer, BertModel

    tokenizer = AutoTokenizer.from_pretrained(path)
    model = BertModel.from_pretrained(path).eval()
    special = {tokenizer.cls_token_id, tokenizer.sep_token_id}

    def embed(text):
        enc = tokenizer(text, return_tensors="pt")
        with torch.no_grad():
            hidden = model(**enc, output_hidden_states=True).hidden_states[layer][0]
        keep = torch.tensor([i not in special for i in enc.input_ids[0].tolist()])
        return hidden / hidden.norm(dim=-1, keepdim=True), keep

    hyp, hyp_keep = embed(prediction)
    ref, ref_keep = embed(reference)
    sim = hyp @ ref.T
    precision = sim[hyp_keep].max(dim=1).values.mean().item()
    recall = sim[:, ref_keep].max(dim=0).values.mean().item()
    return 2 * precision * recall / (precision + recall)


def test_bertscore_matches_greedy_matching_by_hand(tiny_bert):
    scorer = BertScorer(str(tiny_bert), num_layers=1, batch_size=2, device="cpu")
    predictions = ["劳动者可以申请仲裁", "合同无效", "用人单位拖欠工资怎么办"]
    references = ["用人单位拖欠工资，劳动者可以申请劳动仲裁", "合同无效的法律后果", "用人单位拖欠工资怎么办"]
    scores = scorer.score(predictions, references)
    assert scores[2] == pytest.approx(1.0, abs=1e-5)  # identical texts
    assert all(-1.0 <= s <= 1.0 + 1e-6 for s in scores)
    by_hand = [_greedy_f1(tiny_bert, p, r, layer=1) for p, r in zip(predictions, references, strict=True)]
    assert scores == pytest.approx(by_hand, abs=1e-5)
    # the other layers give other values (by far more than the tolerance), so the check above tells
    # which layer was used
    for layer in (0, 2):
        assert abs(_greedy_f1(tiny_bert, predictions[0], references[0], layer=layer) - scores[0]) > 1e-4
    assert scores[0] != pytest.approx(scores[1], abs=1e-3)
    # a blank side scores 0 (bert_score's rule; its own encoder of blank texts fails on transformers 5)
    assert scorer.score(["", "劳动者"], ["劳动者", " "]) == [0.0, 0.0]


@pytest.mark.parametrize("idf", [False, True])
def test_bertscore_equals_the_bert_score_package(tiny_bert, tmp_path, idf):
    import bert_score
    from transformers import AutoTokenizer

    copy = tmp_path / "bert-copy"  # bert_score.score needs a tokenizer with a maximum length
    shutil.copytree(tiny_bert, copy)
    AutoTokenizer.from_pretrained(copy, model_max_length=64).save_pretrained(copy)
    predictions = ["劳动者可以申请仲裁", "用人单位拖欠工资", "工资怎么办"]
    references = ["用人单位拖欠工资", "劳动者申请劳动仲裁", "用人单位怎么办"]
    _, _, f1 = bert_score.score(predictions, references, model_type=str(copy), num_layers=1, idf=idf)
    ours = BertScorer(str(tiny_bert), num_layers=1, idf=idf).score(predictions, references)
    assert ours == pytest.approx(f1.tolist(), abs=1e-6)


def test_bertscore_loads_lazily_and_reports_a_missing_model(tmp_path):
    scorer = BertScorer(str(tmp_path / "missing"))  # nothing is loaded yet
    with pytest.raises(MetricUnavailable, match="could not be loaded offline") as info:
        scorer.score(["甲"], ["甲"])
    assert "BertScorer(model=" in str(info.value) and "missing" in str(info.value)
    (tmp_path / "not-a-model").mkdir()
    with pytest.raises(MetricUnavailable, match="not-a-model"):
        BertScorer(str(tmp_path / "not-a-model"), num_layers=1).score(["甲"], ["甲"])


def test_bertscore_unreachable_hub_is_metric_unavailable(monkeypatch):
    import transformers

    calls = []

    def offline(name, **kwargs):
        calls.append(kwargs)
        raise OSError("We couldn't connect to 'https://huggingface.co' to load the files")

    monkeypatch.setattr(transformers.AutoTokenizer, "from_pretrained", offline)
    with pytest.raises(MetricUnavailable, match="bert-base-chinese.*could not be loaded offline"):
        BertScorer().score(["甲"], ["甲"])
    assert calls == [{"local_files_only": True}, {}]  # the hub cache first, then a download


def test_bertscore_layer_defaults_to_the_authors_choice():
    assert BertScorer("bert-base-chinese")._layers() == 8
    assert BertScorer("/models/bert-base-chinese")._layers() == 8
    with pytest.raises(ValueError, match="num_layers"):
        BertScorer("/models/my-encoder")._layers()


def test_overlap_module_does_not_import_torch_for_rouge():
    import subprocess
    import sys

    code = (
        "import sys; from lawluo.metrics.overlap import rouge_l; rouge_l('甲乙', '甲丙'); "
        "print('torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False", overlap.__file__
