"""The statute tools served to agents over MCP: lookup, search, citation check and routing (docs/mcp.md).

With the setting ``mcp_server`` on, :func:`build_mcp_tools` registers the four methods of
:class:`StatuteTools` with ``gr.api`` and ``app.launch_options`` starts Gradio's MCP server (Streamable
HTTP at ``/gradio_api/mcp/``), which :func:`only_statute_tools` trims to these four. Off, nothing here is
registered. Each tool returns a JSON string; bad input (empty, too long, not a date, an unknown domain)
raises ``gr.Error``, which an agent reads as the tool's error message, never a stack trace. The limits are
the web page's (``statute_tab.py``, ``consult_tab.py``). The calls bypass Gradio's queue (its MCP fast
path): the gate's request rate and body size still apply per address; :data:`MAX_PARALLEL` run at once.
"""

from __future__ import annotations

import contextlib
import difflib
import inspect
import json
import logging
import re
import threading
import warnings
from dataclasses import dataclass, field
from functools import partial

import gradio as gr

from ..agents.lawyer import retrieve_statutes
from ..agents.receptionist import Receptionist
from ..domains import Domains, load_domains
from ..law.checker import CitationChecker
from ..law.database import Article, StatuteDB
from ..law.numerals import NUMERAL, article_label, chinese_to_int
from ..law.verdicts import verdict
from ..retrieval.statutes import QueryError, StatuteSearcher, clean_query
from .consult_tab import MAX_QUESTION_CHARS, too_long_message
from .statute_tab import _as_of, _clamp_k, check_answer_json

logger = logging.getLogger(__name__)

TOOL_NAMES = ("lookup_statute", "search_statutes", "check_citations", "route_question")
#: Tool calls that may run at once, all agents together (the page's events have their own places).
MAX_PARALLEL = 4
BUSY_WAIT_S = 10.0
MAX_LAW_CHARS = 100
#: Citations listed in one check's answer; counts and NHSR cover them all.
MAX_LISTED = 200
HIT_KEYS = "law article article_label text score relevance exact version in_force repeal".split()
_json = partial(json.dumps, ensure_ascii=False)
_ARTICLE = re.compile(rf"第?\s*({NUMERAL})\s*条?\s*(?:之\s*({NUMERAL}))?")


def _description(fn, domains: str = "") -> str:
    """The tool's docstring without its Args (MCP lists those with each parameter), lines kept; ``{domains}``
    becomes the domain table's list (``assets``' domains file: the count is never written here)."""
    doc = (inspect.getdoc(fn) or "").replace("{domains}", domains)
    head, _, rest = doc.partition("\nArgs:")
    return head.strip() + "\n\n" + rest[rest.find("Returns:") :].strip() if rest else doc


def _article_number(article: object) -> tuple[int, int]:
    """``第一千零八十七条``, ``1087``, ``1087条`` or ``第133条之一`` → (number, suffix); gr.Error otherwise."""
    m = _ARTICLE.fullmatch(str(article).strip()) if isinstance(article, str | int) else None
    try:
        number, suffix = chinese_to_int(m.group(1)), chinese_to_int(m.group(2)) if m.group(2) else 0
    except (AttributeError, ValueError):  # no match, or not a numeral
        number = 0
    if number < 1:
        raise gr.Error(
            f"article {str(article)[:40]!r} is not an article number: write 第一千零八十七条, 1087 or 133之一"
        )
    return number, suffix


def _missing(message: str, close_names: list[str] | None = None) -> dict:
    return {"found": False, "message": message, "close_names": close_names or []}


def _article_entry(art: Article, db: StatuteDB) -> dict:
    entry = {"found": True, **art.as_dict(), "in_force_from": art.law.effective, "in_force": art.law.in_force}
    if not art.law.in_force:
        entry["repeal"] = db.repeal_note(art.law.key) or "已废止 repealed"
    return entry


