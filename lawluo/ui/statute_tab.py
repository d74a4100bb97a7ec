"""The 法条检索 / Statute lookup tab: statute search, case search and citation checking.

Handlers are plain module-level functions that take the service objects first; the tab builder binds
them with :func:`functools.partial`. They never raise: bad input gets a friendly message, and an
unexpected error is logged and shown as ``Something went wrong: <type>: <message>``. Their HTML comes
from :mod:`lawluo.ui.render`, which escapes all user and database text.

Scriptable with ``gradio_client`` (api names ``search_statutes``, ``search_cases``,
``check_citations`` and ``check_citations_json``)::

    from gradio_client import Client
    client = Client("http://127.0.0.1:7860/")
    html = client.predict("试用期 解除劳动合同", 5, api_name="/search_statutes")
    report = client.predict("根据《民法典》第1079条规定：“……”", api_name="/check_citations_json")
    dated = client.predict("依照《刑法》第二百六十四条之规定…", "2017-06-01", api_name="/check_citations_json")

The check endpoints take the text and the date it was written (``""``: today's law); ``gradio_client``
fills in the date when it is left out, a raw ``/gradio_api/call/…`` request must send both.
"""

from __future__ import annotations

import logging
from functools import partial
from typing import Any

import gradio as gr

from ..law.checker import CitationChecker, as_of_day
from ..retrieval.case_fit import question_cause
from ..retrieval.casebank import REBUILD_COMMAND as CASES_REBUILD_COMMAND
from ..retrieval.cases import CaseSearcher
from ..retrieval.statutes import QueryError, StatuteSearcher, clean_query
from . import render
from .copy import ADVANCED_LABEL, UICopy
from .i18n import t
from .views import date_box

logger = logging.getLogger(__name__)

#: The same cap as ``python -m lawluo check`` (``lawluo.cli.MAX_TEXT_CHARS``).
MAX_TEXT_CHARS = 200_000
MAX_K = 20
DEFAULT_K = 5
TAB_LABEL = t("tab.statutes")
EMPTY_ANSWER_MESSAGE = (
    "Paste an answer that cites statutes, e.g. 根据《民法典》第一千零七十九条规定：“……” — "
    "请粘贴一段引用了法条的回答，再点击“核查引用”。"
)


# -- handlers -------------------------------------------------------------------------------------


def _clamp_k(k: Any) -> int:
    try:
        value = int(round(float(k)))
    except (TypeError, ValueError, OverflowError):
        value = DEFAULT_K
    return min(max(value, 1), MAX_K)


def _failure(exc: Exception) -> str:
    """Log the traceback (call inside ``except``) and return the message the user sees."""
    logger.exception("statute tab handler failed")
    return render.notice(f"出错了 Something went wrong: {render.error_text(exc)}", "error")


def search_statutes(searcher: StatuteSearcher, query: str, k: float = DEFAULT_K) -> str:
    """HTML cards for the ``k`` (1–20) articles that best answer ``query``.

    An article the query names by law and number (``劳动合同法第82条``) is the first card; when it cannot
    be shown — the law is repealed and not in the database (``合同法第五十二条``), unknown, or has no such
    article — a notice above the cards says so and names what replaced a repealed law.
    """
    query = "" if query is None else query
    try:
        hits = searcher.search(query, _clamp_k(k))
        notices = [x.message() for x in searcher.lookup(clean_query(query)) if x.message()]
        return "".join(render.notice(n, "warn") for n in notices) + render.statute_results(
            query.strip(), [h.as_dict() for h in hits]
        )
    except QueryError as exc:
        return render.notice(str(exc), "warn")
    except Exception as exc:
        return _failure(exc)


def search_cases(case_searcher: CaseSearcher | None, query: str, k: float = DEFAULT_K) -> str:
    """HTML cards for up to ``k`` (1–20) cases of the kind ``query`` is about, best matches first
    (:meth:`~lawluo.retrieval.cases.CaseSearcher.similar`: a case's cause of action fits the query's); when
    the case bank has none of its kind, or its kind cannot be told, a notice says so and no case is shown."""
    if case_searcher is None:
        return render.notice(
            f"The case bank is not available. Build it with `{CASES_REBUILD_COMMAND}` and restart the app.",
            "error",
        )
    query = "" if query is None else query
    try:
        cause = question_cause(clean_query(query))
        hits = case_searcher.similar(query, _clamp_k(k), cause=cause)
        return render.case_results(query.strip(), [h.as_dict() for h in hits], cause)
    except QueryError as exc:
        return render.notice(str(exc), "warn")
    except Exception as exc:
        return _failure(exc)


