"""The prebuilt BM25 indexes committed under ``assets/bm25/``: ``python -m lawluo build index``.

Every BM25 index the app loads is shipped, so that a fresh clone serves search from its first query
without tokenising 64,496 articles (about a minute on two cores):

==================  =====================================================  =================================
file                documents                                              sources (sha256 recorded)
==================  =====================================================  =================================
``statutes.npz``    every article, with its law, chapter and questions     statutes.sqlite,
                    (:func:`~lawluo.retrieval.statutes.statute_documents`)  statute_expansions.jsonl.gz
``cases.npz``       the case bank's search text                            cases.jsonl.gz, domains file
``clarifications``  the clarification material's items                     clarifications.jsonl.gz
``statute-votes``   the training questions of the reranker's vote feature  supervision.jsonl.gz
==================  =====================================================  =================================

Each file carries the fingerprint of its documents (:func:`~lawluo.retrieval.bm25.fingerprint`: the
tokeniser version, the statute database's source hash for the statutes, every document's text) and
the sha256 of the asset files above. At start the app computes the fingerprint of the documents it is
about to search and uses a shipped file only when it is the same (so a shipped index is never used
for other data); otherwise it uses the cache, else builds the index in the background and logs why.
The build (:mod:`lawluo.build.shipped`) is deterministic: the same assets give the same
bytes (``tests/test_shipped_index.py``). This module only finds the files: the searchers read it when
they start, so it imports none of them.
"""

from __future__ import annotations

from pathlib import Path

#: The folder under ``assets_dir`` that holds the prebuilt indexes.
SHIPPED_DIR = "bm25"
NAMES = ("statutes", "cases", "clarifications", "statute-votes")


def shipped_path(folder: Path | None, name: str) -> Path | None:
    """The prebuilt index ``name`` in ``folder`` (None when there is no folder)."""
    return None if folder is None else Path(folder) / f"{name}.npz"
