"""Checks that a page shows one language: every text a reader sees is in the language of its element.

The page's language is ``<html lang>`` (Gradio sets it; :mod:`lawluo.ui.i18n`). A text in another language
is allowed only inside an element that says so with its own ``lang`` (a Chinese example question on the
English page: ``<span lang="zh-CN">``; a statute's text; an English term on the Chinese page: ``lang="en"``).
So the rule is the one HTML itself states: each visible text node is in the language of its nearest
``lang`` ancestor. Gradio's untranslated words of its own and a few names are allowed everywhere.

    from .i18n_checks import page_texts, wrong_language
    assert wrong_language(page_texts(page, "#ll-consult")) == []
"""

from __future__ import annotations

import re

from lawluo.i18n import catalogue

#: Each visible text node under ``root``: its text, and the ``lang`` of its nearest ancestor with one.
PAGE_TEXTS = r"""(root) => {
  const base = document.querySelector(root) || document.body;
  const out = [];
  const walker = document.createTreeWalker(base, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const text = n.textContent.trim();
    const el = n.parentElement;
    if (!text || !el || el.closest('script,style,textarea,noscript,[aria-hidden=true],.nav-holder')) continue;
    if (!el.getClientRects().length || getComputedStyle(el).visibility === 'hidden') continue;
    const holder = el.closest('[lang]');
    out.push([text, holder ? holder.getAttribute('lang') : '']);
  }
  for (const input of base.querySelectorAll('input[placeholder],textarea[placeholder]')) {
    if (!input.getClientRects().length || input.value) continue;
    const holder = input.closest('[lang]');
    out.push([input.getAttribute('placeholder'), holder ? holder.getAttribute('lang') : '']);
  }
  return out;
}"""

CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
WORD = re.compile(r"[A-Za-z][A-Za-z'-]{2,}")
#: Words a Chinese page may show: names, codes and units, and Gradio's own untranslated words.
NAMES = {
    "LawLuo",
    "ToLC",
    "BM25",
    "MCP",
    "API",
    "JSON",
    "JSONL",
    "CSV",
    "PDF",
    "URL",
    "LLM",
    "GPU",
    "CPU",
    "Gradio",
    "Hugging",
    "Face",
    "OpenAI",
    "Qwen",
    "LoRA",
    "DPO",
    "Markdown",
    "HTML",
    "YAML",
    "Enter",
    "Shift",
    "Ctrl",
    "Parquet",
    "Cohen",
    "Krippendorff",
    "Spearman",
    "Kendall",
    "Pearson",
    "kappa",
    "alpha",
    "tau",
    "rho",
    "Elo",
    "Warning",
    "Error",
    "Info",
    "Success",
    "Chatbot",
    "Runs",  # Gradio's toasts and labels it does not translate
}
#: Marks of a translation that did not happen, and the shape of a catalogue key (``area.name``).
UNTRANSLATED = re.compile(r"__i18n__|translation_metadata")
KEY_LIKE = re.compile(r"\b[a-z]+(?:\.[a-z0-9_]+)+\b")


def page_texts(page, root: str = "body") -> list[tuple[str, str]]:
    """Every visible text under the CSS selector ``root`` with the language its element declares."""
    return [(text, lang) for text, lang in page.evaluate(PAGE_TEXTS, root)]


def language_of(text: str) -> str | None:
    """``"zh"`` for a text with Chinese characters, ``"en"`` for one with English words (not names), else None."""
    if CJK.search(text):
        return "zh"
    words = [w for w in WORD.findall(text) if w not in NAMES]
    return "en" if words else None


def wrong_language(texts: list[tuple[str, str]]) -> list[str]:
    """The texts not in their element's language, or holding both languages' words, or an untranslated key."""
    bad = []
    for text, lang in texts:
        declared = "zh" if lang.lower().startswith("zh") else "en"
        if UNTRANSLATED.search(text) or any(k in catalogue() for k in KEY_LIKE.findall(text)):
            bad.append(f"untranslated: {text!r}")
            continue
        found = language_of(text)
        if found is None:
            continue
        english = [w for w in WORD.findall(text) if w not in NAMES]
        if found == "zh" and english and declared == "zh" and len(english) >= 2:
            bad.append(f"mixed ({lang}): {text!r}")
        elif found != declared:
            bad.append(f"{found} in a {lang or 'no-lang'} element: {text!r}")
    return bad


__all__ = ["language_of", "page_texts", "wrong_language"]
