"""HIPO, Hard sample-aware Iterative Preference Optimisation (LegalHalBench §4.3, Algorithm 1, eq. 3):
the parts TRL does not provide.

One round r = 1 … T (``train_hipo.py`` runs them):

1. the previous model π_{r−1} (π_0 = the starting model, e.g. the SFT lawyer) answers every question x:
   y_l ~ π_{r−1}(x) (:func:`generate_answers`);
2. each y_l is judged against the reference answer y_w (:func:`judge_answers`): how many of the
   statutes it cites are hallucinated — lawluo's citation checker over the statute database, the NHSR
   check of :mod:`lawluo.metrics.nhsr` — and how similar it is to y_w (cosine similarity of
   sentence-transformers embeddings, :func:`encoder_similarity`);
3. a question is **dropped** when y_l cites no hallucinated statute **and** is similar to y_w
   (similarity ≥ threshold): the model already answers it well. Every other question is a **hard
   sample** and kept (:func:`keep_as_hard`, :func:`select_hard_samples`);
4. π_r is trained on the hard samples (x, y_w, y_l) with the previous model π_{r−1} as the DPO
   reference, minimising eq. 3 (:func:`hipo_trainer_class`):

       L = −log σ(β[(log π(y_w|x) − log π_ref(y_w|x)) − (log π(y_l|x) − log π_ref(y_l|x))])
           + I(y_l) · (−log π(y_w|x)) / |y_w|

   where I(y_l) = 1 when y_l cites at least one hallucinated statute, else 0, and |y_w| is the number of
   tokens of y_w. Both terms are averaged over the batch.

What TRL provides and what this module adds. TRL 1.16's ``DPOTrainer`` gives the first term (``loss_type
"sigmoid"``), the reference model (a model path or instance; with PEFT, the adapter disabled or a frozen
copy of a pretrained adapter), tokenisation with the chat template, batching, logging and checkpoints.
TRL 1.16 has no ``rpo_alpha`` any more; its ``loss_type "sft"`` adds −mean log π over *all* chosen
tokens of the batch: unweighted (every sample, not only those with I(y_l) = 1) and pooled over the batch's
tokens rather than normalised per answer by |y_w|. So this module adds the second term: the trainer
subclass reads the policy's per-token log-probabilities that TRL's ``_compute_loss`` computes anyway
(through a forward hook, so there is no second forward pass), and adds
``nll_weight · mean_i I_i · NLL_i / |y_w,i|`` (:func:`indicator_nll`). The indicator travels with the
batch as the dataset column ``hallucinated``. Also added here: the hard-sample filter, the judging of
generated answers, batched generation, and the per-round bookkeeping (``round-N`` folders).

Hallucinated statutes are found by the rules of :class:`lawluo.metrics.nhsr.NHSRMetric` only (no LLM
judge in the training loop): a statute is hallucinated when the checker's verdict is one the verdict
table (:mod:`lawluo.law.verdicts`) calls hallucinated — not ``verified``, ``amended_since`` (right when
written) or ``no_content`` (name and number real, nothing quoted to check), i.e. ``wrong_number``,
``content_mismatch``, ``not_found``, ``repealed`` or ``outdated_version``. An answer that cites nothing
counts as not hallucinated.

Reference: Y. Hu, L. Gan, W. Xiao, K. Kuang, F. Wu, "Fine-tuning Large Language Models for Improving
Factuality in Legal Question Answering" (LegalHalBench, HIPO), arXiv:2501.06521, §4.3; TRL ``DPOTrainer``.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from lawluo.law import verdicts

#: The dataset column (and batch key) holding I(y_l).
INDICATOR = "hallucinated"
#: Written into ``round-N/`` last, when the round's model is saved: its presence marks the round done.
ROUND_DONE = "round.json"
GENERATIONS = "generations.jsonl"
NOT_HALLUCINATED = verdicts.NOT_HALLUCINATED


# -- the hard-sample filter (Algorithm 1) ----------------------------------------------------------------
def keep_as_hard(hallucinated: int, similarity: float, threshold: float) -> bool:
    """Whether (x, y_w, y_l) is a hard sample: keep it unless y_l cites no hallucinated statute **and** its
    similarity to y_w reaches ``threshold`` (LegalHalBench Algorithm 1).

    >>> [keep_as_hard(h, s, 0.8) for h, s in [(0, 0.9), (0, 0.8), (0, 0.5), (2, 0.9), (1, 0.1)]]
    [False, False, True, True, True]
    """
    return hallucinated > 0 or similarity < threshold


def select_hard_samples(
    hallucinated: Sequence[int], similarity: Sequence[float], threshold: float
) -> list[bool]:
    """:func:`keep_as_hard` for each sample: ``hallucinated[i]`` statutes of y_l are hallucinated,
    ``similarity[i]`` is sim(y_l, y_w).

    >>> select_hard_samples([0, 0, 1, 3], [0.95, 0.20, 0.95, 0.20], threshold=0.8)
    [False, True, True, True]
    """
    if len(hallucinated) != len(similarity):
        raise ValueError(f"{len(hallucinated)} hallucination counts but {len(similarity)} similarities")
    return [keep_as_hard(h, s, threshold) for h, s in zip(hallucinated, similarity, strict=True)]


def count_hallucinated(citations: Sequence[dict]) -> int:
    """Citations (``Checked.as_dict()``) whose verdict is hallucinated (not ``verified``, ``amended_since``
    or ``no_content``: :data:`lawluo.law.verdicts.NOT_HALLUCINATED`).

    >>> count_hallucinated([{"verdict": "verified"}, {"verdict": "not_found"}, {"verdict": "no_content"},
    ...                     {"verdict": "repealed"}])
    2
    """
    return sum(c["verdict"] not in NOT_HALLUCINATED for c in citations)


def round_summary(records: Sequence[dict], threshold: float) -> dict:
    """The per-round line: answers generated, with a hallucinated statute, similar to y_w, kept, dropped,
    and the NHSR of the round's generations (pooled over their statutes, and averaged per answer).

    ``records`` are :func:`judge_answers` rows (``hallucinated``, ``similarity``, ``keep``, ``citations``).

    >>> rows = [
    ...     {"hallucinated": 0, "similarity": 0.9, "keep": False, "citations": [{"verdict": "verified"}]},
    ...     {"hallucinated": 1, "similarity": 0.9, "keep": True,
    ...      "citations": [{"verdict": "verified"}, {"verdict": "not_found"}]},
    ...     {"hallucinated": 0, "similarity": 0.1, "keep": True, "citations": []},
    ... ]
    >>> s = round_summary(rows, 0.8)
    >>> s["generated"], s["hallucinated"], s["similar"], s["kept"], s["dropped"], round(s["nhsr"], 3)
    (3, 1, 2, 2, 1, 0.667)
    """
    from lawluo.metrics.nhsr import AnswerStatutes, summarise_nhsr

    nhsr = summarise_nhsr([AnswerStatutes(r["citations"]) for r in records])
    kept = sum(bool(r["keep"]) for r in records)
    return {
        "generated": len(records),
        "hallucinated": sum(r["hallucinated"] > 0 for r in records),
        "similar": sum(r["similarity"] >= threshold for r in records),
        "kept": kept,
        "dropped": len(records) - kept,
        "nhsr": nhsr["nhsr"],
        "nhsr_macro": nhsr["nhsr_macro"],
        "statutes": nhsr["statutes"],
        "hallucinated_statutes": sum(r["hallucinated"] for r in records),
    }


# -- judging the generated answers ----------------------------------------------------------------------
def judge_answers(
    metric: Any,
    similarity: Callable[[list[str], list[str]], list[float]],
    generated: Sequence[str],
    chosen: Sequence[str],
    threshold: float,
    progress: bool = True,
) -> list[dict]:
    """Check each generated answer's statutes (``metric``: a :class:`~lawluo.metrics.nhsr.NHSRMetric`, rules
    only) and its similarity to the chosen answer; one row per answer with ``keep`` decided by
    :func:`keep_as_hard`."""
    from tqdm.auto import tqdm

    sims = similarity(list(generated), list(chosen))
    rows = []
    for answer, sim in tqdm(
        list(zip(generated, sims, strict=True)), desc="Checking statutes", disable=not progress
    ):
        citations = metric.check_rules(answer).citations
        hallucinated = count_hallucinated(citations)
        rows.append(
            {
                "hallucinated": hallucinated,
                "similarity": float(sim),
                "keep": keep_as_hard(hallucinated, float(sim), threshold),
                "citations": [{k: c[k] for k in ("law", "article_label", "verdict")} for c in citations],
            }
        )
    return rows


def encoder_similarity(model_id: str, device: str | None = None, batch_size: int = 32):
    """A function (texts_a, texts_b) → cosine similarity of each pair, from a sentence-transformers encoder
    (a hub id or a directory written by ``SentenceTransformer.save``)."""
    from sentence_transformers import SentenceTransformer

    encoder = SentenceTransformer(model_id, device=device)

    def similarity(a: list[str], b: list[str]) -> list[float]:
        if len(a) != len(b):
            raise ValueError(f"{len(a)} texts against {len(b)}")
        if not a:
            return []
        kwargs = {"batch_size": batch_size, "convert_to_tensor": True, "normalize_embeddings": True}
        ea, eb = encoder.encode(a, **kwargs), encoder.encode(b, **kwargs)
        return [float(x) for x in (ea * eb).sum(dim=-1).cpu()]

    return similarity


# -- generation -------------------------------------------------------------------------------------------
def generate_answers(
    model: Any,
    tokenizer: Any,
    conversations: Sequence[list[dict]],
    *,
    batch_size: int = 8,
    max_new_tokens: int = 512,
    temperature: float = 0.0,
    top_p: float | None = None,
    seed: int = 0,
    progress: bool = True,
) -> list[str]:
    """The model's answer to each conversation (chat messages ending with the client's question), prompted
    with the tokenizer's chat template, in batches (left padding); ``temperature=0`` decodes greedily."""
    import torch
    from tqdm.auto import tqdm

    side = tokenizer.padding_side
    tokenizer.padding_side = "left"
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    kwargs: dict[str, Any] = {"max_new_tokens": max_new_tokens, "pad_token_id": pad_id}
    if temperature > 0:
        kwargs.update(do_sample=True, temperature=temperature)
        if top_p is not None:
            kwargs["top_p"] = top_p
    else:
        kwargs["do_sample"] = False
    was_training = model.training
    model.eval()
    torch.manual_seed(seed)
    answers: list[str] = []
    device = next(model.parameters()).device
    try:
        for start in tqdm(
            range(0, len(conversations), batch_size), desc="Generating answers", disable=not progress
        ):
            batch = conversations[start : start + batch_size]
            texts = [
                tokenizer.apply_chat_template(m, tokenize=False, add_generation_prompt=True) for m in batch
            ]
            enc = tokenizer(texts, return_tensors="pt", padding=True, add_special_tokens=False).to(device)
            with torch.inference_mode():
                out = model.generate(**enc, **kwargs)
            new = out[:, enc["input_ids"].shape[1] :]
            answers += [t.strip() for t in tokenizer.batch_decode(new, skip_special_tokens=True)]
    finally:
        tokenizer.padding_side = side
        model.train(was_training)
    return answers


