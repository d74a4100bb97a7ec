"""The one schema a saved consultation must match before anything in it is used.

A saved consultation comes back from a visitor's disk (the tab's 恢复 Resume, ``lawluo consult
--resume``): every value in it is untrusted. :func:`validate_saved` checks the whole object against
the models below — ids and numbers against their patterns, statuses, roles, marks, verdicts and
domains against their vocabularies, numbers against their ranges, every string and list against a
size — and raises :class:`SavedConsultationError` naming the first bad field. Nothing read from the
file is used to build a path (download names come from server-side values), and a value the
renderers rely on (a boss score, a tree node's parent) has the type they expect.

    data = validate_saved(loads_saved(text))    # the same dict, or SavedConsultationError
    data = validate_saved(obj, domains=table)   # domains checked against the settings' table

:func:`loads_saved` parses the text only after :func:`check_depth` has found its arrays and objects
nested at most :data:`MAX_DEPTH` deep: ``json.loads`` recurses once per level, and a file of 200,000
``[`` made it raise ``RecursionError`` (not a ``ValueError``: the page showed a bare "Error").

Domain ids are checked against the domain table given (default: the packaged one), so a consultation
of a domain added to the settings' table resumes under that table.
"""

from __future__ import annotations

import json
import re
from enum import StrEnum
from itertools import accumulate
from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    ValidationInfo,
    model_validator,
)

from ..agents.answer_check import HOLD_REASONS
from ..agents.report_check import MAX_WARNINGS
from ..domains import PACKAGED, Domains
from ..law.checker import VERDICTS
from ..tolc.builder import MAX_HEIGHT, MAX_K
from ..tolc.tree import FALLBACK_REASONS, MARKS, NODE_SOURCES, ROOT_ID

STATE_VERSION = 1
#: The deepest nesting of arrays and objects a saved consultation may have. The schema's deepest path is
#: 7 (consultation → turns → turn → cases → case → articles → article); the rest is room.
MAX_DEPTH = 32


class Status(StrEnum):
    """Where a consultation is (LawLuo paper §3.2): asked nothing yet; a clarification tree out for the
    client to mark; the latest question answered; closed with a report. A ``str``: it saves as its value."""

    NEW = "new"
    CLARIFYING = "clarifying"
    ANSWERED = "answered"
    CLOSED = "closed"


STATUSES = tuple(s.value for s in Status)
MAX_TURN_CHARS = 4000  # a client's turn (longer questions are cut when received)
MAX_ANSWER_CHARS = 60_000
MAX_TURNS = 200
MAX_TRACE = 3000
MAX_NODES = 1 + sum(MAX_K**d for d in range(1, MAX_HEIGHT))  # a full tree of the largest size
CONSULTATION_ID = r"^[0-9a-f]{12}$"
REPORT_NUMBER = r"^LL-\d{8}-[0-9A-F]{6}$"
NODE_ID = r"^(0|[1-9]\d{0,2}(\.[1-9]\d{0,2}){0,5})$"


def _text(limit: int) -> type[str]:
    return Annotated[str, StringConstraints(max_length=limit)]


Short = _text(200)
Line = _text(10_000)
Long = _text(MAX_ANSWER_CHARS)
Unit = Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)]
Finite = Annotated[float, Field(allow_inf_nan=False)]
ArticleNumber = Annotated[int, Field(ge=0, le=100_000)]


def _known_domain(value: str, info: ValidationInfo) -> str:
    """A domain id of the table in the validation context (the packaged table without one)."""
    table: Domains = (info.context or {}).get("domains", PACKAGED)
    if value not in table.ids:
        raise ValueError(
            f"{_short(value)} is not a domain of {table.source.name}; domains: {', '.join(table.ids)}"
        )
    return value


