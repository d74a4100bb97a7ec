"""Scripted consultations: the client's turns and Yes/No marks in a JSON file, run through the firm.

    {
      "client": "张先生",
      "turns": [
        {"text": "我在公司干了两年一直没签劳动合同，现在被辞退了怎么办？",
         "marks": {"1": "yes", "2": "no"}, "default_mark": "unknown"},
        {"text": "那我可以要求二倍工资吗？", "clarify": false}
      ],
      "report": true
    }

``clarify`` (default: true for the first turn, false after) builds a clarification tree before the
answer; ``marks`` name nodes by id ("1", "1.2", …: see :mod:`lawluo.tolc.tree`) and ``default_mark``
is given to every other visible element in breadth-first order (``"no"`` = a client who denies
everything). ``python -m lawluo consult --script FILE.json`` prints the result as JSON.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, ValidationError

from .firm import Firm
from .state import Consultation

Mark = Literal["yes", "no", "unknown"]


class ScriptTurn(BaseModel, extra="forbid"):
    text: str = Field(min_length=1)
    clarify: bool | None = None
    marks: dict[str, Mark] = Field(default_factory=dict)
    default_mark: Mark = "unknown"


class Script(BaseModel, extra="forbid"):
    client: str = ""
    turns: list[ScriptTurn] = Field(min_length=1)
    report: bool = True


def load_script(path: str | Path) -> Script:
    """The script in ``path``; ``ValueError`` naming the problem (file, JSON, or which field)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: cannot read the script ({exc})") from None
    try:
        return Script.model_validate_json(text)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or '(top level)'}: {e['msg']}" for e in exc.errors()[:5]
        )
        raise ValueError(f"{path}: not a valid consultation script: {problems}") from None


def run_script(firm: Firm, script: Script, state: Consultation | None = None) -> Consultation:
    """Play ``script`` against ``firm`` (continuing ``state`` when given) and return the consultation."""
    state = state or firm.new(client=script.client)
    for index, turn in enumerate(script.turns):
        firm.receive(state, turn.text)
        clarify = turn.clarify if turn.clarify is not None else (index == 0 and state.tree is None)
        if clarify:
            for _ in firm.clarify(state):
                pass
            apply_marks(firm, state, turn.marks, turn.default_mark)
        for _ in firm.answer(state):
            pass
    if script.report:
        firm.close(state)
    return state


def apply_marks(firm: Firm, state: Consultation, marks: dict[str, str], default: str) -> None:
    ids = {n.id for n in state.tree.elements}
    unknown = sorted(set(marks) - ids)
    if unknown:
        raise ValueError(
            f"marks name node(s) {', '.join(unknown)} not in the tree; nodes: {', '.join(sorted(ids))}"
        )
    for node_id, value in marks.items():
        firm.mark(state, node_id, value)
    if default != "unknown":
        for node in state.tree.elements:  # breadth-first: a "no" prunes before its children are reached
            if node.id not in marks and not state.tree.pruned(node.id):
                firm.mark(state, node.id, default)


def transcript(state: Consultation) -> dict:
    """What ``lawluo consult`` prints: the routing, the turns with verdicts, the tree, the report, the trace."""
    return {
        "id": state.id,
        "routing": state.routing,
        "transcript": [
            {
                "role": t.role,
                "text": t.text,
                **({"note": t.note} if t.note else {}),
                **({"held_back": t.held_back} if t.held_back else {}),
                **(
                    {
                        "nhsr": t.nhsr,
                        "citations": [{k: c[k] for k in ("written", "verdict")} for c in t.citations],
                    }
                    if t.role == "lawyer"
                    else {}
                ),
                **({"score": t.score} if t.score else {}),
            }
            for t in state.turns
        ],
        "tree": state.tree.to_dict() if state.tree else None,
        "report": state.report,
        "report_score": state.report_score,
        "trace": [asdict(e) for e in state.trace],
    }
