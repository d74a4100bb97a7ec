"""The consultation tab's scripts and styles: files under ``assets/ui/`` (``consult_*.js``, ``consult*.css``),
read once when the module is imported. A script's text is exactly its file's, so the page (and the hash of
any inline script the security headers compute from it) is what the file says."""

from __future__ import annotations

from ...config.settings import PROJECT_ROOT

#: Where the tab's scripts and styles are (beside the app's texts, but code: not chosen by the settings).
ASSETS = PROJECT_ROOT / "assets" / "ui"


def asset(name: str) -> str:
    """The text of ``assets/ui/<name>``, as written (UTF-8)."""
    return (ASSETS / name).read_text(encoding="utf-8")
