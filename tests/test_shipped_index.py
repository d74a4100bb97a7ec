"""The prebuilt search indexes of ``assets/bm25/`` (lawluo/retrieval/shipped.py, lawluo/build/shipped.py).

- the committed files are those of the committed assets (a stale index fails here, not in front of a
  visitor): same documents' fingerprint, same sha256 of statutes.sqlite and the other sources;
- their scores are bm25s' to the bit;
- a rebuild gives the same bytes (in another process, with another hash seed);
- an index that is not of the documents (another database, garbage, an inconsistent file) is not used,
  and search still works: the index is built in the background and cached.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from lawluo.build.shipped import build_shipped, index_documents, source_hashes
from lawluo.config import Settings
from lawluo.retrieval.bm25 import (
    CACHE_FILE,
    BM25Index,
    _Counts,
    fingerprint,
    read_meta,
    write_index_file,
)
from lawluo.retrieval.shipped import NAMES, SHIPPED_DIR

from .conftest import ROOT

CIVIL_CODE = """# 中华人民共和国民法典

# 婚姻家庭编

2020年5月28日 第十三届全国人民代表大会第三次会议通过

<!-- INFO END -->

## 第四章 离婚

第一千零七十九条 夫妻一方要求离婚的，可以由有关组织进行调解或者直接向人民法院提起离婚诉讼。

第一千零八十四条 离婚后，不满两周岁的子女，以由母亲直接抚养为原则。
"""
CRIMINAL_LAW = """# 中华人民共和国刑法

<!-- INFO END -->

## 第二章 危害公共安全罪