def server_answers(
    conversations: Sequence[list[dict]],
    *,
    base_url: str,
    model: str,
    api_key_env: str = "OPENAI_API_KEY",
    concurrency: int = 8,
    max_new_tokens: int = 512,
    temperature: float = 0.0,
    top_p: float | None = None,
    progress: bool = True,
) -> list[str]:
    """The answers of ``model`` served at ``base_url`` (an OpenAI-compatible server ending in ``/v1``: a
    vLLM server, several behind one URL) to each conversation, ``concurrency`` requests at a time, through
    lawluo's OpenAI backend (its retries, timeouts and streaming). A failed request stops the round
    (:class:`lawluo.llm.LLMError`): a missing answer would be judged as a bad one."""
    from concurrent.futures import ThreadPoolExecutor

    from tqdm.auto import tqdm

    from lawluo.llm.openai_backend import OpenAIBackend
    from lawluo.llm.options import OpenAIOptions

    options = OpenAIOptions(
        model=model,
        base_url=base_url,
        api_key_env=api_key_env,
        api_key_required=False,
        temperature=temperature,
        top_p=top_p,
        max_tokens=max_new_tokens,
        concurrency=concurrency,
        system_message="keep",
        response_format="none",
    )
    backend = OpenAIBackend(options, role="hipo")
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        answers = list(
            tqdm(
                pool.map(backend.chat, conversations),
                total=len(conversations),
                desc=f"Generating answers ({model} at {base_url})",
                disable=not progress,
            )
        )
    return [str(a).strip() for a in answers]


