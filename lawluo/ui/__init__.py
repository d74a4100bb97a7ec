"""The Gradio user interface: one ``build_*`` function per tab, handlers as plain functions.

This package is the only part of :mod:`lawluo` that imports Gradio; :mod:`lawluo.ui.render` (HTML
helpers) does not, so it can be used and tested without it.
"""
