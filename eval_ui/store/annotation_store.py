"""The :class:`AnnotationStore`: one SQLite file, its parts (items, accounts, assignment, labels, drafts,
adjudication, tables, exports) each in its own module of :mod:`eval_ui.store`.

Each part is a mixin class of methods (``LabelsMixin`` in ``labels.py``…) on the connection pool and
transactions of :class:`~eval_ui.store.connection.Connections`; a part calls another's methods through
``self`` (a draft is validated with the labels' ``_swapped``, an export logged with the audit's
``record``). The state they share is set here, in :meth:`AnnotationStore.__init__`.
"""

from __future__ import annotations

import math
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from .accounts import AccountsMixin
from .adjudication import AdjudicationMixin
from .assignment import ASSIGNMENT_MODES, AssignmentMixin
from .audit import AuditMixin
from .connection import Connections
from .drafts import DraftsMixin
from .errors import StoreError
from .export import ExportMixin
from .frames import FramesMixin
from .items import ItemsMixin
from .labels import LabelsMixin
from .schema import MIGRATIONS, Migration


class AnnotationStore(
    Connections,
    ItemsMixin,
    AccountsMixin,
    AuditMixin,
    AssignmentMixin,
    LabelsMixin,
    DraftsMixin,
    AdjudicationMixin,
    FramesMixin,
    ExportMixin,
):
    """Items, annotators, assignments and labels in one SQLite file (WAL, ``synchronous=FULL``).

    Safe to share between threads (every operation checks a connection out of a pool and returns it;
    at most :data:`POOL_SIZE` idle ones stay open, however many threads have used the store) and to
    open from several processes at once (each process opens its own ``AnnotationStore``).
    ``migrations`` exists for tests of the upgrade path; the app always uses :data:`MIGRATIONS`.

    ``reserve_idle_s``: an assignment its annotator has not touched (no label, not shown, not skipped) for
    that many seconds is a stale reservation that :meth:`assign` may give to someone else (0: never).
    ``clock`` (seconds since the epoch, default :func:`time.time`) is every timestamp the store writes;
    tests pass a fake one.

    ``assignment`` (:data:`ASSIGNMENT_MODES`) is the serving order of :meth:`next_item`. ``cited``
    (item id, side ``a``/``b``) → the statute keys that answer cites: the citation checker's list, given
    by :class:`eval_ui.service.AnnotationService`; the store itself has no checker. It is what "none of
    these is wrong" confirms and what the frames list as unlabelled; without it only labelled statutes
    are known.
    """

    def __init__(
        self,
        path: str | Path,
        migrations: Sequence[Migration] = MIGRATIONS,
        *,
        assignment: str = "overlap_first",
        cited: Callable[[str, str], Sequence[str]] | None = None,
        reserve_idle_s: float = 0.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if assignment not in ASSIGNMENT_MODES:
            raise StoreError(
                f"分配方式 assignment {assignment!r} is not one of {', '.join(ASSIGNMENT_MODES)}"
            )
        if isinstance(reserve_idle_s, bool) or not (0 <= reserve_idle_s < math.inf):
            raise StoreError(f"reserve_idle_s must be a number of seconds >= 0, got {reserve_idle_s!r}")
        self.assignment_mode, self.cited = assignment, cited
        self.reserve_idle_s, self._clock = float(reserve_idle_s), clock
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._idle: list[sqlite3.Connection] = []  # connections of process ``_pid`` nobody is using
        self._pid = os.getpid()
        self._closed = False
        try:
            self._migrate(tuple(migrations))
        except BaseException:
            self.close()
            raise
