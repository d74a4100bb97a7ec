"""The statute lookup tab (法条检索): statute search, case search and citation checking.

Handlers are plain module-level functions that take the service objects first; the tab builder binds
them with :func:`functools.partial`. They never raise: bad input gets a friendly message, and an
unexpected error is logged and shown as ``出错了：<type>: <message>`` (``Something went wrong: …`` on the
English page). Their HTML comes from :mod:`lawluo.ui.render`, which escapes all user and database text;
the page's texts are keys of ``lawluo/strings/statutes.yaml`` (:mod:`lawluo.ui.i18n`).

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

from ..i18n import Message, message, text
from ..law.checker import CitationChecker, as_of_day
from ..law.verdicts import VERDICT_TABLE
from ..retrieval.case_fit import question_cause
from ..retrieval.casebank import REBUILD_COMMAND as CASES_REBUILD_COMMAND
from ..retrieval.cases import CaseSearcher
from ..retrieval.query import bilingual
from ..retrieval.statutes import QueryError, StatuteSearcher, clean_query
from . import render
from .copy import ADVANCED_LABEL, UICopy
from .i18n import LOCALES, Html, both, say, t
from .views import date_box, event_field

logger = logging.getLogger(__name__)

#: The same cap as ``python -m lawluo check`` (``lawluo.cli.MAX_TEXT_CHARS``).
MAX_TEXT_CHARS = 200_000
MAX_K = 20
DEFAULT_K = 5
TAB_LABEL = t("tab.statutes")
#: The date box's placeholder: a date, in no language.
AS_OF_EXAMPLE = "2017-06-01"
#: What the check says when there is no text to check.
EMPTY_ANSWER = message("statute.empty_answer", example="根据《民法典》第一千零七十九条规定：“……”")
#: The same for scripts (``/check_citations_json``'s ``error``): Chinese, then English.
EMPTY_ANSWER_MESSAGE = bilingual(EMPTY_ANSWER)


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
    error = Html(f'<span lang="en">{render.esc(render.error_text(exc))}</span>')
    return render.notice(say("statute.error", error=error), "error")


def _refused(exc: QueryError) -> str:
    """The notice of a query or a text that cannot be searched or checked, in the page's language."""
    return render.notice(exc.message if exc.message is not None else str(exc), "warn")


def search_statutes(searcher: StatuteSearcher, query: str, k: float = DEFAULT_K) -> str:
    """HTML cards for the ``k`` (1–20) articles that best answer ``query``.

    An article the query names by law and number (``劳动合同法第82条``) is the first card; when it cannot
    be shown — the law is repealed and not in the database (``合同法第五十二条``), unknown, or has no such
    article — a notice above the cards says so and names what replaced a repealed law.
    """
    query = "" if query is None else query
    try:
        hits = searcher.search(query, _clamp_k(k))
        notices = [n for x in searcher.lookup(clean_query(query)) if (n := x.notice())]
        return "".join(render.notice(n, "warn") for n in notices) + render.statute_results(
            query.strip(), [h.as_dict() for h in hits]
        )
    except QueryError as exc:
        return _refused(exc)
    except Exception as exc:
        return _failure(exc)


def search_cases(case_searcher: CaseSearcher | None, query: str, k: float = DEFAULT_K) -> str:
    """HTML cards for up to ``k`` (1–20) cases of the kind ``query`` is about, best matches first
    (:meth:`~lawluo.retrieval.cases.CaseSearcher.similar`: a case's cause of action fits the query's); when
    the case bank has none of its kind, or its kind cannot be told, a notice says so and no case is shown."""
    if case_searcher is None:
        command = Html(f"<code>{render.esc(CASES_REBUILD_COMMAND)}</code>")
        return render.notice(say("statute.cases_unavailable", command=command), "error")
    query = "" if query is None else query
    try:
        cause = question_cause(clean_query(query))
        hits = case_searcher.similar(query, _clamp_k(k), cause=cause)
        return render.case_results(query.strip(), [h.as_dict() for h in hits], cause)
    except QueryError as exc:
        return _refused(exc)
    except Exception as exc:
        return _failure(exc)


def _card(checked) -> dict:
    """What a citation's card shows: :meth:`Checked.as_dict` and the checker's notes as messages."""
    return {**checked.as_dict(), "notes": tuple(getattr(checked, "notes", ()))}


