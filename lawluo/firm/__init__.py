"""The firm: one consultation's state and the order in which the agents act (LawLuo paper §3.2)."""

from __future__ import annotations

from .firm import ConsultationClosed, Firm, StepNotAllowed
from .rules import Allowed
from .saved import Status
from .state import Consultation, TraceEvent, Turn

__all__ = [
    "Allowed",
    "Consultation",
    "ConsultationClosed",
    "Firm",
    "Status",
    "StepNotAllowed",
    "TraceEvent",
    "Turn",
]
