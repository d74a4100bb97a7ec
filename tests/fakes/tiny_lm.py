"""A tiny random chat model, built inside a test, for code that loads and runs Hugging Face models.

:func:`save_tiny_lm` trains a byte-level BPE tokenizer on a few Chinese and English sentences, gives
it ChatML special tokens and a ChatML ``chat_template`` (the format of Qwen's instruct models), and
saves it next to a randomly initialised two-layer Qwen2 causal LM. :func:`save_tiny_lora_adapter`
saves a LoRA adapter for that model whose weights are random too (``init_lora_weights=False``), so
loading it really changes what the model generates. :func:`save_tiny_gguf` writes a tiny llama as a
GGUF file (Gemma's turn tokens, no chat template) whose greedy answer is one chosen token. Everything
is seeded: the same call writes the same files. Both take well under a second on a laptop CPU.

Usage (``tmp_path_factory`` is pytest's)::

    base = save_tiny_lm(tmp_path_factory.mktemp("tiny") / "lm")
    adapter = save_tiny_lora_adapter(base, tmp_path_factory.mktemp("tiny") / "lora")
    TransformersOptions(model=str(base), adapter=str(adapter), temperature=0)

Reference: the tiny random checkpoints of the transformers test suite (``hf-internal-testing``),
built here instead of downloaded because tests have no network.
"""

from __future__ import annotations

from pathlib import Path

CHATML_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)

# A template in the style of Gemma's, which refuses a system message outright.
NO_SYSTEM_TEMPLATE = (
    "{% for message in messages %}"
    "{% if message['role'] == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)

SPECIAL_TOKENS = ("<|endoftext|>", "<|im_start|>", "<|im_end|>")

SENTENCES = (
    "劳动者与用人单位订立劳动合同，应当遵循合法、公平、平等自愿、协商一致、诚实信用的原则。",
    "用人单位违反本法规定解除或者终止劳动合同的，应当依照本法第八十七条规定支付赔偿金。",
    "当事人对自己提出的主张，有责任提供证据。",
    "民事主体从事民事活动，应当遵循诚信原则，秉持诚实，恪守承诺。",
    "我的房东不退押金，我该怎么办？",
    "Employers must pay wages in full and on time.",
    "The tenant asked the landlord to return the deposit.",
    "A contract concluded in accordance with the law is legally binding.",
    "What should I do if my employer refuses to pay overtime?",
)


def build_tiny_tokenizer(
    chat_template: str | None = CHATML_TEMPLATE, special_tokens: tuple[str, ...] = SPECIAL_TOKENS
):
    """A ``PreTrainedTokenizerFast`` (byte-level BPE, vocabulary of a few hundred) with ChatML tokens.

    ``chat_template=None`` builds one without a chat template, like a base (non-instruct) model's;
    ``special_tokens`` replaces the ChatML tokens (the first is the padding token, the second the
    beginning of a turn, the third its end and the end-of-sequence token).
    """
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    raw = Tokenizer(models.BPE())
    raw.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    raw.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400,
        special_tokens=list(special_tokens),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    raw.train_from_iterator(SENTENCES, trainer=trainer)
    pad, start, end = special_tokens
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=raw,
        eos_token=end,
        pad_token=pad,
        additional_special_tokens=[start],
        model_max_length=512,
    )
    if chat_template is not None:
        tokenizer.chat_template = chat_template
    return tokenizer


def tiny_qwen2_config(tokenizer, **overrides):
    """A 2-layer Qwen2 config (hidden size 32) sized to ``tokenizer``, for causal LMs and reward models."""
    from transformers import Qwen2Config

    return Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=512,
        pad_token_id=tokenizer.pad_token_id,
        # Wider than the default 0.02, so that greedy decoding wanders over the vocabulary instead of
        # repeating one token (tests can see an adapter or a seed change the text), and random rewards
        # spread well away from 0.
        initializer_range=0.3,
        **overrides,
    )


def save_tiny_lm(path: str | Path, *, chat_template: str | None = CHATML_TEMPLATE, seed: int = 0) -> Path:
    """Save a tokenizer and a random 2-layer Qwen2 causal LM (hidden size 32) to ``path``; return it."""
    import torch
    from transformers import Qwen2ForCausalLM

    path = Path(path)
    tokenizer = build_tiny_tokenizer(chat_template)
    config = tiny_qwen2_config(
        tokenizer,
        bos_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        tie_word_embeddings=True,
    )
    torch.manual_seed(seed)
    model = Qwen2ForCausalLM(config).eval()
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def save_tiny_lora_adapter(base_path: str | Path, path: str | Path, *, seed: int = 1) -> Path:
    """Save a LoRA adapter (r=4 on q_proj and v_proj, random non-zero weights) for ``base_path``."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    path = Path(path)
    base = AutoModelForCausalLM.from_pretrained(base_path)
    config = LoraConfig(
        r=4,
        lora_alpha=16,
        target_modules=["q_proj", "v_proj"],
        init_lora_weights=False,
        task_type="CAUSAL_LM",
    )
    torch.manual_seed(seed)
    get_peft_model(base, config).save_pretrained(path)
    return path


def tiny_bert_tokenizer(texts: list[str], *, max_length: int = 64):
    """A character-level WordLevel tokenizer trained on ``texts`` (BERT's normaliser, [CLS] … [SEP]),
    as a ``PreTrainedTokenizerFast`` for :func:`save_tiny_bert`."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    raw = Tokenizer(models.WordLevel(unk_token="[UNK]"))
    raw.normalizer = normalizers.BertNormalizer(handle_chinese_chars=True, lowercase=True)
    raw.pre_tokenizer = pre_tokenizers.Whitespace()
    raw.train_from_iterator(
        texts, trainers.WordLevelTrainer(special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]"])
    )
    raw.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[(t, raw.token_to_id(t)) for t in ("[CLS]", "[SEP]")]
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=raw, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]", sep_token="[SEP]",
        model_max_length=max_length,
    )  # fmt: skip


