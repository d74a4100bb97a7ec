"""One consultation's state: a serialisable, deep-copyable dataclass (kept in ``gr.State`` by the UI).

Everything that happened is in it — the routing, the turns with the verdicts of the statutes each
answer cites and the boss's score, the clarification tree with the client's marks, the report, and a
trace of every step — so a consultation can be saved as JSON and resumed exactly where it stopped.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime

from ..domains import PACKAGED, Domains
from ..tolc import Tree
from .saved import STATE_VERSION, Status, loads_saved, validate_saved


@dataclass
class Turn:
    role: str  # "client" | "lawyer"
    text: str
    citations: list[dict] = field(default_factory=list)  # the checker's verdict per cited statute
    nhsr: float | None = None
    score: dict | None = None  # the boss's Score of this answer
    statutes: list[dict] = field(default_factory=list)  # statutes retrieved for this answer
    cases: list[dict] = field(default_factory=list)  # cases retrieved for this answer (shown without a model)
    note: str = ""  # why the answer is missing, partial or held back (interrupted stream, junk)
    #: Why the model's answer was held back (a key of agents.answer_check.HOLD_REASONS: empty, echo,
    #: no_chinese, cut); ``text`` is then the extract from the databases. "" for an answer shown as written.
    held_back: str = ""


#: What a trace event records beyond its agent and action, for the code that reads the trace (the
#: summary is for people): "" a plain step, "reroute" the receptionist moved the consultation to another
#: domain, "override" the client chose the domain.
TRACE_KINDS = ("", "reroute", "override")


@dataclass
class TraceEvent:
    agent: str
    action: str
    summary: str
    duration_ms: float
    ok: bool = True
    at: str = ""
    kind: str = ""  # one of TRACE_KINDS


@dataclass
class Consultation:
    client: str = ""
    id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    created: str = field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))
    status: Status = Status.NEW
    domain: str | None = None
    routing: dict | None = None
    turns: list[Turn] = field(default_factory=list)
    tree: Tree | None = None
    report: dict | None = None
    report_score: dict | None = None
    trace: list[TraceEvent] = field(default_factory=list)
    #: The date of the facts as the client gave it (YYYY-MM-DD): the answer's citations are judged against
    #: the statute book of that day; None — today's.
    as_of: str | None = None
    version: int = STATE_VERSION
    #: Digest of the browser cookie this consultation is bound to in the app (never saved; see
    #: :mod:`lawluo.ui.visitors`).
    owner: str | None = field(default=None, compare=False, repr=False)

    # -- views ------------------------------------------------------------------------------------
    @property
    def client_turns(self) -> list[str]:
        return [t.text for t in self.turns if t.role == "client"]

    @property
    def first_question(self) -> str:
        return self.client_turns[0] if self.client_turns else ""

    @property
    def confirmed(self) -> list[str]:
        return self.tree.confirmed() if self.tree else []

    @property
    def denied(self) -> list[str]:
        return self.tree.denied() if self.tree else []

    # -- JSON -------------------------------------------------------------------------------------
    def to_dict(self) -> dict:
        data = asdict(self)
        del data["owner"]  # who holds it in the app is not part of the consultation
        return data

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, indent=1)

    @classmethod
    def from_dict(cls, data: dict, domains: Domains = PACKAGED) -> Consultation:
        """A consultation from its JSON object, checked whole against :mod:`.saved`'s schema first (its
        domain against ``domains``, the table of the firm that resumes it)."""
        data = validate_saved(data, domains)
        values = dict(data)
        values["turns"] = [Turn(**t) for t in data.get("turns", [])]
        values["trace"] = [TraceEvent(**e) for e in data.get("trace", [])]
        values["tree"] = Tree.from_dict(data["tree"]) if data.get("tree") else None
        values["status"] = Status(data["status"])
        return cls(**values)

    @classmethod
    def from_json(cls, text: str, domains: Domains = PACKAGED) -> Consultation:
        try:
            data = loads_saved(
                text
            )  # over saved.MAX_DEPTH levels: SavedConsultationError before json recurses
        except json.JSONDecodeError as exc:
            raise ValueError(
                f"not a saved consultation: invalid JSON ({exc.msg} at line {exc.lineno})"
            ) from None
        return cls.from_dict(data, domains)