def load_server_adapter(base_url: str, name: str, path: str | Path, timeout: float = 300.0) -> None:
    """Ask a vLLM server to load the LoRA adapter in ``path`` under the model name ``name``
    (``POST <base_url>/load_lora_adapter``; vLLM, "LoRA Adapters: dynamically serving LoRA adapters").

    The server must run with ``--enable-lora`` (and a ``--max-lora-rank`` ≥ the adapter's r) and the
    environment variable ``VLLM_ALLOW_RUNTIME_LORA_UPDATING=True``, and see ``path`` (same file system).
    An adapter already loaded under ``name`` (a resumed run) is kept. SystemExit with what to do when
    the server refuses."""
    import urllib.error
    import urllib.request

    body = json.dumps({"lora_name": name, "lora_path": str(Path(path).resolve())}).encode()
    request = urllib.request.Request(
        base_url.rstrip("/") + "/load_lora_adapter",
        data=body,
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout):
            return
    except urllib.error.HTTPError as exc:
        detail = exc.read().decode("utf-8", "replace")[:300]
        if exc.code == 400 and "already" in detail.lower():
            return
        status = f"HTTP {exc.code}: {detail}"
    except (urllib.error.URLError, OSError) as exc:
        status = str(exc)
    raise SystemExit(
        f"the generation server at {base_url} did not load the adapter {path} as {name!r} ({status}). "
        "Rounds after the first sample from the previous round's adapter: start vLLM with --enable-lora "
        "--max-lora-rank <r> and VLLM_ALLOW_RUNTIME_LORA_UPDATING=True, on a machine that sees the output "
        "folder; or generate locally (no --generation_base_url). / 生成服务器未能加载上一轮的 LoRA 适配器："
        "请以 --enable-lora 与 VLLM_ALLOW_RUNTIME_LORA_UPDATING=True 启动 vLLM，或去掉 --generation_base_url 在本地生成。"
    )


