"""Answer many questions with the configured LawLuo pipeline (or a plain single-model baseline), so a
researcher can put LawLuo in the same table as other systems (``python -m lawluo generate``).

The pipeline per question is the consultation's: the receptionist routes it, statutes and cases are
retrieved for it, the domain lawyer answers (best-of-n with the boss when configured), and the
checker checks the answer's citations. The Tree of Legal Clarifications is not built: it needs a
client to answer Yes/No, and a batch has none (the paper's automatic evaluation answers directly too).
The baseline (``--baseline``) sends the question alone to the lawyer role's model: no role prompt,
no retrieval — the ablation of everything the firm adds.

Rows are appended to the output file as they complete, each as one whole line, fsynced
(:class:`lawluo.jsonl.JSONLAppender`), and questions the file already answers for the same system are
skipped: an interrupted run loses nothing, and running the same command again finishes it. When the
file cannot be written (a full disk, a read-only or failing one) the run stops at once with the
error in :attr:`BatchReport.write_error`, the part-written line cut back off; a last line that a crash
cut off anyway is dropped by the next run (:attr:`BatchReport.dropped` says so) and its question
answered again. A question that fails (a model error, an interrupted stream) is reported and not
written, so the next run retries it. So is an answer the firm holds back (empty, an echo of the prompt,
hardly any Chinese for a Chinese question, cut at ``max_tokens``: :mod:`lawluo.agents.answer_check`; the
baseline's answer is checked the same way against its one-message prompt): it fails as
:class:`HeldBack`, with its reason, counted per reason in :attr:`BatchReport.held_back`; the extract
the app would show in its place is not an answer of the system, so nothing is written for it.
"""

from __future__ import annotations

import contextvars
import itertools
import time
from collections import Counter, deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path

from lawluo.agents.answer_check import HOLD_REASONS, check_answer
from lawluo.config import ROLES
from lawluo.jsonl import JSONLAppender, JSONLError, drop_partial_last_line, read_jsonl, report
from lawluo.llm import AuthenticationFailed, LLMError, ModelUnavailable
from lawluo.llm.answer import reported_cut
from lawluo.llm.parallel import as_finished

from .firm import Firm, Retrieval
from .state import Consultation

MAX_QUESTION = 4_000
FATAL = (ModelUnavailable, AuthenticationFailed)


class GenerationFailed(RuntimeError):
    """The model did not produce a complete answer to one question."""


class HeldBack(GenerationFailed):
    """The model's answer failed the answer check; ``reason`` is a key of ``HOLD_REASONS``, ``detail`` the
    measured value behind it (``93% of its 120 distinct 6-grams are in the prompt …``)."""

    def __init__(self, reason: str, detail: str = "") -> None:
        words = detail or HOLD_REASONS[reason][1].format(limit="max_tokens")
        super().__init__(f"held back ({reason}): {words}")
        self.reason = reason


def read_questions(path: str | Path) -> list[tuple[str, str]]:
    """(id, question) per line of ``{"id", "question"}`` (or ``"text"``) objects; every bad line reported."""
    rows, errors, seen = [], [], set()
    for n, obj in read_jsonl(path):
        question = obj.get("question", obj.get("text"))
        qid = obj.get("id", n)
        if not isinstance(question, str) or not question.strip():
            errors.append(f'{path}:{n}: expected a non-empty "question" string')
        elif len(question) > MAX_QUESTION:
            errors.append(
                f"{path}:{n}: the question has {len(question):,} characters; the limit is {MAX_QUESTION:,}"
            )
        elif str(qid) in seen:
            errors.append(f"{path}:{n}: id {qid!r} appears twice")
        else:
            seen.add(str(qid))
            rows.append((str(qid), question.strip()))
    if errors:
        raise JSONLError(report(errors))
    if not rows:
        raise JSONLError(f"{path}: no questions in the file")
    return rows


def answered(out_path: str | Path, system: str) -> set[str]:
    """Ids the output file already answers for ``system`` (an unreadable file is an error, not overwritten)."""
    if not Path(out_path).exists() or Path(out_path).stat().st_size == 0:
        return set()
    return {str(obj.get("id")) for _, obj in read_jsonl(out_path) if obj.get("system") == system}


@dataclass
class BatchReport:
    written: int = 0
    skipped: int = 0
    failed: list[tuple[str, str]] = field(default_factory=list)
    seconds: float = 0.0
    stopped: str | None = None  # why the run stopped early, if it did
    write_error: OSError | None = None  # the output file could not be written: the run stopped
    dropped: str | None = None  # a cut-off last line of the output file that was dropped first
    held_back: Counter = field(default_factory=Counter)  # answers held back, per reason (also in failed)
    calls: int = 0  # model calls the run sent (every role's; a cache or retry inside a backend aside)