第一百三十三条之一 在道路上驾驶机动车，醉酒驾驶机动车的，处拘役，并处罚金。
"""


def test_the_shipped_indexes_are_those_of_the_committed_assets(settings, db):
    documents = index_documents(settings, db)
    assert sorted(documents) == sorted(NAMES)
    for name, (texts, extra, sources) in documents.items():
        meta = read_meta(ROOT / "assets" / SHIPPED_DIR / f"{name}.npz")
        assert meta is not None, name
        stale = f"assets/bm25/{name}.npz is stale: run python -m lawluo build index"
        assert meta["fingerprint"] == fingerprint(texts, extra), stale
        assert meta["sources"] == source_hashes(sources), stale
        assert meta["size"] == len(texts)
    assert "statutes.sqlite" in read_meta(ROOT / "assets" / SHIPPED_DIR / "statutes.npz")["sources"]


def test_scores_are_bm25s_scores_to_the_bit(db, tmp_path):
    import bm25s

    from lawluo.text import tokenize

    corpus = [tokenize(a.text) for a in db.articles[:300]] + [[], ["劳动", "劳动", "合同"]]
    reference = bm25s.BM25()
    reference.index(corpus, show_progress=False)
    ref = reference.scores
    write_index_file(
        tmp_path / "i.npz", _Counts.from_tokens(corpus), {"fingerprint": "x", "size": len(corpus)}
    )
    for index in (BM25Index.from_tokens(corpus), BM25Index.load(tmp_path / "i.npz")[0]):
        m = index.matrix()
        assert len(m.vocab) == len(reference.vocab_dict) - 1  # bm25s adds "" to its vocabulary
        for token, t in m.vocab.items():
            r = reference.vocab_dict[token]
            mine, theirs = slice(m.indptr[t], m.indptr[t + 1]), slice(ref["indptr"][r], ref["indptr"][r + 1])
            assert np.array_equal(m.indices[mine], ref["indices"][theirs]), token
            assert np.array_equal(m.data[mine], ref["data"][theirs]), token
        query = ["劳动", "合同", "劳动", "不在词表"]
        assert np.array_equal(index.scores(query), np.asarray(reference.get_scores(query), dtype=np.float32))


@pytest.fixture(scope="module")
def tiny_settings(tmp_path_factory) -> Settings:
    """Assets with a four-article statute database (no case bank, no material), no shipped index."""
    from lawluo.law.build import build_statute_db

    root = tmp_path_factory.mktemp("tiny")
    for rel, text in (("laws/民法典/婚姻家庭编.md", CIVIL_CODE), ("laws/刑法/刑法.md", CRIMINAL_LAW)):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    settings = Settings(assets_dir=root / "assets", cache_dir=root / "index")
    settings.assets_dir.mkdir()
    build_statute_db(root / "laws", settings.statutes_path)
    return settings


def test_a_rebuild_gives_the_same_bytes(tiny_settings, tmp_path):
    summary = build_shipped(tiny_settings, tmp_path / "a")
    assert list(summary) == ["statutes"] and summary["statutes"]["documents"] == 3
    code = (
        "import sys; from lawluo.config import Settings; from lawluo.build.shipped import build_shipped; "
        "build_shipped(Settings(assets_dir=sys.argv[1], cache_dir=sys.argv[2]), sys.argv[3])"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    args = [str(tiny_settings.assets_dir), str(tmp_path / "cache"), str(tmp_path / "b")]
    subprocess.run([sys.executable, "-c", code, *args], cwd=ROOT, env=env, check=True, timeout=120)
    assert (tmp_path / "a" / "statutes.npz").read_bytes() == (tmp_path / "b" / "statutes.npz").read_bytes()


def _other_documents(path):
    shutil.copyfile(ROOT / "assets" / SHIPPED_DIR / "statutes.npz", path)


def _garbage(path):
    path.write_bytes(b"PK\x03\x04 not an index")


def _inconsistent(path, fp):
    """The right fingerprint, but documents the database does not have."""
    counts = _Counts.from_tokens([["离婚"], ["醉酒"], ["离婚", "抚养"]])
    counts = _Counts(counts.vocab, counts.lengths, counts.df, counts.docs + 7, counts.tf)
    write_index_file(path, counts, {"fingerprint": fp, "size": 3})


@pytest.mark.parametrize("spoil", ["other documents", "garbage", "inconsistent"])
def test_an_index_that_is_not_of_the_documents_is_not_used_and_search_still_works(
    tiny_settings, tmp_path, caplog, spoil
):
    from lawluo.retrieval.statutes import StatuteSearcher

    settings = Settings(assets_dir=tiny_settings.assets_dir, cache_dir=tmp_path / "index")
    shipped = tmp_path / "bm25" / "statutes.npz"
    shipped.parent.mkdir()
    texts, extra, _ = index_documents(settings)["statutes"]
    {
        "other documents": _other_documents,
        "garbage": _garbage,
        "inconsistent": lambda p: _inconsistent(p, fingerprint(texts, extra)),
    }[spoil](shipped)
    before = shipped.read_bytes()
    from lawluo.law.database import StatuteDB

    with caplog.at_level(logging.WARNING, logger="lawluo.retrieval.bm25"):
        searcher = StatuteSearcher(
            StatuteDB(settings.statutes_path),
            settings.cache_dir / "statutes-bm25",
            shipped_dir=shipped.parent,
            background=True,
        )
        hits = searcher.search("离婚 抚养", 2)  # waits for the background build
    assert len(searcher.bm25) == 3 and searcher.bm25.ready
    assert [h.article.number for h in hits] == [1084, 1079]
    why = {
        "other documents": "built from other documents",
        "garbage": "unreadable",
        "inconsistent": "does not",
    }
    assert why[spoil] in caplog.text and "building BM25 index" in caplog.text
    assert shipped.read_bytes() == before  # the shipped file is left alone; the rebuilt index is cached
    cached = settings.cache_dir / "statutes-bm25" / CACHE_FILE
    assert read_meta(cached)["fingerprint"] == fingerprint(texts, extra)


def test_a_matching_shipped_index_is_loaded_without_tokenising(tiny_settings, tmp_path, monkeypatch):
    from lawluo.law.database import StatuteDB
    from lawluo.retrieval import bm25 as bm25_module
    from lawluo.retrieval.statutes import StatuteSearcher

    build_shipped(tiny_settings, tmp_path / "bm25")
    monkeypatch.setattr(bm25_module, "tokenize", lambda text: pytest.fail("tokenised a document"))
    searcher = StatuteSearcher(
        StatuteDB(tiny_settings.statutes_path),
        tmp_path / "index" / "statutes-bm25",
        shipped_dir=tmp_path / "bm25",
    )
    assert len(searcher.bm25) == 3 and not (tmp_path / "index").exists()
