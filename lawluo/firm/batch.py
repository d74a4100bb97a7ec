"""Answer many questions with the configured LawLuo pipeline (or a plain single-model baseline), so a
researcher can put LawLuo in the same table as other systems (``python -m lawluo generate``).

The pipeline per question is the consultation's: the receptionist routes it, statutes and cases are
retrieved for it, the domain lawyer answers (best-of-n with the boss when configured), and the
checker checks the answer's citations. The Tree of Legal Clarifications is not built: it needs a
client to answer Yes/No, and a batch has none (the paper's automatic evaluation answers directly too).
The baseline (``--baseline``) sends the question alone to the lawyer role's model: no role prompt,
no retrieval — the ablation of everything the firm adds.

Rows are appended to the output file as they complete (flushed to disk), and questions the file
already answers for the same system are skipped: an interrupted run loses nothing, and running the
same command again finishes it. A question that fails (a model error, an interrupted stream) is
reported and not written, so the next run retries it.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

from lawluo.jsonl import JSONLError, read_jsonl, report
from lawluo.llm import AuthenticationFailed, LLMError, ModelUnavailable

from .firm import Firm

MAX_QUESTION = 4_000
FATAL = (ModelUnavailable, AuthenticationFailed)


class GenerationFailed(RuntimeError):
    """The model did not produce a complete answer to one question."""


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


@dataclass
class BatchGenerator:
    firm: Firm
    system: str
    baseline: bool = False
    concurrency: int = 4

    def unavailable_reason(self) -> str | None:
        return self.firm.models["lawyer"].unavailable_reason()

    def answer(self, qid: str, question: str) -> dict:
        start = time.perf_counter()
        if self.baseline:
            text = self.firm.models["lawyer"].chat([{"role": "user", "content": question}])
            result = self.firm.checker.check(text)
            domain, nhsr, verdicts = None, result.nhsr, [c.verdict for c in result.citations]
        else:
            state = self.firm.new()
            self.firm.receive(state, question)
            for _ in self.firm.answer(state):
                pass
            turn = state.turns[-1]
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

    def run(
        self,
        questions: list[tuple[str, str]],
        out_path: str | Path,
        on_done: Callable[[], None] | None = None,
    ) -> BatchReport:
        start = time.perf_counter()
        done = answered(out_path, self.system)
        todo = [(qid, q) for qid, q in questions if qid not in done]
        report_ = BatchReport(skipped=len(questions) - len(todo))
        lock = threading.Lock()
        Path(out_path).parent.mkdir(parents=True, exist_ok=True)
        with (
            open(out_path, "a", encoding="utf-8") as out,
            ThreadPoolExecutor(max(1, self.concurrency)) as pool,
        ):
            futures = {pool.submit(self.answer, qid, q): qid for qid, q in todo}
            for future in as_completed(futures):
                qid = futures[future]
                try:
                    row = future.result()
                except FATAL as exc:  # every other question would fail the same way: stop now
                    report_.failed.append((qid, f"{type(exc).__name__}: {exc}"))
                    report_.stopped = str(exc)
                    for other in futures:
                        other.cancel()
                    break
                except (LLMError, GenerationFailed, ValueError) as exc:
                    report_.failed.append((qid, f"{type(exc).__name__}: {exc}"))
                else:
                    with lock:
                        out.write(json.dumps(row, ensure_ascii=False) + "\n")
                        out.flush()
                        os.fsync(out.fileno())
                    report_.written += 1
                if on_done is not None:
                    on_done()
        report_.seconds = time.perf_counter() - start
        return report_