@dataclass(frozen=True)
class StatuteTools:
    """The app's shared, read-only services, and the four tools over them."""

    db: StatuteDB
    searcher: StatuteSearcher
    checker: CitationChecker
    domains: Domains
    receptionist: Receptionist | None = None
    slots: threading.BoundedSemaphore = field(
        default_factory=lambda: threading.BoundedSemaphore(MAX_PARALLEL), repr=False
    )

    @contextlib.contextmanager
    def _slot(self):
        if not self.slots.acquire(timeout=BUSY_WAIT_S):
            raise gr.Error("服务器繁忙，请稍后再试。The server is busy; try again in a moment.")
        try:
            yield
        finally:
            self.slots.release()

    def lookup_statute(self, law: str, article: str, as_of: str = "") -> str:
        """Get the text of one article of a Chinese law or regulation from LawLuo's statute database (65,710 articles of current and older versions), by law name and article number. Without as_of it gives the newest version that has the article; with as_of the version in force on that day. The answer names the version (its date) and the day it took effect. When the law or article is not in the database it says so and names the closest law names.

        Args:
            law: name of the law, full or short, e.g. "民法典", "中华人民共和国劳动合同法", "刑法" (at most 100 characters).
            article: article number, e.g. "第一千零八十七条", "1087", "1087条" or "133之一".
            as_of: optional day YYYY-MM-DD (e.g. "2019-06-01"): the version in force that day; empty for the newest.

        Returns:
            A JSON object. Found: {"found": true, "law", "article", "article_label", "version" (version date), "in_force_from", "current", "in_force", "text", "as_of", "note", and "repeal" when the law is no longer in force}. Not found: {"found": false, "message", "close_names"}. Bad input (empty law, not an article number, not a date) is an error message.
            Example: lookup_statute(law="民法典", article="1087") → {"found": true, "law": "中华人民共和国民法典", "article": 1087, "article_label": "第一千零八十七条", "version": "2020-05-28", "in_force_from": "2021-01-01", "text": "离婚时，夫妻的共同财产由双方协议处理…"}.
        """
        if not isinstance(law, str) or not law.strip():
            raise gr.Error("law is empty: name a law, e.g. 民法典 or 中华人民共和国劳动合同法")
        law = law.strip()
        if len(law) > MAX_LAW_CHARS:
            raise gr.Error(f"law has {len(law):,} characters; a law's name has at most {MAX_LAW_CHARS}")
        number, suffix = _article_number(article)
        try:
            day = _as_of(as_of)
        except QueryError as exc:
            raise gr.Error(str(exc)) from None
        with self._slot():
            out = self._lookup(law, number, suffix, day)
        return _json({**out, "as_of": day})

    def _lookup(self, law: str, number: int, suffix: int, day: str | None) -> dict:
        db, label = self.db, article_label(number, suffix)
        res = db.resolve(law)
        if res.key is None and res.repeal is not None:
            name, note = res.repeal.name, db.repeal_note(res.repeal.key) or "已废止"
            return _missing(
                f"《{name}》{note}；本库没有它的条文。 · {name} is no longer in force; its text is not here."
            )
        if res.key is None:
            close = self.close_names(law)
            also = f"; closest names: {'、'.join(close)}" if close else ""
            return _missing(
                f"没有找到名为《{law}》的法律。 · No law named {law} is in the database{also}.", close
            )
        name = db.current(res.key).name
        if day is not None:
            versions = [v] if (v := db.version_in_force(res.key, day)) else []
            if not versions:
                why = (
                    "the database lacks that version" if db.existed_on(res.key, day) else "not in force then"
                )
                return _missing(
                    f"《{name}》没有 {day} 有效的版本。 · No version of {name} in force on {day}: {why}."
                )
        else:  # the version named in the law's name (公司法(2018年修正)), else the newest that has it
            versions = [v for v in db.versions(res.key) if v.version == res.version] or db.versions(res.key)
        art = next((a for v in versions if (a := db.article(v, number, suffix)) is not None), None)
        if art is None:
            which = f"the version in force on {day}" if day else "any version in the database"
            return _missing(f"《{name}》没有{label}。 · {name} has no article {number} in {which}.")
        return {**_article_entry(art, db), "note": res.note}

    def close_names(self, law: str, n: int = 5) -> list[str]:
        """The current names of the ``n`` laws whose names are closest to ``law`` (difflib's ratio)."""
        names = {self.db.current(key).name for key in set(self.db.aliases.values()) if self.db.current(key)}
        short = {name.removeprefix("中华人民共和国"): name for name in names}
        found = difflib.get_close_matches(law.removeprefix("中华人民共和国"), list(short), n=n, cutoff=0.4)
        return [short[name] for name in found]

    def search_statutes(self, query: str, k: int = 5, domain: str = "") -> str:
        """Find the Chinese statute articles that best answer a legal question or keywords (BM25 with a dense e5 first stage and a learned reranker over 65,710 articles). An article named by law and number in the query (e.g. "劳动合同法第82条") comes first. Each hit has a calibrated relevance: the chance a lawyer would cite it for this question, not a statement that it applies to the client's case.

        Args:
            query: the question or keywords in Chinese, e.g. "公司拖欠工资怎么办" or "试用期 解除劳动合同" (cut to 2,000 characters).
            k: how many articles, 1 to 20 (default 5; outside that range it is clamped).
            domain: optional consultation domain id or Chinese name (e.g. "labor" or "劳动纠纷", see route_question) whose preferred laws are ranked higher; empty for none.

        Returns:
            A JSON object {"query", "k", "domain", "hits": [{"law", "article", "article_label", "text", "score", "relevance", "exact", "version", "in_force", "repeal"}], "notices"}; notices say when a named law is repealed or unknown. An empty query or unknown domain is an error message.
            Example: search_statutes(query="公司拖欠工资三个月", k=3) → {"hits": [{"law": "中华人民共和国劳动合同法", "article": 30, "text": "用人单位应当按照劳动合同约定和国家规定，向劳动者及时足额支付劳动报酬…", "relevance": 0.21, …}, …]}.
        """
        try:
            query = clean_query(query)
        except QueryError as exc:
            raise gr.Error(str(exc)) from None
        size = _clamp_k(k)
        chosen = None
        if isinstance(domain, str) and domain.strip():
            try:
                chosen = self.domains[domain.strip()]
            except KeyError:
                raise gr.Error(
                    f"unknown domain {domain.strip()[:40]!r}; domains: {', '.join(self.domains.ids)}"
                ) from None
        with self._slot():
            hits = (
                retrieve_statutes(self.searcher, chosen, query, size)
                if chosen
                else [h.as_dict() for h in self.searcher.search(query, size)]
            )
            notices = [m for x in self.searcher.lookup(query) if (m := x.message())]
        if size != k or not isinstance(k, int):
            notices.append(f"k must be 1–20; {size} articles were returned")
        hits = [{key: hit.get(key) for key in HIT_KEYS} for hit in hits]
        return _json(
            {"query": query, "k": size, "domain": chosen and chosen.id, "hits": hits, "notices": notices}
        )

    def check_citations(self, text: str, as_of: str = "") -> str:
        """Check every statute citation in a Chinese legal text (a model's answer, a memo, a judgment) against the real statute database, as `python -m lawluo check` does. Each citation gets a verdict: verified (law in force, article exists, quoted content agrees), wrong_number (the content belongs to another article), content_mismatch, not_found, repealed, outdated_version, amended_since, no_content (name and number only). A verdict says what was checked, never that the article applies to a case.

        Args:
            text: the text to check, e.g. "根据《民法典》第一千零八十七条规定：“离婚时，夫妻的共同财产由双方协议处理…”" (cut to 200,000 characters).
            as_of: optional day the text was written, YYYY-MM-DD: each citation is judged against the version in force that day; empty for today's law.

        Returns:
            A JSON object {"as_of", "nhsr" (share of content-bearing citations not hallucinated, or null), "counts" (per verdict), "citations": [{"law", "article", "article_label", "written", "verdict", "label" (Chinese badge), "meaning" (plain English), "content_kind", "quoted", "note", "matched" (the article it was compared with, with its text), "span"}], "notices"}. At most 200 citations are listed. Empty text or a bad date is an error message.
            Example: check_citations(text="《民法典》第一千零八十八条规定：离婚时，夫妻的共同财产由双方协议处理") → {"nhsr": 0.0, "citations": [{"article": 1088, "verdict": "wrong_number", "label": "条号错误", "meaning": "the content belongs to another article of this law", …}]}.
        """
        with self._slot():
            out = check_answer_json(self.checker, text, as_of)
        error = out.pop("error")
        if error:
            raise gr.Error(error)
        citations = out["citations"]
        for c in citations:
            row = verdict(c["verdict"])
            c.update(label=row.label_zh, meaning=row.meaning)
        if len(citations) > MAX_LISTED:
            out["notices"].append(f"{len(citations):,} citations; the first {MAX_LISTED} are listed")
            out["citations"] = citations[:MAX_LISTED]
        return _json(out)

    def route_question(self, question: str) -> str:
        """Route a client's legal question to one of LawLuo's consultation domains ({domains}), as the firm's receptionist does. Below a confidence threshold the question goes to 其他 (other) with fallback true.

        Args:
            question: the client's question in Chinese, e.g. "公司拖欠我三个月工资怎么办" (at most 4,000 characters).

        Returns:
            A JSON object {"domain" (id), "name" (Chinese), "confidence" (probability of the best domain), "fallback", "top": [{"domain", "name", "p"}] (the three best), "scores" (probability of each domain)}. An empty or too long question is an error message.
            Example: route_question(question="公司拖欠我三个月工资怎么办") → {"domain": "labor", "name": "劳动纠纷", "confidence": 0.47, "fallback": false, …}.
        """
        if self.receptionist is None:
            raise gr.Error("接待模型不可用 the receptionist is not available on this server (see its log)")
        if isinstance(question, str) and len(question) > MAX_QUESTION_CHARS:
            raise gr.Error(too_long_message(len(question)))
        with self._slot():
            try:
                routing = self.receptionist.classify(question)
            except ValueError as exc:
                raise gr.Error(str(exc)) from None
        out = routing.as_dict()
        out.pop("laws", None)
        return _json(out)