def save_tiny_bert(path: str | Path, tokenizer, *, max_positions: int = 64, seed: int = 0) -> Path:
    """A random 2-layer BERT (hidden 32) over ``tokenizer``, saved with it (encoders, rerankers, BERTScore)."""
    import torch
    from transformers import BertConfig, BertModel

    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=max_positions,
        pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(seed)
    path = Path(path)
    BertModel(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


GEMMA_TURN_TOKENS = ("<|endoftext|>", "<start_of_turn>", "<end_of_turn>")


def save_tiny_gguf(
    path: str | Path,
    *,
    emit: str = "<end_of_turn>",
    architecture: str = "llama",
    chat_template: str | None = None,
) -> Path:
    """Write a tiny GGUF file (a 2-layer llama, hidden size 32) whose greedy answer is ``emit`` forever.

    The tokenizer section is the byte-level BPE of :func:`build_tiny_tokenizer` (``tokenizer.ggml.model``
    "gpt2": tokens, types, merges) with Gemma's turn tokens as control tokens and ``<|endoftext|>`` as
    its end-of-sequence token, so ``<end_of_turn>`` ends an answer only if the loader adds it as a stop.
    Every embedding is the same vector and the attention and MLP outputs are zero, so the last hidden
    state is the same at every position, and ``output.weight`` is zero except the row of ``emit`` (a
    single token). ``attn_q`` is stored as Q8_0 and ``attn_v`` as F16, so loading dequantises as it does
    for real files. No ``tokenizer.chat_template`` unless ``chat_template`` is given (like a base model's).

    Reference: the GGUF specification (ggml docs/gguf.md: metadata keys, tensor names ``blk.N.*``) and
    gguf-py's ``GGUFWriter``.
    """
    import json

    import gguf
    import numpy as np

    tokenizer = build_tiny_tokenizer(chat_template=None, special_tokens=GEMMA_TURN_TOKENS)
    raw = json.loads(tokenizer.backend_tokenizer.to_str())
    vocab = raw["model"]["vocab"]
    tokens = [token for token, _ in sorted(vocab.items(), key=lambda item: item[1])]
    merges = [" ".join(m) if isinstance(m, list) else m for m in raw["model"]["merges"]]
    ids = tokenizer.encode(emit, add_special_tokens=False)
    if len(ids) != 1:
        raise ValueError(f"emit {emit!r} is {len(ids)} tokens of the tiny vocabulary, not one")
    vocab_size, hidden, ffn, layers, heads, kv_heads = len(tokens), 32, 64, 2, 4, 2
    head_dim = hidden // heads

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    writer = gguf.GGUFWriter(str(path), architecture)
    writer.add_name("tiny")
    writer.add_block_count(layers)
    writer.add_context_length(512)
    writer.add_embedding_length(hidden)
    writer.add_feed_forward_length(ffn)
    writer.add_head_count(heads)
    writer.add_head_count_kv(kv_heads)
    writer.add_layer_norm_rms_eps(1e-6)
    writer.add_rope_dimension_count(head_dim)
    writer.add_rope_freq_base(10000.0)
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("default")
    writer.add_token_list(tokens)
    control = set(GEMMA_TURN_TOKENS)
    writer.add_token_types(
        [gguf.TokenType.CONTROL if t in control else gguf.TokenType.NORMAL for t in tokens]
    )
    writer.add_token_merges(merges)
    for add in (writer.add_bos_token_id, writer.add_eos_token_id, writer.add_pad_token_id):
        add(vocab["<|endoftext|>"])
    if chat_template is not None:
        writer.add_chat_template(chat_template)

    rng = np.random.default_rng(0)

    def random(*shape: int) -> np.ndarray:
        return (rng.standard_normal(shape) * 0.3).astype(np.float32)

    output = np.zeros((vocab_size, hidden), np.float32)
    output[ids[0]] = 1.0
    writer.add_tensor("token_embd.weight", np.ones((vocab_size, hidden), np.float32))
    writer.add_tensor("output_norm.weight", np.ones(hidden, np.float32))
    writer.add_tensor("output.weight", output)
    q8 = gguf.GGMLQuantizationType.Q8_0
    for i in range(layers):
        block = f"blk.{i}."
        writer.add_tensor(block + "attn_norm.weight", np.ones(hidden, np.float32))
        writer.add_tensor(block + "ffn_norm.weight", np.ones(hidden, np.float32))
        writer.add_tensor(
            block + "attn_q.weight", gguf.quants.quantize(random(hidden, hidden), q8), raw_dtype=q8
        )
        writer.add_tensor(block + "attn_k.weight", random(head_dim * kv_heads, hidden))
        writer.add_tensor(block + "attn_v.weight", random(head_dim * kv_heads, hidden).astype(np.float16))
        writer.add_tensor(block + "attn_output.weight", np.zeros((hidden, hidden), np.float32))
        writer.add_tensor(block + "ffn_gate.weight", random(ffn, hidden))
        writer.add_tensor(block + "ffn_up.weight", random(ffn, hidden))
        writer.add_tensor(block + "ffn_down.weight", np.zeros((hidden, ffn), np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path