# -- eq. 3's second term ----------------------------------------------------------------------------------
def indicator_nll(per_token_logps: Any, mask: Any, indicator: Any) -> tuple[Any, Any]:
    """I(y_l) · (−log π(y_w|x)) / |y_w| averaged over the batch, and the per-answer NLL / |y_w|.

    ``per_token_logps`` (batch, length): log π of each token of y_w (anything where ``mask`` is 0);
    ``mask`` (batch, length): 1 on the tokens of y_w; ``indicator`` (batch,): I(y_l) ∈ {0, 1}.

    >>> import torch
    >>> logps = torch.tensor([[-1.0, -3.0, 0.0], [-2.0, -2.0, -2.0]])
    >>> mask = torch.tensor([[1, 1, 0], [1, 1, 1]])
    >>> term, nll = indicator_nll(logps, mask, torch.tensor([1.0, 0.0]))
    >>> nll.tolist(), term.item()
    ([2.0, 2.0], 1.0)
    """
    mask = mask.to(per_token_logps.dtype)
    nll = -(per_token_logps * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1.0)
    return (indicator.to(nll.dtype) * nll).mean(), nll


@dataclass
class IndicatorCollator:
    """TRL's preference collator plus the ``hallucinated`` column as a float tensor."""

    base: Callable[[list[dict]], dict]

    def __call__(self, examples: list[dict]) -> dict:
        import torch

        batch = self.base(examples)
        batch[INDICATOR] = torch.tensor([float(e[INDICATOR]) for e in examples])
        return batch