def build_mcp_tools(
    settings, db: StatuteDB, searcher: StatuteSearcher, checker: CitationChecker, firm=None
) -> StatuteTools | None:
    """Register the four tools as API endpoints of the enclosing ``gr.Blocks`` (``/mcp_<tool>``; the MCP
    tools take the methods' names) when the setting ``mcp_server`` is on; otherwise register nothing.
    ``firm``: the app's :class:`~lawluo.firm.Firm` (its receptionist and domains), or None when it could
    not be loaded (route_question then says so)."""
    if not settings.mcp_server:
        return None
    if settings.annotation_users:
        logger.warning(
            "mcp_server: Gradio's MCP endpoint is not behind the sign-in; anyone may call the tools"
        )
    domains = firm.domains if firm is not None else load_domains(settings.domains_file)
    tools = StatuteTools(db, searcher, checker, domains, firm.receptionist if firm is not None else None)
    # Gradio warns of the page's events with a gr.State input: they are no tools here (only_statute_tools).
    warnings.filterwarnings("ignore", "This MCP server includes a tool that has a gr.State input")
    listed = ", ".join(f"{d.name} {d.id}" for d in domains)
    for name in TOOL_NAMES:  # queue=False: Gradio's MCP fast path calls the function directly
        fn = getattr(tools, name)
        gr.api(fn, api_name=f"mcp_{name}", api_description=_description(fn, listed), queue=False)
    return tools


@contextlib.asynccontextmanager
async def only_statute_tools(app):
    """A lifespan for ``launch(app_kwargs=…)``: once the server starts, Gradio's MCP server (when there is
    one) offers the four tools alone (every public event of the page would otherwise be a tool)."""
    server = getattr(app.get_blocks(), "mcp_server_obj", None)
    if server is not None:
        server.tool_to_endpoint = {
            tool: endpoint
            for tool, endpoint in server.tool_to_endpoint.items()
            if tool.removeprefix(server.tool_prefix) in TOOL_NAMES and endpoint.startswith("/mcp_")
        }
    yield
