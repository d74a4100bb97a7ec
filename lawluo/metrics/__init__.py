"""Metrics of legal hallucination and answer quality: NHSR, text overlap, judge-based scores."""