def _prepare_text(text: Any) -> tuple[str, list[str]]:
    """The text to check (capped at :data:`MAX_TEXT_CHARS`) and notices about it."""
    if text is None:
        text = ""
    if not isinstance(text, str):
        raise QueryError("请粘贴文字 the answer must be text")
    if len(text) > MAX_TEXT_CHARS:
        return text[:MAX_TEXT_CHARS], [
            f"文本有 {len(text):,} 字，只核查了前 {MAX_TEXT_CHARS:,} 字。"
            f"The text has {len(text):,} characters; only the first {MAX_TEXT_CHARS:,} were checked."
        ]
    return text, []


AS_OF_MESSAGE = (
    "日期请写成 2017-06-01 这样，或留空（按现行法律核查）。Write the date as YYYY-MM-DD, or leave it empty."
)


def _as_of(value: Any) -> str | None:
    """The date to check against, ``None`` for today's law; :class:`QueryError` for anything else."""
    try:
        return as_of_day(value if isinstance(value, str | type(None)) else str(value))
    except ValueError as exc:
        raise QueryError(f"{AS_OF_MESSAGE}（{exc}）") from None


def check_answer(checker: CitationChecker, text: str, as_of: str | None = None) -> tuple[str, str]:
    """(summary HTML, per-citation HTML) for every statute ``text`` cites.

    The summary holds the NHSR line (LegalHalBench §3.3: not hallucinated ÷ content-bearing citations) and
    the count of each verdict; each citation shows its verdict and how the checker read it (原文引用, 转述,
    适用, 仅引条号), the law and article as written and as resolved, the quoted content and the real
    article text. ``as_of`` (``YYYY-MM-DD``, the day the text was written): each citation is judged
    against the version in force that day.
    """
    try:
        day = _as_of(as_of)
        text, notices = _prepare_text(text)
        if not text.strip():
            return render.notice(EMPTY_ANSWER_MESSAGE, "info"), ""
        result = checker.check(text, as_of=day)
        if day:
            notices = [*notices, f"按 {day} 有效的法律核查。Checked against the law in force on {day}."]
        citations = [c.as_dict() for c in result.citations]
        return (
            render.check_summary(result.nhsr, result.counts(), notices),
            render.citation_list(citations, text, render.CITATION_PAGE),
        )
    except QueryError as exc:
        return render.notice(str(exc), "warn"), ""
    except Exception as exc:
        return _failure(exc), ""


def more_citations(
    checker: CitationChecker, text: str, evt: gr.EventData | None = None, as_of: str | None = None
) -> str:
    """The per-citation HTML of ``text`` (the text last checked) with the number of cards the clicked
    "more" button asks for (its ``data-more``), never more than the citations there are."""
    data = getattr(evt, "_data", None) or {}
    try:
        shown = int(data.get("more")) if isinstance(data, dict) else 0
    except (TypeError, ValueError):
        shown = 0
    try:
        text, _notices = _prepare_text(text)
        if not text.strip():
            return ""
        citations = [c.as_dict() for c in checker.check(text, as_of=_as_of(as_of)).citations]
        return render.citation_list(citations, text, max(shown, render.CITATION_PAGE))
    except QueryError as exc:
        return render.notice(str(exc), "warn")
    except Exception as exc:
        return _failure(exc)


#: A click on the "more" button under the citation cards asks for the next page (its ``data-more``).
MORE_JS = """
element.addEventListener('click', (event) => {
  const button = event.target.closest('button[data-more]');
  if (!button || !element.contains(button)) return;
  button.disabled = true;
  trigger('click', {more: button.dataset.more});
});
"""


def check_answer_json(checker: CitationChecker, text: str, as_of: str | None = None) -> dict:
    """The check as data: ``{"as_of", "nhsr", "counts", "citations" (Checked.as_dict), "notices", "error"}``."""
    out: dict[str, Any] = {
        "as_of": None,
        "nhsr": None,
        "counts": {},
        "citations": [],
        "notices": [],
        "error": None,
    }
    try:
        out["as_of"] = day = _as_of(as_of)
        text, out["notices"] = _prepare_text(text)
        if not text.strip():
            out["error"] = EMPTY_ANSWER_MESSAGE
            return out
        result = checker.check(text, as_of=day)
        out.update(
            nhsr=result.nhsr, counts=result.counts(), citations=[c.as_dict() for c in result.citations]
        )
    except QueryError as exc:
        out["error"] = str(exc)
    except Exception as exc:
        logger.exception("citation check (JSON) failed")
        out["error"] = f"Something went wrong: {render.error_text(exc)}"
    return out