@dataclass
class BatchGenerator:
    firm: Firm
    system: str
    baseline: bool = False
    concurrency: int = 4

    def unavailable_reason(self) -> str | None:
        return self.firm.models["lawyer"].unavailable_reason()

    def roles(self) -> tuple[str, ...]:
        """The roles whose models answer a question: the lawyer, and for the pipeline the boss (best-of-n)."""
        return ("lawyer",) if self.baseline else ("lawyer", "boss")

    def calls(self) -> int:
        """Model calls sent so far by every role's backend (a backend shared by roles counted once)."""
        backends = {id(b): b for b in (self.firm.models[r] for r in ROLES)}
        return sum(b.sent for b in backends.values())

    def prepare(self, question: str) -> tuple[Consultation, Retrieval]:
        """The model-free part of a question's pipeline (routing, retrieval), done before its model calls
        (the baseline has none)."""
        state = self.firm.new()
        self.firm.receive(state, question)
        return state, self.firm.retrieve(state)

    def answer(self, qid: str, question: str, prepared: Future | None = None) -> dict:
        """One question's row; ``prepared`` is a future of :meth:`prepare` for it (run here when None)."""
        start = time.perf_counter()
        if self.baseline:
            text = self.firm.models["lawyer"].chat([{"role": "user", "content": question}])
            held = check_answer(text, question, question, cut_at=reported_cut(text))
            if held is not None:
                raise HeldBack(held.reason, held.detail)
            result = self.firm.checker.check(text)
            domain, nhsr, verdicts = None, result.nhsr, [c.verdict for c in result.citations]
        else:
            state, retrieval = prepared.result() if prepared is not None else self.prepare(question)
            for _ in self.firm.answer(state, retrieval=retrieval):
                pass
            turn = state.turns[-1]
            if turn.held_back:
                raise HeldBack(turn.held_back, _held_detail(state))
            if turn.note:
                raise GenerationFailed(turn.note)
            text, domain, nhsr = turn.text, state.domain, turn.nhsr
            verdicts = [c["verdict"] for c in turn.citations]
        if not text.strip():
            raise GenerationFailed("the model returned an empty answer")
        return {
            "id": qid,
            "system": self.system,
            "answer": text,
            "mode": "baseline" if self.baseline else "lawluo",
            "domain": domain,
            "nhsr": nhsr,
            "verdicts": dict(Counter(verdicts)),
            "seconds": round(time.perf_counter() - start, 3),
        }

    def _ahead(
        self, todo: list[tuple[str, str]], n: int, prep: ThreadPoolExecutor
    ) -> Iterator[tuple[str, str, Future]]:
        """``todo`` with each question's :meth:`prepare` started ``n`` questions ahead of its turn, one after
        another in ``prep``'s thread while answers stream: with every worker doing its own, 64 answers
        ending together (a server's latencies are alike) left the server idle ~1 s while 64 retrievals
        shared the GIL. Those not reached (the run stopped) are cancelled."""
        caller = contextvars.copy_context()  # its cancel token reaches the model calls of routing
        pending, window = iter(todo), deque[tuple[str, str, Future]]()

        def fill() -> None:
            for qid, question in itertools.islice(pending, n - len(window)):
                window.append((qid, question, prep.submit(caller.copy().run, self.prepare, question)))

        try:
            fill()
            while window:
                item = window.popleft()
                fill()
                yield item
        finally:
            for _, _, ready in window:
                ready.cancel()

    def _keep(self, future: Future, qid: str, out: JSONLAppender, report_: BatchReport) -> None:
        """Append one finished question's answer to the file, or record why there is none."""
        try:
            row = future.result()
        except FATAL as exc:  # every other question would fail the same way: stop now
            report_.failed.append((qid, f"{type(exc).__name__}: {exc}"))
            report_.stopped = str(exc)
            return
        except (LLMError, GenerationFailed, ValueError) as exc:
            report_.failed.append((qid, f"{type(exc).__name__}: {exc}"))
            if isinstance(exc, HeldBack):
                report_.held_back[exc.reason] += 1
            return
        if report_.write_error is not None:  # an answer finished beside the one that could not be written
            return
        try:
            out.append(row)
        except OSError as exc:  # nothing more can be kept: stop sending questions
            report_.write_error = exc
            return
        report_.written += 1

    def run(
        self,
        questions: list[tuple[str, str]],
        out_path: str | Path,
        on_done: Callable[[], None] | None = None,
        on_start: Callable[[int], None] | None = None,
    ) -> BatchReport:
        """Answer ``questions`` into ``out_path``, ``concurrency`` at once. ``on_start`` gets the number of
        questions left to answer (those the file does not answer yet), ``on_done`` is called as each ends."""
        start, calls = time.perf_counter(), self.calls()
        dropped = drop_partial_last_line(out_path)
        done = answered(out_path, self.system)
        todo = [(qid, q) for qid, q in questions if qid not in done]
        report_ = BatchReport(skipped=len(questions) - len(todo), dropped=dropped)
        if on_start is not None:
            on_start(len(todo))
        Path(out_path).parent.mkdir(parents=True, exist_ok=True)
        workers = max(1, self.concurrency)
        with JSONLAppender(out_path) as out, ThreadPoolExecutor(1, thread_name_prefix="prepare") as prep:
            prepared = todo if self.baseline else self._ahead(todo, workers, prep)
            # the answers in flight when the run stops (or on Ctrl-C) are dropped, not waited for
            with closing(as_finished(lambda item: self.answer(*item), prepared, workers)) as answers:
                for item, future in answers:
                    self._keep(future, item[0], out, report_)
                    if on_done is not None:
                        on_done()
                    if report_.stopped or report_.write_error:
                        break  # no further question is sent
        report_.seconds = time.perf_counter() - start
        report_.calls = self.calls() - calls
        return report_


def _held_detail(state) -> str:
    """What the trace says of the latest held-back answer (its ``held back (…): …`` part), for the report."""
    for event in reversed(state.trace):
        if event.agent == "lawyer" and event.action == "answer":
            part = next((p for p in event.summary.split("; ") if p.startswith("held back")), "")
            return part.partition(": ")[2]
    return ""
