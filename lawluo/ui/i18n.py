"""The pages in the visitor's language: Chinese by default, English when the browser asks for it or the
visitor switches (the navbar's "English" / "中文", remembered in the browser).

Two kinds of text, one catalogue (:mod:`lawluo.i18n`, ``lawluo/strings/*.yaml``):

- **fixed texts** — a label, a button, a placeholder, a tab, a page's Markdown — are Gradio's ``gr.I18n``
  keys (:func:`t`): the browser picks the language and switching needs no request;
- **texts built while the app runs** — a status line, a warning, a message of the library
  (:class:`~lawluo.i18n.Message`), a rendered table — are sent in both languages, each in an element of
  its own (:func:`say`, :func:`say_block`); :data:`LANG_CSS` shows the one of the page's language
  (``<html lang>``, which Gradio sets) and hides the other (``display: none``: not read, not read out).
  The server never needs to know the language, and a switch applies to what is already on the page.

Gradio chooses the language from ``navigator.language`` and falls back to English for a language it does
not know (a browser that says only ``zh`` would get English). :data:`LOCALE_HEAD` runs before Gradio's
bundle and settles it by the project's rule: the visitor's choice, else the first of the browser's languages
that is Chinese or English, else Chinese. The switch reloads the page (``?lang=en``): Gradio's own switch
(设置 / Settings → Language) changes the page in place but leaves the labels of tabs not yet opened in the
old language, and forgets the choice on the next visit.
"""

from __future__ import annotations

import functools
import html
import json
from collections.abc import Callable
from typing import Any

import gradio as gr

from ..i18n import EN, LANGUAGES, ZH, Message, catalogue, text

#: Gradio's locale for each language of the catalogue.
LOCALES: dict[str, str] = {ZH: "zh-CN", EN: "en"}


@functools.cache
def translations() -> gr.I18n:
    """Gradio's ``I18n`` for ``launch(i18n=…)``: one dictionary per locale, holding the keys the pages use as
    fixed texts (:func:`t` adds each as it is used). Gradio sends these dictionaries with every page; texts
    built at run time carry their own words (:func:`say`), so the rest of the catalogue stays on the server
    (``/`` would weigh some 100 kB more)."""
    return gr.I18n(**{LOCALES[lang]: {} for lang in LANGUAGES})


def t(key: str) -> Any:
    """A fixed text of the page (a label, a button, a placeholder, a Markdown value) by its key, translated
    in the browser. An unknown key raises ``KeyError`` when the page is built."""
    texts = catalogue()[key]  # fail while building the page, not by showing a key
    table = translations()
    for lang in LANGUAGES:
        table.translations[LOCALES[lang]][key] = texts[lang]
    return table(key)


class Html(str):
    """A field that is already HTML (escaped where it came from the outside): :func:`say` keeps it."""


def _fill(key_or_message: str | Message, lang: str, fields: dict[str, Any]) -> str:
    if isinstance(key_or_message, Message):
        fields = {**key_or_message.fields, **fields}
        key_or_message = key_or_message.key
    filled = {}
    for name, value in fields.items():
        if isinstance(value, Message):
            value = value.text(lang)
        filled[name] = value if isinstance(value, Html) else html.escape(str(value), quote=False)
    return text(key_or_message, lang, **filled)


def both(build: Callable[[str], str]) -> Html:
    """``build(lang)`` (HTML, escaped where it must be) for each language, each in its own ``<span lang>``:
    the page shows its own (for HTML a key alone cannot give, e.g. a tooltip in each language)."""
    return Html(
        "".join(
            f'<span class="ll-lang-{lang}" lang="{LOCALES[lang]}">{build(lang)}</span>' for lang in LANGUAGES
        )
    )


def say(key_or_message: str | Message, **fields: Any) -> Html:
    """An inline text built while the app runs, in both languages, each in its own ``<span lang>``: the page
    shows the one of its language. Fields are escaped unless wrapped in :class:`Html`; a field may be a
    :class:`~lawluo.i18n.Message` (rendered in each language)."""
    return both(lambda lang: _fill(key_or_message, lang, fields))


def say_block(key_or_message: str | Message, **fields: Any) -> Html:
    """A block of Markdown built while the app runs, in both languages: each language's text in a ``<div
    lang>`` with blank lines around it, so that the Markdown inside is still read as Markdown."""
    return Html(
        "\n".join(
            f'<div class="ll-lang-{lang}" lang="{LOCALES[lang]}">\n\n{_fill(key_or_message, lang, fields)}\n\n</div>'
            for lang in LANGUAGES
        )
    )


#: Show the elements of the page's language, hide the other's (:func:`say`). Chinese unless the page is
#: English, as :data:`LOCALE_HEAD` decides.
LANG_CSS = """
html[lang^="en"] .ll-lang-zh, html:not([lang^="en"]) .ll-lang-en { display: none !important; }
"""

#: Where a visitor's choice of language is remembered in the browser (the navbar's switch, ``?lang=en|zh``).
CHOICE_KEY = "lawluo-lang"

#: Before Gradio reads ``navigator.language``: the language the visitor chose (``?lang=en`` or ``?lang=zh`` in
#: the address — the navbar's switch — remembered in ``localStorage``), else the first of the browser's
#: languages that is Chinese or English (``zh-TW`` and a bare ``zh`` too), else Chinese. The switch's click keeps
#: the rest of the address's query (``/annotate?item=…``), only ``lang`` set.
LOCALE_HEAD = (
    "<script>(function(){try{var key=" + json.dumps(CHOICE_KEY) + ",pick=null,"
    "asked=new URLSearchParams(location.search).get('lang');"
    "if(asked==='en'||asked==='zh'){pick=asked;try{localStorage.setItem(key,asked);}catch(e){}}"
    "else{try{var kept=localStorage.getItem(key);if(kept==='en'||kept==='zh'){pick=kept;}}catch(e){}}"
    "if(!pick){var l=(navigator.languages&&navigator.languages.length?navigator.languages:"
    "[navigator.language||'']).map(function(x){return String(x).toLowerCase().slice(0,2);})"
    ".filter(function(x){return x==='zh'||x==='en';})[0];pick=l||'zh';}"
    f"var locale=pick==='en'?{json.dumps(LOCALES[EN])}:{json.dumps(LOCALES[ZH])};"
    "Object.defineProperty(navigator,'language',{get:function(){return locale;},configurable:true});"
    "Object.defineProperty(navigator,'languages',{get:function(){return [locale];},configurable:true});"
    # the navbar's switch keeps the rest of the address (an annotator's ?item=…)
    "document.addEventListener('click',function(e){var a=e.target&&e.target.closest&&"
    "e.target.closest('a.ll-switch');if(!a){return;}var u=new URL(location.href);"
    "u.searchParams.set('lang',a.getAttribute('hreflang')==='en'?'en':'zh');"
    "e.preventDefault();location.assign(u.toString());});"
    "}catch(e){}})();</script>"
)

__all__ = [
    "CHOICE_KEY",
    "LANG_CSS",
    "LOCALES",
    "LOCALE_HEAD",
    "Html",
    "both",
    "say",
    "say_block",
    "t",
    "translations",
]
