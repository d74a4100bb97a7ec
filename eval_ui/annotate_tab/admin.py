"""The annotation tab's admin part: import items, export labels (one format, or every file at once), and
every annotator's progress. Admins only: each handler checks the role again, so the HTTP API refuses the
same people. Each answers a named reply (:class:`AnnotatorsReply`, :class:`ExportReply`)."""

# no `from __future__ import annotations`: Gradio reads the handlers' gr.Request / gr.OAuthProfile hints at runtime

import logging
import time
from pathlib import Path
from typing import Any, NamedTuple

import gradio as gr

from lawluo.i18n import Message, message
from lawluo.jsonl import JSONLError
from lawluo.ui.i18n import Html
from lawluo.ui.render import data, data_lang, esc

from ..items import read_items
from ..scratch import scratch_folder
from ..service import AnnotationService, Identity
from ..store import EXPORT_FORMATS, StoreError
from .identity import identify
from .render import error_field, error_text, say_notice

logger = logging.getLogger(__package__)  # the tab's one logger: eval_ui.annotate_tab

MAX_IMPORT_BYTES = 20_000_000
MAX_IMPORT_ITEMS = 20_000

#: What the export's source choice means (the store's ``source``): its catalogue key.
EXPORT_SOURCES = {
    "raw": "annotate.export_source.raw",
    "adjudicated": "annotate.export_source.adjudicated",
}
#: The export formats as the radio shows them (names, the same in both languages).
FORMAT_NAMES = {"csv": "CSV", "jsonl": "JSONL", "parquet": "Parquet"}


class AnnotatorsReply(NamedTuple):
    """The admin's message (HTML), and every annotator's row (or ``gr.skip()``: the table stays)."""

    message: str
    annotators: Any


class ExportReply(NamedTuple):
    """The admin's message (HTML), and the file(s) to download (None: none)."""

    message: str
    file: Any


def _admin(service: AnnotationService, request: gr.Request | None, profile: Any) -> Identity:
    """The caller when they are an admin; PermissionError otherwise."""
    who = identify(service, request, profile)
    if who is None or not who.is_admin:
        raise PermissionError(str(message("annotate.only_admin")))
    return who


def import_items(
    service: AnnotationService, file: Any, request: gr.Request, profile: gr.OAuthProfile | None = None
) -> AnnotatorsReply:
    """Import comparison items from an uploaded JSONL or CSV file (all or nothing), then assign them."""
    try:
        who = _admin(service, request, profile)
        path = Path(getattr(file, "name", None) or getattr(file, "path", None) or file or "")
        if not file or not path.is_file():
            return AnnotatorsReply(say_notice("annotate.choose_file", "warn"), gr.skip())
        if path.suffix.lower() not in (".jsonl", ".csv"):
            return AnnotatorsReply(
                say_notice("annotate.wrong_file_type", "error", what=data(path.suffix or path.name)),
                gr.skip(),
            )
        size = path.stat().st_size
        if size > MAX_IMPORT_BYTES:
            return AnnotatorsReply(
                say_notice(
                    "annotate.file_too_big",
                    "error",
                    size=f"{size / 1e6:.1f}",
                    limit=f"{MAX_IMPORT_BYTES / 1e6:.0f}",
                ),
                gr.skip(),
            )
        items = read_items(path)
        if len(items) > MAX_IMPORT_ITEMS:
            return AnnotatorsReply(
                say_notice(
                    "annotate.too_many_items", "error", n=f"{len(items):,}", limit=f"{MAX_IMPORT_ITEMS:,}"
                ),
                gr.skip(),
            )
        n = service.store.import_items(items, actor=who.name, source=path.name)
        assigned = service.assign()
        total = service.store.item_count()
        return AnnotatorsReply(
            say_notice("annotate.imported", n=n, assigned=assigned, total=total), annotators_table(service)
        )
    except PermissionError:
        return AnnotatorsReply(say_notice("annotate.only_admin", "error"), gr.skip())
    except (JSONLError, StoreError, ValueError, UnicodeDecodeError) as exc:
        found = error_text(exc)
        if not isinstance(found, Message):
            found = Html(f'<span lang="{data_lang(found)}" style="white-space: pre-wrap">'
                         f"{esc(found[:3000] + (' …' if len(found) > 3000 else ''))}</span>")  # fmt: skip
        return AnnotatorsReply(say_notice("annotate.nothing_imported", "error", why=found), gr.skip())
    except Exception:
        logger.exception("annotation: import failed")
        return AnnotatorsReply(say_notice("annotate.nothing_imported_wrong", "error"), gr.skip())


