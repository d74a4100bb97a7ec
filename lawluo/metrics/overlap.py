"""Text-overlap metrics of an answer against a reference answer: ROUGE-L, METEOR and BERTScore.

**ROUGE-L** is LawBench's score for task 3-8 (法律咨询, consultation), computed exactly as LawBench's
evaluation code does so that our numbers sit in the same column as its published tables
(Fei et al. 2023, "LawBench: Benchmarking Legal Knowledge of Large Language Models"). Upstream,
repository open-compass/LawBench:

* ``evaluation/main.py`` (commit 030fc4869b3f582cd15364dca31b437faeb53895) maps ``lawbench_FLZX`` to
  ``flzx.compute_flzx`` and passes the predictions as stored, with no cleanup. (An earlier commit,
  fdc09d730b5391a19958604312b543eb3d0099ff, mapped FLZX to the reading-comprehension F1 by mistake.)
* ``evaluation/evaluation_functions/flzx.py`` (commit 034cd62db7c25e7dd31c62d35a51898ff522b052) takes
  ``prediction`` and ``refr`` as they are (the reference keeps its ``回答:`` prefix), calls
  ``compute_rouge(predictions, references)`` and averages ``score["rouge-l"]["f"]`` over the items.
* ``evaluation/utils/function_utils.py`` (commit 41c736807728eb1bb938949fb3f44d0085aaf764),
  ``compute_rouge``: each hypothesis becomes ``' '.join(jieba.cut(h))``; a hypothesis whose joined
  text is blank after ``strip()`` is replaced by the literal ``"无内容"`` (after segmentation, so it is
  one token); references are segmented the same way; then ``rouge_chinese.Rouge().get_scores(hyps,
  refs)``.

What ``rouge_chinese`` 1.0.3 does with those strings (``rouge.py`` ``Rouge._get_scores`` and
``rouge_score.py`` ``rouge_l_summary_level``): it cuts each text into sentences with ``cut_sent``
(a newline after 。！？? not followed by a closing quote, after ``......`` and ``……``), keeps the
non-empty pieces, collapses each piece's whitespace (``" ".join(piece.split())``), and splits the
pieces on single spaces. Despite the function's name, ROUGE-L is *not* the summary-level union LCS of
Lin (2004, §3.2): ``_union_lcs`` is never called; the score is the plain LCS of the two concatenated
token lists, ``R = LCS/m``, ``P = LCS/n``, ``F = 2PR/(P + R + 1e-8)``. Sentence cutting matters only
through one quirk we keep: a piece that is only whitespace (jieba emits ``"\\n"`` as a token, so
``"。 \\n 可以"`` cuts into ``"。"``, ``" "``, ``" 可以"``) becomes an empty-string token, which counts
in ``m`` and ``n`` and can match. The LCS table is an iterative dictionary (no recursion, so no
recursion limit) and LawBench truncates nothing. ``get_scores`` also computes ROUGE-1 and ROUGE-2,
which LawBench discards; they raise ``ValueError`` on an empty reference, and so do we.

``rouge_chinese``'s pure-Python O(nm) table takes ~15 ms per answer here (~50 s for the 3,500
answers of the dev set), so :func:`rouge_l` runs the same tokenisation and computes the LCS with
``rapidfuzz.distance.LCSseq`` over integer token ids, with the same float arithmetic: the results
are bit-identical to :func:`rouge_l_reference` on all 3,500 dev answers (checked once; the tests
check 100+ of them), in ~4 s instead of ~50 s (``benchmarks/overlap_speed.py``). jieba is the
project's quiet loader of plain jieba (``lawluo.text``: default dictionary, no user
dictionary; ``jieba.cut`` is precise mode with HMM), as LawBench used.

**METEOR** (Banerjee & Lavie 2005; nltk's implementation follows Lavie & Agarwal 2007: alpha 0.9,
beta 3, gamma 0.5) is ``nltk.translate.meteor_score.meteor_score`` on jieba tokens (whitespace tokens
dropped). nltk aligns in three stages: exact, Porter-stem, then WordNet synonyms via
``wordnet.synsets(word)``. WordNet is an English corpus that has to be downloaded, and has no
Chinese synonyms; we pass a stand-in whose ``synsets`` returns ``[]``, so METEOR runs offline with the
exact and stem stages (stemming leaves Chinese tokens unchanged and only matters for Latin words).
LawBench has no METEOR, so there is no empty-prediction rule: nltk scores an empty answer 0.

**BERTScore** (Zhang et al. 2020, "BERTScore: Evaluating Text Generation with BERT", §3): greedy
cosine matching of contextual token embeddings from one layer; precision averages, over the
candidate's tokens, the best cosine with any reference token, recall the converse, F1 their harmonic
mean. The scoring is the ``bert_score`` package's (0.3.13): ``bert_score.utils.bert_cos_score_idf``,
``sent_encode`` and ``model2layers``, and ``get_idf_dict``'s formula. Its front ends do not survive
transformers 5 as they are (``BERTScorer``/``score`` crash on a blank text, since
``build_inputs_with_special_tokens`` is gone, and on a tokenizer saved without a maximum length;
``get_model`` loads any name containing "t5" as a T5 encoder), so loading, the layer cut and those
cases are done here: lazily, cache first, with a clear :class:`MetricUnavailable` when the model
cannot be loaded offline. As in ``bert_score``: [CLS] and [SEP] weigh 0 (they are not tokens to be
matched, but stay in the similarity matrix, where a token may match them); idf weighting is off by
default and, when on, taken from the references of the call; inputs longer than the model's
positions (512) are truncated; a blank candidate or reference scores 0. The default encoder is the
one BERTScore's authors use for Chinese, ``bert-base-chinese``, at their layer 8.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lawluo.text import _jieba

from .registry import Key, Metric, mean

if TYPE_CHECKING:
    from .registry import Run

#: What LawBench scores in place of a blank prediction (``compute_rouge``).
EMPTY_PREDICTION = "无内容"


class MetricUnavailable(RuntimeError):
    """A metric cannot run here, e.g. its model cannot be loaded offline."""


# --- ROUGE-L (LawBench task 3-8) ----------------------------------------------------------------


def _segment(text: str) -> str:
    """jieba words joined by single spaces: ``' '.join(jieba.cut(text))`` as in ``compute_rouge``."""
    return " ".join(_jieba().cut(text))


def _cut_sent(para: str) -> list[str]:
    """``rouge_chinese.Rouge.cut_sent`` (1.0.3), verbatim."""
    para = re.sub(r"([。！？\?])([^”’])", r"\1\n\2", para)
    para = re.sub(r"(\.{6})([^”’])", r"\1\n\2", para)
    para = re.sub(r"(\…{2})([^”’])", r"\1\n\2", para)
    para = re.sub(r"([。！？\?][”’])([^，。！？\?])", r"\1\n\2", para)
    para = para.rstrip()
    return para.split("\n")


def _rouge_words(segmented: str) -> list[str]:
    """The token list ``rouge_l_summary_level`` runs its LCS over, for one segmented text.

    >>> _rouge_words("可以 。 \\n 不可以")
    ['可以', '。', '', '不可以']
    """
    sentences = [" ".join(s.split()) for s in _cut_sent(segmented) if len(s) > 0]
    return [w for s in sentences for w in s.split(" ")]


def _lcs_f(hyp: list[str], ref: list[str]) -> float:
    """``rouge_l_summary_level``'s F from two token lists (the same float operations)."""
    from rapidfuzz.distance import LCSseq

    if not hyp or not ref:
        raise ValueError("ROUGE-L is undefined for an empty text (rouge_chinese raises too)")
    ids: dict[str, int] = {}  # exact token equality; rapidfuzz would hash strings itself
    llcs = LCSseq.similarity(
        [ids.setdefault(w, len(ids)) for w in ref], [ids.setdefault(w, len(ids)) for w in hyp]
    )
    r_lcs = llcs / len(ref)
    p_lcs = llcs / len(hyp)
    return 2.0 * ((p_lcs * r_lcs) / (p_lcs + r_lcs + 1e-8))


