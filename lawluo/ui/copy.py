"""The app's texts (tab intros, help, the disclaimer), read from the settings' ``ui_copy_dir``.

    copy = UICopy(settings.ui_copy_dir)
    gr.Markdown(copy.text("consult.md"))

A missing file is logged once and shown as nothing: the app still starts, and the log says which
file of which folder to restore.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path

logger = logging.getLogger(__name__)
#: In a text of the app, what follows this line is for researchers and operators: folded under 高级 / Advanced.
ADVANCED = "<!-- advanced -->"
#: The fold's label wherever a page keeps codes, metrics and settings out of a visitor's way.
ADVANCED_LABEL = "高级 / Advanced"


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

    def json(self, name: str):
        raw = self.text(name)
        return json.loads(raw) if raw else None
