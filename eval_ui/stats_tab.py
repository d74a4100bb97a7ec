"""The 统计 / Statistics tab, shown only to a signed-in admin: the annotators, the systems and the metrics.

One button computes :func:`eval_ui.consistency.report_from_store` on the store's current labels — raw, or
with the admins' adjudications in place of disputed items (inter-annotator agreement always uses the raw
labels) — and shows its sections, each with its table and a "not enough labels yet: needs …" line for
every statistic that has no value yet, and its chart (:data:`CHARTS`) right under its table, shown only
when the chart was drawn (never an empty one) and inlined in the report (:func:`chart_html`), so it is
there with the tables, not loaded when scrolled into view; at its natural size, never cropped or shrunk
into a gallery thumbnail. Two drop-downs choose the systems of the paired bootstrap test (default: the
pair compared directly on the most items, :func:`eval_ui.consistency.default_pair`). The charts and the report's JSON can be
downloaded. An admin may upload the ``details.jsonl`` / ``pairwise.jsonl`` of ``python -m lawluo evaluate``
run on the same answers; they are validated, kept next to the store (``<annotation_dir>/auto/``, so they
survive a restart) and joined in for Rel, T_LC and the judge.

The tab is hidden until an admin's page loads (after sign-in); for anyone else it does not exist on the
page, and its API answers that only an admin may use it.

Languages: the report is HTML in both languages (:func:`~lawluo.ui.i18n.say`): the sections' titles
(:data:`~eval_ui.consistency.SECTION_KEYS`), the statistics' names and needs, the tables' headers
(``stats.col.*``: Gradio 6.31 translates no key in a Dataframe's header, so the tables are HTML) and the
sections' explanations (:attr:`~eval_ui.consistency.Section.explain`); names from the data and the libraries'
English notes sit in elements that say their language. The downloads are links in the report (a file list
would show file names, not words); the ``gr.File`` stays, hidden, for the HTTP API. The charts' own texts
(axis labels, titles drawn into the PNG) are in English.
"""

# no `from __future__ import annotations`: Gradio reads the handlers' gr.Request / gr.OAuthProfile hints at runtime

import base64
import functools
import json
import logging
import math
import re
import shutil
import sys
import threading
from pathlib import Path
from typing import Any

import gradio as gr
import pandas as pd

from lawluo.i18n import EN, LANGUAGES, ZH, Message, catalogue, message, text
from lawluo.ui.i18n import LOCALES, Html, both, say, t
from lawluo.ui.render import CSS, esc

from . import human_scores
from .adjudicate_tab import data, notice_html, say_error, say_notice
from .annotate_tab import bind, identify
from .consistency import (
    CHARTS,
    DECIMALS,
    NEEDS_PHRASES,
    SOURCES,
    AutoMetrics,
    Report,
    Section,
    report_from_store,
)
from .consistency.specs import StatisticSpec, section_key, statistics
from .scratch import scratch_folder
from .service import AnnotationService

logger = logging.getLogger(__name__)

TAB_LABEL = t("tab.stats")
AUTO_DIR = "auto"
AUTO_FILES = ("details.jsonl", "pairwise.jsonl")
MAX_AUTO_BYTES = 100_000_000
#: The labels used (key of the choice, value): Gradio translates a choice's I18n key.
SOURCE_CHOICES = [("stats.source.raw", "raw"), ("stats.source.adjudicated", "adjudicated")]
#: Imported in the background when an admin opens the page, so the first computation does not wait for them.
SLOW_IMPORTS = (
    "scipy.stats",
    "statsmodels.stats.inter_rater",
    "krippendorff",
    "matplotlib.backends.backend_agg",
)
STATS_CSS = (
    CSS
    + """
.st-section { margin: 0 0 18px; }
.st-section h3 { margin: 14px 0 4px; }
.st-note { color: #4b5563; margin: 2px 0 6px; }
.st-missing { color: #92400e; background: #fffbeb; border-left: 3px solid #f59e0b; padding: 3px 8px; margin: 3px 0; }
.st-section table { border-collapse: collapse; font-size: 0.9em; }
.st-section th, .st-section td { border: 1px solid #d0d7de; padding: 3px 8px; text-align: right; }
.st-section th { background: #f3f4f6; }
.st-scroll { overflow-x: auto; max-width: 100%; }
.st-chart { margin: 8px 0 4px; max-width: 800px; }
.st-download { font-size: 0.9em; }
.st-chart img { display: block; width: 800px; max-width: 100%; height: auto; }
"""
)