def _hyp_words(prediction: str) -> list[str]:
    segmented = _segment(prediction)
    return _rouge_words(segmented if segmented.strip() != "" else EMPTY_PREDICTION)


def rouge_l(prediction: str, reference: str) -> float:
    """LawBench's ROUGE-L F of one answer (task 3-8; see the module docstring for the upstream code).

    The LCS is over jieba words. Reference 我 / 可以 / 申请 / 劳动 / 仲裁 (m = 5) and prediction
    你 / 可以 / 申请 / 仲裁 (n = 4) share 可以 申请 仲裁 (LCS = 3): R = 3/5, P = 3/4,
    F = 2·0.75·0.6 / (0.75 + 0.6 + 1e-8) = 0.6667. A blank prediction is scored as ``"无内容"``.

    >>> round(rouge_l("你可以申请仲裁", "我可以申请劳动仲裁"), 4)
    0.6667
    """
    return _lcs_f(_hyp_words(prediction), _rouge_words(_segment(reference)))


def rouge_l_many(predictions: Sequence[str], references: Sequence[str]) -> list[float]:
    """:func:`rouge_l` of each (prediction, reference) pair; each distinct reference is segmented once.

    LawBench's task score is the mean of this list (``flzx.compute_flzx``).
    """
    if len(predictions) != len(references):
        raise ValueError(f"{len(predictions)} predictions but {len(references)} references")
    ref_words: dict[str, list[str]] = {}
    out = []
    for prediction, reference in zip(predictions, references, strict=True):
        if reference not in ref_words:
            ref_words[reference] = _rouge_words(_segment(reference))
        out.append(_lcs_f(_hyp_words(prediction), ref_words[reference]))
    return out


