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
"""

# no `from __future__ import annotations`: Gradio reads the handlers' gr.Request / gr.OAuthProfile hints at runtime

import base64
import json
import logging
import shutil
import sys
import threading
from pathlib import Path
from typing import Any

import gradio as gr

from lawluo.ui.i18n import t
from lawluo.ui.render import CSS, esc, notice

from .annotate_tab import bind, identify
from .consistency import CHARTS, DECIMALS, NOT_YET, SOURCES, AutoMetrics, Report, report_from_store
from .scratch import scratch_folder
from .service import AnnotationService

logger = logging.getLogger(__name__)

TAB_LABEL = t("tab.stats")
AUTO_DIR = "auto"
AUTO_FILES = ("details.jsonl", "pairwise.jsonl")
MAX_AUTO_BYTES = 100_000_000
SOURCE_CHOICES = [("原始标注 Raw labels", "raw"), ("裁定后 Adjudicated labels", "adjudicated")]
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
.st-chart img { display: block; width: 800px; max-width: 100%; height: auto; }
"""
)


def auto_dir(service: AnnotationService) -> Path:
    return Path(service.store.path).parent / AUTO_DIR


def stored_auto_metrics(service: AnnotationService) -> AutoMetrics:
    folder = auto_dir(service)
    return AutoMetrics.read([folder / name for name in AUTO_FILES if (folder / name).is_file()])


def chart_html(name: str, title: str, path: Path) -> str:
    """One chart inside its section, next to its table: the PNG the report drew, inlined as a ``data:``
    URL (the page's CSP allows ``img-src data:``), so it is on the page as soon as the report is, not
    fetched when scrolled into view; at its natural width, scaled down as a whole on a narrow screen."""
    data = base64.b64encode(Path(path).read_bytes()).decode("ascii")
    return (
        f'<figure class="st-chart" id="st-chart-{esc(name)}"><img src="data:image/png;base64,{data}" '
        f'alt="{esc(title)}" loading="eager" decoding="sync"></figure>'
    )


def report_html(report: Report) -> str:
    source = dict((v, k) for k, v in SOURCE_CHOICES).get(report.source, report.source)
    parts = [f'<div class="st-note">{esc(source)}</div>']
    chart_names = {Path(path): name for name, path in report.charts.items()}
    titles = {name: title for name, title, _ in CHARTS}
    for section in report.sections:
        body = []
        for key in section.statistics:
            s = report.statistics[key]
            if s.value is None:
                body.append(f'<div class="st-missing">{esc(NOT_YET)} — {esc(s.title)}: {esc(s.needs)}.</div>')
        if section.table is not None and not section.table.empty:
            table = section.table.to_html(
                index=False, escape=True, na_rep="—", border=0, float_format=lambda v: f"{v:.{DECIMALS}f}"
            )
            body.append(f'<div class="st-scroll">{table}</div>')
        name = chart_names.get(Path(section.chart)) if section.chart is not None else None
        if name is not None:
            body.append(chart_html(name, titles.get(name, name), section.chart))
        parts.append(
            f'<div class="st-section"><h3>{esc(section.title)}</h3>'
            + (f'<div class="st-note">{esc(section.note)}</div>' if section.note else "")
            + "".join(body)
            + "</div>"
        )
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