def auto_dir(service: AnnotationService) -> Path:
    return Path(service.store.path).parent / AUTO_DIR


def stored_auto_metrics(service: AnnotationService) -> AutoMetrics:
    folder = auto_dir(service)
    return AutoMetrics.read([folder / name for name in AUTO_FILES if (folder / name).is_file()])


def chart_html(name: str, title: str, path: Path, path_zh: Path | None = None) -> str:
    """One chart inside its section, next to its table: the PNG the report drew, inlined as a ``data:``
    URL (the page's CSP allows ``img-src data:``), so it is on the page as soon as the report is, not
    fetched when scrolled into view; at its natural width, scaled down as a whole on a narrow screen. With
    ``path_zh`` (the chart drawn in Chinese) each language's image and link is shown on its page only."""
    drawn = [(ZH, path_zh), (EN, path)] if path_zh is not None else [(None, path)]
    parts = []
    for lang, png in drawn:
        encoded = base64.b64encode(Path(png).read_bytes()).decode("ascii")
        mark = f' class="ll-lang-{lang}" lang="{LOCALES[lang]}"' if lang else ""
        link = download_link(Path(png).name, "image/png", encoded, "stats.download_png")
        alt = section_text(title, lang) if lang and section_key(title) else title
        parts.append(
            f'<img{mark} src="data:image/png;base64,{encoded}" alt="{esc(alt)}" loading="eager" '
            f'decoding="sync"><div{mark}>{link}</div>'
        )
    return f'<figure class="st-chart" id="st-chart-{esc(name)}">{"".join(parts)}</figure>'


def download_link(filename: str, mime: str, encoded: str, key: str) -> str:
    """A link that saves a file of the report (``encoded``: base64) under ``filename``; its text in both
    languages. (The page shows these instead of a file list: Gradio's shows file names, not words.)"""
    return (
        f'<a class="st-download" download="{esc(filename)}" href="data:{mime};base64,{encoded}">'
        f"{say(key)}</a>"
    )


def file_name(name: str) -> str:
    """A file's name (``details.jsonl``) as the page shows it: code, English, the name and its extension
    apart as Gradio's own file lists show them."""
    stem, dot, ext = str(name).rpartition(".")
    shown = f"{esc(stem)}<wbr>.{esc(ext)}" if dot and stem else esc(name)
    return f'<code lang="en">{shown}</code>'


#: Fields of the report's messages that hold a file's name (:func:`file_name`).
FILE_FIELDS = ("file", "doc")


def _filled(msg: Message, lang: str) -> str:
    fields = {}
    for name, value in msg.fields.items():
        if isinstance(value, Message):
            fields[name] = _filled(value, lang)
        elif isinstance(value, Html):
            fields[name] = value
        elif name in FILE_FIELDS:
            fields[name] = file_name(value)
        elif isinstance(value, str):
            fields[name] = data(value)
        else:
            fields[name] = esc(value)
    return text(msg.key, lang, **fields)


def explain_html(msg: Message) -> str:
    """A section's explanation (:attr:`eval_ui.consistency.Section.explain`) in both languages, each in its
    own element (:data:`lawluo.ui.i18n.LANG_CSS` shows the page's), every field from the data — a system's
    name, a library's English note, a command, a file — in an element of its own language."""
    return "".join(
        f'<div class="ll-lang-{lang}" lang="{LOCALES[lang]}">{_filled(msg, lang)}</div>' for lang in LANGUAGES
    )


#: The file of ``lawluo evaluate`` a statistic's need names (``{file}``), besides the human scores' (each
#: ``{key}_correlation`` needs ``details.jsonl``: :func:`needs_file`).
NEEDS_FILES = {
    "judge_s1": AUTO_FILES[1],
    "judge_s2": AUTO_FILES[1],
    "judge_consistency": AUTO_FILES[1],
}


def needs_file(key: str) -> str:
    """The file of ``lawluo evaluate`` statistic ``key`` needs, "" for none.

    >>> needs_file("rel_correlation"), needs_file("judge_s1"), needs_file("progress")
    ('details.jsonl', 'pairwise.jsonl', '')
    """
    if key in {f"{k}_correlation" for k in human_scores.keys()}:
        return AUTO_FILES[0]
    return NEEDS_FILES.get(key, "")


def _specs() -> dict[str, StatisticSpec]:
    """Every statistic of the report by key, as :func:`~eval_ui.consistency.specs.statistics` has them now."""
    return {spec.key: spec for spec in statistics()}


