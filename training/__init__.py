"""LawLuo's training scripts and the modules they share (``data``, ``arguments``, ``reporting``, …).

Run a script as a module from the repository root, e.g. ``python -m training.train_hipo --help``;
import its parts as ``from training import data`` or ``from training.train_hipo import main``.
"""