@lru_cache(maxsize=1)
def hipo_trainer_class() -> type:
    """``HIPOTrainer``: TRL's ``DPOTrainer`` whose loss is eq. 3 (built on first use: importing TRL is slow).

    ``HIPOTrainer(..., nll_weight=1.0)``; the training dataset needs, besides ``prompt``/``chosen``/
    ``rejected``, the column ``hallucinated`` (I(y_l), 0 or 1). Logs ``hipo/nll_chosen`` (mean NLL / |y_w|),
    ``hipo/nll_term`` (the added term) and ``hipo/hallucinated`` (share of the batch with I = 1).
    """
    from trl import DPOTrainer

    class HIPOTrainer(DPOTrainer):
        _tag_names = ["trl", "dpo", "hipo"]

        def __init__(self, *args: Any, nll_weight: float = 1.0, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.nll_weight = nll_weight
            self.data_collator = IndicatorCollator(self.data_collator)

        def _set_signature_columns_if_needed(self) -> None:
            super()._set_signature_columns_if_needed()
            if INDICATOR not in self._signature_columns:
                self._signature_columns = [*self._signature_columns, INDICATOR]

        def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
            inputs = dict(inputs)
            indicator = inputs.pop(INDICATOR)
            # TRL's _compute_loss runs the policy first (then the reference, which with PEFT is the same
            # module with the adapter switched): the first output seen is the policy's.
            seen: list[Any] = []
            handle = model.register_forward_hook(lambda _m, _a, out: seen.append(out) if not seen else None)
            try:
                result = super().compute_loss(model, inputs, return_outputs, num_items_in_batch)
            finally:
                handle.remove()
            dpo_loss = result[0] if return_outputs else result
            shift_mask = inputs["completion_mask"][:, 1:]
            per_token = seen[0].log_probs[:, -shift_mask.size(1) :]
            chosen_logps = per_token.chunk(2, dim=0)[0]
            chosen_mask = shift_mask.chunk(2, dim=0)[0]
            term, nll = indicator_nll(chosen_logps, chosen_mask, indicator.to(chosen_logps.device))
            loss = dpo_loss + self.nll_weight * term
            mode = "train" if self.model.training else "eval"
            gather = self.accelerator.gather_for_metrics
            self._metrics[mode]["hipo/nll_chosen"].append(gather(nll.detach()).mean().item())
            self._metrics[mode]["hipo/nll_term"].append(gather(term.detach()[None]).mean().item())
            self._metrics[mode]["hipo/hallucinated"].append(
                gather(indicator.to(nll.device).float()).mean().item()
            )
            return (loss, result[1]) if return_outputs else loss

    return HIPOTrainer


# -- rounds on disk ---------------------------------------------------------------------------------------
def round_dir(output_dir: str | Path, r: int) -> Path:
    return Path(output_dir) / f"round-{r}"


def completed_rounds(output_dir: str | Path) -> int:
    """How many rounds 1, 2, … in a row have finished (their ``round-N/round.json`` exists)."""
    r = 0
    while (round_dir(output_dir, r + 1) / ROUND_DONE).exists():
        r += 1
    return r


def read_round(output_dir: str | Path, r: int) -> dict:
    return json.loads((round_dir(output_dir, r) / ROUND_DONE).read_text(encoding="utf-8"))


def write_round(output_dir: str | Path, r: int, info: dict) -> Path:
    """Mark round ``r`` finished (call after its model is saved)."""
    path = round_dir(output_dir, r) / ROUND_DONE
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(info, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path


def write_jsonl(path: Path, rows: Sequence[dict]) -> None:
    tmp = path.with_suffix(".tmp")
    with tmp.open("w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    tmp.replace(path)


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def remove_checkpoints(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path)