def rouge_l_reference(predictions: Sequence[str], references: Sequence[str]) -> list[float]:
    """LawBench's ``compute_rouge`` through ``rouge_chinese`` itself: slow (~15 ms an answer), for checks.

    The same lines as upstream: segment with jieba, replace blank hypotheses by ``"无内容"``, then
    ``Rouge().get_scores(hyps, refs)`` and take ``["rouge-l"]["f"]`` of each item.
    """
    from rouge_chinese import Rouge

    if len(predictions) != len(references):
        raise ValueError(f"{len(predictions)} predictions but {len(references)} references")
    hyps = [_segment(h) for h in predictions]
    hyps = [h if h.strip() != "" else EMPTY_PREDICTION for h in hyps]
    refs = [_segment(r) for r in references]
    return [score["rouge-l"]["f"] for score in Rouge().get_scores(hyps, refs)]


# --- METEOR -------------------------------------------------------------------------------------


class _NoWordNet:
    """Stand-in for ``nltk.corpus.wordnet`` in METEOR's synonym stage: no word has synonyms."""

    def synsets(self, word: str) -> list[Any]:
        return []


class _MemoStemmer:
    """nltk's ``PorterStemmer`` with a memo (same stems; METEOR stems every unmatched token again)."""

    def __init__(self) -> None:
        from nltk.stem.porter import PorterStemmer

        self._porter = PorterStemmer()
        self._memo: dict[str, str] = {}

    def stem(self, token: str) -> str:
        stem = self._memo.get(token)
        if stem is None:
            stem = self._memo[token] = self._porter.stem(token)
        return stem


def _meteor_tokens(text: str) -> list[str]:
    return [w for w in _jieba().cut(text) if w.strip()]


def _meteor(hyp: list[str], ref: list[str], stemmer: _MemoStemmer) -> float:
    from nltk.translate.meteor_score import meteor_score

    return meteor_score([ref], hyp, stemmer=stemmer, wordnet=_NoWordNet())


def meteor(prediction: str, reference: str) -> float:
    """METEOR (Banerjee & Lavie 2005) of one answer on jieba tokens, exact and stem matches only.

    Every token of identical texts aligns in one chunk: P = R = 1, Fmean = 1, and the fragmentation
    penalty is 0.5·(chunks/matches)³, so the 3 tokens 用人单位 / 拖欠工资 / 怎么办 score 1 − 0.5/27:

    >>> round(meteor("用人单位拖欠工资怎么办", "用人单位拖欠工资怎么办"), 4)
    0.9815
    """
    return _meteor(_meteor_tokens(prediction), _meteor_tokens(reference), _MemoStemmer())


def meteor_many(predictions: Sequence[str], references: Sequence[str]) -> list[float]:
    """:func:`meteor` of each (prediction, reference) pair; each distinct reference is segmented once."""
    if len(predictions) != len(references):
        raise ValueError(f"{len(predictions)} predictions but {len(references)} references")
    stemmer = _MemoStemmer()
    ref_tokens: dict[str, list[str]] = {}
    out = []
    for prediction, reference in zip(predictions, references, strict=True):
        if reference not in ref_tokens:
            ref_tokens[reference] = _meteor_tokens(reference)
        out.append(_meteor(_meteor_tokens(prediction), ref_tokens[reference], stemmer))
    return out