def _prepare_text(text: Any) -> tuple[str, list[Message]]:
    """The text to check (capped at :data:`MAX_TEXT_CHARS`) and notices about it."""
    if text is None:
        text = ""
    if not isinstance(text, str):
        raise QueryError(message("statute.answer_not_text"))
    if len(text) > MAX_TEXT_CHARS:
        return text[:MAX_TEXT_CHARS], [
            message("statute.truncated", total=f"{len(text):,}", limit=f"{MAX_TEXT_CHARS:,}")
        ]
    return text, []


def _as_of(value: Any) -> str | None:
    """The date to check against, ``None`` for today's law; :class:`QueryError` for anything else."""
    try:
        return as_of_day(value if isinstance(value, str | type(None)) else str(value))
    except ValueError as exc:
        shown = render.echo(str(value))
        raise QueryError(message("statute.as_of_bad", value=shown)) from exc


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
            return render.notice(EMPTY_ANSWER, "info"), ""
        result = checker.check(text, as_of=day)
        if day:
            notices = [*notices, message("statute.checked_as_of", day=day)]
        citations = [_card(c) for c in result.citations]
        return (
            render.check_summary(result.nhsr, result.counts(), notices),
            render.citation_list(citations, text, render.CITATION_PAGE),
        )
    except QueryError as exc:
        return _refused(exc), ""
    except Exception as exc:
        return _failure(exc), ""


def more_citations(
    checker: CitationChecker, text: str, evt: gr.EventData | None = None, as_of: str | None = None
) -> str:
    """The per-citation HTML of ``text`` (the text last checked) with the number of cards the clicked
    "more" button asks for (its ``data-more``), never more than the citations there are."""
    try:
        shown = int(event_field(evt, "more") or 0)
    except (TypeError, ValueError):
        shown = 0
    try:
        text, _notices = _prepare_text(text)
        if not text.strip():
            return ""
        citations = [_card(c) for c in checker.check(text, as_of=_as_of(as_of)).citations]
        return render.citation_list(citations, text, max(shown, render.CITATION_PAGE))
    except QueryError as exc:
        return _refused(exc)
    except Exception as exc:
        return _failure(exc)


#: A click on the "more" button under the citation cards asks for the next page (its ``data-more``). And the
#: tab's text boxes take Chinese (a question, an answer to check): they say so (``lang``), their Chinese
#: examples (placeholders) too, on the English page as well.
MORE_JS = """
const mark = () => {
  for (const box of document.querySelectorAll(QUERY_BOXES)) {
    if (box.getAttribute('lang') !== ZH) box.setAttribute('lang', ZH);
  }
};
mark();
new MutationObserver(mark).observe(element.closest('.tabitem') || document.body, {childList: true, subtree: true});
element.addEventListener('click', (event) => {
  const button = event.target.closest('button[data-more]');
  if (!button || !element.contains(button)) return;
  button.disabled = true;
  trigger('click', {more: button.dataset.more});
});
""".replace(
    "QUERY_BOXES", repr("#ll-statute-query textarea, #ll-case-query textarea, #ll-check-answer textarea")
).replace("ZH", repr(LOCALES["zh"]))


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
        text, notices = _prepare_text(text)
        out["notices"] = [bilingual(n) for n in notices]
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


def example_label(label: Any) -> str:
    """An example's label (``check_examples.json``: ``{"zh": …, "en": …}``) as HTML in both languages; a
    plain string is shown as it is, declared Chinese."""
    if isinstance(label, dict):
        return both(lambda lang: render.esc(label.get(lang) or label.get("zh") or ""))
    return render.zh(label or "")


def _search_section(
    title: str, label: str, placeholder: str, fn, api_name: str, elem_id: str | None = None
) -> None:
    """A query box, a result-count slider and a button wired to ``fn(query, k) -> html``; ``title`` and
    ``label`` are keys of the catalogue, ``placeholder`` an example query (Chinese in every language)."""
    gr.Markdown(t(title))
    with gr.Row():
        query = gr.Textbox(label=t(label), placeholder=placeholder, scale=4, elem_id=elem_id)
        k = gr.Slider(1, MAX_K, value=DEFAULT_K, step=1, label=t("statute.results_label"), scale=1)
        button = gr.Button(t("statute.search_button"), variant="primary", scale=1)
    out = _results_box()
    button.click(fn, [query, k], out, api_name=api_name)
    query.submit(fn, [query, k], out, api_visibility="private")