def _refused(message: str) -> tuple:
    return (notice(message, "error"), [], {}, *_charts(None))


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
        return _refused("只有管理员可以查看统计 Only an admin can see the statistics.")
    if source not in SOURCES:
        return _refused(f"未知的标注来源 Unknown source {str(source)[:40]!r}: choose raw or adjudicated.")
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
        data = report_json(report)
        (folder / "report.json").write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
        files = [str(p) for p in report.figures] + [str(folder / "report.json")]
        return (report_html(report), files, data, *_charts(report))
    except (ValueError, OSError) as exc:
        return _refused(f"统计失败 The statistics failed: {exc}")
    except Exception:
        logger.exception("statistics failed")
        return _refused("统计失败 The statistics failed; see the server log.")


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
        return notice("只有管理员可以上传 Only an admin can upload results.", "error")
    paths = [Path(getattr(f, "name", None) or getattr(f, "path", None) or f) for f in (files or [])]
    if not paths:
        return notice("请选择文件 Choose details.jsonl and/or pairwise.jsonl.", "warn")
    kept = []
    for path in paths:
        name = path.name.rsplit("/", 1)[-1]
        target = next((n for n in AUTO_FILES if name.endswith(n)), None)
        if target is None:
            return notice(f"{name}: 需要 details.jsonl 或 pairwise.jsonl (named so) — nothing kept.", "error")
        if path.stat().st_size > MAX_AUTO_BYTES:
            return notice(f"{name}: 文件太大 over {MAX_AUTO_BYTES // 1_000_000} MB — nothing kept.", "error")
        try:
            AutoMetrics.read([path])
        except (ValueError, OSError, UnicodeDecodeError) as exc:
            return notice(f"没有保存 Nothing kept: {exc}", "error")
        kept.append((path, target))
    folder = auto_dir(service)
    folder.mkdir(parents=True, exist_ok=True)
    for path, target in kept:
        shutil.copyfile(path, folder / f".{target}.tmp")
        (folder / f".{target}.tmp").replace(folder / target)
    return notice(f"已保存 Kept {', '.join(t for _, t in kept)}; press 计算 Compute.", "info")


def build_stats_tab(service: AnnotationService, demo: gr.Blocks) -> None:
    """The tab (hidden until an admin's page loads: ``demo``'s load event shows it) and its events."""
    with gr.Tab(TAB_LABEL, id="statistics", visible=False, elem_id="st-tab") as tab:
        gr.Markdown(
            "标注者的进度与一致性、各系统的胜率、自动指标与律师的一致性 (LegalHalBench §5.6)。"
            " The annotators' progress and agreement, the systems' win rates, and how the automatic metrics "
            "agree with the lawyers. Each statistic says what it still needs until there are enough labels."
        )
        with gr.Row():
            source = gr.Radio(
                SOURCE_CHOICES, value="raw", label="用哪些标注 Labels used", elem_id="st-source",
                info="裁定后：有管理员裁定的条目用裁定结果。 Adjudicated: an item an admin resolved counts once, "
                "as resolved. Agreement between annotators always uses the raw labels.",
            )  # fmt: skip
            first = gr.Dropdown(
                choices=[], value=None, label="配对检验 Paired test: system 1", elem_id="st-first",
                info="默认：直接比较最多的一对 Default: the pair compared directly on the most items",
            )  # fmt: skip
            second = gr.Dropdown(choices=[], value=None, label="system 2", elem_id="st-second")
        with gr.Accordion("自动评测结果 Automatic results (optional)", open=False):
            files = gr.File(
                label="details.jsonl / pairwise.jsonl from `python -m lawluo evaluate`",
                file_count="multiple",
                file_types=[".jsonl"],
                elem_id="st-auto-files",
            )
            upload = gr.Button("保存 Keep these results", size="sm", elem_id="st-upload")
            upload_message = gr.HTML("", css_template=STATS_CSS, elem_id="st-upload-message")
        compute = gr.Button("计算 Compute", variant="primary", elem_id="st-compute")
        html = gr.HTML("", css_template=STATS_CSS, elem_id="st-report")
        # the HTTP API's one image per chart; the page shows each chart in its section of the report
        charts = [
            gr.Image(
                None,
                type="filepath",
                label=f"图 Chart: {title}",
                interactive=False,
                visible=False,
                elem_id=f"st-image-{name}",
            )  # fmt: skip
            for name, title, _ in CHARTS
        ]
        downloads = gr.File(
            label="下载 Charts (PNG) and the report (JSON)", file_count="multiple", interactive=False,
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