# --- BERTScore ----------------------------------------------------------------------------------


def _looks_like_path(model: str) -> bool:
    return model.startswith((".", "~", "/")) or "\\" in model or model.count("/") > 1 or Path(model).exists()


class BertScorer:
    """BERTScore F1 (Zhang et al. 2020) with a configurable encoder, loaded on first use.

    ``model`` is a Hugging Face hub id or a local directory (a saved model and tokenizer).
    ``num_layers`` is the layer whose embeddings are matched; ``None`` takes the layer BERTScore's
    authors chose for that model (``bert_score.utils.model2layers``, looked up by id or by the
    directory's name, so a local copy of ``bert-base-chinese`` also gets 8). ``device`` defaults to
    CUDA when available. ``idf`` weights tokens by inverse document frequency over the references
    of each :meth:`score` call (off by default, as in the paper's main results).
    """

    def __init__(
        self,
        model: str = "bert-base-chinese",
        num_layers: int | None = None,
        batch_size: int = 16,
        device: str | None = None,
        idf: bool = False,
    ) -> None:
        self.model = model
        self.num_layers = num_layers
        self.batch_size = batch_size
        self.device = device
        self.idf = idf
        self._loaded: tuple[Any, Any] | None = None  # (tokenizer, truncated encoder)

    def _layers(self) -> int:
        from bert_score.utils import model2layers

        if self.num_layers is not None:
            return self.num_layers
        for key in (self.model, Path(self.model).name):
            if key in model2layers:
                return model2layers[key]
        raise ValueError(
            f"BERTScore has no recommended layer for {self.model!r}; pass num_layers=… "
            "(e.g. 8 for bert-base-chinese)"
        )

    def _unavailable(self, why: str) -> MetricUnavailable:
        return MetricUnavailable(
            f"BERTScore model {self.model!r} could not be loaded offline ({why}). Download it where the "
            "Hugging Face hub is reachable (e.g. `huggingface-cli download google-bert/bert-base-chinese "
            "--local-dir models/bert-base-chinese`) and pass the directory: "
            "BertScorer(model='models/bert-base-chinese'); any BERT-style encoder directory works with "
            "num_layers=… . Set HF_HUB_OFFLINE=1 to fail at once instead of retrying the hub."
        )

    def _from_pretrained(self) -> tuple[Any, Any]:
        """Tokenizer and encoder from a directory, the hub cache, or (last) a download."""
        from transformers import AutoModel, AutoTokenizer

        is_path = _looks_like_path(self.model)
        name = str(Path(self.model).expanduser()) if is_path else self.model

        def load(**kwargs: Any) -> tuple[Any, Any]:
            return AutoTokenizer.from_pretrained(name, **kwargs), AutoModel.from_pretrained(name, **kwargs)

        try:
            try:
                return load(local_files_only=True)  # no network round trips for a cached hub id
            except OSError:
                if is_path:
                    raise
                return load()
        except (OSError, ValueError) as e:  # hub unreachable or not cached; not a model directory
            raise self._unavailable(f"{type(e).__name__}: {str(e).splitlines()[0]}") from e

    def _load(self) -> tuple[Any, Any]:
        if self._loaded is not None:
            return self._loaded
        import torch

        if _looks_like_path(self.model) and not Path(self.model).expanduser().is_dir():
            raise self._unavailable("no such directory")
        layers = self._layers()
        tokenizer, encoder = self._from_pretrained()
        # Keep the first `layers` blocks, so the encoder's output is that layer's embeddings, as
        # bert_score.utils.get_model does for BERT-style encoders. (get_model itself is not used: it
        # loads any name containing "t5" as a T5 encoder, and offers no cache-only loading.)
        blocks = getattr(getattr(encoder, "encoder", None), "layer", None)
        if not isinstance(blocks, torch.nn.ModuleList):
            raise ValueError(
                f"BertScorer needs a BERT-style encoder (model.encoder.layer); {self.model!r} is not"
            )
        if not 0 <= layers <= len(blocks):
            raise ValueError(f"num_layers={layers} but {self.model!r} has {len(blocks)} layers")
        encoder.encoder.layer = torch.nn.ModuleList(blocks[:layers])
        # The tokenizers backend overflows on transformers' "no limit" sentinel (1e30) that a tokenizer
        # saved without a maximum length carries; the encoder cannot read past its positions anyway.
        positions = getattr(encoder.config, "max_position_embeddings", None)
        if positions and tokenizer.model_max_length > positions:
            tokenizer.model_max_length = positions
        self.device = self.device or ("cuda" if torch.cuda.is_available() else "cpu")
        self._loaded = tokenizer, encoder.eval().to(self.device)
        return self._loaded

    def score(self, predictions: Sequence[str], references: Sequence[str]) -> list[float]:
        """BERTScore F1 of each (prediction, reference) pair, as ``bert_score.BERTScorer.score``."""
        from collections import Counter, defaultdict
        from math import log

        from bert_score.utils import bert_cos_score_idf, sent_encode

        if len(predictions) != len(references):
            raise ValueError(f"{len(predictions)} predictions but {len(references)} references")
        if not predictions:
            return []
        tokenizer, encoder = self._load()
        # bert_score encodes a blank text with tokenizer.build_inputs_with_special_tokens, which
        # transformers 5 removed; its score is F1 = 0 anyway (the only tokens, [CLS] and [SEP], weigh 0,
        # so P and R are 0/0 and F1's NaN is set to 0), so blank pairs are scored 0 here, unencoded.
        scored = [
            i for i, (p, r) in enumerate(zip(predictions, references, strict=True)) if p.strip() and r.strip()
        ]
        out = [0.0] * len(predictions)
        if not scored:
            return out
        refs, preds = [references[i] for i in scored], [predictions[i] for i in scored]
        if self.idf:
            # bert_score.utils.get_idf_dict over all the references (blank ones are documents too, with
            # only [CLS] and [SEP], whose idf is then log(1) = 0): idf = log((N + 1) / (df + 1)).
            n = len(references)
            df = Counter(i for r in refs for i in set(sent_encode(tokenizer, r)))
            idf_dict = defaultdict(lambda: log(n + 1), {i: log((n + 1) / (c + 1)) for i, c in df.items()})
        else:
            idf_dict = defaultdict(lambda: 1.0)
        idf_dict[tokenizer.sep_token_id] = 0
        idf_dict[tokenizer.cls_token_id] = 0
        scores = bert_cos_score_idf(
            encoder, refs, preds, tokenizer, idf_dict, batch_size=self.batch_size, device=self.device
        )
        for i, f1 in zip(scored, scores[:, 2].tolist(), strict=True):
            out[i] = f1
        return out