def build_statute_tab(
    searcher: StatuteSearcher, case_searcher: CaseSearcher | None, checker: CitationChecker, copy: UICopy
) -> None:
    """Add the tab to the enclosing ``gr.Blocks``; ``case_searcher=None`` when the case bank is missing."""
    with gr.Tab(TAB_LABEL, id="statutes"):
        intro, _ = copy.markdown("statute_tab.md")
        if intro:
            gr.Markdown(intro)

        _search_section(
            "statute.search_title",
            "statute.search_label",
            "试用期 解除劳动合同",
            partial(search_statutes, searcher),
            "search_statutes",
            "ll-statute-query",
        )
        _search_section(
            "statute.cases_title",
            "statute.cases_label",
            "醉酒驾驶机动车 追逐竞驶",
            partial(search_cases, case_searcher),
            "search_cases",
            "ll-case-query",
        )

        _check_section(checker, copy)


#: The line of ``check_help.md`` where the app writes the verdict codes from :data:`VERDICT_TABLE`.
VERDICT_CODES = "<!-- verdict codes -->"


def verdict_codes() -> dict[str, str]:
    """The help's list of verdict codes, per language, from the verdict table and each verdict's strings
    (``statute.verdict.<code>``, ``statute.verdict_tip.<code>``): a new verdict needs no line in the help."""
    zh = " · ".join(
        f'<code lang="en">{v.code}</code> {text("statute.verdict." + v.code, "zh")}'
        f"（{text('statute.verdict_tip.' + v.code, 'zh')}{'' if v.content_bearing else '；不计入'}）"
        for v in VERDICT_TABLE
    )
    en = " ·\n".join(
        f"`{v.code}` — {text('statute.verdict_tip.' + v.code, 'en')}{'' if v.content_bearing else ' (not counted)'}"
        for v in VERDICT_TABLE
    )
    return {"zh": f"**判定代码**：{zh}。\n", "en": f"**Verdict codes**: {en}.\n"}


def _check_section(checker: CitationChecker, copy: UICopy) -> None:
    """The citation check: the answer's box, its examples, the date of the facts, the button, the help and
    the results (a page of cards at a time); and its endpoint as data, for scripts."""
    gr.Markdown(t("statute.check_title"))
    answer = gr.Textbox(
        label=t("statute.check_label"),
        placeholder="根据《中华人民共和国民法典》第一千零七十九条规定：“……”",
        lines=6,
        max_lines=16,
        elem_id="ll-check-answer",
    )
    _check_examples(copy, answer)
    as_of_box = date_box(t("statute.as_of_label"), t("statute.as_of_info"), "ll-check-as-of")
    as_of_box.placeholder = AS_OF_EXAMPLE  # not "YYYY-MM-DD": an example date reads the same in any language
    check_button = gr.Button(t("statute.check_button"), variant="primary")
    help_text, advanced = copy.markdown("check_help.md", fills={VERDICT_CODES: verdict_codes()})
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


def _check_examples(copy: UICopy, answer: gr.Textbox) -> None:
    """The check's examples (``check_examples.json``), if any: a click puts one's text into ``answer``.

    A gr.Dataset, not gr.Examples: Gradio does not translate gr.Examples' labels; a sample drawn as HTML
    holds both languages' label, the page shows its own."""
    examples = copy.json("check_examples.json") or []
    if not examples:
        return
    samples = gr.Dataset(
        components=[gr.HTML(visible=False)],
        samples=[[example_label(e.get("label"))] for e in examples],
        type="index",
        label=t("statute.examples_label"),
        elem_id="ll-check-examples",
    )
    texts = [str(e.get("text") or "") for e in examples]
    samples.click(
        lambda i: texts[i] if isinstance(i, int) and 0 <= i < len(texts) else gr.skip(),
        samples,
        answer,
        api_visibility="private",
    )


def build_unavailable_tab(text: str) -> None:
    """The tab, when the statute database cannot be loaded: what is wrong and how to build it (Markdown in
    both languages: ``app.py``'s ``_missing_db_message``)."""
    with gr.Tab(TAB_LABEL, id="statutes"):
        gr.Markdown(text)