DomainId = Annotated[str, StringConstraints(max_length=40), AfterValidator(_known_domain)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class _SavedArticle(_Strict):
    """An article of the database as ``Article.as_dict()`` writes it."""

    law: Short
    article: ArticleNumber
    article_label: Short
    version: Short | None = None
    current: bool = True
    text: Long


class SavedFit(_Strict):
    """Whether a retrieved article passed the bar of what the page shows (``statute_fit.Fit.as_dict()``)."""

    passes: bool
    part: Line = ""
    words: Annotated[list[Short], Field(max_length=50)] = []
    reason: Short = ""


class SavedStatute(_SavedArticle):
    """A retrieved article (``StatuteHit.as_dict()``, plus ``preferred`` and ``confirmed`` from the lawyer's
    retrieval)."""

    in_force: bool = True
    level: Short | None = None
    score: Finite
    preferred: bool = False
    exact: bool = False
    repeal: Line = ""
    relevance: Annotated[float, Field(ge=0.0, le=1.0)] | None = None  # calibrated (retrieval/relevance.py)
    confirmed: bool = False  # one of the articles of the elements the client confirmed (Firm.retrieve)
    fit: SavedFit | None = None  # the bar of what the page shows (retrieval/statute_fit.py)


class SavedCase(_Strict):
    """A retrieved case (``CaseHit.as_dict()``)."""

    id: Short
    source: Short
    title: Line
    cause: Line
    domain_hint: Short
    facts: Long
    outcome: Long = ""
    articles: Annotated[list[dict[Short, Short | int]], Field(max_length=100)] = []
    sentence: Short = ""
    score: Finite


class SavedMatch(_SavedArticle):
    """The article the checker matched a citation's content to, with its agreement score."""

    score: Finite | None = None


class SavedCitation(_Strict):
    """One checked citation (``Checked.as_dict()``)."""

    law: Short | None = None
    article: ArticleNumber | None = None
    article_label: Short | None = None
    written: Line = ""
    verdict: Literal[VERDICTS]  # type: ignore[valid-type]
    quoted: Long = ""
    content_kind: Short = ""
    matched: SavedMatch | None = None
    note: Line = ""
    span: Annotated[list[Annotated[int, Field(ge=0)]], Field(min_length=2, max_length=2)]


class SavedScore(_Strict):
    """The boss's :class:`~lawluo.agents.boss.Score`."""

    p_better: Unit
    raw: Finite | None = None
    method: Literal["reward_model", "judge"]
    note: Line = ""


class SavedTurn(_Strict):
    role: Literal["client", "lawyer"]
    text: Long
    citations: Annotated[list[SavedCitation], Field(max_length=200)] = []
    nhsr: Unit | None = None
    score: SavedScore | None = None
    statutes: Annotated[list[SavedStatute], Field(max_length=50)] = []
    cases: Annotated[list[SavedCase], Field(max_length=50)] = []
    note: Line = ""
    held_back: Literal["", *HOLD_REASONS] = ""  # type: ignore[valid-type]

    @model_validator(mode="after")
    def _client_turn_size(self) -> SavedTurn:
        if self.role == "client" and len(self.text) > MAX_TURN_CHARS:
            raise ValueError(f"a client's turn has at most {MAX_TURN_CHARS} characters")
        return self


class SavedNode(_Strict):
    id: Annotated[str, StringConstraints(pattern=NODE_ID)]
    parent: Annotated[str, StringConstraints(pattern=NODE_ID)] | None
    depth: Annotated[int, Field(ge=0, le=MAX_HEIGHT - 1)]
    statement: _text(MAX_TURN_CHARS)
    case_ids: Annotated[list[Short], Field(max_length=20)] = []
    mark: Literal[MARKS] = "unknown"  # type: ignore[valid-type]
    source: Literal["", *NODE_SOURCES] = ""  # type: ignore[valid-type]
    fallback: Literal["", *FALLBACK_REASONS] = ""  # type: ignore[valid-type]


class SavedTree(_Strict):
    question: _text(MAX_TURN_CHARS)
    height: Annotated[int, Field(ge=2, le=MAX_HEIGHT)]
    k: Annotated[int, Field(ge=1, le=MAX_K)]
    nodes: Annotated[list[SavedNode], Field(min_length=1, max_length=MAX_NODES)]
    source: Literal["model", "material", "cases"] = "model"  # tolc.tree.TREE_SOURCES
    notes: Annotated[list[Line], Field(max_length=100)] = []
    complete: bool = False
    failures: Annotated[int, Field(ge=0, le=MAX_NODES)] = 0
    issue: Short = ""  # the statute entry chosen in the 问题类型 menu; an unknown one only selects nothing
    drawn_from: Short = ""  # the domain the elements were drawn from when not the tree's own (soft routing)

    @model_validator(mode="after")
    def _shape(self) -> SavedTree:
        """The root first; every other node under one seen before it, one level deeper, named by its path."""
        root = self.nodes[0]
        if root.id != ROOT_ID or root.parent is not None or root.depth != 0:
            raise ValueError("the tree's first node must be the root (id '0', no parent, depth 0)")
        depth = {ROOT_ID: 0}
        for node in self.nodes[1:]:
            if node.id in depth:
                raise ValueError(f"node {node.id} appears twice")
            if node.parent not in depth:
                raise ValueError(f"node {node.id} comes before its parent {node.parent}")
            expected = node.id.rpartition(".")[0] or ROOT_ID
            if node.parent != expected or node.depth != depth[node.parent] + 1:
                raise ValueError(f"node {node.id} is not a child of {node.parent}")
            depth[node.id] = node.depth
        return self


class SavedRouting(_Strict):
    domain: DomainId
    name: Short
    confidence: Unit
    fallback: bool = False
    top: list[dict[Short, Short | Unit]] = []
    scores: dict[DomainId, Unit] = {}

    @model_validator(mode="after")
    def _top_within_scores(self, info: ValidationInfo) -> SavedRouting:
        table: Domains = (info.context or {}).get("domains", PACKAGED)
        if len(self.top) > len(table):
            raise ValueError(f"a routing's top lists at most the {len(table)} domains")
        return self


class SavedCitedStatute(_Strict):
    """A statute the report lists (``CitedStatute``): as cited, its verdict, the matched article and text."""

    citation: Line
    verdict: Literal[VERDICTS]  # type: ignore[valid-type]
    article: Line = ""
    text: Long = ""


class SavedReport(_Strict):
    number: Annotated[str, StringConstraints(pattern=REPORT_NUMBER)]
    date: Short
    client: Short
    subject: Long
    purpose: Long
    facts: Long
    analysis: Long
    advice: Annotated[list[Long], Field(max_length=100)]
    risks: Annotated[list[Long], Field(max_length=100)]
    generated_by: Short
    notice: Line = ""
    warnings: Annotated[list[Long], Field(max_length=MAX_WARNINGS)] = []  # report_check's, above the sections
    confirmed: Annotated[list[_text(MAX_TURN_CHARS)], Field(max_length=MAX_NODES)] = []
    denied: Annotated[list[_text(MAX_TURN_CHARS)], Field(max_length=MAX_NODES)] = []
    statutes: Annotated[list[SavedCitedStatute], Field(max_length=MAX_TURNS * 100)] = []


class SavedTraceEvent(_Strict):
    agent: Short
    action: Short
    summary: Line
    duration_ms: Annotated[float, Field(ge=0, allow_inf_nan=False)]
    ok: bool = True
    at: Short = ""
    kind: Literal["", "reroute", "override"] = ""


class SavedConsultation(_Strict):
    client: Short = ""
    id: Annotated[str, StringConstraints(pattern=CONSULTATION_ID)]
    created: Short
    status: Literal[STATUSES]  # type: ignore[valid-type]
    domain: DomainId | None = None
    routing: SavedRouting | None = None
    turns: Annotated[list[SavedTurn], Field(max_length=MAX_TURNS)] = []
    tree: SavedTree | None = None
    report: SavedReport | None = None
    report_score: SavedScore | None = None
    trace: Annotated[list[SavedTraceEvent], Field(max_length=MAX_TRACE)] = []
    as_of: Annotated[str, StringConstraints(pattern=r"^\d{4}-\d{2}-\d{2}$")] | None = None
    version: Literal[STATE_VERSION]  # type: ignore[valid-type]

    @model_validator(mode="after")
    def _consistent(self) -> SavedConsultation:
        if self.status == "closed" and self.report is None:
            raise ValueError("a closed consultation has a report")
        if self.status != "new" and not self.turns:
            raise ValueError(f"a consultation with status {self.status!r} has turns")
        return self


class SavedConsultationError(ValueError):
    """A saved consultation that does not match the schema; the message names the field."""


#: A JSON string literal (RFC 8259 §7), its escapes included: what the depth scan skips. The closing quote
#: is optional, so that a match never fails once started (an unterminated string runs to the end, as
#: ``json.loads`` reads it): one pass, where a required quote made ``"\"\"\"…`` take quadratic time.
_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?', re.S)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_DEPTH_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


def nesting_depth(text: str) -> int:
    """How deep ``text``'s JSON arrays and objects nest, brackets inside strings not counted: string
    literals are cut out, then the brackets left are summed (C loops only: a 2 MB file takes
    milliseconds, and nothing recurses). Strings are delimited as ``json.loads`` delimits them, so it never
    goes deeper than this count before it stops at an error.

    >>> nesting_depth('{"a": [1, {"b": "[[[\\"]]"}]}'), nesting_depth("[" * 200_000)
    (3, 200000)
    """
    brackets = _NOT_BRACKET.sub("", _JSON_STRING.sub("", text))
    return max(accumulate(map(_DEPTH_STEP.__getitem__, brackets)), default=0)


def check_depth(text: str, limit: int = MAX_DEPTH) -> None:
    """Raises :class:`SavedConsultationError` when ``text`` nests arrays and objects over ``limit`` deep."""
    depth = nesting_depth(text)
    if depth > limit:
        shown = f"{depth:,}" if depth < 10**6 else "over 1,000,000"
        raise SavedConsultationError(
            f"文件中的数组和对象嵌套了 {shown} 层，保存的咨询最多 {limit} 层。"
            f"saved consultation nests arrays and objects {shown} deep; at most {limit} are allowed"
        )


def loads_saved(text: str) -> object:
    """``json.loads(text)`` once :func:`check_depth` has passed; raises :class:`SavedConsultationError`
    for nesting over :data:`MAX_DEPTH`, ``json.JSONDecodeError`` (a ``ValueError``) for text that is not
    JSON."""
    check_depth(text)
    return json.loads(text)


def validate_saved(data: object, domains: Domains = PACKAGED) -> dict:
    """``data`` checked against :class:`SavedConsultation`, its domain ids against ``domains``; raises
    :class:`SavedConsultationError`."""
    if not isinstance(data, dict):
        raise SavedConsultationError("a saved consultation is a JSON object")
    if data.get("version") != STATE_VERSION:
        raise SavedConsultationError(
            f"saved consultation has version {_short(data.get('version'))}; this LawLuo reads {STATE_VERSION}"
        )
    try:
        SavedConsultation.model_validate(data, context={"domains": domains})
    except ValidationError as exc:
        raise SavedConsultationError(_describe(exc)) from None
    return data


def _describe(exc: ValidationError) -> str:
    """The first problem in words: unknown fields first (a file from elsewhere), then wrong values, then
    missing ones."""
    order = {"extra_forbidden": 0, "missing": 2}
    errors = sorted(exc.errors(), key=lambda e: order.get(e["type"], 1))
    first = errors[0]
    where = ".".join(str(part) for part in first["loc"]) or "the file"
    if first["type"] == "extra_forbidden":
        return f"saved consultation has unknown field(s) {where}"
    shown = f" {_short(first['input'])}" if first["type"] == "literal_error" else ""
    more = f" (and {len(errors) - 1} more problem(s))" if len(errors) > 1 else ""
    return f"saved consultation is malformed at {where}{shown}: {first['msg']}{more}"


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "…"
