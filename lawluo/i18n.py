"""What a visitor or an annotator reads, in Chinese and in English, kept as keys in data files.

Every text of the app's pages is a *key* of a catalogue, ``lawluo/strings/<area>.yaml``, each key with its
Chinese and its English text side by side (a translator sees both, a missing one is an error)::

    consult.ask:
      zh: 提问
      en: Ask

Texts may hold ``{name}`` fields, filled by :meth:`Message.text` (``str.format``). The library builds
:class:`Message` objects — a key and its fields, no language — wherever it reports to a person; the web
app renders them in the visitor's language (:mod:`lawluo.ui.i18n`), the command line and the logs in
Chinese (``str(message)``), the language of the law the project serves.

A key names its area first (``consult.``, ``statute.``, ``annotate.`` …): each area's texts live in the file
of that name, and a key defined twice, in one file or in two, is refused when the catalogue loads.
"""

from __future__ import annotations

import functools
import string
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

#: The languages of the catalogue: Chinese (the default) and English.
ZH, EN = "zh", "en"
LANGUAGES: tuple[str, ...] = (ZH, EN)
STRINGS_DIR = Path(__file__).parent / "strings"


class CatalogueError(ValueError):
    """A catalogue file that cannot be used: unreadable, a key without both languages, a key twice."""


class _UniqueKeyLoader(yaml.SafeLoader):
    """YAML's safe loader, refusing a key given twice in one mapping (PyYAML keeps the last silently)."""


def _unique_mapping(loader: _UniqueKeyLoader, node: yaml.MappingNode, deep: bool = False) -> dict:
    seen: set = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise CatalogueError(f"{node.start_mark.name}: the key {key!r} is given twice")
        seen.add(key)
    return loader.construct_mapping(node, deep=deep)


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _unique_mapping)


def _fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def load_catalogue(folder: Path = STRINGS_DIR) -> dict[str, dict[str, str]]:
    """Every key of every ``*.yaml`` in ``folder``: ``{key: {"zh": …, "en": …}}``.

    Raises :class:`CatalogueError` for a file that is not a mapping of keys to both languages' texts, a key
    in two files, or two languages whose ``{fields}`` differ (a field the English lacks would be lost)."""
    catalogue: dict[str, dict[str, str]] = {}
    where: dict[str, str] = {}
    for path in sorted(Path(folder).glob("*.yaml")):
        try:
            entries = yaml.load(path.read_text(encoding="utf-8"), Loader=_UniqueKeyLoader) or {}
        except (OSError, yaml.YAMLError) as exc:
            raise CatalogueError(f"{path.name}: {exc}") from None
        if not isinstance(entries, dict):
            raise CatalogueError(f"{path.name}: a mapping of keys to {{zh: …, en: …}} is expected")
        for key, texts in entries.items():
            if key in where:
                raise CatalogueError(f"{path.name}: the key {key!r} is already in {where[key]}")
            if (
                not isinstance(texts, dict)
                or set(texts) != set(LANGUAGES)
                or not all(isinstance(texts[lang], str) and texts[lang].strip() for lang in LANGUAGES)
            ):
                raise CatalogueError(
                    f"{path.name}: {key!r} needs a non-empty zh and en text, and nothing else"
                )
            if _fields(texts[ZH]) != _fields(texts[EN]):
                raise CatalogueError(f"{path.name}: {key!r} has different {{fields}} in zh and en")
            catalogue[key], where[key] = {lang: texts[lang] for lang in LANGUAGES}, path.name
    return catalogue


@functools.cache
def catalogue() -> dict[str, dict[str, str]]:
    """The shipped catalogue (``lawluo/strings/``), loaded once."""
    return load_catalogue()


def text(key: str, lang: str = ZH, **fields: Any) -> str:
    """The text of ``key`` in ``lang`` with its fields filled. An unknown key raises ``KeyError``: a
    missing text is a bug to find in the tests, not a raw key to show a visitor."""
    template = catalogue()[key][lang]
    return template.format(**fields) if fields else template


@dataclass(frozen=True)
class Message:
    """A message of the library for a person: its key and its fields, no language.

    ``str(message)`` is its Chinese text (the command line, the logs); the web app renders it in the
    visitor's language (:func:`lawluo.ui.i18n.say`). A field may itself be a :class:`Message`."""

    key: str
    fields: Mapping[str, Any] = field(default_factory=dict)

    def text(self, lang: str = ZH) -> str:
        filled = {k: v.text(lang) if isinstance(v, Message) else v for k, v in self.fields.items()}
        return text(self.key, lang, **filled)

    def __str__(self) -> str:
        return self.text(ZH)


def message(key: str, **fields: Any) -> Message:
    """``Message(key, fields)``, checked: an unknown key raises ``KeyError`` where the message is made."""
    catalogue()[key]  # noqa: B018 - fail where the message is built, not where it is shown
    return Message(key, fields)


__all__ = [
    "EN",
    "LANGUAGES",
    "ZH",
    "CatalogueError",
    "Message",
    "catalogue",
    "load_catalogue",
    "message",
    "text",
]
