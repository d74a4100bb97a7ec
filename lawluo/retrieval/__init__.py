"""Statute and case search: BM25 over jieba tokens by default, dense (sentence-transformers + faiss)
when an encoder is configured, fused when both are present."""