def needs_html(key: str, needs: str) -> str:
    """What statistic ``key`` still needs, in both languages: its own need (:attr:`StatisticSpec.needs_key`),
    one of :data:`~eval_ui.consistency.NEEDS_PHRASES`, either with the library's reason in brackets
    (English, marked so); anything else as it is."""
    spec = _specs().get(key)
    phrases = {spec.needs: spec.needs_key, **NEEDS_PHRASES} if spec else dict(NEEDS_PHRASES)
    shown = {"file": Html(file_name(needs_file(key))), **(spec.fields if spec else {})}
    if needs in phrases:
        return say(phrases[needs], **shown)
    for phrase, phrase_key in phrases.items():
        if needs.startswith(phrase + " (") and needs.endswith(")"):
            why = needs[len(phrase) + 2 : -1]
            need = say(phrase_key, **shown)
            return say("stats.needs_because", needs=Html(need), why=Html(data(why)))
    return data(needs)


def section_text(title: str, lang: str) -> str:
    """A section's title (:func:`~eval_ui.consistency.specs.section_key`) in ``lang``: the human scores'
    section names them (``{names}``: "Rel / T_LC", "Rel and T_LC")."""
    return text(section_key(title), lang, names=human_scores.names(lang))


def section_title(section: Section) -> str:
    if not section_key(section.title):
        return data(section.title)
    return both(lambda lang: section_text(section.title, lang))


def column_html(column: str) -> str:
    """A table's header in both languages (``stats.col.<column>``), else the column's own name."""
    slug = re.sub(r"[^a-z0-9]+", "_", str(column).lower()).strip("_")
    key = f"stats.col.{slug}"
    return say(key) if slug and key in catalogue() else data(column)


#: Cells that are texts of the report, not data: the NHSR table's rows (and a statistic's title: :func:`_cell_texts`).
_CELL_KEYS = {
    "checker: hallucinated": "stats.cell.checker_hallucinated",
    "checker: correct": "stats.cell.checker_correct",
}


@functools.lru_cache(maxsize=4)
def _cell_texts(table: tuple) -> dict[str, tuple[str, dict[str, str]]]:
    """Each cell that is a text of the report → its catalogue key and fields, for the human scores' ``table``."""
    titles = {spec.title: (spec.title_key, spec.fields) for spec in statistics()}
    return titles | {cell: (key, {}) for cell, key in _CELL_KEYS.items()}