# -- layout ---------------------------------------------------------------------------------------


def _results_box() -> gr.HTML:
    return gr.HTML(value="", css_template=render.CSS, padding=False)


def _search_section(title: str, label: str, placeholder: str, fn, api_name: str) -> None:
    """A query box, a result-count slider and a button wired to ``fn(query, k) -> html``."""
    gr.Markdown(title)
    with gr.Row():
        query = gr.Textbox(label=label, placeholder=placeholder, scale=4)
        k = gr.Slider(1, MAX_K, value=DEFAULT_K, step=1, label="Results 条数", scale=1)
        button = gr.Button("Search 检索", variant="primary", scale=1)
    out = _results_box()
    button.click(fn, [query, k], out, api_name=api_name)
    query.submit(fn, [query, k], out, api_visibility="private")


def build_statute_tab(
    searcher: StatuteSearcher, case_searcher: CaseSearcher | None, checker: CitationChecker, copy: UICopy
) -> None:
    """Add the tab to the enclosing ``gr.Blocks``; ``case_searcher=None`` when the case bank is missing."""
    with gr.Tab(TAB_LABEL, id="statutes"):
        intro = copy.text("statute_tab.md")
        if intro:
            gr.Markdown(intro)

        _search_section(
            "### 条文检索 · Statute search",
            "Question or keywords 问题或关键词",
            "试用期 解除劳动合同",
            partial(search_statutes, searcher),
            "search_statutes",
        )
        _search_section(
            "### 案例检索 · Case search",
            "Facts or keywords 案情或关键词",
            "醉酒驾驶机动车 追逐竞驶",
            partial(search_cases, case_searcher),
            "search_cases",
        )

        gr.Markdown("### 引用核查 · Citation check")
        answer = gr.Textbox(
            label="Answer to check 待核查的回答",
            placeholder="根据《中华人民共和国民法典》第一千零七十九条规定：“……”",
            lines=6,
            max_lines=16,
        )
        examples = copy.json("check_examples.json") or []
        if examples:
            gr.Examples(
                examples=[[e["text"]] for e in examples],
                inputs=answer,
                example_labels=[e["label"] for e in examples],
                label="Example answers 示例回答",
                api_visibility="private",
            )
        as_of_box = date_box(
            "Date the text was written 撰写日期（可不填）",
            "Citations are judged against the law in force that day; empty: today's law. 按当日有效的法律核查。",
            "ll-check-as-of",
        )
        check_button = gr.Button("Check citations 核查引用", variant="primary")
        help_text, advanced = copy.split("check_help.md")
        if help_text:
            gr.Markdown(help_text)
        if advanced:
            with gr.Accordion(ADVANCED_LABEL, open=False):
                gr.Markdown(advanced)
        check_summary = _results_box()
        check_list = gr.HTML(
            value="", css_template=render.CSS, padding=False, js_on_load=MORE_JS, elem_id="ll-check-list"
        )
        checked = gr.State({})  # the text last checked and its date: its next page of cards ("more")

        def check_and_keep(text: str, as_of: str | None = None) -> tuple[str, str, dict]:
            kept = {
                "text": text if isinstance(text, str) else "",
                "as_of": as_of if isinstance(as_of, str) else "",
            }
            return (*check_answer(checker, text, as_of), kept)

        check_button.click(
            check_and_keep,
            [answer, as_of_box],
            [check_summary, check_list, checked],
            api_name="check_citations",
        )

        def on_more(kept: dict, evt: gr.EventData) -> str:
            kept = kept if isinstance(kept, dict) else {}
            return more_citations(checker, kept.get("text", ""), evt, kept.get("as_of"))

        check_list.click(on_more, checked, check_list, api_visibility="private")
        # The same check as data, for scripts only: a hidden trigger and output. (gr.api() would need the
        # handler's type hints, which a functools.partial does not carry.)
        json_trigger = gr.Button(visible=False)
        json_out = gr.JSON(visible=False)
        json_trigger.click(
            partial(check_answer_json, checker),
            [answer, as_of_box],
            json_out,
            api_name="check_citations_json",
        )


def build_unavailable_tab(message: str) -> None:
    """The tab, when the statute database cannot be loaded: what is wrong and how to build it."""
    with gr.Tab(TAB_LABEL, id="statutes"):
        gr.Markdown(message)
