"""The 统计 / Statistics tab (admins only): lawyers against each other and against the automatic metrics.

One button computes :func:`eval_ui.consistency.human_consistency` on the store's current labels and
shows its tables and charts. An admin may upload the ``details.jsonl`` / ``pairwise.jsonl`` of
``python -m lawluo evaluate`` run on the same answers; they are validated, kept next to the store
(``<annotation_dir>/auto/``, so they survive a restart) and joined in for Rel, T_LC and the judge.
Everyone else gets a message, through the page and through the API alike.
"""

# no `from __future__ import annotations`: Gradio reads the handlers' gr.Request / gr.OAuthProfile hints at runtime

import logging
import shutil
import tempfile
from pathlib import Path
from typing import Any

import gradio as gr

from lawluo.ui.render import CSS, esc, notice

from .annotate_tab import bind, identify
from .consistency import AutoMetrics, Report, human_consistency
from .service import AnnotationService

logger = logging.getLogger(__name__)

TAB_LABEL = "统计 / Statistics"
AUTO_DIR = "auto"
AUTO_FILES = ("details.jsonl", "pairwise.jsonl")
MAX_AUTO_BYTES = 100_000_000
STATS_CSS = (
    CSS
    + """
.st-section h3 { margin: 14px 0 4px; }
.st-note { color: #4b5563; margin: 2px 0 6px; }
.st-section table { border-collapse: collapse; font-size: 0.9em; }
.st-section th, .st-section td { border: 1px solid #d0d7de; padding: 3px 8px; text-align: right; }
.st-section th { background: #f3f4f6; }
"""
)


def auto_dir(service: AnnotationService) -> Path:
    return Path(service.store.path).parent / AUTO_DIR


def stored_auto_metrics(service: AnnotationService) -> AutoMetrics:
    folder = auto_dir(service)
    return AutoMetrics.read([folder / name for name in AUTO_FILES if (folder / name).is_file()])


def report_html(report: Report) -> str:
    parts = [f'<div class="st-note">{report.n_labels} current labels.</div>']
    for section in report.sections:
        table = ""
        if section.table is not None and not section.table.empty:
            table = section.table.to_html(index=False, escape=True, na_rep="—", border=0)
        parts.append(
            f'<div class="st-section"><h3>{esc(section.title)}</h3>'
            + (f'<div class="st-note">{esc(section.note)}</div>' if section.note else "")
            + table
            + "</div>"
        )
    return "".join(parts)


def report_json(report: Report) -> dict:
    return {
        "n_labels": report.n_labels,
        "sections": [
            {
                "title": s.title,
                "note": s.note,
                "rows": []
                if s.table is None
                else s.table.astype(object).where(s.table.notna(), None).to_dict("records"),
            }
            for s in report.sections
        ],
    }


def compute_statistics(
    service: AnnotationService, request: gr.Request, profile: gr.OAuthProfile | None = None
) -> tuple[str, list[str], dict]:
    """Every statistic on the current labels: (HTML, chart paths, the same as JSON). Admins only."""
    who = identify(service, request, profile)
    if who is None or not who.is_admin:
        return notice("只有管理员可以查看统计 Only an admin can see the statistics.", "error"), [], {}
    try:
        store = service.store
        labels = store.labels_frame()
        items = {i: store.item(i) for i in labels["item_id"].unique()}
        items = {i: item for i, item in items.items() if item is not None}

        def auto_hallucinated(item_id: str, side: str) -> dict[str, bool]:
            return {s.key: s.hallucinated for s in service.statutes(item_id, side)}

        figures = Path(tempfile.mkdtemp(prefix="lawluo-stats-"))
        report = human_consistency(
            labels,
            store.statute_labels_frame(),
            items,
            auto_hallucinated if service.checker is not None else (lambda _i, _s: {}),
            stored_auto_metrics(service),
            figures_dir=figures,
        )
        return report_html(report), [str(p) for p in report.figures], report_json(report)
    except (ValueError, OSError) as exc:
        return notice(f"统计失败 The statistics failed: {exc}", "error"), [], {}
    except Exception:
        logger.exception("statistics failed")
        return notice("统计失败 The statistics failed; see the server log.", "error"), [], {}


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


def build_stats_tab(service: AnnotationService) -> None:
    with gr.Tab(TAB_LABEL, id="statistics"):
        gr.Markdown(
            "管理员可见 For admins: agreement between annotators, and of the automatic metrics with them "
            "(LegalHalBench §5.6). Statistics need labels from two or more annotators on the same items."
        )
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
        gallery = gr.Gallery(label="图 Charts", columns=2, height="auto", elem_id="st-charts")
        data = gr.JSON(label="JSON", visible=False)
    compute.click(bind(compute_statistics, service), None, [html, gallery, data], api_name="statistics")
    upload.click(
        bind(upload_auto_metrics, service), [files], [upload_message], api_name="upload_auto_metrics"
    )