def export_labels(
    service: AnnotationService,
    fmt: str,
    source: str,
    history: bool,
    request: gr.Request,
    profile: gr.OAuthProfile | None = None,
) -> ExportReply:
    """Write the labels (one row per item and annotator; every version with ``history``) as CSV, JSONL or
    Parquet, from the annotators' labels or the adjudicated ones, to a file to download."""
    try:
        who = _admin(service, request, profile)
        fmt = str(fmt).lower()
        if fmt not in EXPORT_FORMATS or source not in EXPORT_SOURCES:
            return ExportReply(
                say_notice(
                    "annotate.export_choice_invalid",
                    "error",
                    formats=data(", ".join(EXPORT_FORMATS)),
                    sources=data(", ".join(EXPORT_SOURCES)),
                ),
                None,
            )
        folder = scratch_folder("lawluo-labels-")
        path = folder / f"labels-{source}-{time.strftime('%Y%m%d-%H%M%S')}.{fmt}"
        n = service.store.export(path, fmt, current_only=not history, source=source, actor=who.name)
        shown = message(EXPORT_SOURCES[source])
        return ExportReply(say_notice("annotate.exported", n=n, fmt=fmt.upper(), source=shown), str(path))
    except PermissionError:
        return ExportReply(say_notice("annotate.only_admin", "error"), None)
    except (StoreError, OSError, ValueError) as exc:
        return ExportReply(say_notice("annotate.export_failed", "error", why=error_field(exc)), None)


def export_everything(
    service: AnnotationService, request: gr.Request, profile: gr.OAuthProfile | None = None
) -> ExportReply:
    """Every export file at once (labels and statute labels as CSV, JSONL and Parquet; adjudications)."""
    try:
        who = _admin(service, request, profile)
        folder = scratch_folder("lawluo-export-")
        paths = service.store.export_all(folder, actor=who.name)
        names = data(", ".join(p.name for p in paths))
        return ExportReply(
            say_notice("annotate.exported_all", n=len(paths), names=names), [str(p) for p in paths]
        )
    except PermissionError:
        return ExportReply(say_notice("annotate.only_admin", "error"), None)
    except (StoreError, OSError, ValueError) as exc:
        return ExportReply(say_notice("annotate.export_failed", "error", why=error_field(exc)), None)


def annotators_table(service: AnnotationService) -> list[list]:
    """Every annotator's row: name, role, items done, items assigned."""
    return [[a["name"], a["role"], int(a["done"]), int(a["assigned"])] for a in service.store.annotators()]


def list_annotators(
    service: AnnotationService, request: gr.Request, profile: gr.OAuthProfile | None = None
) -> AnnotatorsReply:
    """Every annotator's role and progress (admins only)."""
    try:
        _admin(service, request, profile)
        return AnnotatorsReply("", annotators_table(service))
    except PermissionError:
        return AnnotatorsReply(say_notice("annotate.only_admin", "error"), [])


def _admin_table_on_load(
    service: AnnotationService, request: gr.Request, profile: gr.OAuthProfile | None = None
) -> list[list]:
    """On page load: the annotators' table for an admin, empty for anyone else."""
    who = identify(service, request, profile)
    return annotators_table(service) if who is not None and who.is_admin else []