def cell_html(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA:
        return "—"
    if isinstance(value, float):
        return f"{value:.{DECIMALS}f}"
    texts = _cell_texts(human_scores.table())
    if isinstance(value, str) and value in texts:
        key, fields = texts[value]
        return say(key, **fields)
    return data(value)


def table_html(table: pd.DataFrame) -> str:
    """A section's table: headers in both languages, each cell as a number or as text of its language."""
    head = "".join(f"<th>{column_html(c)}</th>" for c in table.columns)
    rows = "".join(
        "<tr>" + "".join(f"<td>{cell_html(v)}</td>" for v in row) + "</tr>"
        for row in table.astype(object).itertuples(index=False, name=None)
    )
    return f'<table class="dataframe"><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>'


def report_html(report: Report, as_json: dict | None = None) -> str:
    """The report in both languages (:func:`say`): each section's title, what its statistics still need, its
    table (:func:`table_html`), its chart and its explanation."""
    source = dict((v, k) for k, v in SOURCE_CHOICES).get(report.source)
    parts = [f'<div class="st-note">{say(source) if source else data(report.source)}</div>']
    chart_names = {Path(path): name for name, path in report.charts.items()}
    titles = {name: title for name, title, _ in CHARTS}
    for section in report.sections:
        body = []
        for key in section.statistics:
            s = report.statistics[key]
            if s.value is None:
                spec = _specs().get(key)
                title = say(spec.title_key, **spec.fields) if spec else data(s.title)
                missing = say(
                    "stats.missing",
                    not_yet=message("stats.not_yet"),
                    title=Html(title),
                    needs=Html(needs_html(key, s.needs)),
                )
                body.append(f'<div class="st-missing">{missing}</div>')
        if section.table is not None and not section.table.empty:
            body.append(f'<div class="st-scroll">{table_html(section.table)}</div>')
        name = chart_names.get(Path(section.chart)) if section.chart is not None else None
        if name is not None:
            body.append(chart_html(name, titles.get(name, name), section.chart, report.charts_zh.get(name)))
        if section.explain is not None:
            note = f'<div class="st-note">{explain_html(section.explain)}</div>'
        elif section.note:
            note = f'<div class="st-note">{data(section.note)}</div>'
        else:
            note = ""
        parts.append(
            f'<div class="st-section"><h3>{section_title(section)}</h3>' + note + "".join(body) + "</div>"
        )
    if as_json is not None:
        encoded = base64.b64encode(json.dumps(as_json, ensure_ascii=False, indent=1).encode("utf-8"))
        link = download_link(
            "report.json", "application/json", encoded.decode("ascii"), "stats.download_json"
        )
        parts.append(f'<div class="st-note">{link}</div>')
    return f'<div class="st-report">{"".join(parts)}</div>'


def report_json(report: Report) -> dict:
    return report.to_json()


def _compare(first: str | None, second: str | None) -> tuple[str, str] | None:
    """The systems chosen for the paired test, when both are chosen."""
    return (str(first), str(second)) if first and second else None


def _charts(report: Report | None) -> list[Any]:
    """One value per chart slot of the HTTP API: the PNG's path, or None when it was not drawn. The page
    shows the charts inside the report (:func:`chart_html`); these slots stay hidden there."""
    found = report.charts if report is not None else {}
    return [str(found[name]) if name in found else None for name, _, _ in CHARTS]


def _refused(html: str) -> tuple:
    """A refusal or a failure (``html``: :func:`say`) instead of the report."""
    return (notice_html(html, "error"), [], {}, *_charts(None))


def compute_statistics(
    service: AnnotationService,
    source: str = "raw",
    first: str | None = None,
    second: str | None = None,
    request: gr.Request = None,
    profile: gr.OAuthProfile | None = None,
) -> tuple:
    """Every statistic on the current labels, admins only: the HTML, the chart and report files, the
    report as JSON, then one image per chart slot of :data:`CHARTS` (hidden when not drawn)."""
    who = identify(service, request, profile)
    if who is None or not who.is_admin:
        return _refused(say("stats.only_admin"))
    if source not in SOURCES:
        return _refused(say("stats.unknown_source", source=Html(data(repr(str(source)[:40])))))
    try:
        checker = service.checker is not None

        def auto_hallucinated(item_id: str, side: str) -> dict[str, str]:
            # the checker's verdicts: the report derives hallucinated yes/no and compares each verdict
            return {s.key: s.verdict for s in service.statutes(item_id, side)}

        folder = scratch_folder("lawluo-stats-")
        report = report_from_store(
            service.store,
            source,
            auto_hallucinated if checker else None,
            stored_auto_metrics(service),
            compare=_compare(first, second),
            figures_dir=folder,
        )
        as_json = report_json(report)
        (folder / "report.json").write_text(
            json.dumps(as_json, ensure_ascii=False, indent=1), encoding="utf-8"
        )
        files = [str(p) for p in report.figures] + [str(folder / "report.json")]
        return (report_html(report, as_json), files, as_json, *_charts(report))
    except (ValueError, OSError) as exc:
        return _refused(say_error("stats.failed", exc))
    except Exception:
        logger.exception("statistics failed")
        return _refused(say("stats.failed_bug"))


def _warm_imports() -> None:
    """Import the statistics' libraries in the background (once per process; a second call finds them)."""
    missing = [name for name in SLOW_IMPORTS if name not in sys.modules]
    if not missing:
        return

    def load() -> None:
        import importlib

        for name in missing:
            try:
                importlib.import_module(name)
            except ImportError:  # reported when the statistics are computed
                pass

    threading.Thread(target=load, name="lawluo-stats-imports", daemon=True).start()


def show_tab(
    service: AnnotationService, request: gr.Request, profile: gr.OAuthProfile | None = None
) -> tuple:
    """On page load: the tab and the systems to choose from, for an admin; for anyone else nothing at all."""
    who = identify(service, request, profile)
    if who is None or not who.is_admin:
        return gr.Tab(visible=False), gr.Dropdown(choices=[]), gr.Dropdown(choices=[])
    _warm_imports()
    try:
        systems = service.store.labelled_systems()
    except (ValueError, OSError) as exc:  # the tab still opens; computing says what failed
        logger.error("statistics tab: cannot list the systems: %s", exc)
        systems = []
    return gr.Tab(visible=True), gr.Dropdown(choices=systems), gr.Dropdown(choices=systems)


def system_choices(data: dict, first: str | None, second: str | None) -> tuple:
    """After a computation: the systems that have labels now (a choice that lost its labels is cleared)."""
    systems = list(data.get("systems") or []) if isinstance(data, dict) else []
    keep = [value if value in systems else None for value in (first, second)]
    return tuple(gr.Dropdown(choices=systems, value=value) for value in keep)


def upload_auto_metrics(
    service: AnnotationService, files: Any, request: gr.Request, profile: gr.OAuthProfile | None = None
) -> str:
    """Keep uploaded ``details.jsonl`` / ``pairwise.jsonl`` of ``lawluo evaluate`` (validated first). Admins only."""
    who = identify(service, request, profile)
    if who is None or not who.is_admin:
        return say_notice("stats.upload_only_admin", "error")
    names = {"details": Html(file_name(AUTO_FILES[0])), "pairwise": Html(file_name(AUTO_FILES[1]))}
    paths = [Path(getattr(f, "name", None) or getattr(f, "path", None) or f) for f in (files or [])]
    if not paths:
        return say_notice("stats.choose_files", "warn", **names)
    kept = []
    for path in paths:
        name = path.name.rsplit("/", 1)[-1]
        target = next((n for n in AUTO_FILES if name.endswith(n)), None)
        if target is None:
            return say_notice("stats.wrong_file", "error", name=Html(file_name(name)), **names)
        if path.stat().st_size > MAX_AUTO_BYTES:
            return say_notice(
                "stats.too_big", "error", name=Html(file_name(name)), mb=MAX_AUTO_BYTES // 1_000_000
            )
        try:
            AutoMetrics.read([path])
        except (ValueError, OSError, UnicodeDecodeError) as exc:
            return notice_html(say_error("stats.nothing_kept", exc), "error")
        kept.append((path, target))
    folder = auto_dir(service)
    folder.mkdir(parents=True, exist_ok=True)
    for path, target in kept:
        shutil.copyfile(path, folder / f".{target}.tmp")
        (folder / f".{target}.tmp").replace(folder / target)
    return say_notice("stats.kept", "info", files=Html(", ".join(file_name(t) for _, t in kept)))


def build_stats_tab(service: AnnotationService, demo: gr.Blocks) -> None:
    """The tab (hidden until an admin's page loads: ``demo``'s load event shows it) and its events."""
    with gr.Tab(TAB_LABEL, id="statistics", visible=False, elem_id="st-tab") as tab:
        gr.Markdown(t("stats.intro"))
        with gr.Row():
            source = gr.Radio(
                [(t(key), value) for key, value in SOURCE_CHOICES], value="raw", label=t("stats.source"),
                elem_id="st-source", info=t("stats.source.info"),
            )  # fmt: skip
            first = gr.Dropdown(
                choices=[], value=None, label=t("stats.first"), elem_id="st-first", info=t("stats.first.info"),
            )  # fmt: skip
            second = gr.Dropdown(choices=[], value=None, label=t("stats.second"), elem_id="st-second")
        with gr.Accordion(t("stats.auto"), open=False):
            files = gr.File(
                label=t("stats.auto.files"),
                file_count="multiple",
                file_types=[".jsonl"],
                elem_id="st-auto-files",
            )
            upload = gr.Button(t("stats.upload"), size="sm", elem_id="st-upload")
            upload_message = gr.HTML("", css_template=STATS_CSS, elem_id="st-upload-message")
        compute = gr.Button(t("stats.compute"), variant="primary", elem_id="st-compute")
        html = gr.HTML("", css_template=STATS_CSS, elem_id="st-report")
        # the HTTP API's one image per chart; the page shows each chart in its section of the report
        charts = [
            gr.Image(
                None,
                type="filepath",
                label=t("stats.chart"),
                interactive=False,
                visible=False,
                elem_id=f"st-image-{name}",
            )  # fmt: skip
            for name, title, _ in CHARTS
        ]
        # the HTTP API's files; the page links each in the report (download_link): a file list shows names
        downloads = gr.File(
            label=t("stats.downloads"), file_count="multiple", interactive=False, visible=False,
            elem_id="st-downloads",
        )  # fmt: skip
        data = gr.JSON(label="JSON", visible=False)
    compute.click(
        bind(compute_statistics, service),
        [source, first, second],
        [html, downloads, data, *charts],
        api_name="statistics",
    ).then(system_choices, [data, first, second], [first, second], api_visibility="private")
    upload.click(
        bind(upload_auto_metrics, service), [files], [upload_message], api_name="upload_auto_metrics"
    )
    demo.load(bind(show_tab, service), None, [tab, first, second], api_visibility="private")