# --- in lawluo evaluate -------------------------------------------------------------------------


class OverlapRun(Metric):
    """A text-overlap metric in ``lawluo evaluate``: each answer against its question's reference.
    Answers whose reference is blank get ``None`` (LawBench's ROUGE-L would stop on them) and a note
    says how many; a system's figure is the mean over the others."""

    def __init__(self, name: str, score: Callable[[Run, list[str], list[str]], list[float] | None]) -> None:
        self.name = name
        self.score = score  # (run, predictions, references) → scores, or None when it cannot run

    def run(self, run: Run) -> dict[Key, float | None] | None:
        answers, references = run.inputs.answers, run.inputs.references
        scorable = [i for i, a in enumerate(answers) if references[a.id].reference.strip()]
        if len(scorable) < len(answers):
            run.results.notes.append(
                f"{self.name}: {len(answers) - len(scorable)} answer(s) have a blank reference and no {self.name}"
            )
        predictions = [answers[i].text for i in scorable]
        scores = self.score(run, predictions, [references[answers[i].id].reference for i in scorable])
        if scores is None:
            return None
        out: list[float | None] = [None] * len(answers)
        for i, score in zip(scorable, scores, strict=True):
            out[i] = score
        return {(a.id, a.system): s for a, s in zip(answers, out, strict=True)}

    def summarise(self, values: Sequence[float | None]) -> dict:
        return {self.name: mean(values)} if any(v is not None for v in values) else {}


def _bertscore(run: Run, predictions: list[str], references: list[str]) -> list[float] | None:
    try:
        scorer = BertScorer(run.options.bertscore_model, run.options.bertscore_layers)
        return scorer.score(predictions, references)
    except (MetricUnavailable, ValueError) as exc:
        run.results.notes.append(f"skipped bertscore: {exc}")
        return None


ROUGE_L = OverlapRun("rouge_l", lambda run, predictions, references: rouge_l_many(predictions, references))
METEOR = OverlapRun("meteor", lambda run, predictions, references: meteor_many(predictions, references))
BERTSCORE = OverlapRun("bertscore", _bertscore)
