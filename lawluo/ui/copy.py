"""The app's texts (tab intros, help, the disclaimer), read from the settings' ``ui_copy_dir``.

    copy = UICopy(settings.ui_copy_dir)
    shown, folded = copy.markdown("about.md")      # each: Markdown in both languages ("" when empty)
    gr.Markdown(shown)

A text holds each language's version after a line of its own, ``<!-- lang: zh -->`` and ``<!-- lang: en -->``
(Chinese first, the language of the page by default); :meth:`UICopy.markdown` puts each in a ``<div lang>``
that the page shows in its language only (:mod:`lawluo.ui.i18n`). A file without these lines is one text,
shown as it is in both languages.

A missing file is logged once and shown as nothing: the app still starts, and the log says which
file of which folder to restore.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..i18n import LANGUAGES
from .i18n import LOCALES, Html, t

logger = logging.getLogger(__name__)
#: In a text of the app, what follows this line is for researchers and operators: folded under 高级 / Advanced.
ADVANCED = "<!-- advanced -->"
#: The key of the fold's label wherever a page keeps codes, metrics and settings out of a visitor's way.
ADVANCED_KEY = "app.advanced"
#: The fold's label (a ``gr.I18n`` key: a gr.Accordion's label); in HTML built at run time, ``say(ADVANCED_KEY)``.
ADVANCED_LABEL = t(ADVANCED_KEY)
#: The line that starts a language's version of a text: ``<!-- lang: zh -->``.
LANG_LINE = re.compile(r"^<!--\s*lang:\s*(\w+)\s*-->\s*$", re.MULTILINE)


def languages(text: str) -> dict[str, str]:
    """Each language's version of ``text`` (``{"zh": …, "en": …}``), by its ``<!-- lang: xx -->`` lines; a
    text without them is every language's. A language the text lacks gets the first one given.

    >>> languages("<!-- lang: zh -->\\n中文\\n<!-- lang: en -->\\nEnglish\\n")
    {'zh': '中文', 'en': 'English'}
    """
    parts = LANG_LINE.split(text)
    if len(parts) < 3:
        return {lang: text.strip() for lang in LANGUAGES}
    found = {parts[i].lower(): parts[i + 1].strip() for i in range(1, len(parts) - 1, 2)}
    first = next(iter(found.values()))
    return {lang: found.get(lang, first) for lang in LANGUAGES}


def both_markdown(texts: dict[str, str]) -> str:
    """Markdown that shows ``texts[lang]`` on a page in ``lang``: each language in its ``<div lang>`` (blank
    lines around it, so that what is inside is still read as Markdown); ``""`` when every text is empty."""
    if not any(texts.get(lang, "").strip() for lang in LANGUAGES):
        return ""
    return Html(
        "\n".join(
            f'<div class="ll-lang-{lang}" lang="{LOCALES[lang]}">\n\n{texts.get(lang, "").strip()}\n\n</div>'
            for lang in LANGUAGES
        )
    )


@dataclass(frozen=True)
class UICopy:
    folder: Path
    _missing: set[str] = field(default_factory=set, repr=False, compare=False)

    def text(self, name: str) -> str:
        path = Path(self.folder) / name
        try:
            return path.read_text(encoding="utf-8")
        except OSError as exc:
            if name not in self._missing:
                self._missing.add(name)
                logger.warning(
                    "the app's text %s cannot be read (%s); set ui_copy_dir to its folder", path, exc
                )
            return ""

    def split(self, name: str, fold: str = ADVANCED) -> tuple[str, str]:
        """The text before a line ``fold`` and the part after it, each stripped; ``("", "")`` for a missing
        file. By default the fold is :data:`ADVANCED` (what follows is for researchers and operators, shown
        folded under 高级 / Advanced)."""
        shown, _, folded = self.text(name).partition(fold)
        return shown.strip(), folded.strip()

    def markdown(
        self, name: str, fold: str = ADVANCED, fills: Mapping[str, Mapping[str, str]] | None = None
    ) -> tuple[str, str]:
        """The text's part before ``fold`` and the part after it, each as Markdown in both languages
        (:func:`both_markdown`; ``""`` for a part that is empty): each language's version is split at its
        own ``fold`` line. ``fills``: marker line (``<!-- verdict codes -->``) → language → the Markdown the
        app writes there from its own tables (so that a copy file need not repeat them)."""
        texts = languages(self.text(name))
        for marker, by_lang in (fills or {}).items():
            texts = {lang: text.replace(marker, by_lang.get(lang, "")) for lang, text in texts.items()}
        parts = {lang: text.partition(fold) for lang, text in texts.items()}
        return (
            both_markdown({lang: p[0] for lang, p in parts.items()}),
            both_markdown({lang: p[2] for lang, p in parts.items()}),
        )

    def json(self, name: str):
        raw = self.text(name)
        return json.loads(raw) if raw else None
