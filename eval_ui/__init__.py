"""Annotation store, assignment, human-consistency statistics and the annotation/statistics tabs.

Empty until roadmap step 6 (pairwise annotation tab for lawyers and human-consistency statistics).
"""
